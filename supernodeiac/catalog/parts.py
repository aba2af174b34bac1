"""Orderable parts of the catalogue as a BOM line and a cabling row name them.

Every part resolves to a number and a status: ``exact`` (a vendor part number for this very
item and length), ``family`` (a vendor family whose per-length code is not confirmed: the number
reads ``MCA4K50-Nxxx 2 m``), or ``generic`` (a placeholder the catalogue grades as such).
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import Catalogue, Cord, DeviceModel, Medium, Part, Transceiver


@dataclass(frozen=True, slots=True)
class PartRef:
    number: str
    opn: str = ""
    status: str = "generic"  # exact | family | generic
    grade: str = "UNCONFIRMED"


def _at_length(part: Part | None, parts: dict[float, str], opns: dict[float, str], length: float, what: str) -> PartRef:
    number = parts.get(length)
    if number is not None and part is not None:
        return PartRef(number, opns.get(length, ""), "generic" if part.generic else "exact", part.grade)
    if part is None:
        return PartRef(f"{what} {length:g} m", "", "generic", "UNCONFIRMED")
    if part.generic:
        return PartRef(f"{part.number} {length:g} m", "", "generic", part.grade)
    return PartRef(f"{part.number} {length:g} m", "", "family", part.grade)


def medium_part(catalogue: Catalogue, name: str, length_m: float) -> PartRef:
    """The part of one assembly of medium ``name`` at its ordered length (connectors: no length)."""
    m: Medium | None = catalogue.media.get(name)
    if m is None:
        return PartRef(name or "(none)", "", "generic", "UNCONFIRMED")
    if m.shape in ("connector", "cartridge"):
        p = m.part
        return PartRef(p.number, p.opn, "generic" if p.generic else "exact", p.grade) if p else PartRef(name)
    return _at_length(m.part, m.parts, m.opns, length_m, m.description)


def cord_part(cord: Cord, length_m: float) -> PartRef:
    return _at_length(cord.part, cord.parts, cord.opns, length_m, cord.description)


def module_part(t: Transceiver) -> PartRef:
    """A module's part (a generic module's BOM line says which cage form it fills)."""
    p = t.part
    return PartRef(p.number, p.opn, "generic" if p.generic else "exact", p.grade)


def device_part(name: str, model: DeviceModel) -> PartRef:
    p = model.part
    if p is None:
        return PartRef(f"{name} ({model.description})", "", "generic", "UNCONFIRMED")
    return PartRef(p.number, p.opn, "generic" if p.generic else "exact", p.grade)


def ordered_length(catalogue: Catalogue, name: str, length_m: float) -> float:
    """A routed length rounded up to the next stock length of the medium (transceiver media: of
    its fibre cord); the routed length, to the centimetre, when none is long enough."""
    m = catalogue.media.get(name)
    if m is None:
        return round(length_m, 2)
    stock = catalogue.cords[m.cord].stock_lengths_m if m.shape == "transceiver" else m.stock_lengths_m
    for s in sorted(stock):
        if s >= length_m - 1e-9:
            return s
    return round(length_m, 2)


def link_part(catalogue: Catalogue, medium: str, stock_m: float) -> str:
    """The orderable part a cabling row names: the cable assembly at its ordered length, or a
    transceiver link's fibre cord ('' for a medium the catalogue lacks)."""
    m = catalogue.media.get(medium)
    if m is None:
        return ""
    if m.shape == "transceiver":
        return cord_part(catalogue.cords[m.cord], stock_m).number
    return medium_part(catalogue, medium, stock_m).number


def module_number(catalogue: Catalogue, key: str) -> str:
    """A link end's module as a cabling row names it ('' for none; a CPO engine is integrated)."""
    t = catalogue.transceivers.get(key)
    if t is None:
        return ""
    if t.integrated:
        return "(integrated)"
    return module_part(t).number
