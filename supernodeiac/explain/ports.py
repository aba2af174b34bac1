"""Port use per switch role, for every fabric whose switches it built: the design's ports (at the
planned size, from the builder's ``ports_planned``) and those cabled now, against the radix."""

from __future__ import annotations

from typing import Any

from ..fabric.views import port_use
from ..util.number_format import rounded
from .base import SECTIONS, FabricStats, Inputs


@SECTIONS.register("*/ports")
def port_use_section(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    uses = port_use(inp.fabric, s.name)
    report["port_use"] = [
        {
            "role": u.role,
            "switches": u.switches,
            "radix": u.radix,
            "design_ports": u.planned,
            "design": rounded(u.design_fraction) if u.design_fraction is not None else None,
            "used": u.used,
            "total": u.total,
            "in_use": rounded(u.used_fraction),
        }
        for u in uses
    ] or None
