"""The hardware catalogue: built-in YAML data, overridable per blueprint.

Data files (``data/``): ``devices.yaml`` (what each device is: kind, ports, topology figures),
``facility.yaml`` (site defaults for rack budgets, and the power shelves, PDUs, console servers
and chassis), ``physical.yaml`` (every physical fact of a built-in device, one entry per device:
part number, cages per port role, console ports, power, weight, cooling, power shelves; laid
into the device's entry by one loader, ``_with_physical``), ``media.yaml``, ``transceivers.yaml``,
``cords.yaml`` and ``lines.yaml`` (what links them), ``asics.yaml`` (switch chips and their capacity).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from ruamel.yaml import YAML

from .types import Catalogue, Cord, DeviceModel, Medium, Part, PortGroup, PortMap, Transceiver

__all__ = [
    "SECTIONS",
    "Catalogue",
    "Cord",
    "DeviceModel",
    "Medium",
    "Part",
    "PortGroup",
    "PortMap",
    "Transceiver",
    "builtin_data",
    "catalogue_version",
    "merged",
]

# Catalogue sections a blueprint may override entry by entry (``lines`` is merged per transport).
SECTIONS = ("devices", "media", "transceivers", "cords", "port_maps", "asics")


def catalogue_version() -> str:
    """The shipped catalogue's identity: the first 12 hex digits of the SHA-256 over its data files
    (name and bytes, in name order), so two installs that size hardware the same say the same."""
    import hashlib

    digest = hashlib.sha256()
    root = resources.files(__package__) / "data"
    names = sorted(p.name for p in root.iterdir() if p.name.endswith(".yaml"))
    for name in names:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return f"{digest.hexdigest()[:12]} ({len(names)} data files)"


@lru_cache(maxsize=1)
def builtin_data() -> dict[str, Any]:
    """The shipped catalogue as plain data (parsed once per process)."""
    yaml = YAML(typ="safe")
    root = resources.files(__package__) / "data"

    def load(name: str) -> Any:
        return yaml.load((root / name).read_text(encoding="utf-8")) or {}

    devices = dict(load("devices.yaml"))
    facility = load("facility.yaml")
    for name, entry in facility["devices"].items():
        if name in devices:
            raise ValueError(f"catalogue device {name!r} is in both devices.yaml and facility.yaml")
        devices[name] = entry
    return {
        "devices": devices,
        "media": load("media.yaml"),
        "transceivers": load("transceivers.yaml"),
        "cords": load("cords.yaml"),
        "lines": load("lines.yaml"),
        "physical": load("physical.yaml"),
        "port_maps": load("port_maps.yaml"),
        "asics": load("asics.yaml"),
        "facility": facility["site"],
    }


def merged(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Built-in data with a blueprint's ``catalogue:`` entries laid over it, entry by entry.

    An override with the name of a built-in entry replaces that entry's keys it names and
    keeps the rest, so a blueprint can change one figure (a reach, a power) without copying
    the whole entry. The physical facts of built-in devices (physical.yaml: part numbers, cage
    tops, faceplate numbering, power, weight, cooling, console ports) are laid in afterwards
    wherever the entry does not set them. ``facility`` is one entry: the keys given replace the
    built-in ones.
    """
    base = builtin_data()
    overrides = overrides or {}
    out: dict[str, Any] = {}
    for section in SECTIONS:
        entries = {name: dict(entry) for name, entry in base[section].items()}
        for name, entry in (overrides.get(section) or {}).items():
            entries[name] = {**entries.get(name, {}), **entry}
        out[section] = entries
    out["facility"] = {**base["facility"], **(overrides.get("facility") or {})}
    lines = {transport: dict(rates) for transport, rates in base["lines"].items()}
    for transport, rates in (overrides.get("lines") or {}).items():
        lines[transport] = {**lines.get(transport, {}), **(rates or {})}
    out["lines"] = lines
    for name, facts in base["physical"].items():
        if name in out["devices"]:
            out["devices"][name] = _with_physical(out["devices"][name], facts)
    return out


def _with_physical(entry: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with the physical facts it lacks: its ``part`` and its ``physical`` (power,
    weight, cooling, power shelves), the ports only the facility uses (``extra_ports``: a switch's
    serial console, appended after the device's own so that no port index moves, unless the entry
    already has ports of that role), and per port role the cage keys (the sources given for them
    join the device's sources)."""
    entry = dict(entry)
    for key in ("part", "physical"):
        if key in facts and key not in entry:
            entry[key] = facts[key]
    ports = entry.get("ports")
    extra = facts.get("extra_ports") or []
    if isinstance(ports, list) and extra:
        roles = {_role(g) for g in ports}
        ports = entry["ports"] = [*ports, *(g for g in extra if g.get("role") not in roles)]
    by_role = facts.get("ports") or {}
    if not isinstance(ports, list) or not by_role:
        return entry
    extra_sources: list[Any] = []
    new_ports = []
    seen: set[str] = set()
    for group in ports:
        role = _role(group)
        fill = by_role.get(role) if role is not None and role not in seen else None
        if role is not None:
            seen.add(role)  # the first group of a role gets the role's facts
        if isinstance(group, dict) and isinstance(fill, dict):
            group = dict(group)
            for key, value in fill.items():
                if key == "sources":
                    extra_sources.extend(value)
                elif key not in group:
                    group[key] = value
        new_ports.append(group)
    entry["ports"] = new_ports
    if extra_sources and isinstance(entry.get("sources"), list):
        entry["sources"] = [*entry["sources"], *extra_sources]
    return entry


def _role(group: Any) -> str | None:
    """A port group's role when it is one (the schema reports anything else at its line, after
    this merge: a role given as a list or a mapping must not stop the merge first)."""
    role = group.get("role") if isinstance(group, dict) else None
    return role if isinstance(role, str) else None
