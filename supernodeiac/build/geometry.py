"""Site geometry: racks laid out in rows, device placement, and cable routes.

A cable between racks runs up from its device to the tray above the rack, along the tray
(Manhattan: along the row, then across rows), and down to the other device, plus a service
loop; inside one rack it runs between the two devices' units plus a smaller loop.
"""

from __future__ import annotations

from collections.abc import Callable

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
        # The site's figures as plain floats: cable_length runs once per link.
        self._unit_m = site.unit_height_m
        self._trays_m = 2 * site.tray_height_m  # up to the tray and back down
        self._slack_m = site.slack_m
        self._in_rack_slack_m = site.in_rack_slack_m
        # Rack centres by rack index (every rack is made above): read per link by ``lengths``.
        self._rack_x = [k.x_m for k in fabric.racks]
        self._rack_y = [k.y_m for k in fabric.racks]

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
        return self.length_fn()(a, b)

    def lengths(self, a: list[Device], b: list[Device]) -> list[float]:
        """``cable_length(a[i], b[i])`` for every i: the same arithmetic in the same order (so the
        same floats), as comprehensions rather than a Python call per link."""
        uh, top, trays = self._unit_m, self._top_m, self._trays_m
        slack, in_rack = self._slack_m, self._in_rack_slack_m
        rx, ry = self._rack_x, self._rack_y
        ra, rb = [d.rack for d in a], [d.rack for d in b]
        # Ports sit at the middle of a device's height.
        ya = [(d.u - 1 + d.height_u / 2) * uh for d in a]
        yb = [(d.u - 1 + d.height_u / 2) * uh for d in b]
        return [
            0.0
            if i < 0 or j < 0
            else abs(y - z) + in_rack
            if i == j
            else (top - y) + (top - z) + trays + (abs(rx[i] - rx[j]) + abs(ry[i] - ry[j])) + slack
            for i, y, j, z in zip(ra, ya, rb, yb)
        ]

    def length_fn(self) -> Callable[[Device, Device], float]:
        """``cable_length`` with the site's figures bound as locals: it runs once per link."""
        racks = self.fabric.racks
        uh, top, trays = self._unit_m, self._top_m, self._trays_m
        slack, in_rack = self._slack_m, self._in_rack_slack_m

        def length(a: Device, b: Device) -> float:
            ra, rb = a.rack, b.rack
            if ra < 0 or rb < 0:
                return 0.0
            # Ports sit at the middle of a device's height.
            ya = (a.u - 1 + a.height_u / 2) * uh
            yb = (b.u - 1 + b.height_u / 2) * uh
            if ra == rb:
                return abs(ya - yb) + in_rack
            ka, kb = racks[ra], racks[rb]
            horizontal = abs(ka.x_m - kb.x_m) + abs(ka.y_m - kb.y_m)
            return (top - ya) + (top - yb) + trays + horizontal + slack

        return length
