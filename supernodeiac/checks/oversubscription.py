"""Oversubscription measured on the Fabric: down vs up bandwidth of every Clos switch.

Three figures per tier, and what each is held to:

* **measured**: the worst switch of the tier, down vs up bandwidth on its cabled links. Worse than
  the declared ratio is an error (``oversubscription``). A switch of a partly filled SU or pod
  measures better than declared; that is growth room, not a defect.
* **designed**: the down ports the switch uses in the planned SU / pod shape (``facts.sizing``)
  against the uplinks cabled on it (counted on the links). More than ``planning.ratio_tolerance``
  away from the declared ratio, in either direction, is a warning (``ratio-intent``) with both
  figures, unless the uplinks are what the declared ratio asks for and only whole ports round it.
* the seeds' planning rule that tiers above the leaves stay non-blocking
  (``planning.upper_tiers_nonblocking``): a warning (``nonblocking-upper-tiers``) for a spine tier
  declared or designed above 1:1.

The end-to-end worst case is the product of the tiers' worst measured ratios (traffic that climbs
every tier).
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from ..facts.oversubscription import TIER_NAMES, designed_ratios, measure_tiers, ratio_text
from ..findings import Finding, error, info, warning
from ..model.base import ratio_value
from ..model.blueprint import built_fabrics
from .base import CHECKS, CheckContext


@CHECKS.register("oversubscription")
def check_oversubscription(ctx: CheckContext) -> Iterator[Finding]:
    planning = ctx.blueprint.planning
    for i, spec, name in built_fabrics(ctx.blueprint):
        if spec.kind != "fat-tree" or name not in ctx.fabric.facts:
            continue
        path = ("scaleout", i, "oversubscription")
        measured = measure_tiers(ctx.fabric, name)
        worst = measured.worst
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
                    f"{name}: {tier_name} tier measures {ratio_text(r)}, declared {declared[tier]}",
                    path + (tier_name,),
                    "add uplinks or declare the ratio the design has",
                )
        designed = designed_ratios(ctx.fabric.facts[name], measured)
        yield from _intent(name, designed, planning.ratio_tolerance, ("scaleout", i))
        if planning.upper_tiers_nonblocking:
            yield from _upper_tiers(name, designed, ("scaleout", i))
        design_text = "; ".join(
            f"{t} {ratio_text(d['designed'])} ({d['down_used']} down in use : {d['uplinks']} up)"
            for t, d in designed.items()
            if d["designed"] is not None
        )
        yield info(
            "oversubscription",
            f"{name}: measured {', '.join(parts)}; end-to-end worst case {ratio_text(end_to_end)}"
            + (f"; designed {design_text}" if design_text else ""),
            path,
        )


def _intent(name: str, designed: dict[str, dict], tolerance: float, path: tuple) -> Iterator[Finding]:
    for tier_name, d in designed.items():
        ratio, target = d["designed"], ratio_value(d["declared"])
        if ratio is None or d["uplinks"] == d["sized"]:
            continue  # the declared ratio's own uplink count: whatever rounding to whole ports gives
        if abs(ratio - target) <= target * Fraction(tolerance).limit_denominator(1000):
            continue
        direction = "fewer" if ratio > target else "more"
        where = ("uplinks", tier_name) if d["explicit"] else ("oversubscription", tier_name)
        yield warning(
            "ratio-intent",
            f"{name}: {tier_name} tier is designed at {ratio_text(ratio)} ({d['down_used']} down ports in use : "
            f"{d['uplinks']} uplinks), declared {d['declared']}: {direction} uplinks than the declared ratio's "
            f"{d['sized']}",
            path + where,
            f"uplinks.{tier_name}: {d['sized']} for {d['declared']}, or declare oversubscription.{tier_name}: "
            f'"{ratio_text(ratio)}"',
        )


def _upper_tiers(name: str, designed: dict[str, dict], path: tuple) -> Iterator[Finding]:
    d = designed.get("spine")
    if d is None:
        return
    ratio, declared = d["designed"], ratio_value(d["declared"])
    worst = max(declared, ratio if ratio is not None else Fraction(1))
    if worst <= 1:
        return
    yield warning(
        "nonblocking-upper-tiers",
        f"{name}: the spine tier is oversubscribed ({ratio_text(worst)}); the planning rule keeps tiers above the leaves "
        "non-blocking",
        path + ("oversubscription", "spine"),
        'oversubscribe at the leaves instead (oversubscription: {leaf: "N:1", spine: "1:1"}), '
        "or set planning.upper_tiers_nonblocking: false to accept it",
    )
