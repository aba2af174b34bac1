"""The label sheets (snc's own PDF writer) read back by real PDF consumers: pypdf in strict mode
parses every file, each page's text operators put each label's lines, in order, inside that
label's box on the stock, every line fits the label's width at its size (reportlab's metrics),
and Ghostscript renders every page without an error and finds the same text."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pypdf
import pytest
from pypdf.generic import ContentStream
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth

from supernodeiac.catalog.label_stock import LabelStock, label_stocks
from supernodeiac.outputs.labels import FONT, MIN_PT, Label, _sheet_pdf, _width, font_size

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
GS = shutil.which("gs")


def _labels(count: int) -> list[Label]:
    out = []
    for n in range(count):
        lines = tuple(LINES[(n + k * 4) % len(LINES)] for k in range(1 + n % 4))
        out.append(Label("R1", n, f"N{n:05d}", f"cable-{n}", "a", lines))
    return out


def _printed(line: str) -> str:
    """What the page shows of a line: WinAnsi (cp1252), "?" for a character outside it."""
    return line.encode("cp1252", errors="replace").decode("cp1252")


def _shown(page: Any) -> list[tuple[float, float, float, str]]:
    """Each Tj of a page: (font size, x, y, text), from its content stream's operators."""
    out = []
    size = x = y = 0.0
    for operands, op in ContentStream(page.get_contents(), page.pdf).operations:
        if op == b"Tf":
            size = float(operands[1])
        elif op == b"Td":
            x, y = float(operands[0]), float(operands[1])
        elif op == b"Tj":
            raw = operands[0]
            text = raw.get_original_bytes().decode("cp1252") if hasattr(raw, "get_original_bytes") else str(raw)
            out.append((size, x, y, text))
    return out


def _check(pdf: bytes, labels: list[Label], stock: LabelStock) -> None:
    reader = pypdf.PdfReader(io.BytesIO(pdf), strict=True)
    assert len(reader.pages) == max(1, -(-len(labels) // stock.per_sheet))
    width_mm, height_mm = stock.sheet_mm
    for page in reader.pages:
        box = page.mediabox
        assert (round(float(box.width) / mm, 1), round(float(box.height) / mm, 1)) == (round(width_mm, 1), round(height_mm, 1))
    pad = stock.padding_mm * mm
    room = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
    for p, page in enumerate(reader.pages):
        shown = _shown(page)
        on_page = labels[p * stock.per_sheet : (p + 1) * stock.per_sheet]
        assert [t for *_, t in shown] == [_printed(line) for x in on_page for line in x.lines]
        k = 0
        for pos, x in enumerate(on_page):
            row, col = divmod(pos, stock.columns)
            left = (stock.margin_mm[0] + col * stock.pitch_mm[0]) * mm
            top = height_mm * mm - (stock.margin_mm[1] + row * stock.pitch_mm[1]) * mm
            bottom = top - stock.label_mm[1] * mm
            for line in x.lines:
                size, lx, ly, _text = shown[k]
                k += 1
                assert abs(lx - (left + pad)) < 1e-2 and bottom - 1e-2 <= ly <= top, (pos, line, lx, ly)
                if size > MIN_PT:  # at the smallest size a line may be wider: font_size's floor
                    assert stringWidth(line, FONT, size) <= room + 1e-6, (line, size)


@pytest.mark.parametrize("stock_key", sorted(label_stocks()))
@pytest.mark.parametrize("count", [0, 1, 31, 200])
def test_sheets_read_back_label_by_label(stock_key: str, count: int) -> None:
    stock = label_stocks()[stock_key]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t (é)")))
    labels = _labels(count)
    pdf = _sheet_pdf(ctx, "R1", labels, stock)
    _check(pdf, labels, stock)
    assert pypdf.PdfReader(io.BytesIO(pdf)).metadata.title == f"t (é) rack R1 cable labels ({stock.description})"
    assert _sheet_pdf(ctx, "R1", labels, stock) == pdf  # same labels, same bytes


@pytest.mark.skipif(GS is None, reason="Ghostscript (gs) is not installed")
def test_ghostscript_renders_every_page(tmp_path: Path) -> None:
    stock = label_stocks()["avery-5160"]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t")))
    labels = _labels(65)
    path = tmp_path / "R1.pdf"
    path.write_bytes(_sheet_pdf(ctx, "R1", labels, stock))
    run = subprocess.run(
        [str(GS), "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=txtwrite", f"-sOutputFile={tmp_path / 'out.txt'}", path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and "Error" not in run.stdout + run.stderr, run.stdout + run.stderr
    text = (tmp_path / "out.txt").read_text(errors="replace")
    assert text.count("A01 U12 gpu-0001") == sum(x.lines.count("A01 U12 gpu-0001") for x in labels)
    assert "paren (x) and back\\slash" in text


def test_widths_are_reportlabs() -> None:
    for line in LINES:
        assert _width(line) == stringWidth(line, FONT, 1.0)
    stock = next(iter(label_stocks().values()))
    assert font_size(("x" * 200,), stock) == MIN_PT
