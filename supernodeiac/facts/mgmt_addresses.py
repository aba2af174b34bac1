"""Out-of-band management addresses, keyed by stable coordinates (rack site index, access port).

One flat network (one VLAN) split into blocks of ``per_rack`` addresses. Block 0 keeps the
network address and the gateway; the rack at site index r owns block r + 1, in which the device
on access port k of the rack's management switch takes address k and the switch itself (its
in-band VLAN interface) the block's last-but-one address. A device keeps its address as long as
it keeps its rack and its rack-switch port, which the management builder gives bottom-up by U.

The aggregation switches' own management ports hang off out-of-band switches (``mgmt-oob-NN``,
issue 9) rather than a rack switch: OOB switch j owns the network's j-th block from the top, so
neither more racks nor more OOB switches move an address already given.
"""

from __future__ import annotations

import ipaddress

from ..model.management import MgmtAddressing
from .link_addresses import ip_text


def _next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


class MgmtPlan:
    def __init__(self, addressing: MgmtAddressing, access_ports: int, oob_switches: int = 0) -> None:
        net = ipaddress.ip_network(addressing.network)
        self.network = net
        self.access_ports = access_ports
        self.per_rack = addressing.per_rack or _next_pow2(access_ports + 2)
        self.vlan = addressing.vlan
        self.gateway = addressing.gateway or str(net.network_address + 1)
        self.prefixlen = net.prefixlen
        self._base = int(net.network_address)
        self._version = net.version
        self.blocks = net.num_addresses // self.per_rack
        self.oob_switches = oob_switches
        # Racks whose whole block lies inside the network (beside block 0 and the OOB switches' blocks).
        self.rack_capacity = max(self.blocks - 1 - oob_switches, 0)

    def device(self, rack: int, access_port: int) -> str:
        """The address of the device on access port ``access_port`` (0-based) of rack ``rack``'s switch."""
        return ip_text(self._version, self._base + (rack + 1) * self.per_rack + access_port)

    def switch(self, rack: int) -> str:
        """The rack switch's own (in-band) address."""
        return ip_text(self._version, self._base + (rack + 2) * self.per_rack - 2)

    def oob_device(self, oob: int, access_port: int) -> str:
        """The address of the device on access port ``access_port`` of OOB switch ``oob`` (0-based)."""
        return ip_text(self._version, self._base + (self.blocks - 1 - oob) * self.per_rack + access_port)

    def oob_switch(self, oob: int) -> str:
        """OOB switch ``oob``'s own (in-band) address: its block's last-but-one, as a rack switch's."""
        return ip_text(self._version, self._base + (self.blocks - oob) * self.per_rack - 2)

    def with_prefix(self, address: str) -> str:
        return f"{address}/{self.prefixlen}"
