"""Port budget: no device port carries two links, and no device uses more ports than it has.

Breakout is counted through the port layout: a breakout port is one more logical port of its
cage, so the budget is the layout's port count.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate
from operator import add, lt

from ..findings import Finding, error
from . import CHECKS, CheckContext


@CHECKS.register("port-budget")
def check_ports(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    totals = [f.layouts[d.model].total for d in f.devices]
    # Every port of the fabric numbered 0.. (device by device): small, dense keys hash well.
    first = list(accumulate(totals, initial=0))
    t = f.links
    # The common case, a clean fabric, is decided in bulk on the columns (map/zip run in C):
    # every port in range, no port twice.
    if (
        (not t or min(min(t.a_port), min(t.b_port)) >= 0)
        and all(map(lt, t.a_port, map(totals.__getitem__, t.a)))
        and all(map(lt, t.b_port, map(totals.__getitem__, t.b)))
    ):
        ends = list(map(add, map(first.__getitem__, t.a), t.a_port))
        ends += map(add, map(first.__getitem__, t.b), t.b_port)
        if len(set(ends)) == len(ends):
            return
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
            key = first[dev] + port
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
