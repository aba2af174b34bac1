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

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..facts.acceptance_plan import label_maker
from ..facts.sonic_ports import sonic_ports, sonic_switches
from .base import RenderContext
from .csv_safe import tsv_lines

# ctx.memo: while the acceptance renderer runs, the labels it has made (facts/acceptance_plan.kept_labels).
LABELS = "acceptance/labels"


def labels_of(ctx: RenderContext) -> Callable[[Iterable[int]], list[str]]:
    """Printed labels of links by position: those the running acceptance render keeps (each cable
    formatted once for its three files), else made afresh."""
    kept = ctx.memo.get(LABELS)
    return kept if kept is not None else label_maker(ctx.fabric, ctx.blueprint)


PORT_COLUMNS = ["cable", "label", "a_node", "a_port", "b_node", "b_port"]


def ports_tsv(ctx: RenderContext, fabric: str, keep: Any = None) -> bytes:
    """ports.tsv, a line per link in link order; with ``keep`` (a bool per link position:
    ``snc diff``'s rows that may differ), the lines of those links only."""
    f = ctx.fabric
    t = f.links
    positions = t.indices_of(fabric)
    if keep is not None:
        positions = [i for i, k in zip(positions, keep[positions].tolist(), strict=True) if k]
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
        labels_of(ctx)(positions),
        [e[0] for e in a_side],
        [e[1] for e in a_side],
        [e[0] for e in b_side],
        [e[1] for e in b_side],
    ]
    head = "\t".join(PORT_COLUMNS) + "\n"
    return (head + (tsv_lines(columns) if positions else "")).encode()


_CHUNK = 16384  # lines of a large table joined and encoded at once
SWITCH_PORT_COLUMNS = ["switch", "interface", "cable", "label", "link", "peer", "peer_port"]


def switch_ports_tsv(ctx: RenderContext, fabric: str) -> bytes:
    return b"".join(switch_ports_chunks(ctx, fabric))


def switch_ports_chunks(ctx: RenderContext, fabric: str) -> list[bytes]:
    """``acceptance/<fabric>/switch_ports.tsv`` (RoCE): the cable behind each switch port as SONiC
    names it in ``portstat`` (``Ethernet0``, the port map's name), so check-results turns the port
    whose counters moved into a cable label. One line per switch end of a cabled link, ``link``
    "switch" (both ends on switches: any test of a wave may load it under ECMP) or "host" (one
    NIC's link: only that NIC's test loads it). A switch without a port map gets no lines: SONiC
    does not run on it, nothing reads its counters."""
    f = ctx.fabric
    t = f.links
    positions = t.indices_of(fabric)
    head = ("\t".join(SWITCH_PORT_COLUMNS) + "\n").encode()
    if not positions:
        return [head]
    devices, models, layouts = f.devices, f.models, f.layouts
    maps = ctx.catalogue.port_maps
    mapped = set(sonic_switches(f, ctx.catalogue))
    names = [d.name for d in devices]
    ids = t.ids()
    labels = labels_of(ctx)(positions)
    # The link ends as arrays (10^6 at 131k), every end a of the fabric's links then every end b:
    # one flat table of SONiC port names (per model of a mapped switch, at its offset) says which
    # ends get a line, and one sort puts them in (switch name, port) order.
    flat: list[str | None] = []
    start: dict[str, int] = {}
    for model in sorted({devices[d].model for d in mapped}):
        start[model] = len(flat)
        flat += [p.name if p is not None else None for p in sonic_ports(layouts[model], maps[model]).ports]
    offset = np.array([start[d.model] if d.index in mapped else -1 for d in devices], dtype=np.int64)
    named = np.array([x is not None for x in flat] + [False], dtype=bool)  # the last: no name (an unmapped device)
    switch = np.array([models[d.model].kind == "switch" for d in devices], dtype=bool)
    arr = t.arrays()
    pos = np.asarray(positions, dtype=np.int64)
    a, ap, b, bp = arr.a[pos], arr.a_port[pos], arr.b[pos], arr.b_port[pos]
    n = len(pos)
    dev, port = np.concatenate((a, b)), np.concatenate((ap, bp))
    peer, peer_port = np.concatenate((b, a)), np.concatenate((bp, ap))
    row = np.concatenate((np.arange(n), np.arange(n)))  # the link (its place in ``positions``) of each end
    side = np.repeat(np.array([0, 1], dtype=np.int64), n)
    at = np.where(offset[dev] >= 0, offset[dev] + port, len(flat))
    keep = np.flatnonzero(named[at])
    if not len(keep):
        return [head]
    # Switch names as ranks (equal names rank equal: the order of sorting by the names themselves);
    # ties keep the plain way's order: link by link, end a before end b.
    rank_of = {x: k for k, x in enumerate(sorted(set(names)))}
    rank = np.array([rank_of[x] for x in names], dtype=np.int64)
    keep = keep[np.lexsort((side[keep], row[keep], port[keep], rank[dev[keep]]))]
    devs, peers, rows = dev[keep].tolist(), peer[keep].tolist(), row[keep].tolist()
    host_link = ~(switch[a] & switch[b])
    printed = [layouts[d.model].physical_names for d in devices]
    cable = [ids[i] for i in positions]
    columns = [
        [names[x] for x in devs],
        [flat[x] for x in at[keep].tolist()],
        [cable[k] for k in rows],
        [labels[k] for k in rows],
        ["host" if h else "switch" for h in host_link[row[keep]].tolist()],
        [names[x] for x in peers],
        [printed[x][p] for x, p in zip(peers, peer_port[keep].tolist(), strict=True)],
    ]
    # Joined and encoded 16,384 lines at a time (90 MB at 131k): never its text and bytes whole at once.
    return [head] + [tsv_lines([c[k : k + _CHUNK] for c in columns]).encode() for k in range(0, len(keep), _CHUNK)]


def counters_tsv(ctx: RenderContext, waves: dict[str, list[int]]) -> bytes:
    """``acceptance/<fabric>/counters.tsv`` (RoCE): per wave of perftest.sh, the switches whose
    port counters it reads before and after (facts/acceptance_plan.ecmp_switches), by name: the
    SONiC switches among them (a switch without a port map runs no SONiC to read)."""
    names = [d.name for d in ctx.fabric.devices]
    mapped = set(sonic_switches(ctx.fabric, ctx.catalogue))
    lines = ["wave\tswitches"] + [f"{k}\t{';'.join(names[d] for d in sw if d in mapped)}" for k, sw in sorted(waves.items())]
    return ("\n".join(lines) + "\n").encode()
