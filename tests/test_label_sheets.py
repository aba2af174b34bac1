"""The label sheets, snc's own PDF writer, read back by pypdf (and LibreOffice where present):
a page of stock per ``per_sheet`` labels, each label's lines the extracted text at its place, every
line fitting the label at the chosen size by reportlab's own metrics, hostile text escaped."""

from __future__ import annotations

import io
import math
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pypdf
import pytest
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth

from supernodeiac.catalog.label_stock import label_stocks
from supernodeiac.outputs.labels import FONT, LEADING, MIN_PT, Label, _sheet_pdf, _width, font_size, printed

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


def _labels(count: int) -> list[Label]:
    out = []
    for n in range(count):
        lines = tuple(LINES[(n + k * 4) % len(LINES)] for k in range(1 + n % 4))
        out.append(Label("R1", n, f"N{n:05d}", f"cable-{n}", "a", lines))
    return out


def _texts(pdf: bytes) -> list[list[tuple[str, float, float, float]]]:
    """Per page, each shown string with its text-matrix origin and font size, as pypdf reads it."""
    reader = pypdf.PdfReader(io.BytesIO(pdf), strict=True)
    pages = []
    for page in reader.pages:
        got: list[tuple[str, float, float, float]] = []

        def visit(text: str, cm: Any, tm: Any, font: Any, size: float, got: list = got) -> None:
            if text.strip():
                got.append((text.strip(), float(tm[4]), float(tm[5]), float(size)))

        page.extract_text(visitor_text=visit)
        pages.append(got)
    return pages


@pytest.mark.parametrize("stock_key", sorted(label_stocks()))
@pytest.mark.parametrize("count", [1, 31, 200])
def test_sheets_read_back(stock_key: str, count: int) -> None:
    stock = label_stocks()[stock_key]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t (x) \\ ñ")))
    labels = _labels(count)
    pdf = _sheet_pdf(ctx, "R1", labels, stock)
    assert pdf == _sheet_pdf(ctx, "R1", labels, stock)  # deterministic bytes
    reader = pypdf.PdfReader(io.BytesIO(pdf), strict=True)
    assert reader.pdf_header == "%PDF-1.4"
    assert reader.metadata is not None and reader.metadata.title == f"t (x) \\ ñ rack R1 cable labels ({stock.description})"
    assert reader.metadata.author == "snc"
    pages = _texts(pdf)
    assert len(pages) == math.ceil(count / stock.per_sheet)
    page_h = stock.sheet_mm[1] * mm
    width = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
    for p, shown in enumerate(pages):
        chunk = labels[p * stock.per_sheet : (p + 1) * stock.per_sheet]
        expected = []
        for pos, x in enumerate(chunk):
            size = font_size(x.lines, stock)
            row, col = divmod(pos, stock.columns)
            left = (stock.margin_mm[0] + col * stock.pitch_mm[0] + stock.padding_mm) * mm
            top = page_h - (stock.margin_mm[1] + row * stock.pitch_mm[1] + stock.padding_mm) * mm
            for k, line in enumerate(x.lines):
                # every line fits the label's width at its size, by reportlab's metrics of what is printed
                assert stringWidth(printed(line), FONT, size) <= width + 1e-6 or size == MIN_PT
                if printed(line).strip():
                    expected.append((printed(line).strip(), left, top - size - k * size * LEADING, size))
        assert [t for t, *_ in shown] == [t for t, *_ in expected]
        for (_, gx, gy, gs), (_, ex, ey, es) in zip(shown, expected, strict=True):
            assert (gx, gy, gs) == pytest.approx((ex, ey, es), abs=1e-3)


def test_hostile_text_escaped() -> None:
    stock = label_stocks()[sorted(label_stocks())[0]]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t")))
    lines = ("a\\b (c) d)", "naïve – ü", "→ ★ x", "(")
    pdf = _sheet_pdf(ctx, "R1", [Label("R1", 1, "N1", "c1", "a", lines)], stock)
    assert [t for t, *_ in _texts(pdf)[0]] == ["a\\b (c) d)", "naïve – ü", "? ? x", "("]


XPDFIMPORT = Path("/usr/lib/libreoffice/program/xpdfimport")  # LibreOffice's poppler-based PDF reader


@pytest.mark.skipif(not XPDFIMPORT.exists(), reason="LibreOffice's xpdfimport not installed")
def test_poppler_reads_sheets(tmp_path: Path) -> None:
    """LibreOffice's PDF import (poppler) parses the file without a complaint and draws every
    printed character of every label, a page of stock per ``per_sheet`` labels."""
    stock = label_stocks()[sorted(label_stocks())[0]]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t")))
    labels = _labels(70)
    (tmp_path / "R1.pdf").write_bytes(_sheet_pdf(ctx, "R1", labels, stock))
    run = subprocess.run([str(XPDFIMPORT), str(tmp_path / "R1.pdf")], capture_output=True, timeout=120, check=True)
    assert b"rror" not in run.stderr, run.stderr
    out = run.stdout.decode("utf-8", "replace").splitlines()
    assert sum(line.startswith("startPage ") for line in out) == math.ceil(len(labels) / stock.per_sheet)
    # each drawChar line ends in the character, a backslash written escaped as two
    drawn = "".join(line.split(" ", 10)[10].replace("\\\\", "\\") for line in out if line.startswith("drawChar "))
    assert drawn.replace(" ", "") == "".join(printed(t) for x in labels for t in x.lines).replace(" ", "")


def test_widths_are_reportlabs() -> None:
    for line in LINES:
        assert _width(line) == stringWidth(printed(line), FONT, 1.0)
    stock = next(iter(label_stocks().values()))
    assert font_size(("x" * 200,), stock) == MIN_PT


GS = shutil.which("gs")


@pytest.mark.skipif(GS is None, reason="Ghostscript (gs) is not installed")
def test_ghostscript_renders_every_page(tmp_path: Path) -> None:
    """Ghostscript (a second real reader) renders every page without an error and finds the text."""
    stock = label_stocks()["avery-5160"]
    ctx: Any = SimpleNamespace(blueprint=SimpleNamespace(metadata=SimpleNamespace(name="t")))
    labels = _labels(65)
    path = tmp_path / "R1.pdf"
    path.write_bytes(_sheet_pdf(ctx, "R1", labels, stock))
    out = tmp_path / "out.txt"
    run = subprocess.run(
        [str(GS), "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=txtwrite", f"-sOutputFile={out}", path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and "Error" not in run.stdout + run.stderr, run.stdout + run.stderr
    text = out.read_text(errors="replace")
    for x in labels[:5]:
        for line in x.lines:
            if line.strip() and line.isascii() and line.isprintable():
                assert line in text, line
