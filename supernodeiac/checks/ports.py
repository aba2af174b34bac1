"""Port budget: no device port carries two links, and no device uses more ports than it has.

Breakout is counted through the port layout: a breakout port is one more logical port of its
cage, so the budget is the layout's port count.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..findings import Finding, error
from .base import CHECKS, CheckContext


@CHECKS.register("port-budget")
def check_ports(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    t = f.links
    # The common case, a clean fabric, is decided in bulk on numpy columns: every port in
    # range, and no port twice (ports numbered densely across the fabric, counted per number).
    dv, arr = f.device_arrays(), t.arrays()
    if dv.ports_in_range(arr.a, arr.a_port) and dv.ports_in_range(arr.b, arr.b_port):
        first = np.concatenate(([0], np.cumsum(dv.total)))
        ends = np.concatenate((first[arr.a] + arr.a_port, first[arr.b] + arr.b_port))
        if not len(ends) or np.bincount(ends).max() <= 1:
            return
    totals = dv.total.tolist()
    first_port = [0, *np.cumsum(dv.total).tolist()]
    used: set[int] = set()
    reported: set[int] = set()
    specs = t.specs
    for i, a, a_port, b, b_port, s in zip(range(len(t)), t.a, t.a_port, t.b, t.b_port, t.spec):
        for dev, port in ((a, a_port), (b, b_port)):
            total = totals[dev]
            if not 0 <= port < total:
                d = f.devices[dev]
                if dev not in reported:
                    reported.add(dev)
                    yield error(
                        "port-budget",
                        f"{d.name} ({d.model}) has {total} ports; a link uses port {port + 1}",
                        specs[s].origin,
                        "a larger switch, breakout, or fewer links",
                    )
                continue
            key = first_port[dev] + port
            if key in used:
                d = f.devices[dev]
                if dev not in reported:
                    reported.add(dev)
                    yield error(
                        "port-budget",
                        f"{d.name} port {f.port_name(dev, port)} carries two links (second: {t.id_of(i)})",
                        specs[s].origin,
                        "two endpoints were assigned the same leaf port: check su and su_nodes",
                    )
                continue
            used.add(key)
