"""Bill of materials by orderable part: devices, cable assemblies, transceivers, fibre, connectors.

``bill_of_materials`` is the pure computation, shared by ``snc explain`` (its totals) and the
``bom`` output (``outputs/bom.py`` writes it as ``bom/bom.csv`` and ``bom/summary.json``).

What a line counts, from the Fabric and the catalogue (never literals here):

* ``switch`` / ``node``: devices per model (one part, whatever the roles it plays);
* ``facility``: what the racks need besides compute and network, per model: OEX supernode chassis,
  power shelves, rack PDUs, console servers (the OOB switches are switches);
* ``cable``: cable assemblies per (fabric, medium, ordered length): one per straight cable (a
  twin-port DAC serving both ports of its cages counts once), one per splitter (at its longest
  leg), one per Cat6 patch cord;
* ``transceiver``: modules per (fabric, part, side): one per occupied optical cage, so a twin-port
  module feeding two fibres counts once (a CPO engine is part of its switch: not listed);
* ``fibre``: patch cords per (fabric, cord, ordered length): one per optical port a link uses;
* ``connector``: one orthogonal connector per board pair; ``cartridge``: one NVLink spine per rack
  assembly (a scale-up domain instance), the cartridges it holds given in the detail.

Each line carries the part number (or a marked generic placeholder and the catalogue's grade for
it), spares by the blueprint's percentage for its class (``bom.spares_pct``), unit and total power
and relative cost. Spares are ordered, not powered.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..catalog.fit import SWITCH_KINDS
from ..catalog.parts import PartRef, cord_part, device_part, medium_part, module_part, ordered_length
from ..catalog.types import Catalogue, Medium
from ..fabric import SITE_ROLES, Fabric, LinkSpec
from ..facts.cage_plan import CARTRIDGE, CONNECTOR, SPLITTER, STRAIGHT, TRANSCEIVER, assemblies, link_cages, spec_columns
from ..model.blueprint import Blueprint
from ..util.number_format import rounded

NO_MEDIUM = "(none)"  # a link the media policy found nothing for; the reach check reports it
SECTIONS = ("switch", "node", "facility", "transceiver", "cable", "fibre", "connector", "cartridge")
DEVICE_SECTIONS = ("switch", "node", "facility")
FACILITY_KINDS = frozenset({"chassis", "power-shelf", "pdu", "console-server"})


@dataclass(frozen=True, slots=True)
class Line:
    """One orderable part on one fabric (devices: fabric "")."""

    section: str  # switch | node | facility | transceiver | cable | fibre | connector | cartridge
    fabric: str
    item: str  # catalogue key (device model, medium, transceiver, cord)
    part: PartRef
    detail: str  # roles, side, cord type, cartridges per rack ...
    length_m: float | None
    count: int
    spares: int
    unit_power_w: float
    unit_cost: float
    description: str

    @property
    def order(self) -> int:
        return self.count + self.spares

    @property
    def power_w(self) -> float:
        return self.count * self.unit_power_w

    @property
    def cost(self) -> float:
        return self.count * self.unit_cost


@dataclass(frozen=True, slots=True)
class DeviceLine:
    """A device model's count (what ``snc explain`` sums accelerators over)."""

    model: str
    count: int


@dataclass(frozen=True, slots=True)
class Bom:
    lines: list[Line]

    @property
    def devices(self) -> list[DeviceLine]:
        return [DeviceLine(x.item, x.count) for x in self.lines if x.section in DEVICE_SECTIONS]

    def media_lines(self, fabric: str | None = None) -> list[Line]:
        return [x for x in self.lines if x.section not in DEVICE_SECTIONS and (fabric is None or x.fabric == fabric)]

    def fabrics(self) -> list[str]:
        return sorted({x.fabric for x in self.media_lines()})

    def media_power_w(self, fabric: str | None = None) -> float:
        return sum(x.power_w for x in self.media_lines(fabric))

    def media_cost(self, fabric: str | None = None) -> float:
        return sum(x.cost for x in self.media_lines(fabric))

    def device_power_w(self) -> float:
        return sum(x.power_w for x in self.lines if x.section in DEVICE_SECTIONS)

    def device_cost(self) -> float:
        return sum(x.cost for x in self.lines if x.section in DEVICE_SECTIONS)

    def count(self, section: str, fabric: str | None = None) -> int:
        return sum(x.count for x in self.lines if x.section == section and (fabric is None or x.fabric == fabric))


def cost_unit(blueprint: Blueprint | None) -> str:
    """What a cost figure is in: the blueprint's price unit, or the catalogue's relative units."""
    unit = blueprint.bom.cost_unit if blueprint is not None else None
    return unit if unit is not None else "relative units"


def unit_cost(blueprint: Blueprint | None, item: str, relative: float) -> float:
    """One unit of a catalogue item: its price where the blueprint gives one, else its relative cost."""
    return blueprint.bom.prices.get(item, relative) if blueprint is not None else relative


def unpriced(bom: Bom, blueprint: Blueprint) -> list[str]:
    """Items of the BOM without a price while the blueprint prices others (their cost is relative)."""
    if blueprint.bom.cost_unit is None:
        return []
    return sorted({x.item for x in bom.lines if x.item not in blueprint.bom.prices and x.count})


def link_figures(catalogue: Catalogue, medium: str) -> tuple[float, float]:
    """(power W, relative cost) of one cable assembly of this medium, both plugs included
    (transceiver media: 0, 0; their modules and cords are lines of their own)."""
    m = catalogue.media.get(medium)
    if m is None:
        return 0.0, 0.0
    return _assembly_power(m), m.relative_cost


def _assembly_power(m: Medium) -> float:
    if m.shape == "straight":
        return 2 * m.power_w_per_end
    if m.shape == "splitter":
        return (1 + m.legs) * m.power_w_per_end
    return 0.0


def bill_of_materials(catalogue: Catalogue, fabric: Fabric, blueprint: Blueprint | None = None) -> Bom:
    """Count every orderable part once: O(devices + links), the grouping by cage done in numpy."""
    spares = dict(blueprint.bom.spares_pct) if blueprint is not None else {}
    prices = blueprint.bom.prices if blueprint is not None else {}
    raw: list[tuple] = []  # (section, fabric, item, part, detail, length, count, unit power, unit cost, description)
    raw += _devices(fabric)
    raw += _links(catalogue, fabric)
    lines = []
    for section, fab, item, part, detail, length, count, power, cost, description in raw:
        pct = spares.get(section, 0.0)
        extra = math.ceil(count * pct / 100 - 1e-9) if pct else 0
        lines.append(Line(section, fab, item, part, detail, length, count, extra, power, prices.get(item, cost), description))
    order = {s: i for i, s in enumerate(SECTIONS)}
    lines.sort(key=lambda x: (order[x.section], x.fabric, x.item, x.length_m or 0.0, x.detail))
    return Bom(lines)


def _devices(fabric: Fabric) -> list[tuple]:
    roles: dict[str, Counter[str]] = {}
    for d in fabric.devices:
        if d.role not in SITE_ROLES:  # the site's own routers: cabled to, never ordered
            roles.setdefault(d.model, Counter())[d.role] += 1
    out = []
    for name in sorted(roles):
        model = fabric.models[name]
        section = "switch" if model.kind in SWITCH_KINDS else "facility" if model.kind in FACILITY_KINDS else "node"
        detail = ", ".join(f"{role} {n}" for role, n in sorted(roles[name].items()))
        part = device_part(name, model)
        out.append(
            (
                section,
                "",
                name,
                part,
                detail,
                None,
                sum(roles[name].values()),
                model.power_w,
                model.relative_cost,
                model.description,
            )
        )
    return out


def _links(catalogue: Catalogue, f: Fabric) -> list[tuple]:
    t = f.links
    if not len(t):
        return []
    media = catalogue.media
    specs = t.specs
    arr = t.arrays()
    cages = link_cages(f)
    asm = assemblies(f, media)
    shape_s, _, _, _ = spec_columns(f, media)
    shape = shape_s[arr.spec]
    out: list[tuple] = []

    # Cable assemblies: one per key (cage pair, splitter head); other cables one per link.
    keyed = asm.key >= 0
    firsts = np.flatnonzero(keyed)
    if len(firsts):
        k = asm.key[firsts]
        order = np.argsort(k, kind="stable")
        sk = k[order]
        keep = np.concatenate(([True], sk[1:] != sk[:-1]))
        firsts = firsts[order[keep]]
    single = np.flatnonzero(~keyed & (shape != TRANSCEIVER) & (shape != CONNECTOR) & (shape != CARTRIDGE))
    per_assembly: Counter[tuple[int, float]] = Counter()
    for rows in (firsts, single):
        per_assembly.update(zip(arr.spec[rows].tolist(), asm.length_m[rows].tolist()))
    cables: Counter[tuple[str, str, float]] = Counter()
    for (s, length), n in per_assembly.items():
        spec = specs[s]
        cables[(spec.fabric, spec.medium or NO_MEDIUM, ordered_length(catalogue, spec.medium, length))] += n
    for (fab, name, length), n in sorted(cables.items()):
        m = media.get(name)
        if m is None:
            out.append(("cable", fab, name, PartRef(NO_MEDIUM), "no medium chosen", length, n, 0.0, 0.0, "no medium chosen"))
            continue
        part = medium_part(catalogue, name, length)
        out.append(
            ("cable", fab, name, part, f"{m.kind} {m.shape}", length, n, _assembly_power(m), m.relative_cost, m.description)
        )

    # Transceivers: one per occupied optical cage; fibre: one cord per optical port of each link.
    tx = np.flatnonzero((shape == TRANSCEIVER) & cages.valid)
    if len(tx):
        out += _modules(catalogue, f, tx)
        fibres: Counter[tuple[str, str, float]] = Counter()
        fibres_per = {}
        for (s, length), n in Counter(zip(arr.spec[tx].tolist(), arr.length_m[tx].tolist())).items():
            spec = specs[s]
            m = media[spec.medium]
            if s not in fibres_per:
                fibres_per[s] = fibres_per_link(catalogue, spec)
            fibres[(spec.fabric, m.cord, ordered_length(catalogue, spec.medium, length))] += n * fibres_per[s]
        for (fab, cord_key, length), n in sorted(fibres.items()):
            cord = catalogue.cords[cord_key]
            out.append(
                (
                    "fibre",
                    fab,
                    cord_key,
                    cord_part(cord, length),
                    f"{cord.fibre} {cord.connector}",
                    length,
                    n,
                    0.0,
                    cord.relative_cost,
                    cord.description,
                )
            )

    # Orthogonal connectors: one per board pair. Cartridges: one NVLink spine per rack assembly.
    for code, section in ((CONNECTOR, "connector"), (CARTRIDGE, "cartridge")):
        rows = np.flatnonzero(shape == code)
        if not len(rows):
            continue
        groups: dict[tuple[str, str], set] = {}
        devices = f.devices
        for s, a, b in zip(arr.spec[rows].tolist(), arr.a[rows].tolist(), arr.b[rows].tolist()):
            spec = specs[s]
            if code == CONNECTOR:
                key = (min(a, b), max(a, b))
            else:  # the domain instance (an NVL72 rack) both trays belong to
                d = devices[a]
                key = (d.group, d.coord("supernode", 0))
            groups.setdefault((spec.fabric, spec.medium), set()).add(key)
        for (fab, name), keys in sorted(groups.items()):
            m = media[name]
            detail = "per board pair" if code == CONNECTOR else f"per rack assembly, {m.per_assembly} cartridges each"
            out.append(
                (
                    section,
                    fab,
                    name,
                    medium_part(catalogue, name, 0.0),
                    detail,
                    None,
                    len(keys),
                    _assembly_power(m),
                    m.relative_cost,
                    m.description,
                )
            )
    return out


def fibres_per_link(catalogue: Catalogue, spec: LinkSpec) -> int:
    """Fibre cords per link of a transceiver spec: one per optical port the link's lanes use
    (a 400G link on 4 lanes: one; an 800G port on 8 lanes: two)."""
    module = catalogue.transceivers.get(spec.a_module) or catalogue.transceivers.get(spec.b_module)
    per_port = (module.lanes_per_port if module is not None else None) or 4
    return max(1, math.ceil(spec.lanes / per_port))


def _modules(catalogue: Catalogue, f: Fabric, tx: np.ndarray) -> list[tuple]:
    """Module lines: the occupied optical cages of the transceiver links ``tx``, by module, side
    and cage form (all in numpy: an 8-rail node's cages are 10^5 at scale)."""
    t = f.links
    specs = t.specs
    arr = t.arrays()
    cages = link_cages(f)
    dv = f.device_arrays()
    keys = sorted({k for s in specs for k in (s.a_module, s.b_module) if k})
    kid = {k: i for i, k in enumerate(keys)}
    fabs = sorted({s.fabric for s in specs})
    fid = {x: i for i, x in enumerate(fabs)}
    mod_a = np.array([kid.get(s.a_module, -1) for s in specs], dtype=np.int64)
    mod_b = np.array([kid.get(s.b_module, -1) for s in specs], dtype=np.int64)
    fab = np.array([fid[s.fabric] for s in specs], dtype=np.int64)
    # (side, form) of every port row: a switch's cage is on the switch side, any other device's on the host side
    where, kinds = dv.layout_table("side-form", lambda layout, g: (layout.model.kind in SWITCH_KINDS, g.cage))
    sp = arr.spec[tx]
    cage = np.concatenate((cages.a[tx], cages.b[tx]))
    module = np.concatenate((mod_a[sp], mod_b[sp]))
    fabric = np.concatenate((fab[sp], fab[sp]))
    rows = np.concatenate((dv.rows(arr.a[tx], arr.a_port[tx]), dv.rows(arr.b[tx], arr.b_port[tx])))
    kind = where[rows]
    order = np.argsort(cage, kind="stable")
    sc = cage[order]
    first = order[np.concatenate(([True], sc[1:] != sc[:-1]))]  # one end per occupied cage
    n_kind, n_mod = max(len(kinds), 1), max(len(keys), 1) + 1
    code = (fabric[first] * n_mod + (module[first] + 1)) * n_kind + kind[first]
    merged: Counter[tuple[str, str, str, str]] = Counter()
    for value, n in zip(*np.unique(code, return_counts=True), strict=True):
        rest, k = divmod(int(value), n_kind)
        fi, mi = divmod(rest, n_mod)
        if mi == 0:
            continue  # a transceiver link without a module (an edited link): the reach check reports it
        module_t = catalogue.transceivers[keys[mi - 1]]
        if module_t.integrated:
            continue  # a CPO engine is part of its switch
        is_switch, form = kinds[k]
        merged[(fabs[fi], keys[mi - 1], "switch" if is_switch else "host", form)] += int(n)
    out = []
    for (fab_name, t_key, side, form), n in sorted(merged.items()):
        module_t = catalogue.transceivers[t_key]
        detail = f"{side} side, {form.upper()}, {module_t.pmd}"
        out.append(
            (
                "transceiver",
                fab_name,
                t_key,
                module_part(module_t),
                detail,
                None,
                n,
                module_t.power_w,
                module_t.relative_cost,
                module_t.description,
            )
        )
    return out


def switch_link_plugs(catalogue: Catalogue, f: Fabric, fabric: str) -> tuple[int, int, float]:
    """The switch-to-switch links of one fabric (both ends above tier 0): (links, modules, watts).

    Modules as the BOM counts them, one per occupied optical cage (a CPO engine is its switch's);
    watts only for the plugs (modules, active cable ends) in cages of devices whose maximum leaves
    its modules out, as the racks add them: any other plug is inside its switch's maximum already.
    """
    t = f.links
    if not len(t) or not f.devices:
        return 0, 0, 0.0
    arr, specs = t.arrays(), t.specs
    tier = np.fromiter((d.tier for d in f.devices), dtype=np.int64, count=len(f.devices))
    mine = np.array([s.fabric == fabric for s in specs], dtype=bool)[arr.spec]
    sel = np.flatnonzero(mine & (tier[arr.a] > 0) & (tier[arr.b] > 0))
    if not len(sel):
        return 0, 0, 0.0
    cages = link_cages(f)
    sel = sel[cages.valid[sel]]
    shape, _, _, _ = spec_columns(f, catalogue.media)
    dv = f.device_arrays()
    apart = np.array(
        [(m := f.models[name]).physical is not None and not m.physical.modules_in_max for name in dv.models], dtype=bool
    )[dv.model]

    def plug(module: str, medium: str | None, code: int) -> tuple[int, float]:
        if code == TRANSCEIVER:
            x = catalogue.transceivers.get(module)
            return (0, 0.0) if x is None or x.integrated else (1, x.power_w)
        m = catalogue.media.get(medium or "")
        return 0, (m.power_w_per_end if m is not None and code in (STRAIGHT, SPLITTER) else 0.0)

    ends_a = [plug(s.a_module, s.medium, int(shape[k])) for k, s in enumerate(specs)]
    ends_b = [plug(s.b_module, s.medium, int(shape[k])) for k, s in enumerate(specs)]
    sp = arr.spec[sel]
    cage = np.concatenate((cages.a[sel], cages.b[sel]))
    dev = np.concatenate((arr.a[sel], arr.b[sel]))
    count = np.concatenate((np.array([e[0] for e in ends_a])[sp], np.array([e[0] for e in ends_b])[sp]))
    watts = np.concatenate((np.array([e[1] for e in ends_a])[sp], np.array([e[1] for e in ends_b])[sp]))
    _, first = np.unique(cage, return_index=True)  # one plug per occupied cage
    return len(sel), int(count[first].sum()), float((watts[first] * apart[dev[first]]).sum())


# -- rendering ------------------------------------------------------------------------------


def totals(bom: Bom) -> dict:
    """Counts, power and relative cost of the whole BOM (summary.json's and snc explain's totals)."""
    dp, mp = bom.device_power_w(), bom.media_power_w()
    dc, mc = bom.device_cost(), bom.media_cost()
    return {
        "devices": sum(bom.count(section) for section in DEVICE_SECTIONS),
        "facility": bom.count("facility"),
        "cables": bom.count("cable"),
        "transceivers": bom.count("transceiver"),
        "fibres": bom.count("fibre"),
        "connectors": bom.count("connector"),
        "cartridges": bom.count("cartridge"),
        "power_w": {"devices": rounded(dp), "media": rounded(mp), "total": rounded(dp + mp)},
        "relative_cost": {"devices": rounded(dc), "media": rounded(mc), "total": rounded(dc + mc)},
    }


def summary(bom: Bom) -> dict:
    """The BOM as plain data (what summary.json holds)."""
    per_fabric: dict[str, dict[str, float]] = {}
    for fab in bom.fabrics():
        per_fabric[fab] = {
            section: bom.count(section, fab)
            for section in ("cable", "transceiver", "fibre", "connector", "cartridge")
            if bom.count(section, fab)
        }
        per_fabric[fab]["media_power_w"] = rounded(bom.media_power_w(fab))
        per_fabric[fab]["media_relative_cost"] = rounded(bom.media_cost(fab))
    return {
        "lines": [
            {
                "section": x.section,
                "fabric": x.fabric,
                "part": x.part.number,
                "opn": x.part.opn,
                "part_status": x.part.status,
                "grade": x.part.grade,
                "item": x.item,
                "detail": x.detail,
                "length_m": None if x.length_m is None else rounded(x.length_m),
                "count": x.count,
                "spares": x.spares,
                "order": x.order,
                "unit_power_w": rounded(x.unit_power_w),
                "power_w": rounded(x.power_w),
                "unit_relative_cost": rounded(x.unit_cost),
                "relative_cost": rounded(x.cost),
            }
            for x in bom.lines
        ],
        "fabrics": per_fabric,
        "totals": totals(bom),
    }


__all__ = [
    "Bom",
    "Line",
    "bill_of_materials",
    "cost_unit",
    "fibres_per_link",
    "link_figures",
    "summary",
    "switch_link_plugs",
    "totals",
    "unit_cost",
    "unpriced",
]
