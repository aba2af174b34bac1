"""Stock lengths: what a cable is ordered as (kept for callers of ``render.stock``)."""

from __future__ import annotations

from .parts import ordered_length

__all__ = ["ordered_length"]
