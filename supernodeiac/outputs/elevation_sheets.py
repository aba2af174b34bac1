"""Rack elevations for print: ``elevation/<row>.pdf``, one PDF per row of racks, A3 landscape
(Tabloid, 11 x 17 in, with ``naming.paper: letter``).

Each row gives its front face and its rear face, ``RACKS_PER_SHEET`` racks a page (a wider row
takes several sheets a face): front sheets first, in rack order along the row, then the rear
sheets, the racks of each in the reverse order (as a crew sees them from behind). Every rack
device is a box at its units, labelled with its lowest unit, name, model and a count that says
what it counts ("32 cables, 28 leave the rack"); a chassis shows its front slots (compute boards,
horizontal) on the front face and its rear slots (switch boards, vertical) on the rear; a 0U
device (a vertical PDU) is a strip beside the rack on the rear face. Above each rack: its name,
maximum power against its budget, units used and the cable ends that leave it. Every page has a
legend: the fill of each kind of device and fabric, and what the counts mean.

Text is Helvetica, set at the largest size from ``MAX_PT`` down to ``MIN_PT`` (6 pt) at which its
lines fit the box (width measured with reportlab's ``stringWidth``, height by the leading);
where even 6 pt does not fit, fewer lines are drawn and a line too long is cut with an ellipsis,
never drawn smaller. The layout is data (:func:`row_sheets`: pages of placed boxes) that the PDF
writer draws and the tests measure.

Deterministic: reportlab's invariant mode (no dates, fixed document id), everything drawn in
sorted order. Linear: one row's pages at a time, each rack's devices once per face; the PDF of a
row is made when it is written (a :class:`Stream`), so a hall of hundreds of rows is never held.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from reportlab import rl_config
from reportlab.lib.pagesizes import A3, TABLOID, landscape
from reportlab.pdfbase.pdfmetrics import getFont, stringWidth
from reportlab.pdfgen import canvas

from ..fabric import Device, Fabric
from ..facts.racks import Budget, RackLoad, budgets, cables_leaving, device_order, device_power, link_ends, rack_loads
from .base import RenderContext

FONT, BOLD = "Helvetica", "Helvetica-Bold"
MAX_PT, MIN_PT, LEADING = 8.0, 6.0, 1.1  # text sizes (pt) and line pitch (x size)
PAD = 0.75  # pt between a box's edge and its text

# Page geometry (presentation choices, not hardware figures): A3 landscape in points.
PAGES = {"a4": landscape(A3), "letter": landscape(TABLOID)}  # naming.paper: A3, or Tabloid (11 x 17 in)
PAGE = PAGES["a4"]
MARGIN = 24.0
TITLE_H = 30.0  # the page title band
HEAD_H = 26.0  # a rack's header (name, totals) above it
RACKS_PER_SHEET = 6
LEGEND_W = 150.0
GUTTER = 14.0  # unit numbers left of a rack
STRIP = 16.0  # the 0U strip right of a rack
GAP = 6.0
UNIT_MAX = 18.0  # pt per rack unit at most

# Fills by kind of device; switches take one of SWITCH_FILLS per fabric (in fabric-name order).
FILL = {
    "compute": "#f6d5d0",
    "mgmt": "#dcefd8",
    "power": "#fcf0c8",
    "chassis": "#efe3f2",
    "other": "#ececec",
}
SWITCH_FILLS = ["#d3e3f4", "#c9e8e3", "#dcd6f0", "#f3e0c4", "#d9e7c5", "#f0d3e3"]
KIND_WORDS = {
    "compute": "compute (nodes, trays, boards)",
    "mgmt": "management network",
    "power": "power (shelves, PDUs)",
    "chassis": "chassis",
    "other": "other",
}


@dataclass(slots=True)
class Box:
    """One placed box: a device (or a rack outline), its text lines at ``size`` pt; ``vertical``
    text runs bottom to top (a rear chassis board, a 0U strip), so its lines fit ``h`` wide."""

    x: float
    y: float  # bottom edge (PDF coordinates: up is +y)
    w: float
    h: float
    fill: str
    lines: tuple[str, ...]
    size: float
    vertical: bool = False
    device: str = ""  # the device's name; "" for a rack outline
    rack: str = ""
    u: int = 0  # its lowest unit (0: a 0U device or a board in a slot)
    slot: str = ""


@dataclass(slots=True)
class Text:
    x: float
    y: float  # baseline
    text: str
    size: float
    bold: bool = False
    anchor: str = "start"  # start | end


@dataclass(slots=True)
class Sheet:
    face: str  # front | rear
    title: str
    racks: list[str]
    page: tuple[float, float] = PAGE  # (width, height) in points
    boxes: list[Box] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (fill, words)
    notes: list[str] = field(default_factory=list)


def kind_of(f: Fabric, d: Device) -> str:
    m = f.models[d.model]
    if m.kind == "chassis":
        return "chassis"
    if m.kind in ("power-shelf", "pdu"):
        return "power"
    if d.group == "mgmt" or m.kind == "console-server":
        return "mgmt"
    if m.accelerators is not None or m.kind in ("node", "compute-board", "memory"):
        return "compute"
    if m.kind in ("switch", "switch-board"):
        return "switch"
    return "other"


def width(text: str, size: float, font: str = FONT) -> float:
    """``stringWidth(text, font, size)``; printable ASCII in the regular font summed from its
    width table as reportlab sums it (the same figure, without its per-call overhead). A sheet
    measures the same few thousand texts again and again (a row's 10^5 boxes): each once."""
    key = (text, size, font)
    found = _MEASURED.get(key)
    if found is None:
        if len(_MEASURED) >= _MEASURED_MAX:
            _MEASURED.clear()
        found = _MEASURED[key] = _width(text, size, font)
    return found


_MEASURED: dict[tuple[str, float, str], float] = {}
_MEASURED_MAX = 1 << 16


def _width(text: str, size: float, font: str) -> float:
    if font == FONT and _PRINTABLE.fullmatch(text):
        return sum(map(_WIDTHS.__getitem__, text.encode())) * 0.001 * size
    return float(stringWidth(text, font, size))


_WIDTHS = getFont(FONT).widths
_PRINTABLE = re.compile(r"[ -~]*")
_PLAIN = re.compile(r"[ -'*-\[\]-~]*")  # printable ASCII but for \ ( ), which PDF strings escape


def fit(choices: Sequence[Sequence[str]], w: float, h: float) -> tuple[tuple[str, ...], float]:
    """The first choice of lines (most detailed first) that fits a ``w`` x ``h`` box at
    ``MIN_PT`` or more, at the largest size it fits (0.5 pt steps); else the shortest choice cut
    to the lines that fit in height, each cut to the width with an ellipsis."""
    inner_w, inner_h = w - 2 * PAD, h - 2 * PAD
    for lines in choices:
        if not lines or len(lines) * MIN_PT * LEADING > inner_h:
            continue
        widest = max(width(x, 1.0) for x in lines)
        size = min(MAX_PT, inner_h / (len(lines) * LEADING), inner_w / widest if widest else MAX_PT)
        size = int(size * 2) / 2
        if size >= MIN_PT:
            return tuple(lines), size
    room = int(inner_h // (MIN_PT * LEADING))
    last = list(choices[-1])[: max(room, 0)]
    return tuple(_cut(x, inner_w, MIN_PT) for x in last), MIN_PT


def _cut(text: str, w: float, size: float) -> str:
    if width(text, size) <= w:
        return text
    while text and width(text + "\u2026", size) > w:
        text = text[:-1]
    return text + "\u2026" if text else ""


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def count_parts(cables: int, leaving: int, other: dict[str, int]) -> list[str]:
    """['32 cables, 28 leave the rack', '8 connector links']: the cables on a device and those
    whose other end is in another rack, then its links of each other kind (no cable)."""
    parts = []
    if cables:
        left = "1 leaves" if leaving == 1 else f"{leaving:,} leave"
        parts.append(f"{_plural(cables, 'cable', 'cables')}, {left} the rack")
    for kind, n in sorted(other.items()):
        if n:
            parts.append(_plural(n, f"{kind} link", f"{kind} links"))
    return parts or ["no cables"]


@dataclass(frozen=True, slots=True)
class RowInputs:
    """What a row's sheets read: per device (by index) its cable ends, those leaving its rack,
    its other link ends by kind, its maximum power (W); the fill of each switch fabric."""

    design: str
    units: int
    cables: list[int]
    leaving: list[int]
    other: dict[str, list[int]]
    maximum: list[float]
    switch_fill: dict[str, str]
    page: tuple[float, float] = PAGE  # (width, height) in points


def row_inputs(ctx: RenderContext, leaving: list[int], maximum: list[float]) -> RowInputs:
    """The per-device figures every row's sheets read (``leaving`` and ``maximum`` as the
    elevation CSVs have them)."""
    f = ctx.fabric
    ends = link_ends(f)
    cables = ends["cable"].tolist() if "cable" in ends else [0] * len(f.devices)
    other = {kind: v.tolist() for kind, v in ends.items() if kind != "cable"}
    bp = ctx.blueprint
    page = PAGES[bp.naming.paper]
    return RowInputs(bp.metadata.name, bp.site.rack_units, cables, leaving, other, maximum, switch_fills(f), page)


def layout(ctx: RenderContext) -> dict[str, list[Sheet]]:
    """Every row's pages, as the PDFs draw them (for the tests: the renderer makes one row at a time)."""
    f = ctx.fabric
    loads = rack_loads(f, ctx.catalogue)
    rows = budgets(ctx.blueprint, ctx.catalogue)
    _, maximum = device_power(f, ctx.catalogue)
    inputs = row_inputs(ctx, cables_leaving(f).tolist(), maximum.tolist())
    by_row: dict[str, list[RackLoad]] = {}
    for load in loads.values():
        by_row.setdefault(load.row, []).append(load)
    return {row: list(row_sheets(f, row, racks, rows[row], inputs)) for row, racks in by_row.items()}


def switch_fills(f: Fabric) -> dict[str, str]:
    groups = sorted({d.group for d in f.devices if kind_of(f, d) == "switch"})
    return {g: SWITCH_FILLS[i % len(SWITCH_FILLS)] for i, g in enumerate(groups)}


def row_sheets(f: Fabric, row: str, racks: list[RackLoad], budget: Budget, inp: RowInputs) -> Iterator[Sheet]:
    """The row's pages: its front sheets, then its rear sheets."""
    groups = [racks[i : i + RACKS_PER_SHEET] for i in range(0, len(racks), RACKS_PER_SHEET)]
    fits: dict[tuple[int, float, float], tuple[tuple[str, ...], float]] = {}  # the front's, for the rear
    for face in ("front", "rear"):
        for n, group in enumerate(groups, 1):
            shown = group if face == "front" else list(reversed(group))
            yield _sheet(f, row, face, n, len(groups), shown, budget, inp, fits)


def _fill(f: Fabric, d: Device, inp: RowInputs) -> tuple[str, str]:
    kind = kind_of(f, d)
    if kind == "switch":
        return inp.switch_fill.get(d.group, SWITCH_FILLS[0]), f"switch, fabric {d.group}"
    return FILL[kind], KIND_WORDS[kind]


def _sheet(
    f: Fabric,
    row: str,
    face: str,
    n: int,
    of: int,
    racks: list[RackLoad],
    budget: Budget,
    inp: RowInputs,
    fits: dict[tuple[int, float, float], tuple[tuple[str, ...], float]] | None = None,
) -> Sheet:
    page_w, page_h = inp.page
    names = [r.name for r in racks]
    span = f"{names[0]}-{names[-1]}" if len(names) > 1 else names[0]
    side = "front" if face == "front" else "rear, seen from behind (racks right to left)"
    title = f"{inp.design}: row {row}, {side}, racks {span}" + (f", sheet {n} of {of}" if of > 1 else "")
    sheet = Sheet(face, title, names, inp.page)
    sheet.texts.append(Text(MARGIN, page_h - MARGIN - 14, title, 14, bold=True))
    slot_w = (page_w - 2 * MARGIN - LEGEND_W) / RACKS_PER_SHEET
    rack_w = slot_w - GUTTER - STRIP - GAP
    top = page_h - MARGIN - TITLE_H - HEAD_H
    unit = min(UNIT_MAX, (top - MARGIN) / inp.units)
    bottom = top - unit * inp.units
    fills: dict[str, str] = {}
    for k, load in enumerate(racks):
        x = MARGIN + k * slot_w + GUTTER
        _rack(f, sheet, load, budget, inp, face, x, bottom, rack_w, unit, fills, {} if fits is None else fits)
    sheet.legend = sorted(((fill, words) for words, fill in fills.items()), key=lambda p: p[1])
    sheet.notes = [
        "Box: a device at its rack units: U (its lowest unit), name, model, and its cables: "
        "'32 cables, 28 leave the rack' counts the cable ends on the device and those whose "
        "other end is in another rack.",
        "Rack header: maximum power / the row's budget (kW), units used / units, cable ends leaving the rack.",
    ]
    if face == "front":
        sheet.notes.append("A chassis shows its front slots (compute boards, horizontal).")
    else:
        sheet.notes.append(
            "A chassis shows its rear slots (switch boards, vertical). 0U devices (vertical PDUs) "
            "stand in the strip right of the rack."
        )
    return sheet


def _unit_y(bottom: float, unit: float, u: int) -> float:
    return bottom + (u - 1) * unit


def _rack(
    f: Fabric,
    sheet: Sheet,
    load: RackLoad,
    budget: Budget,
    inp: RowInputs,
    face: str,
    x: float,
    bottom: float,
    w: float,
    unit: float,
    fills: dict[str, str],
    fits: dict[tuple[int, float, float], tuple[tuple[str, ...], float]],
) -> None:
    """A rack's boxes and texts on the sheet. A device's box is the same on both faces of its
    row (the same lines in the same box): ``fits`` keeps each one's fit, by (device, w, h)."""
    units = inp.units
    limit = f" / {budget.power_kw:g}" if budget.declared and budget.power_kw is not None else ""
    head_y = bottom + units * unit
    sheet.texts.append(Text(x, head_y + 14, load.name, 9, bold=True))
    totals = (
        f"{load.power_kw:.1f}{limit} kW, {load.units}/{units} U, {_plural(load.cables, 'cable end leaves', 'cable ends leave')}"
    )
    lines, size = fit([[f"{totals} the rack"], [totals]], w + STRIP, MIN_PT * LEADING + 2 * PAD)
    sheet.texts.extend(Text(x, head_y + 3, line, size) for line in lines)
    sheet.boxes.append(Box(x, bottom, w, units * unit, "#fafafa", (), MIN_PT, rack=load.name))
    for u in range(1, units + 1, 2):
        sheet.texts.append(Text(x - 2, _unit_y(bottom, unit, u) + (unit - MIN_PT) / 2 + 1, str(u), MIN_PT, anchor="end"))
    devices = device_order(f, load)
    zero_u = [d for d in devices if d.chassis < 0 and (d.height_u == 0 or d.u <= 0)]
    for d in devices:
        if d.chassis >= 0 or d.height_u == 0 or d.u <= 0:
            continue
        fill, words = _fill(f, d, inp)
        fills[words] = fill
        y = _unit_y(bottom, unit, d.u)
        h = d.height_u * unit
        if f.models[d.model].kind == "chassis":
            boards = [b for b in devices if b.chassis == d.index]
            _chassis(f, sheet, load, d, boards, inp, face, x, y, w, h, bottom, unit, fills)
            continue
        key = (d.index, w, h)
        fitted = fits.get(key)
        if fitted is None:
            fitted = fits[key] = fit(_choices(d, inp), w, h)
        sheet.boxes.append(Box(x, y, w, h, fill, fitted[0], fitted[1], device=d.name, rack=load.name, u=d.u))
    if face == "rear" and zero_u:
        tall = units * unit / len(zero_u)
        for k, d in enumerate(zero_u):
            fill, words = _fill(f, d, inp)
            fills[words] = fill
            y = bottom + units * unit - (k + 1) * tall
            lines, size = fit([[f"{d.name} {d.model} (0U)"], [d.name]], tall, STRIP - 2)
            sheet.boxes.append(Box(x + w + 1, y, STRIP - 2, tall, fill, lines, size, True, d.name, load.name, 0))


def _counts(d: Device, inp: RowInputs) -> list[str]:
    return count_parts(inp.cables[d.index], inp.leaving[d.index], {k: v[d.index] for k, v in inp.other.items()})


def _choices(d: Device, inp: RowInputs, where: str = "") -> list[list[str]]:
    """The lines of a device's box, most detailed first."""
    here = f"{where or f'U{d.u}'} {d.name}"
    parts = _counts(d, inp)
    count = "; ".join(parts)
    kw = f"{inp.maximum[d.index] / 1000:.1f} kW max"
    return [
        [here, d.model, *parts, kw],
        [here, d.model, *parts],
        [f"{here}  {d.model}", *parts],
        [f"{here}  {d.model}", count],
        [here, f"{d.model}; {count}"],
        [f"{here}  {d.model}; {count}"],
        [f"{here}  {d.model}"],
        [here],
    ]


def _chassis(
    f: Fabric,
    sheet: Sheet,
    load: RackLoad,
    chassis: Device,
    boards: list[Device],
    inp: RowInputs,
    face: str,
    x: float,
    y: float,
    w: float,
    h: float,
    bottom: float,
    unit: float,
    fills: dict[str, str],
) -> None:
    """A chassis box with its boards: the front slots at their units (front face), the rear slots
    side by side as vertical strips over the chassis but its lowest unit, which names it (rear)."""
    fill, words = _fill(f, chassis, inp)
    fills[words] = fill
    front = sorted((b for b in boards if b.slot.startswith("F")), key=lambda b: b.slot)
    rear = sorted((b for b in boards if b.slot.startswith("R")), key=lambda b: b.slot)
    slots = f.models[chassis.model].slots
    name = [
        [f"U{chassis.u} {chassis.name}  {chassis.model}; {len(front)} front, {len(rear)} rear boards"],
        [f"U{chassis.u} {chassis.name}"],
    ]
    lines, size = fit(name, w, unit)
    if face == "front":
        taken = {u for b in front for u in range(b.u, b.u + b.height_u)}
        free = [u for u in range(chassis.u, chassis.u + chassis.height_u) if u not in taken]
        label_y = _unit_y(bottom, unit, free[0]) if free else y
        sheet.boxes.append(Box(x, y, w, h, fill, (), size, device=chassis.name, rack=load.name, u=chassis.u))
        if free:
            sheet.boxes.append(Box(x + 1, label_y, w - 2, unit, fill, lines, size, rack=load.name))
        for b in front:
            bf, bw = _fill(f, b, inp)
            fills[bw] = bf
            by, bh = _unit_y(bottom, unit, b.u), b.height_u * unit
            blines, bsize = fit(_choices(b, inp, b.slot), w - 4, bh - 1)
            sheet.boxes.append(Box(x + 2, by + 0.5, w - 4, bh - 1, bf, blines, bsize, device=b.name, rack=load.name, slot=b.slot))
        return
    sheet.boxes.append(Box(x, y, w, h, fill, (), size, device=chassis.name, rack=load.name, u=chassis.u))
    sheet.boxes.append(Box(x + 1, y, w - 2, unit, fill, lines, size, rack=load.name))
    n_rear = slots.rear if slots is not None else max(len(rear), 1)
    strip = (w - 2) / max(n_rear, 1)
    for k, b in enumerate(rear):
        bf, bw = _fill(f, b, inp)
        fills[bw] = bf
        sx = x + 1 + k * strip
        sy, sh = y + unit, h - unit - 1
        blines, bsize = fit(_choices(b, inp, b.slot), sh, strip - 0.5)
        sheet.boxes.append(Box(sx, sy, strip - 0.5, sh, bf, blines, bsize, True, b.name, load.name, 0, b.slot))


def _rgb(fill: str, op: str) -> str:
    r, g, b = (int(fill[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return f"{r:.4f} {g:.4f} {b:.4f} {op}"


class _Page:
    """A page's content stream as the operators reportlab's ``rect``, ``setFillColor``,
    ``setFont`` and ``drawString`` append, written once per colour and font, straight into the
    canvas's code list (a row of 500 racks is 10^5 boxes; the canvas calls cost 20x more)."""

    __slots__ = ("code", "colours", "fonts", "pdf", "starts")

    def __init__(self, pdf: canvas.Canvas, fonts: dict[str, str], starts: dict[tuple[bool, float, bool], str]) -> None:
        self.pdf, self.code, self.fonts = pdf, pdf._code, fonts
        self.colours: dict[str, str] = {}
        self.starts = starts  # "BT <font> <size> Tf <matrix> " by (bold, size, vertical): the document's

    def fill(self, colour: str) -> None:
        op = self.colours.get(colour)
        if op is None:
            op = self.colours[colour] = _rgb(colour, "rg")
        self.code.append(op)

    def rect(self, x: float, y: float, w: float, h: float) -> None:
        self.code.append(f"{x:.2f} {y:.2f} {w:.2f} {h:.2f} re B")

    def text(self, x: float, y: float, line: str, size: float, bold: bool = False, vertical: bool = False) -> None:
        start = self.starts.get((bold, size, vertical))
        if start is None:
            matrix = "0 1 -1 0" if vertical else "1 0 0 1"
            start = self.starts[(bold, size, vertical)] = f"BT {self.fonts[BOLD if bold else FONT]} {size:g} Tf {matrix} "
        if _PLAIN.fullmatch(line):
            self.code.append(f"{start}{x:.2f} {y:.2f} Tm ({line}) Tj ET")
            return
        self.pdf.setFont(BOLD if bold else FONT, size)  # the text object takes the canvas's font
        self.code.pop()
        shown = self.pdf.beginText(0, 0)._formatText(line)
        self.code.append(f"{start}{x:.2f} {y:.2f} Tm {shown} ET")


def _legend_key(sheet: Sheet) -> tuple[Any, ...]:
    """What a sheet's legend is made of: row_pdf writes the operators once per distinct one."""
    return (sheet.page, tuple(sheet.legend), tuple(sheet.notes))


def _legend(page: _Page, sheet: Sheet) -> None:
    page_w, page_h = sheet.page
    x = page_w - MARGIN - LEGEND_W + GAP
    w = LEGEND_W - GAP
    y = page_h - MARGIN - TITLE_H - 4
    page.fill("#000000")
    page.text(x, y, "Legend", 9, bold=True)
    y -= 14
    for fill, words in sheet.legend:
        page.fill(fill)
        page.rect(x, y - 2, 14, 9)
        page.fill("#000000")
        lines, size = fit([[words]], w - 18, 10)
        for line in lines:
            page.text(x + 18, y, line, size)
        y -= 13
    y -= 6
    for note in sheet.notes:
        for line in wrap(note, w, 7):
            page.text(x, y, line, 7)
            y -= 8.5
        y -= 4


def wrap(text: str, w: float, size: float) -> list[str]:
    """Words into lines no wider than ``w`` at ``size`` pt (a word wider than that on its own line, cut)."""
    out: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}" if line else word
        if width(trial, size) <= w:
            line = trial
            continue
        if line:
            out.append(line)
        line = _cut(word, w, size)
    if line:
        out.append(line)
    return out


def row_pdf(sheets: Iterator[Sheet], title: str, page_size: tuple[float, float] = PAGE) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=page_size, invariant=1, pageCompression=1)
    pdf.setTitle(title)
    pdf.setAuthor("snc")
    fonts = {}
    for font in (FONT, BOLD):
        pdf.setFont(font, MIN_PT)  # registers the font with the document
        pdf._code.pop()
        fonts[font] = pdf._doc.getInternalFontName(font)
    starts: dict[tuple[bool, float, bool], str] = {}
    # A legend's operators by what it is made of (a row's sheets share a few), and the canvas's
    # font state it left (a line with \ ( ) or past ASCII is escaped through the canvas).
    legends: dict[tuple[Any, ...], tuple[list[str], tuple[Any, Any, Any]]] = {}
    for sheet in sheets:
        page = _Page(pdf, fonts, starts)
        page.code.append("0.5 w " + _rgb("#444444", "RG"))
        for box in sheet.boxes:
            page.fill(box.fill)
            page.rect(box.x, box.y, box.w, box.h)
            if not box.lines:
                continue
            page.fill("#000000")
            step = box.size * LEADING
            if box.vertical:  # bottom to top, the first line at the box's left edge
                across = box.x + PAD + box.size * 0.95
                for k, line in enumerate(box.lines):
                    page.text(across + k * step, box.y + PAD, line, box.size, vertical=True)
                continue
            base = box.y + box.h - PAD - box.size * 0.95
            for k, line in enumerate(box.lines):
                page.text(box.x + PAD, base - k * step, line, box.size)
        page.fill("#000000")
        for t in sheet.texts:
            x = t.x - width(t.text, t.size, BOLD if t.bold else FONT) if t.anchor == "end" else t.x
            page.text(x, t.y, t.text, t.size, t.bold)
        key = _legend_key(sheet)
        legend = legends.get(key)
        if legend is not None:
            page.code.extend(legend[0])
            pdf._fontname, pdf._fontsize, pdf._leading = legend[1]
        else:
            at = len(page.code)
            _legend(page, sheet)
            legends[key] = (page.code[at:], (pdf._fontname, pdf._fontsize, pdf._leading))
        pdf.showPage()
    # Binary Flate streams, without reportlab's ASCII85 layer over them (pure Python here: a
    # third of the PDF's time at 10^5 devices); the setting is read while the pages are saved.
    a85 = rl_config.useA85
    rl_config.useA85 = 0
    try:
        pdf.save()
    finally:
        rl_config.useA85 = a85
    return buffer.getvalue()
