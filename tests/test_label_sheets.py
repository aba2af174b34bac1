"""The label sheets' direct page operators against reportlab's own setFont / drawString calls:
the same PDF bytes, for plain lines and for lines reportlab escapes or sets in another font."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import pytest
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from supernodeiac.catalog.label_stock import LabelStock, label_stocks
from supernodeiac.outputs.labels import FONT, LEADING, MAX_PT, MIN_PT, Label, _sheet_pdf, _width, font_size

LINES = [
    "A01 U12 gpu-0001",
    "OSFP 3 port 2",
    "-> B07 U40 leaf-01 p17",
    "paren (x) and back\\slash",
    "naïve – ünïcode → ★",
    "tab\there",
    "",
    "x" * 60,
    "~!@#$%^&*_+={}[]|:;\"'<>,.?/`",
]


def _reference(name: str, rack: str, labels: list[Label], stock: LabelStock) -> bytes:
    """The sheets drawn through reportlab's public calls, a text object per line."""
    buffer = io.BytesIO()
    page = (stock.sheet_mm[0] * mm, stock.sheet_mm[1] * mm)
    pdf = canvas.Canvas(buffer, pagesize=page, invariant=1, pageCompression=1)
    pdf.setTitle(f"{name} rack {rack} cable labels ({stock.description})")
    pdf.setAuthor("snc")
    pad = stock.padding_mm * mm
    for n, x in enumerate(labels):
        pos = n % stock.per_sheet
        if n and not pos:
            pdf.showPage()
        row, col = divmod(pos, stock.columns)
        left = (stock.margin_mm[0] + col * stock.pitch_mm[0]) * mm
        top = page[1] - (stock.margin_mm[1] + row * stock.pitch_mm[1]) * mm
        width = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
        height = (stock.label_mm[1] - 2 * stock.padding_mm) * mm
        widest = max((stringWidth(t, FONT, 1.0) for t in x.lines), default=0.0)
        size = min(MAX_PT, width / widest) if widest else MAX_PT
        size = max(MIN_PT, int(min(size, height / (LEADING * max(len(x.lines), 1))) * 4) / 4)
        pdf.setFont(FONT, size)
        y = top - pad - size
        for line in x.lines:
            pdf.drawString(left + pad, y, line)
            y -= size * LEADING
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _labels(count: int) -> list[Label]:
    out = []
    for n in range(count):
        lines = tuple(LINES[(n + k * 4) % len(LINES)] for k in range(1 + n % 4))
        out.append(Label("R1", n, f"N{n:05d}", f"cable-{n}", "a", lines))
    return out


@pytest.mark.parametrize("stock_key", sorted(label_stocks()))
@pytest.mark.parametrize("count", [1, 31, 200])
def test_sheets_are_reportlabs_bytes(stock_key: str, count: int) -> None:
    stock = label_stocks()[stock_key]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t")))
    labels = _labels(count)
    assert _sheet_pdf(ctx, "R1", labels, stock) == _reference("t", "R1", labels, stock)


def test_widths_are_reportlabs() -> None:
    for line in LINES:
        assert _width(line) == stringWidth(line, FONT, 1.0)
    stock = next(iter(label_stocks().values()))
    assert font_size(("x" * 200,), stock) == MIN_PT
