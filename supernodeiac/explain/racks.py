"""The racks in `snc explain`: per row, the racks in use, their heaviest power, units and weight
against the row's budget, and the deployment's totals (``racks.rack_loads``, ``racks.budgets``)."""

from __future__ import annotations

from typing import Any

from ..facts.racks import budgets, rack_loads
from ..util.number_format import rounded
from .base import DEPLOYMENT, Inputs

HOTTEST = 3  # racks named in the summary


@DEPLOYMENT.register("racks")
def racks_section(inp: Inputs) -> dict[str, Any] | None:
    loads = list(rack_loads(inp.fabric, inp.catalogue).values())
    if not loads:
        return None
    rows = budgets(inp.blueprint, inp.catalogue)
    units = inp.blueprint.site.rack_units
    per_row = []
    for row in inp.blueprint.site.rows:
        mine = [x for x in loads if x.row == row.name]
        if not mine:
            continue
        b = rows[row.name]
        weighed = [x for x in mine if x.unweighed < len(x.devices)]
        per_row.append(
            {
                "row": row.name,
                "racks": len(mine),
                "power_kw_max": rounded(max(x.power_max_w for x in mine) / 1000),
                "power_kw_total": rounded(sum(x.power_max_w for x in mine) / 1000),
                "budget_kw": b.power_kw if b.declared else None,
                "cooling": b.cooling if b.declared else None,
                "units_max": max(x.units for x in mine),
                "rack_units": units,
                "weight_kg_max": rounded(max(x.weight_kg for x in weighed)) if weighed else None,
                "weight_complete": all(x.unweighed == 0 for x in mine),
                "cables_max": max(x.cables for x in mine),
                "cables_limit": b.cables_max,
            }
        )
    hottest = sorted(loads, key=lambda x: (-x.power_max_w, x.rack))[:HOTTEST]
    return {
        "racks": len(loads),
        "declared": any(b.declared for b in rows.values()),
        "power_kw_max": rounded(sum(x.power_max_w for x in loads) / 1000),
        "power_kw_typical": rounded(sum(x.power_typical_w for x in loads) / 1000),
        "rows": per_row,
        "hottest": [{"rack": x.name, "power_kw": rounded(x.power_max_w / 1000), "units": x.units} for x in hottest],
    }
