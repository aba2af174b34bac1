"""The cable behind each InfiniBand port, for reading recorded paths back (snc render:
``acceptance/<fabric>/ports.tsv``).

``perftest.sh`` records each test's path with ``ibtracert``, which names every hop by node
description and IB port number (``[37] -> switch port {0x...}[13] ... "ib-spine-001"``).
``snc check-results`` turns those hops into cables with this table: one line per cabled link of
the fabric, its cable ID and printed label, and both ends as ibtracert prints them (node
description and IB port number, facts/ib_fabric.py's conventions: a switch's data ports from 1 in
catalogue order, each HCA port its own node on port 1).
"""

from __future__ import annotations

from ..facts.acceptance_plan import label_maker
from ..facts.ib_fabric import IbFabric
from .base import RenderContext
from .csv_safe import tsv_lines

PORT_COLUMNS = ["cable", "label", "a_node", "a_port", "b_node", "b_port"]


def ports_tsv(ctx: RenderContext, fabric: str) -> bytes:
    f = ctx.fabric
    ib = IbFabric(f, fabric)
    t = f.links
    # (link position) -> the two ends as (description, IB port), in the link's own A/B order.
    ends: dict[int, list[tuple[int, str, int]]] = {}
    for node in ib.nodes.values():
        for port, (_peer, _pp, link) in node.links.items():
            ends.setdefault(link, []).append((node.device, node.description, port))
    positions = [i for i in ib.link_positions if len(ends.get(i, ())) == 2]
    a_side, b_side = [], []
    for i in positions:
        first, second = ends[i]
        # A twin link between two ports of one device keeps table order; otherwise the A end first.
        if first[0] != t.a[i] and second[0] == t.a[i]:
            first, second = second, first
        a_side.append(first)
        b_side.append(second)
    ids = t.ids()
    columns = [
        [ids[i] for i in positions],
        label_maker(f, ctx.blueprint)(positions),
        [e[1] for e in a_side],
        [str(e[2]) for e in a_side],
        [e[1] for e in b_side],
        [str(e[2]) for e in b_side],
    ]
    head = "\t".join(PORT_COLUMNS) + "\n"
    return (head + (tsv_lines(columns) if positions else "")).encode()
