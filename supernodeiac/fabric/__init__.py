"""The Fabric: every rack, device, port and link of a deployment (fact, not intent).

Lean on purpose: slotted devices, ports addressed as (device index, port index) and named
through a per-model :class:`PortLayout`, links held column by column in a :class:`LinkTable`
(cable IDs and ``Link`` values made on demand), so a million links fit in memory and build in
seconds. Renderers and checks read this; none of them re-derives topology from the blueprint.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from ..catalog.types import DeviceModel, PortGroup
from .cable_naming import a_end_affixes, cable_id_format
from .device_arrays import DeviceArrays
from .devices import SITE_ROLES, Cage, Coords, Device, PortLayout, PortSlot, Rack
from .fabric_facts import FabricFacts
from .link_table import Link, LinkSpec, LinkTable

_NAME = attrgetter("name")

__all__ = ["SITE_ROLES", "Cage", "Coords", "Device", "Fabric", "Link", "LinkSpec", "LinkTable", "PortLayout", "PortSlot", "Rack"]

if TYPE_CHECKING:
    import networkx as nx


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
    # keyed by the fabric or domain name: one typed record per fabric kind (fabric_facts.py),
    # plain dicts at run time.
    facts: dict[str, FabricFacts] = field(default_factory=dict)
    cable_id: str = "{a}-{a_port}"  # naming.cable_id: IDs are formatted from it when asked for
    # Bulk views derived from the links (cages per link end, cable assemblies), each kept with the
    # state of the links it was made from (see facts/cage_plan.py).
    derived: dict[str, Any] = field(default_factory=dict, repr=False)
    _by_name: dict[str, int] = field(default_factory=dict, repr=False)  # name -> first device with it
    _named: int = field(default=0, repr=False)  # devices[:_named] are in _by_name (made when first asked)
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
        """Append a device; returns it. Duplicate names are reported by a check, so the name
        index (made when first read) keeps the first."""
        device.index = len(self.devices)
        self.devices.append(device)
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
        return self.devices[self._name_index()[name]]

    def _name_index(self) -> dict[str, int]:
        """Name -> index of the first device with it, for every device: made on first use, in one
        pass (a dict grown device by device while 10^6 are built costs more than the build's
        readers need), then extended as devices are added."""
        by_name, devices = self._by_name, self.devices
        done, n = self._named, len(devices)
        if done < n:
            if not by_name:  # all at once, in C: the last write of a name is its first device
                names = list(map(_NAME, devices[done:]))
                by_name.update(zip(reversed(names), range(n - 1, done - 1, -1)))
            else:
                for i in range(done, n):
                    by_name.setdefault(devices[i].name, i)
            self._named = n
        return by_name

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
            self._arrays = (len(self.devices), DeviceArrays(self.devices, self.layouts))
        return self._arrays[1]

    def has_unique_names(self, fold_case: bool = False) -> bool:
        """Whether no two devices share a name (the name index keeps one entry per name); with
        ``fold_case``, not even names that differ only in case."""
        devices = self.devices
        # The name index when it is made, else a set (a third of the index's cost at 10^6 names).
        names: Collection[str] = self._by_name if self._named == len(devices) else set(map(_NAME, devices))
        if len(names) != len(devices):
            return False
        if not fold_case:
            return True
        joined = "\n".join(names)  # 10^6 names: one string tells whether any has a capital
        if joined.isascii() and joined.lower() == joined:
            return True  # nothing to fold: the names are the folded names
        return len(set(map(str.lower, names))) == len(names)

    def cable_ids_distinct(self, names_unique: bool = False) -> bool:
        """True when no two links can get one cable ID, decided from the names and the link
        ends without formatting an ID; False when that cannot be shown this way (the IDs
        themselves then decide).

        For a ``before{a}between{a_port}after`` template (the default ``{a}-{a_port}``) an ID
        is the A device's name and port name joined by ``between``. When the device names are
        distinct, a model's port names are distinct, and no port name lets ``between`` occur
        again after the joint (``(between + port).find(between, 1) == -1``), the joint is the
        last ``between`` of the ID, so the ID gives back its (device, port): distinct A ends
        then mean distinct IDs. The A ends are counted with one ``bincount`` over port slots.
        ``names_unique``: the caller has shown the device names distinct already.
        """
        affixes = a_end_affixes(self.cable_id)
        if affixes is None or not affixes[1] or not (names_unique or self.has_unique_names()):
            return False
        between = affixes[1]
        t = self.links
        if not len(t):
            return True
        dv = self.device_arrays()
        arr = t.arrays()
        if not dv.ports_in_range(arr.a, arr.a_port):
            return False
        for model in (dv.models[m] for m in np.flatnonzero(np.bincount(dv.model[arr.a])).tolist()):
            names = self.layouts[model].names
            if len(set(names)) != len(names) or any((between + q).find(between, 1) != -1 for q in names):
                return False
        first_slot = np.concatenate(([0], np.cumsum(dv.total)[:-1]))  # device -> its port 0 among every port
        return int(np.bincount(first_slot[arr.a] + arr.a_port).max()) <= 1

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
