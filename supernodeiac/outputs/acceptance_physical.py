"""The acceptance plan's physical stage (stage 0, before perftest), rendered: per fabric
``acceptance/<fabric>/physical.tsv`` (one line per cabled data-link end: the cable, its label, the
port as printed and as the tool names it, the part that belongs in the cage, the limits) and
``physical.sh`` (ibdiagnet once per InfiniBand fabric, mlxlink per host NIC port, SONiC's
transceiver and FEC reads per Ethernet switch). ``outputs/acceptance.py`` adds these files to
``acceptance/``; ``snc check-results`` reads the tools' output back (``verify/physical_results.py``).
"""

from __future__ import annotations

from ..facts.physical_plan import PhysicalPlan, physical_fabrics, physical_plan
from ..util.templating import render_template
from .acceptance_ports import labels_of
from .base import Artifacts, RenderContext, RowSelection
from .csv_safe import cells_clean, tsv_line

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


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"


def physical_tsv(p: PhysicalPlan) -> bytes:
    n = len(p)
    head = tsv_line(PHYSICAL_COLUMNS) + "\n"
    if not n:
        return head.encode()
    text = [
        p.cable,
        p.label,
        p.end,
        p.device,
        p.tool,
        p.port,
        p.ib_port,
        p.printed,
        p.peer,
        p.peer_printed,
        p.part,
        p.part_kind,
        p.pmd,
        p.module_lanes,
        p.fec,
    ]
    # The figures of an end repeat across thousands of ends: each distinct set is formatted once,
    # as one text of its cells.
    constant = f"{p.symbol_errors_max}\t{p.link_down_max}"
    memo: dict[tuple, str] = {}

    def figures(key: tuple) -> str:
        lane, lanes, pre, post, rx_min, rx_max, temp = key
        made = memo[key] = "\t".join(
            (_num(lane), str(lanes), _num(pre), _num(post), constant, _num(rx_min), _num(rx_max), _num(temp))
        )
        return made

    get = memo.get
    keys = zip(p.lane_gbps, p.lanes, p.pre_fec_ber_max, p.post_fec_ber_max, p.rx_dbm_min, p.rx_dbm_max, p.temp_c_max, strict=True)
    numbers = [get(k) or figures(k) for k in keys]
    if all(map(cells_clean, text)):  # the common case: every text cell as it is
        body = "\n".join(map("\t".join, zip(*text, numbers, strict=True)))
    else:
        body = "\n".join(map("\t".join, zip(map(tsv_line, zip(*text, strict=True)), numbers, strict=True)))
    return (head + body + "\n").encode()


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


def render_physical(ctx: RenderContext, rows: RowSelection | None = None) -> Artifacts:
    """physical.tsv and physical.sh per fabric; with ``rows``, the TSV of the selected links only
    (``snc diff``), the script (its counts) of them all."""
    bp = ctx.blueprint
    out: Artifacts = {}
    for p, summary in _plans(ctx, rows):
        out[f"acceptance/{p.fabric}/physical.tsv"] = physical_tsv(p)
        out[f"acceptance/{p.fabric}/physical.sh"] = render_template(
            "acceptance-physical.sh.j2",
            fabric=p.fabric,
            blueprint=bp.metadata.name,
            s=summary,
            infiniband=p.transport == "infiniband",
            columns=len(PHYSICAL_COLUMNS),
        ).encode()
    return out
