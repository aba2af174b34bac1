"""Groups of standalone devices: compute nodes, storage, fabric-manager appliances."""

from __future__ import annotations

from pydantic import Field

from .base import DeviceCount, Name, Strict
from .site import Placement

# The default name of a node (node groups and the hosts a CXL pool makes): {group}, {index} 1-based.
NODE_NAMING = "{group}-{index:04d}"


class NodeGroup(Strict):
    name: Name
    model: str = Field(description="catalogue device")
    count: DeviceCount
    placement: Placement
    naming: str | None = Field(None, description="name template; {group} and {index} (1-based), default {group}-{index:04d}")
