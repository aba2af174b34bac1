"""CSV that a spreadsheet opens as data: every renderer that writes CSV writes it through here.

Cabling lists and BOMs are opened in spreadsheets by datacenter staff, and a cell whose text
starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) is run as a
formula there (CSV injection, OWASP). Names snc makes cannot start so (``name_rules``), but
other text reaches CSV cells too (catalogue descriptions, model names, anything a future column
adds), so every cell is neutralised here as OWASP advises: such a cell gets a leading
apostrophe (``'=1+2``), which spreadsheets show as text and do not evaluate. A cell that is
just a number (``-3``, ``+1.5``) is a number, not a formula, and is written as it is.

The output is exactly what ``csv.writer(lineterminator="\\n")`` writes for the neutralised
cells (minimal quoting). :meth:`CsvWriter.text_rows` is the fast path for large files of text
cells: a row with nothing to quote or neutralise is joined with commas directly (4x faster
than the csv module), and only the others go through it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

FORMULA_START = frozenset("=+-@\t\r")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def safe_cell(value: object) -> object:
    """``value``, or for text a spreadsheet would run as a formula, that text after an apostrophe."""
    if isinstance(value, str) and value[:1] in FORMULA_START and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_row(row: Iterable[object]) -> list[object]:
    return [safe_cell(cell) for cell in row]


class CsvWriter:
    """A CSV file built in memory: a header, then rows, every cell through :func:`safe_cell`.

    The text is encoded in chunks as it grows, so a cabling list of 10^6 rows (about 200 MB)
    is never held as text and as bytes at once.
    """

    _CHUNK = 1 << 20  # characters of text kept before they are encoded

    def __init__(self, columns: Sequence[str]) -> None:
        self._buf = io.StringIO()
        self._csv = csv.writer(self._buf, lineterminator="\n")
        self._columns = len(columns)
        self._chunks: list[bytes] = []
        self.writerow(columns)

    def _spill(self) -> None:
        """Encode the text written so far and start the buffer afresh."""
        self._chunks.append(self._buf.getvalue().encode())
        self._buf.seek(0)
        self._buf.truncate()

    def writerow(self, row: Iterable[object]) -> None:
        self._csv.writerow(safe_row(row))

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)

    def text_rows(self, rows: Iterable[list[str]]) -> None:
        """Rows of text cells (one per column), the common ones joined with commas directly.

        A row takes the fast path only when joining is what the csv module would write and no
        cell needs neutralising: no comma, quote or line break inside a cell (the commas
        count the cells), no tab or carriage return, and no cell starting with = + - or @
        (the first cell, or a comma followed by one). Every other row goes through
        :meth:`writerow`, so the bytes are the same either way.
        """
        write, slow, tell = self._buf.write, self.writerow, self._buf.tell
        separators = self._columns - 1
        for n, row in enumerate(rows, 1):
            if not n % 4096 and tell() > self._CHUNK:
                self._spill()
            line = ",".join(row)
            if (
                line.count(",") == separators
                and '"' not in line
                and "\n" not in line
                and "\r" not in line
                and "\t" not in line
                and line[:1] not in FORMULA_START
                and ",=" not in line
                and ",+" not in line
                and ",-" not in line
                and ",@" not in line
            ):
                write(line + "\n")
            else:
                slow(row)

    def getvalue(self) -> bytes:
        if self._buf.tell():
            self._spill()
        return b"".join(self._chunks)


def tsv_cell(value: object) -> str:
    """One TSV cell: tabs and line breaks (which would split the row) become spaces, and text a
    spreadsheet would run as a formula gets its apostrophe (:func:`safe_cell`)."""
    text = str(value)
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    return str(safe_cell(text)) if text[:1] in FORMULA_START else text


def tsv_line(cells: Sequence[str]) -> str:
    """A TSV row of text cells (no line end), every cell as :func:`tsv_cell` makes it.

    The common row (no tab or line break inside a cell, no cell starting with = + - or @) is
    joined directly; the tab count proves no cell held a tab. Plans of 10^5 rows take this path.
    """
    line = "\t".join(cells)
    if (
        line.count("\t") == len(cells) - 1
        and line[:1] not in FORMULA_START
        and "\n" not in line  # substring tests run in C, faster than one regex over the line
        and "\r" not in line
        and "\t=" not in line
        and "\t+" not in line
        and "\t-" not in line
        and "\t@" not in line
    ):
        return line
    return "\t".join(tsv_cell(c) for c in cells)
