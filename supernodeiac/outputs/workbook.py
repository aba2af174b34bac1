"""The cabling workbook (``cabling/cabling.xlsx``): what a crew opens on a laptop or prints.

* ``Summary``: the design's cables per fabric and type (the BOM's counts), connectors and
  cartridges (not cables: their own sheets in ``connectors/``), and the legend of fills;
* one sheet per fabric: every physical cable of it (the columns of ``cables.csv``);
* one pull list per rack: every cable with an end in the rack, once, in rack-unit order of its
  end there, the far end's location first (where the cable goes is what the crew reads first).

Every sheet has a frozen header row, a filter, column widths, a fill per fabric and tier (the
legend on the summary), and prints landscape on A4 one page wide with the header repeated.
Every cell is written as a string or number, never as a formula (XlsxWriter's string writer),
so a name that starts with ``=`` stays text, as in the CSVs.

Size: a workbook takes rows in XlsxWriter's constant-memory mode, its data rows written as
XlsxWriter's bytes by ``_Cells`` (a row template per sheet, one text test over a sheet), its
sheets' rows held in a buffer each (``_RowsInMemory``), the BOM's counts made once. Past
``ROW_LIMIT`` cables a design gets one workbook per row of racks (``cabling/rows/<row>.xlsx``:
the summary, which says so, and that row's pull lists, every cable with an end in the row; the
fabric sheets are ``cables.csv``), at any size: the cables are bucketed by row in one pass and
each row's workbook is made when it is written (its parts packed in memory), so one is held at a
time. What is left at 131k is mostly the shared cable rows and XlsxWriter's zip compression
(docs/performance.md). ``WORKBOOK_LIMIT`` is the size past which the label sheets and the NetBox CSVs are not rendered.
"""

from __future__ import annotations

import datetime
import io
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import xlsxwriter
from xlsxwriter.utility import _preserve_whitespace, xl_col_to_name
from xlsxwriter.worksheet import Worksheet

from ..facts.bom import bill_of_materials
from ..facts.cable_plan import cable_plan
from .base import RENDERERS, SAME_PREFIX, SUBSETS, RenderContext, RowSelection, Stream
from .cabling import CABLE_COLUMNS, LINE_JOIN, CableRow, cable_rows

ROW_LIMIT = 50_000  # cables; past this one workbook per row of racks
WORKBOOK_LIMIT = 250_000  # cables; past this no workbook (see the module docstring)
# cables; a per-row workbook of at most this many packs its parts in memory (_Book): the many
# small sheets of a compute row, not the 10^5-cable switch rows, whose packed parts would hold
# a few hundred MB (XlsxWriter keeps each part's buffer until the zip is closed)
PACK_IN_MEMORY = 20_000

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
_EPOCH = datetime.datetime(2000, 1, 1)  # a fixed creation time: same blueprint, same bytes
_SHEET_BAD = re.compile(r"[\[\]:*?/\\]")


@RENDERERS.register("workbook")
def render_workbook(ctx: RenderContext) -> dict[str, bytes | Stream]:
    return _workbooks(ctx)


def _workbooks(ctx: RenderContext) -> dict[str, bytes | Stream]:
    rows = list(cable_rows(ctx))
    if not rows:
        return {}
    racks = ctx.fabric.racks
    extras = _not_cables(ctx)
    if len(rows) <= ROW_LIMIT:
        return {"cabling/cabling.xlsx": _workbook(ctx, rows, [r.index for r in racks], extras, fabric_sheets=True)}
    return _row_workbooks(ctx, rows, extras)


def _row_workbooks(
    ctx: RenderContext, rows: list[CableRow], extras: list[tuple[str, int]], same: set[str] | None = None
) -> dict[str, bytes | Stream]:
    """One workbook per row of racks: each cable in the workbook of every row it has an end in,
    bucketed in one pass; each row's workbook is made when it is written. ``same``: rows of racks
    left out as the same on both sides of ``snc diff`` (marked, not made)."""
    racks = ctx.fabric.racks
    row_of = [r.row for r in racks]
    by_row: dict[str, list[int]] = defaultdict(list)
    for r in racks:
        by_row[r.row].append(r.index)
    cables_of: dict[str, list[CableRow]] = defaultdict(list)
    for x in rows:
        for name in dict.fromkeys(row_of[e.rack] for e in x.ends if e.rack >= 0):
            cables_of[name].append(x)
    scope = f"more than {ROW_LIMIT:,} cables: one workbook per row of racks (cabling/rows/<row>.xlsx)"
    out: dict[str, bytes | Stream] = {}
    for row_name, indices in sorted(by_row.items()):
        path = f"cabling/rows/{_file_part(row_name)}.xlsx"
        if same is not None and row_name in same:
            out[SAME_PREFIX + path] = b""
            continue
        if row_name not in cables_of:
            continue

        def produce(row_name: str = row_name, indices: list[int] = indices) -> list[bytes]:
            note = f"row {row_name}: its racks' pull lists, the cables with an end in them; the design has {scope}"
            return [_workbook(ctx, cables_of[row_name], indices, extras, fabric_sheets=False, scope=note)]

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
    return _row_workbooks(ctx, list(cable_rows(ctx, keep)), _not_cables(ctx), same)


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
    rows: list[CableRow],
    rack_indices: Sequence[int],
    extras: list[tuple[str, int]],
    fabric_sheets: bool,
    scope: str = "",
) -> bytes:
    buffer = io.BytesIO()
    book = _Book(
        buffer,
        {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False, "strings_to_urls": False},
        parts_in_memory=not fabric_sheets and len(rows) <= PACK_IN_MEMORY,
    )
    book.set_properties({"title": f"{ctx.blueprint.metadata.name} cabling", "created": _EPOCH, "author": "snc"})
    header = book.add_format({"bold": True, "bg_color": "#404040", "font_color": "#FFFFFF", "border": 1})
    fills = _fills(book, rows)
    fab_col, tier_col = CABLE_COLUMNS.index("fabric"), CABLE_COLUMNS.index("tier")
    names: set[str] = set()
    cells = _Cells()
    _summary(book, ctx, rows, extras, header, fills, names, scope)
    if fabric_sheets:
        by_fabric: dict[str, list[CableRow]] = defaultdict(list)
        for r in rows:
            by_fabric[r.text[fab_col]].append(r)
        for fabric in sorted(by_fabric):
            sheet = _sheet(book, _sheet_name(f"fabric {fabric}", names), CABLE_COLUMNS, header)
            rows_of = by_fabric[fabric]
            cells.write(sheet, CABLE_COLUMNS, [(r.text, fills[(r.text[fab_col], r.text[tier_col])]) for r in rows_of])
            sheet.autofilter(0, 0, len(by_fabric[fabric]), len(CABLE_COLUMNS) - 1)
    for rack, pulls in _pull_lists(ctx, rows, rack_indices):
        sheet = _sheet(book, _sheet_name(f"rack {rack}", names), PULL_COLUMNS, header)
        cells.write(sheet, PULL_COLUMNS, [(text, fills[(fabric, tier)]) for text, fabric, tier in pulls])
        sheet.autofilter(0, 0, max(len(pulls), 1), len(PULL_COLUMNS) - 1)
    book.close()
    return buffer.getvalue()


class _RowsInMemory(Worksheet):
    """A constant-memory sheet whose rows are held in a string buffer instead of a temp file each
    (thousands of sheets: a file's create, open, copy and unlink per sheet); the same bytes."""

    def _initialize(self, init_data: dict[str, Any]) -> None:
        super()._initialize({**init_data, "constant_memory": False})
        self.constant_memory = True
        self.row_data_fh = self.fh = io.StringIO()

    def _opt_close(self) -> None:
        pass  # the buffer stays open until the sheet is assembled

    def _opt_reopen(self) -> None:
        self.fh = self.row_data_fh

    def _write_optimized_sheet_data(self) -> None:
        if self.dim_rowmin is None:
            self._xml_empty_tag("sheetData")
        else:
            self._xml_start_tag("sheetData")
            self.fh.write(self.row_data_fh.getvalue())
            self.row_data_fh.close()
            self._xml_end_tag("sheetData")


class _Book(xlsxwriter.Workbook):
    """A constant-memory workbook of _RowsInMemory sheets. ``parts_in_memory``: XlsxWriter's
    packager assembles each XML part in a string buffer instead of a temp file (its ``in_memory``
    mode, which alone would turn constant memory off): the same parts, and the zip entries dated
    1980-01-01 instead of 1980-01-31 with no file mode. The per-row workbooks of up to
    PACK_IN_MEMORY cables (hundreds of small sheets each) are packed so; the single workbook's
    bytes stay as they were."""

    worksheet_class = _RowsInMemory

    def __init__(self, filename: Any, options: dict[str, Any], parts_in_memory: bool = False) -> None:
        super().__init__(filename, options)
        self.in_memory = parts_in_memory


def pull_lists(ctx: RenderContext, rows: Iterable[CableRow]) -> list[tuple[str, list[list[str]]]]:
    """(rack name, pull rows as PULL_COLUMNS text) of every rack with a cable end, racks in order."""
    return [(rack, [text for text, _, _ in pulls]) for rack, pulls in _pull_lists(ctx, list(rows), None)]


def _pull_lists(
    ctx: RenderContext, rows: list[CableRow], rack_indices: Sequence[int] | None
) -> list[tuple[str, list[tuple[list[str], str, str]]]]:
    """Per rack: each cable with an end in it once, at its lowest end there (U, then end order),
    in U order, then cable ID."""
    c = {name: i for i, name in enumerate(CABLE_COLUMNS)}
    shared = [c[x] for x in ("cable_no", "cable_id", "fabric", "tier", "type", "part", "length_m")]
    i_id, i_fabric, i_tier = c["cable_id"], c["fabric"], c["tier"]
    racks = ctx.fabric.racks
    wanted = set(rack_indices) if rack_indices is not None else None
    per_rack: dict[int, list[tuple[int, str, list[str], str, str]]] = defaultdict(list)
    for r in rows:
        t, ends = r.text, r.ends
        lowest: dict[int, int] = {}  # rack -> the end there that the pull list shows
        for k, end in enumerate(ends):
            if end.rack < 0 or (wanted is not None and end.rack not in wanted):
                continue
            j = lowest.get(end.rack)
            if j is None or end.u < ends[j].u:
                lowest[end.rack] = k
        if not lowest:
            continue
        common = [t[i] for i in shared]
        for rack, k in lowest.items():
            end = ends[k]
            if k == 0:
                far = ends[1]
                far_place = far.place if len(ends) == 2 else "; ".join(x.place for x in ends[1:])
            else:
                far = ends[0]
                far_place = far.place
            text = [
                far_place,
                str(end.u) if end.u else "",
                end.name,
                end.plug,
                *common,
                LINE_JOIN.join(end.short),
                LINE_JOIN.join(far.short),
            ]
            per_rack[rack].append((end.u, t[i_id], text, t[i_fabric], t[i_tier]))
    out = []
    for index in sorted(per_rack, key=lambda i: (racks[i].row_index, racks[i].position, racks[i].name)):
        pulls = per_rack[index]
        pulls.sort(key=lambda x: (x[0], x[1]))
        out.append((racks[index].name, [(text, fab, tier) for _, _, text, fab, tier in pulls]))
    return out


def _summary(
    book: Any,
    ctx: RenderContext,
    rows: list[CableRow],
    extras: list[tuple[str, int]],
    header: Any,
    fills: dict[tuple[str, str], Any],
    names: set[str],
    scope: str = "",
) -> None:
    sheet = book.add_worksheet(_sheet_name("Summary", names))
    _print_setup(sheet)
    sheet.set_column(0, 0, 28)
    sheet.set_column(1, 3, 22)
    c = {name: i for i, name in enumerate(CABLE_COLUMNS)}
    counts = Counter((r.text[c["fabric"]], r.text[c["type"]]) for r in rows)
    n = 0
    sheet.write_string(n, 0, f"{ctx.blueprint.metadata.name}: cabling workbook", book.add_format({"bold": True, "font_size": 14}))
    n += 1
    if scope:
        sheet.write_string(n, 0, scope)
        n += 1
    n += 1
    for col, text in enumerate(("fabric", "type", "cables")):
        sheet.write_string(n, col, text, header)
    for (fabric, kind), count in sorted(counts.items()):
        n += 1
        sheet.write_string(n, 0, fabric)
        sheet.write_string(n, 1, kind)
        sheet.write_number(n, 2, count)
    n += 1
    sheet.write_string(n, 0, "cables in this workbook", book.add_format({"bold": True}))
    sheet.write_number(n, 2, len(rows), book.add_format({"bold": True}))
    n += 1
    for text, count in extras:
        n += 1
        sheet.write_string(n, 0, text)
        sheet.write_number(n, 2, count)
    n += 2
    sheet.write_string(n, 0, "legend: fill per fabric and tier", book.add_format({"bold": True}))
    for (fabric, tier), fmt in sorted(fills.items()):
        n += 1
        sheet.write_string(n, 0, fabric, fmt)
        sheet.write_string(n, 1, tier, fmt)
    n += 2
    for line in (
        "Pull lists: one sheet per rack, each cable with an end in the rack once, in rack-unit order of that end;",
        "far_location is where the other end goes. Labels: the short label of each end (lines split by |).",
    ):
        sheet.write_string(n, 0, line)
        n += 1


def _fills(book: Any, rows: list[CableRow]) -> dict[tuple[str, str], Any]:
    c_f, c_t = CABLE_COLUMNS.index("fabric"), CABLE_COLUMNS.index("tier")
    fabrics = sorted({r.text[c_f] for r in rows})
    pairs = sorted({(r.text[c_f], r.text[c_t]) for r in rows})
    out = {}
    for fabric, tier in pairs:
        shade = _TIER_FILLS.get(tier, _OTHER_FILL)[fabrics.index(fabric) % 2]
        out[(fabric, tier)] = book.add_format({"bg_color": shade, "border": 1, "border_color": "#BFBFBF"})
    return out


def _sheet(book: Any, name: str, columns: Sequence[str], header: Any) -> Any:
    sheet = book.add_worksheet(name)
    _print_setup(sheet)
    for col, text in enumerate(columns):
        sheet.set_column(col, col, _WIDTHS.get(text, max(10, len(text) + 2)))
    for col, text in enumerate(columns):
        sheet.write_string(0, col, text, header)
    sheet.freeze_panes(1, 0)
    sheet.repeat_rows(0)
    return sheet


def _print_setup(sheet: Any) -> None:
    sheet.set_landscape()
    sheet.set_paper(9)  # A4
    sheet.fit_to_pages(1, 0)  # one page wide, as many tall as it takes


# What makes XlsxWriter change an inline string (XML escapes, control characters, its _xHHHH_
# escape, the non-characters): a string with none of them is written as it is.
_XML_SPECIAL = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]|_x[0-9a-fA-F]{4}_")
# Over a row's cells joined by DEL (neither whitespace nor special, so no match spans two cells):
# the control characters, the _xHHHH_ escape, the non-characters, and a cell that starts or ends
# with whitespace (XlsxWriter's xml:space="preserve"). A row with none of them is written by its
# row template, each text XML-escaped (& < >) as XlsxWriter escapes it; a row with one is written
# cell by cell. (One alternation of all of these is about 5x slower than separate searches.)
_ROW_JOIN = "\x7f"
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\ufffe\uffff]")
_XML_ESCAPE = re.compile(r"_x[0-9a-fA-F]{4}_")
_LEADING_SPACE = re.compile(r"\x7f\s")  # in the joined row and in it reversed: a cell's first or last


def _row_texts(joined: str, width: int) -> list[str] | None:
    """The ``width`` cells of ``joined`` (texts joined by _ROW_JOIN) as XlsxWriter writes them in
    an inline string (XML-escaped), or None when XlsxWriter would do more than escape one (or a
    text holds _ROW_JOIN, or looks like a rich string)."""
    if (
        _CONTROL_CHARS.search(joined)
        or ("_x" in joined and _XML_ESCAPE.search(joined))
        or _LEADING_SPACE.search(joined)
        or _LEADING_SPACE.search(joined[::-1])
        or joined[:1].isspace()
        or joined[-1:].isspace()
    ):
        return None
    if "&" in joined or "<" in joined or ">" in joined:
        if "<r>" in joined:
            return None
        joined = joined.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    texts = joined.split(_ROW_JOIN)
    return texts if len(texts) == width else None


class _Cells:
    """Data rows written straight into a constant-memory sheet's row file, the bytes XlsxWriter's
    ``write_string`` / ``write_number`` would write (its ``_write_single_row`` / ``_write_cell``
    for a row of formatted inline strings and numbers), at a join per row instead of a few Python
    calls and regular expressions per cell. A row none of whose texts XlsxWriter would change (one
    regular expression over the row) is one ``str.format`` of the columns' row template; other
    rows are written cell by cell, each text escaped once per distinct string."""

    def __init__(self) -> None:
        self.tails: dict[bool, dict[str, str]] = {False: {}, True: {}}  # numeric column? text -> the cell's tail
        self.templates: dict[tuple[str, ...], tuple[str, list[int]]] = {}

    def _template(self, columns: Sequence[str]) -> tuple[str, list[int]]:
        """A row's XML with {0} its number, {1} its format's XF index, {2+k} column k's text (a
        string column) or cell tail (a numeric column); and the numeric columns."""
        key = tuple(columns)
        made = self.templates.get(key)
        if made is None:
            cells = []
            for c, name in enumerate(columns):
                start = f'<c r="{xl_col_to_name(c)}{{0}}" s="{{1}}"'
                value = f"{{{c + 2}}}"
                cells.append(start + (value if name in _NUMERIC else f' t="inlineStr"><is><t>{value}</t></is></c>'))
            template = '<row r="{0}">' + "".join(cells) + "</row>"
            made = self.templates[key] = (template, [c for c, name in enumerate(columns) if name in _NUMERIC])
        return made

    def write(self, sheet: Any, columns: Sequence[str], rows: Sequence[tuple[Sequence[str], Any]]) -> None:
        """Write ``rows`` (cell texts, format) at rows 1.. of ``sheet``, whose row 0 (the header) is pending."""
        if not rows:
            return
        # Every row but the last goes straight into the row file; the last goes through
        # XlsxWriter's own calls, so it stays pending (as every last row did) and the sheet's
        # dimensions and row state are XlsxWriter's.
        bulk = rows[:-1]
        if len(rows) >= sheet.xls_rowmax:
            raise ValueError(f"{len(rows):,} rows do not fit a sheet")
        if bulk:
            kinds = [name in _NUMERIC for name in columns]
            cols = [(f'<c r="{xl_col_to_name(c)}', self.tails[k], k) for c, k in enumerate(kinds)]
            template, numeric = self._template(columns)
            fill = template.format
            number_tails = self.tails[True]
            join = _ROW_JOIN.join
            width = len(columns)
            # Most sheets take the row template throughout: one test over all their cells, else
            # one per row.
            flat = None
            if all(len(values) == width for values, _ in bulk):
                flat = _row_texts(join(chain.from_iterable(values for values, _ in bulk)), width * len(bulk))
            sheet._write_single_row(1)  # the header row, as XlsxWriter writes it on row 1's first cell
            out: list[str] = []
            for n, (values, fmt) in enumerate(bulk, start=2):
                xf = fmt._get_xf_index()
                k = (n - 2) * width
                texts = flat[k : k + width] if flat is not None else _row_texts(join(values), width)
                if texts is not None:
                    for c in numeric:  # from the text itself, not the escaped
                        v = values[c]
                        texts[c] = number_tails.get(v) or _tail(number_tails, v, True)
                    out.append(fill(n, xf, *texts))
                else:
                    mid = f'{n}" s="{xf}"'
                    out.append(f'<row r="{n}">')
                    out.append(
                        "".join(
                            [
                                start + mid + (tails.get(value) or _tail(tails, value, numeric))
                                for (start, tails, numeric), value in zip(cols, values, strict=True)
                            ]
                        )
                    )
                    out.append("</row>")
                if len(out) > 16384:
                    sheet.fh.write("".join(out))
                    out.clear()
            sheet.fh.write("".join(out))
            sheet.previous_row = len(bulk)  # written; the table is empty
        values, fmt = rows[-1]
        _write_row(sheet, len(rows), columns, values, fmt)


def _tail(tails: dict[str, str], value: str, numeric: bool) -> str:
    tail = _number_tail(value) if numeric and value else None
    if tail is None:
        tail = _string_tail(value)
    tails[value] = tail
    return tail


def _write_row(sheet: Any, n: int, columns: Sequence[str], text: Sequence[str], fmt: Any) -> None:
    for col, value in enumerate(text):
        if columns[col] in _NUMERIC and value:
            try:
                sheet.write_number(n, col, float(value), fmt)
                continue
            except ValueError:
                pass
        sheet.write_string(n, col, value, fmt)


def _number_tail(value: str) -> str | None:
    """A numeric column's cell as XlsxWriter's write_number writes float(value); None when the
    text is no number (then it is written as a string, as before)."""
    try:
        number = float(value)
    except ValueError:
        return None
    if number != number or number in (float("inf"), float("-inf")):
        raise TypeError("NAN/INF not supported in write_number()")  # as XlsxWriter raises
    return f"><v>{number:.16G}</v></c>"


def _string_tail(value: str) -> str:
    """An inline-string cell as XlsxWriter writes it in constant-memory mode."""
    if _XML_SPECIAL.search(value):
        value = Worksheet._escape_control_characters(value)
        if value.startswith("<r>") and value.endswith("</r>"):
            return f' t="inlineStr"><is>{value}</is></c>'
        preserve = ' xml:space="preserve"' if _preserve_whitespace(value) else ""
        value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return f' t="inlineStr"><is><t{preserve}>{value}</t></is></c>'
    preserve = ' xml:space="preserve"' if _preserve_whitespace(value) else ""
    return f' t="inlineStr"><is><t{preserve}>{value}</t></is></c>'


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
