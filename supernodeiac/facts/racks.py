"""What each rack holds and asks for: devices, power, units, weight, cooling, cables leaving it.

A read-only view of a Fabric shared by the rack checks, the elevation report and ``snc explain``
(so a report does not import a renderer). One pass over the devices and one numpy pass over the
links: linear, and quick at 10^5 devices.

Budgets: a rack's budget is its row's ``budget`` laid over the site's, key by key; the air
limit and the cable density fall back to the catalogue's facility figures. A rack whose site
and row declare no budget at all has none (``declared`` False): the checks then only report.

Power: a device's maximum (``physical.power_max_w``) as its data sheet gives it, which usually
includes the pluggable modules its cages can hold (QM9700: 1.72 kW "with active modules"); so a
module adds nothing to the rack, except on a device whose figure leaves its modules out
(``physical.modules_in_max: false``): its rack also carries the plug in each of its occupied
cages (a transceiver's ``power_w``, or an active cable end's ``power_w_per_end``), one per cage
as the BOM counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from ..catalog.types import Catalogue
from ..fabric import Device, Fabric
from ..fabric.device_arrays import device_column
from ..model.blueprint import Blueprint
from .cage_plan import SPLITTER, STRAIGHT, TRANSCEIVER, link_cages, spec_columns

_GROUP = attrgetter("group")

# Link kinds that are cables (a connector or a cartridge is part of its chassis or rack).
CABLE_KINDS = ("cable",)


@dataclass(slots=True)
class RackLoad:
    rack: int
    name: str
    row: str
    devices: list[int] = field(default_factory=list)  # every device in the rack, chassis boards too
    power_max_w: float = 0.0
    power_typical_w: float = 0.0
    weight_kg: float = 0.0
    unweighed: int = 0  # devices whose model gives no weight
    units: int = 0  # rack units taken (a chassis counts once, its boards not at all)
    cables: int = 0  # cable ends leaving the rack
    liquid: list[int] = field(default_factory=list)  # devices that need a liquid-cooled rack
    compute_w: float = 0.0  # power of the devices with accelerators
    core: list[int] = field(default_factory=list)  # switches above the leaves of a scale-out fabric
    supply_w: float = 0.0  # what its power shelves and PDUs deliver (catalogue physical.supply_w)

    @property
    def power_kw(self) -> float:
        return self.power_max_w / 1000


@dataclass(frozen=True, slots=True)
class Budget:
    """One rack's effective budget (None: no limit)."""

    declared: bool
    power_kw: float | None
    cooling: str
    air_cooled_limit_kw: float
    weight_kg: float | None
    cables_max: int
    path: tuple  # where the budget is declared (the row's, else the site's), for findings


def cables_leaving(f: Fabric, rack: np.ndarray | None = None) -> np.ndarray:
    """Per device: the cable ends on it whose other end is in another rack (or in none).
    ``rack``: every device's rack index, when the caller has it already."""
    n = len(f.devices)
    t = f.links
    if not len(t) or not n:
        return np.zeros(n, dtype=np.int64)
    arr = t.arrays()
    cable = np.array([spec.kind in CABLE_KINDS for spec in t.specs], dtype=bool)[arr.spec]
    if rack is None:
        rack = device_column(f.devices, "rack")
    a, b = arr.a[cable], arr.b[cable]
    leaving = rack[a] != rack[b]
    ends = np.concatenate((a[leaving], b[leaving]))
    return np.bincount(ends, minlength=n)


def link_ends(f: Fabric) -> dict[str, np.ndarray]:
    """Per link kind (cable, connector, cartridge, ...): per device, the link ends on it."""
    n = len(f.devices)
    t = f.links
    if not len(t) or not n:
        return {}
    arr = t.arrays()
    kinds = sorted({spec.kind for spec in t.specs})
    code = np.array([kinds.index(spec.kind) for spec in t.specs], dtype=np.int64)[arr.spec]
    out: dict[str, np.ndarray] = {}
    for k, kind in enumerate(kinds):
        mine = code == k
        out[kind] = np.bincount(arr.a[mine], minlength=n) + np.bincount(arr.b[mine], minlength=n)
    return out


def plug_power(f: Fabric, catalogue: Catalogue) -> np.ndarray:
    """Per device (W): the plugs in its occupied cages (one module or active cable end per cage),
    for the devices whose maximum power leaves its modules out; 0 for every other device."""
    n = len(f.devices)
    out = np.zeros(n, dtype=np.float64)
    dv = f.device_arrays()
    models = [f.models[m] for m in dv.models]
    apart = np.array([m.physical is not None and not m.physical.modules_in_max for m in models], dtype=bool)
    if not n or not len(f.links) or not apart.any():
        return out
    flagged = apart[dv.model]
    arr, specs, cages = f.links.arrays(), f.links.specs, link_cages(f)
    ends = cages.valid & (flagged[arr.a] | flagged[arr.b])
    if not ends.any():
        return out
    shape, _, _, _ = spec_columns(f, catalogue.media)
    media, modules = catalogue.media, catalogue.transceivers

    def plug(module: str, spec_medium: str | None, code: int) -> float:
        if code == TRANSCEIVER:
            t = modules.get(module)
            return t.power_w if t is not None and not t.integrated else 0.0
        m = media.get(spec_medium or "")
        return m.power_w_per_end if m is not None and code in (STRAIGHT, SPLITTER) else 0.0

    power_a = np.array([plug(s.a_module, s.medium, int(shape[k])) for k, s in enumerate(specs)], dtype=np.float64)
    power_b = np.array([plug(s.b_module, s.medium, int(shape[k])) for k, s in enumerate(specs)], dtype=np.float64)
    idx = np.flatnonzero(ends)
    sp = arr.spec[idx]
    cage = np.concatenate((cages.a[idx], cages.b[idx]))
    dev = np.concatenate((arr.a[idx], arr.b[idx]))
    watts = np.concatenate((power_a[sp], power_b[sp]))
    mine = flagged[dev]
    cage, dev, watts = cage[mine], dev[mine], watts[mine]
    _, first = np.unique(cage, return_index=True)  # one plug per occupied cage
    return np.bincount(dev[first], weights=watts[first], minlength=n)


def device_power(f: Fabric, catalogue: Catalogue) -> tuple[np.ndarray, np.ndarray]:
    """Per device (W): (typical, maximum) power, the plugs added where the figure leaves them out."""
    dv = f.device_arrays()
    models = [f.models[m] for m in dv.models]
    plugs = plug_power(f, catalogue)
    typical = np.array([m.power_typical_w for m in models], dtype=np.float64)[dv.model] + plugs
    maximum = np.array([m.power_max_w for m in models], dtype=np.float64)[dv.model] + plugs
    return typical, maximum


@dataclass(frozen=True, slots=True)
class PowerTotals:
    """The deployment's power as the racks sum it (W): each device's maximum, with the plugs its
    maximum leaves out added once per occupied cage; every other plug is inside its device's figure."""

    max_w: float
    typical_w: float
    devices_max_w: float  # the devices' own maxima
    plugs_apart_w: float  # plugs counted on top of a maximum that leaves them out


def power_totals(f: Fabric, catalogue: Catalogue, devices: list[int] | None = None) -> PowerTotals:
    """Power of every device (or of the devices listed): what ``snc explain`` prints and the
    rack loads add up to."""
    if not f.devices:
        return PowerTotals(0.0, 0.0, 0.0, 0.0)
    typical, maximum = device_power(f, catalogue)
    plugs = plug_power(f, catalogue)
    pick = slice(None) if devices is None else np.asarray(devices, dtype=np.int64)
    return PowerTotals(
        float(maximum[pick].sum()),
        float(typical[pick].sum()),
        float((maximum - plugs)[pick].sum()),
        float(plugs[pick].sum()),
    )


def rack_loads(f: Fabric, catalogue: Catalogue) -> dict[int, RackLoad]:
    """Rack index -> its load, for every rack that holds a device.

    Sums are taken in bulk (numpy, per-model figures indexed by each device's model), so a Fabric
    of 10^5 devices costs one pass to read their racks and models."""
    devices = f.devices
    if not devices:
        return {}
    dv = f.device_arrays()
    models = [f.models[m] for m in dv.models]
    mid = dv.model
    core_groups = {g for g, facts in f.facts.items() if facts.get("kind") in ("fat-tree", "dragonfly-plus")}
    # One pass over the devices for what only they know: rack, units of their own, core switch.
    rack = device_column(devices, "rack")
    own_units = np.where(device_column(devices, "chassis") < 0, device_column(devices, "height_u"), 0)
    core = device_column(devices, "tier") >= 2
    if core.any():
        core &= np.fromiter(map(core_groups.__contains__, map(_GROUP, devices)), dtype=bool, count=len(devices))
    power_typ, power_max = device_power(f, catalogue)
    weight_of = np.array([m.weight_kg if m.weight_kg is not None else np.nan for m in models], dtype=np.float64)[mid]
    liquid = np.array([m.cooling != "air" for m in models], dtype=bool)[mid]
    compute = np.array([m.accelerators is not None for m in models], dtype=bool)[mid]
    supply = np.array([(m.physical.supply_w or 0.0) if m.physical else 0.0 for m in models], dtype=np.float64)[mid]
    leaving = cables_leaving(f, rack)

    placed = np.flatnonzero(rack >= 0)
    order = placed[np.argsort(rack[placed], kind="stable")]  # device indices by rack, in index order
    racks_sorted = rack[order]
    starts = np.flatnonzero(np.concatenate(([True], racks_sorted[1:] != racks_sorted[:-1]))) if len(order) else order
    bounds = np.concatenate((starts, [len(order)])).astype(np.int64)
    r_ids = racks_sorted[starts]
    n = len(r_ids)

    def per_rack(values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values[order], starts) if n else np.zeros(0)

    weighed = ~np.isnan(weight_of)
    sums = {
        "power_max_w": per_rack(power_max),
        "power_typical_w": per_rack(power_typ),
        "weight_kg": per_rack(np.where(weighed, weight_of, 0.0)),
        "unweighed": per_rack((~weighed).astype(np.int64)),
        "units": per_rack(own_units),
        "cables": per_rack(leaving),
        "compute_w": per_rack(np.where(compute, power_max, 0.0)),
        "supply_w": per_rack(supply),
    }
    lists = {key: {k: v for k, v in zip(r_ids.tolist(), sums[key].tolist(), strict=True)} for key in sums}
    # The few flagged devices, by rack (index order, as in the members list).
    flagged: dict[str, dict[int, list[int]]] = {"liquid": {}, "core": {}}
    for key, mask in (("liquid", liquid), ("core", core)):
        for i in np.flatnonzero(mask & (rack >= 0)).tolist():
            flagged[key].setdefault(int(rack[i]), []).append(i)
    out: dict[int, RackLoad] = {}
    racks = f.racks
    ordered = order.tolist()
    for k, r in enumerate(r_ids.tolist()):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        members = ordered[lo:hi]
        info = racks[r]
        out[r] = RackLoad(
            r,
            info.name,
            info.row,
            members,
            lists["power_max_w"][r],
            lists["power_typical_w"][r],
            lists["weight_kg"][r],
            int(lists["unweighed"][r]),
            int(lists["units"][r]),
            int(lists["cables"][r]),
            flagged["liquid"].get(r, []),
            lists["compute_w"][r],
            flagged["core"].get(r, []),
            lists["supply_w"][r],
        )
    return out


def budgets(blueprint: Blueprint, catalogue: Catalogue) -> dict[str, Budget]:
    """Row name -> the effective rack budget of its racks."""
    site = blueprint.site
    fac = catalogue.facility
    base = site.budget.model_dump(exclude_none=True) if site.budget is not None else {}
    out: dict[str, Budget] = {}
    for i, row in enumerate(site.rows):
        own = row.budget.model_dump(exclude_none=True) if row.budget is not None else {}
        eff = {**base, **own}
        path = ("site", "rows", i, "budget") if row.budget is not None else ("site", "budget")
        out[row.name] = Budget(
            declared=site.budget is not None or row.budget is not None,
            power_kw=eff.get("power_kw"),
            cooling=eff.get("cooling", "air"),
            air_cooled_limit_kw=eff.get("air_cooled_limit_kw", fac.air_cooled_limit_kw),
            weight_kg=eff.get("weight_kg"),
            cables_max=eff.get("cables_max", fac.cables_max),
            path=path,
        )
    return out


def device_order(f: Fabric, load: RackLoad) -> list[Device]:
    """The rack's devices bottom up: by U, a chassis before its boards (front slots, then rear)."""
    devices = f.devices

    def key(d: Device) -> tuple:
        host = devices[d.chassis] if d.chassis >= 0 else d
        return (host.u, host.index, d.chassis >= 0, d.slot, d.index)

    return sorted((devices[i] for i in load.devices), key=key)
