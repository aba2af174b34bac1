"""Site geometry: racks laid out in rows, device placement, and cable routes.

A cable between racks runs up from its device to the tray above the rack, along the tray
(Manhattan: along the row, then across rows), and down to the other device, plus a service
loop; inside one rack it runs between the two devices' units plus a smaller loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..fabric import Device, Fabric
from ..findings import BuildError, error
from ..model.site import Placement, Site


class Geometry:
    def __init__(self, site: Site, fabric: Fabric) -> None:
        self.site = site
        self.fabric = fabric
        self._rack_index: dict[tuple[str, int], int] = {}
        self._row_len: dict[str, int] = {}
        for i, row in enumerate(site.rows):
            row_index = row.position if row.position is not None else i
            self._row_len[row.name] = row.racks
            for pos in range(1, row.racks + 1):
                name = site.rack_name.format(row=row.name, rack=pos)
                rack = fabric.add_rack(
                    name, row.name, row_index, pos, (pos - 1) * site.rack_pitch_m, row_index * site.row_pitch_m
                )
                self._rack_index[(row.name, pos)] = rack.index
        self._top_m = site.rack_units * site.unit_height_m
        # The site's figures as plain floats.
        self._unit_m = site.unit_height_m
        self._trays_m = 2 * site.tray_height_m  # up to the tray and back down
        self._slack_m = site.slack_m
        self._in_rack_slack_m = site.in_rack_slack_m
        # Rack centres by rack index (every rack is made above): read per link by ``lengths``.
        self._rack_x = np.array([k.x_m for k in fabric.racks], dtype=np.float64)
        self._rack_y = np.array([k.y_m for k in fabric.racks], dtype=np.float64)
        self._dev_rack = np.zeros(0, dtype=np.int64)  # device -> rack index, the first _placed rows filled
        self._dev_y = np.zeros(0, dtype=np.float64)  # device -> height of its ports
        self._placed = 0

    def place(self, placement: Placement, slot: int, height_u: int, path: tuple) -> tuple[int, int]:
        """(rack index, lowest U) of the device in placement slot ``slot``."""
        if placement.row not in self._row_len:
            known = sorted(self._row_len)
            raise BuildError(
                [
                    error(
                        "unknown-row",
                        f"no row named {placement.row!r} in site.rows",
                        path + ("row",),
                        "rows: " + ", ".join(known),
                    )
                ]
            )
        rack_pos = placement.first_rack + slot // placement.per_rack
        u = placement.first_u + (slot % placement.per_rack) * (height_u + placement.gap_u)
        if rack_pos > self._row_len[placement.row]:
            raise BuildError(
                [
                    error(
                        "rack-space",
                        f"row {placement.row} has {self._row_len[placement.row]} racks; this group needs rack {rack_pos}",
                        path,
                        f"add racks to row {placement.row}, raise per_rack, or start at an earlier rack",
                    )
                ]
            )
        if u + height_u - 1 > self.site.rack_units:
            raise BuildError(
                [
                    error(
                        "rack-space",
                        f"{placement.per_rack} devices of {height_u}U from U{placement.first_u} do not fit a "
                        f"{self.site.rack_units}U rack",
                        path + ("per_rack",),
                        "lower per_rack or first_u",
                    )
                ]
            )
        return self._rack_index[(placement.row, rack_pos)], u

    def place_many(self, placement: Placement, count: int, height_u: int, path: tuple) -> list[tuple[int, int]]:
        """``place`` for slots 0..count-1 at once: bounds are checked on the extreme slots only."""
        if count == 0:
            return []
        self.place(placement, count - 1, height_u, path)  # the furthest rack
        self.place(placement, min(count, placement.per_rack) - 1, height_u, path)  # the highest unit
        first = self._rack_index[(placement.row, placement.first_rack)]  # racks of a row are consecutive
        per, step, u0 = placement.per_rack, height_u + placement.gap_u, placement.first_u
        return [(first + slot // per, u0 + (slot % per) * step) for slot in range(count)]

    def cable_length(self, a: Device, b: Device) -> float:
        """The routed length between two devices (the definition ``lengths`` computes in bulk)."""
        if a.rack < 0 or b.rack < 0:
            return 0.0
        uh, top = self._unit_m, self._top_m
        # Ports sit at the middle of a device's height.
        ya = (a.u - 1 + a.height_u / 2) * uh
        yb = (b.u - 1 + b.height_u / 2) * uh
        if a.rack == b.rack:
            return abs(ya - yb) + self._in_rack_slack_m
        ka, kb = self.fabric.racks[a.rack], self.fabric.racks[b.rack]
        horizontal = abs(ka.x_m - kb.x_m) + abs(ka.y_m - kb.y_m)
        return (top - ya) + (top - yb) + self._trays_m + horizontal + self._slack_m

    def lengths(self, a: Sequence[int], b: Sequence[int]) -> list[float]:
        """``cable_length(devices[a[i]], devices[b[i]])`` for every i, in bulk (numpy): the same
        arithmetic in the same order, so the same floats."""
        if not len(self._rack_x):  # a site without racks: nothing is placed
            return [0.0] * len(a)
        rack, y = self._device_positions()
        ia, ib = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
        ra, rb, ya, yb = rack[ia], rack[ib], y[ia], y[ib]
        placed = (ra >= 0) & (rb >= 0)
        sa, sb = np.where(placed, ra, 0), np.where(placed, rb, 0)
        horizontal = np.abs(self._rack_x[sa] - self._rack_x[sb]) + np.abs(self._rack_y[sa] - self._rack_y[sb])
        across = (self._top_m - ya) + (self._top_m - yb) + self._trays_m + horizontal + self._slack_m
        inside = np.abs(ya - yb) + self._in_rack_slack_m
        return np.where(placed, np.where(ra == rb, inside, across), 0.0).tolist()

    def _device_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """(rack index, height of the ports above the floor) of every device, as arrays; devices
        are placed when made, so each is read once. Builders add devices between calls (the
        management network one switch per rack), so the arrays grow by doubling, not by copying."""
        devices = self.fabric.devices
        done, total = self._placed, len(devices)
        if done < total:
            rack, y = self._dev_rack, self._dev_y
            if total > len(rack):
                size = max(total, 2 * len(rack))
                rack = self._dev_rack = np.concatenate((rack[:done], np.zeros(size - done, dtype=np.int64)))
                y = self._dev_y = np.concatenate((y[:done], np.zeros(size - done, dtype=np.float64)))
            new = devices[done:]
            rack[done:total] = [d.rack for d in new]
            uh = self._unit_m
            y[done:total] = [(d.u - 1 + d.height_u / 2) * uh for d in new]  # ports sit mid-height
            self._placed = total
        return self._dev_rack, self._dev_y
