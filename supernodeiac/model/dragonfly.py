"""Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) and Dragonfly+ (Shpiner et al., 2017) fabrics.

A Dragonfly joins groups of routers: inside a group every router links to every other (all to
all), between groups each router carries ``h`` global links. Dragonfly+ makes each group a
two-level Clos (leaves carry the terminals, spines the global links). The wiring formulas and
the arrangements of global links are documented in ``supernodeiac/builders/dragonfly.py``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Name, NonNegInt, PositiveInt, Ratio, Strict
from .common import MediaPolicy, RoutingEngine
from .site import Placement
from .subnet_manager import SubnetManager

Arrangement = Literal["absolute", "relative", "circulant"]


class DragonflyEndpoint(Strict):
    """A node group (or scale-up domain) whose data ports land on the fabric's terminal ports.

    Endpoint groups fill the terminal ports in the order listed; a device's data ports take
    consecutive terminal ports (see the builder for the formula).
    """

    group: Name
    ports: Literal["data", "storage", "inband"] = Field("data", description="which of the devices' ports attach")


class GroupPlacement(Strict):
    """Where a kind of switch goes: racks of one row, filled in order of (group, switch in group).

    Switch ``s`` of group ``j`` is placement slot ``j * per_group + s``; ``per_rack`` defaults to
    the switches per group, i.e. one group per rack.
    """

    row: Name | None = Field(None, description="a row of site.rows (or give follow)")
    follow: list[Name] | None = Field(
        None, min_length=1, description="node groups whose racks the switches go into (top-of-rack), instead of a row"
    )
    first_rack: PositiveInt = 1
    per_rack: PositiveInt | None = Field(None, description="switches per rack; default: one group per rack")
    first_u: PositiveInt = 1
    gap_u: NonNegInt = Field(0, description="free units between switches in a rack")

    @model_validator(mode="after")
    def _one_target(self) -> GroupPlacement:
        if (self.row is None) == (self.follow is None):
            raise ValueError("give either 'row' (a row of site.rows) or 'follow' (groups whose racks to use)")
        return self

    def resolve(self, per_group: int) -> Placement:
        return Placement(
            row=self.row,
            follow=self.follow,
            first_rack=self.first_rack,
            per_rack=self.per_rack or per_group,
            first_u=self.first_u,
            gap_u=self.gap_u,
        )


class _GroupedFabric(Strict):
    """What both topologies share: groups, the global-link arrangement, endpoints, media."""

    name: Name
    transport: Literal["infiniband", "ethernet"] = "infiniband"
    routing_engine: RoutingEngine | None = Field(
        None,
        description="InfiniBand: the subnet manager's routing engine; default the one deadlock-free on one virtual lane "
        "for the topology (ftree, updn, nue)",
    )
    subnet_manager: SubnetManager | None = Field(
        None, description="InfiniBand: the machines that run OpenSM (sm_priority each, an HA pair) and the fabric's lmc"
    )
    groups: PositiveInt | None = Field(None, description="g, groups to build; default: as many as the endpoints need")
    grow_to_groups: PositiveInt | None = Field(
        None,
        description="plan the global links for this many groups, so adding groups later never re-cables; default: groups",
    )
    arrangement: Arrangement = Field("absolute", description="how group ports map to peer groups (absolute, relative, circulant)")
    terminal_order: Literal["rail-aligned", "consecutive"] | None = Field(
        None,
        description="how endpoint NICs take terminal ports: rail-aligned (NIC r of every node on the switches of rail r) "
        "or consecutive (a node's NICs on consecutive ports); default rail-aligned where the switches per group "
        "divide by the NICs per node",
    )
    endpoints: list[DragonflyEndpoint] = Field(min_length=1)
    media: MediaPolicy | None = None

    @model_validator(mode="after")
    def _growth(self) -> _GroupedFabric:
        if self.groups is not None and self.grow_to_groups is not None and self.grow_to_groups < self.groups:
            raise ValueError(f"grow_to_groups ({self.grow_to_groups}) is below groups ({self.groups})")
        return self


class Dragonfly(_GroupedFabric):
    """Routers with p terminals, a routers per group, h global links per router, g groups.

    Left out, p, a and h default to the balanced design (a = 2p = 2h) that fits the router's
    data radix k: p = h = (k + 1) // 4, a = 2p.
    """

    kind: Literal["dragonfly"]
    router: str = Field(description="catalogue switch used as the router")
    terminals: PositiveInt | None = Field(None, description="p, terminal (endpoint) ports per router")
    routers_per_group: PositiveInt | None = Field(None, description="a, routers per group (all to all inside the group)")
    global_links: PositiveInt | None = Field(None, description="h, global links per router")
    placement: GroupPlacement = Field(description="routers; default one group per rack")


class DragonflyPlusPlacement(Strict):
    leaf: GroupPlacement
    spine: GroupPlacement


class DragonflyPlus(_GroupedFabric):
    """Each group a leaf/spine Clos: leaves carry terminals, spines carry the global links.

    The leaf's data ports split down:up by ``oversubscription``; every leaf reaches every spine
    of its group with ``leaf up / spines`` parallel links. Left out, spines = leaf up ports,
    leaves = half the spine's ports / those parallel links, global links = the spine's remaining
    ports (Shpiner et al.).
    """

    kind: Literal["dragonfly-plus"]
    switch: str = Field(description="catalogue switch for leaves and spines unless spine_switch says otherwise")
    spine_switch: str | None = None
    oversubscription: Ratio = Field("1:1", description="leaf down:up")
    leaves: PositiveInt | None = Field(None, description="leaves per group")
    spines: PositiveInt | None = Field(None, description="spines per group; must divide the leaf's up ports")
    global_links: PositiveInt | None = Field(None, description="h, global links per spine")
    placement: DragonflyPlusPlacement
