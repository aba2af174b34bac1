"""InfiniBand GUIDs keyed by stable coordinates: the plan's names for every switch and HCA port.

Real GUIDs are burnt into the hardware; the plan needs its own to write the subnet manager's
files (root and compute-node GUID lists, partitions), to simulate the fabric (ibsim takes the
GUIDs of a topology file) and to match a discovered fabric back to the plan. A GUID here is a
pure function of where a device sits in the blueprint, so growing a fabric changes none that
exist, and it reads back to its device at a glance:

    bits 63-40  0x02534e, a locally administered EUI-64 company ID (bit 1 of the first octet
                set: no vendor's OUI, so a planned GUID is never mistaken for a real one)
    bit  39     1 switch, 0 channel adapter (HCA)
    switch:     bits 32-38 the fabric's position in the blueprint's ``scaleout`` list, bits 28-31
                the role (leaf 1, spine 2, core 3, router 4, other 15), bits 8-27 the switch's
                rank among its fabric's switches of that role (builders make them in coordinate
                order: SU and leaf, pod and plane, group and router), bits 0-7 zero. The port
                GUID equals the node GUID (switch port 0).
    HCA:        bits 37-38 the blueprint section that made the device (nodes 0, scaleup 1,
                cxl 2), bits 27-36 the entry's position in it (a CXL pool's host entry j of pool
                i: 16 i + j), bits 6-26 the device's rank in its entry, bits 1-5 the data port
                (one single-port HCA per data port, as on an HGX node whose mlx5_0..mlx5_7 are
                separate adapters), bit 0: 0 for the node (and system image) GUID, 1 for port 1.
"""

from __future__ import annotations

from ..fabric import Fabric

PREFIX = 0x02534E << 40
SWITCH = 1 << 39
ROLE_CODES = {"leaf": 1, "spine": 2, "core": 3, "router": 4}
OTHER_ROLE = 15
SECTIONS = {"nodes": 0, "scaleup": 1, "cxl": 2}
_BITS = {"fabric": 7, "switch rank": 20, "entry": 10, "HCA rank": 21, "data port": 5}


class GuidPlanError(ValueError):
    """A coordinate does not fit its field (more than 128 fabrics, 2^21 devices in one entry, ...)."""


def _fits(what: str, value: int) -> int:
    limit = 1 << _BITS[what]
    if not 0 <= value < limit:
        raise GuidPlanError(f"the GUID plan holds at most {limit:,} of {what}; this blueprint needs {value + 1:,}")
    return value


def _entry(origin: tuple) -> tuple[int, int]:
    """(section, position) of the blueprint entry that made a device, from its origin path."""
    section = SECTIONS.get(origin[0] if origin else "", 3)
    position = origin[1] if len(origin) > 1 and isinstance(origin[1], int) else 0
    if section == 2 and len(origin) > 3 and origin[2] == "hosts" and isinstance(origin[3], int):
        position = position * 16 + min(origin[3], 15)
    return section, position


class GuidPlan:
    """Node and port GUIDs of a Fabric's InfiniBand devices (ranks worked out once, in device order)."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        rank_in: dict[tuple, int] = {}
        self._base: list[int] = []
        models = fabric.models
        for d in fabric.devices:
            if models[d.model].kind == "switch":
                _, position = _entry(d.origin)
                key: tuple = ("switch", position, d.role)
                rank = rank_in.get(key, 0)
                rank_in[key] = rank + 1
                role = ROLE_CODES.get(d.role, OTHER_ROLE)
                base = SWITCH | _fits("fabric", position) << 32 | role << 28 | _fits("switch rank", rank) << 8
            else:
                section, position = _entry(d.origin)
                key = ("ca", section, position)
                rank = rank_in.get(key, 0)
                rank_in[key] = rank + 1
                base = section << 37 | _fits("entry", position) << 27 | _fits("HCA rank", rank) << 6
            self._base.append(PREFIX | base)

    def bases(self) -> list[int]:
        """Per device (in Fabric order) the GUID its node GUIDs are made from: a switch's node GUID,
        an HCA's less its data port bits."""
        return list(self._base)

    def switch_guid(self, device: int) -> int:
        return self._base[device]

    def ca_guid(self, device: int, data_port: int) -> int:
        """Node GUID of the HCA behind a device's ``data_port``-th data port (0-based)."""
        return self._base[device] | _fits("data port", data_port) << 1

    @staticmethod
    def port_guid(node_guid: int, is_switch: bool) -> int:
        return node_guid if is_switch else node_guid | 1
