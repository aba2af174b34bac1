"""A folded Clos (fat tree) scale-out fabric, InfiniBand or Ethernet: one model, transport a field.

An Ethernet (RoCEv2) fabric also carries, as data for the config renderers, its address plan,
its eBGP ASN plan (RFC 7938 style) and its lossless-class settings (``ethernet:``).
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from .base import Name, NonNegInt, PositiveFloat, PositiveInt, Ratio, Strict
from .common import MediaPolicy, RoutingEngine
from .site import Placement
from .subnet_manager import SubnetManager

# The port roles of a node that a scale-out fabric may take (catalogue PortGroup.role).
EndpointPorts = Literal["data", "storage", "inband"]

# IEEE 802.1Q priority code points and traffic classes are 3 bits; DSCP is 6 bits (RFC 2474).
Priority = Annotated[int, Field(ge=0, le=7)]
Dscp = Annotated[int, Field(ge=0, le=63)]
DscpKey = Annotated[int, Field(ge=0, le=63, strict=False)]  # a YAML mapping key arrives as text ("26")
# Private-use AS numbers (RFC 6996): 16-bit 64512-65534 and 32-bit 4200000000-4294967294.
PRIVATE_ASN_RANGES: tuple[tuple[int, int], ...] = ((64512, 65534), (4200000000, 4294967294))
Asn = Annotated[int, Field(ge=0, le=2**32 - 1)]  # AS numbers are 32 bits (RFC 6793)
# WRED thresholds as switches take them (SONiC's WRED_PROFILE: 32-bit byte counts).
QueueBytes = Annotated[int, Field(gt=0, le=2**32 - 1)]


class Endpoint(Strict):
    """Devices whose data ports land on the fabric's leaves.

    ``group`` names a node group or a scale-up domain (its devices with data ports are the
    endpoints). Compute endpoints fill the node slots of the scalable units in order; service
    endpoints (``su`` set: fabric managers, storage) take the top down ports of that SU's leaves,
    spread over its leaves first, and the node slots those ports belong to stay empty.
    """

    group: Name
    su: NonNegInt | None = Field(None, description="attach to this SU's leaves, top ports first (service endpoints)")
    ports: EndpointPorts = Field(
        "data", description="which of the devices' ports attach: data (compute), storage or inband (a storage / in-band fabric)"
    )
    ha: bool = Field(
        False, description="service endpoints: the group's devices form an HA pair (UFM, any service); checked to share no leaf"
    )


class ClosPlacement(Strict):
    leaf: Placement
    spine: Placement
    core: Placement | None = Field(None, description="3 tiers only")


class Uplinks(Strict):
    """Explicit uplinks per switch, in place of ceil(down ports in use / declared ratio)."""

    leaf: PositiveInt | None = Field(None, description="uplinks cabled per leaf")
    spine: PositiveInt | None = Field(None, description="3 tiers only: uplinks cabled per spine")


class LeafSet(Strict):
    """The leaves of one node group of the fabric, with their own switch model (a GPU group on
    400G-down leaves and an NPU group on 200G-down leaves under the same spines; in 3 tiers in
    pods of their own under the same cores). The group's compute endpoints fill SUs of their own;
    the leaves' uplinks follow their own radix and the fabric's leaf ratio (builders/clos.py: leaf
    sets)."""

    switch: str = Field(description="catalogue switch of this group's leaves")
    down_gbps: PositiveFloat | None = Field(
        None, description="the speed the leaves' down ports run (Gb/s); checked against the switch's cages"
    )
    su_nodes: PositiveInt | None = Field(None, description="node slots per SU of this group; default as the fabric's su_nodes")
    grow_to_sus: PositiveInt | None = Field(
        None, description="plan this group's leaves (addresses) and the spines for this many of its SUs; default: the built size"
    )


class Oversubscription(Strict):
    leaf: Ratio = "1:1"
    spine: Ratio = Field("1:1", description="3 tiers only: down:up of the spines (the top of the tree has no uplinks)")


# -- Ethernet / RoCEv2 -------------------------------------------------------------------------


def _network(value: str) -> str:
    try:
        return str(ipaddress.ip_network(value, strict=True))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IP network ({exc})") from None


Network = Annotated[str, AfterValidator(_network)]


def _p2p(value: str) -> str:
    if value == "unnumbered":
        return value
    net = _network(value)
    if ipaddress.ip_network(net).num_addresses < 2:
        raise ValueError(f"{value!r} holds no /31 or /127 (point-to-point needs 2 addresses)")
    return net


class Addressing(Strict):
    """Address pools. Every switch gets one loopback (/32 or /128); every switch-to-switch link a
    /31 (IPv4 pool) or /127 (IPv6 pool), or none when unnumbered (BGP over IPv6 link-local).

    Allocation is keyed by stable coordinates, so a fabric that grows keeps every address:
    leaf loopbacks count up from the bottom of the pool (leaf index = su x leaves per SU + leaf),
    spine and core loopbacks down from the top; leaf uplink /31s count up from the bottom of
    the point-to-point pool (leaf x uplinks + uplink), spine uplink /31s down from the top; host
    link /31s (``hosts``) count up from the bottom of the host pool (leaf x leaf down ports +
    down-port position), the leaf taking the even address, the NIC the odd one.
    """

    loopbacks: Network = Field(description="loopback pool, e.g. 10.0.0.0/20 or fd00:0:0:1::/64")
    p2p: Annotated[str, AfterValidator(_p2p)] = Field(
        description="point-to-point pool for switch-to-switch links (e.g. 10.64.0.0/16), or 'unnumbered'"
    )
    hosts: Annotated[str, AfterValidator(_p2p)] | None = Field(
        None,
        description="point-to-point pool for host links (leaf down port <-> NIC), e.g. 10.128.0.0/15: a /31 "
        "(IPv4) or /127 (IPv6) per leaf down port, block = leaf x leaf down ports + down-port position",
    )

    @model_validator(mode="after")
    def _distinct(self) -> Addressing:
        pools = [("loopback", self.loopbacks)]
        if self.p2p != "unnumbered":
            pools.append(("point-to-point", self.p2p))
        if self.hosts is not None:
            if self.hosts == "unnumbered":
                raise ValueError("hosts takes a pool (e.g. 10.128.0.0/15): a NIC needs an address, not an unnumbered link")
            pools.append(("host", self.hosts))
        for i, (label_a, a) in enumerate(pools):
            for label_b, b in pools[i + 1 :]:
                if ipaddress.ip_network(a).overlaps(ipaddress.ip_network(b)):
                    raise ValueError(f"the {label_a} pool {a} overlaps the {label_b} pool {b}")
        if self.p2p != "unnumbered":
            lo, p2p = ipaddress.ip_network(self.loopbacks).version, ipaddress.ip_network(self.p2p).version
            if lo != p2p:
                # SONiC's bgpcfgd activates a neighbour only in its own address's family (its peer
                # templates: `address-family ipv4` for an IPv4 neighbour, ipv6 for IPv6) and turns
                # Loopback0 into a `network` statement of the loopback's family: IPv4 loopbacks
                # over IPv6 sessions are never exchanged (no RFC 8950 extended next hop).
                raise ValueError(
                    f"loopbacks {self.loopbacks} are IPv{lo} but the sessions run over IPv{p2p} ({self.p2p}): SONiC "
                    f"activates each BGP neighbour in its own address family only, so the loopbacks would not be "
                    f"exchanged; give an IPv{p2p} loopback pool (an IPv6 loopback's low 32 bits become the BGP "
                    "router ID)"
                )
        return self


class Bgp(Strict):
    """eBGP in the style of RFC 7938: one ASN per leaf, one per pod for its spines (one for all
    spines of a 2-tier fabric), one for the core tier. Leaf ASNs count up from ``asn_first``;
    the core ASN is ``asn_last`` and the pods' ASNs count down below it."""

    asn_first: Asn = Field(description="first ASN of the declared private range (RFC 6996; 32-bit allowed)")
    asn_last: Asn = Field(description="last ASN of the range, inclusive")

    @model_validator(mode="after")
    def _private(self) -> Bgp:
        if self.asn_last < self.asn_first:
            raise ValueError(f"asn_last {self.asn_last} is below asn_first {self.asn_first}")
        if not any(lo <= self.asn_first and self.asn_last <= hi for lo, hi in PRIVATE_ASN_RANGES):
            ranges = " or ".join(f"{lo}-{hi}" for lo, hi in PRIVATE_ASN_RANGES)
            raise ValueError(f"ASN range {self.asn_first}-{self.asn_last} is not inside one private range ({ranges}, RFC 6996)")
        return self


class Ecn(Strict):
    """ECN marking (WRED with ECN) on the lossless queues, as the switch's WRED profile takes it."""

    min_threshold_bytes: QueueBytes = Field(description="queue depth where marking starts")
    max_threshold_bytes: QueueBytes = Field(description="queue depth where marking reaches its maximum probability")
    max_probability_pct: int = Field(description="marking probability at the max threshold, percent", ge=1, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> Ecn:
        if self.min_threshold_bytes > self.max_threshold_bytes:
            raise ValueError(f"min_threshold_bytes {self.min_threshold_bytes} exceeds max_threshold_bytes")
        return self


class Lossless(Strict):
    """The lossless class RoCEv2 needs: PFC on some priorities, ECN marking for DCQCN, the DSCP map."""

    pfc_priorities: list[Priority] = Field(min_length=1, description="priorities (traffic classes) with PFC enabled")
    dscp_to_tc: dict[DscpKey, Priority] = Field(
        min_length=1, description="DSCP -> traffic class; DSCPs not listed use default_tc"
    )
    default_tc: Priority = 0
    roce_dscp: Dscp = Field(description="DSCP the RoCEv2 data traffic carries; its traffic class must have PFC")
    cnp_dscp: Dscp | None = Field(None, description="DSCP of DCQCN congestion notification packets")
    ecn: Ecn

    @model_validator(mode="after")
    def _unique(self) -> Lossless:
        dup = sorted({p for p in self.pfc_priorities if self.pfc_priorities.count(p) > 1})
        if dup:
            raise ValueError(f"pfc_priorities lists {dup} twice")
        for name, dscp in (("roce_dscp", self.roce_dscp), ("cnp_dscp", self.cnp_dscp)):
            if dscp is not None and dscp not in self.dscp_to_tc:
                raise ValueError(f"{name} {dscp} has no entry in dscp_to_tc")
        tc = self.dscp_to_tc[self.roce_dscp]
        if tc not in self.pfc_priorities:
            raise ValueError(
                f"roce_dscp {self.roce_dscp} maps to traffic class {tc}, which has no PFC (pfc_priorities "
                f"{self.pfc_priorities}): RoCE traffic would be lossy"
            )
        return self


# SONiC's default port MTU (jumbo frames: a 4096-byte RoCE payload fits). SONiC's PORT mtu is the
# interface's IP MTU, as Linux's is: orchagent adds the Ethernet header, FCS and a VLAN tag (22
# bytes) before it programs the ASIC (sonic-swss orchagent/port.h, DEFAULT_MTU), so a host NIC
# takes the same number. 9216 is the SONiC YANG model's ceiling (sonic-port.yang PORT mtu 68..9216).
PORT_MTU = 9100
Mtu = Annotated[int, Field(ge=1280, le=9216)]  # IPv6's minimum link MTU (RFC 8200) up to SONiC's ceiling


class EthernetSettings(Strict):
    addressing: Addressing
    bgp: Bgp
    lossless: Lossless | None = Field(
        None, description="the RoCEv2 lossless class; leave it out for plain Ethernet (storage, in-band: TCP, no PFC)"
    )
    mtu: Mtu = Field(PORT_MTU, description="IP MTU of every switch port of the fabric (SONiC PORT mtu), 1280-9216")
    host_mtu: Mtu | None = Field(
        None, description="IP MTU of the hosts' fabric NICs (netplan); default: the ports' mtu, and never above it"
    )

    @field_validator("host_mtu")
    @classmethod
    def _host_inside_port(cls, value: int | None, info: ValidationInfo) -> int | None:
        port = info.data.get("mtu")
        if value is not None and port is not None and value > port:
            raise ValueError(
                f"host_mtu {value} is above the switch ports' mtu {port}: the leaf drops every frame longer than "
                "its port MTU (no fragmentation on a routed fabric of RoCE)"
            )
        return value


# -- the fabric --------------------------------------------------------------------------------


class FatTree(Strict):
    kind: Literal["fat-tree"]
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
    tiers: Literal[2, 3] = 2
    switch: str = Field(
        description="catalogue switch for every tier unless spine_switch/core_switch say otherwise (and the leaves of "
        "every endpoint group that 'leaves' does not name)"
    )
    spine_switch: str | None = None
    core_switch: str | None = Field(None, description="3 tiers; default: the spine switch")
    rail_optimized: bool = Field(True, description="NIC i of every node lands on the leaves of rail i")
    planes: Annotated[int, Field(ge=1, le=8)] = Field(
        1,
        description="independent planes (Alibaba HPN's dual plane: 2): endpoint port i goes to plane i % planes, as "
        "its port i // planes there, so a dual-port NIC puts one port in each plane; each plane is its own Clos, "
        "fabric '<name>-p<plane>', with its own devices, names and a 1/planes share of every address pool and ASN range",
    )
    oversubscription: Oversubscription = Field(default_factory=Oversubscription, description="per tier, down:up")
    uplinks: Uplinks | None = Field(
        None, description="explicit uplinks per switch; default ceil(down ports in use / ratio), see builders/clos_plan.py"
    )
    su_nodes: PositiveInt | None = Field(
        None, description="node slots per scalable unit; default: leaf down ports (rail-optimised) or the nodes one leaf takes"
    )
    grow_to_sus: PositiveInt | None = Field(
        None, description="plan spines (and cores) for this many SUs so growth never re-cables; default: the built size"
    )
    leaves_per_pod: PositiveInt | None = Field(
        None, description="3 tiers: leaves per pod; default: as many whole SUs as a spine takes"
    )
    endpoints: list[Endpoint] = Field(min_length=1)
    leaves: dict[Name, LeafSet] = Field(
        default_factory=dict,
        description="leaves of their own per endpoint group (switch model, down-port speed): 2 tiers under the same "
        "spines, 3 tiers in pods of their own under the same cores; the groups not named here share the leaves of 'switch'",
    )
    placement: ClosPlacement
    media: MediaPolicy | None = None
    ethernet: EthernetSettings | None = Field(None, description="transport ethernet (RoCEv2): address, ASN and lossless plan")

    @property
    def fabric_names(self) -> list[str]:
        """The fabrics this entry builds: itself, or one per plane ('<name>-p1', '<name>-p2', ...)."""
        return [self.name] if self.planes == 1 else [f"{self.name}-p{p + 1}" for p in range(self.planes)]

    @model_validator(mode="after")
    def _consistent(self) -> FatTree:
        if self.tiers == 3 and self.placement.core is None:
            raise ValueError("a 3-tier fat tree needs placement.core")
        if self.tiers == 2:
            if self.placement.core is not None:
                raise ValueError("placement.core is for 3 tiers; a 2-tier tree has no cores")
            if self.leaves_per_pod is not None:
                raise ValueError("leaves_per_pod is for 3 tiers; a 2-tier tree is one pod")
            if self.core_switch is not None:
                raise ValueError("core_switch is for 3 tiers")
            if self.uplinks is not None and self.uplinks.spine is not None:
                raise ValueError("uplinks.spine is for 3 tiers: the spines of a 2-tier tree have no uplinks")
            if self.oversubscription.spine != "1:1":
                raise ValueError("oversubscription.spine is for 3 tiers: the spines of a 2-tier tree have no uplinks")
        if self.transport == "ethernet" and self.ethernet is None:
            raise ValueError("a transport: ethernet fabric needs 'ethernet:' (addressing pools, bgp ASN range, lossless class)")
        if self.transport != "ethernet" and self.ethernet is not None:
            raise ValueError("'ethernet:' settings apply to transport: ethernet only")
        return self
