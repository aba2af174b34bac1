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
from itertools import repeat
from string import Formatter
from typing import Any

import numpy as np

from ..fabric import Fabric
from ..fabric.cable_naming import positional_format
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


Entry = tuple[np.ndarray, str] | list[str]  # a column: gathered (a table, the name of its index), or made


class Joiner:
    """The pieces of a block's rows: the block's columns (:data:`Entry`), neighbours gathered by
    the same index from clean tables joined into one piece (``"R01,A,12,gpu-0001"``, one cell
    per table), a table of such joined text made once per run of tables and kept. A row is then
    one ``",".join`` of a few pieces instead of every cell, and the cells are gathered once per
    run. :meth:`CsvWriter.text_columns` takes the pieces with their widths (cells per piece)."""

    def __init__(self) -> None:
        self.clean = CleanTables()
        self._joined: dict[tuple[int, ...], tuple[tuple[np.ndarray, ...], np.ndarray]] = {}

    def __call__(self, entries: Sequence[Entry], index: dict[str, np.ndarray]) -> tuple[list[list[str]], list[bool], list[int]]:
        """(pieces, whether each is known clean, cells in each) of one block."""
        pieces: list[list[str]] = []
        known: list[bool] = []
        widths: list[int] = []
        run: list[np.ndarray] = []
        key = ""

        def flush() -> None:
            if run:
                pieces.append(pick(self._join(tuple(run)), index[key]))
                known.append(True)
                widths.append(len(run))
                run.clear()

        for entry in entries:
            if isinstance(entry, tuple) and self.clean(entry[0]):
                if entry[1] != key:
                    flush()
                run.append(entry[0])
                key = entry[1]
                continue
            flush()
            pieces.append(pick(entry[0], index[entry[1]]) if isinstance(entry, tuple) else entry)
            known.append(False)
            widths.append(1)
        flush()
        return pieces, known, widths

    def _join(self, tables: tuple[np.ndarray, ...]) -> np.ndarray:
        if len(tables) == 1:
            return tables[0]
        ids = tuple(map(id, tables))
        found = self._joined.get(ids)
        if found is None or any(x is not y for x, y in zip(found[0], tables, strict=True)):
            found = self._joined[ids] = (tables, objects(list(map(",".join, zip(*(t.tolist() for t in tables), strict=True)))))
        return found[1]


def tuples(cls: type, *columns: Iterable[Any]) -> list[Any]:
    """``[cls(*row) for row in zip(*columns)]`` for a NamedTuple ``cls``, made in C: a NamedTuple's
    ``__new__`` is ``tuple.__new__(cls, values)``, called here without the Python frame per row."""
    return list(map(partial(tuple.__new__, cls), zip(*columns, strict=True)))


class EndTable:
    """The text of every device and every port of a Fabric, as object arrays to gather from.

    Devices: ``row``, ``rack``, ``u`` (the unit as text, '' for 0U), ``short_u`` (a label's
    unit: '0' for 0U), ``name``; ``rack_index`` and ``u_int`` (ints). Ports: a (device,
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
        # Python ints, gathered as objects: a device's number is one object however many cables
        # hold it (an int array's tolist makes one per cable; rack numbers pass the small-int cache).
        self.rack_index = objects([d.rack if d.rack >= 0 and racks[d.rack] else -1 for d in devices])
        self.u_int = objects([d.u for d in devices])
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


# A short label's fields of a device (the local end's, or far_ + the far end's), each from an
# EndTable column (a label's unit: short_u); the others (number, fabric, cable, port, far_port)
# are the cable's and its plugs'.
_DEVICE_FIELDS = {"row": "row", "rack": "rack", "u": "short_u", "device": "name"}


class ShortLines:
    """naming.short_label's lines of many cable ends at once: one column of text per line.

    A line of plain fields (no format spec or conversion: the defaults are) is cut into runs: text
    and one end's device fields (``{rack} U{u} {device} ``), made once per device and gathered,
    and the cable's fields, taken as they are; each line is then one join per cable of a few
    pieces. Any other line is formatted cable by cable with positional fields, as cable_rows does.
    """

    def __init__(self, templates: Sequence[str], fields: tuple[str, ...], ends: EndTable) -> None:
        self.fields, self.ends = fields, ends
        self.formats = [positional_format(t, fields) for t in templates]
        self.plans = [self._plan(t) for t in templates]

    def _plan(self, template: str) -> list[tuple[str, Any]] | None:
        """The line's pieces: ("text", str), ("cable", field), or ("near" / "far", per-device text
        table); None when a field has a spec or conversion, or is not a short-label field."""
        try:
            parsed = list(Formatter().parse(template))
        except ValueError:
            return None
        runs: list[tuple[str, list[tuple[str, str]]]] = []  # (kind, [(kind, text or field), ...])

        def add(kind: str, x: str) -> None:
            if runs:
                last, parts = runs[-1]
                if (kind == "text" and last != "cable") or (kind in ("near", "far") and last in (kind, "text")):
                    parts.append((kind, x))
                    runs[-1] = (last if kind == "text" else kind, parts)
                    return
            runs.append((kind, [(kind, x)]))

        for literal, name, spec, conv in parsed:
            if literal:
                add("text", literal)
            if name is None:
                continue
            if spec or conv or name not in self.fields:
                return None
            field = name.removeprefix("far_")
            if field not in _DEVICE_FIELDS:
                add("cable", name)
            else:
                add("far" if name.startswith("far_") else "near", field)
        out: list[tuple[str, Any]] = []
        for kind, parts in runs:
            if kind == "text":
                out.append(("text", "".join(x for _, x in parts)))
            elif kind == "cable":
                out.append(("cable", parts[0][1]))  # one field: a cable run never grows
            else:
                out.append((kind, self._device_text(parts)))
        return out

    def _device_text(self, parts: list[tuple[str, str]]) -> np.ndarray:
        """A run's text for every device: its literal text and its device fields in order."""
        columns = [repeat(x) if kind == "text" else getattr(self.ends, _DEVICE_FIELDS[x]).tolist() for kind, x in parts]
        return objects(list(map("".join, zip(*columns))) if len(self.ends.name) else [])

    def widest(self, cable: dict[str, int]) -> list[int | None]:
        """The most characters each line can take, given the most each cable field takes (None:
        not known, a line formatted cable by cable): a line whose bound fits needs no wrapping."""
        out: list[int | None] = []
        for plan in self.plans:
            if plan is None:
                out.append(None)
                continue
            sizes = [
                len(x) if kind == "text" else cable[x] if kind == "cable" else max(map(len, x), default=0) for kind, x in plan
            ]
            out.append(sum(sizes))
        return out

    def __call__(self, near: np.ndarray, far: np.ndarray, cable: dict[str, list[str]]) -> list[list[str]]:
        """Each line's text of the cable ends at the ``near`` devices facing the ``far`` ones;
        ``cable``: the cable fields' columns (number, fabric, cable, port, far_port)."""
        n = len(near)
        out: list[list[str]] = []
        for plan, fmt in zip(self.plans, self.formats, strict=True):
            if plan is None:
                out.append(list(map(fmt, *self._all_fields(near, far, cable))))
                continue
            if not plan:
                out.append([""] * n)
                continue
            pieces: list[Any] = []
            for kind, x in plan:
                if kind == "text":
                    pieces.append(repeat(x, n))
                elif kind == "cable":
                    pieces.append(cable[x])
                else:
                    pieces.append(pick(x, near if kind == "near" else far))
            out.append(pieces[0] if len(pieces) == 1 and plan[0][0] != "text" else list(map("".join, zip(*pieces))))
        return out

    def _all_fields(self, near: np.ndarray, far: np.ndarray, cable: dict[str, list[str]]) -> list[list[str]]:
        e = self.ends
        values = []
        for name in self.fields:
            field = name.removeprefix("far_")
            if field in _DEVICE_FIELDS:
                values.append(pick(getattr(e, _DEVICE_FIELDS[field]), far if name.startswith("far_") else near))
            else:
                values.append(cable[name])
        return values
