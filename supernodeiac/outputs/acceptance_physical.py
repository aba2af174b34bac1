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
from .base import Artifacts, RenderContext
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


def physical_summaries(ctx: RenderContext) -> list[dict]:
    """Per fabric: its plan's counts (for the checklist)."""
    return [s for _p, s in _plans(ctx)]


def _plans(ctx: RenderContext) -> list[tuple[PhysicalPlan, dict]]:
    cached = ctx.memo.get("physical_plans")
    if cached is not None:
        return cached
    out = []
    for fabric in physical_fabrics(ctx.fabric):
        p = physical_plan(ctx.fabric, ctx.blueprint, ctx.catalogue, fabric)
        if not len(p):
            continue
        summary = {
            "fabric": fabric,
            "transport": p.transport,
            "ends": len(p),
            "cables": len(p) // 2,
            "tools": p.counts(),
            "exact_parts": sum(1 for k in p.part_kind if k in ("module", "cable")),
        }
        out.append((p, summary))
    ctx.memo["physical_plans"] = out
    return out


def render_physical(ctx: RenderContext) -> Artifacts:
    bp = ctx.blueprint
    out: Artifacts = {}
    for p, summary in _plans(ctx):
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
