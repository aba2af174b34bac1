"""The hardware catalogue: built-in YAML data, overridable per blueprint.

Data files (``data/``): ``devices.yaml`` and ``media.yaml`` (the parts), ``physical.yaml`` (each
device's power, weight and cooling, laid over its entry as ``physical:``), ``facility.yaml``
(site defaults for rack budgets, and the power shelves, PDUs, console servers and chassis).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from ruamel.yaml import YAML

from .types import Catalogue, DeviceModel, Medium, PortGroup

__all__ = ["Catalogue", "DeviceModel", "Medium", "PortGroup", "builtin_data", "merged"]


@lru_cache(maxsize=1)
def builtin_data() -> dict[str, Any]:
    """The shipped catalogue as plain data (parsed once per process)."""
    yaml = YAML(typ="safe")
    root = resources.files(__package__) / "data"

    def load(name: str) -> Any:
        return yaml.load((root / name).read_text(encoding="utf-8"))

    devices = dict(load("devices.yaml"))
    facility = load("facility.yaml")
    for name, entry in facility["devices"].items():
        if name in devices:
            raise ValueError(f"catalogue device {name!r} is in both devices.yaml and facility.yaml")
        devices[name] = entry
    for name, physical in load("physical.yaml").items():
        if name in devices and "physical" not in devices[name]:
            physical = dict(physical)
            # Ports only the facility uses (a switch's serial console), appended after the
            # device's own ports so that no existing port index moves.
            extra = physical.pop("extra_ports", [])
            devices[name] = {**devices[name], "physical": physical, "ports": list(devices[name]["ports"]) + extra}
    return {"devices": devices, "media": load("media.yaml"), "facility": facility["site"]}


def merged(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Built-in data with a blueprint's ``catalogue:`` entries laid over it, entry by entry.

    An override with the name of a built-in entry replaces that entry's keys it names and
    keeps the rest, so a blueprint can change one figure (a reach, a power) without copying
    the whole entry. ``facility`` is one entry: the keys given replace the built-in ones.
    """
    base = builtin_data()
    out: dict[str, Any] = {}
    for section in ("devices", "media"):
        entries = {name: dict(entry) for name, entry in base[section].items()}
        for name, entry in ((overrides or {}).get(section) or {}).items():
            entries[name] = {**entries.get(name, {}), **entry}
        out[section] = entries
    out["facility"] = {**base["facility"], **((overrides or {}).get("facility") or {})}
    return out
