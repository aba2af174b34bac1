"""The cabling workbook (``cabling/cabling.xlsx``): what a crew opens on a laptop or prints.

* ``Summary``: the design's cables per fabric and type (the BOM's counts), connectors and
  cartridges (not cables: their own sheets in ``connectors/``), and the legend of fills;
* one sheet per fabric: every physical cable of it (the columns of ``cables.csv``);
* one pull list per rack: every cable with an end in the rack, once, in rack-unit order of its
  end there, the far end's location first (where the cable goes is what the crew reads first).

Every sheet has a frozen header row, a filter, column widths, a fill per fabric and tier (the
legend on the summary), and prints landscape on A4 (or US Letter: ``naming.paper``) one page wide
with the header repeated.
Every cell is written as an inline string or a number, never as a formula, so a name that starts
with ``=`` stays text, as in the CSVs.

The package is snc's own SpreadsheetML writer (``_Xlsx``; ECMA-376 Part 1): inline strings (no
shared-string table), data cells without references (each follows the one before), one row
template per sheet and cell format (``_rows_xml``: one escape test over a sheet's cells joined,
the templates' pieces and the texts put in place a column at a time), each sheet's XML deflated into the zip at level 1 when it is
made, so one sheet's XML is held at a time; the styles with the fills, the workbook with its
defined names (filter ranges, print titles), content types and relationships at the end. It
replaced XlsxWriter's constant-memory writer, whose per-cell calls, temp files and default
deflate level were most of the 131k renders' CPU (docs/performance.md); openpyxl reads the same
cells from both (tests/test_workbook_cells.py) and LibreOffice converts it.

Size: past ``ROW_LIMIT`` cables a design gets one workbook per row of racks
(``cabling/rows/<row>.xlsx``: the summary, which says so, and that row's pull lists, every cable
with an end in the row; the fabric sheets are ``cables.csv``), at any size: each row's workbook
is made when it is written, so one is held at a time. In a render a row's pull lists are made a
column at a time from the tables ``cables.csv``'s columns gather from (``_RowPulls``: the
one-link, non-splitter cables; the others as ``cabling.PullCable``), so no cable record is held
from one row to the next (the 390 MB of PullCables that made the 131k render's peak); ``snc
diff`` keeps the PullCables, bucketed by row in one pass, to share them between its two sides,
and the side made second takes the first side's deflated pull-list sheets of the racks where no
cable may differ (``_SheetShare``; the package is written from deflated parts, ``zip_parts``).
What is left at 131k is mostly the pull lists' rows, the deflate and the escape tests
(docs/performance.md).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, cast

import numpy as np

from ..fabric.devices import Rack
from ..facts.bom import bill_of_materials
from ..facts.cable_plan import cable_plan
from .base import RENDERERS, SAME_PREFIX, SUBSETS, RenderContext, RowSelection, Stream
from .cable_columns import objects
from .cabling import (
    CABLE_COLUMNS,
    LINE_JOIN,
    PULL_SHARED,
    ROW_LIMIT,
    CableColumns,
    CableRow,
    cable_rows,
    link_text,
    pull_cables,
    simple_cables,
)
from .cabling import PullCable as _Cable
from .cabling import PullEnd as _End
from .zip_parts import Part, ZipParts, deflated

PULL_COLUMNS = [
    "far_location",
    "u",
    "device",
    "plug",
    "cable_no",
    "cable_id",
    "fabric",
    "tier",
    "type",
    "part",
    "length_m",
    "label_here",
    "label_far",
]
_WIDTHS = {"far_location": 44, "label_here": 50, "label_far": 50, "a_label": 60, "b_label": 60, "link_ids": 40}
_NUMERIC = frozenset({"length_m", "routed_m", "links", "a_u", "b_u", "u"})
# Fills per tier (pale, so text stays legible in print); fabrics alternate two saturations.
_TIER_FILLS = {
    "node-leaf": ("#DDEBF7", "#BDD7EE"),
    "leaf-spine": ("#E2EFDA", "#C6E0B4"),
    "spine-core": ("#FFF2CC", "#FFE699"),
    "local": ("#FCE4D6", "#F8CBAD"),
    "global": ("#EDE2F6", "#D9C3EE"),
}
_OTHER_FILL = ("#EDEDED", "#D9D9D9")
_SHEET_BAD = re.compile(r"[\[\]:*?/\\]")


@RENDERERS.register("workbook")
def render_workbook(ctx: RenderContext) -> dict[str, bytes | Stream]:
    return _workbooks(ctx)


def _workbooks(ctx: RenderContext) -> dict[str, bytes | Stream]:
    count = len(cable_plan(ctx.fabric, ctx.catalogue))  # cable_rows' count
    if not count:
        return {}
    racks = ctx.fabric.racks
    extras = _not_cables(ctx)
    if count <= ROW_LIMIT:
        rows = list(cable_rows(ctx))
        indices = [r.index for r in racks]
        return {"cabling/cabling.xlsx": _workbook(ctx, _cables(rows), indices, extras, fabric_rows=rows)}
    return _row_workbooks(ctx, None, extras)


def _cables(rows: Iterable[CableRow]) -> list[_Cable]:
    """The PullCables of whole cable rows (the label sheets' and the small workbook's)."""
    join = LINE_JOIN.join
    return [
        _Cable(
            shared(t),
            (t[_FABRIC], t[_TIER]),
            t[_TYPE],
            tuple([_End(e.rack, e.u, e.name, e.plug, e.place, join(e.short)) for e in ends]),
        )
        for t, ends in rows
    ]


_C = {name: i for i, name in enumerate(CABLE_COLUMNS)}
shared = itemgetter(*(_C[x] for x in PULL_SHARED))
_FABRIC, _TIER, _TYPE = _C["fabric"], _C["tier"], _C["type"]


def _row_workbooks(
    ctx: RenderContext,
    keep: np.ndarray | None,
    extras: list[tuple[str, int]],
    same: set[str] | None = None,
    selection: RowSelection | None = None,
    touched: set[str] | None = None,
) -> dict[str, bytes | Stream]:
    """One workbook per row of racks: each cable (of those ``keep`` selects, all without it) in
    the workbook of every row it has an end in, each row's workbook made when it is written. A
    render's (no ``keep``, no ``selection``) makes each row's pull lists a column at a time
    (:class:`_RowPulls`); otherwise the cables are made as PullCables (``cabling.pull_cables``)
    and bucketed in one pass when the first workbook is written. ``same``: rows of racks
    left out as the same on both sides of ``snc diff`` (marked, not made); ``selection``, that
    diff's: the cables the other side made that are the same here are taken (:func:`_pulls`), and
    with ``touched`` (the racks where a cable of this side may differ) the pull-list sheets
    (:class:`_SheetShare`)."""
    racks = ctx.fabric.racks
    row_of = [r.row for r in racks]
    by_row: dict[str, list[int]] = defaultdict(list)
    for r in racks:
        by_row[r.row].append(r.index)
    item, row = item_rows(ctx)
    names = sorted(by_row)
    present = {names[k] for k in np.unique(row if keep is None else row[keep[item]]).tolist()}
    bucketed: list[dict[str, list[_Cable]]] = []

    def cables_of(row_name: str) -> list[_Cable]:
        if not bucketed:
            buckets: dict[str, list[_Cable]] = defaultdict(list)
            for x in pull_cables(ctx, keep) if selection is None or keep is None else _pulls(ctx, keep, selection):
                ends = x.ends
                if len(ends) == 2:  # most cables: the two ends' rows without the generator and dict
                    a, b = ends[0].rack, ends[1].rack
                    row_a = row_of[a] if a >= 0 else None
                    if row_a is not None:
                        buckets[row_a].append(x)
                    if b >= 0 and row_of[b] != row_a:
                        buckets[row_of[b]].append(x)
                    continue
                for name in dict.fromkeys(row_of[e.rack] for e in ends if e.rack >= 0):
                    buckets[name].append(x)
            bucketed.append(buckets)
        return bucketed[0][row_name]

    scope = f"more than {ROW_LIMIT:,} cables: one workbook per row of racks (cabling/rows/<row>.xlsx)"
    out: dict[str, bytes | Stream] = {}
    if keep is None and selection is None:  # a render: each row's pull lists a column at a time
        made: list[_RowPulls] = []
        by_item = np.argsort(row, kind="stable")
        bounds = np.searchsorted(row[by_item], np.arange(len(names) + 1))

        def book_of(k: int, indices: list[int]) -> list[bytes]:
            if not made:
                made.append(_RowPulls(ctx))
            row_name = names[k]
            here = np.zeros(len(made[0].plan), dtype=bool)  # a mark per item: no sort, unlike np.unique
            here[item[by_item[bounds[k] : bounds[k + 1]]]] = True
            items = np.flatnonzero(here)
            note = f"row {row_name}: its racks' pull lists, the cables with an end in them; the design has {scope}"
            return [_columns_workbook(ctx, made[0], items, indices, extras, note)]

        for k, row_name in enumerate(names):
            if row_name in present:
                path = f"cabling/rows/{_file_part(row_name)}.xlsx"
                out[path] = Stream(partial(book_of, k, by_row[row_name]))
        return out
    for row_name, indices in sorted(by_row.items()):
        path = f"cabling/rows/{_file_part(row_name)}.xlsx"
        if same is not None and row_name in same:
            out[SAME_PREFIX + path] = b""
            continue
        if row_name not in present:
            continue

        def produce(row_name: str = row_name, indices: list[int] = indices) -> list[bytes]:
            note = f"row {row_name}: its racks' pull lists, the cables with an end in them; the design has {scope}"
            share = _SheetShare(selection.shared, row_name, touched) if selection is not None and touched is not None else None
            return [_workbook(ctx, cables_of(row_name), indices, extras, scope=note, share=share)]

        out[path] = Stream(produce)
    return out


@SUBSETS.register("workbook")
def render_workbook_rows(ctx: RenderContext, selection: RowSelection) -> dict[str, bytes | Stream]:
    """``snc diff``: past ``ROW_LIMIT`` the workbooks of the rows of racks that may differ
    (``selection.hall_rows``), each made from every cable with an end in that row, the others
    marked the same; the whole workbook otherwise."""
    plan = cable_plan(ctx.fabric, ctx.catalogue)
    if selection.hall_rows is None or len(plan) <= ROW_LIMIT:
        return _workbooks(ctx)
    item, row = item_rows(ctx)
    names = sorted({r.row for r in ctx.fabric.racks})
    wanted = np.array([n in selection.hall_rows for n in names], dtype=bool)
    keep = np.zeros(len(plan), dtype=bool)
    keep[item[wanted[row]]] = True
    with_cables = {names[k] for k in np.unique(row).tolist()}
    same = {n for n in with_cables if n not in selection.hall_rows}
    names_of = [r.name for r in ctx.fabric.racks]
    touched = _racks_of(ctx, selection.cables) if len(set(names_of)) == len(names_of) else None  # sheets by rack name
    return _row_workbooks(ctx, keep, _not_cables(ctx), same, selection, touched)


def _racks_of(ctx: RenderContext, items: np.ndarray) -> set[str]:
    """The racks (by name) where a cable of ``items`` (a mask of the cable plan) has an end."""
    f = ctx.fabric
    plan = cable_plan(f, ctx.catalogue)
    members = plan.links[np.repeat(items, np.diff(plan.start))]
    arr = f.links.arrays()
    dev_rack = np.array([d.rack for d in f.devices], dtype=np.int64)
    at = np.unique(np.concatenate((dev_rack[arr.a[members]], dev_rack[arr.b[members]])))
    return {f.racks[r].name for r in at.tolist() if r >= 0}


def _pulls(ctx: RenderContext, keep: np.ndarray, selection: RowSelection) -> list[_Cable]:
    """``pull_cables(ctx, keep)`` in a diff: a cable whose twin the other side made already (the
    same cable, ``selection.twins``: every column the same but the rack's index, which is this
    side's) is taken from there, the rest made; what was made is left for the other side."""
    racks = ctx.fabric.racks
    other = selection.shared.pop(f"pull_cables/{1 - selection.side}", None)
    items = np.flatnonzero(keep)
    if other is None or selection.twins is None:
        made = pull_cables(ctx, keep)
        selection.shared[f"pull_cables/{selection.side}"] = (len(keep), items, made, [r.name for r in racks])
        return made
    their_count, their_items, theirs, their_racks = other
    at = np.full(their_count + 1, -1, dtype=np.int64)  # the last: for no twin
    at[their_items] = np.arange(len(their_items))  # their item -> its place in theirs
    twin = selection.twins[items]
    taken = at[np.where(twin >= 0, twin, their_count)]  # -1: not made there
    make = np.zeros(len(keep), dtype=bool)
    make[items[taken < 0]] = True
    fresh = iter(pull_cables(ctx, make))
    index = {r.name: r.index for r in racks}
    rack_of = [index.get(name, -1) for name in their_racks]  # their rack index -> ours (the same name)
    same_racks = rack_of == list(range(len(their_racks)))
    out: list[_Cable] = []
    for t in taken.tolist():
        if t < 0:
            out.append(next(fresh))
            continue
        x = theirs[t]
        if not same_racks:
            x = x._replace(ends=tuple([e._replace(rack=rack_of[e.rack]) if e.rack >= 0 else e for e in x.ends]))
        out.append(x)
    return out


def item_rows(ctx: RenderContext) -> tuple[np.ndarray, np.ndarray]:
    """(item, row of racks) for every end of every cable of the plan (a row as its index among
    the Fabric's row names, sorted): where each cable's ends are, for the per-row workbooks."""
    f = ctx.fabric
    plan = cable_plan(f, ctx.catalogue)
    names = sorted({r.row for r in f.racks})
    row_index = {n: k for k, n in enumerate(names)}
    rack_row = np.array([row_index[r.row] for r in f.racks] + [-1], dtype=np.int64)  # [-1]: unplaced
    dev_rack = np.array([d.rack for d in f.devices], dtype=np.int64)
    arr = f.links.arrays()
    members = plan.links
    item = np.repeat(np.arange(len(plan), dtype=np.int64), np.diff(plan.start))
    both_item = np.concatenate((item, item))
    both_row = rack_row[np.concatenate((dev_rack[arr.a[members]], dev_rack[arr.b[members]]))]
    placed = both_row >= 0
    return both_item[placed], both_row[placed]


def _not_cables(ctx: RenderContext) -> list[tuple[str, int]]:
    """The summary's lines of what the BOM counts that are not cables (the design's, in every workbook)."""
    bom = bill_of_materials(ctx.catalogue, ctx.fabric, ctx.blueprint)
    sections = (("connector", "orthogonal connectors (connectors/connectors.csv)"), ("cartridge", "cable cartridges"))
    return [(f"not cables: {what}", bom.count(section)) for section, what in sections if bom.count(section)]


def _workbook(
    ctx: RenderContext,
    rows: list[_Cable],
    rack_indices: Sequence[int],
    extras: list[tuple[str, int]],
    fabric_rows: list[CableRow] | None = None,
    scope: str = "",
    share: _SheetShare | None = None,
) -> bytes:
    """A workbook of ``rows``: the summary, a sheet per fabric of ``fabric_rows`` (the same
    cables' whole rows) if given, and the pull lists of the racks ``rack_indices``; with
    ``share``, the pull lists the other side of ``snc diff`` made that are the same here taken."""
    book = _Xlsx(f"{ctx.blueprint.metadata.name} cabling", ctx.blueprint.naming.paper)
    header = book.style(bold=True, color="#FFFFFF", fill="#404040", border="auto")
    fills = _fills(book, set(map(_KEY, rows)))
    fab_col, tier_col = CABLE_COLUMNS.index("fabric"), CABLE_COLUMNS.index("tier")
    names: set[str] = set()
    counts = Counter(zip(map(_FIRST, map(_KEY, rows)), map(_KIND, rows)))  # (fabric, type), in C
    _summary(book, ctx, counts, len(rows), extras, fills, names, scope)
    if fabric_rows is not None:
        by_fabric: dict[str, list[CableRow]] = defaultdict(list)
        for r in fabric_rows:
            by_fabric[r.text[fab_col]].append(r)
        for fabric in sorted(by_fabric):
            rows_of = by_fabric[fabric]
            body = _rows_xml(CABLE_COLUMNS, [(r.text, fills[(r.text[fab_col], r.text[tier_col])]) for r in rows_of])
            book.table(_sheet_name(f"fabric {fabric}", names), CABLE_COLUMNS, header, body, len(rows_of))
    theirs = share.take((header, sorted(fills.items()))) if share is not None else None
    racks = ctx.fabric.racks
    taken = [i for i in rack_indices if theirs is not None and racks[i].name in theirs]
    made = _pull_lists(ctx, rows, sorted(set(rack_indices) - set(taken)) if taken else rack_indices)
    sheets: list[tuple[str, list[tuple[str, ...]] | None, list[tuple[str, str]]]] = list(made)
    if taken:  # the sheets taken among those made, in the pull lists' order
        sheets = sorted(sheets + [(racks[i].name, None, []) for i in taken], key=_rack_order(racks))
    for rack, texts, keys in sheets:
        name = _sheet_name(f"rack {rack}", names)
        if texts is None:
            assert theirs is not None
            count, part = theirs[rack]
            book.table_part(name, count, len(PULL_COLUMNS) - 1, part)
            continue
        body = _sheet_xml(PULL_COLUMNS, texts, list(map(fills.__getitem__, keys)))
        part = book.table(name, PULL_COLUMNS, header, body, len(texts))
        if share is not None and theirs is None:
            share.keep(rack, len(texts), part)
    if share is not None and theirs is None:
        share.publish()
    return book.close()


def _rack_order(racks: Sequence[Rack]) -> Callable[[tuple], tuple[int, int, str]]:
    """The pull lists' order of sheets (:func:`_pull_lists`), for sheets named by rack."""
    at = {r.name: r for r in racks}
    return lambda sheet: (at[sheet[0]].row_index, at[sheet[0]].position, sheet[0])


class _SheetShare:
    """``snc diff``'s pull-list sheets of one row of racks' workbook, from the side made first
    to the other (``RowSelection.shared``): the sheet of a rack where no cable of either side
    may differ (``touched``: the racks where one of this side's may) is the same XML on both
    sides (every cable with an end there has its twin there on the other side, the same row of
    every column: ``compare/rows.py``), so the second side takes the first side's deflated part.
    Only when both sides' workbooks give the cells the same formats (``style``: the header's
    and the fills'), which the sheet's XML holds."""

    def __init__(self, shared: dict[str, Any], row: str, touched: set[str]) -> None:
        self.shared, self.key, self.touched = shared, f"workbook_sheets/{row}", touched
        self.style: object = None
        self.parts: dict[str, tuple[int, Part]] = {}

    def take(self, style: object) -> dict[str, tuple[int, Part]] | None:
        """The other side's sheets that are the same here (rack name -> (rows, part)), or None
        (this side is the first, or the formats differ): then this side keeps its own."""
        self.style = style
        found = self.shared.pop(self.key, None)
        if found is None or found[0] != style:
            return None
        return {rack: x for rack, x in found[1].items() if rack not in self.touched}

    def keep(self, rack: str, rows: int, part: Part) -> None:
        if rack not in self.touched:
            self.parts[rack] = (rows, part)

    def publish(self) -> None:
        self.shared[self.key] = (self.style, self.parts)


def _pull_lists(
    ctx: RenderContext, rows: list[_Cable], rack_indices: Sequence[int] | None
) -> list[tuple[str, list[tuple[str, ...]], list[tuple[str, str]]]]:
    """Per rack: each cable with an end in it once, at its lowest end there (U, then end order),
    in U order, then cable ID; the rows' texts and, row for row, their cables' (fabric, tier). A cable's shared columns
    and each end's label are taken once for the rows of both its ends."""
    racks = ctx.fabric.racks
    wanted = set(rack_indices) if rack_indices is not None else set(range(len(racks)))
    per_rack = _pull_entries(rows, wanted)
    out = []
    for index in sorted(per_rack, key=lambda i: (racks[i].row_index, racks[i].position, racks[i].name)):
        pulls = per_rack[index]
        pulls.sort(key=itemgetter(0, 1))
        out.append((racks[index].name, list(map(_THIRD, pulls)), list(map(_FOURTH, pulls))))
    return out


_Entry = tuple[int, str, tuple[str, ...], tuple[str, str], int]  # (U, cable ID, row text, (fabric, tier), cable's place)


def _pull_entries(rows: list[_Cable], wanted: set[int]) -> dict[int, list[_Entry]]:
    """Per rack of ``wanted``, in ``rows``' order: each cable with an end in it once, at its
    lowest end there (the A end on a tie), as (U, cable ID, row text, (fabric, tier), place of
    the cable in ``rows``)."""
    per_rack: dict[int, list[_Entry]] = defaultdict(list)
    u_text = _UText()
    for n, (common, key, _, ends) in enumerate(rows):
        if len(ends) == 2:  # a cable of two ends: the rows of both from the same pieces
            (r0, u0, name0, plug0, place0, label0), (r1, u1, name1, plug1, place1, label1) = ends
            in0, in1 = r0 in wanted, r1 in wanted
            if not (in0 or in1):
                continue
            if r0 == r1:  # one row, at the lower end (the A end on a tie)
                if u1 < u0:
                    in0 = False
                else:
                    in1 = False
            # PULL_SHARED's seven cells unpacked once: each row's tuple is built in one step.
            no, cid, fab, tier, kind, part, length = common
            if in0:
                per_rack[r0].append(
                    (u0, cid, (place1, u_text[u0], name0, plug0, no, cid, fab, tier, kind, part, length, label0, label1), key, n)
                )
            if in1:
                per_rack[r1].append(
                    (u1, cid, (place0, u_text[u1], name1, plug1, no, cid, fab, tier, kind, part, length, label1, label0), key, n)
                )
            continue
        lowest: dict[int, int] = {}  # rack -> the end there that the pull list shows
        for k, end in enumerate(ends):
            if end.rack not in wanted:
                continue
            j = lowest.get(end.rack)
            if j is None or end.u < ends[j].u:
                lowest[end.rack] = k
        for rack, k in lowest.items():
            end = ends[k]
            if k == 0:
                far = ends[1]
                far_place = far.place if len(ends) == 2 else "; ".join(x.place for x in ends[1:])
            else:
                far = ends[0]
                far_place = far.place
            text = (far_place, str(end.u) if end.u else "", end.name, end.plug, *common, end.label, far.label)
            per_rack[rack].append((end.u, common[1], text, key, n))
    return per_rack


class _RowPulls:
    """The per-row workbooks' pull lists made a column at a time (a render's; ``snc diff`` keeps
    the PullCables): the one-link, non-splitter cables of a row of racks from the tables
    cables.csv's columns gather from (``cabling.CableColumns.pull_parts``), the others as
    PullCables (``pull_cables``); their rows sorted together as :func:`_pull_lists` sorts them
    (rack, U, cable ID, then cable order), so the sheets are the same bytes. Nothing is held
    from one row's workbook to the next but the tables."""

    def __init__(self, ctx: RenderContext) -> None:
        f = ctx.fabric
        self.ctx, self.plan = ctx, cable_plan(f, ctx.catalogue)
        self.simple = simple_cables(self.plan)
        self.columns = CableColumns(ctx)
        e, x = self.columns.ends, link_text(ctx)
        self.ends, self.text = e, x
        self.rack = np.array(e.rack_index.tolist() + [-1], dtype=np.int64)  # per device; [-1] for no rack
        self.u = np.array(e.u_int.tolist(), dtype=np.int64)
        self.u_text = objects([str(u) if u else "" for u in self.u.tolist()])
        self.places = objects([f"{r} U{u} {n} " for r, u, n in zip(e.rack.tolist(), e.u.tolist(), e.name.tolist(), strict=True)])
        self.rank = id_rank(self.columns.ids)
        racks = f.racks
        order = sorted(range(len(racks)), key=lambda i: (racks[i].row_index, racks[i].position, racks[i].name))
        self.rack_order = np.zeros(len(racks), dtype=np.int64)
        self.rack_order[order] = np.arange(len(racks), dtype=np.int64)
        self.rack_names = [r.name for r in racks]
        self.keys = objects(list(zip(x.fabric.tolist(), x.tier.tolist(), strict=True)))  # (fabric, tier) per spec

    def __call__(
        self, items: np.ndarray, rack_indices: Sequence[int]
    ) -> tuple[Counter[tuple[str, str]], set[tuple[str, str]], list[tuple[str, list[str], list[tuple[str, str]]]]]:
        """Of the cables ``items`` (plan items, ascending), in the racks ``rack_indices``: the
        count per (fabric, type), the (fabric, tier) keys, and per rack in order its name, its
        pull list's cells (PULL_COLUMNS, row after row) and each row's (fabric, tier)."""
        x, e = self.text, self.ends
        fast = self.simple[items]
        simple, others = items[fast], items[~fast]
        wanted = np.zeros(len(self.rack_order) + 1, dtype=bool)  # [-1]: no rack
        wanted[np.asarray(rack_indices, dtype=np.int64)] = True
        c = self.columns.pull_parts(simple)
        ra, rb, ua, ub = self.rack[c.a], self.rack[c.b], self.u[c.a], self.u[c.b]
        same = ra == rb  # one rack: one row, at the lower end (A on a tie)
        lower_b = same & (ub < ua)
        at_a = np.flatnonzero(wanted[ra] & ~lower_b)
        at_b = np.flatnonzero(wanted[rb] & (~same | lower_b))
        both = np.concatenate((at_a, at_b))
        near = np.concatenate((c.a[at_a], c.b[at_b]))
        far = np.concatenate((c.b[at_a], c.a[at_b]))
        spec = c.spec[both]
        stock = c.stock_at[both]
        a_plug, b_plug, a_label, b_label = objects(c.a_plug), objects(c.b_plug), objects(c.a_label), objects(c.b_label)
        far_plug = np.concatenate((b_plug[at_a], a_plug[at_b]))
        cells: list[np.ndarray] = [
            objects(list(map(str.__add__, self.places[far].tolist(), far_plug.tolist()))),
            self.u_text[near],
            e.name[near],
            np.concatenate((a_plug[at_a], b_plug[at_b])),
            objects(c.number)[both],
            objects(c.cid)[both],
            x.fabric[spec],
            x.tier[spec],
            x.type[spec],
            x.part[stock],
            x.stock[stock],
            np.concatenate((a_label[at_a], b_label[at_b])),
            np.concatenate((b_label[at_a], a_label[at_b])),
        ]
        keys = self.keys[spec]
        rack = np.concatenate((ra[at_a], rb[at_b]))
        u = np.concatenate((ua[at_a], ub[at_b]))
        item = simple[both]
        counts: Counter[tuple[str, str]] = Counter()
        per_spec = np.bincount(c.spec, minlength=len(self.keys))
        specs = np.flatnonzero(per_spec)
        for s, n in zip(specs.tolist(), per_spec[specs].tolist(), strict=True):
            counts[(x.fabric[s], x.type[s])] += n
        present = set(self.keys[specs].tolist())
        if len(others):
            keep = np.zeros(len(self.plan), dtype=bool)
            keep[others] = True
            pulls = pull_cables(self.ctx, keep)
            counts.update(zip(map(_FIRST, map(_KEY, pulls)), map(_KIND, pulls)))
            present |= set(map(_KEY, pulls))
            entries = [(r, *x) for r, found in _pull_entries(pulls, set(rack_indices)).items() for x in found]
            if entries:
                rack = np.concatenate((rack, np.array([x[0] for x in entries], dtype=np.int64)))
                u = np.concatenate((u, np.array([x[1] for x in entries], dtype=np.int64)))
                item = np.concatenate((item, others[np.array([x[5] for x in entries], dtype=np.int64)]))
                texts = [x[3] for x in entries]
                cells = [np.concatenate((col, objects([t[k] for t in texts]))) for k, col in enumerate(cells)]
                keys = np.concatenate((keys, objects([x[4] for x in entries])))
        order = np.lexsort((item, self.rank[item], u, self.rack_order[rack]))
        rack = rack[order]
        table = np.empty((len(order), len(cells)), dtype=object)  # the rows' cells in order, row after row
        for k, col in enumerate(cells):
            table[:, k] = col[order]
        key_list = keys[order].tolist()
        starts = np.flatnonzero(np.diff(rack, prepend=-2)).tolist() + [len(rack)]
        sheets = [
            (self.rack_names[rack[lo]], table[lo:hi].reshape(-1).tolist(), key_list[lo:hi])
            for lo, hi in zip(starts[:-1], starts[1:], strict=True)
        ]
        return counts, present, sheets


def id_rank(ids: np.ndarray) -> np.ndarray:
    """Each cable ID's place in the IDs sorted (equal IDs may rank either way: the cable's
    order breaks the tie after it): the items' own order when the plan is in cable-ID order."""
    if len(ids) < 2 or bool((ids[:-1] <= ids[1:]).all()):
        return np.arange(len(ids), dtype=np.int64)
    rank: np.ndarray = np.unique(ids, return_inverse=True)[1].reshape(-1).astype(np.int64)
    return rank


def _columns_workbook(
    ctx: RenderContext,
    pulls: _RowPulls,
    items: np.ndarray,
    rack_indices: Sequence[int],
    extras: list[tuple[str, int]],
    scope: str,
) -> bytes:
    """:func:`_workbook` of a row of racks' cables ``items`` (plan items) and its racks, made a column at a time."""
    counts, keys, sheets = pulls(items, rack_indices)
    book = _Xlsx(f"{ctx.blueprint.metadata.name} cabling", ctx.blueprint.naming.paper)
    header = book.style(bold=True, color="#FFFFFF", fill="#404040", border="auto")
    fills = _fills(book, keys)
    names: set[str] = set()
    _summary(book, ctx, counts, len(items), extras, fills, names, scope)
    for rack, cells, rows in sheets:
        body = _sheet_cells(PULL_COLUMNS, cells, list(map(fills.__getitem__, rows)))
        book.table(_sheet_name(f"rack {rack}", names), PULL_COLUMNS, header, body, len(rows))
    return book.close()


class _UText(dict[int, str]):
    """A rack unit's cell text ("" for none), made once per unit."""

    def __missing__(self, u: int) -> str:
        text = self[u] = str(u) if u else ""
        return text


def _summary(
    book: _Xlsx,
    ctx: RenderContext,
    counts: Counter[tuple[str, str]],
    total: int,
    extras: list[tuple[str, int]],
    fills: dict[tuple[str, str], int],
    names: set[str],
    scope: str = "",
) -> None:
    """The summary sheet: ``counts`` of the workbook's cables per (fabric, type), ``total`` of them."""
    header = book.style(bold=True, color="#FFFFFF", fill="#404040", border="auto")
    bold = book.style(bold=True)
    lines: list[tuple[int, list[tuple[str | int, int]]]] = []  # (row, cells)
    n = 0
    lines.append((n, [(f"{ctx.blueprint.metadata.name}: cabling workbook", book.style(bold=True, size=14))]))
    n += 1
    if scope:
        lines.append((n, [(scope, 0)]))
        n += 1
    n += 1
    lines.append((n, [(text, header) for text in ("fabric", "type", "cables")]))
    for (fabric, kind), count in sorted(counts.items()):
        n += 1
        lines.append((n, [(fabric, 0), (kind, 0), (count, 0)]))
    n += 1
    lines.append((n, [("cables in this workbook", bold), ("", -1), (total, bold)]))
    n += 1
    for text, count in extras:
        n += 1
        lines.append((n, [(text, 0), ("", -1), (count, 0)]))
    n += 2
    lines.append((n, [("legend: fill per fabric and tier", bold)]))
    for (fabric, tier), fmt in sorted(fills.items()):
        n += 1
        lines.append((n, [(fabric, fmt), (tier, fmt)]))
    n += 2
    for line in (
        "Pull lists: one sheet per rack, each cable with an end in the rack once, in rack-unit order of that end;",
        "far_location is where the other end goes. Labels: the short label of each end (lines split by |).",
    ):
        lines.append((n, [(line, 0)]))
        n += 1
    body = []
    for row, cells in lines:
        xml = [_cell(f"{_col_name(k)}{row + 1}", value, xf) for k, (value, xf) in enumerate(cells) if xf >= 0]
        body.append(f'<row r="{row + 1}">{"".join(xml)}</row>')
    book.sheet(_sheet_name("Summary", names), [28, 22, 22, 22], body, n - 1, 2, selected=True)


def _fills(book: _Xlsx, keys: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """A fill per (fabric, tier) of ``keys``, in their order."""
    pairs = sorted(keys)
    fabrics = sorted({fabric for fabric, _ in pairs})
    out = {}
    for fabric, tier in pairs:
        shade = _TIER_FILLS.get(tier, _OTHER_FILL)[fabrics.index(fabric) % 2]
        out[(fabric, tier)] = book.style(fill=shade, border="#BFBFBF")
    return out


# -- the xlsx package: SpreadsheetML (ECMA-376 Part 1, 18.3 worksheets, 18.8 styles), inline strings --

_XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"
# naming.paper -> SpreadsheetML's pageSetup paperSize (ECMA-376 Part 1, ST_PaperSize: 1 Letter, 9 A4).
PAPER_SIZE = {"a4": 9, "letter": 1}
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # every part dated the zip epoch: same blueprint, same bytes
# Deflate level of the parts: level 1 is about 3x less CPU than zlib's default (6) on the sheets'
# XML for a file about a quarter larger (docs/performance.md).
_ZIP_LEVEL = 1


def _col_name(col: int) -> str:
    """Column letters of a 0-based column (0 -> A, 26 -> AA)."""
    name = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        name = chr(65 + rem) + name
    return name


def _col_width(width: float) -> float:
    """A column width in characters as Excel stores it (the default font's 7-pixel digit plus
    5 pixels of padding, rounded to 1/256), as XlsxWriter and Excel write it."""
    return int((width * 7 + 5) / 7 * 256) / 256


def _quote_sheet(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class _Xlsx:
    """A workbook of inline-string sheets, each sheet's XML deflated into the zip when it is
    added (one sheet's XML held at a time), the styles, the workbook with its defined names (print
    titles, filter ranges), the content types and relationships at ``close``."""

    def __init__(self, title: str, paper: str = "a4") -> None:
        self.title = title
        self.paper_size = PAPER_SIZE[paper]
        self.zip = ZipParts(_ZIP_DATE)
        self.sheets: list[tuple[str, str | None]] = []  # (name, the filter and print-title range's last cell)
        self.fonts: dict[tuple[bool, int, str | None], int] = {(False, 11, None): 0}
        self.fills: dict[str, int] = {}  # colour -> fill id (0 and 1 are the required none and gray125)
        self.borders: dict[str | None, int] = {None: 0}
        self.xfs: dict[tuple[int, int, int], int] = {(0, 0, 0): 0}

    def style(
        self, bold: bool = False, size: int = 11, color: str | None = None, fill: str | None = None, border: str | None = None
    ) -> int:
        """The cell format's index (cellXfs): ``fill`` and ``color`` as #RRGGBB, ``border`` a thin
        border all round, "auto" or #RRGGBB."""
        font = self.fonts.setdefault((bold, size, color), len(self.fonts))
        fill_id = self.fills.setdefault(fill, len(self.fills) + 2) if fill else 0
        border_id = self.borders.setdefault(border, len(self.borders))
        return self.xfs.setdefault((font, fill_id, border_id), len(self.xfs))

    def _part(self, name: str, data: str) -> Part:
        part = deflated(data.encode("utf-8"), _ZIP_LEVEL)
        self.zip.add(name, part)
        return part

    def table(self, name: str, columns: Sequence[str], header: int, body: list[str], count: int) -> Part:
        """A sheet of ``columns``: a header row (frozen, repeated on every printed page, filtered)
        and ``count`` data rows from row 2 (``body``, their XML)."""
        head = "".join(
            f'<c r="{_col_name(k)}1" s="{header}" t="inlineStr"><is><t>{_xml_text(text)}</t></is></c>'
            for k, text in enumerate(columns)
        )
        widths = [_WIDTHS.get(text, max(10, len(text) + 2)) for text in columns]
        return self.sheet(name, widths, [f'<row r="1">{head}</row>', *body], count, len(columns) - 1, table=max(count, 1))

    def sheet(
        self,
        name: str,
        widths: Sequence[float],
        body: list[str],
        last_row: int,
        last_col: int,
        table: int = 0,
        selected: bool = False,
    ) -> Part:
        """A sheet of rows 0..``last_row`` and columns 0..``last_col``; ``table``: the row count of
        the header row's filter range (then the header row is frozen and repeated when printed)."""
        number = len(self.sheets) + 1
        end = f"{_col_name(last_col)}{last_row + 1}"
        view = '<sheetView tabSelected="1" workbookViewId="0"' if selected else '<sheetView workbookViewId="0"'
        if table:
            view += '><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
            view += '<selection pane="bottomLeft"/></sheetView>'
        else:
            view += "/>"
        cols = "".join(
            f'<col min="{k + 1}" max="{k + 1}" width="{_col_width(w)}" customWidth="1"/>' for k, w in enumerate(widths)
        )
        filter_end = f"{_col_name(last_col)}{table + 1}" if table else None
        xml = [
            _XML_DECL,
            f'<worksheet xmlns="{_MAIN}" xmlns:r="{_REL}"><sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>',
            f'<dimension ref="A1:{end}"/><sheetViews>{view}</sheetViews><sheetFormatPr defaultRowHeight="15"/>',
            f"<cols>{cols}</cols><sheetData>",
            *body,
            "</sheetData>",
            f'<autoFilter ref="A1:{filter_end}"/>' if filter_end else "",
            '<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/>',
            f'<pageSetup paperSize="{self.paper_size}" fitToHeight="0" orientation="landscape"/></worksheet>',
        ]
        self.sheets.append((name, filter_end))
        return self._part(f"xl/worksheets/sheet{number}.xml", "".join(xml))

    def table_part(self, name: str, count: int, last_col: int, part: Part) -> None:
        """A sheet that :meth:`table` made (``count`` data rows, columns 0..``last_col``) in another
        package, as its deflated part: the same sheet under this package's name and number."""
        self.sheets.append((name, f"{_col_name(last_col)}{max(count, 1) + 1}"))
        self.zip.add(f"xl/worksheets/sheet{len(self.sheets)}.xml", part)

    def close(self) -> bytes:
        count = len(self.sheets)
        sheets = "".join(
            f'<sheet name="{_attr(name)}" sheetId="{k + 1}" r:id="rId{k + 1}"/>' for k, (name, _) in enumerate(self.sheets)
        )
        defined = [
            f'<definedName name="_xlnm._FilterDatabase" localSheetId="{k}" hidden="1">'
            f"{_xml_text(_quote_sheet(name))}!$A$1:{_absolute(end)}</definedName>"
            for k, (name, end) in enumerate(self.sheets)
            if end
        ] + [
            f'<definedName name="_xlnm.Print_Titles" localSheetId="{k}">{_xml_text(_quote_sheet(name))}!$1:$1</definedName>'
            for k, (name, end) in enumerate(self.sheets)
            if end
        ]
        names = f"<definedNames>{''.join(defined)}</definedNames>" if defined else ""
        self._part(
            "xl/workbook.xml",
            f'{_XML_DECL}<workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><workbookPr/><bookViews>'
            '<workbookView xWindow="240" yWindow="15" windowWidth="16095" windowHeight="9660"/></bookViews>'
            f'<sheets>{sheets}</sheets>{names}<calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>',
        )
        self._part("xl/styles.xml", self._styles())
        rels = [
            f'<Relationship Id="rId{k + 1}" Type="{_REL}/worksheet" Target="worksheets/sheet{k + 1}.xml"/>' for k in range(count)
        ]
        rels.append(f'<Relationship Id="rId{count + 1}" Type="{_REL}/styles" Target="styles.xml"/>')
        self._part("xl/_rels/workbook.xml.rels", f'{_XML_DECL}<Relationships xmlns="{_PKG_REL}">{"".join(rels)}</Relationships>')
        self._part(
            "docProps/core.xml",
            f'{_XML_DECL}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            f"<dc:title>{_xml_text(self.title)}</dc:title><dc:creator>snc</dc:creator><cp:lastModifiedBy>snc</cp:lastModifiedBy>"
            f'<dcterms:created xsi:type="dcterms:W3CDTF">{_CREATED}</dcterms:created>'
            f'<dcterms:modified xsi:type="dcterms:W3CDTF">{_CREATED}</dcterms:modified></cp:coreProperties>',
        )
        self._part(
            "_rels/.rels",
            f'{_XML_DECL}<Relationships xmlns="{_PKG_REL}">'
            f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="xl/workbook.xml"/>'
            f'<Relationship Id="rId2" Type="{_PKG_REL}/metadata/core-properties" Target="docProps/core.xml"/></Relationships>',
        )
        overrides = [
            f'<Override PartName="/xl/worksheets/sheet{k + 1}.xml" ContentType="{_CT}.worksheet+xml"/>' for k in range(count)
        ]
        self._part(
            "[Content_Types].xml",
            f'{_XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_CT}.sheet.main+xml"/>'
            f'<Override PartName="/xl/styles.xml" ContentType="{_CT}.styles+xml"/>'
            '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
            f"{''.join(overrides)}</Types>",
        )
        return self.zip.close()

    def _styles(self) -> str:
        def rgb(colour: str) -> str:
            return "FF" + colour.lstrip("#").upper()

        fonts = []
        for bold, size, color in self.fonts:
            tint = f'<color rgb="{rgb(color)}"/>' if color else ""
            fonts.append(f'<font>{"<b/>" if bold else ""}<sz val="{size}"/>{tint}<name val="Calibri"/><family val="2"/></font>')
        fills = ['<fill><patternFill patternType="none"/></fill>', '<fill><patternFill patternType="gray125"/></fill>']
        fills += [
            f'<fill><patternFill patternType="solid"><fgColor rgb="{rgb(c)}"/><bgColor indexed="64"/></patternFill></fill>'
            for c in self.fills
        ]
        borders = []
        for border in self.borders:
            if border is None:
                borders.append("<border><left/><right/><top/><bottom/><diagonal/></border>")
            else:
                tint = '<color auto="1"/>' if border == "auto" else f'<color rgb="{rgb(border)}"/>'
                borders.append(
                    "<border>"
                    + "".join(f'<{side} style="thin">{tint}</{side}>' for side in ("left", "right", "top", "bottom"))
                    + "<diagonal/></border>"
                )
        xfs = []
        for font_id, fill_id, border_id in self.xfs:
            applied = (
                (' applyFont="1"' if font_id else "")
                + (' applyFill="1"' if fill_id else "")
                + (' applyBorder="1"' if border_id else "")
            )
            xfs.append(f'<xf numFmtId="0" fontId="{font_id}" fillId="{fill_id}" borderId="{border_id}" xfId="0"{applied}/>')
        return (
            f'{_XML_DECL}<styleSheet xmlns="{_MAIN}"><fonts count="{len(fonts)}">{"".join(fonts)}</fonts>'
            f'<fills count="{len(fills)}">{"".join(fills)}</fills><borders count="{len(borders)}">{"".join(borders)}</borders>'
            '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
            f'<cellXfs count="{len(xfs)}">{"".join(xfs)}</cellXfs>'
            '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles><dxfs count="0"/>'
            '<tableStyles count="0" defaultTableStyle="TableStyleMedium9" defaultPivotStyle="PivotStyleLight16"/></styleSheet>'
        )


def _absolute(cell: str) -> str:
    """A1 -> $A$1."""
    letters = cell.rstrip("0123456789")
    return f"${letters}${cell[len(letters) :]}"


_CREATED = "2000-01-01T00:00:00Z"  # a fixed creation time: same blueprint, same bytes


def _cell(ref: str, value: str | int, xf: int) -> str:
    """One cell (the summary's): a number or an inline string."""
    style = f' s="{xf}"' if xf else ""
    if isinstance(value, int):
        return f'<c r="{ref}"{style}><v>{value}</v></c>'
    return f'<c r="{ref}"{style}{_string_tail(value)}'


# What a cell's text needs beyond the XML escape (& < >): the control characters and the
# non-characters (not allowed in XML 1.0: written as the _xHHHH_ escape), a literal _xHHHH_ (its
# underscore escaped as _x005F_, so a reader does not unescape it), and whitespace at either end
# (xml:space="preserve"): ECMA-376 Part 1, 22.9.2.19 (ST_Xstring). A text with none of them is
# written as it is.
_XML_SPECIAL = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]|_x[0-9a-fA-F]{4}_")
_ESCAPE_ESCAPE = re.compile(r"(_x[0-9a-fA-F]{4}_)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
# Over a sheet's (or a row's) cells joined by DEL (neither whitespace nor special, so no match
# spans two cells): the control characters, the _xHHHH_ escape, the non-characters, and a cell
# that starts or ends with whitespace. Cells with none of them are written by the row template,
# each text XML-escaped (& < >); a row with one is written cell by cell. (One alternation of all
# of these is about 5x slower than separate searches.)
_ROW_JOIN = "\x7f"
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\ufffe\uffff]")
_XML_ESCAPE = re.compile(r"_x[0-9a-fA-F]{4}_")
_LEADING_SPACE = re.compile(r"\x7f\s")  # in the joined row and in it reversed: a cell's first or last


def _xml_text(value: str) -> str:
    """A text as a cell's <t> holds it: XML-escaped, control characters as _xHHHH_."""
    if _XML_SPECIAL.search(value):
        value = _ESCAPE_ESCAPE.sub(r"_x005F\1", value)
        value = _CONTROL.sub(lambda m: f"_x{ord(m.group(0)):04X}_", value)
        value = value.replace("\ufffe", "_xFFFE_").replace("\uffff", "_xFFFF_")
        value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return value


_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0B, 0x20)])


def _has_control(ascii_text: str) -> bool:
    """Whether an ASCII text holds a control character: bytes' translate deletes them about 3x
    faster than the regular expression finds them (a sheet's text is mostly ASCII)."""
    data = ascii_text.encode("ascii")
    return len(data.translate(None, _CONTROL_BYTES)) != len(data)


def _needs_more(joined: str) -> bool:
    """Whether a cell of ``joined`` (texts joined by _ROW_JOIN) needs more than the XML escape."""
    return bool(
        (_has_control(joined) if joined.isascii() else _CONTROL_CHARS.search(joined))
        or ("_" in joined and _XML_ESCAPE.search(joined))  # one character's test is ~30x faster
        or _LEADING_SPACE.search(joined)
        or _LEADING_SPACE.search(joined[::-1])
        or joined[:1].isspace()
        or joined[-1:].isspace()
    )


def _escaped(joined: str) -> str:
    if "&" in joined or "<" in joined or ">" in joined:
        joined = joined.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return joined


def _row_texts(joined: str, width: int) -> list[str] | None:
    """The ``width`` cells of ``joined`` (texts joined by _ROW_JOIN) XML-escaped, or None when a
    cell needs more than the XML escape (or a text holds _ROW_JOIN)."""
    if _needs_more(joined):
        return None
    texts = _escaped(joined).split(_ROW_JOIN)
    return texts if len(texts) == width else None


def _sheet_texts(cells: list[str], joined: str) -> list[str] | None:
    """:func:`_row_texts` of a sheet's ``cells`` (``joined``: them joined by _ROW_JOIN): the
    cells themselves when none needs even the XML escape (most sheets: no split)."""
    if _needs_more(joined) or joined.count(_ROW_JOIN) != len(cells) - 1:
        return None
    escaped = _escaped(joined)
    return cells if escaped is joined else escaped.split(_ROW_JOIN)


_TEMPLATES: dict[tuple[tuple[str, ...], int], str] = {}


def _template(columns: Sequence[str], xf: int) -> str:
    """A data row's XML in ``columns`` and cell format ``xf``: %d its number, then per column a
    string column's text or a numeric column's cell tail (%s)."""
    key = (tuple(columns), xf)
    made = _TEMPLATES.get(key)
    if made is None:
        cells = [
            f'<c s="{xf}"%s' if name in _NUMERIC else f'<c s="{xf}" t="inlineStr"><is><t>%s</t></is></c>' for name in columns
        ]
        made = _TEMPLATES[key] = _ROW_HEAD + "".join(cells) + "</row>"
    return made


_ROW_HEAD = '<row r="%d">'
_ROW_HEADS: list[str] = []  # '<row r="n">' of rows 2.., shared by the sheets
_ROW_HEADS_KEPT = 65_536


def _row_heads(count: int) -> list[str]:
    """The row elements' starts of rows 2..``count`` + 1."""
    if count > _ROW_HEADS_KEPT:
        return [_ROW_HEAD % n for n in range(2, count + 2)]
    if len(_ROW_HEADS) < count:
        _ROW_HEADS.extend(_ROW_HEAD % n for n in range(len(_ROW_HEADS) + 2, count + 2))
    return _ROW_HEADS[:count]


def _rows_xml(columns: Sequence[str], rows: Sequence[tuple[Sequence[str], int]]) -> list[str]:
    """The XML of ``rows`` (cell texts, cell format) at rows 2.. of a sheet of ``columns``, its
    cells without references (each follows the one before: ECMA-376 Part 1, 18.3.1.4). When no
    text of the sheet needs more than the XML escape (one test over its cells joined), the rows
    are their formats' row templates filled with the escaped texts, the numeric columns' cells
    put in column by column, all at once (:func:`_interleaved`); otherwise row by row,
    the same way or cell by cell."""
    return _sheet_xml(columns, list(map(_FIRST, rows)), list(map(_SECOND, rows)))


def _sheet_xml(columns: Sequence[str], values_of: Sequence[Sequence[str]], xfs: list[int]) -> list[str]:
    """:func:`_rows_xml` of the rows' texts ``values_of`` and, row for row, their formats ``xfs``."""
    if not values_of:
        return []
    width = len(columns)
    if len(values_of) >= 1_048_575:
        raise ValueError(f"{len(values_of):,} rows do not fit a sheet")
    if set(map(len, values_of)) != {width}:
        bad = next(len(values) for values in values_of if len(values) != width)
        raise ValueError(f"a row of {bad} cells in a sheet of {width} columns")
    return _sheet_cells(columns, list(chain.from_iterable(values_of)), xfs)


def _sheet_cells(columns: Sequence[str], cells: list[str], xfs: list[int]) -> list[str]:
    """:func:`_sheet_xml` of the rows' texts row after row in one list (``cells``, len(columns) per row)."""
    width = len(columns)
    if len(cells) != width * len(xfs):
        raise ValueError(f"{len(cells)} cells for {len(xfs)} rows of {width} columns")
    if not xfs:
        return []
    if len(xfs) >= 1_048_575:
        raise ValueError(f"{len(xfs):,} rows do not fit a sheet")
    numeric = [c for c, name in enumerate(columns) if name in _NUMERIC]
    tails = _NUMBER_TAILS
    join = _ROW_JOIN.join
    templates = {xf: _template(columns, xf) for xf in set(xfs)}
    flat = _sheet_texts(cells, join(cells))
    if flat is not None:
        for c in numeric:  # from the texts themselves, not the escaped
            column = cells[c::width]
            found = list(map(tails.get, column))
            if None in found:
                flat[c::width] = [tail or _number_tail(v) for tail, v in zip(found, column, strict=True)]
            else:
                flat[c::width] = cast(list[str], found)
        return _interleaved(templates, xfs, flat, width)
    out: list[str] = []
    for n, xf in enumerate(xfs, start=2):
        values = cells[(n - 2) * width : (n - 1) * width]
        texts = _row_texts(join(values), width)
        if texts is not None:
            for c in numeric:
                v = values[c]
                texts[c] = tails.get(v) or _number_tail(v)
            out.append(templates[xf] % (n, *texts))
        else:
            row = [
                f'<c s="{xf}"' + (tails.get(v) or _number_tail(v) if c in numeric else _string_tail(v))
                for c, v in enumerate(values)
            ]
            out.append(f'<row r="{n}">{"".join(row)}</row>')
    return out


def _interleaved(templates: dict[int, str], xfs: list[int], flat: list[str], width: int) -> list[str]:
    """Every row's template filled with its ``width`` texts of ``flat``, as the pieces of one
    text: the templates' fixed pieces (the row's start, then the text between two cells' texts)
    and the texts put in place a column at a time by slice assignment, joined once with the rest
    of the sheet; the %-format of each row without the bytecode and tuple per row."""
    count = len(xfs)
    stride = 2 * width + 2  # the row's start, (piece, text) per column, the row's end
    out = [""] * (stride * count)
    out[::stride] = _row_heads(count)
    pieces = {xf: template[len(_ROW_HEAD) :].split("%s") for xf, template in templates.items()}
    for j in range(width + 1):  # the piece before column j's text (j = width: the row's end)
        if len(pieces) == 1:
            (only,) = pieces.values()
            out[1 + 2 * j :: stride] = [only[j]] * count
        else:
            out[1 + 2 * j :: stride] = list(map({xf: p[j] for xf, p in pieces.items()}.__getitem__, xfs))
    for j in range(width):
        out[2 + 2 * j :: stride] = flat[j::width]
    return out


_FIRST, _SECOND, _THIRD, _FOURTH = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)
_KEY, _KIND = attrgetter("key"), attrgetter("kind")  # a PullCable's (fabric, tier) and type
_NUMBER_TAILS: dict[str, str] = {}


def _number_tail(value: str) -> str:
    """A numeric column's cell after its style: the number, or its text when it is none (or
    empty); remembered per text."""
    try:
        number = float(value) if value else None
    except ValueError:
        number = None
    if number is None or number != number or number in (float("inf"), float("-inf")):
        tail = _string_tail(value)
    else:
        tail = f"><v>{number:.16G}</v></c>"
    if len(_NUMBER_TAILS) < 100_000:
        _NUMBER_TAILS[value] = tail
    return tail


def _string_tail(value: str) -> str:
    """An inline-string cell after its style."""
    preserve = ' xml:space="preserve"' if value[:1].isspace() or value[-1:].isspace() else ""
    return f' t="inlineStr"><is><t{preserve}>{_xml_text(value)}</t></is></c>'


def _sheet_name(text: str, taken: set[str]) -> str:
    """A valid, unique sheet name: at most 31 characters, none of []:*?/\\."""
    base = _SHEET_BAD.sub("_", text)[:31]
    name, k = base, 1
    while name.lower() in taken:
        k += 1
        name = f"{base[: 31 - len(str(k)) - 1]}~{k}"
    taken.add(name.lower())
    return name


def _file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"
