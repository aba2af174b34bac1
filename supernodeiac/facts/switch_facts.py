"""What each switch must know, computed once from the Fabric: the facts every config renderer
(SONiC config_db, LLDP expectations, OpenSM files) and ``snc verify`` read.

Nothing here re-derives the topology or the plans: interfaces come from the link table (every
link end, sorted by device and port once with numpy), addresses and ASNs from what the builders
stored (``Device.attrs``, ``Fabric.facts``, ``link_addresses``), management addresses from the
stable (rack, access port) coordinates, port names and lanes from the catalogue's port maps.

A :class:`FabricFacts` is made once per render (``facts_for``) and hands out one
:class:`SwitchFacts` per switch on demand, kept for the renderers that come after.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..catalog.types import Catalogue, DeviceModel
from ..fabric import SITE_ROLES, Device, Fabric
from ..fabric.fabric_facts import BorderLinkFacts, LosslessFacts, ethernet_of, management_of, oob_switches
from ..model.blueprint import Blueprint
from ..model.clos import PORT_MTU
from ..model.management import Mclag, MgmtAddressing
from .host_addresses import HostAddresses
from .link_addresses import LinkAddresses
from .mgmt_addresses import MgmtPlan
from .mgmt_l2 import MgmtLags, gateway_owners, mgmt_lags
from .sonic_ports import SonicPorts, sonic_ports

# SONiC's DEVICE_METADATA.type for each role (the sonic-device_metadata.yang vocabulary). A
# back-end (GPU) fabric's tiers are T0/T1/T2 as SONiC counts them: the switch that faces the
# servers is the ToR, the tier above it the leaf, the top the spine.
SONIC_TYPE = {
    ("roce", 1): "BackEndToRRouter",
    ("roce", 2): "BackEndLeafRouter",
    ("roce", 3): "BackEndSpineRouter",
    ("mgmt", 1): "MgmtToRRouter",
    ("mgmt-agg", 2): "MgmtLeafRouter",
    ("mgmt-oob", 3): "MgmtToRRouter",  # the aggregation switches' out-of-band access switch (issue 9)
}


# Port roles that are not Ethernet: a switch's RJ45 serial console, cabled to a console server
# (issue 9). No LLDP crosses them.
SERIAL_ROLES = frozenset({"console"})

_NO_ASN: Any = object()  # a device without an "asn" attribute (one with "asn": None still has one)


@dataclass(slots=True)
class Interface:
    """One cabled port of a device."""

    port: int  # port index on the device
    name: str  # OS name (the catalogue's port name)
    role: str  # the port's group role: data, uplink, mgmt, ...
    peer: int  # device index of the far end
    peer_name: str
    peer_port: int
    peer_port_name: str
    link: int  # position in the Fabric's link table
    network: str  # the fabric the link belongs to
    gbps: float
    length_m: float
    address: str | None = None  # point-to-point address with prefix, e.g. 10.64.0.1/31
    peer_address: str | None = None


@dataclass(slots=True)
class BgpNeighbor:
    address: str  # the far end's address (no prefix)
    asn: int
    name: str
    local_address: str
    next_hop_self: bool = False  # an iBGP session passing on routes learned in eBGP (BGP_NEIGHBOR nhopself)


@dataclass(slots=True)
class MclagSide:
    """One peer of the MCLAG design's aggregation pair (SONiC MCLAG_DOMAIN and its keepalive VLAN)."""

    domain_id: int
    source_ip: str  # this peer's keepalive address
    peer_ip: str
    peer_link: str  # the peer link's PortChannel
    keepalive_vlan: int
    keepalive_prefixlen: int
    peer_name: str


@dataclass(slots=True)
class BorderPort:
    """A routed port toward a site router (management.border): no link of the Fabric, as the
    router is the site's, named by the blueprint."""

    port: int
    name: str  # the port's OS name
    router: str
    router_port: str | None
    address: str  # with prefix
    peer_address: str


@dataclass(slots=True)
class SwitchFacts:
    device: Device
    model: DeviceModel
    network: str  # the blueprint entry that made it (fabric name, "mgmt")
    kind: str  # roce, ib, mgmt, mgmt-agg, ethernet, other
    sonic_type: str | None
    asn: int | None
    loopback: str | None  # with prefix
    interfaces: list[Interface]
    bgp: list[BgpNeighbor]
    lossless: LosslessFacts | None  # the fabric's lossless plan (blueprint ethernet.lossless)
    ports: SonicPorts | None  # None when the catalogue has no port map for the model
    mgmt_address: str | None = None  # with prefix: on eth0 (MGMT_INTERFACE) or in-band (VLAN)
    mgmt_inband: bool = False  # the address sits on the management VLAN, not on eth0
    mgmt_gateway: str | None = None
    mgmt_vlan: int | None = None
    mgmt_design: str = "flat"  # management.design: which ports bridge (facts/mgmt_l2.py)
    # Routed design: the DHCPv4 servers (services.dhcp) this segment gateway relays its VLAN's requests to.
    dhcp_relay: list[str] = field(default_factory=list)
    # Routed design on an IPv6 management network: the DHCPv6 servers (DHCP_RELAY dhcpv6_servers).
    dhcpv6_relay: list[str] = field(default_factory=list)
    router_id: str | None = None  # BGP router ID where no IPv4 loopback gives one
    # MCLAG design: port -> its PortChannel number (facts/mgmt_l2.py mgmt_lags), this peer's domain,
    # and the management network's gateway, which both peers of the pair carry on the VLAN.
    lags: dict[int, int] = field(default_factory=dict)
    mclag: MclagSide | None = None
    gateway_interface: str | None = None  # with the network's prefix
    mtu: int = PORT_MTU  # every port's IP MTU: its Ethernet fabric's ``mtu`` (SONiC's default elsewhere)
    by_port: dict[int, Interface] = field(default_factory=dict)
    # A RoCE leaf with a host pool: the prefixes summarising its host links' /31s, which it
    # advertises for its hosts (sonic_config: STATIC_ROUTE, see there why not the connected routes).
    host_routes: list[str] = field(default_factory=list)
    # management.border: the ports toward the site routers, and the prefixes this switch announces
    # to them as discard routes (the routed design's aggregate of the rack subnets).
    border: list[BorderPort] = field(default_factory=list)
    announce: list[str] = field(default_factory=list)


class LinkEnds:
    """Every link end grouped by device and sorted by port: one numpy sort over 2 x links, then
    one device's (port, peer, peer port, link, spec, length, side) rows are slices. The spec and
    length columns are gathered into that order once, so a device reads its links' columns as
    slices instead of one random list index per end (at 10^6 links those miss the cache)."""

    def __init__(self, fabric: Fabric) -> None:
        arr = fabric.links.arrays()
        n = len(arr.a)
        dev = np.concatenate((arr.a, arr.b))
        port = np.concatenate((arr.a_port, arr.b_port))
        order = np.lexsort((port, dev))
        self.port = port[order]
        self.peer = np.concatenate((arr.b, arr.a))[order]
        self.peer_port = np.concatenate((arr.b_port, arr.a_port))[order]
        link = np.concatenate((np.arange(n), np.arange(n)))[order]
        self.link = link
        self.spec = arr.spec[link]
        self.length_m = arr.length_m[link]  # the list column's floats, unchanged
        self.is_a = np.concatenate((np.ones(n, dtype=bool), np.zeros(n, dtype=bool)))[order]
        self.start = np.searchsorted(dev[order], np.arange(len(fabric.devices) + 1))

    def of(self, device: int) -> tuple[list[int], list[int], list[int], list[int]]:
        s, e = int(self.start[device]), int(self.start[device + 1])
        return self.port[s:e].tolist(), self.peer[s:e].tolist(), self.peer_port[s:e].tolist(), self.link[s:e].tolist()

    def specs(self, device: int) -> tuple[list[int], list[float]]:
        """Each end's link spec (index into ``LinkTable.specs``) and routed length (same order as :meth:`of`)."""
        s, e = int(self.start[device]), int(self.start[device + 1])
        return self.spec[s:e].tolist(), self.length_m[s:e].tolist()

    def sides(self, device: int) -> list[bool]:
        """Whether the device is each of its links' A end (same order as :meth:`of`)."""
        s, e = int(self.start[device]), int(self.start[device + 1])
        return self.is_a[s:e].tolist()


class FabricFacts:
    """The per-device facts of one compiled blueprint (made once; switch facts on demand, kept)."""

    def __init__(self, blueprint: Blueprint, catalogue: Catalogue, fabric: Fabric) -> None:
        self.blueprint = blueprint
        self.catalogue = catalogue
        self.fabric = fabric
        self.ends = LinkEnds(fabric)
        self._switches: dict[int, SwitchFacts] = {}
        self._addresses: dict[str, tuple[list[str | None], list[str | None]] | None] = {}
        self._hosts: dict[str, HostAddresses | None] = {}
        self._lengths: list[int] | None = None
        self._names = [d.name for d in fabric.devices]
        # Each device's ASN (Device.attrs "asn"), _NO_ASN where it has none: a BGP peer's, read per link end.
        self._asns = [d.attrs.get("asn", _NO_ASN) if d.attrs else _NO_ASN for d in fabric.devices]
        self._port_names = [fabric.layouts[d.model].names for d in fabric.devices]
        self._roles = [fabric.layouts[d.model].port_roles for d in fabric.devices]
        self.mgmt: MgmtPlan | None = None
        self._oob_index: dict[str, int] = {}
        self.mgmt_design = blueprint.management.design if blueprint.management is not None else "flat"
        m = blueprint.management
        if m is not None and m.addressing is not None and m.switch in fabric.layouts:
            self.mgmt = mgmt_plan(m.addressing, len(fabric.layouts[m.switch].ports_of("data")), fabric)
            self._oob_index = {name: j for j, name in enumerate(oob_switches(fabric.facts))}
        # A shared management switch's address block (and routed ASN) is its group's first rack's,
        # wherever the switch itself stands; any other rack switch's is its own rack's.
        mgmt_facts = management_of(fabric.facts)
        self._mgmt_blocks = dict(mgmt_facts.get("blocks", {})) if mgmt_facts is not None else {}
        # Routed management: the aggregation switches in order, and their rack-facing ports (the
        # uplink slot of a link is its aggregation port's position x switches + the switch's).
        self._aggs = {d.index: j for j, d in enumerate(d for d in fabric.devices if d.role == "mgmt-agg")}
        self._agg_ports: dict[str, dict[int, int]] = {}
        self._lags: MgmtLags | None = None
        self._gateway_owners = set(gateway_owners(fabric, self.mgmt_design))
        self._border: dict[str, list[BorderLinkFacts]] = {}
        for link in mgmt_facts.get("border", []) if mgmt_facts is not None else []:
            self._border.setdefault(link["switch"], []).append(link)

    @property
    def lags(self) -> MgmtLags:
        """The management network's PortChannels (MCLAG design; none otherwise), worked out once."""
        if self._lags is None:
            self._lags = mgmt_lags(self.fabric, self.mgmt_design)
        return self._lags

    # -- which devices --------------------------------------------------------------------
    def switches(self, transport: str | None = None) -> list[int]:
        """Device indices of every switch (of one transport), in Fabric order."""
        models = self.fabric.models
        return [
            d.index
            for d in self.fabric.devices
            if models[d.model].kind == "switch"
            and (transport is None or models[d.model].transport == transport)
            and d.role not in SITE_ROLES  # the site's routers: snc configures none
        ]

    # -- one switch -----------------------------------------------------------------------
    def switch(self, device: int) -> SwitchFacts:
        found = self._switches.get(device)
        if found is None:
            found = self._switches[device] = self._make(device)
        return found

    def _link_addresses(self, network: str) -> tuple[list[str | None], list[str | None]] | None:
        """(A-end, B-end) address of every link of the table (None off ``network`` or unnumbered):
        switch links from the point-to-point pool, host links from the host pool, worked out for
        all of the network's links at once, the first time a switch of it asks."""
        if network not in self._addresses:
            found: tuple[list[str | None], list[str | None]] | None = None
            if ethernet_of(self.fabric.facts.get(network)) is not None:
                t = self.fabric.links
                positions = t.indices_of(network)
                a_ends: list[str | None] = [None] * len(t)
                b_ends: list[str | None] = [None] * len(t)
                found = (a_ends, b_ends)
                for addresses in (LinkAddresses(self.fabric, network), self.host_addresses(network)):
                    if addresses is None or not addresses.numbered:
                        continue
                    a_side, b_side = addresses.bulk(positions)
                    for i, x, y in zip(positions, a_side, b_side, strict=True):
                        if x is not None:
                            a_ends[i], b_ends[i] = x, y
            self._addresses[network] = found
        return self._addresses[network]

    def host_addresses(self, network: str) -> HostAddresses | None:
        """The host-link addresses of an Ethernet fat tree (None for any other network)."""
        found = self._hosts.get(network)
        if found is None and network not in self._hosts:
            has_plan = ethernet_of(self.fabric.facts.get(network)) is not None
            found = HostAddresses(self.fabric, network) if has_plan else None
            self._hosts[network] = found
        return found

    def _make(self, index: int) -> SwitchFacts:
        f = self.fabric
        dev = f.devices[index]
        model = f.models[dev.model]
        ethernet = ethernet_of(f.facts.get(dev.group))
        kind = _kind(dev, model, ethernet is not None)
        attrs = dev.attrs or {}
        port_map = self.catalogue.port_maps.get(dev.model)
        ports = sonic_ports(f.layouts[dev.model], port_map) if port_map is not None else None

        specs = f.links.specs
        spec_fabric = [s.fabric for s in specs]
        spec_gbps = [s.gbps for s in specs]
        names, port_names = self._names, self._port_names
        own_names, own_roles = port_names[index], self._roles[index]
        addresses = self._link_addresses(dev.group) if ethernet is not None else None
        bgp: list[BgpNeighbor] = []
        ends = self.ends
        ports_, peers, peer_ports, links = ends.of(index)
        spec_of, lengths = ends.specs(index)
        networks = [spec_fabric[s] for s in spec_of]
        # The addresses of the ends on this switch's own network, as columns (None elsewhere or
        # unnumbered): each end's own address and the far end's, by which end of the link it is.
        own: list[str | None]
        far: list[str | None]
        if addresses is not None:
            group = dev.group
            a_ends, b_ends = addresses
            own = [
                (a_ends[k] if is_a else b_ends[k]) if n == group else None
                for k, is_a, n in zip(links, ends.sides(index), networks, strict=True)
            ]
            far = [
                None if o is None else (b_ends[k] if is_a else a_ends[k])
                for o, k, is_a in zip(own, links, ends.sides(index), strict=True)
            ]
            asns = self._asns
            bgp = [
                BgpNeighbor(y.split("/")[0], asns[q], names[q], x.split("/")[0])  # type: ignore[union-attr]
                for x, y, q in zip(own, far, peers, strict=True)
                if x is not None and asns[q] is not _NO_ASN
            ]
        else:
            own = far = [None] * len(links)
        # Column by column (a comprehension per field, one map to the dataclass) rather than one
        # loop body per end: the same values, a third of the interpreter's work per interface.
        interfaces = list(
            map(
                Interface,
                ports_,
                [own_names[p] for p in ports_],
                [own_roles[p] for p in ports_],
                peers,
                [names[p] for p in peers],
                peer_ports,
                [port_names[p][q] for p, q in zip(peers, peer_ports, strict=True)],
                links,
                networks,
                [spec_gbps[s] for s in spec_of],
                lengths,
                own,
                far,
            )
        )
        out = SwitchFacts(
            device=dev,
            model=model,
            network=dev.group,
            kind=kind,
            sonic_type=SONIC_TYPE.get((kind, dev.tier)),
            asn=attrs.get("asn"),
            loopback=attrs.get("loopback"),
            interfaces=interfaces,
            bgp=bgp,
            lossless=ethernet["lossless"] if ethernet is not None else None,
            ports=ports,
            by_port={i.port: i for i in interfaces},
            mtu=ethernet["mtu"] if ethernet is not None else PORT_MTU,
        )
        if out.loopback and ":" in out.loopback:
            # BGP's router ID is 32 bits (RFC 6286): an IPv6 loopback's low 32 bits, unique as the
            # loopbacks are (they count from a pool's ends, far fewer than 2^32 of them).
            low = int(ipaddress.IPv6Interface(out.loopback).ip) & 0xFFFFFFFF
            out.router_id = str(ipaddress.IPv4Address(low))
        if ethernet is not None and dev.role == "leaf":
            hosts = self.host_addresses(dev.group)
            out.host_routes = hosts.summary(index) if hosts is not None else []
        self._management(out)
        return out

    def _management(self, sw: SwitchFacts) -> None:
        """The switch's management address: on eth0 when its management port is cabled to a rack
        switch (or, for an aggregation switch, to an out-of-band switch), in-band on the management
        VLAN for a rack or out-of-band switch itself."""
        sw.mgmt_design = self.mgmt_design
        if self.mgmt_design == "mclag" and sw.kind in ("mgmt", "mgmt-agg"):
            self._mclag(sw)
        plan = self.mgmt
        if plan is None:
            return
        if sw.device.index in self._gateway_owners:
            # Flat: the first aggregation switch is the one VLAN's gateway (one address, one owner).
            # MCLAG: both peers carry it, the same VLAN interface address on both with the router
            # MAC synchronised over ICCP (SONiC MCLAG HLD, sonic-net/SONiC doc/mclag/
            # MCLAG_Enhancements_HLD.md: "L3 interface ... same IP address configured on both
            # peers"; MCLAG_UNIQUE_IP only for the keepalive VLAN), so a host keeps its gateway
            # whichever peer its PortChannel hashes to. Each gateway relays the VLAN's DHCP to
            # the servers the broadcast cannot reach (dhcp_relay_servers): giaddr is the gateway
            # address on both peers, the address Kea selects the subnet by.
            sw.gateway_interface = f"{plan.gateway}/{plan.prefixlen}"
            sw.dhcp_relay, sw.dhcpv6_relay = self.dhcp_relay_servers(), self.dhcpv6_relay_servers()
        sw.mgmt_gateway, sw.mgmt_vlan = plan.gateway, plan.vlan
        if plan.routed and sw.kind in ("mgmt", "mgmt-agg"):
            self._routed_uplinks(sw, plan)
        if sw.kind == "mgmt-agg" and sw.device.name in self._border:
            self._border_ports(sw, plan)
        if sw.mclag is not None and self._border:
            self._mclag_ibgp(sw, plan)
        if sw.kind == "mgmt" and sw.device.rack >= 0:
            sw.mgmt_address, sw.mgmt_inband = plan.with_prefix(plan.switch(self._block(sw.device))), True
            if plan.routed:  # a segment gateway (flat, MCLAG: the rack switch only bridges)
                sw.dhcp_relay, sw.dhcpv6_relay = self.dhcp_relay_servers(), self.dhcpv6_relay_servers()
            return
        if sw.kind == "mgmt-oob" and sw.device.name in self._oob_index:
            sw.mgmt_address, sw.mgmt_inband = plan.with_prefix(plan.oob_switch(self._oob_index[sw.device.name])), True
            if plan.routed:
                sw.dhcp_relay, sw.dhcpv6_relay = self.dhcp_relay_servers(), self.dhcpv6_relay_servers()
            return
        for iface in sw.interfaces:
            if iface.role == "mgmt":
                address = self.mgmt_address_of(iface.peer, iface.peer_port)
                if address is not None:
                    sw.mgmt_address = plan.with_prefix(address)
                    sw.mgmt_gateway = self.mgmt_gateway_of(iface.peer)
                return

    def _mclag(self, sw: SwitchFacts) -> None:
        """The switch's PortChannel members and, on the aggregation pair, its MCLAG peer side."""
        lags = self.lags
        index = sw.device.index
        sw.lags = {i.port: lags.of_port[(index, i.port)] for i in sw.interfaces if (index, i.port) in lags.of_port}
        m = self.blueprint.management
        if lags.pair is None or index not in lags.pair or lags.peer_link is None or m is None:
            return
        settings = m.mclag or Mclag()
        net = ipaddress.ip_network(settings.keepalive)
        first = index == lags.pair[0]
        own, far = (net[0], net[1]) if first else (net[1], net[0])
        sw.mclag = MclagSide(
            domain_id=settings.domain_id,
            source_ip=str(own),
            peer_ip=str(far),
            peer_link=f"PortChannel{lags.peer_link}",
            keepalive_vlan=settings.keepalive_vlan,
            keepalive_prefixlen=net.prefixlen,
            peer_name=self._names[lags.pair[1] if first else lags.pair[0]],
        )

    def _routed_uplinks(self, sw: SwitchFacts, plan: MgmtPlan) -> None:
        """Routed management: every rack-switch uplink a /31 from the plan by its uplink slot, and an
        eBGP session over it (the aggregation layer one ASN, each rack its own; RFC 7938's pattern)."""
        f = self.fabric
        rack_side = sw.kind == "mgmt"
        if rack_side:
            if sw.device.rack < 0:
                return
            sw.asn = plan.rack_asn(self._block(sw.device))
            block = self._block(sw.device)
            sw.router_id = plan.switch(block) if plan.network.version == 4 else plan.router_id(rack=block)
        else:
            sw.asn = plan.asn
            if plan.network.version == 6:
                sw.router_id = plan.router_id(aggregation=self._aggs[sw.device.index])
        for iface in sw.interfaces:
            agg, agg_port = (iface.peer, iface.peer_port) if rack_side else (sw.device.index, iface.port)
            rack_switch = sw.device if rack_side else f.devices[iface.peer]
            if agg not in self._aggs or rack_switch.role != "mgmt" or rack_switch.rack < 0 or iface.role == "mgmt":
                continue
            ports = self._agg_ports.get(f.devices[agg].model)
            if ports is None:
                data = f.layouts[f.devices[agg].model].ports_of("data")
                ports = self._agg_ports[f.devices[agg].model] = {p: n for n, p in enumerate(data)}
            if agg_port not in ports:
                continue
            agg_end, rack_end = plan.link(ports[agg_port] * len(self._aggs) + self._aggs[agg])
            own, far = (rack_end, agg_end) if rack_side else (agg_end, rack_end)
            iface.address, iface.peer_address = own, far
            peer_asn = plan.asn if rack_side else plan.rack_asn(self._block(rack_switch))
            sw.bgp.append(BgpNeighbor(far.split("/")[0], peer_asn, iface.peer_name, own.split("/")[0]))
            if sw.router_id is None and plan.network.version == 4:
                sw.router_id = own.split("/")[0]  # an aggregation switch's first /31: unique, stable

    def _border_ports(self, sw: SwitchFacts, plan: MgmtPlan) -> None:
        """management.border on an aggregation switch: its routed ports to the site routers, an
        eBGP session over each (the aggregation layer's ASN to the router's), and what it
        announces. Both directions are SONiC's defaults for a BGP_NEIGHBOR: bgpcfgd puts it in
        peer group PEER_V4 (PEER_V6) whose route maps FROM_BGP_PEER_V4 / TO_BGP_PEER_V4 permit
        every route (docker-fpm-frr bgpd templates, general/policies.conf.j2), so the switch
        learns the site's default route and passes on what it has. The management network goes as
        one aggregate: in the flat and MCLAG designs it is the gateway's VLAN_INTERFACE prefix,
        which bgpd.main.conf.j2 turns into a ``network`` statement; in the routed design (rack
        subnets learned over BGP) a discard route with ``advertise`` (STATIC_ROUTE, as a leaf's
        host summary: RFC 4632's aggregate to null, the more specifics still forwarded)."""
        names = self._port_names[sw.device.index]
        m = self.blueprint.management
        assert m is not None and m.border is not None
        if sw.asn is None:
            sw.asn = plan.asn
        for link in self._border[sw.device.name]:
            own, peer = link["address"], link["peer"]
            sw.border.append(BorderPort(link["port"], names[link["port"]], link["router"], link.get("peer_port"), own, peer))
            sw.bgp.append(BgpNeighbor(peer, link["asn"], link["router"], own.split("/")[0]))
            if sw.router_id is None:
                # The switch's first border address (unique, stable); an IPv6 one gives no ID.
                sw.router_id = own.split("/")[0] if ":" not in own else plan.router_id(aggregation=self._aggs[sw.device.index])
        connected = {str(ipaddress.ip_interface(sw.gateway_interface).network)} if sw.gateway_interface else set()
        announce = m.border.announce or [str(plan.network)]
        sw.announce = [str(ipaddress.ip_network(p)) for p in announce if str(ipaddress.ip_network(p)) not in connected]

    def _mclag_ibgp(self, sw: SwitchFacts, plan: MgmtPlan) -> None:
        """With a border, the MCLAG peers (one ASN) also peer with each other in iBGP over their
        keepalive VLAN, next hop self: a peer whose border links are down (or that has none,
        ``border.switches`` naming one peer) still routes the gateway's traffic to the site through
        the other, since a host's PortChannel may hash its packets to either peer."""
        m = sw.mclag
        assert m is not None
        if sw.asn is None:
            sw.asn = plan.asn
        sw.bgp.append(BgpNeighbor(m.peer_ip, plan.asn, m.peer_name, m.source_ip, next_hop_self=True))
        if sw.router_id is None:
            sw.router_id = m.source_ip

    def dhcp_relay_servers(self) -> list[str]:
        """The DHCPv4 servers a segment gateway relays to: in the routed design every rack and OOB
        switch routes its own segment, so a server elsewhere is reached only through a relay; in
        the flat and MCLAG designs the one VLAN reaches a server inside the management network by
        broadcast (a relay there would answer twice), so its gateway relays to the servers outside
        it (services.networks, beyond the border)."""
        return self._relay_servers(4)

    def dhcpv6_relay_servers(self) -> list[str]:
        """The DHCPv6 servers a segment gateway relays to: as :meth:`dhcp_relay_servers`, on an IPv6
        management network (SONiC's dhcp6relay, one per VLAN of the DHCP_RELAY table)."""
        return self._relay_servers(6)

    def _relay_servers(self, version: int) -> list[str]:
        s = self.blueprint.services
        plan = self.mgmt
        if s is None or plan is None or plan.network.version != version:
            return []
        servers = [a for a in s.dhcp if ipaddress.ip_address(a).version == version]
        if plan.routed:
            return servers
        return [a for a in servers if ipaddress.ip_address(a) not in plan.network]

    def relay_address_of(self, switch: int) -> str | None:
        """The address a relayed request from a device on ``switch``'s access ports carries as its
        relay agent's (DHCPv4 giaddr, DHCPv6 link-address), or None where no switch relays it: a
        routed rack or OOB switch's own VLAN address; in the flat and MCLAG designs the gateway
        address, which every gateway switch relays from (on the MCLAG pair, both)."""
        sw = self.switch(switch)
        if sw.dhcp_relay or sw.dhcpv6_relay:
            return sw.mgmt_address.split("/")[0] if sw.mgmt_address else None
        for owner in sorted(self._gateway_owners):
            gw = self.switch(owner)
            if (gw.dhcp_relay or gw.dhcpv6_relay) and gw.gateway_interface:
                return gw.gateway_interface.split("/")[0]
        return None

    def relay_circuit_id(self, switch: int, port: int) -> str | None:
        """The option 82 circuit ID a relaying SONiC switch inserts for a request that came in on
        ``port``: SONiC's dhcrelay runs with ``-a %h:%p`` and its port name -> alias map
        (docker-dhcp-relay's dhcpv4-relay.agents.j2 and port-name-alias-map.txt.j2; isc-dhcp
        patches 0002-0004), i.e. ``<DEVICE_METADATA hostname>:<PORT alias>`` of the bridge
        member the client is on. None where the switch does not relay or has no port map."""
        sw = self.switch(switch)
        if not sw.dhcp_relay or sw.ports is None:
            return None
        p = sw.ports.ports[port]
        return None if p is None else f"{sw.device.name}:{p.alias or p.name}"

    def _block(self, sw: Device) -> int:
        """The rack (site index) whose address block a rack management switch serves."""
        return self._mgmt_blocks.get(sw.name, sw.rack)

    def mgmt_gateway_of(self, switch: int) -> str | None:
        """The default gateway of a device cabled to an access port of ``switch``."""
        plan = self.mgmt
        sw = self.fabric.devices[switch]
        if plan is None:
            return None
        if sw.role == "mgmt-oob":
            oob = self._oob_index.get(sw.name)
            return plan.gateway if oob is None else plan.gateway_of_oob(oob)
        return plan.gateway_of_rack(self._block(sw)) if sw.role == "mgmt" and sw.rack >= 0 else plan.gateway

    def mgmt_address_of(self, switch: int, access_port: int) -> str | None:
        """The address of whatever is cabled to ``access_port`` of a rack management switch (or of an
        out-of-band switch, which takes the aggregation switches' management ports)."""
        plan = self.mgmt
        sw = self.fabric.devices[switch]
        if plan is None or sw.role not in ("mgmt", "mgmt-oob"):
            return None
        access = self.fabric.layouts[sw.model].ports_of("data")
        if access_port not in access:
            return None
        if sw.role == "mgmt-oob":
            oob = self._oob_index.get(sw.name)
            return None if oob is None else plan.oob_device(oob, access.index(access_port))
        if sw.rack < 0:
            return None
        return plan.device(self._block(sw), access.index(access_port))

    # -- cables ---------------------------------------------------------------------------
    def cable_id(self, link: int) -> str:
        return self.fabric.links.id_of(link)

    def cable_length_m(self, link: int) -> int:
        """The cable's routed length in whole metres, rounded up (SONiC's CABLE_LENGTH takes '5m')."""
        return self.cable_lengths_m()[link]

    def cable_lengths_m(self) -> list[int]:
        """:meth:`cable_length_m` of every link, worked out at once (numpy) on first use."""
        if self._lengths is None:
            length = self.fabric.links.arrays().length_m
            self._lengths = np.maximum(1, np.ceil(length - 1e-9)).astype(np.int64).tolist()
        return self._lengths


def _kind(dev: Device, model: DeviceModel, roce: bool) -> str:
    if model.kind != "switch":
        return "other"
    if dev.role in ("mgmt", "mgmt-agg", "mgmt-oob"):
        return dev.role
    if model.transport == "infiniband":
        return "ib"
    if model.transport == "ethernet":
        return "roce" if roce else "ethernet"
    return "other"


def mgmt_plan(addressing: MgmtAddressing, access: int, fabric: Fabric) -> MgmtPlan:
    """The management address plan of a built fabric, for a rack switch of ``access`` access ports
    (the OOB switches, the design and the uplink slots from what the management builder recorded)."""
    m = management_of(fabric.facts)
    if m is None:
        return MgmtPlan(addressing, access)
    return MgmtPlan(addressing, access, len(m["oob_switches"]), m["design"] == "routed", m["uplink_slots"])


def facts_for(ctx: Any) -> FabricFacts:
    """The facts of a render context, made on first use and kept on the context for the next renderer."""
    memo = ctx.memo
    found = memo.get("device_facts")
    if found is None:
        found = memo["device_facts"] = FabricFacts(ctx.blueprint, ctx.catalogue, ctx.fabric)
    return found
