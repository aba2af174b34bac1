"""Rack space: no two devices share a rack unit, and every device fits inside its rack."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import numpy as np

from ..findings import Finding, error
from . import CHECKS, CheckContext


def _clean(ctx: CheckContext) -> bool:
    """No device out of its rack and no two overlapping, decided in bulk (numpy): the devices
    sorted by rack and lowest unit, each compared with the one below it, as the walk does."""
    devices = ctx.fabric.devices
    rack = np.array([d.rack for d in devices], dtype=np.int64)
    low = np.array([d.u for d in devices], dtype=np.int64)
    high = low + np.array([d.height_u for d in devices], dtype=np.int64) - 1
    placed = rack >= 0
    rack, low, high = rack[placed], low[placed], high[placed]
    if ((low < 1) | (high > ctx.blueprint.site.rack_units)).any():
        return False
    order = np.lexsort((high, low, rack))
    rack, low, high = rack[order], low[order], high[order]
    return not ((rack[1:] == rack[:-1]) & (low[1:] <= high[:-1])).any()


@CHECKS.register("rack-space")
def check_rack_space(ctx: CheckContext) -> Iterator[Finding]:
    if _clean(ctx):
        return
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
