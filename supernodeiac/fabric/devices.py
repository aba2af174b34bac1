"""Racks, devices and their port layouts: the parts of a Fabric a link's two ends name. A
:class:`PortLayout` is per device model: its ports in cages, OS and printed names."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ..catalog.types import DeviceModel, PortGroup

Coords = tuple[tuple[str, Any], ...]

# Roles of devices the site owns and runs (management.border's site routers): they stand in racks,
# take rack space and power and end cables, so the Fabric holds them, but snc orders none (BOM)
# and configures none (SONiC, LLDP expectations, provisioning).
SITE_ROLES = frozenset({"site-router"})


@dataclass(slots=True)
class Rack:
    index: int
    name: str
    row: str
    row_index: int  # position of the row across the hall (0-based)
    position: int  # 1-based position along the row
    x_m: float  # centre along the row
    y_m: float  # centre across rows


@dataclass(slots=True)
class Device:
    index: int
    name: str
    role: str  # node, leaf, spine, core, mgmt, mgmt-agg, compute-board, switch-board, ...
    model: str  # catalogue key
    group: str  # blueprint entry that made it (node group, domain, fabric name)
    rack: int  # index into Fabric.racks, -1 when unplaced
    u: int  # lowest rack unit occupied (1-based), 0 when unplaced
    height_u: int
    coords: Coords = ()  # stable coordinates (su, rail, pod, plane, board, ...)
    origin: tuple = ()  # blueprint path of the entry that made it, for findings
    tier: int = 0  # 0 endpoints; 1 leaf; 2 spine; 3 core (Clos); other fabrics document theirs
    attrs: dict[str, Any] | None = None  # extras a later stage needs (addresses, ASN), None when empty
    chassis: int = -1  # the chassis device this board sits in (OEX), -1 when it stands in the rack itself
    slot: str = ""  # its slot in that chassis: F01.. (front, horizontal), R01.. (rear, vertical)

    def coord(self, key: str, default: Any = None) -> Any:
        for k, v in self.coords:
            if k == key:
                return v
        return default


@dataclass(slots=True)
class PortSlot:
    """Where a device port index falls: its group and position in that group."""

    group: PortGroup
    offset: int  # index within the group


@dataclass(frozen=True, slots=True)
class Cage:
    """One cage of a device: a receptacle that takes exactly one plug (a cable end or a module).

    ``index`` numbers a device's cages 0.. in catalogue group order (what the Fabric keys cages
    by); ``number`` is the cage's number as printed on the faceplate; ``ports`` the device port
    indices in the cage, by position (position 1 first).
    """

    index: int
    number: int
    group: PortGroup
    ports: tuple[int, ...]

    @property
    def form(self) -> str:
        """Form factor: osfp, qsfp112, qsfp28, rj45, cdfp, cpo, orthogonal, cartridge, ..."""
        return self.group.cage

    @property
    def top(self) -> str:
        return self.group.top

    @property
    def lanes(self) -> int:
        """Electrical lanes the cage carries (8 for a twin-port 2 x 400G OSFP)."""
        return self.group.cage_lanes

    @property
    def label(self) -> str:
        """The cage as printed: form factor and faceplate number (``OSFP 3``); a single-port
        cage with its own physical name template (``MGT``, ``BMC``) is called by that name."""
        return f"{self.form.upper()} {self.number}"


class PortLayout:
    """Port numbering of one device model: groups laid end to end in catalogue order.

    Per-port arrays (group, offset in it, role, cage, position in the cage) are built once per
    model, so the lookups every link makes (``group``, ``slot``, ``name``, ``cage_of``) are list
    indexing, not a walk over the groups.

    Ports sit in cages: a group's ports fill ``ports_per_cage``-port cages in order, or in the
    group's ``faceplate`` order (a DGX H100 cage holds the NICs of GPUs 7 and 4). Port indices and
    OS names (``name``) never depend on cages; ``physical_name`` is the port as printed.
    """

    __slots__ = (
        "model",
        "starts",
        "groups",
        "total",
        "port_groups",
        "port_offsets",
        "port_roles",
        "cages",
        "port_cages",
        "port_positions",
        "_names",
        "_physical",
        "_by_role",
    )

    def __init__(self, model: DeviceModel) -> None:
        self.model = model
        self.groups = list(model.ports)
        self.starts: list[int] = []
        self.port_groups: list[PortGroup] = []  # port index -> its group
        self.port_offsets: list[int] = []  # port index -> position within its group
        self.cages: list[Cage] = []  # cage index -> cage
        self.port_cages: list[int] = []  # port index -> cage index
        self.port_positions: list[int] = []  # port index -> 0-based position in its cage
        start = 0
        for g in self.groups:
            self.starts.append(start)
            self.port_groups.extend([g] * g.count)
            self.port_offsets.extend(range(g.count))
            order = g.faceplate if g.faceplate is not None else range(g.count)
            ppc, first = g.ports_per_cage, len(self.cages)
            cage_of = [0] * g.count
            position = [0] * g.count
            for k, offset in enumerate(order):
                cage_of[offset], position[offset] = first + k // ppc, k % ppc
            for c in range(g.cages):
                members = tuple(start + offset for offset in order[c * ppc : (c + 1) * ppc])
                self.cages.append(Cage(first + c, g.first_cage + c, g, members))
            self.port_cages.extend(cage_of)
            self.port_positions.extend(position)
            start += g.count
        self.total = start
        self.port_roles: list[str] = [g.role for g in self.port_groups]
        self._names: list[str] | None = None
        self._physical: list[str] | None = None
        self._by_role: dict[str, tuple[int, ...]] = {}

    # -- cages ----------------------------------------------------------------------------------
    def cage_of(self, port: int) -> Cage:
        """The cage a port sits in."""
        if not 0 <= port < self.total:
            raise self._out_of_range(port)
        return self.cages[self.port_cages[port]]

    def cage_ports(self, cage: int | Cage) -> tuple[int, ...]:
        """The ports of a cage (by its index, or the cage itself), in position order."""
        return (cage if isinstance(cage, Cage) else self.cages[cage]).ports

    def _first_cage(self, port: int) -> int:
        """Index of the first cage of the port's group."""
        start = self.starts[bisect_right(self.starts, port) - 1]
        return min(self.port_cages[start : start + self.port_groups[port].count])

    def cage_label(self, cage: int | Cage) -> str:
        """The cage as printed: ``OSFP 3``; a one-port cage is called like its port (``MGT``)."""
        c = cage if isinstance(cage, Cage) else self.cages[cage]
        if len(c.ports) == 1 and c.group.ports_per_cage == 1:
            return self.physical_name(c.ports[0])
        return c.label

    def position(self, port: int) -> int:
        """1-based position of a port in its cage (port 2 of a twin-port cage: 2)."""
        return self.port_positions[port] + 1

    def physical_name(self, port: int) -> str:
        """The port as printed on the faceplate (``OSFP 3 port 2``), beside its OS name."""
        return self.physical_names[port]

    @property
    def physical_names(self) -> list[str]:
        names = self._physical
        if names is None:
            names = self._physical = [self._format_physical(p) for p in range(self.total)]
        return names

    def _format_physical(self, port: int) -> str:
        g, i = self.port_groups[port], self.port_offsets[port]
        cage, pos = self.cage_of(port), self.port_positions[port]
        template = g.physical or ("{FORM} {cage}" if g.ports_per_cage == 1 else "{FORM} {cage} port {sub}")
        return template.format(
            FORM=g.cage.upper(),
            form=g.cage,
            cage=cage.number,
            sub=pos + 1,
            letter="abcdefghijklmnopqrstuvwxyz"[pos % 26],
            n=i + 1 + g.first_index,
            i=i + g.first_index,
        )

    def _out_of_range(self, port: int) -> IndexError:
        return IndexError(f"port {port} out of range for {self.model.description}")

    def slot(self, port: int) -> PortSlot:
        if not 0 <= port < self.total:
            raise self._out_of_range(port)
        return PortSlot(self.port_groups[port], self.port_offsets[port])

    def group(self, port: int) -> PortGroup:
        """The group of a port: O(1), the lookup every link makes."""
        if not 0 <= port < self.total:
            raise self._out_of_range(port)
        return self.port_groups[port]

    def role_range(self, role: str) -> range:
        """The port indices of the first group with this role (empty when none)."""
        for g, start in zip(self.groups, self.starts, strict=True):
            if g.role == role:
                return range(start, start + g.count)
        return range(0)

    def _of_role(self, role: str) -> tuple[int, ...]:
        found = self._by_role.get(role)
        if found is None:
            found = self._by_role[role] = tuple(p for p, r in enumerate(self.port_roles) if r == role)
        return found

    def ports_of(self, role: str) -> list[int]:
        """Every port index with this role, in order (a fresh list: callers may slice or extend it)."""
        return list(self._of_role(role))

    def has_role(self, role: str) -> bool:
        return bool(self._of_role(role))

    def name(self, port: int) -> str:
        return self.names[port]

    @property
    def names(self) -> list[str]:
        """Every port's name by index (formatted once per model, on first use)."""
        names = self._names
        if names is None:
            names = self._names = [self._format(p) for p in range(self.total)]
        return names

    def _format(self, port: int) -> str:
        s = self.slot(port)
        g, i = s.group, s.offset
        if g.names is not None:
            return g.names[i]
        fields: dict[str, Any] = {
            "i": i + g.first_index,
            "n": i + 1 + g.first_index,
            # The group's own cage count from 1 (not the faceplate number), so OS names keep their
            # numbering when the faceplate numbers a group's cages on from another group's.
            "cage": self.port_cages[port] - self._first_cage(port) + 1,
            "sub": self.port_positions[port] + 1,
            "lane0": (i + g.first_index) * g.lanes,
        }
        acc = self.model.accelerators
        if acc is not None and g.role == "scaleup":
            fields["acc"], fields["link"] = divmod(i, acc.links)
        chips = self.model.switch_chips
        if chips is not None and g.role == "scaleup":
            fields["chip"], fields["chipport"] = divmod(i, chips.ports_per_chip)
        return g.name.format(**fields)
