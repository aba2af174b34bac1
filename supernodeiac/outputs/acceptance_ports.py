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
from ..facts.sonic_ports import sonic_ports, sonic_switches
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


SWITCH_PORT_COLUMNS = ["switch", "interface", "cable", "label", "link", "peer", "peer_port"]


def switch_ports_tsv(ctx: RenderContext, fabric: str) -> bytes:
    """``acceptance/<fabric>/switch_ports.tsv`` (RoCE): the cable behind each switch port as SONiC
    names it in ``portstat`` (``Ethernet0``, the port map's name), so check-results turns the port
    whose counters moved into a cable label. One line per switch end of a cabled link, ``link``
    "switch" (both ends on switches: any test of a wave may load it under ECMP) or "host" (one
    NIC's link: only that NIC's test loads it). A switch without a port map gets no lines: SONiC
    does not run on it, nothing reads its counters."""
    f = ctx.fabric
    t = f.links
    positions = t.indices_of(fabric)
    devices, models, layouts = f.devices, f.models, f.layouts
    maps = ctx.catalogue.port_maps
    mapped = set(sonic_switches(f, ctx.catalogue))
    names = [d.name for d in devices]
    ids = t.ids()
    labels = label_maker(f, ctx.blueprint)(positions)
    # Per model once: each port's SONiC name (None off the port map) and printed name; per device
    # whether it is a switch (the loop below runs once per link end, 10^6 times at 131k).
    sonic_names: dict[str, list[str | None]] = {}
    for model in {devices[d].model for d in mapped}:
        sonic_names[model] = [p.name if p is not None else None for p in sonic_ports(layouts[model], maps[model]).ports]
    printed = [layouts[d.model].physical_names for d in devices]
    own = [sonic_names.get(d.model) if d.index in mapped else None for d in devices]
    switch = [models[d.model].kind == "switch" for d in devices]
    col_a, col_ap, col_b, col_bp = t.a, t.a_port, t.b, t.b_port
    rows: list[tuple[str, int, tuple[str, ...]]] = []  # (switch, port index, line): in port order
    for i, label in zip(positions, labels, strict=True):
        a, ap, b, bp = col_a[i], col_ap[i], col_b[i], col_bp[i]
        kind = "switch" if switch[a] and switch[b] else "host"
        for dev, port, peer, peer_port in ((a, ap, b, bp), (b, bp, a, ap)):
            ports = own[dev]
            if ports is None or ports[port] is None:
                continue
            rows.append((names[dev], port, (names[dev], ports[port], ids[i], label, kind, names[peer], printed[peer][peer_port])))  # type: ignore[arg-type]
    rows.sort(key=lambda r: (r[0], r[1]))
    columns = [[r[2][k] for r in rows] for k in range(len(SWITCH_PORT_COLUMNS))]
    head = "\t".join(SWITCH_PORT_COLUMNS) + "\n"
    return (head + (tsv_lines(columns) if rows else "")).encode()


def counters_tsv(ctx: RenderContext, waves: dict[str, list[int]]) -> bytes:
    """``acceptance/<fabric>/counters.tsv`` (RoCE): per wave of perftest.sh, the switches whose
    port counters it reads before and after (facts/acceptance_plan.ecmp_switches), by name: the
    SONiC switches among them (a switch without a port map runs no SONiC to read)."""
    names = [d.name for d in ctx.fabric.devices]
    mapped = set(sonic_switches(ctx.fabric, ctx.catalogue))
    lines = ["wave\tswitches"] + [f"{k}\t{';'.join(names[d] for d in sw if d in mapped)}" for k, sw in sorted(waves.items())]
    return ("\n".join(lines) + "\n").encode()
