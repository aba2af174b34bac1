"""Cabling lists: ``cabling/cables.csv``, one row per physical cable (what a crew pulls, labels and
orders: a twin-port DAC is one row, a splitter one row with its legs, a fibre cord one row), and
``cabling/links.csv``, one row per link (and connector) for tools that key on ports.

cables.csv's rows are ``facts/cable_plan``'s items, so its row count is the BOM's cable + fibre
count; orthogonal connectors and cartridges have their own sheets (``connectors/``). Each row
carries a short number (stable under growth), both ends (a multi-port plug by its cage, the ports
it carries listed; a splitter's legs listed), the part, and two labels per end: the short label
(``naming.short_label``, lines of at most ``naming.label_width`` characters) and the TIA-606 form.

links.csv: beside the OS port names each end carries its cage as printed (``OSFP 3``) and its physical port
(``OSFP 3 port 2``), and each row the orderable part (the cable assembly at its ordered length, or
the fibre cord of a transceiver link with the module at each end), and one label text per end
(``naming.end_label``, TIA-606 practice: the local end, then the far end). The first 21 columns
are what they have always been; the rest follow them.

Fast: both lists are made a block of rows at a time as columns (``cable_columns``: text gathered
from per-device, per-port and per-spec tables, labels formatted a column at a time), and a block
with nothing to quote or neutralise is joined and written as text; only the others go through
``csv.writer`` (10^6 rows); the label sheets take their one-link cables' short labels from the
same columns (``label_columns``). cable_rows, the row-by-row pass, makes what the workbook reads
of a cable, and the label sheets' and cables.csv's twin-port cables and splitters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from operator import add, call, itemgetter
from string import Formatter
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from ..catalog.parts import link_part, module_number, ordered_length
from ..fabric import Fabric
from ..fabric.cable_naming import cable_id_format, positional_format
from ..fabric.end_labels import EndLabels
from ..facts.bom import fibres_per_link
from ..facts.cable_plan import cable_ids, cable_numbers, cable_plan
from ..facts.cage_plan import SPLITTER, assemblies, link_cages
from ..model.blueprint import Blueprint
from ..model.common import SHORT_LABEL_FIELDS
from .base import RENDERERS, SUBSETS, Artifacts, RenderContext, RowSelection, Stream
from .cable_columns import EndTable, Entry, Joiner, ShortLines, end_table, objects, pick, tuples
from .csv_safe import CsvWriter

COLUMNS = [
    "cable_id",
    "label",
    "fabric",
    "kind",
    "a_row",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_row",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "medium",
    "fibre",
    "length_m",
    "routed_m",
    "lane_gbps",
    "lanes",
    "gbps",
    "tier",
    "a_cage",
    "a_physical",
    "b_cage",
    "b_physical",
    "part",
    "a_transceiver",
    "b_transceiver",
    "fibres",
    "a_label",
    "b_label",
]

# cables.csv: one row per physical cable (facts/cable_plan); a_/b_ are the plug ends (a splitter's
# head at A), ports as printed.
CABLE_COLUMNS = [
    "cable_no",
    "cable_id",
    "label",
    "fabric",
    "tier",
    "type",
    "medium",
    "part",
    "length_m",
    "routed_m",
    "links",
    "a_row",
    "a_rack",
    "a_u",
    "a_device",
    "a_cage",
    "a_ports",
    "a_transceiver",
    "b_row",
    "b_rack",
    "b_u",
    "b_device",
    "b_cage",
    "b_ports",
    "b_transceiver",
    "legs",
    "fibre",
    "cord",
    "a_short_label",
    "b_short_label",
    "a_label",
    "b_label",
    "link_ids",
]


def _fmt(x: float) -> str:
    return f"{x:g}"


@RENDERERS.register("cabling")
def stream_cabling(ctx: RenderContext) -> dict[str, Stream]:
    """The registered renderer: streamed, so the lists of a 131,072-GPU design are written (or
    compared) as they are made. Rows are joined by commas where nothing needs quoting or neutralising."""
    return {
        "cabling/cables.csv": Stream(lambda: _stream_cables(ctx)),
        "cabling/links.csv": Stream(lambda: CsvWriter(COLUMNS).stream_columns(_link_blocks(ctx))),
    }


@SUBSETS.register("cabling")
def stream_cabling_rows(ctx: RenderContext, rows: RowSelection) -> dict[str, Stream]:
    """The same two lists with the selected rows only (``snc diff``: the rows that may differ)."""
    return {
        "cabling/cables.csv": Stream(
            lambda: CsvWriter(CABLE_COLUMNS).stream(r.text for r in cable_rows(ctx, rows.cables, with_ends=False))
        ),
        "cabling/links.csv": Stream(lambda: CsvWriter(COLUMNS).stream_columns(_link_blocks(ctx, rows.links))),
    }


def render_cabling(ctx: RenderContext) -> Artifacts:
    """The cabling list as bytes, for library callers (the pipeline streams it)."""
    return {path: bytes(data) for path, data in stream_cabling(ctx).items()}


BLOCK = 16_384  # rows made a column at a time: a few MB of text, so a 10^6-row list streams


def _link_blocks(ctx: RenderContext, keep: Any = None) -> Iterator[tuple[list[list[str]], list[bool], list[int]]]:
    """links.csv's rows in cable-ID order, a block at a time as columns (COLUMNS), for
    :meth:`CsvWriter.stream_columns`; with ``keep`` (a bool per link position), those links' rows only."""
    order = np.asarray(ctx.fabric.links.id_order(), dtype=np.int64)
    if keep is not None:
        order = order[np.asarray(keep, dtype=bool)[order]]
    make = _LinkColumns(ctx)
    for at in range(0, len(order), BLOCK):
        yield make(order[at : at + BLOCK])


class _LinkText:
    """What both lists gather per link and per spec, made once per render (``ctx.memo``): the
    links' IDs; per spec its fabric, kind, tier, medium, type, fibre, rates, module parts and
    fibres; per link its ordered length and part (once per distinct medium and length) and its
    routed length (once per distinct length), as an index into tables of their text."""

    def __init__(self, ctx: RenderContext) -> None:
        f, cat = ctx.fabric, ctx.catalogue
        media = cat.media
        t, arr = f.links, f.links.arrays()
        self.ids = objects(t.ids())
        kinds = {name: f"{m.kind} {m.shape}" for name, m in media.items()}
        fibres = {name: m.fibre for name, m in media.items()}
        rows = [
            (x.fabric, x.kind, x.tier, x.medium, kinds.get(x.medium, ""), fibres.get(x.medium, ""), *_spec_columns(ctx, s))
            for s, x in enumerate(t.specs)
        ]
        spec = [objects([row[k] for row in rows]) for k in range(12)]
        (self.fabric, self.kind, self.tier, self.medium, self.type, self.fibre) = spec[:6]
        (self.lane_gbps, self.lanes, self.gbps, self.a_module, self.b_module, self.fibres) = spec[6:]
        values, routed_at = np.unique(arr.length_m, return_inverse=True)
        self.routed, self.routed_at = objects([f"{x:.2f}" for x in values.tolist()]), routed_at.reshape(-1)
        # The ordered length and part of each link: of its medium at its assembly's length.
        mediums = sorted({x.medium for x in t.specs})
        medium = np.array([mediums.index(x.medium) for x in t.specs], dtype=np.int64)[arr.spec] if len(t) else arr.spec
        lengths, length_at = np.unique(assemblies(f, media).length_m, return_inverse=True)
        keys, stock_at = np.unique(medium * len(lengths) + length_at.reshape(-1), return_inverse=True)
        stock: list[str] = []
        part: list[str] = []
        parts: dict[tuple[str, float], str] = {}
        for m, k in zip((keys // max(len(lengths), 1)).tolist(), (keys % max(len(lengths), 1)).tolist(), strict=True):
            name = mediums[m]
            st = ordered_length(cat, name, lengths[k].item())
            stock.append(_fmt(st))
            if (name, st) not in parts:  # one part per stock length, whatever lengths it is ordered for
                parts[(name, st)] = _part(ctx, name, st)
            part.append(parts[(name, st)])
        self.stock, self.part, self.stock_at = objects(stock), objects(part), stock_at.reshape(-1)


def link_text(ctx: RenderContext) -> _LinkText:
    found = ctx.memo.get("cabling_link_text")
    stamp = (ctx.fabric.links.stamp(), len(ctx.fabric.devices))
    if found is None or found[0] != stamp:
        found = ctx.memo["cabling_link_text"] = (stamp, _LinkText(ctx))
    text: _LinkText = found[1]
    return text


class _LinkColumns:
    """links.csv's columns (COLUMNS) of a block of links: per-device, per-port, per-spec and
    per-link text gathered from tables (cable_columns, _LinkText), labels formatted a column at a
    time, neighbouring gathered columns joined into one piece (cable_columns.Joiner)."""

    def __init__(self, ctx: RenderContext) -> None:
        f = ctx.fabric
        self.arrays, self.ends, self.text = f.links.arrays(), end_table(f, ctx.memo), link_text(ctx)
        self.join = Joiner()
        self.label = cable_id_format(ctx.blueprint.naming.cable_label)  # the cable ID's fields, positionally
        self.end_labels = EndLabels(ctx.blueprint, f).columns  # naming.end_label, per device once

    def __call__(self, order: np.ndarray) -> tuple[list[list[str]], list[bool], list[int]]:
        """The pieces of the links at ``order`` (Joiner: pieces, whether known clean, widths)."""
        arr, e, x = self.arrays, self.ends, self.text
        a, b = arr.a[order], arr.b[order]
        ap, bp = e.rows(a, arr.a_port[order]), e.rows(b, arr.b_port[order])
        index = {"link": order, "a": a, "b": b, "ap": ap, "bp": bp, "spec": arr.spec[order]}
        index["stock"], index["routed"] = x.stock_at[order], x.routed_at[order]
        cid, fabric = pick(x.ids, order), pick(x.fabric, index["spec"])
        a_name, b_name = pick(e.name, a), pick(e.name, b)
        a_port, b_port, a_phys, b_phys = pick(e.os, ap), pick(e.os, bp), pick(e.physical, ap), pick(e.physical, bp)
        a_label, b_label = self.end_labels(a, a_port, a_phys, b, b_port, b_phys, cid)
        entries: list[Entry] = [
            (x.ids, "link"),
            list(map(self.label, fabric, a_name, a_phys, b_name, b_phys)),
            (x.fabric, "spec"),
            (x.kind, "spec"),
            (e.row, "a"),
            (e.rack, "a"),
            (e.u, "a"),
            (e.name, "a"),
            (e.os, "ap"),
            (e.row, "b"),
            (e.rack, "b"),
            (e.u, "b"),
            (e.name, "b"),
            (e.os, "bp"),
            (x.medium, "spec"),
            (x.fibre, "spec"),
            (x.stock, "stock"),
            (x.routed, "routed"),
            (x.lane_gbps, "spec"),
            (x.lanes, "spec"),
            (x.gbps, "spec"),
            (x.tier, "spec"),
            (e.cage, "ap"),
            (e.physical, "ap"),
            (e.cage, "bp"),
            (e.physical, "bp"),
            (x.part, "stock"),
            (x.a_module, "spec"),
            (x.b_module, "spec"),
            (x.fibres, "spec"),
            a_label,
            b_label,
        ]
        return self.join(entries, index)


def _widest(table: np.ndarray) -> int:
    return max(map(len, table.tolist()), default=0)


def _part(ctx: RenderContext, medium: str, stock: float) -> str:
    """The orderable part of a row: the cable assembly at its length, or a transceiver link's fibre cord."""
    return link_part(ctx.catalogue, medium, stock)


def _spec_columns(ctx: RenderContext, s: int) -> tuple[str, str, str, str, str, str]:
    """(lane Gb/s, lanes, Gb/s, A module part, B module part, fibres) of a spec's links."""
    f, cat = ctx.fabric, ctx.catalogue
    spec = f.links.specs[s]
    a_mod = b_mod = fibres = ""
    m = cat.media.get(spec.medium)
    if m is not None and m.shape == "transceiver":
        a_mod, b_mod = _module(ctx, spec.a_module), _module(ctx, spec.b_module)
        fibres = str(fibres_per_link(cat, spec))
    return _fmt(spec.lane_gbps), str(spec.lanes), _fmt(spec.gbps), a_mod, b_mod, fibres


def _module(ctx: RenderContext, key: str) -> str:
    return module_number(ctx.catalogue, key)


# -- one row per physical cable ----------------------------------------------------------------

SHORT_FIELDS = SHORT_LABEL_FIELDS + tuple("far_" + x for x in SHORT_LABEL_FIELDS[3:])
LINE_JOIN = " | "  # between a short label's lines in a CSV cell


class CableEnd(NamedTuple):
    """One plug end of a physical cable: where it is and what its label says."""

    device: int
    rack: int  # rack index (-1: none)
    u: int
    name: str  # the device's
    plug: str  # the port as printed (a multi-port plug: its cage)
    place: str  # "A01 U2 gpu-0001 OSFP 4 port 2": what a pull list shows of it
    short: tuple[str, ...]  # the short label's lines


class CableRow(NamedTuple):
    """A cables.csv row (``text``, CABLE_COLUMNS) and its plug ends (A first, then each leg)."""

    text: list[str]
    ends: list[CableEnd]


class PullEnd(NamedTuple):
    """What a pull list shows of a cable's end (the workbook's)."""

    rack: int
    u: int
    name: str
    plug: str
    place: str
    label: str  # the short label's lines joined by LINE_JOIN


class PullParts(NamedTuple):
    """What a pull list shows of many one-link, non-splitter cables, a column each: each end's
    device, the link's spec and stock (indices into the tables of ``link_text``), and the text."""

    a: np.ndarray
    b: np.ndarray
    spec: np.ndarray
    stock_at: np.ndarray
    number: list[str]
    cid: list[str]
    fabric: list[str]
    a_plug: list[str]
    b_plug: list[str]
    a_label: list[str]  # the short label's lines joined by LINE_JOIN
    b_label: list[str]


class PullCable(NamedTuple):
    """What the workbook's summary and pull lists take of a cable row, held for every row's
    workbook instead of the whole row (about 40 % less memory at 131k; each label joined once)."""

    common: tuple[str, ...]  # the PULL_SHARED columns
    key: tuple[str, str]  # (fabric, tier): its fill
    kind: str  # its type
    ends: tuple[PullEnd, ...]


PULL_SHARED = ("cable_no", "cable_id", "fabric", "tier", "type", "part", "length_m")  # in the pull lists' column order

ROW_LIMIT = 50_000  # cables; past this the workbook is one per row of racks


def pull_cables(ctx: RenderContext, keep: Any = None) -> list[PullCable]:
    """The workbook's PullCables of the cable rows (``keep`` as for :func:`cable_rows`): the
    small workbook's and ``snc diff``'s (the per-row workbooks of a render make their pull lists
    a column at a time, ``workbook._RowPulls``)."""
    return pull_columns(ctx, keep)


def pull_columns(ctx: RenderContext, keep: Any = None) -> list[PullCable]:
    """The PullCables of the cable rows (``keep`` as for :func:`cable_rows`) without cables.csv's
    text: the one-link, non-splitter cables' a block at a time (:meth:`CableColumns.pulls`: no
    cables.csv pieces, TIA-606 labels or joins), the others' by :func:`_cable_pass`, in its order."""
    plan = cable_plan(ctx.fabric, ctx.catalogue)
    items = np.arange(len(plan), dtype=np.int64) if keep is None else np.flatnonzero(np.asarray(keep, dtype=bool))
    simple = simple_cables(plan)
    fast = simple[items]
    if not fast.any():
        return [pull for _, pull in _cable_pass(ctx, keep, _PULLS)]
    columns = CableColumns(ctx)
    out: list[PullCable] = []
    if fast.all():
        for at in range(0, len(items), BLOCK):
            out.extend(columns.pulls(items[at : at + BLOCK]))
        return out
    slow = np.zeros(len(plan), dtype=bool)
    slow[items[~fast]] = True
    others = (pull for _, pull in _cable_pass(ctx, slow, _PULLS))
    for at in range(0, len(items), BLOCK):
        here = fast[at : at + BLOCK]
        made = iter(columns.pulls(items[at : at + BLOCK][here]))
        out.extend([next(made) if x else next(others) for x in here.tolist()])
    return out


def _stream_cables(ctx: RenderContext) -> Iterator[bytes]:
    """cables.csv. (It no longer makes the workbook's PullCables in the same pass: the per-row
    workbooks make their pull lists from the same tables a row of racks at a time, holding no
    PullCable between rows: 390 MB at 131k.)"""
    yield from CsvWriter(CABLE_COLUMNS).stream_columns(_cable_blocks(ctx))


def _cable_blocks(ctx: RenderContext) -> Iterator[tuple[list[list[str]], list[bool], list[int]]]:
    """cables.csv's rows (cable_rows' text, in its order), a block at a time as pieces of columns
    (cable_columns.Joiner), for :meth:`CsvWriter.stream_columns`.

    A cable of one link that is not a splitter (every cable of a RoCE design: a port-to-port
    cord or cable) is made a column at a time (:class:`CableColumns`); the others (twin-port
    cables, splitters) by :func:`_cable_pass`, and a block holding any is merged row by row."""
    f = ctx.fabric
    plan = cable_plan(f, ctx.catalogue)
    simple = simple_cables(plan)
    others = _cable_pass(ctx, ~simple, _TEXT) if not simple.all() else iter(())
    columns = CableColumns(ctx) if simple.any() else None
    for at in range(0, len(plan), BLOCK):
        fast = simple[at : at + BLOCK]
        if columns is not None and fast.all():
            yield columns(np.arange(at, at + len(fast), dtype=np.int64))
            continue
        rows: list[Any] = [None] * len(fast)
        if columns is not None and fast.any():
            picked = np.flatnonzero(fast)
            pieces, _, widths = columns(picked + at)
            cells: list[Any] = []
            for c, w in zip(pieces, widths, strict=True):  # a piece of w cells: clean ones, split at commas
                cells.extend(zip(*(x.split(",") for x in c), strict=True) if w > 1 else [c])
            for n, row in zip(picked.tolist(), zip(*cells, strict=True), strict=True):
                rows[n] = row
        for n in np.flatnonzero(~fast).tolist():
            rows[n], _ = next(others)
        yield [list(c) for c in zip(*rows, strict=True)], [False] * len(CABLE_COLUMNS), [1] * len(CABLE_COLUMNS)


class CableColumns:
    """cables.csv's columns (CABLE_COLUMNS) of a block of one-link, non-splitter cables, and their
    PullCables: _cable_pass's formulas for such a cable (its A end the link's A end, each plug one
    port), text gathered from tables and formatted a column at a time, as _LinkColumns does."""

    def __init__(self, ctx: RenderContext) -> None:
        f, bp = ctx.fabric, ctx.blueprint
        plan = cable_plan(f, ctx.catalogue)
        self.plan, self.arrays, self.heads = plan, f.links.arrays(), plan.links[plan.start[:-1]]
        self.ends, self.text = end_table(f, ctx.memo), link_text(ctx)
        self.join = Joiner()
        self.ids, self.numbers = objects(cable_ids(f, plan)), objects(cable_numbers_of(ctx))
        self.label = cable_id_format(bp.naming.cable_label)
        self.fabric = f
        self.short = ShortLabels(bp, self.ends, self.numbers, self.ids, self.text.fabric)
        self.blank = objects(["", "1"])  # the legs of a one-link cable (none), its link count
        self.places: np.ndarray | None = None
        self.keys: np.ndarray | None = None
        self.ctx = ctx
        self.tia: EndLabels | None = None  # the TIA-606 labels, made when first needed

    def __call__(self, items: np.ndarray) -> tuple[list[list[str]], list[bool], list[int]]:
        """The pieces of the plan's ``items`` (Joiner: pieces, whether known clean, widths)."""
        arr, e, x, plan = self.arrays, self.ends, self.text, self.plan
        first = self.heads[items]
        a, b, s = arr.a[first], arr.b[first], arr.spec[first]
        ap, bp = e.rows(a, arr.a_port[first]), e.rows(b, arr.b_port[first])
        n = len(items)
        index = {"item": items, "link": first, "a": a, "b": b, "ap": ap, "bp": bp, "spec": s}
        index |= {"stock": x.stock_at[first], "routed": x.routed_at[first], "none": np.zeros(n, dtype=np.int64)}
        index["one"] = index["none"] + 1
        number, cid, fabric = pick(self.numbers, items), pick(self.ids, items), pick(x.fabric, s)
        a_name, b_name = pick(e.name, a), pick(e.name, b)
        a_phys, b_phys = pick(e.physical, ap), pick(e.physical, bp)
        a_text = self._short_text(a, b, {"number": number, "fabric": fabric, "cable": cid, "port": a_phys, "far_port": b_phys})
        b_text = self._short_text(b, a, {"number": number, "fabric": fabric, "cable": cid, "port": b_phys, "far_port": a_phys})
        lid = pick(x.ids, first)
        if self.tia is None:  # made on first use: the workbook's pull lists never need them
            self.tia = EndLabels(self.ctx.blueprint, self.fabric)
        long_a, long_b = self.tia.columns(a, pick(e.os, ap), a_phys, b, pick(e.os, bp), b_phys, lid)
        cords = plan.cords[items]
        cord: Entry = (self.blank, "none")
        if (cords > 1).any():
            cord = [f"{c}/{k}" if k > 1 else "" for c, k in zip(plan.cord[items].tolist(), cords.tolist(), strict=True)]
        entries: list[Entry] = [
            (self.numbers, "item"),
            (self.ids, "item"),
            list(map(self.label, fabric, a_name, a_phys, b_name, b_phys)),
            (x.fabric, "spec"),
            (x.tier, "spec"),
            (x.type, "spec"),
            (x.medium, "spec"),
            (x.part, "stock"),
            (x.stock, "stock"),
            (x.routed, "routed"),
            (self.blank, "one"),
            (e.row, "a"),
            (e.rack, "a"),
            (e.u, "a"),
            (e.name, "a"),
            (e.cage, "ap"),
            (e.physical, "ap"),
            (x.a_module, "spec"),
            (e.row, "b"),
            (e.rack, "b"),
            (e.u, "b"),
            (e.name, "b"),
            (e.cage, "bp"),
            (e.physical, "bp"),
            (x.b_module, "spec"),
            (self.blank, "none"),
            (x.fibre, "spec"),
            cord,
            a_text,
            b_text,
            long_a,
            long_b,
            (x.ids, "link"),
        ]
        return self.join(entries, index)

    def pulls(self, items: np.ndarray) -> list[PullCable]:
        """The PullCables of the plan's ``items`` (``snc diff``'s workbooks: the slim rows its two
        sides share), from :meth:`pull_parts`."""
        c = self.pull_parts(items)
        a_end = (c.a, pick(self.ends.name, c.a), c.a_plug, c.a_label)
        b_end = (c.b, pick(self.ends.name, c.b), c.b_plug, c.b_label)
        return self._pulls(c.spec, c.stock_at, c.number, c.cid, c.fabric, a_end, b_end)

    def pull_parts(self, items: np.ndarray) -> PullParts:
        """What a pull list shows of the plan's ``items``, a column each (:class:`PullParts`)."""
        arr, e, x = self.arrays, self.ends, self.text
        first = self.heads[items]
        a, b, s = arr.a[first], arr.b[first], arr.spec[first]
        ap, bp = e.rows(a, arr.a_port[first]), e.rows(b, arr.b_port[first])
        number, cid, fabric = pick(self.numbers, items), pick(self.ids, items), pick(x.fabric, s)
        a_phys, b_phys = pick(e.physical, ap), pick(e.physical, bp)
        a_text = self._short_text(a, b, {"number": number, "fabric": fabric, "cable": cid, "port": a_phys, "far_port": b_phys})
        b_text = self._short_text(b, a, {"number": number, "fabric": fabric, "cable": cid, "port": b_phys, "far_port": a_phys})
        return PullParts(a, b, s, x.stock_at[first], number, cid, fabric, a_phys, b_phys, a_text, b_text)

    def _pulls(
        self,
        s: np.ndarray,
        stock_at: np.ndarray,
        number: list[str],
        cid: list[str],
        fabric: list[str],
        a_end: tuple[np.ndarray, list[str], list[str], list[str]],
        b_end: tuple[np.ndarray, list[str], list[str], list[str]],
    ) -> list[PullCable]:
        """PullCables from the columns (spec, stock index, number, ID, fabric; per end its device,
        name, plug and short label text)."""
        x = self.text
        tier, kind = pick(x.tier, s), pick(x.type, s)
        stock, part = pick(x.stock, stock_at), pick(x.part, stock_at)
        ends = zip(self._pull_ends(*a_end), self._pull_ends(*b_end), strict=True)
        common = zip(number, cid, fabric, tier, kind, part, stock, strict=True)  # PULL_SHARED
        if self.keys is None:  # (fabric, tier) per spec: one tuple shared by its cables, not one each
            self.keys = objects(list(zip(x.fabric.tolist(), x.tier.tolist(), strict=True)))
        return tuples(PullCable, common, pick(self.keys, s), kind, ends)

    def _pull_ends(self, device: np.ndarray, name: list[str], plug: list[str], label: list[str]) -> list[PullEnd]:
        """The PullEnds of one end of each cable (``device``, its name, its plug and short label)."""
        e = self.ends
        if self.places is None:  # "A01 U2 gpu-0001 " per device: a place is that and the plug
            self.places = objects(
                [f"{r} U{u} {x} " for r, u, x in zip(e.rack.tolist(), e.u.tolist(), e.name.tolist(), strict=True)]
            )
        place = list(map(str.__add__, pick(self.places, device), plug))
        return tuples(PullEnd, pick(e.rack_index, device), pick(e.u_int, device), name, plug, place, label)

    def _short_text(self, near: np.ndarray, far: np.ndarray, cable: dict[str, list[str]]) -> list[str]:
        """One end's short label of each cable, its lines joined by LINE_JOIN, as _cable_pass makes
        it: the lines a column at a time (cable_columns.ShortLines), wrapped at the label width
        cable by cable where a line is wider."""
        return self.short.joined(near, far, cable)


class ShortLabels:
    """naming.short_label's lines of many cable ends at once (cable_columns.ShortLines), wrapped
    at naming.label_width as _cable_pass wraps them: cables.csv's and the label sheets'."""

    def __init__(self, bp: Blueprint, ends: EndTable, numbers: np.ndarray, ids: np.ndarray, fabric: np.ndarray) -> None:
        self.short_lines = ShortLines(bp.naming.short_label, SHORT_FIELDS, ends)
        self.width = bp.naming.label_width
        widest = {"number": _widest(numbers), "fabric": _widest(fabric), "cable": _widest(ids)}
        widest["port"] = widest["far_port"] = _widest(ends.physical)
        # Lines that cannot be wider than the label (most are) are not measured cable by cable.
        self.fits = [x is not None and x <= self.width for x in self.short_lines.widest(widest)]

    def __call__(
        self, near: np.ndarray, far: np.ndarray, cable: dict[str, list[str]]
    ) -> tuple[list[list[str]], list[tuple[str, ...]] | None]:
        """(each line's column, None) when no line is wider than the label, else (the columns,
        each end's lines wrapped by _wrapped)."""
        lines = self.short_lines(near, far, cable)
        width = self.width
        wide = [not fits and max(map(len, x), default=0) > width for x, fits in zip(lines, self.fits, strict=True)]
        if not any(wide):
            return lines, None
        return lines, wrapped_ends(lines, wide, width)

    def joined(self, near: np.ndarray, far: np.ndarray, cable: dict[str, list[str]]) -> list[str]:
        """Each end's lines (as :meth:`__call__` wraps them) joined by LINE_JOIN: a wide column's
        lines are joined where they break (broken_column with ``joined``), then the columns, so
        no tuple of lines is made per end (every piece is one or more lines, so the join is the
        same text as the wrapped lines' join)."""
        lines = self.short_lines(near, far, cable)
        width = self.width
        columns = [
            broken_column(x, width, joined=True) if not fits and max(map(len, x), default=0) > width else x
            for x, fits in zip(lines, self.fits, strict=True)
        ]
        return list(map(LINE_JOIN.join, zip(*columns, strict=True)))


def wrapped_ends(lines: list[list[str]], wide: list[bool], width: int) -> list[tuple[str, ...]]:
    """Each end's lines as :func:`_wrapped` gives them, from a column per line (``wide``: whether
    a column may hold a line wider than ``width``; the others are kept as they are). Each line
    breaks on its own, so a column is broken at once: one that fits becomes 1-tuples in C (zip),
    and only the cells of the others go through Python."""
    columns: list[Iterable[tuple[str, ...]]] = [
        broken_column(column, width) if w else zip(column) for column, w in zip(lines, wide, strict=True)
    ]
    if not columns:
        return []
    ends = columns[0]
    for column in columns[1:]:
        ends = map(add, ends, column)
    return list(ends)


@overload
def broken_column(column: list[str], width: int, joined: Literal[False] = False) -> list[tuple[str, ...]]: ...
@overload
def broken_column(column: list[str], width: int, joined: Literal[True]) -> list[str]: ...


def broken_column(column: list[str], width: int, joined: bool = False) -> list[tuple[str, ...]] | list[str]:
    """``[_broken(x, width) for x in column]`` (``joined``: each joined by LINE_JOIN, a line that
    fits itself), each line broken by the cuts of its shape: where
    _broken breaks a line depends only on its length and which characters are spaces, other
    whitespace or neither (rfind of " ", strip), and a column holds few shapes (its lines differ
    in a number or a name of one length), so the cuts are found once per shape and applied by an
    itemgetter of slices, every call made in C (operator.call). A block of lines in ASCII without
    NULs (the shapes' separator) takes this path; any other block is broken line by line."""
    out: list[Any] = []
    cutters: dict[bytes, Callable[[str], Any]] = {}
    for at in range(0, len(column), _BROKEN_BLOCK):  # a block at a time: its shapes held, not the column's
        block = column[at : at + _BROKEN_BLOCK]
        blob = "\0".join(block)
        if not blob.isascii() or blob.count("\0") != len(block) - 1:
            out += [LINE_JOIN.join(_broken(x, width)) for x in block] if joined else [_broken(x, width) for x in block]
            continue
        shapes = blob.encode("ascii").translate(_SHAPE_BYTES).split(b"\0")
        del blob
        for shape in set(shapes).difference(cutters):
            cuts = _cuts(shape.decode("ascii"), width)
            if len(cuts) == 1:  # a line that fits: its own 1-tuple, or itself (str.__str__, in C)
                cutters[shape] = str.__str__ if joined else _alone
                continue
            cut = itemgetter(*[slice(x, y) for x, y in cuts])  # one broken has two or more lines: a tuple
            cutters[shape] = partial(_joined_cut, cut) if joined else cut
        out += map(call, map(cutters.__getitem__, shapes), block)
    return out


def _joined_cut(cut: Callable[[str], tuple[str, ...]], line: str) -> str:
    return LINE_JOIN.join(cut(line))


_BROKEN_BLOCK = 1 << 16


def _alone(line: str) -> tuple[str]:
    return (line,)


# A character's class for broken_column's shapes: a space, other whitespace (as str.strip sees
# it), NUL (the separator) or any other character. ASCII only.
_SHAPE_BYTES = bytes(b if b in (0, 32) else 9 if chr(b).isspace() else ord("x") for b in range(256))


def _cuts(line: str, width: int) -> list[tuple[int, int]]:
    """The printed lines of ``line`` (the rules of :func:`_wrapped`) as (start, end) offsets into
    it, counting what each strip takes off: one loop for _broken and broken_column's shapes."""
    out: list[tuple[int, int]] = []
    start = 0
    while len(line) > width:
        cut = line.rfind(" ", 1, width + 1)
        if cut > 0:
            tail = line[cut:].strip()
            before = line.rfind(" ", 1, cut)
            if len(tail) <= ORPHAN and " " not in tail and before > 0:
                cut = before
        cut = cut if cut > 0 else width
        out.append((start, start + len(line[:cut].rstrip())))
        rest = line[cut:]
        line = rest.lstrip()
        start += cut + len(rest) - len(line)
    out.append((start, start + len(line)))
    return out


def simple_cables(plan: Any) -> np.ndarray:
    """Whether each plan item is a cable of one link that is not a splitter (every cable of a
    RoCE design): its A end the link's A end, each plug one port, made a column at a time."""
    simple: np.ndarray = (np.diff(plan.start) == 1) & (plan.shape != SPLITTER)
    return simple


def label_columns(
    ctx: RenderContext, items: np.ndarray
) -> Iterator[tuple[np.ndarray, tuple[list[list[str]], list[tuple[str, ...]] | None]]]:
    """What :func:`label_ends` gives of the simple cables ``items`` (plan items), a column at a
    time (the formulas of CableColumns): the A ends' (device of each cable, short label lines as
    ShortLabels gives them), then the B ends'; one end at a time, so that a caller holding what
    it makes of the A ends' lines need not hold the lines too."""
    f = ctx.fabric
    plan = cable_plan(f, ctx.catalogue)
    arr, e = f.links.arrays(), end_table(f, ctx.memo)
    numbers, ids = objects(cable_numbers_of(ctx)), objects(cable_ids(f, plan))
    fabric = objects([x.fabric for x in f.links.specs])
    first = plan.links[plan.start[:-1][items]]
    a, b = arr.a[first], arr.b[first]
    a_phys, b_phys = pick(e.physical, e.rows(a, arr.a_port[first])), pick(e.physical, e.rows(b, arr.b_port[first]))
    cable = {"number": pick(numbers, items), "fabric": pick(fabric, arr.spec[first]), "cable": pick(ids, items)}
    short = ShortLabels(ctx.blueprint, e, numbers, ids, fabric)
    yield a, short(a, b, cable | {"port": a_phys, "far_port": b_phys})
    yield b, short(b, a, cable | {"port": b_phys, "far_port": a_phys})


def cable_numbers_of(ctx: RenderContext) -> list[str]:
    """facts/cable_plan's cable_numbers of the plan's cable IDs, once per render (``ctx.memo``)."""
    numbers = ctx.memo.get("cable_numbers")
    if numbers is None:
        f = ctx.fabric
        numbers = ctx.memo["cable_numbers"] = cable_numbers(cable_ids(f, cable_plan(f, ctx.catalogue)))
    return numbers


_TEXT, _ENDS, _PULLS, _LABELS = 0, 1, 2, 3  # what _cable_pass makes beside each row's text


def label_ends(ctx: RenderContext, keep: Any = None) -> Iterator[tuple[int, list[tuple[int, int, tuple[str, ...]]]]]:
    """(plan item, each plug end's (rack index, U, short label lines), A first) per cable, in
    cable_rows' order: what the label sheets take of a cable row, without making the row's text
    (``keep`` as for :func:`cable_rows`)."""
    for _, item in _cable_pass(ctx, keep, _LABELS):
        yield item


def cable_rows(ctx: RenderContext, keep: Any = None, with_ends: bool = True) -> Iterator[CableRow]:
    """One row per physical cable (facts/cable_plan), in cable-ID order: shared by cables.csv, the
    workbook and the label sheets. Per-device and per-model columns are looked up, not recomputed.
    With ``keep`` (a bool per item of the plan), those items' rows only; ``with_ends=False``: the
    rows' text only (their ``ends`` empty), for cables.csv."""
    for text, ends in _cable_pass(ctx, keep, _ENDS if with_ends else _TEXT):
        yield CableRow(text, ends)


def _cable_pass(ctx: RenderContext, keep: Any, make: int) -> Iterator[tuple[list[str], Any]]:
    """(text, what ``make`` asks for) per cable row: _TEXT nothing (an empty list), _ENDS the
    CableEnds, _PULLS the row's PullCable; _LABELS (no text: an empty list) the item and its
    ends' (rack, U, short lines)."""
    with_ends = make == _ENDS
    pulls = make == _PULLS
    labels = make == _LABELS
    f, cat, bp = ctx.fabric, ctx.catalogue, ctx.blueprint
    media = cat.media
    plan = cable_plan(f, cat)
    if not len(plan):
        return
    ids = cable_ids(f, plan)
    numbers = cable_numbers_of(ctx)
    t = f.links
    link_ids, specs = t.ids(), t.specs
    racks = f.racks
    place: list[tuple[str, str, str, str, int, int]] = []
    for d in f.devices:
        r = racks[d.rack] if d.rack >= 0 else None
        place.append(
            (r.row, r.name, str(d.u) if d.u else "", d.name, d.rack, d.u)
            if r
            else ("", "", str(d.u) if d.u else "", d.name, -1, d.u)
        )
    # A label names a 0U device's (a rear PDU's) unit as 0.
    short_u = [x[2] or "0" for x in place]
    ports: dict[str, tuple[list[str], list[str]]] = {}
    for model, layout in f.layouts.items():
        cage_label = [layout.cage_label(c) for c in range(len(layout.cages))]
        ports[model] = (layout.physical_names, [cage_label[c] for c in layout.port_cages])
    port_cols = [ports[d.model] for d in f.devices]
    os_names = [f.layouts[d.model].names for d in f.devices]
    cages = link_cages(f)
    cage_a, cage_b = cages.a, cages.b
    asm_length = assemblies(f, media).length_m.tolist()
    col_a, col_ap, col_b, col_bp, col_len, col_spec = t.a, t.a_port, t.b, t.b_port, t.length_m, t.spec
    label = cable_id_format(bp.naming.cable_label)
    end_labels = EndLabels(bp, f).pair
    short_lines = [positional_format(x, SHORT_FIELDS) for x in bp.naming.short_label]
    # All of a label's lines in one format call, split at NUL; a field holding a NUL (the split
    # then gives more lines) is formatted line by line instead.
    all_lines = positional_format("\0".join(bp.naming.short_label), SHORT_FIELDS)
    line_count = len(short_lines)
    far_lines = [any(name and name.startswith("far_") for _, name, _, _ in Formatter().parse(x)) for x in bp.naming.short_label]
    width = bp.naming.label_width
    kinds = {name: f"{m.kind} {m.shape}" for name, m in media.items()}
    fibres = {name: m.fibre for name, m in media.items()}
    lengths: dict[tuple[str, float], tuple[str, str]] = {}
    per_spec: dict[int, tuple[str, str]] = {}
    starts = plan.start.tolist()
    order = plan.links.tolist()
    cord, cords, shape = plan.cord.tolist(), plan.cords.tolist(), plan.shape.tolist()
    shared = itemgetter(*(CABLE_COLUMNS.index(x) for x in PULL_SHARED))
    for k in range(len(plan)) if keep is None else np.flatnonzero(keep).tolist():
        members = order[starts[k] : starts[k + 1]]
        first = members[0]
        s = col_spec[first]
        spec = specs[s]
        # Orient every link to the item's A end: a splitter's head, else the first link's A cage.
        head_b = shape[k] == SPLITTER and spec.head == "b"
        a_cage = cage_b[first] if head_b else cage_a[first]
        oriented = [
            (col_a[i], col_ap[i], col_b[i], col_bp[i]) if cage_a[i] == a_cage else (col_b[i], col_bp[i], col_a[i], col_ap[i])
            for i in members
        ]
        a, ap, b, bp_ = oriented[0]
        a_phys, a_cages = port_cols[a]
        b_phys, b_cages = port_cols[b]
        many = len(oriented) > 1
        split = shape[k] == SPLITTER
        # A multi-port plug (a twin-port cable's end, a splitter's head: it fills its cage) is
        # named by its cage (the ports it carries are listed); one port by itself; a splitter's
        # legs each by their port.
        a_plug = a_cages[ap] if many else a_phys[ap]
        if split:
            legs = [(lb, port_cols[lb][0][lbp]) for _, _, lb, lbp in oriented]
        else:
            legs = [(b, b_cages[bp_] if many else b_phys[bp_])]
        ar, b_first = place[a], place[legs[0][0]]
        number = numbers[k]
        a_fields = (number, spec.fabric, ids[k], ar[0], ar[1], short_u[a], ar[3], a_plug)
        far_first = (b_first[0], b_first[1], short_u[legs[0][0]], b_first[3], legs[0][1])
        if split and len(legs) > 1:
            # A splitter's head reaches every leg: each line naming the far end once per leg.
            fars = [(place[d][0], place[d][1], short_u[d], place[d][3], plug) for d, plug in legs]
            parts = [
                text
                for line, far in zip(short_lines, far_lines, strict=True)
                for text in ([line(*a_fields, *x) for x in fars] if far else [line(*a_fields, *far_first)])
            ]
        else:
            parts = all_lines(*a_fields, *far_first).split("\0")
            if len(parts) != line_count:
                parts = [line(*a_fields, *far_first) for line in short_lines]
        a_short = _wrapped(parts, width)
        ends: list[Any] = []
        a_text = "" if labels else LINE_JOIN.join(a_short)
        if labels:
            ends.append((ar[4], ar[5], a_short))
        elif with_ends:
            ends.append(CableEnd(a, ar[4], ar[5], ar[3], a_plug, f"{ar[1]} U{ar[2]} {ar[3]} {a_plug}", a_short))
        elif pulls:
            ends.append(PullEnd(ar[4], ar[5], ar[3], a_plug, f"{ar[1]} U{ar[2]} {ar[3]} {a_plug}", a_text))
        leg_short: list[tuple[str, ...]] = []
        leg_place: list[str] = []
        placed = with_ends or pulls or len(legs) > 1
        for dev, plug in legs:
            lr = place[dev]
            fields = (number, spec.fabric, ids[k], lr[0], lr[1], short_u[dev], lr[3], plug)
            parts = all_lines(*fields, ar[0], ar[1], short_u[a], ar[3], a_plug).split("\0")
            if len(parts) != line_count:
                parts = [line(*fields, ar[0], ar[1], short_u[a], ar[3], a_plug) for line in short_lines]
            short = _wrapped(parts, width)
            if labels:
                ends.append((lr[4], lr[5], short))
                continue
            leg_short.append(short)
            if placed:
                leg_place.append(f"{lr[1]} U{lr[2]} {lr[3]} {plug}")
            if with_ends:
                ends.append(CableEnd(dev, lr[4], lr[5], lr[3], plug, leg_place[-1], short))
            elif pulls:
                ends.append(PullEnd(lr[4], lr[5], lr[3], plug, leg_place[-1], LINE_JOIN.join(short)))
        if labels:
            yield [], (k, ends)
            continue
        medium, length_m = spec.medium, max(col_len[i] for i in members) if many else col_len[first]
        fixed = per_spec.get(s)
        if fixed is None:
            fixed = per_spec[s] = _modules(ctx, s)
        if (a, ap) != (col_a[first], col_ap[first]):
            fixed = (fixed[1], fixed[0])
        stock = lengths.get((medium, asm_length[first]))
        if stock is None:
            st = ordered_length(cat, medium, asm_length[first])
            stock = lengths[(medium, asm_length[first])] = (_fmt(st), _part(ctx, medium, st))
        # The TIA-606 form names each plug as printed, as the short label does (a cage for a multi-port plug).
        long_a, long_b = end_labels(a, os_names[a][ap], a_plug, b, os_names[b][bp_], legs[0][1], link_ids[first])
        text = [
            number,
            ids[k],
            label(spec.fabric, ar[3], a_plug, b_first[3], legs[0][1]),
            spec.fabric,
            spec.tier,
            kinds.get(medium, ""),
            medium,
            stock[1],
            stock[0],
            f"{length_m:.2f}",
            str(len(members)),
            ar[0],
            ar[1],
            ar[2],
            ar[3],
            a_cages[ap],
            " + ".join([a_phys[x[1]] for x in oriented]) if many else a_phys[ap],
            fixed[0],
            b_first[0],
            b_first[1],
            b_first[2],
            b_first[3],
            b_cages[bp_],
            b_phys[bp_] if split or not many else " + ".join([b_phys[x[3]] for x in oriented]),
            fixed[1],
            "; ".join(leg_place) if len(legs) > 1 else "",
            fibres.get(medium, ""),
            f"{cord[k]}/{cords[k]}" if cords[k] > 1 else "",
            a_text,
            ends[1].label if pulls else LINE_JOIN.join(leg_short[0]),
            long_a,
            long_b,
            " ".join([link_ids[i] for i in members]) if many else link_ids[first],
        ]
        if pulls:
            yield text, PullCable(shared(text), (spec.fabric, spec.tier), text[5], tuple(ends))
        else:
            yield text, ends


ORPHAN = 2  # characters: a word this short never starts a wrapped line on its own


def _wrapped(lines: list[str], width: int) -> tuple[str, ...]:
    """The label's lines, a line longer than ``width`` broken at its last space that fits (or cut
    at ``width`` when none does), so that no printed line is wider than the stock takes. A break
    that would leave a lone short word (the "1" of "port 1") moves to the space before it, so a
    port's name stays on one line."""
    if not lines or max(map(len, lines)) <= width:
        return tuple(lines)
    out: list[str] = []
    for line in lines:
        out += _broken(line, width)
    return tuple(out)


def _broken(line: str, width: int) -> tuple[str, ...]:
    """The printed lines of one label line, broken as :func:`_wrapped` says (by :func:`_cuts`)."""
    if len(line) <= width:
        return (line,)
    return tuple([line[a:b] for a, b in _cuts(line, width)])


def port_names(f: Fabric, device: int, port: int) -> str:
    return f.layouts[f.devices[device].model].names[port]


def _modules(ctx: RenderContext, s: int) -> tuple[str, str]:
    """(A module part, B module part) of a transceiver spec's links ('' otherwise)."""
    spec = ctx.fabric.links.specs[s]
    m = ctx.catalogue.media.get(spec.medium)
    if m is None or m.shape != "transceiver":
        return "", ""
    return _module(ctx, spec.a_module), _module(ctx, spec.b_module)
