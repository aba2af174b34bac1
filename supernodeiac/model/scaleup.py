"""Scale-up domains: accelerators that meet in one switch hop over an accelerator link.

Boards with switch chips of their own (HGX) need no entry here: the node model's
``internal_scaleup`` describes them. The entries below span several devices and so get
connector maps (orthogonal boards) or in-rack cable cartridges (switched trays). A
``two-level`` entry joins whole domains through a second switching level (SuperCluster).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import DeviceCount, Name, PositiveFloat, PositiveInt, Ratio, Strict
from .clos import Network
from .common import MediaPolicy
from .site import Placement

# Kinds of the domains with one switching level (a two-level entry joins these).
ONE_LEVEL = ("orthogonal", "switched")


class OrthogonalDomain(Strict):
    """OEX: N compute boards x M switch boards, each pair mated once by an orthogonal connector."""

    kind: Literal["orthogonal"]
    name: Name
    compute_board: str = Field(description="catalogue compute-board")
    switch_board: str = Field(description="catalogue switch-board")
    compute_boards: PositiveInt = Field(description="N compute boards per supernode")
    switch_boards: PositiveInt = Field(description="M switch boards per supernode")
    count: DeviceCount = Field(1, description="how many such supernodes")
    chassis: str | None = Field(
        None, description="catalogue chassis the boards slide into; default: the smallest that has the slots"
    )
    per_accelerator_gbytes: PositiveFloat | None = Field(
        None, description="declared scale-up bandwidth per accelerator, GB/s both directions"
    )
    placement: Placement = Field(
        description="one supernode per placement slot: its chassis, with the chassis's power shelves above it"
    )
    media: MediaPolicy | None = None


class InbandAddressing(Strict):
    """The compute trays' in-band (front-end) addresses, keyed by stable coordinates: domain
    instance s (a rack) owns block s of ``per_domain`` addresses, its subnet; tray b takes address
    b + 1 of it. NVIDIA IMEX reaches its peers of the NVLink domain over these addresses
    (snc render: imex/<domain>/nodes_config.cfg)."""

    network: Network = Field(description="in-band pool, e.g. 10.150.0.0/16")
    per_domain: PositiveInt | None = Field(
        None,
        description="addresses per domain instance; default: compute trays + 3 (network, gateway, broadcast), "
        "rounded up to a power of two",
    )


class SwitchedDomain(Strict):
    """NVL72-style: compute trays and switch trays in a rack joined by cable cartridges."""

    kind: Literal["switched"]
    name: Name
    compute_tray: str = Field(description="catalogue compute-board")
    switch_tray: str = Field(description="catalogue switch-board")
    compute_trays: PositiveInt = 18
    switch_trays: PositiveInt = 9
    count: DeviceCount = Field(1, description="how many such domains (racks)")
    per_accelerator_gbytes: PositiveFloat | None = Field(
        None, description="declared scale-up bandwidth per accelerator, GB/s both directions"
    )
    placement: Placement = Field(
        description="one domain per placement slot (usually per_rack: 1): lower half of the compute trays, "
        "the switch trays, then the upper half"
    )
    inband: InbandAddressing | None = Field(
        None, description="the compute trays' in-band (front-end) addresses: NVIDIA IMEX's nodes_config.cfg per domain"
    )
    media: MediaPolicy | None = None


class TwoLevelDomain(Strict):
    """A second scale-up switching level joining whole domains into one accelerator domain.

    Every switch chip of the joined domains (level 1) sends its uplink ports to the level-2
    switches so that each L1 chip reaches each L2 chip with the same number of links. With
    ``planes: true`` the second level is one independent plane per L1 chip position: plane c
    joins L1 chip c of every supernode (chip c = switch board x chips per board + chip), so a
    level-2 chip takes one L1 chip per supernode instead of every L1 chip of the cluster.
    """

    kind: Literal["two-level"]
    name: Name
    domains: list[Name] = Field(min_length=1, description="orthogonal or switched domains joined (all their supernodes)")
    switch: str = Field(description="catalogue level-2 switch (switch_chips with scaleup ports)")
    planes: bool = Field(
        False,
        description="one level-2 plane per L1 chip position of a supernode: plane c joins L1 chip c of every "
        "supernode (rail-style), so the second level grows with the supernodes, not with their square",
    )
    switches: PositiveInt | None = Field(
        None, description="level-2 switches (per plane with planes: true); default: the fewest that spread evenly"
    )
    uplinks_per_chip: PositiveInt | None = Field(None, description="uplinks cabled per L1 chip; default: all it has")
    taper: Ratio = Field("1:1", description="declared L1 down:up bandwidth per chip (1:1 = no taper)")
    placement: Placement = Field(description="one level-2 switch per placement slot")
    media: MediaPolicy | None = None


ScaleupDomain = Annotated[OrthogonalDomain | SwitchedDomain | TwoLevelDomain, Field(discriminator="kind")]
