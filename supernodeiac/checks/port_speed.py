"""Ports run below their speed: a link runs at the slower end's rate (its lanes and lane rate), so a
200 Gb/s NIC on a 400 Gb/s leaf port leaves half of that port idle. Nothing breaks, but the
design pays for switch ports, optics and uplinks it cannot use; usually the wrong leaf model
(one run as 2 x 200G per cage carries the same hosts on half the cages), or NICs of the wrong speed.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..findings import Finding, warning
from .base import CHECKS, CheckContext


@CHECKS.register("port-speed")
def check_port_speed(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    t = f.links
    if not len(t):
        return
    arr = t.arrays()
    da = f.device_arrays()
    speed_of, speeds = da.port_table("speed_gbps", lambda g: float(g.speed_gbps))
    speeds_arr = np.array(speeds, dtype=np.float64)
    link_gbps = np.array([s.gbps for s in t.specs], dtype=np.float64)[arr.spec]
    a_speed = speeds_arr[speed_of[da.rows(arr.a, arr.a_port)]]
    b_speed = speeds_arr[speed_of[da.rows(arr.b, arr.b_port)]]
    slow = np.flatnonzero((link_gbps < a_speed - 1e-9) | (link_gbps < b_speed - 1e-9))
    if not len(slow):
        return
    # One finding per (spec, under-run model, its port speed, the other end's model): a design has
    # a few such shapes over thousands of links.
    groups: dict[tuple[int, str, float, str], list[int]] = {}
    models = [d.model for d in f.devices]
    for i in slow.tolist():
        s, gbps = int(arr.spec[i]), float(link_gbps[i])
        ends = ((int(arr.a[i]), float(a_speed[i]), int(arr.b[i])), (int(arr.b[i]), float(b_speed[i]), int(arr.a[i])))
        for dev, end_gbps, far in ends:
            if gbps < end_gbps - 1e-9:
                groups.setdefault((s, models[dev], end_gbps, models[far]), []).append(i)
    for (s, model, port_gbps, other), links in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3])):
        spec = t.specs[s]
        idle = 1 - spec.gbps / port_gbps
        yield warning(
            "port-speed",
            f"{spec.fabric}: {len(links)} {spec.tier or spec.kind} link(s) run at {spec.gbps:g} Gb/s on {model}'s "
            f"{port_gbps:g} Gb/s ports ({other}'s ports set the rate: {spec.lanes} x {spec.lane_gbps:g}G): "
            f"{idle:.0%} of each of those ports is idle, e.g. {t.id_of(links[0])}",
            spec.origin,
            f"a {model} variant whose ports run at {spec.gbps:g} Gb/s (a split of its cages), or {other} ports of "
            f"{port_gbps:g} Gb/s; where the slower rate is meant, ignore port-speed with the reason in [tool.snc.ignore]",
        )
