"""CXL memory pools: Type 3 memory devices behind CXL switches, shared by a set of hosts.

One pool is a CXL 2.0-style single switching level: every host has the same number of links
to each of the pool's switches, and each switch has its own Type 3 memory devices, so every
host reaches all of the pool's capacity. Hosts are either a node group built elsewhere
(``group``) or made by the pool itself (``name``, ``model``, ``count``, ``placement``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import DeviceCount, Name, NonNegFloat, PositiveFloat, PositiveInt, Strict
from .common import MediaPolicy
from .site import Placement

# Device roles of a pool's switches and memory devices (Device.role).
ROLE_SWITCH = "cxl-switch"
ROLE_MEMORY = "cxl-memory"


class CxlHosts(Strict):
    """Hosts attached to the pool and the capacity each one is promised."""

    group: Name | None = Field(None, description="an existing node group whose devices attach (its model needs CXL ports)")
    name: Name | None = Field(None, description="hosts made by the pool: their group name")
    model: str | None = Field(None, description="hosts made by the pool: catalogue node with CXL ports")
    count: DeviceCount | None = Field(None, description="hosts made by the pool: how many")
    placement: Placement | None = Field(None, description="hosts made by the pool: where they go")
    naming: str | None = Field(
        None, description="hosts made by the pool: {group} and {index} (1-based); default {group}-{index:04d}"
    )
    promised_gb: NonNegFloat = Field(description="CXL memory capacity promised to each host, GB")
    links: PositiveInt | None = Field(
        None, description="CXL links per host, spread evenly over the switches; default one per switch"
    )

    @model_validator(mode="after")
    def _one_form(self) -> CxlHosts:
        made = {"name": self.name, "model": self.model, "count": self.count, "placement": self.placement}
        if self.group is not None:
            extra = sorted(k for k, v in made.items() if v is not None)
            if extra or self.naming is not None:
                raise ValueError(f"a hosts entry names an existing group or makes hosts, not both (drop {', '.join(extra)})")
        else:
            missing = sorted(k for k, v in made.items() if v is None)
            if missing:
                raise ValueError(
                    "give 'group' (an existing node group) or all of name, model, count, placement "
                    f"(missing {', '.join(missing)})"
                )
        return self

    @property
    def label(self) -> str:
        return self.group or self.name or ""


class CxlMemory(Strict):
    model: str = Field(description="catalogue memory device (CXL Type 3)")
    per_switch: PositiveInt = Field(description="Type 3 devices behind each switch")


class CxlSharedRegion(Strict):
    """One memory region mapped by several hosts at once (CXL 3.x shared memory: a KV-cache prefix
    read by every host of a serving group). Counted once against the pool's capacity."""

    name: Name = Field(description="region name, unique in the pool")
    size_gb: PositiveFloat = Field(description="region size, GB (served by whole logical devices)")
    hosts: list[Name] = Field(
        min_length=1,
        description="who maps it (two hosts or more): a hosts entry's group (all its hosts) or host devices, by name",
    )


class CxlPlacement(Strict):
    switch: Placement
    memory: Placement = Field(description="memory device (switch s, slot j) takes placement slot j x switches + s")


class CxlPool(Strict):
    kind: Literal["cxl-pool"] = "cxl-pool"
    name: Name
    switch: str = Field(description="catalogue CXL switch")
    switches: PositiveInt = 1
    memory: CxlMemory
    hosts: list[CxlHosts] = Field(min_length=1)
    per_host_gbytes: PositiveFloat | None = Field(
        None, description="bandwidth target per host into the pool, GB/s per direction (lanes x lane rate of its links)"
    )
    shared: list[CxlSharedRegion] = Field(
        default_factory=list, description="regions mapped by several hosts (CXL 3.x shared memory), counted once"
    )
    placement: CxlPlacement
    media: MediaPolicy | None = None

    @model_validator(mode="after")
    def _regions_unique(self) -> CxlPool:
        seen: set[str] = set()
        for region in self.shared:
            if region.name in seen:
                raise ValueError(f"shared region {region.name!r} is named twice")
            seen.add(region.name)
        return self
