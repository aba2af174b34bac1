"""Service endpoints declared as an HA pair (``endpoints[].ha``: UFM, any fabric service) share no
leaf: the loss of one leaf must leave one member reachable. Measured on the fabric's links."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error
from ..model.blueprint import built_fabrics
from .base import CHECKS, CheckContext


@CHECKS.register("service-ha")
def check_ha(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    for i, spec, name in built_fabrics(ctx.blueprint):
        eps = [(j, ep) for j, ep in enumerate(getattr(spec, "endpoints", [])) if getattr(ep, "ha", False)]
        if not eps or name not in f.facts:
            continue
        members = {ep.group: [d.index for d in f.devices if d.group == ep.group] for _, ep in eps}
        wanted = {dev for devs in members.values() for dev in devs}
        leaves: dict[int, set[int]] = {dev: set() for dev in wanted}
        t = f.links
        specs = t.specs
        for a, b, s in zip(t.a, t.b, t.spec):
            if specs[s].fabric != name:
                continue
            if a in wanted:
                leaves[a].add(b)
            elif b in wanted:
                leaves[b].add(a)
        for j, ep in eps:
            path = ("scaleout", i, "endpoints", j, "ha")
            devs = members[ep.group]
            if len(devs) < 2:
                yield error(
                    "service-ha",
                    f"{name}: {ep.group} is declared an HA pair but has {len(devs)} device",
                    path,
                    f"count: 2 in node group {ep.group}",
                )
                continue
            for x, dx in enumerate(devs):
                for dy in devs[x + 1 :]:  # a pair (a handful of members): pairs are cheap
                    shared = leaves[dx] & leaves[dy]
                    if shared:
                        names = ", ".join(sorted(f.devices[s].name for s in shared))
                        yield error(
                            "service-ha",
                            f"{name}: HA members {f.devices[dx].name} and {f.devices[dy].name} share leaf {names}: "
                            "losing it cuts both",
                            path,
                            "an SU with more leaves than the pair has ports, or one member per SU (two endpoint entries, "
                            "su: 0 and su: 1)",
                        )
