"""What ``snc explain``'s sections plug into: the per-fabric statistics and inputs they read, and
the two registries (fabric sections by kind, deployment sections by name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..facts.bom import Bom
from ..model.blueprint import Blueprint
from ..util.registry import Registry


@dataclass
class FabricStats:
    """What one pass over a fabric's links learns about it."""

    name: str
    kind: str
    # The builder's facts (fabric/fabric_facts.py) as a generic read-only view: the sections
    # serialise them and read keys shared by several kinds; {} for a fabric without facts.
    facts: Mapping[str, Any]
    tiers: dict[int, int]  # member device -> fabric-local tier
    links: int
    # (lower tier, upper tier, medium) -> [links, Gb/s]
    bundles: dict[tuple[int, int, str], list]
    by_tier: dict[int, list[int]] = field(default_factory=dict)  # tier -> members, sorted

    def __post_init__(self) -> None:
        for i in sorted(self.tiers):
            self.by_tier.setdefault(self.tiers[i], []).append(i)

    def tier_gbps(self, lo: int, hi: int) -> float:
        return sum(v[1] for (a, b, _m), v in self.bundles.items() if (a, b) == (lo, hi))

    def members_at(self, tier: int) -> list[int]:
        return self.by_tier.get(tier, [])


@dataclass(frozen=True)
class Inputs:
    blueprint: Blueprint
    catalogue: Catalogue
    fabric: Fabric
    bom: Bom | None = None  # the bill of materials: media power and cost per fabric come from its parts


# A section edits the generic report of a fabric of its kind in place: it may set "bisection"
# (a builder's bisection_gbps fact still wins), add to "growth" and "notes", fill the declared
# ratios in "oversubscription", or set a figure that means nothing for its kind to None.
Section = Callable[[Inputs, FabricStats, dict[str, Any]], None]
SECTIONS: Registry[Section] = Registry("explain section")
# Deployment-wide sections: each adds report[name] (plain data) and renders through
# templates/explain/<name>.txt.j2.
DeploymentSection = Callable[[Inputs], Any]
DEPLOYMENT: Registry[DeploymentSection] = Registry("explain deployment section")


def sections_for(kind: str) -> list[Section]:
    """The sections of a fabric kind: registered as the kind, ``kind/topic`` or ``*/topic``."""
    return [fn for name, fn in SECTIONS.items() if name.split("/")[0] in (kind, "*")]
