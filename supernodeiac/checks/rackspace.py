"""Rack space: no two devices share a rack unit, and every device fits inside its rack."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ..findings import Finding, error
from . import CHECKS, CheckContext


@CHECKS.register("rack-space")
def check_rack_space(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    top = ctx.blueprint.site.rack_units
    by_rack: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for d in f.devices:
        if d.rack >= 0:
            by_rack[d.rack].append((d.u, d.u + d.height_u - 1, d.index))
    for rack_index in sorted(by_rack):
        rack = f.racks[rack_index].name
        occupied = sorted(by_rack[rack_index])
        for low, high, dev in occupied:
            if low < 1 or high > top:
                d = f.devices[dev]
                yield error(
                    "rack-space",
                    f"{d.name} occupies U{low}-U{high} of {rack}, a {top}U rack",
                    d.origin,
                    "lower its first_u, or raise site.rack_units for taller racks",
                )
        for (_, prev_high, prev), (low, high, dev) in zip(occupied, occupied[1:]):
            if low <= prev_high:
                a, b = f.devices[prev], f.devices[dev]
                yield error(
                    "rack-space",
                    f"{b.name} (U{low}-U{high}) overlaps {a.name} (up to U{prev_high}) in rack {rack}",
                    b.origin,
                    "move one of them (placement first_u / per_rack / gap_u) or the management switch (management.u)",
                )
