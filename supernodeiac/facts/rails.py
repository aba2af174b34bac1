"""Rail alignment in words: which fabrics it applies to and the sentence that says what was built
(``fabric.views.rail_alignment`` measures it); the ``rail-alignment`` check and ``snc explain``
both print it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..fabric.fabric_facts import SCALE_OUT_KINDS as SCALE_OUT
from ..fabric.views import RailAlignment

__all__ = ["SCALE_OUT", "rails_text"]


def rails_text(name: str, facts: Mapping[str, Any], found: RailAlignment) -> str:
    """The sentence for a scale-out fabric (``facts``: its Fabric.facts entry, or explain's view of it)."""
    role = {"dragonfly": "routers"}.get(str(facts.get("kind")), "leaves")
    if found.aligned:
        return f"rail-aligned: each of the {found.switches} {role} takes one NIC position (rail) of the nodes on it"
    assert found.example is not None  # set whenever a switch takes several NIC positions
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
