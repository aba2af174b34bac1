"""A folded Clos (fat tree) scale-out fabric, InfiniBand or Ethernet: one model, transport a field."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Name, NonNegInt, PositiveInt, Ratio, Strict
from .common import MediaPolicy
from .site import Placement


class Endpoint(Strict):
    """Devices whose data ports land on the fabric's leaves.

    ``group`` names a node group or a scale-up domain (its compute boards are the endpoints).
    Compute endpoints fill scalable units in order of their index; service endpoints
    (``su`` set: fabric managers, storage) take the top down ports of that SU's leaves.
    """

    group: Name
    su: NonNegInt | None = Field(None, description="attach to this SU's leaves, top ports first (service endpoints)")


class ClosPlacement(Strict):
    leaf: Placement
    spine: Placement
    core: Placement | None = None


class Oversubscription(Strict):
    leaf: Ratio = "1:1"
    spine: Ratio = "1:1"


class FatTree(Strict):
    kind: Literal["fat-tree"]
    name: Name
    transport: Literal["infiniband", "ethernet"] = "infiniband"
    tiers: Literal[2, 3] = 2
    switch: str = Field(description="catalogue switch for every tier unless spine_switch/core_switch say otherwise")
    spine_switch: str | None = None
    core_switch: str | None = None
    rail_optimized: bool = Field(True, description="NIC i of every node lands on the leaves of rail i")
    oversubscription: Oversubscription = Field(default_factory=Oversubscription, description="per tier, down:up")
    su_nodes: PositiveInt | None = Field(None, description="compute nodes per scalable unit; default: leaf down ports")
    grow_to_sus: PositiveInt | None = Field(
        None, description="plan spines (and cores) for this many SUs so growth never re-cables; default: the built size"
    )
    leaves_per_pod: PositiveInt | None = Field(None, description="3 tiers: leaves per pod; default: spine down ports")
    endpoints: list[Endpoint] = Field(min_length=1)
    placement: ClosPlacement
    media: MediaPolicy | None = None

    @model_validator(mode="after")
    def _core_placement(self) -> FatTree:
        if self.tiers == 3 and self.placement.core is None:
            raise ValueError("a 3-tier fat tree needs placement.core")
        return self
