"""The Fabric: every rack, device, port and link of a deployment (fact, not intent).

Lean on purpose: slotted devices, ports addressed as (device index, port index) and named
through a per-model :class:`PortLayout`, links held column by column in a :class:`LinkTable`
(cable IDs and ``Link`` values made on demand), so a million links fit in memory and build in
seconds. Renderers and checks read this; none of them re-derives topology from the blueprint.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .cable_naming import a_end_affixes, cable_id_format
from .catalog.types import DeviceModel, PortGroup
from .device_arrays import DeviceArrays
from .link_table import Link, LinkSpec, LinkTable

__all__ = ["Cage", "Coords", "Device", "Fabric", "Link", "LinkSpec", "LinkTable", "PortLayout", "PortSlot", "Rack"]

if TYPE_CHECKING:
    import networkx as nx

Coords = tuple[tuple[str, Any], ...]


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


@dataclass
class Fabric:
    """The compiled deployment. Build it with the add_* methods; read it everywhere else."""

    name: str
    models: dict[str, DeviceModel]
    racks: list[Rack] = field(default_factory=list)
    devices: list[Device] = field(default_factory=list)
    # Given as a table (shared, e.g. by dataclasses.replace) or as Link values (copied in).
    links: LinkTable = field(default=None)  # type: ignore[assignment]
    layouts: dict[str, PortLayout] = field(default_factory=dict)
    # Facts a builder knows that checks and reports need (declared vs built sizes, growth limits),
    # keyed by the fabric or domain name. Plain data only.
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    cable_id: str = "{a}-{a_port}"  # naming.cable_id: IDs are formatted from it when asked for
    # Bulk views derived from the links (cages per link end, cable assemblies), each kept with the
    # state of the links it was made from (see cage_plan.py).
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    _by_name: dict[str, int] = field(default_factory=dict, repr=False)
    _sorted: tuple[tuple[int, int], list[Link]] | None = field(default=None, repr=False)
    _arrays: tuple[int, DeviceArrays] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.links, LinkTable):
            given = self.links or []
            self.links = LinkTable(self._cable_ids)
            self.links.extend(given)
        # A layout for every model up front: a builder may read the ports of a model (a spine
        # switch) before it has placed the first device of it.
        for name, model in self.models.items():
            if name not in self.layouts:
                self.layouts[name] = PortLayout(model)

    # -- building -------------------------------------------------------------------------
    def add_rack(self, name: str, row: str, row_index: int, position: int, x_m: float, y_m: float) -> Rack:
        rack = Rack(len(self.racks), name, row, row_index, position, x_m, y_m)
        self.racks.append(rack)
        return rack

    def add_device(self, device: Device) -> Device:
        """Append a device; returns it. Duplicate names are reported by a check, so keep the first."""
        device.index = len(self.devices)
        self.devices.append(device)
        self._by_name.setdefault(device.name, device.index)
        if device.model not in self.layouts:
            self.layouts[device.model] = PortLayout(self.models[device.model])
        return device

    def add_devices(self, devices: list[Device]) -> range:
        """Append many devices (a node group's 10^5), each made with ``index`` already set to the
        position it takes (``len(fabric.devices) + i``); returns those indices."""
        first, n = len(self.devices), len(devices)
        if n == 0:
            return range(first, first)
        if devices[0].index != first or devices[-1].index != first + n - 1:
            raise ValueError("add_devices: devices must be made with their final indices")
        names = [d.name for d in devices]
        by_name = self._by_name
        if len(set(names)) == n and by_name.keys().isdisjoint(names):
            by_name.update(zip(names, range(first, first + n)))  # the common case, in C
        else:  # a repeated name (the names check reports it): the first device keeps it
            for i, name in enumerate(names, first):
                by_name.setdefault(name, i)
        self.devices.extend(devices)
        for model in {d.model for d in devices} - self.layouts.keys():
            self.layouts[model] = PortLayout(self.models[model])
        return range(first, first + n)

    def add_link(self, link: Link) -> Link:
        self.links.append(link)
        return link

    def _cable_ids(self, table: LinkTable, indices: Sequence[int] | None) -> list[str]:
        """Cable IDs of the links at ``indices`` (all when None), from ``cable_id`` and the names."""
        devices, layouts = self.devices, self.layouts
        fabric_of = [s.fabric for s in table.specs]
        A, AP, B, BP, S = table.a, table.a_port, table.b, table.b_port, table.spec
        fmt = cable_id_format(self.cable_id)
        if indices is not None:  # a few: no per-device tables
            out = []
            for i in indices:
                da, db = devices[A[i]], devices[B[i]]
                a_port, b_port = layouts[da.model].names[AP[i]], layouts[db.model].names[BP[i]]
                out.append(fmt(fabric_of[S[i]], da.name, a_port, db.name, b_port))
            return out
        names_of_model = {m: layout.names for m, layout in layouts.items()}
        port_names = [names_of_model[d.model] for d in devices]
        affixes = a_end_affixes(self.cable_id)
        if affixes is not None:
            # before{a}between{a_port}after: one prefix per device, one concatenation per link.
            before, between, after = affixes
            prefix = [before + d.name + between for d in devices]
            ids = [prefix[a] + port_names[a][p] for a, p in zip(A, AP)]
            return [x + after for x in ids] if after else ids
        names = [d.name for d in devices]
        return [
            fmt(fabric_of[s], names[a], port_names[a][ap], names[b], port_names[b][bp])
            for s, a, ap, b, bp in zip(S, A, AP, B, BP)
        ]

    # -- reading --------------------------------------------------------------------------
    def device(self, name: str) -> Device:
        return self.devices[self._by_name[name]]

    def layout(self, device: Device) -> PortLayout:
        return self.layouts[device.model]

    def port_name(self, device_index: int, port: int) -> str:
        return self.layouts[self.devices[device_index].model].name(port)

    def port_group(self, device_index: int, port: int) -> PortGroup:
        return self.layouts[self.devices[device_index].model].group(port)

    def cage(self, device_index: int, port: int) -> Cage:
        """The cage a device's port sits in (its faceplate number, form factor, top, ports)."""
        return self.layouts[self.devices[device_index].model].cage_of(port)

    def physical_name(self, device_index: int, port: int) -> str:
        """A device's port as printed on its faceplate (``OSFP 3 port 2``), beside ``port_name``."""
        return self.layouts[self.devices[device_index].model].physical_name(port)

    def sorted_links(self) -> list[Link]:
        """Every link in cable-ID order, made once and shared by the renderers that need it.

        Do not mutate the list. It is made again when the links changed since the last call.
        """
        table = self.links
        stamp = table.stamp()
        if self._sorted is None or self._sorted[0] != stamp:
            ids = table.ids()
            self._sorted = (stamp, [table.link(i, ids[i]) for i in table.id_order()])
        return self._sorted[1]

    def device_arrays(self) -> DeviceArrays:
        """Per-device and per-port facts as numpy arrays (made once, remade when devices are added)."""
        if self._arrays is None or self._arrays[0] != len(self.devices):
            self._arrays = (len(self.devices), DeviceArrays(self))
        return self._arrays[1]

    def has_unique_names(self) -> bool:
        """Whether no two devices share a name (the name index keeps one entry per name)."""
        return len(self._by_name) == len(self.devices)

    def links_of(self, fabric: str) -> Iterator[Link]:
        return iter(self.links.links(self.links.indices_of(fabric)))

    def fabrics(self) -> list[str]:
        return self.links.fabrics()

    def graph(self, fabric: str | None = None) -> nx.MultiGraph:
        """A networkx view (device index nodes, one edge per link) for graph algorithms.

        Built on demand: the checks that run on every blueprint use arrays and formulas, and
        only the analyses that need a graph pay for one.
        """
        import networkx as nx

        g = nx.MultiGraph()
        for d in self.devices:
            g.add_node(d.index, name=d.name, role=d.role, tier=d.tier)
        t = self.links
        specs = t.specs
        for a, b, s in zip(t.a, t.b, t.spec):
            spec = specs[s]
            if fabric is None or spec.fabric == fabric:
                g.add_edge(a, b, fabric=spec.fabric, gbps=spec.gbps)
        return g
