"""Rack space: no two devices share a rack unit, and every device fits inside its rack.

Boards in a chassis (``Device.chassis``) take the chassis's units, not their own, and a 0U device
(a vertical PDU in the rear) takes none: both are left out here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import numpy as np

from ..fabric import Device
from ..fabric.device_arrays import device_column
from ..findings import Finding, error
from .base import CHECKS, CheckContext


def _clean(ctx: CheckContext) -> bool:
    """No device out of its rack and no two overlapping, decided in bulk (numpy): the devices
    sorted by rack and lowest unit, each compared with the one below it, as the walk does."""
    devices = ctx.fabric.devices
    rack, low, height = (device_column(devices, attr) for attr in ("rack", "u", "height_u"))
    high = low + height - 1
    placed = (rack >= 0) & (device_column(devices, "chassis") < 0) & (height > 0)  # as _occupies
    rack, low, high = rack[placed], low[placed], high[placed]
    if ((low < 1) | (high > ctx.blueprint.site.rack_units)).any():
        return False
    order = np.lexsort((high, low, rack))
    rack, low, high = rack[order], low[order], high[order]
    return not ((rack[1:] == rack[:-1]) & (low[1:] <= high[:-1])).any()


def _occupies(d: Device) -> bool:
    """Whether a device takes rack units of its own (not a board in a chassis, not 0U)."""
    return d.chassis < 0 and d.height_u > 0


@CHECKS.register("rack-space")
def check_rack_space(ctx: CheckContext) -> Iterator[Finding]:
    if _clean(ctx):
        return
    f = ctx.fabric
    top = ctx.blueprint.site.rack_units
    by_rack: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for d in f.devices:
        if d.rack >= 0 and _occupies(d):
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
