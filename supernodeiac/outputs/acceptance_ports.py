"""The cable behind each InfiniBand port, for reading recorded paths back (snc render:
``acceptance/<fabric>/ports.tsv``).

``perftest.sh`` records each test's path with ``ibtracert``, which names every hop by node
description and IB port number (``[37] -> switch port {0x...}[13] ... "ib-spine-001"``).
``snc check-results`` turns those hops into cables with this table: one line per cabled link of
the fabric, its cable ID and printed label, and both ends as ibtracert prints them (node
description and IB port number, the conventions of facts/ib_fabric.py that the OpenSM files use:
a switch's data ports from 1 in catalogue order, each HCA port its own node "<device> <port>" on
port 1).
"""

from __future__ import annotations

from ..facts.acceptance_plan import label_maker
from .base import RenderContext
from .csv_safe import tsv_lines

PORT_COLUMNS = ["cable", "label", "a_node", "a_port", "b_node", "b_port"]


def ports_tsv(ctx: RenderContext, fabric: str) -> bytes:
    f = ctx.fabric
    t = f.links
    positions = t.indices_of(fabric)
    devices, models, layouts = f.devices, f.models, f.layouts
    # Per device model: each data port's IB port number (a switch: its place among the data ports,
    # from 1) or None (an HCA: every port its own node, on port 1); the names ibtracert prints.
    ib_port: dict[str, dict[int, int]] = {}
    is_switch: dict[str, bool] = {}
    for model in {devices[d].model for i in positions for d in (t.a[i], t.b[i])}:
        ib_port[model] = {p: k + 1 for k, p in enumerate(layouts[model].ports_of("data"))}
        is_switch[model] = models[model].kind == "switch"
    names = [d.name for d in devices]

    def end(dev: int, port: int) -> tuple[str, str]:
        model = devices[dev].model
        if is_switch[model]:
            return names[dev], str(ib_port[model][port])
        return f"{names[dev]} {layouts[model].name(port)}", "1"

    a_side = [end(t.a[i], t.a_port[i]) for i in positions]
    b_side = [end(t.b[i], t.b_port[i]) for i in positions]
    ids = t.ids()
    columns = [
        [ids[i] for i in positions],
        label_maker(f, ctx.blueprint)(positions),
        [e[0] for e in a_side],
        [e[1] for e in a_side],
        [e[0] for e in b_side],
        [e[1] for e in b_side],
    ]
    head = "\t".join(PORT_COLUMNS) + "\n"
    return (head + (tsv_lines(columns) if positions else "")).encode()
