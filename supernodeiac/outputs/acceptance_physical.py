"""The acceptance plan's physical stage (stage 0, before perftest), rendered: per fabric
``acceptance/<fabric>/physical.tsv`` (one line per cabled data-link end: the cable, its label, the
port as printed and as the tool names it, the part that belongs in the cage, the limits) and
``physical.sh`` (ibdiagnet once per InfiniBand fabric, mlxlink per host NIC port, SONiC's
transceiver and FEC reads per Ethernet switch). ``outputs/acceptance.py`` adds these files to
``acceptance/``; ``snc check-results`` reads the tools' output back (``verify/physical_results.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from itertools import islice

import numpy as np

from ..facts.physical_plan import PhysicalPlan, physical_fabrics, physical_plan
from ..util.templating import render_template
from .acceptance_ports import labels_of
from .base import RenderContext, RowSelection, Stream
from .csv_safe import cells_clean, tsv_cell, tsv_line

# Text columns first (through csv_safe), then the figures snc formats itself (numbers, some
# negative: the Rx floor), joined on as they are so the plan's 10^6 lines keep the block path.
TEXT_COLUMNS = [
    "cable",
    "label",
    "end",
    "device",
    "tool",
    "port",
    "ib_port",
    "printed",
    "peer",
    "peer_printed",
    "part",
    "part_kind",
    "pmd",
    "module_lanes",
    "fec",
]
NUMBER_COLUMNS = [
    "lane_gbps",
    "lanes",
    "pre_fec_ber_max",
    "post_fec_ber_max",
    "symbol_errors_max",
    "link_down_max",
    "rx_dbm_min",
    "rx_dbm_max",
    "temp_c_max",
]
PHYSICAL_COLUMNS = TEXT_COLUMNS + NUMBER_COLUMNS


_CHUNK = 16384  # lines of physical.tsv joined and encoded at once


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"


def physical_tsv(p: PhysicalPlan) -> bytes:
    return b"".join(physical_chunks(p))


def physical_chunks(p: PhysicalPlan) -> Iterator[bytes]:
    """physical.tsv in pieces of 16,384 lines (the header first), for the writer to stream."""
    n = len(p)
    head = tsv_line(PHYSICAL_COLUMNS) + "\n"
    yield head.encode()
    if not n:
        return
    # The plan's small tables as text once, each cell as tsv_cell makes it (the figures as snc
    # formats them: numbers, some negative, written as they are); a row then joins seven pieces:
    # cable, label, end, device, its port's 4 cells, peer, and the rest (the peer port as printed,
    # the part's 3 cells, the module lanes, the FEC and figures). The per-row text (IDs, labels,
    # device names) is checked a column at a time, and made cell by cell only where one is not clean.
    constant = f"{p.symbol_errors_max}\t{p.link_down_max}"
    port_text = ["\t".join(map(tsv_cell, cells)) for cells in p.ports]
    printed_text = [tsv_cell(cells[3]) for cells in p.ports]
    part_text = ["\t".join(map(tsv_cell, cells[:3])) for cells in p.parts]
    figures_text = [
        "\t".join(
            (tsv_cell(fec), _num(lane), str(lanes), _num(pre), _num(post), constant, _num(rx_min), _num(rx_max), _num(temp))
        )
        for _n, _k, _p, fec, lane, lanes, pre, post, rx_min, rx_max, temp in p.parts
    ]
    lanes_text = [tsv_cell(x) for x in p.module_lanes]

    def clean(cells: list[str]) -> list[str]:
        return cells if cells_clean(cells) else [tsv_cell(x) for x in cells]

    cables, labels, names = clean(p.cable), clean(p.label), clean(p.names)
    cable, label = [""] * n, [""] * n  # per end: the link's, twice
    cable[0::2], cable[1::2], label[0::2], label[1::2] = cables, cables, labels, labels
    # What follows the peer's name is decided by three codes: the distinct combinations, joined once.
    peer_port, part, lanes = (np.asarray(x, dtype=np.int64) for x in (p.peer_port, p.part, p.lanes))
    key = (peer_port * len(p.parts) + part) * len(p.module_lanes) + lanes
    space = len(p.ports) * len(p.parts) * len(p.module_lanes)
    if space <= 4 * n:  # the distinct keys in order without a sort: a mark per possible key
        present = np.zeros(space, dtype=bool)
        present[key] = True
        tails, tail = np.flatnonzero(present), (np.cumsum(present) - 1)[key]
    else:
        tails, tail = np.unique(key, return_inverse=True)
    rest, k = np.divmod(tails, len(p.module_lanes))
    q, j = np.divmod(rest, len(p.parts))
    tail_text = [
        f"{printed_text[a]}\t{part_text[b]}\t{lanes_text[c]}\t{figures_text[b]}"
        for a, b, c in zip(q.tolist(), j.tolist(), k.tolist(), strict=True)
    ]
    rows = zip(
        cable,
        label,
        ["a", "b"] * (n // 2),
        map(names.__getitem__, p.device),
        map(port_text.__getitem__, p.port),
        map(names.__getitem__, p.peer),
        map(tail_text.__getitem__, tail.reshape(-1).tolist()),
        strict=True,
    )
    # Joined and encoded 16,384 lines at a time: 786,000 lines at 131k are never held as line
    # strings, text and bytes at once (the whole file's temporaries cost more than the joins).
    lines = map("\t".join, rows)
    for _ in range(0, n, _CHUNK):
        yield ("\n".join(islice(lines, _CHUNK)) + "\n").encode()


def physical_summaries(ctx: RenderContext, rows: RowSelection | None = None) -> list[dict]:
    """Per fabric: its plan's counts (for the checklist)."""
    return [s for _p, s in _plans(ctx, rows)]


def _plans(ctx: RenderContext, rows: RowSelection | None = None) -> list[tuple[PhysicalPlan, dict]]:
    # Kept with the selection it was made for (a plan of some rows answers for those rows only).
    key = "physical_plans" if rows is None else "physical_plans/rows"
    cached = ctx.memo.get(key)
    if cached is not None and cached[0] is rows:
        return cached[1]
    out = []
    for fabric in physical_fabrics(ctx.fabric):
        p = physical_plan(
            ctx.fabric, ctx.blueprint, ctx.catalogue, fabric, rows.links if rows is not None else None, labels_of(ctx)
        )
        if not p.ends():
            continue
        summary = {
            "fabric": fabric,
            "transport": p.transport,
            "ends": p.ends(),
            "cables": p.ends() // 2,
            "tools": p.counts(),
            "exact_parts": p.exact_parts(),
        }
        out.append((p, summary))
    ctx.memo[key] = (rows, out)
    return out


def render_physical(ctx: RenderContext, rows: RowSelection | None = None) -> dict[str, bytes | Stream]:
    """physical.tsv and physical.sh per fabric; with ``rows``, the TSV of the selected links only
    (``snc diff``), the script (its counts) of them all."""
    bp = ctx.blueprint
    out: dict[str, bytes | Stream] = {}
    for p, summary in _plans(ctx, rows):
        # Streamed: 169 MB at 131k, written (or compared) as it is made, never held whole.
        out[f"acceptance/{p.fabric}/physical.tsv"] = Stream(partial(physical_chunks, p))
        out[f"acceptance/{p.fabric}/physical.sh"] = render_template(
            "acceptance-physical.sh.j2",
            fabric=p.fabric,
            blueprint=bp.metadata.name,
            s=summary,
            infiniband=p.transport == "infiniband",
            columns=len(PHYSICAL_COLUMNS),
        ).encode()
    return out
