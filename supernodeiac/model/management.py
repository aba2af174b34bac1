"""The out-of-band management network: a switch per rack, every BMC cabled, uplinks."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from .base import DeviceCount, PositiveInt, Strict
from .clos import Network
from .common import MediaPolicy
from .site import Placement


def _ip(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IP address ({exc})") from None


class MgmtAddressing(Strict):
    """The out-of-band network's addresses, keyed by stable coordinates: one flat L2 network (one VLAN)
    in blocks of ``per_rack`` addresses. The rack at site index r owns block r + 1 (block 0 keeps the
    network address and the gateway); the device on its rack switch's access port k takes address k
    of the block, the rack switch itself the block's last-but-one address (its in-band interface)."""

    network: Network = Field(description="out-of-band pool, e.g. 10.200.0.0/16")
    gateway: Annotated[str, AfterValidator(_ip)] | None = Field(None, description="default: the network's first address")
    vlan: int = Field(10, ge=1, le=4094, description="the management VLAN on every management switch")
    per_rack: PositiveInt | None = Field(
        None, description="addresses per rack; default: the rack switch's access ports + 2, rounded up to a power of two"
    )

    @model_validator(mode="after")
    def _gateway_inside(self) -> MgmtAddressing:
        net = ipaddress.ip_network(self.network)
        if self.gateway is not None and ipaddress.ip_address(self.gateway) not in net:
            raise ValueError(f"gateway {self.gateway} is not in {self.network}")
        return self


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
    addressing: MgmtAddressing | None = Field(
        None, description="management addresses for the switch configs (MGMT_INTERFACE, VLAN)"
    )
    media: MediaPolicy | None = None
