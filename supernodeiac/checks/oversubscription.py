"""Oversubscription measured on the Fabric: down vs up bandwidth of every Clos switch.

The worst switch of each tier is compared with the tier's declared ratio; the end-to-end
worst case is the product of the tiers' worst ratios (traffic that climbs every tier).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction

from ..fabric import Fabric
from ..findings import Finding, error, info
from ..model.base import format_fraction, ratio_value
from . import CHECKS, CheckContext

TIER_NAMES = {1: "leaf", 2: "spine", 3: "core"}


def measure(fabric: Fabric, name: str) -> dict[int, Fraction]:
    """Worst down:up ratio per tier (tiers with uplinks only) of one fabric, from its links."""
    down: defaultdict[int, float] = defaultdict(float)
    up: defaultdict[int, float] = defaultdict(float)
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
        if ta < tb:
            up[a] += gbps
            down[b] += gbps
        else:
            up[b] += gbps
            down[a] += gbps
    worst: dict[int, Fraction] = {}
    for dev, u in up.items():
        tier = devices[dev].tier
        if tier == 0 or u == 0:
            continue
        r = Fraction(down.get(dev, 0.0) / u).limit_denominator(1000)
        if r > worst.get(tier, Fraction(0)):
            worst[tier] = r
    return worst


def ratio_text(r: Fraction) -> str:
    """'1:N' with N = down/up; below 1 on partly filled switches (more up than down)."""
    return f"1:{format_fraction(r)}" if r.denominator == 1 else f"1:{float(r):.3g}"


@CHECKS.register("oversubscription")
def check_oversubscription(ctx: CheckContext) -> Iterator[Finding]:
    for i, spec in enumerate(ctx.blueprint.scaleout):
        if spec.kind != "fat-tree" or spec.name not in ctx.fabric.facts:
            continue
        path = ("scaleout", i, "oversubscription")
        worst = measure(ctx.fabric, spec.name)
        declared = {1: spec.oversubscription.leaf, 2: spec.oversubscription.spine}
        end_to_end = Fraction(1)
        parts = []
        for tier in sorted(worst):
            r = worst[tier]
            end_to_end *= max(r, Fraction(1))
            target = ratio_value(declared[tier])
            tier_name = TIER_NAMES[tier]
            parts.append(f"{tier_name} {ratio_text(r)}")
            if r > target:
                yield error(
                    "oversubscription",
                    f"{spec.name}: {tier_name} tier measures {ratio_text(r)}, declared {declared[tier]}",
                    path + (tier_name,),
                    "add uplinks or declare the ratio the design has",
                )
        yield info(
            "oversubscription", f"{spec.name}: measured {', '.join(parts)}; end-to-end worst case {ratio_text(end_to_end)}", path
        )
