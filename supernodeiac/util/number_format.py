"""Figures for output: bandwidth as people read it and numbers rounded the same everywhere.

Shared by the renderers (BOM, diagrams) and ``snc explain``; they live apart from any one of them.
"""

from __future__ import annotations


def gbps_text(gbps: float, sep: str = "", suffix: str = "") -> str:
    """Bandwidth for people: 400G, 3.2T, 1.64P (decimal units, as link rates are quoted).

    ``sep`` and ``suffix`` make the long form: ``gbps_text(26000, " ", "b/s")`` is ``26 Tb/s``.
    """
    for scale, unit in ((1e6, "P"), (1e3, "T")):
        if gbps >= scale:
            return f"{gbps / scale:.4g}{sep}{unit}{suffix}"
    return f"{gbps:.4g}{sep}G{suffix}"


def rounded(x: float) -> float | int:
    """A figure for output: an int when whole, else rounded, so sums print the same everywhere."""
    r = round(x, 3)
    return int(r) if r == int(r) else r


_IRREGULAR = {"leaf": "leaves", "chassis": "chassis"}


def plural(noun: str, count: float = 2) -> str:
    """``noun`` for ``count`` things: 'spine' for 1, 'spines' otherwise ('leaves', 'switches')."""
    if count == 1:
        return noun
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"
