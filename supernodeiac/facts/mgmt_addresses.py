"""Out-of-band management addresses, keyed by stable coordinates (rack site index, access port).

One flat network (one VLAN) split into blocks of ``per_rack`` addresses. Block 0 keeps the
network address and the gateway; the rack at site index r owns block r + 1, in which the device
on access port k of the rack's management switch takes address k and the switch itself (its
in-band VLAN interface) the block's last-but-one address. A device keeps its address as long as
it keeps its rack and its rack-switch port, which the management builder gives bottom-up by U.

The aggregation switches' own management ports hang off out-of-band switches (``mgmt-oob-NN``)
rather than a rack switch: OOB switch j owns the network's j-th block from the top, so
neither more racks nor more OOB switches move an address already given.

Routed design: every block is a subnet of its own (``per_rack`` a power of two), the rack switch's
address is the subnet's gateway and the device on access port k takes address k + 1 (address 0 is
the subnet's). The rack switches' uplinks are /31s (/127s) numbered from the top of the network
down, just below the OOB switches' blocks: uplink slot s (the slot the builder gives it by planned
rack position) takes the s-th pair from the top, so racks added within the plan, or rows
appended, move no link address.
"""

from __future__ import annotations

import ipaddress

from ..model.management import MgmtAddressing
from .link_addresses import ip_text


def _next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


class MgmtPlan:
    def __init__(
        self, addressing: MgmtAddressing, access_ports: int, oob_switches: int = 0, routed: bool = False, uplink_slots: int = 0
    ) -> None:
        net = ipaddress.ip_network(addressing.network)
        self.network = net
        self.access_ports = access_ports
        self.routed = routed
        # Routed: each block is a subnet, so its network, gateway and broadcast addresses are not the devices'.
        self.reserved = 3 if routed else 2
        self.per_rack = addressing.per_rack or _next_pow2(access_ports + self.reserved)
        self.asn = addressing.asn
        self.vlan = addressing.vlan
        self.gateway = addressing.gateway or str(net.network_address + 1)
        self.prefixlen = net.prefixlen
        self._base = int(net.network_address)
        self._version = net.version
        self.blocks = net.num_addresses // self.per_rack
        self.oob_switches = oob_switches
        self.uplink_slots = uplink_slots if routed else 0
        self._first = 1 if routed else 0  # a routed block's address 0 is its subnet's
        self.link_blocks = -(-2 * self.uplink_slots // self.per_rack) if self.per_rack else 0
        # Racks whose whole block lies inside the network (beside block 0, the OOB switches' blocks
        # and, routed, the uplinks' /31s).
        self.rack_capacity = max(self.blocks - 1 - oob_switches - self.link_blocks, 0)
        self.block_prefixlen = net.max_prefixlen - max(self.per_rack - 1, 0).bit_length()
        self._links_top = self._base + (self.blocks - oob_switches) * self.per_rack

    def device(self, rack: int, access_port: int) -> str:
        """The address of the device on access port ``access_port`` (0-based) of rack ``rack``'s switch."""
        return ip_text(self._version, self._base + (rack + 1) * self.per_rack + access_port + self._first)

    def gateway_of_rack(self, rack: int) -> str:
        """The default gateway of the rack's devices: the network's (flat) or the rack switch (routed)."""
        return self.switch(rack) if self.routed else self.gateway

    def gateway_of_oob(self, oob: int) -> str:
        return self.oob_switch(oob) if self.routed else self.gateway

    def device_prefix(self, address: str) -> str:
        """An access device's address with the prefix of its segment (the rack's block when routed)."""
        return f"{address}/{self.block_prefixlen if self.routed else self.prefixlen}"

    def link(self, slot: int) -> tuple[str, str]:
        """(aggregation end, rack-switch end) of uplink slot ``slot``, with the /31 (/127) prefix."""
        low = self._links_top - 2 * (slot + 1)
        plen = self.network.max_prefixlen - 1
        return f"{ip_text(self._version, low)}/{plen}", f"{ip_text(self._version, low + 1)}/{plen}"

    def rack_asn(self, rack: int) -> int:
        return self.asn + 1 + rack

    def switch(self, rack: int) -> str:
        """The rack switch's own (in-band) address."""
        return ip_text(self._version, self._base + (rack + 2) * self.per_rack - 2)

    def oob_device(self, oob: int, access_port: int) -> str:
        """The address of the device on access port ``access_port`` of OOB switch ``oob`` (0-based)."""
        return ip_text(self._version, self._base + (self.blocks - 1 - oob) * self.per_rack + access_port + self._first)

    def oob_switch(self, oob: int) -> str:
        """OOB switch ``oob``'s own (in-band) address: its block's last-but-one, as a rack switch's."""
        return ip_text(self._version, self._base + (self.blocks - oob) * self.per_rack - 2)

    def router_id(self, aggregation: int | None = None, rack: int | None = None) -> str | None:
        """The BGP router ID of a management switch where its addresses give none: None for an
        IPv4 network (a switch's own IPv4 address is its ID), else a value from its stable
        coordinates in 240.0.0.0/4 (RFC 6890's reserved block: no IPv4 pool, so no IPv4 loopback
        or address of the design, takes it). BGP needs only a unique nonzero 32 bits (RFC 6286),
        which FRR must have to open a session on a switch without IPv4 addresses: the rack
        switch serving rack site index r is 241.0.0.0 + r, aggregation switch a (0-based, in
        device order) 242.0.0.0 + a; so no two management switches share one, and a rack keeps
        its switch's ID as long as it keeps its site index."""
        if self._version == 4:
            return None
        if rack is not None:
            assert 0 <= rack < 1 << 24, rack
            return str(ipaddress.IPv4Address((241 << 24) + rack))
        assert aggregation is not None and 0 <= aggregation < 1 << 24, aggregation
        return str(ipaddress.IPv4Address((242 << 24) + aggregation))

    def static_problem(self, address: str, racks: int) -> str | None:
        """Why a server given ``address`` statically (the provisioning server) would clash with the
        plan or sit on no segment of a site of ``racks`` rack positions; None where the address is
        free on a segment. Flat: any address no device, switch or gateway takes. Routed: only a rack's
        subnet is routed (block 0, unused rack positions, the uplinks' /31s and the OOB switches'
        blocks are no segment), at an address above its access ports and below its switch."""
        off = int(ipaddress.ip_address(address)) - self._base
        block, at = divmod(off, self.per_rack)
        if not 0 <= block < self.blocks:
            return "outside the management network's blocks"
        if block >= self.blocks - self.oob_switches:
            return f"in the block of out-of-band switch {self.blocks - block} (its switch and access ports)"
        if self.routed:
            if block == 0:
                return "in block 0, which no switch routes in the routed design (each rack's block is its own subnet)"
            if block > racks:
                return f"in the block of rack position {block - 1}, which the site does not have: no switch routes it"
            if at == 0 or at == self.per_rack - 1:
                return f"the network or broadcast address of rack position {block - 1}'s subnet"
        elif block == 0:
            if at == 0 or address == self.gateway:
                return "the network address" if at == 0 else "the flat network's gateway (a switch's interface)"
            return None
        if at == self.per_rack - 2:
            return f"rack position {block - 1}'s management switch's own address"
        if self._first <= at < self._first + self.access_ports:
            return f"the address of access port {at - self._first + 1} of rack position {block - 1}'s management switch"
        return None

    def with_prefix(self, address: str) -> str:
        """A switch's own in-band address with its segment's prefix (the block's when routed)."""
        return self.device_prefix(address)
