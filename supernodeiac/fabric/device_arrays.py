"""Per-device and per-port facts of a Fabric as numpy arrays, for checks that work in bulk.

A check that asks "what is the cage (role, port count) at this end of every link" for 10^6
links indexes these arrays instead of walking Device objects: devices map to a model id, and
each model's ports lie end to end in flat per-port tables, so the port ``p`` of device ``d``
is row ``port_base[model[d]] + p``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from operator import attrgetter

import numpy as np

from ..catalog.types import PortGroup
from .devices import Device, PortLayout


class DeviceArrays:
    __slots__ = ("models", "model", "total", "port_base", "_layouts", "_tables", "_cages")

    def __init__(self, devices: Sequence[Device], layouts: Mapping[str, PortLayout]) -> None:
        models = list(map(attrgetter("model"), devices))
        self.models: list[str] = sorted(set(models))
        model_id = {m: i for i, m in enumerate(self.models)}
        self._layouts = [layouts[m] for m in self.models]
        self.model = np.fromiter(map(model_id.__getitem__, models), dtype=np.int64, count=len(models))  # device -> model id
        per_model = np.array([layout.total for layout in self._layouts], dtype=np.int64)
        self.total = per_model[self.model] if len(self.models) else np.zeros(0, dtype=np.int64)  # device -> ports
        self.port_base = np.concatenate(([0], np.cumsum(per_model)[:-1])).astype(np.int64)  # model id -> first row
        self._tables: dict[Hashable, tuple[np.ndarray, list]] = {}
        self._cages: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def ports_in_range(self, device: np.ndarray, port: np.ndarray) -> bool:
        """Whether every (device, port) names a port the device has."""
        return not len(port) or bool(((port >= 0) & (port < self.total[device])).all())

    def rows(self, device: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Row of each (device, port) in the flat per-port tables (ports must be in range)."""
        return self.port_base[self.model[device]] + port

    def port_table(self, key: Hashable, value: Callable[[PortGroup], Hashable]) -> tuple[np.ndarray, list]:
        """(row -> value id, value id -> value) of ``value(port group)`` over every port of every
        model; made once per ``key`` and kept."""
        found = self._tables.get(key)
        if found is None:
            ids: dict = {}  # value -> id, in first-seen order
            column = [ids.setdefault(v, len(ids)) for layout in self._layouts for v in map(value, layout.port_groups)]
            found = self._tables[key] = (np.array(column, dtype=np.int64), list(ids))
        return found

    def layout_table(self, key: Hashable, value: Callable[[PortLayout, PortGroup], Hashable]) -> tuple[np.ndarray, list]:
        """As :meth:`port_table`, with ``value(layout, group)`` (facts of the model, e.g. its kind)."""
        found = self._tables.get(key)
        if found is None:
            ids: dict = {}
            column = [ids.setdefault(value(layout, g), len(ids)) for layout in self._layouts for g in layout.port_groups]
            found = self._tables[key] = (np.array(column, dtype=np.int64), list(ids))
        return found

    def port_column(self, key: Hashable, values: Callable[[PortLayout], Sequence[int]]) -> np.ndarray:
        """``values(layout)[port]`` for every port row of every model, as one int array (made once per key)."""
        found = self._tables.get(key)
        if found is None:
            column = [v for layout in self._layouts for v in values(layout)]
            found = self._tables[key] = (np.array(column, dtype=np.int64), [])
        return found[0]

    def _cage_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(port row -> cage index in its device, port row -> position in the cage, device -> its
        first global cage id, model id -> cages per device)."""
        if self._cages is None:
            cage = self.port_column("cage", lambda layout: layout.port_cages)
            position = self.port_column("position", lambda layout: layout.port_positions)
            per_model = np.array([len(layout.cages) for layout in self._layouts], dtype=np.int64)
            per_device = per_model[self.model] if len(self.models) else np.zeros(0, dtype=np.int64)
            base = np.concatenate(([0], np.cumsum(per_device)[:-1])).astype(np.int64)
            self._cages = (cage, position, base, per_model)
        return self._cages

    def cage_ids(self, device: np.ndarray, port: np.ndarray) -> np.ndarray:
        """A Fabric-wide id of the cage of each (device, port): the device's first cage id plus the
        port's cage index in its device (ports must be in range)."""
        cage, _, base, _ = self._cage_tables()
        return base[device] + cage[self.rows(device, port)]

    def positions(self, device: np.ndarray, port: np.ndarray) -> np.ndarray:
        """0-based position of each (device, port) in its cage."""
        return self._cage_tables()[1][self.rows(device, port)]

    @property
    def cage_count(self) -> int:
        """Cages of every device together (the range of ``cage_ids``)."""
        _, _, base, per_model = self._cage_tables()
        return int(base[-1] + per_model[self.model[-1]]) if len(base) else 0

    def cage_device(self) -> np.ndarray:
        """Global cage id -> its device."""
        _, _, _, per_model = self._cage_tables()
        per_device = per_model[self.model] if len(self.models) else np.zeros(0, dtype=np.int64)
        return np.repeat(np.arange(len(per_device), dtype=np.int64), per_device)


def device_column(devices: Sequence[Device], attr: str, dtype: type = np.int64) -> np.ndarray:
    """One attribute of every device as an array, read in C (``map`` of an attrgetter): the one
    pass over 10^6 devices a bulk check makes."""
    return np.fromiter(map(attrgetter(attr), devices), dtype=dtype, count=len(devices))


def unique_ints(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (a sort and a compare: np.unique is slower on large int arrays)."""
    if not len(values):
        return values
    s = np.sort(values)
    return s[np.concatenate(([True], s[1:] != s[:-1]))]
