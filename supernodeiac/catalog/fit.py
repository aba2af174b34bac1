"""Whether a medium fits a link between two cages, and what it takes: modules, head, reach, stock.

Shared by the media policy (which chooses) and the checks (which verify what was chosen or
pinned), so both apply one definition. Everything here is per (medium, lane rate, cage shape,
cage shape): a fabric has a few dozen such combinations for 10^6 links, so callers memoise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .types import Catalogue, Medium, PortGroup

SWITCH_KINDS = frozenset({"switch", "switch-board"})


@dataclass(frozen=True, slots=True)
class CageShape:
    """What a plug must match in a cage: form factor, top, electrical lanes, ports, the side it is
    on (switch or host), and the lane rates the port runs at (``None``: its own and lower ones)."""

    form: str
    top: str = "any"
    lanes: int = 0  # 0: unknown (a cage named only by its form factor)
    ports: int = 1
    side: str = "any"
    native_gbps: float = 0.0  # the port's own lane rate; 0: unknown
    rates: tuple[float, ...] | None = None

    @classmethod
    def of(cls, group: PortGroup, device_kind: str = "") -> CageShape:
        side = "switch" if device_kind in SWITCH_KINDS else ("host" if device_kind else "any")
        rates = tuple(group.lane_rates) if group.lane_rates is not None else None
        return cls(group.cage, group.top, group.cage_lanes, group.ports_per_cage, side, group.lane_gbps, rates)

    @classmethod
    def coerce(cls, cage: CageShape | str) -> CageShape:
        return cage if isinstance(cage, CageShape) else cls(cage)

    def runs_at(self, lane_gbps: float) -> bool:
        if self.rates is not None:
            return any(abs(r - lane_gbps) < 1e-9 for r in self.rates)
        return self.native_gbps == 0 or lane_gbps <= self.native_gbps + 1e-9

    def describe(self) -> str:
        parts = [self.form]
        if self.ports > 1:
            parts.append(f"{self.ports}-port")
        if self.top != "any":
            parts.append(self.top)
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Fit:
    """How a medium realises a link between two cages (``problem`` is "" when it can)."""

    medium: str
    shape: str
    a_module: str = ""
    b_module: str = ""
    head: str = ""  # splitter: "a" or "b"
    reach: float | None = None  # rated reach at the lane rate (transceivers: the lesser module's)
    stock: tuple[float, ...] = ()  # orderable lengths, ascending (transceivers: the cord's)
    cost: float = 0.0  # relative cost per link (the policy's order)
    fibres: int = 0  # fibre cords per link (transceiver media)
    problem: str = ""


def fit(catalogue: Catalogue, name: str, lane_gbps: float, a: CageShape, b: CageShape, link_lanes: int = 0) -> Fit:
    """How medium ``name`` links cage ``a`` to cage ``b`` at ``lane_gbps`` per lane (``link_lanes``
    lanes; 0: the narrower cage's per-port width)."""
    m = catalogue.media.get(name)
    if m is None:
        return Fit(name, "", problem=f"no medium named {name!r} in the catalogue")
    for cage in (a, b):
        if not cage.runs_at(lane_gbps):
            rates = "/".join(f"{r:g}" for r in cage.rates) if cage.rates else f"{cage.native_gbps:g}"
            return Fit(name, m.shape, problem=f"a {cage.describe()} port runs {rates}G lanes only, not {lane_gbps:g}G")
    if m.requires_cage is not None and m.requires_cage not in (a.form, b.form):
        return Fit(name, m.shape, problem=f"{name} needs a {m.requires_cage} cage at one end")
    stock = tuple(sorted(m.stock_lengths_m))
    if m.shape == "transceiver":
        return _transceiver(catalogue, m, name, lane_gbps, a, b, link_lanes)
    reach = m.reach_at(lane_gbps)
    if m.shape == "splitter":
        head, leg = m.end(0), m.end(1)
        if head.fits(a.form, a.top, a.lanes, m.cages) and leg.fits(b.form, b.top, b.lanes, m.cages) and b.ports == 1:
            end = "a"
        elif head.fits(b.form, b.top, b.lanes, m.cages) and leg.fits(a.form, a.top, a.lanes, m.cages) and a.ports == 1:
            end = "b"
        else:
            return Fit(name, m.shape, problem=f"{name} does not plug into {a.describe()} <> {b.describe()}")
        return Fit(name, m.shape, head=end, reach=reach, stock=stock, cost=m.relative_cost / m.legs)
    if m.shape in ("connector", "cartridge"):
        if not m.plugs_into(a.form, b.form):
            return Fit(name, m.shape, problem=f"{name} does not plug into {a.describe()} <> {b.describe()}")
        return Fit(name, m.shape, reach=reach, stock=stock, cost=m.relative_cost)
    ea, eb = m.end(0), m.end(1)
    same_width = a.lanes == b.lanes or (ea.lanes is not None and eb.lanes is not None)
    plugs = (ea.fits(a.form, a.top, a.lanes, m.cages) and eb.fits(b.form, b.top, b.lanes, m.cages)) or (
        ea.fits(b.form, b.top, b.lanes, m.cages) and eb.fits(a.form, a.top, a.lanes, m.cages)
    )
    if not (plugs and same_width):
        return Fit(name, m.shape, problem=f"{name} does not plug into {a.describe()} <> {b.describe()}")
    return Fit(name, m.shape, reach=reach, stock=stock, cost=m.relative_cost / max(1, min(a.ports, b.ports)))


def _transceiver(
    catalogue: Catalogue, m: Medium, name: str, lane_gbps: float, a: CageShape, b: CageShape, link_lanes: int
) -> Fit:
    modules = []
    for cage in (a, b):
        found = ""
        for key in m.modules:
            t = catalogue.transceivers[key]
            if t.runs_at(lane_gbps) and t.fits(cage.form, cage.top, cage.lanes, cage.side, m.cages):
                found = key
                break
        if not found:
            return Fit(
                name, m.shape, problem=f"{name} has no module for a {cage.describe()} {cage.form} cage at {lane_gbps:g}G lanes"
            )
        modules.append(found)
    ma, mb = (catalogue.transceivers[k] for k in modules)
    ra, rb = ma.reach_at(lane_gbps), mb.reach_at(lane_gbps)
    reach = None if ra is None or rb is None else min(ra, rb)
    cord = catalogue.cords[m.cord]
    per_port = ma.lanes_per_port or mb.lanes_per_port or 4
    lanes = link_lanes or min(a.lanes // max(1, a.ports), b.lanes // max(1, b.ports)) or per_port
    fibres = max(1, math.ceil(lanes / per_port))
    cost = ma.relative_cost / max(1, a.ports) + mb.relative_cost / max(1, b.ports) + cord.relative_cost * fibres
    return Fit(name, m.shape, modules[0], modules[1], "", reach, tuple(sorted(cord.stock_lengths_m)), cost, fibres)


def longest_within(stock: tuple[float, ...], bound: float) -> float | None:
    """The longest stock length within ``bound`` (None when even the shortest is longer)."""
    best = None
    for s in stock:
        if s <= bound + 1e-9:
            best = s
    return best


def stock_length(stock: tuple[float, ...], length_m: float) -> float | None:
    """The shortest stock length that covers ``length_m`` (None when none is long enough)."""
    for s in stock:
        if s >= length_m - 1e-9:
            return s
    return None
