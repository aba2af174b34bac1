"""``snc explain``: the sizing report (``report``) and its sections, one module each (``clos``, ``collectives``,
``dragonfly``, ``ports``, ``rails``, ``racks``) registered in ``base``'s registries."""

from __future__ import annotations

# Registration: importing a section module registers it (they import the registries from .base).
from . import clos, collectives, dragonfly, mesh, ports, racks, rails  # noqa: F401
from .report import explain, fabric_stats, min_cut_bisection, to_text

__all__ = ["explain", "fabric_stats", "min_cut_bisection", "to_text"]
