"""Down vs up bandwidth of every Clos switch, measured on the Fabric's links: the worst ratio per
tier, the uplinks each tier has, and the designed ratio against the builder's sizing facts. The
``oversubscription`` check holds these to the blueprint's intent; ``snc explain`` reports them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..fabric import Fabric
from ..model.base import format_fraction

TIER_NAMES = {1: "leaf", 2: "spine", 3: "core"}


@dataclass
class TierMeasure:
    """Per tier (with uplinks) of one fabric: the worst down:up bandwidth ratio and the fewest and
    most uplinks a switch of the tier has."""

    worst: dict[int, Fraction] = field(default_factory=dict)
    uplinks: dict[int, tuple[int, int]] = field(default_factory=dict)


def measure_tiers(fabric: Fabric, name: str) -> TierMeasure:
    down: defaultdict[int, float] = defaultdict(float)
    up: defaultdict[int, float] = defaultdict(float)
    ups: defaultdict[int, int] = defaultdict(int)
    devices = fabric.devices
    tiers = [d.tier for d in devices]
    t = fabric.links
    # Per spec, decided once: whether its links are this fabric's, and their rate.
    wanted = [spec.fabric == name for spec in t.specs]
    gbps_of = [spec.gbps for spec in t.specs]
    for a, b, s in zip(t.a, t.b, t.spec):
        if not wanted[s]:
            continue
        ta, tb = tiers[a], tiers[b]
        if ta == tb:
            continue
        gbps = gbps_of[s]
        lo, hi = (a, b) if ta < tb else (b, a)
        up[lo] += gbps
        ups[lo] += 1
        down[hi] += gbps
    out = TierMeasure()
    for dev, u in up.items():
        tier = devices[dev].tier
        if tier == 0 or u == 0:
            continue
        r = Fraction(down.get(dev, 0.0) / u).limit_denominator(1000)
        if r > out.worst.get(tier, Fraction(0)):
            out.worst[tier] = r
        n = ups[dev]
        lo_hi = out.uplinks.get(tier)
        out.uplinks[tier] = (n, n) if lo_hi is None else (min(lo_hi[0], n), max(lo_hi[1], n))
    return out


def measure(fabric: Fabric, name: str) -> dict[int, Fraction]:
    """Worst down:up ratio per tier (tiers with uplinks only) of one fabric, from its links."""
    return measure_tiers(fabric, name).worst


def ratio_text(r: Fraction) -> str:
    """'N:1', down:up as engineers write it (N = down/up); N below 1 on partly filled switches
    (more up than down: '0.531:1')."""
    return f"{format_fraction(r)}:1" if r.denominator == 1 else f"{float(r):.3g}:1"


def designed_ratios(facts: Mapping[str, Any], measured: TierMeasure) -> dict[str, dict]:
    """Per tier name: declared, designed (down ports in use : fewest uplinks cabled) and the
    uplinks the declared ratio asks for, from the builder's sizing facts and the links."""
    out = {}
    for tier, tier_name in TIER_NAMES.items():
        sizing = facts.get("sizing", {}).get(tier_name)
        if sizing is None or tier not in measured.uplinks:
            continue
        uplinks = measured.uplinks[tier][0]
        if tier in (1, 2) and facts.get("leaf_sets"):
            # Leaves of several models (and in 3 tiers pods of several shapes): the sizing is the
            # most oversubscribed set's, with its own uplinks (the fewest over all switches of the
            # tier belongs to another set's shape).
            uplinks = int(sizing["uplinks"])
        used = int(sizing["down_used"])
        out[tier_name] = {
            "declared": sizing["declared"],
            "down_used": used,
            "uplinks": uplinks,
            # In bandwidth: ports in use : uplinks, times down over up port speed (a leaf of two speeds).
            "designed": Fraction(used, uplinks) * Fraction(str(sizing.get("speed_ratio", "1"))) if uplinks else None,
            "sized": int(sizing["sized"]),
            "explicit": bool(sizing["explicit"]),
        }
    return out
