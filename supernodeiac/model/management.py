"""The out-of-band management network: a switch per rack, every BMC cabled, uplinks; optional
console servers and rack PDUs, and an out-of-band path for the aggregation switches themselves."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from .base import DeviceCount, Name, PositiveInt, Strict
from .clos import PRIVATE_ASN_RANGES, Asn, Network
from .common import MediaPolicy
from .site import Placement


def _ip(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IP address ({exc})") from None


# A URL that lands in DHCP options and ZTP JSON: a scheme, a host and a plain path, nothing to quote.
_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?|https?://\[[0-9A-Fa-f:]+\](:[0-9]{1,5})?")
_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)*/?")


def _url(value: str) -> str:
    head = _URL.match(value)
    if head is None or _PATH.fullmatch(value[head.end() :]) is None:
        raise ValueError(f"{value!r} is not a plain http(s) URL (scheme, host[:port], path of letters, digits, . _ ~ -)")
    return value.rstrip("/")


class MgmtAddressing(Strict):
    """The out-of-band network's addresses, keyed by stable coordinates, in blocks of ``per_rack``
    addresses. The rack at site index r owns block r + 1 (block 0 keeps the network address and the
    flat design's gateway); the rack switch takes the block's last-but-one address (its in-band
    interface). Routed design: each block is the rack's own subnet and its switch its gateway, the
    device on access port k takes address k + 1; flat design: one L2 network, address k."""

    network: Network = Field(description="out-of-band pool, e.g. 10.200.0.0/16")
    gateway: Annotated[str, AfterValidator(_ip)] | None = Field(None, description="default: the network's first address")
    vlan: int = Field(10, ge=1, le=4094, description="the management VLAN on every management switch")
    per_rack: PositiveInt | None = Field(
        None,
        description="addresses per rack; default: the rack switch's access ports + 2 (flat) or + 3 (routed: the "
        "subnet's network, gateway and broadcast addresses), rounded up to a power of two",
    )
    provisioning_url: Annotated[str, AfterValidator(_url)] | None = Field(
        None,
        description="http(s) URL the provisioning server serves the rendered dhcp/ztp/ and sonic/ folders under "
        "(SONiC ZTP fetches <url>/dhcp/ztp/<switch>.json, then <url>/sonic/<switch>.json); its host, given as an address, "
        "lies in the management network or services.networks; without it no ZTP is rendered (warning ztp-url)",
    )
    asn: Asn = Field(
        4259000000,
        description="the aggregation layer's ASN (routed design, and toward the border's site routers); the rack at "
        "site index r takes asn + 1 + r (RFC 6996 private)",
    )

    @model_validator(mode="after")
    def _gateway_inside(self) -> MgmtAddressing:
        net = ipaddress.ip_network(self.network)
        if self.gateway is not None and ipaddress.ip_address(self.gateway) not in net:
            raise ValueError(f"gateway {self.gateway} is not in {self.network}")
        if not any(lo <= self.asn <= hi for lo, hi in PRIVATE_ASN_RANGES):
            ranges = " or ".join(f"{lo}-{hi}" for lo, hi in PRIVATE_ASN_RANGES)
            raise ValueError(f"ASN {self.asn} is not in a private range ({ranges}, RFC 6996)")
        return self


class Aggregation(Strict):
    switch: str = Field(description="catalogue switch the rack switches uplink to")
    count: DeviceCount = 2
    placement: Placement
    oob_switch: str | None = Field(
        None,
        description="catalogue switch that takes the aggregation switches' own management ports (an out-of-band "
        "path that does not run through them); default: the rack switch model",
    )
    oob_placement: Placement | None = Field(
        None,
        description="where the OOB switches go (one per oob_switch's worth of aggregation switches); "
        "default: stacked just above the last aggregation switch",
    )


class Consoles(Strict):
    """A console (serial) server in every rack with console ports: each switch's RJ45 console is cabled to it."""

    model: str = Field("console-48", description="catalogue console-server")
    u: PositiveInt | None = Field(None, description="U of the console server; default: just below the rack switch")


class Pdus(Strict):
    """Rack PDUs (0U, in the rear) with a network port each, in every rack that holds devices and no power shelves."""

    model: str = Field("pdu-3ph", description="catalogue pdu")
    per_rack: PositiveInt = Field(3, description="PDUs per rack (the H100 RA has 3 per compute rack)")


class SharedSwitches(Strict):
    """Management switches shared by several racks: each serves a group of racks, its access ports
    cabled to the devices of all of them (the reference architectures' out-of-band switches that
    take a handful of racks each). Groups come from ``racks`` (consecutive rack positions of each
    row) or are listed in ``groups``; a rack in no group keeps a switch of its own."""

    racks: PositiveInt | Literal["row"] | None = Field(
        None,
        description="rack positions per switch: racks 1..N, N+1..2N, ... of each row (of ``rows``) share one; "
        "'row': one switch per row",
    )
    rows: list[Name] | None = Field(None, min_length=1, description="the rows ``racks`` groups; default: every row")
    groups: list[list[Name]] | None = Field(
        None,
        min_length=1,
        description="explicit groups of rack names (any racks, any rows), one switch each; the first rack names "
        "the switch and keys its address block",
    )
    ports_per_rack: PositiveInt | None = Field(
        None,
        description="access ports each rack of a group keeps (rack k of the group starts at port k x this), so "
        "devices added to one rack move no other rack's cables; default: packed in group order",
    )
    placement: Placement | None = Field(
        None,
        description="where the shared switches go, one per group in group order; default: the group's first "
        "occupied rack at the management switch's U",
    )

    @model_validator(mode="after")
    def _some_groups(self) -> SharedSwitches:
        if self.racks is None and self.groups is None:
            raise ValueError("give 'racks' (N per switch, or 'row') or 'groups' (lists of rack names)")
        if self.rows is not None and self.racks is None:
            raise ValueError("'rows' selects the rows that 'racks' groups: give 'racks' too")
        return self


def _keepalive(value: str) -> str:
    net = ipaddress.ip_network(value)
    if net.version != 4 or net.prefixlen != 31:
        raise ValueError(f"{value} is not an IPv4 /31 (SONiC's MCLAG_DOMAIN source_ip and peer_ip are IPv4 addresses)")
    return value


class Mclag(Strict):
    """The aggregation pair as one MCLAG domain (design: mclag): a peer link of ``peer_links``
    cables between the two switches (their top data ports, one PortChannel), the ICCP keepalive
    session on a VLAN of its own over it, and one PortChannel per rack switch whose members are
    its uplinks, half on each peer (SONiC MCLAG: MCLAG_DOMAIN, MCLAG_INTERFACE, PORTCHANNEL)."""

    domain_id: int = Field(1, ge=1, le=4095, description="MCLAG domain ID (SONiC MCLAG_DOMAIN key, 1-4095)")
    peer_links: PositiveInt = Field(2, description="cables of the peer link, on the top data ports of both switches")
    keepalive: Annotated[Network, AfterValidator(_keepalive)] = Field(
        "169.254.1.0/31",
        description="IPv4 /31 of the peers' keepalive VLAN interfaces (the first switch takes the even address); "
        "default RFC 3927 link-local: the session is one hop, over the peer link",
    )
    keepalive_vlan: int = Field(4094, ge=2, le=4094, description="VLAN of the keepalive session, on the peer link only")


def _p2p(value: str) -> str:
    iface = ipaddress.ip_interface(value)
    if iface.network.prefixlen != iface.max_prefixlen - 1:
        raise ValueError(f"{value} is not a point-to-point address with its /31 (/127) prefix, e.g. 192.0.2.1/31")
    return str(iface)


class SiteRouter(Strict):
    """A router of the site network that the management network peers with (an external eBGP peer:
    its own ASN, named by the blueprint; snc renders no config for it)."""

    name: Name = Field(description="the site router's name, written in the aggregation switches' port descriptions")
    asn: Asn = Field(description="the site router's ASN (the site's; public or private)")

    @model_validator(mode="after")
    def _asn_nonzero(self) -> SiteRouter:
        if not 1 <= self.asn <= 2**32 - 2:
            raise ValueError(f"ASN {self.asn} is reserved (RFC 7607: 0; RFC 7300: 4294967295)")
        return self


class BorderLink(Strict):
    """One border link with addresses the site gives (instead of ``border.network``)."""

    switch: Name = Field(description="the aggregation switch, e.g. mgmt-agg-01")
    router: Name = Field(description="the site router (a name of border.routers)")
    address: Annotated[str, AfterValidator(_p2p)] = Field(description="the switch's end, with its /31 (/127), e.g. 192.0.2.1/31")
    peer: Annotated[str, AfterValidator(_ip)] = Field(description="the router's end, in the same /31 (/127)")
    peer_port: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9/._-]{0,63}$")] | None = Field(
        None, description="the router's port, for the port description and the cable label"
    )

    @model_validator(mode="after")
    def _same_link(self) -> BorderLink:
        iface = ipaddress.ip_interface(self.address)
        peer = ipaddress.ip_address(self.peer)
        if peer not in iface.network or peer == iface.ip:
            raise ValueError(f"peer {self.peer} is not the other address of {iface.network}")
        return self


class Border(Strict):
    """The management network's border toward the site network: the aggregation switches that
    route the management network each have one routed link to every site router (their top data
    ports, below an MCLAG peer link or the flat design's inter-aggregation links), an eBGP session
    over it (the aggregation layer's ASN, management.addressing.asn, to the router's), learn the
    site's routes (its default route) and announce the management network as one aggregate."""

    routers: list[SiteRouter] = Field(min_length=1, max_length=8, description="the site routers")
    switches: list[Name] | None = Field(
        None,
        min_length=1,
        description="the aggregation switches that uplink (default: every one that routes the management network: "
        "all of them in the routed design, the pair in mclag, the first (the gateway) in flat)",
    )
    network: Network | None = Field(
        None,
        description="pool of the border links' /31s (/127s): link k (switch in order, then router) takes pair k, "
        "the router its even address, the switch the odd",
    )
    links: list[BorderLink] | None = Field(
        None, min_length=1, description="the links with the site's addresses (instead of network)"
    )
    announce: list[Network] | None = Field(
        None, min_length=1, description="prefixes announced to the site routers; default: the management network"
    )
    model: str | None = Field(
        None,
        description="the site routers' catalogue model (a switch; the site's own under catalogue: devices:). With "
        "placement, the routers stand in the Fabric as site-owned devices (placed, cabled, counted in rack space and "
        "power; never configured, never ordered) and each border link is a cable like any other: a cabling row, its "
        "parts in the BOM, labels, an LLDP expectation",
    )
    placement: Placement | None = Field(
        None, description="where the site routers stand (router k at slot k of the placement), with model"
    )

    @model_validator(mode="after")
    def _one_numbering(self) -> Border:
        if (self.network is None) == (self.links is None):
            raise ValueError("give the border links' addresses as 'network' (a pool of /31s) or as 'links', one of them")
        if (self.model is None) != (self.placement is None):
            raise ValueError("give the site routers' 'model' and 'placement' together (or neither: border cables unplanned)")
        names = [r.name for r in self.routers]
        if len(set(names)) != len(names):
            raise ValueError("site router names repeat")
        return self


class Management(Strict):
    design: Literal["routed", "flat", "mclag"] = Field(
        "routed",
        description="routed: every rack switch routes its rack's subnet (its own VLAN) and peers in eBGP over /31 "
        "uplinks with the aggregation switches, so no broadcast domain leaves a rack; mclag: one VLAN across the "
        "site, the aggregation pair one MCLAG domain and each rack switch's uplinks one PortChannel to it (a tree "
        "of logical links); flat: one VLAN across every switch, the aggregation switches joined to the first (the gateway) "
        "by one link each (loop-free only as a tree: one uplink per rack)",
    )
    mclag: Mclag | None = Field(None, description="design: mclag: the MCLAG domain of the aggregation pair")
    switch: str = Field("sn2201", description="catalogue switch placed in every rack with management ports")
    u: PositiveInt | None = Field(None, description="U of the rack switch; default: the rack's top unit")
    uplinks: PositiveInt = Field(
        1, description="links from each rack switch into the aggregation layer (round-robin over its switches)"
    )
    aggregation: Aggregation | None = None
    shared: SharedSwitches | None = Field(
        None, description="management switches shared by groups of racks (per N racks, per row, or listed groups)"
    )
    addressing: MgmtAddressing | None = Field(
        None, description="management addresses for the switch configs (MGMT_INTERFACE, VLAN)"
    )
    console: Consoles | None = Field(None, description="console servers for the switches' serial ports")
    pdus: Pdus | None = Field(None, description="rack PDUs on the management network")
    media: MediaPolicy | None = None
    border: Border | None = Field(
        None, description="the uplinks to the site network: site routers, eBGP sessions, announced prefixes"
    )

    @model_validator(mode="after")
    def _mclag_settings(self) -> Management:
        if self.mclag is not None and self.design != "mclag":
            raise ValueError(f"'mclag:' settings are for design: mclag (this design is {self.design})")
        return self
