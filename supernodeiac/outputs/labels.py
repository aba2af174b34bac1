"""Cable labels for printing: ``labels/<rack>.pdf``, a sheet of label stock per page holding the
short label of every cable end in the rack (in rack-unit order, as the rack's pull list), and
``labels/labels.csv``, the same labels one row per end with a column per line, for a label
printer's import (Brady Workstation and similar take a CSV with one column per text line).

A physical cable has a label at each plug end: two for a cable or cord, one more per further
leg of a splitter. The stock (``naming.label_stock``, ``catalog/data/label_stock.yaml``) gives
the sheet and the label size; the text is set in Helvetica at the largest size up to 8 pt at
which every line fits the label's width and all lines its height (measured with reportlab's
Helvetica width table, as its ``stringWidth``), never under 4 pt; ``naming.label_width`` already
keeps lines short. The PDFs are snc's own minimal PDF 1.4 (the standard-14 Helvetica in
WinAnsiEncoding, a character it lacks printed as '?'), pre-formatted operators per page.

Both are written at every size: the cable rows are taken one at a time and only each end's label
kept, bucketed by rack; each rack's PDF and the CSV are made when written (``Stream``).
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator

from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import getFont

from ..catalog.label_stock import LabelStock, label_stocks
from .base import RENDERERS, RenderContext, Stream
from .cabling import CABLE_COLUMNS, CableRow, cable_rows
from .csv_safe import CsvWriter

FONT = "Helvetica"
MAX_PT, MIN_PT, LEADING = 8.0, 4.0, 1.15


class Label:
    """One printed label: the rack it is stuck on, where, and its lines."""

    __slots__ = ("cable_id", "cable_no", "end", "lines", "rack", "u")

    def __init__(self, rack: str, u: int, cable_no: str, cable_id: str, end: str, lines: tuple[str, ...]) -> None:
        self.rack, self.u, self.cable_no, self.cable_id, self.end, self.lines = rack, u, cable_no, cable_id, end, lines


def labels_by_rack(ctx: RenderContext, rows: Iterable[CableRow]) -> list[tuple[str, list[Label]]]:
    """Every plug end's label, grouped by the rack it is in (racks in row order; a device
    outside racks under ""), each rack's in U order, then cable ID, then end. ``rows`` is taken
    one at a time: only the labels are held (a slotted object per end, its strings the row's)."""
    c_no, c_id = CABLE_COLUMNS.index("cable_no"), CABLE_COLUMNS.index("cable_id")
    racks = ctx.fabric.racks
    names = [r.name for r in racks]
    per: dict[int, list[Label]] = defaultdict(list)
    for r in rows:
        no, cid, ends = r.text[c_no], r.text[c_id], r.ends
        two = len(ends) == 2
        for k, end in enumerate(ends):
            tag = "a" if k == 0 else "b" if two else f"leg{k}"
            per[end.rack].append(Label(names[end.rack] if end.rack >= 0 else "", end.u, no, cid, tag, end.short))
    order = sorted(per, key=lambda i: (racks[i].row_index, racks[i].position, racks[i].name) if i >= 0 else (-1, 0, ""))
    out = []
    for i in order:
        labels = per.pop(i)
        labels.sort(key=_order)
        out.append((names[i] if i >= 0 else "", labels))
    return out


def _order(x: Label) -> tuple[int, str, str]:
    return (x.u, x.cable_id, x.end)


def font_size(lines: tuple[str, ...], stock: LabelStock) -> float:
    """The largest size (pt, in 0.25 steps, MIN_PT..MAX_PT) at which the lines fit the label."""
    width = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
    height = (stock.label_mm[1] - 2 * stock.padding_mm) * mm
    widest = max((_width(x) for x in lines), default=0.0)
    size = MAX_PT
    if widest:
        size = min(size, width / widest)
    size = min(size, height / (LEADING * max(len(lines), 1)))
    return max(MIN_PT, int(size * 4) / 4)


def _width(text: str) -> float:
    """``stringWidth(printed(text), FONT, 1.0)``: the printed line's WinAnsi codes summed from the
    font's width table in the same integer sum and scaling as reportlab's."""
    if not _PRINTABLE.fullmatch(text):
        text = printed(text)
    return sum(map(_WIDTHS.__getitem__, text.encode("cp1252"))) * 0.001 * 1.0


_WIDTHS = getFont(FONT).widths
_PRINTABLE = re.compile(r"[ -~]*")
_PLAIN = re.compile(r"[ -'*-\[\]-~]+")  # printable ASCII but for \ ( ), which PDF strings escape


@RENDERERS.register("labels")
def render_labels(ctx: RenderContext) -> dict[str, bytes | Stream]:
    """A PDF per rack and labels.csv at every size: the cable rows are taken one at a time and
    only their labels held, grouped by rack; each rack's PDF and the CSV are made when written."""
    grouped = labels_by_rack(ctx, cable_rows(ctx))
    if not grouped:
        return {}
    stock = label_stocks()[ctx.blueprint.naming.label_stock]
    lines = max((len(x.lines) for _, labels in grouped for x in labels), default=1)
    out: dict[str, bytes | Stream] = {}
    for rack, labels in grouped:

        def produce(rack: str = rack, labels: list[Label] = labels) -> list[bytes]:
            return [_sheet_pdf(ctx, rack, labels, stock)]

        out[f"labels/{_file_part(rack or 'unracked')}.pdf"] = Stream(produce)

    def table() -> Iterator[bytes]:
        header = ["rack", "sheet", "position", "u", "cable_no", "cable_id", "end", *[f"line{i + 1}" for i in range(lines)]]
        per = stock.per_sheet

        def rows() -> Iterator[list[str]]:
            for rack, labels in grouped:
                for n, x in enumerate(labels):
                    sheet, pos = divmod(n, per)
                    padded = [*x.lines, *[""] * (lines - len(x.lines))]
                    yield [rack, str(sheet + 1), str(pos + 1), str(x.u or ""), x.cable_no, x.cable_id, x.end, *padded]

        yield from CsvWriter(header).stream(rows())

    out["labels/labels.csv"] = Stream(table)
    return out


def _sheet_pdf(ctx: RenderContext, rack: str, labels: list[Label], stock: LabelStock) -> bytes:
    """The rack's sheets as a minimal PDF 1.4 (one page of stock per ``per_sheet`` labels): each
    line a text object of pre-formatted operators, made once per font size, label position and
    line count, joined per page into one Flate stream (zlib level 1)."""
    page = (stock.sheet_mm[0] * mm, stock.sheet_mm[1] * mm)
    pad = stock.padding_mm * mm
    starts_of: dict[tuple[int, float, int], list[str]] = {}  # (position, size, lines) -> each line's "BT .. Tm"
    sizes: dict[tuple[str, ...], float] = {}
    shown: dict[str, str] = {}  # line -> its PDF string operand
    pages: list[bytes] = []
    code: list[str] = []
    for n, x in enumerate(labels):
        pos = n % stock.per_sheet
        if n and not pos:
            pages.append(zlib.compress("\n".join(code).encode("latin-1"), 1))
            code = []
        size = sizes.get(x.lines)
        if size is None:
            size = sizes[x.lines] = font_size(x.lines, stock)
        starts = starts_of.get((pos, size, len(x.lines)))
        if starts is None:
            row, col = divmod(pos, stock.columns)
            left = (stock.margin_mm[0] + col * stock.pitch_mm[0]) * mm
            top = page[1] - (stock.margin_mm[1] + row * stock.pitch_mm[1]) * mm
            y = top - pad - size
            starts = []
            for _ in x.lines:
                starts.append(f"BT /F1 {_num(size)} Tf 1 0 0 1 {_num(left + pad)} {_num(y)} Tm ")
                y -= size * LEADING
            starts_of[(pos, size, len(x.lines))] = starts
        for start, line in zip(starts, x.lines, strict=True):
            if _PLAIN.fullmatch(line):  # printable ASCII, nothing to escape: its own PDF string
                code.append(f"{start}({line}) Tj ET")
                continue
            text = shown.get(line)
            if text is None:
                text = shown[line] = _pdf_string(line)
            code.append(f"{start}{text} Tj ET")
    pages.append(zlib.compress("\n".join(code).encode("latin-1"), 1))
    title = f"{ctx.blueprint.metadata.name} rack {rack} cable labels ({stock.description})"
    return _pdf_document(pages, page, title)


def _pdf_document(contents: list[bytes], page: tuple[float, float], title: str) -> bytes:
    """PDF 1.4 bytes: catalog, page tree, the Helvetica standard-14 font (WinAnsiEncoding), /Info,
    a page per compressed content stream, and the xref table of every object's byte offset."""
    count = len(contents)
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(count))
    box = f"[0 0 {_num(page[0])} {_num(page[1])}]"
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Title " + _pdf_string(title).encode("latin-1") + b" /Author (snc) /Producer (snc) >>",
    ]
    for i, data in enumerate(contents):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox {box} /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {6 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def printed(line: str) -> str:
    """The line as the sheet prints it: a character WinAnsiEncoding lacks (or a control
    character) is set as '?'."""
    return "".join(c if c >= " " and c != "\x7f" and _winansi(c) else "?" for c in line)


def _winansi(c: str) -> bool:
    try:
        c.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def _pdf_string(text: str) -> str:
    """A PDF literal string of the printed line in WinAnsi codes, ``\\ ( )`` escaped, other
    bytes past ASCII as octal escapes (the content stream stays ASCII)."""
    out = []
    for b in printed(text).encode("cp1252"):
        c = chr(b)
        out.append("\\" + c if c in "\\()" else c if 32 <= b < 127 else f"\\{b:03o}")
    return "(" + "".join(out) + ")"


def _num(value: float) -> str:
    """A PDF number: at most 4 decimals, no trailing zeros."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"
