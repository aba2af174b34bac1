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

Fast: rows that need no quoting are joined and written as text, only the others go through
``csv.writer`` (10^6 rows); per-device and per-model columns are looked up, not recomputed.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter
from string import Formatter
from typing import Any, NamedTuple

import numpy as np

from ..catalog.parts import link_part, module_number, ordered_length
from ..fabric import Fabric
from ..fabric.cable_naming import cable_id_format, positional_format
from ..fabric.end_labels import EndLabels
from ..facts.bom import fibres_per_link
from ..facts.cable_plan import cable_ids, cable_numbers, cable_plan
from ..facts.cage_plan import SPLITTER, assemblies, link_cages
from ..model.common import SHORT_LABEL_FIELDS
from .base import RENDERERS, RENDERING, SUBSETS, Artifacts, RenderContext, RowSelection, Stream
from .cable_columns import CleanTables, end_table, joined_lines, objects, pick, tuples
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


def _link_blocks(ctx: RenderContext, keep: Any = None) -> Iterator[tuple[list[list[str]], list[bool]]]:
    """links.csv's rows in cable-ID order, a block at a time as columns (COLUMNS), for
    :meth:`CsvWriter.stream_columns`; with ``keep`` (a bool per link position), those links' rows only."""
    order = np.asarray(ctx.fabric.links.id_order(), dtype=np.int64)
    if keep is not None:
        order = order[np.asarray(keep, dtype=bool)[order]]
    make = _LinkColumns(ctx)
    for at in range(0, len(order), BLOCK):
        yield make(order[at : at + BLOCK])


class _LinkColumns:
    """links.csv's columns (COLUMNS) of a block of links, per-device, per-port and per-spec text
    gathered from arrays (cable_columns), lengths and parts formatted once per distinct value."""

    def __init__(self, ctx: RenderContext) -> None:
        f, cat = ctx.fabric, ctx.catalogue
        media = cat.media
        self.ctx, self.links, self.arrays = ctx, f.links, f.links.arrays()
        self.ends = end_table(f, ctx.memo)
        self.clean = CleanTables()
        self.ids = objects(f.links.ids())
        self.label = cable_id_format(ctx.blueprint.naming.cable_label)  # the cable ID's fields, positionally
        self.end_labels = EndLabels(ctx.blueprint, f).columns  # naming.end_label, per device once
        self.asm_length = assemblies(f, media).length_m
        specs = f.links.specs
        # Per spec: fabric, kind, medium, fibre, tier, then _spec_columns' six.
        fibres = {name: m.fibre for name, m in media.items()}
        per_spec = [
            (x.fabric, x.kind, x.medium, fibres.get(x.medium, ""), x.tier, *_spec_columns(ctx, s)) for s, x in enumerate(specs)
        ]
        self.spec_text = [objects([row[k] for row in per_spec]) for k in range(11)]
        self.mediums = sorted({x.medium for x in specs})
        self.spec_medium = np.array([self.mediums.index(x.medium) for x in specs], dtype=np.int64)
        self.stock: dict[tuple[int, float], tuple[str, str]] = {}

    def __call__(self, order: np.ndarray) -> tuple[list[list[str]], list[bool]]:
        """The columns of the links at ``order``, and whether each is known to be clean CSV."""
        arr, e = self.arrays, self.ends
        a, b, s = arr.a[order], arr.b[order], arr.spec[order]
        ap, bp = e.rows(a, arr.a_port[order]), e.rows(b, arr.b_port[order])
        fabric, kind, medium, fibre, tier, lane_gbps, lanes, gbps, a_mod, b_mod, fibres = (pick(x, s) for x in self.spec_text)
        stock, part = _stock_columns(self.ctx, self.mediums, self.spec_medium[s], self.asm_length[order], self.stock)
        cid, a_name, b_name = pick(self.ids, order), pick(e.name, a), pick(e.name, b)
        a_port, b_port, a_phys, b_phys = pick(e.os, ap), pick(e.os, bp), pick(e.physical, ap), pick(e.physical, bp)
        a_label, b_label = self.end_labels(a, a_port, a_phys, b, b_port, b_phys, cid)
        spec = self.spec_text
        made = [  # (cells, the table they were gathered from; None: made here)
            (cid, self.ids),
            (list(map(self.label, fabric, a_name, a_phys, b_name, b_phys)), None),
            (fabric, spec[0]),
            (kind, spec[1]),
            (pick(e.row, a), e.row),
            (pick(e.rack, a), e.rack),
            (pick(e.u, a), e.u),
            (a_name, e.name),
            (a_port, e.os),
            (pick(e.row, b), e.row),
            (pick(e.rack, b), e.rack),
            (pick(e.u, b), e.u),
            (b_name, e.name),
            (b_port, e.os),
            (medium, spec[2]),
            (fibre, spec[3]),
            (stock, None),
            (_routed(arr.length_m[order]), None),
            (lane_gbps, spec[5]),
            (lanes, spec[6]),
            (gbps, spec[7]),
            (tier, spec[4]),
            (pick(e.cage, ap), e.cage),
            (a_phys, e.physical),
            (pick(e.cage, bp), e.cage),
            (b_phys, e.physical),
            (part, None),
            (a_mod, spec[8]),
            (b_mod, spec[9]),
            (fibres, spec[10]),
            (a_label, None),
            (b_label, None),
        ]
        return [c for c, _ in made], [self.clean(t) for _, t in made]


def _routed(length_m: np.ndarray) -> list[str]:
    """Each routed length to the centimetre, formatted once per distinct length."""
    values, at = np.unique(length_m, return_inverse=True)
    return pick([f"{x:.2f}" for x in values.tolist()], at.reshape(-1))


def _stock_columns(
    ctx: RenderContext,
    mediums: list[str],
    medium: np.ndarray,
    ordered_for: np.ndarray,
    known: dict[tuple[int, float], tuple[str, str]],
) -> tuple[list[str], list[str]]:
    """(ordered length, orderable part) of links of each medium (index into ``mediums``) ordered
    for each length: the stock length the catalogue sells and its part, once per distinct pair
    (``known``: those of earlier blocks)."""
    lengths, length_at = np.unique(ordered_for, return_inverse=True)
    keys, at = np.unique(medium * len(lengths) + length_at.reshape(-1), return_inverse=True)
    stock, part = [], []
    for m, k in zip((keys // max(len(lengths), 1)).tolist(), (keys % max(len(lengths), 1)).tolist(), strict=True):
        length = lengths[k].item()
        found = known.get((m, length))
        if found is None:
            st = ordered_length(ctx.catalogue, mediums[m], length)
            found = known[(m, length)] = (_fmt(st), _part(ctx, mediums[m], st))
        stock.append(found[0])
        part.append(found[1])
    at = at.reshape(-1)
    return pick(stock, at), pick(part, at)


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


class PullCable(NamedTuple):
    """What the workbook's summary and pull lists take of a cable row, held for every row's
    workbook instead of the whole row (about 40 % less memory at 131k; each label joined once)."""

    common: tuple[str, ...]  # the PULL_SHARED columns
    key: tuple[str, str]  # (fabric, tier): its fill
    kind: str  # its type
    ends: tuple[PullEnd, ...]


PULL_SHARED = ("cable_no", "cable_id", "fabric", "tier", "type", "part", "length_m")  # in the pull lists' column order

ROW_LIMIT = 50_000  # cables; past this the workbook is one per row of racks, made of PullCables only
# ctx.memo key: (the render_all's RENDERING set, the workbook's PullCables made in cables.csv's
# pass, or None once the workbook has taken them or made its own): one render's, never the next's.
PULL_CABLES = "pull_cables"


def pull_cables(ctx: RenderContext, keep: Any = None) -> list[PullCable]:
    """The workbook's PullCables of the cable rows (``keep`` as for :func:`cable_rows`): those
    cables.csv's pass made in this render (one pass for both, see :func:`_stream_cables`), else
    a pass of their own."""
    memo = ctx.memo
    if keep is None:
        rendering = memo.get(RENDERING)
        made, found = memo.get(PULL_CABLES, (None, None))
        memo[PULL_CABLES] = (rendering, None)
        if made is rendering and found is not None:
            return found
        pulls: list[PullCable] = []
        for _ in _cable_blocks(ctx, pulls):  # the columns are dropped: the workbook reads the PullCables
            pass
        return pulls
    return [pull for _, pull in _cable_pass(ctx, keep, _PULLS)]


def _stream_cables(ctx: RenderContext) -> Iterator[bytes]:
    """cables.csv. When the workbook is rendered in the same render_all, in its per-row form
    (past ``ROW_LIMIT`` cables), and has not made its cables yet, the same pass makes them (its
    PullCables, kept in ``ctx.memo`` for it): the rows are made once per render, and only the
    PullCables are held, never the rows."""
    memo = ctx.memo
    rendering = memo.get(RENDERING, frozenset())
    shared = "workbook" in rendering and memo.get(PULL_CABLES, (None,))[0] is not rendering
    if not shared or len(cable_plan(ctx.fabric, ctx.catalogue)) <= ROW_LIMIT:
        yield from CsvWriter(CABLE_COLUMNS).stream_columns(_cable_blocks(ctx, None))
        return
    memo.pop(PULL_CABLES, None)  # an earlier render's, not taken
    pulls: list[PullCable] = []
    yield from CsvWriter(CABLE_COLUMNS).stream_columns(_cable_blocks(ctx, pulls))
    if memo.get(PULL_CABLES, (None,))[0] is not rendering:  # whole: a pass left off midway keeps nothing
        memo[PULL_CABLES] = (rendering, pulls)


def _cable_blocks(ctx: RenderContext, pulls: list[PullCable] | None) -> Iterator[tuple[list[list[str]], list[bool]]]:
    """cables.csv's rows (cable_rows' text, in its order), a block at a time as columns, for
    :meth:`CsvWriter.stream_columns`; with ``pulls``, each row's PullCable appended to it.

    A cable of one link that is not a splitter (every cable of a RoCE design: a port-to-port
    cord or cable) is made a column at a time (:class:`_CableColumns`); the others (twin-port
    cables, splitters) by :func:`_cable_pass`, and a block holding any is merged row by row."""
    f = ctx.fabric
    plan = cable_plan(f, ctx.catalogue)
    make = _PULLS if pulls is not None else _TEXT
    simple = (np.diff(plan.start) == 1) & (plan.shape != SPLITTER)
    others = _cable_pass(ctx, ~simple, make) if not simple.all() else iter(())
    columns = _CableColumns(ctx) if simple.any() else None
    for at in range(0, len(plan), BLOCK):
        fast = simple[at : at + BLOCK]
        if columns is not None and fast.all():
            made, known, made_pulls = columns(np.arange(at, at + len(fast), dtype=np.int64), pulls is not None)
            if pulls is not None:
                pulls.extend(made_pulls)
            yield made, known
            continue
        rows: list[Any] = [None] * len(fast)
        row_pulls: list[Any] = [None] * len(fast)
        if columns is not None and fast.any():
            picked = np.flatnonzero(fast)
            made, _, made_pulls = columns(picked + at, pulls is not None)
            for n, row in zip(picked.tolist(), zip(*made, strict=True), strict=True):
                rows[n] = row
            for n, pull in zip(picked.tolist(), made_pulls, strict=True) if pulls is not None else ():
                row_pulls[n] = pull
        for n in np.flatnonzero(~fast).tolist():
            rows[n], row_pulls[n] = next(others)
        if pulls is not None:
            pulls.extend(row_pulls)
        yield [list(c) for c in zip(*rows, strict=True)], [False] * len(CABLE_COLUMNS)


class _CableColumns:
    """cables.csv's columns (CABLE_COLUMNS) of a block of one-link, non-splitter cables, and their
    PullCables: _cable_pass's formulas for such a cable (its A end the link's A end, each plug one
    port), text gathered from arrays and formatted a column at a time."""

    def __init__(self, ctx: RenderContext) -> None:
        f, cat, bp = ctx.fabric, ctx.catalogue, ctx.blueprint
        media = cat.media
        plan = cable_plan(f, cat)
        self.ctx, self.plan, self.arrays = ctx, plan, f.links.arrays()
        self.heads = plan.links[plan.start[:-1]]
        self.ends = end_table(f, ctx.memo)
        self.clean = CleanTables()
        self.ids, self.numbers = objects(cable_ids(f, plan)), objects(cable_numbers_of(ctx))
        self.link_ids = objects(f.links.ids())
        self.label = cable_id_format(bp.naming.cable_label)
        self.end_labels = EndLabels(bp, f).columns
        self.short_lines = [positional_format(x, SHORT_FIELDS) for x in bp.naming.short_label]
        self.all_lines = positional_format("\0".join(bp.naming.short_label), SHORT_FIELDS)
        self.width = bp.naming.label_width
        self.asm_length = assemblies(f, media).length_m
        specs = f.links.specs
        kinds = {name: f"{m.kind} {m.shape}" for name, m in media.items()}
        fibres = {name: m.fibre for name, m in media.items()}
        per_spec = [
            (x.fabric, x.tier, kinds.get(x.medium, ""), x.medium, fibres.get(x.medium, ""), *_modules(ctx, s))
            for s, x in enumerate(specs)
        ]
        self.spec_text = [objects([row[k] for row in per_spec]) for k in range(7)]
        self.mediums = sorted({x.medium for x in specs})
        self.spec_medium = np.array([self.mediums.index(x.medium) for x in specs], dtype=np.int64)
        self.stock: dict[tuple[int, float], tuple[str, str]] = {}

    def __call__(self, items: np.ndarray, with_pulls: bool) -> tuple[list[list[str]], list[bool], list[PullCable]]:
        """The columns of the plan's ``items``, whether each is known to be clean CSV, and (with
        ``with_pulls``) their PullCables."""
        arr, e, plan = self.arrays, self.ends, self.plan
        first = self.heads[items]
        a, b, s = arr.a[first], arr.b[first], arr.spec[first]
        ap, bp = e.rows(a, arr.a_port[first]), e.rows(b, arr.b_port[first])
        fabric, tier, kind, medium, fibre, a_mod, b_mod = (pick(x, s) for x in self.spec_text)
        stock, part = _stock_columns(self.ctx, self.mediums, self.spec_medium[s], self.asm_length[first], self.stock)
        number, cid, lid = pick(self.numbers, items), pick(self.ids, items), pick(self.link_ids, first)
        a_row, a_rack, a_u, a_name = pick(e.row, a), pick(e.rack, a), pick(e.u, a), pick(e.name, a)
        b_row, b_rack, b_u, b_name = pick(e.row, b), pick(e.rack, b), pick(e.u, b), pick(e.name, b)
        a_phys, b_phys = pick(e.physical, ap), pick(e.physical, bp)
        a_short = (number, fabric, cid, a_row, a_rack, pick(e.short_u, a), a_name, a_phys)
        b_short = (number, fabric, cid, b_row, b_rack, pick(e.short_u, b), b_name, b_phys)
        a_text = self._short_text((*a_short, *b_short[3:]))
        b_text = self._short_text((*b_short, *a_short[3:]))
        long_a, long_b = self.end_labels(a, pick(e.os, ap), a_phys, b, pick(e.os, bp), b_phys, lid)
        n = len(items)
        cords = plan.cords[items]
        cord = [""] * n
        if (cords > 1).any():
            cord = [f"{x}/{y}" if y > 1 else "" for x, y in zip(plan.cord[items].tolist(), cords.tolist(), strict=True)]
        spec = self.spec_text
        made = [  # (cells, the table they were gathered from; None: made here)
            (number, self.numbers),
            (cid, self.ids),
            (list(map(self.label, fabric, a_name, a_phys, b_name, b_phys)), None),
            (fabric, spec[0]),
            (tier, spec[1]),
            (kind, spec[2]),
            (medium, spec[3]),
            (part, None),
            (stock, None),
            (_routed(arr.length_m[first]), None),
            (["1"] * n, None),
            (a_row, e.row),
            (a_rack, e.rack),
            (a_u, e.u),
            (a_name, e.name),
            (pick(e.cage, ap), e.cage),
            (a_phys, e.physical),
            (a_mod, spec[5]),
            (b_row, e.row),
            (b_rack, e.rack),
            (b_u, e.u),
            (b_name, e.name),
            (pick(e.cage, bp), e.cage),
            (b_phys, e.physical),
            (b_mod, spec[6]),
            ([""] * n, None),
            (fibre, spec[4]),
            (cord, None),
            (a_text, None),
            (b_text, None),
            (long_a, None),
            (long_b, None),
            (lid, self.link_ids),
        ]
        pulls: list[PullCable] = []
        if with_pulls:
            ends = zip(self._pull_ends(a, a_name, a_phys, a_text), self._pull_ends(b, b_name, b_phys, b_text), strict=True)
            common = zip(number, cid, fabric, tier, kind, part, stock, strict=True)  # PULL_SHARED
            pulls = tuples(PullCable, common, zip(fabric, tier, strict=True), kind, ends)
        return [c for c, _ in made], [self.clean(t) for _, t in made], pulls

    def _pull_ends(self, device: np.ndarray, name: list[str], plug: list[str], label: list[str]) -> list[PullEnd]:
        """The PullEnds of one end of each cable (``device``, its name, its plug and short label)."""
        e = self.ends
        place = list(map("{} U{} {} {}".format, pick(e.rack, device), pick(e.u, device), name, plug))
        return tuples(PullEnd, e.rack_index[device].tolist(), e.u_int[device].tolist(), name, plug, place, label)

    def _short_text(self, fields: tuple[list[str], ...]) -> list[str]:
        """One end's short label of each cable, its lines joined by LINE_JOIN: as _cable_pass makes
        it (one format call split at NUL, wrapped at the label width), a column at a time when no
        field holds a NUL or line break and no line needs wrapping, else cable by cable."""
        raw = list(map(self.all_lines, *fields))
        joined = joined_lines(raw, len(self.short_lines), self.width, LINE_JOIN)
        if joined is not None:
            return joined
        out = []
        for text, row in zip(raw, zip(*fields, strict=True), strict=True):
            parts = text.split("\0")
            if len(parts) != len(self.short_lines):
                parts = [line(*row) for line in self.short_lines]
            out.append(LINE_JOIN.join(_wrapped(parts, self.width)))
        return out


def cable_numbers_of(ctx: RenderContext) -> list[str]:
    """facts/cable_plan's cable_numbers of the plan's cable IDs, once per render (``ctx.memo``)."""
    numbers = ctx.memo.get("cable_numbers")
    if numbers is None:
        f = ctx.fabric
        numbers = ctx.memo["cable_numbers"] = cable_numbers(cable_ids(f, cable_plan(f, ctx.catalogue)))
    return numbers


_TEXT, _ENDS, _PULLS, _LABELS = 0, 1, 2, 3  # what _cable_pass makes beside each row's text


def label_ends(ctx: RenderContext) -> Iterator[tuple[int, list[tuple[int, int, tuple[str, ...]]]]]:
    """(plan item, each plug end's (rack index, U, short label lines), A first) per cable, in
    cable_rows' order: what the label sheets take of a cable row, without making the row's text."""
    for _, item in _cable_pass(ctx, None, _LABELS):
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
        while len(line) > width:
            cut = line.rfind(" ", 1, width + 1)
            if cut > 0:
                tail = line[cut:].strip()
                before = line.rfind(" ", 1, cut)
                if len(tail) <= ORPHAN and " " not in tail and before > 0:
                    cut = before
            cut = cut if cut > 0 else width
            out.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
        out.append(line)
    return tuple(out)


def port_names(f: Fabric, device: int, port: int) -> str:
    return f.layouts[f.devices[device].model].names[port]


def _modules(ctx: RenderContext, s: int) -> tuple[str, str]:
    """(A module part, B module part) of a transceiver spec's links ('' otherwise)."""
    spec = ctx.fabric.links.specs[s]
    m = ctx.catalogue.media.get(spec.medium)
    if m is None or m.shape != "transceiver":
        return "", ""
    return _module(ctx, spec.a_module), _module(ctx, spec.b_module)
