"""The hardware catalogue: built-in YAML data, overridable per blueprint."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from ruamel.yaml import YAML

from .types import Catalogue, DeviceModel, Medium, PortGroup, PortMap

__all__ = ["Catalogue", "DeviceModel", "Medium", "PortGroup", "PortMap", "builtin_data", "merged"]


@lru_cache(maxsize=1)
def builtin_data() -> dict[str, Any]:
    """The shipped catalogue as plain data (parsed once per process)."""
    yaml = YAML(typ="safe")
    root = resources.files(__package__) / "data"
    return {
        "devices": yaml.load((root / "devices.yaml").read_text(encoding="utf-8")),
        "media": yaml.load((root / "media.yaml").read_text(encoding="utf-8")),
        "port_maps": yaml.load((root / "port_maps.yaml").read_text(encoding="utf-8")),
    }


def merged(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Built-in data with a blueprint's ``catalogue:`` entries laid over it, entry by entry.

    An override with the name of a built-in entry replaces that entry's keys it names and
    keeps the rest, so a blueprint can change one figure (a reach, a power) without copying
    the whole entry.
    """
    base = builtin_data()
    out: dict[str, Any] = {}
    for section in ("devices", "media", "port_maps"):
        entries = {name: dict(entry) for name, entry in base[section].items()}
        for name, entry in ((overrides or {}).get(section) or {}).items():
            entries[name] = {**entries.get(name, {}), **entry}
        out[section] = entries
    return out
