"""Columns of cable-end text for the per-link lists (``cabling/links.csv``, ``cabling/cables.csv``).

A list of 10^6 rows made row by row costs a few microseconds of bytecode per row; made a column
at a time it costs a gather per column: each device's and each port's text is held once in an
object array (:class:`EndTable`), and a column of a block of links is that array indexed by the
links' devices or port rows (numpy, no bytecode per cell). Rows are then one ``",".join`` each
over ``zip`` of the columns, in C.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ..fabric import Fabric
from .csv_safe import csv_cells_clean


def pick(values: Sequence[Any] | np.ndarray, index: np.ndarray) -> list[Any]:
    """``[values[i] for i in index]``, as a numpy gather."""
    table = values if isinstance(values, np.ndarray) else objects(values)
    return table[index].tolist()


def objects(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array of ``values`` (strings stay strings, tuples are not split into columns)."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


class CleanTables:
    """Whether each table's cells are all clean CSV cells (``csv_safe.csv_cells_clean``), tested
    once per table and kept: a column gathered from a clean table is clean, so the CSV writer
    need test only the columns made afresh."""

    def __init__(self) -> None:
        self._found: dict[int, tuple[np.ndarray, bool]] = {}

    def __call__(self, table: np.ndarray | None) -> bool:
        """``table``'s answer; None (a column made afresh): False, the writer tests it."""
        if table is None:
            return False
        found = self._found.get(id(table))
        if found is None or found[0] is not table:
            found = self._found[id(table)] = (table, csv_cells_clean(table.tolist()))
        return found[1]


def tuples(cls: type, *columns: Iterable[Any]) -> list[Any]:
    """``[cls(*row) for row in zip(*columns)]`` for a NamedTuple ``cls``, made in C: a NamedTuple's
    ``__new__`` is ``tuple.__new__(cls, values)``, called here without the Python frame per row."""
    return list(map(partial(tuple.__new__, cls), zip(*columns, strict=True)))


class EndTable:
    """The text of every device and every port of a Fabric, as object arrays to gather from.

    Devices: ``row``, ``rack``, ``u`` (the unit as text, '' for 0U), ``short_u`` (a label's
    unit: '0' for 0U), ``name``; ``rack_index`` and ``u_int`` as int arrays. Ports: a (device,
    port)'s row in the flat per-port arrays ``os`` (OS name), ``physical`` (as printed) and
    ``cage`` (its cage as printed) is :meth:`rows`.
    """

    def __init__(self, fabric: Fabric) -> None:
        racks = fabric.racks
        devices = fabric.devices
        row, rack, u, name = [], [], [], []
        for d in devices:
            r = racks[d.rack] if d.rack >= 0 else None
            row.append(r.row if r else "")
            rack.append(r.name if r else "")
            u.append(str(d.u) if d.u else "")
            name.append(d.name)
        self.row, self.rack, self.u, self.name = objects(row), objects(rack), objects(u), objects(name)
        self.short_u = objects([x or "0" for x in u])
        self.rack_index = np.array([d.rack if d.rack >= 0 and racks[d.rack] else -1 for d in devices], dtype=np.int64)
        self.u_int = np.array([d.u for d in devices], dtype=np.int64)
        self._arrays = fabric.device_arrays()
        os_names: list[str] = []
        physical: list[str] = []
        cage: list[str] = []
        for model in self._arrays.models:
            layout = fabric.layouts[model]
            labels = [layout.cage_label(c) for c in range(len(layout.cages))]
            os_names.extend(layout.names)
            physical.extend(layout.physical_names)
            cage.extend(labels[c] for c in layout.port_cages)
        self.os, self.physical, self.cage = objects(os_names), objects(physical), objects(cage)

    def rows(self, device: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Each (device, port)'s row in the per-port arrays."""
        return self._arrays.rows(device, port)


def end_table(fabric: Fabric, memo: dict[str, Any]) -> EndTable:
    """The Fabric's EndTable, once per render context (``memo``: the context's)."""
    found = memo.get("cable_end_table")
    if found is None or found[0] is not fabric or found[1] != len(fabric.devices):
        found = memo["cable_end_table"] = (fabric, len(fabric.devices), EndTable(fabric))
    table: EndTable = found[2]
    return table


def joined_lines(raw: list[str], lines: int, width: int, join: str) -> list[str] | None:
    """Each of ``raw`` (a label's ``lines`` lines joined by NUL, as one format call makes them)
    with its lines joined by ``join`` instead, in a few scans over the whole column; None when a
    cell holds another NUL or a line break (a field held one) or a line is wider than ``width``
    (it would be wrapped): the caller then makes that column cell by cell."""
    if not raw:
        return []
    text = "\n".join(raw)
    if text.count("\0") != len(raw) * (lines - 1) or text.count("\n") != len(raw) - 1:
        return None
    if max(map(len, text.replace("\0", "\n").split("\n"))) > width:
        return None
    return text.replace("\0", join).split("\n")
