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
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter

FORMULA_START = frozenset("=+-@\t\r")
# A cell after a comma that starts a formula (the first cell of a line is checked apart).
_FORMULA_AFTER = (",=", ",+", ",-", ",@")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def safe_cell(value: object) -> object:
    """``value``, or for text a spreadsheet would run as a formula, that text after an apostrophe."""
    if isinstance(value, str) and value[:1] in FORMULA_START and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_row(row: Iterable[object]) -> list[object]:
    return [safe_cell(cell) for cell in row]


def live_formulas(data: bytes) -> list[str]:
    """The cells of a CSV file a spreadsheet would run: text starting with = + - @ tab or CR that
    is not a number. An audit of written files (the tests and bench/fuzz.py read every rendered
    CSV with it), independent of :func:`safe_cell`: it parses the file back with the csv module
    and asks ``float`` what a number is."""
    bad = []
    for row in csv.reader(io.StringIO(data.decode(), newline="")):
        for cell in row:
            if cell[:1] in FORMULA_START:
                try:
                    float(cell)
                except ValueError:
                    bad.append(cell)
    return bad


# Byte classes for testing a batch of joined rows at once: S a comma, N a line break, Q what makes
# the csv module quote a cell or spreadsheets misread it (a quote, tab or carriage return), F a
# formula character, "." the rest (UTF-8's multi-byte sequences included: none of their bytes is ASCII).
_CSV = bytearray(b"." * 256)
_CSV[ord(",")], _CSV[ord("\n")] = ord("S"), ord("N")
for _c in b'"\t\r':
    _CSV[_c] = ord("Q")
for _c in b"=+-@":
    _CSV[_c] = ord("F")
_CSV_CLASSES = bytes(_CSV)


_QUOTED = ',"\r\t\n'  # what makes the csv module quote a cell (tab: spreadsheets misread it)
_FIRST = itemgetter(slice(None, 1))


def csv_cells_clean(cells: Iterable[str]) -> bool:
    """Whether every cell is written as it is by the csv module and needs no neutralising: none
    holds a comma, quote, tab or line break, and none starts with = + - or @ (so none is a
    formula, nor a number to tell from one). Tested on a whole column at once: its cells joined
    and their first characters joined, each searched for single characters (memchr, in C)."""
    cells = list(cells)
    text, firsts = "".join(cells), "".join(map(_FIRST, cells))
    return not any(c in text for c in _QUOTED) and not any(c in firsts for c in FORMULA_START)


class CsvWriter:
    """A CSV file built in memory: a header, then rows, every cell through :func:`safe_cell`.

    The text is encoded in chunks as it grows, so a cabling list of 10^6 rows (about 200 MB)
    is never held as text and as bytes at once.
    """

    _CHUNK = 1 << 20  # characters of text kept before they are encoded

    def __init__(self, columns: Sequence[str], header: bool = True) -> None:
        """``header=False``: rows only (a later chunk of a file whose first chunk had the header)."""
        self._buf = io.StringIO()
        self._csv = csv.writer(self._buf, lineterminator="\n")
        self._columns = len(columns)
        self._chunks: list[bytes] = []
        if header:
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

    _BATCH = 4096  # rows checked together on the fast path

    def text_rows(self, rows: Iterable[list[str]]) -> None:
        """Rows of text cells (one per column), the common ones joined with commas directly.

        A row takes the fast path only when joining is what the csv module would write and no
        cell needs neutralising: no comma, quote or line break inside a cell (the commas
        count the cells), no tab or carriage return, and no cell starting with = + - or @
        (the first cell, or a comma followed by one). Every other row goes through
        :meth:`writerow`, so the bytes are the same either way.

        Rows are checked a batch at a time: the batch's text (rows joined by line breaks) has
        exactly ``rows x (columns - 1)`` commas and ``rows`` line breaks only when no cell holds
        either, and no formula start when no line starts with one; a batch that fails any test
        is checked row by row. A 10^6-row cabling list takes a handful of scans per 4,096 rows.
        """
        batch: list[list[str]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == self._BATCH:
                self._rows(batch)
                batch = []
        if batch:
            self._rows(batch)

    def _rows(self, rows: list[list[str]]) -> None:
        text = "\n".join(map(",".join, rows)) + "\n"
        # one cell per column, so commas count cells
        data = self._clean(text, len(rows)) if set(map(len, rows)) == {self._columns} else None
        if data is not None:
            self._clean_batch(data)
        else:
            write, slow = self._buf.write, self.writerow
            for row in rows:
                line = ",".join(row)
                if self._clean_line(line):
                    write(line + "\n")
                else:
                    slow(row)
        if self._buf.tell() > self._CHUNK:
            self._spill()

    def text_lines(self, lines: list[str], cells: Callable[[int], list[str]]) -> None:
        """:meth:`text_rows` of rows already joined: ``lines[n]`` is exactly ``columns`` text
        cells joined with commas (no line end), ``cells(n)`` those cells. The same tests on the
        joined text (a cell holding a comma shows as one comma too many), the same bytes; a line
        that fails them goes through :meth:`writerow` with its cells."""
        data = self._clean("\n".join(lines) + "\n", len(lines))
        if data is not None:
            self._clean_batch(data)
        else:
            write, slow = self._buf.write, self.writerow
            for n, line in enumerate(lines):
                if self._clean_line(line):
                    write(line + "\n")
                else:
                    slow(cells(n))
        if self._buf.tell() > self._CHUNK:
            self._spill()

    def _clean(self, text: str, rows: int) -> bytes | None:
        """``text`` encoded when its ``rows`` lines of ``columns`` cells each, joined and ended by
        line breaks, are what the csv module writes with nothing to neutralise. The batch's bytes by class
        (_CSV_CLASSES): S a comma, N a line break, Q a quote, tab or carriage return, F a formula
        character. A clean batch has no Q and no S or N before an F."""
        data = text.encode()
        m = data.translate(_CSV_CLASSES)
        clean = (
            m.count(b"S") == (self._columns - 1) * rows
            and m.count(b"N") == rows
            and b"Q" not in m
            and m[:1] != b"F"
            and b"SF" not in m
            and b"NF" not in m
        )
        return data if clean else None

    def _clean_batch(self, data: bytes) -> None:
        if self._buf.tell():
            self._spill()
        self._chunks.append(data)

    def _clean_line(self, line: str) -> bool:
        return (
            line.count(",") == self._columns - 1
            and '"' not in line
            and "\n" not in line
            and "\r" not in line
            and "\t" not in line
            and line[:1] not in FORMULA_START
            and not any(bad in line for bad in _FORMULA_AFTER)
        )

    def take(self) -> list[bytes]:
        """The bytes encoded so far (text still buffered stays for later): for streaming."""
        chunks, self._chunks = self._chunks, []
        return chunks

    def stream(self, rows: Iterable[list[str]]) -> Iterator[bytes]:
        """:meth:`text_rows`, yielding the file's bytes (the header first) in pieces of about a
        megabyte as they are made: a 10^6-row list is written, or compared, without being held."""
        batch: list[list[str]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == self._BATCH:
                self._rows(batch)
                batch = []
                if self._chunks:
                    yield from self._chunks
                    self._chunks = []
        if batch:
            self._rows(batch)
        yield self.getvalue()
        self._chunks = []

    def text_columns(self, columns: Sequence[Sequence[str]], known: Sequence[bool] = (), widths: Sequence[int] = ()) -> None:
        """:meth:`text_rows` of rows given as columns (``columns[c][n]``: row n's cell c).

        Each column is tested at once (:func:`csv_cells_clean`), but for those ``known[c]`` says
        are clean (the caller tested the cells they were gathered from); when every cell is clean
        the rows are joined as they are (one ``",".join`` per row, in C), else the block goes
        through :meth:`text_rows`, row by row where a row needs it: the same bytes either way.
        ``widths[c] > 1``: column c holds that many known clean cells joined by commas (split
        apart again on the way through text_rows)."""
        widths = widths or [1] * len(columns)
        if sum(widths) != self._columns or len(widths) != len(columns):
            raise ValueError(f"{sum(widths)} columns, not {self._columns}")
        if not columns or not columns[0]:
            return
        known = known or [False] * len(columns)
        if all(k or csv_cells_clean(c) for c, k in zip(columns, known, strict=True)):
            lines = list(map(",".join, zip(*columns, strict=True)))
            lines.append("")  # the last line's end
            self._clean_batch("\n".join(lines).encode())
        else:
            cells: list[Sequence[str]] = []
            for c, w in zip(columns, widths, strict=True):
                cells.extend(zip(*(x.split(",") for x in c), strict=True) if w > 1 else [c])
            self._rows([list(row) for row in zip(*cells, strict=True)])
        if self._buf.tell() > self._CHUNK:
            self._spill()

    def stream_columns(self, blocks: Iterable[tuple[Sequence[Sequence[str]], Sequence[bool], Sequence[int]]]) -> Iterator[bytes]:
        """:meth:`text_columns` of each block of (columns, known, widths), yielding the file's bytes
        (the header first) as they are made, as :meth:`stream` does: for rows made a column at a time."""
        for columns, known, widths in blocks:
            self.text_columns(columns, known, widths)
            if self._chunks:
                yield from self._chunks
                self._chunks = []
        yield self.getvalue()
        self._chunks = []

    def getvalue(self) -> bytes:
        if self._buf.tell():
            self._spill()
        return b"".join(self._chunks)


# Every control character a reader may split a line or a field on: C0 (tab, line breaks, and the
# 0x1c-0x1f separators), DEL, C1 (0x85 is a line break to Python), and Unicode's line and
# paragraph separators. A TSV cell holds none of them, so a script that reads a plan splits on
# exactly the tabs snc wrote.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_BUT_TAB = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def tsv_cell(value: object) -> str:
    """One TSV cell: every control character (tabs and line breaks, which would split the row, the
    unit separator and the rest of C0, DEL, C1) becomes a space, and text a spreadsheet would run
    as a formula gets its apostrophe (:func:`safe_cell`)."""
    text = _CONTROL.sub(" ", str(value))
    return str(safe_cell(text)) if text[:1] in FORMULA_START else text


def tsv_line(cells: Sequence[str]) -> str:
    """A TSV row of text cells (no line end), every cell as :func:`tsv_cell` makes it.

    The common row (no control character inside a cell, no cell starting with = + - or @) is
    joined directly; the tab count proves no cell held a tab. Plans of 10^5 rows take this path.
    """
    line = "\t".join(cells)
    if (
        line.count("\t") == len(cells) - 1
        and line[:1] not in FORMULA_START
        and "\t=" not in line  # substring tests run in C, faster than one regex over the line
        and "\t+" not in line
        and "\t-" not in line
        and "\t@" not in line
        and _CONTROL_BUT_TAB.search(line) is None
    ):
        return line
    return "\t".join(tsv_cell(c) for c in cells)


# Byte classes for testing a column of cells at once (ASCII text): T a tab, N a line break, F a
# formula character, C any other control character (C0 and DEL), "." the rest.
_CLASSES = bytearray(b"." * 256)
for _c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]:
    _CLASSES[_c] = ord("C")
_CLASSES[0x09], _CLASSES[0x0A] = ord("T"), ord("N")
for _c in b"=+-@":
    _CLASSES[_c] = ord("F")
_CELL_CLASSES = bytes(_CLASSES)
_CONTROL_BUT_LF = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def cells_clean(cells: Sequence[str]) -> bool:
    """Whether every cell is its own :func:`tsv_cell`: none holds a control character (a tab or a
    line break included) and none starts with = + - @ (so none is a formula, nor a number to tell
    from one). Tested on the cells joined by line breaks, in a few scans of C: a break count (no
    cell held one), then, for ASCII text, each byte's class (no tab or other control character, no
    formula character at a cell's start); other text by a regular expression and substring tests.
    A long column is tested by its distinct cells (most columns of a plan repeat a few values)."""
    if len(cells) > 64:
        cells = list(set(cells))
    text = "\n".join(cells)
    if text.count("\n") != len(cells) - 1:
        return False
    if text.isascii():
        m = text.encode().translate(_CELL_CLASSES)
        return m[:1] != b"F" and b"C" not in m and b"T" not in m and b"NF" not in m
    return text[:1] not in FORMULA_START and _CONTROL_BUT_LF.search(text) is None and not any(f"\n{ch}" in text for ch in "=+-@")


def tsv_lines(columns: Sequence[Sequence[str]]) -> str:
    """Rows given as columns of text cells, each row as :func:`tsv_line` makes it and ended by a
    line break: the same text as ``"".join(tsv_line(r) + "\\n" for r in zip(*columns))``.

    Each column is tested at once (:func:`cells_clean`); when every cell is clean the rows are
    joined as they are, else made row by row. An acceptance plan's 10^5 rows take the first way.
    """
    if not columns or not columns[0]:
        return ""
    if all(map(cells_clean, columns)):
        return "\n".join(map("\t".join, zip(*columns, strict=True))) + "\n"
    return "".join(tsv_line(row) + "\n" for row in zip(*columns, strict=True))
