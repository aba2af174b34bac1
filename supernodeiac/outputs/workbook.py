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

Size: a workbook takes rows in XlsxWriter's constant-memory mode (about 10 us a cell). Past
``ROW_LIMIT`` cables a design gets one workbook per row of racks (``cabling/rows/<row>.xlsx``:
the summary and that row's pull lists; the fabric sheets are ``cables.csv``); past
``WORKBOOK_LIMIT`` cables no workbook is rendered (a notice says so): at that size the pull lists
alone are 10^7 cells, minutes of CPU, and the crews work from ``cables.csv`` per rack.
"""

from __future__ import annotations

import datetime
import io
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import xlsxwriter

from ..facts.bom import bill_of_materials
from ..facts.cable_plan import cable_plan
from .base import RENDERERS, RenderContext
from .cabling import CABLE_COLUMNS, LINE_JOIN, CableRow, cable_rows

ROW_LIMIT = 50_000  # cables; past this one workbook per row of racks
WORKBOOK_LIMIT = 250_000  # cables; past this no workbook (see the module docstring)

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
def render_workbook(ctx: RenderContext) -> dict[str, bytes]:
    count = len(cable_plan(ctx.fabric, ctx.catalogue))
    if count > WORKBOOK_LIMIT:
        note = f"no cabling workbook: {count:,} cables is past {WORKBOOK_LIMIT:,}; cabling/cables.csv has every cable"
        return {"notice:workbook": note.encode()}
    rows = list(cable_rows(ctx))
    if not rows:
        return {}
    racks = ctx.fabric.racks
    if len(rows) <= ROW_LIMIT:
        return {"cabling/cabling.xlsx": _workbook(ctx, rows, [r.index for r in racks], fabric_sheets=True)}
    by_row: dict[str, list[int]] = defaultdict(list)
    for r in racks:
        by_row[r.row].append(r.index)
    out: dict[str, bytes] = {}
    for row_name, indices in sorted(by_row.items()):
        mine = set(indices)
        subset = [x for x in rows if any(e.rack in mine for e in x.ends)]
        out[f"cabling/rows/{_file_part(row_name)}.xlsx"] = _workbook(ctx, subset, indices, fabric_sheets=False)
    return out


def _workbook(ctx: RenderContext, rows: list[CableRow], rack_indices: Sequence[int], fabric_sheets: bool) -> bytes:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(
        buffer,
        {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False, "strings_to_urls": False},
    )
    book.set_properties({"title": f"{ctx.blueprint.metadata.name} cabling", "created": _EPOCH, "author": "snc"})
    header = book.add_format({"bold": True, "bg_color": "#404040", "font_color": "#FFFFFF", "border": 1})
    fills = _fills(book, rows)
    fab_col, tier_col = CABLE_COLUMNS.index("fabric"), CABLE_COLUMNS.index("tier")
    names: set[str] = set()
    _summary(book, ctx, rows, header, fills, names)
    if fabric_sheets:
        by_fabric: dict[str, list[CableRow]] = defaultdict(list)
        for r in rows:
            by_fabric[r.text[fab_col]].append(r)
        for fabric in sorted(by_fabric):
            sheet = _sheet(book, _sheet_name(f"fabric {fabric}", names), CABLE_COLUMNS, header)
            for n, r in enumerate(by_fabric[fabric], start=1):
                fmt = fills[(r.text[fab_col], r.text[tier_col])]
                _write_row(sheet, n, CABLE_COLUMNS, r.text, fmt)
            sheet.autofilter(0, 0, len(by_fabric[fabric]), len(CABLE_COLUMNS) - 1)
    for rack, pulls in _pull_lists(ctx, rows, rack_indices):
        sheet = _sheet(book, _sheet_name(f"rack {rack}", names), PULL_COLUMNS, header)
        for n, (text, fabric, tier) in enumerate(pulls, start=1):
            _write_row(sheet, n, PULL_COLUMNS, text, fills[(fabric, tier)])
        sheet.autofilter(0, 0, max(len(pulls), 1), len(PULL_COLUMNS) - 1)
    book.close()
    return buffer.getvalue()


def pull_lists(ctx: RenderContext, rows: Iterable[CableRow]) -> list[tuple[str, list[list[str]]]]:
    """(rack name, pull rows as PULL_COLUMNS text) of every rack with a cable end, racks in order."""
    return [(rack, [text for text, _, _ in pulls]) for rack, pulls in _pull_lists(ctx, list(rows), None)]


def _pull_lists(
    ctx: RenderContext, rows: list[CableRow], rack_indices: Sequence[int] | None
) -> list[tuple[str, list[tuple[list[str], str, str]]]]:
    """Per rack: each cable with an end in it once, at its lowest end there (U, then cable ID)."""
    c = {name: i for i, name in enumerate(CABLE_COLUMNS)}
    racks = ctx.fabric.racks
    wanted = set(rack_indices) if rack_indices is not None else None
    per_rack: dict[int, list[tuple[int, str, list[str], str, str]]] = defaultdict(list)
    for r in rows:
        t = r.text
        seen: set[int] = set()
        for k, end in sorted(enumerate(r.ends), key=lambda x: (x[1].u, x[0])):
            if end.rack < 0 or end.rack in seen or (wanted is not None and end.rack not in wanted):
                continue
            seen.add(end.rack)
            far = r.ends[1:] if k == 0 else r.ends[:1]
            text = [
                "; ".join(x.place for x in far),
                str(end.u) if end.u else "",
                end.name,
                end.plug,
                t[c["cable_no"]],
                t[c["cable_id"]],
                t[c["fabric"]],
                t[c["tier"]],
                t[c["type"]],
                t[c["part"]],
                t[c["length_m"]],
                LINE_JOIN.join(end.short),
                LINE_JOIN.join(far[0].short),
            ]
            per_rack[end.rack].append((end.u, t[c["cable_id"]], text, t[c["fabric"]], t[c["tier"]]))
    out = []
    for index in sorted(per_rack, key=lambda i: (racks[i].row_index, racks[i].position, racks[i].name)):
        pulls = sorted(per_rack[index], key=lambda x: (x[0], x[1]))
        out.append((racks[index].name, [(text, fab, tier) for _, _, text, fab, tier in pulls]))
    return out


def _summary(
    book: Any, ctx: RenderContext, rows: list[CableRow], header: Any, fills: dict[tuple[str, str], Any], names: set[str]
) -> None:
    sheet = book.add_worksheet(_sheet_name("Summary", names))
    _print_setup(sheet)
    sheet.set_column(0, 0, 28)
    sheet.set_column(1, 3, 22)
    c = {name: i for i, name in enumerate(CABLE_COLUMNS)}
    counts = Counter((r.text[c["fabric"]], r.text[c["type"]]) for r in rows)
    bom = bill_of_materials(ctx.catalogue, ctx.fabric, ctx.blueprint)
    n = 0
    sheet.write_string(n, 0, f"{ctx.blueprint.metadata.name}: cabling workbook", book.add_format({"bold": True, "font_size": 14}))
    n += 2
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
    for section, what in (("connector", "orthogonal connectors (connectors/connectors.csv)"), ("cartridge", "cable cartridges")):
        if bom.count(section):
            n += 1
            sheet.write_string(n, 0, f"not cables: {what}")
            sheet.write_number(n, 2, bom.count(section))
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


def _write_row(sheet: Any, n: int, columns: Sequence[str], text: Sequence[str], fmt: Any) -> None:
    for col, value in enumerate(text):
        if columns[col] in _NUMERIC and value:
            try:
                sheet.write_number(n, col, float(value), fmt)
                continue
            except ValueError:
                pass
        sheet.write_string(n, col, value, fmt)


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
