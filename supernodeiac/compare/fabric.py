"""What changed between two Fabrics, as work orders for the people who cable them.

Cables are matched by cable ID. A matched cable whose ends are the same ports in the same
racks is unchanged, unless what is plugged in changed: its medium, ordered length, part or the
modules at its ends (a *replace* order; since every cage holds one plug, a cage whose other
port starts to fan out moves a cable that was a DAC to optics). One whose end moved is a *move*
order: the old and the new label, both ends with their printed ports (``OSFP 3 port 2``) and
the per-end labels (``naming.end_label``) as cables.csv prints them, and the racks where the
work happens (the moved end's old and new rack). Cables left unmatched on both sides are then
paired by their physical ends (rack, unit, port): both ends the same is a *relabel* (the ID or
the label changed, the cable did not), one end the same is a *move* of the other end; the rest
are *added* and *removed*. Devices are matched by name: added, removed, *moved* (another rack
or unit) or *replaced* (another model); a device that left one name and took another in the
same place and model is *renamed*.

Columnar: the cable IDs are joined through one dict, and the ends of every matched pair are
compared as numpy arrays (device numbers in one shared name space, port indices where the
device's model is unchanged); only the cables that differ become Python records. Two fabrics
of 4 x 10^5 links compare in well under a second.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..catalog.parts import link_part, module_number, ordered_length
from ..catalog.types import Catalogue
from ..fabric import Fabric, LinkSpec
from ..fabric.cable_naming import cable_id_format, positional_format
from ..fabric.end_labels import LABEL_FIELDS
from ..facts.cage_plan import assemblies
from ..model.blueprint import Blueprint


@dataclass(frozen=True, slots=True)
class End:
    """One end of a cable where a technician finds it."""

    row: str
    rack: str
    u: int
    device: str
    port: str  # the OS name (``IB1/3/2``, ``mlx5_0``)
    physical: str = ""  # as printed on the faceplate (``OSFP 3 port 2``)

    def text(self) -> str:
        where = f"{self.rack} U{self.u}" if self.rack else "unplaced"
        printed = f" [{self.physical}]" if self.physical and self.physical != self.port else ""
        return f"{self.device}:{self.port}{printed} ({where})"

    def place(self) -> tuple[str, int, str] | tuple[str, str]:
        """The physical port: rack, unit and port name (the device name for an unplaced device)."""
        return (self.rack, self.u, self.port) if self.rack else ("#" + self.device, self.port)

    def as_dict(self) -> dict:
        return {
            "row": self.row,
            "rack": self.rack,
            "u": self.u,
            "device": self.device,
            "port": self.port,
            "physical": self.physical,
        }


@dataclass(frozen=True, slots=True)
class Cable:
    id: str
    label: str
    fabric: str
    kind: str  # cable | connector | cartridge
    a: End
    b: End
    medium: str
    length_m: float  # ordered (stock) length
    roles: tuple[str, str]  # device roles of the A and B ends
    part: str = ""  # the orderable part (the assembly, or a transceiver link's fibre cord)
    modules: tuple[str, str] = ("", "")  # the module part at the A and the B end (transceiver links)
    a_label: str = ""  # the label at each end (naming.end_label), as cables.csv prints it
    b_label: str = ""

    def plug(self) -> tuple:
        """What a technician plugs in: a change of any of it is a replace order."""
        return (self.medium, self.kind, self.length_m, self.part, self.modules)

    def what(self) -> str:
        """The plug in words: medium, ordered length, part and modules."""
        text = f"{self.medium} {self.length_m:g} m"
        if self.part:
            text += f" ({self.part})"
        if any(self.modules):
            text += f", modules {self.modules[0] or '-'} / {self.modules[1] or '-'}"
        return text

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "label": self.label,
            "fabric": self.fabric,
            "kind": self.kind,
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "medium": self.medium,
            "length_m": self.length_m,
            "part": self.part,
            "modules": list(self.modules),
            "a_label": self.a_label,
            "b_label": self.b_label,
        }


@dataclass(frozen=True, slots=True)
class CableChange:
    change: str  # added | removed | moved | replaced | relabelled
    old: Cable | None
    new: Cable | None
    moved: str = ""  # for moves: which end moved ("a", "b" or "a+b")

    @property
    def cable(self) -> Cable:
        c = self.new or self.old
        assert c is not None
        return c

    @property
    def racks(self) -> tuple[str, ...]:
        """Where the work happens: both ends of a cable laid, pulled or replaced; the moved end's
        old and new rack for a move; the racks of both ends for a relabel."""
        ends: list[End] = []
        if self.change == "moved" and self.old and self.new:
            for side in self.moved.split("+"):
                ends += [getattr(self.old, side), getattr(self.new, side)]
        else:
            for c in (self.old, self.new):
                if c is not None:
                    ends += [c.a, c.b]
        return tuple(sorted({e.rack for e in ends if e.rack}))

    def group(self) -> tuple[str, str, str]:
        """(change, fabric, 'role_a-role_b'): cables that change the same way."""
        c = self.cable
        roles = "-".join(c.roles)
        if self.change == "moved":
            roles += f" ({self.moved} end)"
        return (self.change, c.fabric, roles)

    def as_dict(self) -> dict:
        out: dict = {"change": self.change, "id": self.cable.id, "fabric": self.cable.fabric, "racks": list(self.racks)}
        if self.moved:
            out["moved_end"] = self.moved
        if self.old is not None:
            out["old"] = self.old.as_dict()
        if self.new is not None:
            out["new"] = self.new.as_dict()
        return out


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    name: str
    role: str
    model: str
    group: str
    row: str
    rack: str
    u: int

    def place(self) -> str:
        return f"{self.rack} U{self.u}" if self.rack else "unplaced"

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "role": self.role,
            "model": self.model,
            "group": self.group,
            "row": self.row,
            "rack": self.rack,
            "u": self.u,
        }


@dataclass(frozen=True, slots=True)
class DeviceChange:
    change: str  # added | removed | moved | replaced | renamed
    old: DeviceInfo | None
    new: DeviceInfo | None

    @property
    def device(self) -> DeviceInfo:
        d = self.new or self.old
        assert d is not None
        return d

    def group(self) -> tuple[str, str, str]:
        d = self.device
        return (self.change, d.role, d.model)

    def as_dict(self) -> dict:
        out: dict = {"change": self.change, "name": self.device.name}
        if self.old is not None:
            out["old"] = self.old.as_dict()
        if self.new is not None:
            out["new"] = self.new.as_dict()
        return out


@dataclass
class FabricDiff:
    devices: list[DeviceChange] = field(default_factory=list)
    cables: list[CableChange] = field(default_factory=list)
    unchanged_devices: int = 0
    unchanged_cables: int = 0

    def counts(self) -> dict[str, dict[str, int]]:
        return {
            "devices": dict(Counter(d.change for d in self.devices)),
            "cables": dict(Counter(c.change for c in self.cables)),
        }

    def racks(self) -> Counter[str]:
        """Work orders per rack (a cable's order counts in every rack it touches)."""
        out: Counter[str] = Counter()
        for c in self.cables:
            out.update(c.racks)
        for d in self.devices:
            for info in (d.old, d.new):
                if info is not None and info.rack:
                    out[info.rack] += 1
        return out

    def as_dict(self) -> dict:
        return {
            "counts": self.counts(),
            "unchanged": {"devices": self.unchanged_devices, "cables": self.unchanged_cables},
            "devices": [d.as_dict() for d in self.devices],
            "cables": [c.as_dict() for c in self.cables],
            "racks": dict(sorted(self.racks().items())),
        }


class _Side:
    """One Fabric's per-device columns and cable records, made on demand."""

    def __init__(self, blueprint: Blueprint, catalogue: Catalogue, fabric: Fabric) -> None:
        self.f, self.catalogue = fabric, catalogue
        racks = fabric.racks
        devs = fabric.devices
        self.names = [d.name for d in devs]
        self.index: dict[str, int] = {}  # name -> first device of that name (a repeat is a names-unique error)
        for i, name in enumerate(self.names):
            self.index.setdefault(name, i)
        self.place = [(racks[d.rack].row, racks[d.rack].name, d.u) if d.rack >= 0 else ("", "", d.u) for d in devs]
        self.ports = [fabric.layouts[d.model].names for d in devs]
        self.printed = [fabric.layouts[d.model].physical_names for d in devs]
        self.ids = fabric.links.ids()
        self.arrays = fabric.links.arrays()
        # Ordered like cables.csv: an assembly (a twin-port DAC, a splitter) at its longest link.
        self.ordered_for = assemblies(fabric, catalogue.media).length_m
        self.label = cable_id_format(blueprint.naming.cable_label)
        self.end_label = positional_format(blueprint.naming.end_label, LABEL_FIELDS)
        self.site = blueprint.site.name or blueprint.metadata.name
        self._stock: dict[tuple[str, float], float] = {}
        self._parts: dict[tuple[str, float], str] = {}

    def info(self, i: int) -> DeviceInfo:
        d = self.f.devices[i]
        row, rack, u = self.place[i]
        return DeviceInfo(d.name, d.role, d.model, d.group, row, rack, u)

    def end(self, device: int, port: int) -> End:
        row, rack, u = self.place[device]
        return End(row, rack, u, self.names[device], self.ports[device][port], self.printed[device][port])

    def stock(self, medium: str, length: float) -> float:
        found = self._stock.get((medium, length))
        if found is None:
            found = self._stock[(medium, length)] = ordered_length(self.catalogue, medium, length)
        return found

    def part(self, medium: str, stock: float) -> str:
        found = self._parts.get((medium, stock))
        if found is None:
            found = self._parts[(medium, stock)] = link_part(self.catalogue, medium, stock)
        return found

    def cable(self, i: int) -> Cable:
        t = self.f.links
        spec = t.specs[t.spec[i]]
        a, b = self.end(t.a[i], t.a_port[i]), self.end(t.b[i], t.b_port[i])
        devs = self.f.devices
        cid = self.ids[i]
        stock = self.stock(spec.medium, float(self.ordered_for[i]))
        a_end = (self.site, a.row, a.rack, a.u, a.device, a.physical, a.port, cid)
        b_end = (self.site, b.row, b.rack, b.u, b.device, b.physical, b.port, cid)
        return Cable(
            cid,
            self.label(spec.fabric, a.device, a.physical, b.device, b.physical),
            spec.fabric,
            spec.kind,
            a,
            b,
            spec.medium,
            stock,
            (devs[t.a[i]].role, devs[t.b[i]].role),
            self.part(spec.medium, stock),
            (module_number(self.catalogue, spec.a_module), module_number(self.catalogue, spec.b_module)),
            self.end_label(*a_end, *b_end),
            self.end_label(*b_end, *a_end),
        )


def diff_fabrics(
    old: tuple[Blueprint, Catalogue, Fabric],
    new: tuple[Blueprint, Catalogue, Fabric],
) -> FabricDiff:
    """Work orders that turn the ``old`` Fabric into the ``new`` one."""
    o, n = _Side(*old), _Side(*new)
    out = FabricDiff()
    out.unchanged_devices = _devices(o, n, out)
    _cables(o, n, out)
    out.unchanged_cables = len(o.ids) - sum(1 for c in out.cables if c.change != "added")
    out.devices.sort(key=lambda d: (d.change, d.device.role, d.device.name))
    out.cables.sort(key=lambda c: (c.change, c.cable.fabric, c.cable.id))
    return out


def _devices(o: _Side, n: _Side, out: FabricDiff) -> int:
    old_index, new_index = o.index, n.index
    unchanged = 0
    for name, j in new_index.items():
        i = old_index.get(name)
        if i is None:
            continue
        a, b = o.f.devices[i], n.f.devices[j]
        if a.model != b.model:
            out.devices.append(DeviceChange("replaced", o.info(i), n.info(j)))
        elif o.place[i] != n.place[j]:
            out.devices.append(DeviceChange("moved", o.info(i), n.info(j)))
        else:
            unchanged += 1
    removed = [o.info(i) for name, i in old_index.items() if name not in new_index]
    added = [n.info(j) for name, j in new_index.items() if name not in old_index]
    # A device that left one name and took another at the same place, same model: renamed.
    spot = {(d.rack, d.u, d.model): d for d in removed if d.rack}
    taken: set[str] = set()
    for d in added:
        was = spot.pop((d.rack, d.u, d.model), None) if d.rack else None
        if was is not None:
            out.devices.append(DeviceChange("renamed", was, d))
            taken.update((was.name, d.name))
        else:
            out.devices.append(DeviceChange("added", None, d))
    out.devices += [DeviceChange("removed", d, None) for d in removed if d.name not in taken]
    return unchanged


def _cables(o: _Side, n: _Side, out: FabricDiff) -> None:
    to, tn = o.f.links, n.f.links
    pos_old = dict(zip(o.ids, range(len(o.ids))))
    match = np.fromiter((pos_old.get(cid, -1) for cid in n.ids), dtype=np.int64, count=len(n.ids))
    matched = match >= 0
    nj = np.flatnonzero(matched)
    oi = match[matched]
    hit = np.zeros(len(o.ids), dtype=bool)
    hit[oi] = True

    # Devices in one name space: same number on both sides for the same name.
    space: dict[str, int] = {}
    old_gid = np.array([space.setdefault(x, len(space)) for x in o.names], dtype=np.int64)
    new_gid = np.array([space.setdefault(x, len(space)) for x in n.names], dtype=np.int64)
    # A device whose place or model changed: its ends compare unequal whatever the port.
    same_spot = np.zeros(len(space), dtype=bool)
    for name, i in o.index.items():
        j = n.index.get(name)
        if j is not None and o.place[i] == n.place[j] and o.f.devices[i].model == n.f.devices[j].model:
            same_spot[old_gid[i]] = True

    ao, an = o.arrays, n.arrays
    same = np.ones(len(nj), dtype=bool)
    for col_dev, col_port in (("a", "a_port"), ("b", "b_port")):
        g_old = old_gid[getattr(ao, col_dev)[oi]]
        g_new = new_gid[getattr(an, col_dev)[nj]]
        same &= (g_old == g_new) & same_spot[g_old] & (getattr(ao, col_port)[oi] == getattr(an, col_port)[nj])
    # Same ends: a replace order when the plug changed (medium, kind, modules, ordered length, part).
    kinds: dict[tuple[str, str, str, str], int] = {}
    spec_o = np.array([kinds.setdefault(_plug_key(s), len(kinds)) for s in to.specs], dtype=np.int64)
    spec_n = np.array([kinds.setdefault(_plug_key(s), len(kinds)) for s in tn.specs], dtype=np.int64)
    check = same & ((spec_o[ao.spec[oi]] != spec_n[an.spec[nj]]) | (o.ordered_for[oi] != n.ordered_for[nj]))
    for i, j in zip(oi[check].tolist(), nj[check].tolist()):
        a, b = o.cable(i), n.cable(j)
        if a.plug() != b.plug():  # a routed length may move within its stock length
            out.cables.append(CableChange("replaced", a, b))
    for i, j in zip(oi[~same].tolist(), nj[~same].tolist()):
        out.cables.append(_changed(o.cable(i), n.cable(j)))
    _pair_unmatched(
        [o.cable(i) for i in np.flatnonzero(~hit).tolist()],
        [n.cable(j) for j in np.flatnonzero(~matched).tolist()],
        out,
    )


def _plug_key(spec: LinkSpec) -> tuple[str, str, str, str]:
    return (spec.medium, spec.kind, spec.a_module, spec.b_module)


def _changed(a: Cable, b: Cable) -> CableChange:
    """The order for one cable ID whose ends differ: a move of the ends that changed place, or a
    relabel when only device names changed."""
    moved = [side for side in ("a", "b") if getattr(a, side).place() != getattr(b, side).place()]
    if not moved:
        return CableChange("relabelled", a, b)
    return CableChange("moved", a, b, "+".join(moved))


def _pair_unmatched(removed: list[Cable], added: list[Cable], out: FabricDiff) -> None:
    """Cables whose ID changed: paired into relabels and moves, else added and removed.

    Both ends in the same places is a relabel (or a replace, when the medium or length changed);
    then one end in the same place (the other moved); then one end on the same device port by
    name (the device itself moved, and the other end with it). A pairing must be unambiguous.
    """
    by_ends: dict[tuple, int] = {}
    by_end: dict[tuple, list[int]] = {}
    for k, c in enumerate(removed):
        by_ends.setdefault((c.fabric, c.a.place(), c.b.place()), k)
        for side, e in (("a", c.a), ("b", c.b)):
            by_end.setdefault((c.fabric, side, e.place()), []).append(k)
            by_end.setdefault((c.fabric, side, e.device, e.port), []).append(k)
    used: set[int] = set()
    pending: list[Cable] = []
    for c in added:
        match = by_ends.get((c.fabric, c.a.place(), c.b.place()))
        if match is not None and match not in used:
            used.add(match)
            a = removed[match]
            out.cables.append(CableChange("relabelled" if a.plug() == c.plug() else "replaced", a, c))
        else:
            pending.append(c)
    for c in pending:
        keys: list[tuple] = [(c.fabric, side, e.place()) for side, e in (("a", c.a), ("b", c.b))]
        keys += [(c.fabric, side, e.device, e.port) for side, e in (("a", c.a), ("b", c.b))]
        partner = None
        for key in keys:
            ks = [k for k in by_end.get(key, []) if k not in used]
            if len(ks) == 1:
                partner = ks[0]
                break
        if partner is None:
            out.cables.append(CableChange("added", None, c))
            continue
        used.add(partner)
        out.cables.append(_changed(removed[partner], c))
    out.cables += [CableChange("removed", c, None) for k, c in enumerate(removed) if k not in used]
