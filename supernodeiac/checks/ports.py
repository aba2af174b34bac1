"""Port budget: no device port carries two links, and no device uses more ports than it has.

Breakout is counted through the port layout: a breakout port is one more logical port of its
cage, so the budget is the layout's port count.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate

from ..findings import Finding, error
from . import CHECKS, CheckContext


@CHECKS.register("port-budget")
def check_ports(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    totals = [f.layouts[d.model].total for d in f.devices]
    # Every port of the fabric numbered 0.. (device by device): small, dense keys hash well.
    first = list(accumulate(totals, initial=0))
    links = f.links
    # The common case, a clean fabric, is decided in bulk: every port in range, no port twice.
    if all(0 <= link.a_port < totals[link.a] and 0 <= link.b_port < totals[link.b] for link in links):
        ends = [first[link.a] + link.a_port for link in links] + [first[link.b] + link.b_port for link in links]
        if len(set(ends)) == len(ends):
            return
    used: set[int] = set()
    reported: set[int] = set()
    for link in links:
        for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
            total = totals[dev]
            if not 0 <= port < total:
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
            key = first[dev] + port
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
