"""Rail alignment of a scale-out fabric, measured on its links: does every switch that endpoints
attach to take one NIC position (rail) of every node, or several of each?"""

from __future__ import annotations

from typing import Any

from ..fabric.views import rail_alignment
from ..facts.rails import SCALE_OUT, rails_text
from .base import SECTIONS, FabricStats, Inputs


@SECTIONS.register("*/rails")
def rails_section(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    if s.kind not in SCALE_OUT:
        return
    found = rail_alignment(inp.fabric, s.name)
    if found is None:
        return
    report["rails"] = {
        "rails": found.rails,
        "switches": found.switches,
        "single_rail": found.single,
        "aligned": found.aligned,
        "detail": rails_text(s.name, s.facts, found),
    }
