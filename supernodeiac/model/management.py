"""The out-of-band management network: a switch per rack, every BMC cabled, uplinks."""

from __future__ import annotations

from pydantic import Field

from .base import DeviceCount, PositiveInt, Strict
from .common import MediaPolicy
from .site import Placement


class Aggregation(Strict):
    switch: str = Field(description="catalogue switch the rack switches uplink to")
    count: DeviceCount = 2
    placement: Placement


class Management(Strict):
    switch: str = Field("sn2201", description="catalogue switch placed in every rack with management ports")
    u: PositiveInt | None = Field(None, description="U of the rack switch; default: the rack's top unit")
    uplinks: PositiveInt = Field(
        1, description="links from each rack switch into the aggregation layer (round-robin over its switches)"
    )
    aggregation: Aggregation | None = None
    media: MediaPolicy | None = None
