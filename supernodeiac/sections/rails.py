"""Rail alignment of a scale-out fabric, measured on its links: does every switch that endpoints
attach to take one NIC position (rail) of every node, or several of each?"""

from __future__ import annotations

from typing import Any

from ..explain import SECTIONS, FabricStats, Inputs
from ..fabric_views import rail_alignment

SCALE_OUT = ("fat-tree", "dragonfly", "dragonfly-plus")


def rails_text(name: str, facts: dict, found) -> str:
    role = {"dragonfly": "routers"}.get(str(facts.get("kind")), "leaves")
    if found.aligned:
        return f"rail-aligned: each of the {found.switches} {role} takes one NIC position (rail) of the nodes on it"
    sw, nics = found.example
    span = f"{nics[0]}-{nics[-1]}" if list(nics) == list(range(nics[0], nics[-1] + 1)) else ", ".join(map(str, nics))
    text = (
        f"not rail-aligned: {found.switches - found.single} of {found.switches} {role} take several NIC positions "
        f"(e.g. {sw} takes NICs {span} of its nodes)"
    )
    kind = facts.get("kind")
    if kind in ("dragonfly", "dragonfly-plus"):
        per = "routers_per_group" if kind == "dragonfly" else "leaves"
        text += f"; rail-aligned terminals need {per} a multiple of {found.rails}"
    elif kind == "fat-tree" and not facts.get("rail_optimized"):
        text += " (rail_optimized: false)"
    return text


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
