"""Site geometry: racks laid out in rows, device placement, and cable routes.

A cable between racks runs up from its device to the tray above the rack, along the tray
(Manhattan: along the row, then across rows), and down to the other device, plus a service
loop; inside one rack it runs between the two devices' units plus a smaller loop. Between two
racks of one side-by-side bay (``site.routes``) it runs sideways through the racks at its
devices' height: the distance along the row, the height between the two devices, and the
route's loop, never up to the tray.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat

import numpy as np

from ..fabric import Device, Fabric
from ..fabric.device_arrays import device_column
from ..findings import BuildError, error
from ..model.site import Placement, Site
from ..util.suggest import did_you_mean


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
        # Side-by-side bays: rack index -> bay (-1: none), and each bay's service loop.
        self._bay = np.full(len(fabric.racks), -1, dtype=np.int64)
        self._bay_slack = np.array(
            [r.slack_m if r.slack_m is not None else site.in_rack_slack_m for r in site.routes], dtype=np.float64
        )
        for k, route in enumerate(site.routes):
            self._add_bay(k, route.racks)
        self._bays = bool(site.routes)
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
        # Devices made per blueprint entry (BuildContext.groups, shared): what 'follow' reads.
        self.groups: dict[str, list[int]] = {}
        self._follow_cache: dict[tuple, list[int]] = {}

    def _add_bay(self, k: int, names: list[str]) -> None:
        """Mark the racks of route ``k``; they must exist, be one row's consecutive positions, and
        belong to no other bay (located errors at the rack's name)."""
        path = ("site", "routes", k, "racks")
        by_name = {rack.name: rack for rack in self.fabric.racks}
        racks = []
        for m, name in enumerate(names):
            rack = by_name.get(name)
            if rack is None:
                close = did_you_mean(name, sorted(by_name), "racks")
                raise BuildError([error("unknown-reference", f"no rack named {name!r} in site.rows", path + (m,), close)])
            if self._bay[rack.index] >= 0:
                where = (
                    "listed twice in this route"
                    if self._bay[rack.index] == k
                    else f"already in site.routes[{self._bay[rack.index]}]"
                )
                raise BuildError([error("site-route", f"rack {name} is {where}", path + (m,))])
            self._bay[rack.index] = k
            racks.append(rack)
        rows = sorted({r.row for r in racks})
        positions = sorted(r.position for r in racks)
        if len(rows) > 1 or positions != list(range(positions[0], positions[0] + len(positions))):
            raise BuildError(
                [
                    error(
                        "site-route",
                        f"a side-by-side route joins neighbouring racks of one row; {', '.join(names)} are "
                        + (f"in rows {', '.join(rows)}" if len(rows) > 1 else f"positions {', '.join(map(str, positions))}"),
                        path,
                        "one route per run of consecutive racks in a row (a gap or an aisle needs the tray)",
                    )
                ]
            )

    def place(self, placement: Placement, slot: int, height_u: int, path: tuple) -> tuple[int, int]:
        """(rack index, lowest U) of the device in placement slot ``slot``."""
        racks = self._racks_of(placement, path)
        rack_pos = placement.first_rack + slot // placement.per_rack
        u = placement.first_u + (slot % placement.per_rack) * (height_u + placement.gap_u)
        if rack_pos > len(racks):
            if placement.follow is not None:
                what = f"the racks of {', '.join(placement.follow)} number {len(racks)}"
                hint = "raise per_rack, start at an earlier rack, or follow more groups"
            else:
                what = f"row {placement.row} has {len(racks)} racks"
                hint = f"add racks to row {placement.row}, raise per_rack, or start at an earlier rack"
            raise BuildError([error("rack-space", f"{what}; this group needs rack {rack_pos}", path, hint)])
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
        return racks[rack_pos - 1], u

    def place_slots(self, placement: Placement, slots: list[int], height_u: int, path: tuple) -> list[tuple[int, int]] | None:
        """``place`` of each slot, or None when one of them does not fit (``place`` then says why)."""
        racks = self._racks_of(placement, path)
        first, per, step, u0 = placement.first_rack, placement.per_rack, height_u + placement.gap_u, placement.first_u
        top, count = self.site.rack_units, len(racks)
        out = []
        for slot in slots:
            rack_pos, u = first + slot // per, u0 + (slot % per) * step
            if rack_pos > count or u + height_u - 1 > top:
                return None
            out.append((racks[rack_pos - 1], u))
        return out

    def place_columns(self, placement: Placement, count: int, height_u: int, path: tuple) -> tuple[list[int], list[int]]:
        """``place`` for slots 0..count-1 at once, as a rack column and a lowest-U column: bounds
        are checked on the extreme slots only. Built by repetition in C, so a rack's devices share
        one int object for its index (10^6 nodes: no boxed int per device)."""
        if count == 0:
            return [], []
        self.place(placement, count - 1, height_u, path)  # the furthest rack
        self.place(placement, min(count, placement.per_rack) - 1, height_u, path)  # the highest unit
        racks = self._racks_of(placement, path)
        first = placement.first_rack - 1
        per, step, u0 = placement.per_rack, height_u + placement.gap_u, placement.first_u
        filled = -(-count // per)  # racks the slots reach, the last one maybe part full
        rack_col = list(chain.from_iterable(map(repeat, list(racks[first : first + filled]), repeat(per))))
        u_col = list(range(u0, u0 + per * step, step)) * filled
        del rack_col[count:], u_col[count:]
        return rack_col, u_col

    def _racks_of(self, placement: Placement, path: tuple) -> Sequence[int]:
        """The rack indices a placement fills, in order: a row's racks, or the followed groups'."""
        if placement.follow is not None:
            return self._followed(tuple(placement.follow), path)
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
        first = self._rack_index[(placement.row, 1)]  # racks of a row are consecutive
        return range(first, first + self._row_len[placement.row])

    def _followed(self, names: tuple[str, ...], path: tuple) -> list[int]:
        """The racks the devices of the named groups occupy, each once, in the devices' order
        (group by group). Cached per group sizes: a leaf tier asks once per leaf."""
        groups = self.groups
        try:  # the key in C: a tier asks once per switch, and ``names`` can list 10^2 groups
            key = (names, tuple(map(len, map(groups.__getitem__, names))))
        except KeyError:
            i, name = next((i, name) for i, name in enumerate(names) if name not in groups)
            hint = "groups built so far: " + (", ".join(sorted(groups)) or "none") + " (list node groups before fabrics)"
            raise BuildError(
                [error("unknown-reference", f"placement follows {name!r}, which is not built yet", path + ("follow", i), hint)]
            ) from None
        found = self._follow_cache.get(key)
        if found is None:
            devices, seen = self.fabric.devices, set()
            found = []
            for name in names:
                for dev in groups[name]:
                    rack = devices[dev].rack
                    if rack >= 0 and rack not in seen:
                        seen.add(rack)
                        found.append(rack)
            self._follow_cache[key] = found
        return found

    def cable_length(self, a: Device, b: Device) -> float:
        """The routed length between two devices (the definition ``lengths`` computes in bulk)."""
        if a.rack < 0 or b.rack < 0:
            return 0.0
        top = self._top_m
        ya, yb = self._port_height(a.u, a.height_u), self._port_height(b.u, b.height_u)
        if a.rack == b.rack:
            return abs(ya - yb) + self._in_rack_slack_m
        ka, kb = self.fabric.racks[a.rack], self.fabric.racks[b.rack]
        bay = self._bay[a.rack]
        if bay >= 0 and bay == self._bay[b.rack]:
            return abs(ka.x_m - kb.x_m) + abs(ya - yb) + float(self._bay_slack[bay])
        horizontal = abs(ka.x_m - kb.x_m) + abs(ka.y_m - kb.y_m)
        return (top - ya) + (top - yb) + self._trays_m + horizontal + self._slack_m

    def _port_height(self, u: int, height_u: int) -> float:
        """Height of a device's ports above the floor: the middle of its units, or the middle of
        the rack for a 0U device (a vertical PDU runs the rack's height in the rear)."""
        return (u - 1 + height_u / 2) * self._unit_m if height_u else self._top_m / 2

    def lengths(self, a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> list[float]:
        """``cable_length(devices[a[i]], devices[b[i]])`` for every i, in bulk (numpy): the same
        arithmetic in the same order, so the same floats."""
        if not len(self._rack_x):  # a site without racks: nothing is placed
            return [0.0] * len(a)
        rack, y = self._device_positions()
        ia, ib = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        ra, rb, ya, yb = rack[ia], rack[ib], y[ia], y[ib]
        placed = (ra >= 0) & (rb >= 0)
        sa, sb = np.where(placed, ra, 0), np.where(placed, rb, 0)
        horizontal = np.abs(self._rack_x[sa] - self._rack_x[sb]) + np.abs(self._rack_y[sa] - self._rack_y[sb])
        across = (self._top_m - ya) + (self._top_m - yb) + self._trays_m + horizontal + self._slack_m
        inside = np.abs(ya - yb) + self._in_rack_slack_m
        if self._bays:  # side-by-side bays: sideways at the devices' height, no tray
            bay_a, bay_b = self._bay[sa], self._bay[sb]
            beside = (bay_a >= 0) & (bay_a == bay_b)
            sideways = np.abs(self._rack_x[sa] - self._rack_x[sb]) + np.abs(ya - yb) + self._bay_slack[np.maximum(bay_a, 0)]
            across = np.where(beside, sideways, across)
        return _shared_floats(np.where(placed, np.where(ra == rb, inside, across), 0.0))

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
            rack[done:total] = device_column(new, "rack")
            u, height = device_column(new, "u"), device_column(new, "height_u")
            # _port_height of each, the same operations in the same order (the same floats)
            y[done:total] = np.where(height != 0, (u - 1 + height / 2) * self._unit_m, self._top_m / 2)
            self._placed = total
        return self._dev_rack, self._dev_y


def _shared_floats(values: np.ndarray) -> list[float]:
    """``values.tolist()`` with one float object per distinct value (a fabric's 10^6 lengths take
    a few hundred values: 24 bytes a link less). A -0.0 would be folded into 0.0 by the dict, so
    an array with one keeps its own floats."""
    out: list[float] = values.tolist()
    if np.signbit(values).any():
        return out
    seen: dict[float, float] = {}
    return list(map(seen.setdefault, out, out))
