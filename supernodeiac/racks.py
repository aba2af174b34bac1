"""What each rack holds and asks for: devices, power, units, weight, cooling, cables leaving it.

A read-only view of a Fabric shared by the rack checks, the elevation report and ``snc explain``
(so a report does not import a renderer). One pass over the devices and one numpy pass over the
links: linear, and quick at 10^5 devices.

Budgets: a rack's budget is its row's ``budget`` laid over the site's, key by key; the air
limit and the cable density fall back to the catalogue's facility figures. A rack whose site
and row declare no budget at all has none (``declared`` False): the checks then only report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .catalog.types import Catalogue
from .fabric import Device, Fabric
from .model.blueprint import Blueprint

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


def cables_leaving(f: Fabric) -> np.ndarray:
    """Per device: the cable ends on it whose other end is in another rack (or in none)."""
    n = len(f.devices)
    t = f.links
    if not len(t) or not n:
        return np.zeros(n, dtype=np.int64)
    arr = t.arrays()
    cable = np.array([spec.kind in CABLE_KINDS for spec in t.specs], dtype=bool)[arr.spec]
    rack = np.array([d.rack for d in f.devices], dtype=np.int64)
    a, b = arr.a[cable], arr.b[cable]
    leaving = rack[a] != rack[b]
    ends = np.concatenate((a[leaving], b[leaving]))
    return np.bincount(ends, minlength=n)


def _is_core(d: Device, f: Fabric) -> bool:
    """A switch above the leaves of a scale-out fabric (spine, core, Dragonfly+ spine)."""
    facts = f.facts.get(d.group)
    return d.tier >= 2 and facts is not None and facts.get("kind") in ("fat-tree", "dragonfly-plus")


def rack_loads(f: Fabric) -> dict[int, RackLoad]:
    """Rack index -> its load, for every rack that holds a device."""
    models = f.models
    leaving = cables_leaving(f).tolist()
    out: dict[int, RackLoad] = {}
    racks = f.racks
    for d in f.devices:
        if d.rack < 0:
            continue
        load = out.get(d.rack)
        if load is None:
            r = racks[d.rack]
            load = out[d.rack] = RackLoad(d.rack, r.name, r.row)
        m = models[d.model]
        load.devices.append(d.index)
        load.power_max_w += m.power_max_w
        load.power_typical_w += m.power_typical_w
        w = m.weight_kg
        if w is None:
            load.unweighed += 1
        else:
            load.weight_kg += w
        if d.chassis < 0:
            load.units += d.height_u
        load.cables += leaving[d.index]
        if m.cooling != "air":
            load.liquid.append(d.index)
        if m.accelerators is not None:
            load.compute_w += m.power_max_w
        if _is_core(d, f):
            load.core.append(d.index)
    return dict(sorted(out.items()))


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
