"""The bill of materials as files: ``bom/bom.csv`` (one row per orderable part, for a spreadsheet)
and ``bom/summary.json`` (the same lines plus totals per fabric and overall). What a line counts
is ``facts/bom.py``'s.
"""

from __future__ import annotations

import json

from ..facts.bom import Bom, bill_of_materials, cost_unit, summary, totals
from ..util.number_format import rounded
from .base import RENDERERS, Artifacts, RenderContext
from .csv_safe import CsvWriter

CSV_COLUMNS = [
    "section",
    "fabric",
    "part",
    "opn",
    "part_status",
    "grade",
    "item",
    "detail",
    "length_m",
    "count",
    "spares",
    "order",
    "unit_power_w",
    "power_w",
    "unit_relative_cost",
    "relative_cost",
    "description",
]


def _csv(bom: Bom) -> bytes:
    w = CsvWriter(CSV_COLUMNS)
    for x in bom.lines:
        w.writerow(
            [
                x.section,
                x.fabric,
                x.part.number,
                x.part.opn,
                x.part.status,
                x.part.grade,
                x.item,
                x.detail,
                "" if x.length_m is None else f"{x.length_m:g}",
                x.count,
                x.spares,
                x.order,
                rounded(x.unit_power_w),
                rounded(x.power_w),
                rounded(x.unit_cost),
                rounded(x.cost),
                x.description,
            ]
        )
    sums = totals(bom)
    for name in ("devices", "media", "total"):
        w.writerow(
            [
                "total",
                "",
                "",
                "",
                "",
                "",
                name,
                "",
                "",
                "",
                "",
                "",
                "",
                sums["power_w"][name],
                "",
                sums["relative_cost"][name],
                "",
            ]
        )
    return w.getvalue()


@RENDERERS.register("bom")
def render_bom(ctx: RenderContext) -> Artifacts:
    bom = bill_of_materials(ctx.catalogue, ctx.fabric, ctx.blueprint)
    doc = {"blueprint": ctx.blueprint.metadata.name, "cost_unit": cost_unit(ctx.blueprint), **summary(bom)}
    return {
        "bom/bom.csv": _csv(bom),
        "bom/summary.json": (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode(),
    }
