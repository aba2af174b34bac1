"""Scale-up domains: accelerators that meet in one switch hop over an accelerator link.

Boards with switch chips of their own (HGX) need no entry here: the node model's
``internal_scaleup`` describes them. The entries below span several devices and so get
connector maps (orthogonal boards) or in-rack cable cartridges (switched trays).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Name, PositiveFloat, PositiveInt, Strict
from .site import Placement


class OrthogonalDomain(Strict):
    """OEX: N compute boards x M switch boards, each pair mated once by an orthogonal connector."""

    kind: Literal["orthogonal"]
    name: Name
    compute_board: str = Field(description="catalogue compute-board")
    switch_board: str = Field(description="catalogue switch-board")
    compute_boards: PositiveInt = Field(description="N compute boards per supernode")
    switch_boards: PositiveInt = Field(description="M switch boards per supernode")
    count: PositiveInt = Field(1, description="how many such supernodes")
    per_accelerator_gbytes: PositiveFloat | None = Field(
        None, description="declared scale-up bandwidth per accelerator, GB/s both directions"
    )
    placement: Placement = Field(description="one supernode chassis per placement slot")


class SwitchedDomain(Strict):
    """NVL72-style: compute trays and switch trays in a rack joined by cable cartridges."""

    kind: Literal["switched"]
    name: Name
    compute_tray: str = Field(description="catalogue compute-board")
    switch_tray: str = Field(description="catalogue switch-board")
    compute_trays: PositiveInt = 18
    switch_trays: PositiveInt = 9
    count: PositiveInt = Field(1, description="how many such domains (racks)")
    per_accelerator_gbytes: PositiveFloat | None = None
    placement: Placement = Field(description="one domain per placement slot (usually per_rack: 1)")


ScaleupDomain = Annotated[OrthogonalDomain | SwitchedDomain, Field(discriminator="kind")]
