"""Port budget: no device port carries two links, and no device uses more ports than it has.

Breakout is counted through the port layout: a breakout port is one more logical port of its
cage, so the budget is the layout's port count.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error
from . import CHECKS, CheckContext


@CHECKS.register("port-budget")
def check_ports(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    totals = [f.layouts[d.model].total for d in f.devices]
    links = f.links
    # The common case, a clean fabric, is decided in bulk: every port in range, no port twice.
    in_range = all(0 <= link.a_port < totals[link.a] and 0 <= link.b_port < totals[link.b] for link in links)
    ends = [link.a << 24 | link.a_port for link in links] + [link.b << 24 | link.b_port for link in links]
    if in_range and len(set(ends)) == len(ends):
        return
    used: set[int] = set()
    reported: set[int] = set()
    for link in links:
        for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
            total = totals[dev]
            if port >= total:
                d = f.devices[dev]
                if dev not in reported:
                    reported.add(dev)
                    yield error(
                        "port-budget",
                        f"{d.name} ({d.model}) has {total} ports; a link uses port {port + 1}",
                        link.origin,
                        "a larger switch, breakout, or fewer links",
                    )
                continue
            key = dev << 24 | port
            if key in used:
                d = f.devices[dev]
                if dev not in reported:
                    reported.add(dev)
                    yield error(
                        "port-budget",
                        f"{d.name} port {f.port_name(dev, port)} carries two links (second: {link.id})",
                        link.origin,
                        "two endpoints were assigned the same leaf port: check su and su_nodes",
                    )
                continue
            used.add(key)
