"""The workbook's bulk row writer (and its sheets that hold their rows in memory) against
XlsxWriter's own per-cell calls into its own temp-file sheets: the same xlsx bytes,
hostile cell text included (XML escapes, control characters, XlsxWriter's _xHHHH_ escape,
whitespace to preserve, rich-string look-alikes, numbers and non-numbers in numeric columns)."""

from __future__ import annotations

import datetime
import io

import pytest
import xlsxwriter

from supernodeiac.outputs.workbook import _Book, _Cells, _write_row

COLUMNS = ["cable_id", "length_m", "label", "u"]
HOSTILE = [
    "",
    "plain",
    " leading",
    "trailing ",
    "tab\tinside",
    "line\nbreak",
    "end\n",
    "a & b < c > d",
    'quote " here',
    "ctl\x01\x1f",
    "_x0041_ literal",
    "<r><t>rich</t></r>",
    "\ufffe\uffff",
    "=1+1",
    "1e3",
    "12.50",
    "0",
    "-3",
    "abc",
    "naïve — ünïcode",
]


def _book(bulk: bool, rows: list[list[str]], fills: int) -> bytes:
    buffer = io.BytesIO()
    # The bulk rows into snc's sheets (rows held in memory), the cells through XlsxWriter's own.
    book = (_Book if bulk else xlsxwriter.Workbook)(
        buffer, {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False}
    )
    book.set_properties({"created": datetime.datetime(2000, 1, 1)})
    header = book.add_format({"bold": True})
    formats = [book.add_format({"bg_color": f"#{k:02X}0000"}) for k in range(fills)]
    cells = _Cells()
    for sheet_no in range(2):
        sheet = book.add_worksheet(f"s{sheet_no}")
        for col, text in enumerate(COLUMNS):
            sheet.write_string(0, col, text, header)
        # Later formats are first used late (their XF index follows first use).
        rows_fmt = [(r, formats[(n * 7 + sheet_no) % fills]) for n, r in enumerate(rows)]
        if bulk:
            cells.write(sheet, COLUMNS, rows_fmt)
        else:
            for n, (r, fmt) in enumerate(rows_fmt, start=1):
                _write_row(sheet, n, COLUMNS, r, fmt)
    book.close()
    return buffer.getvalue()


@pytest.mark.parametrize("count", [0, 1, 2, 50])
def test_bulk_rows_are_xlsxwriters_bytes(count: int) -> None:
    rows = [[HOSTILE[(n + k * 3) % len(HOSTILE)] for k in range(len(COLUMNS))] for n in range(count)]
    assert _book(True, rows, 5) == _book(False, rows, 5)


def test_bulk_rows_differ_when_a_cell_does() -> None:
    rows = [["a", "1", "b", "2"], ["c", "3", "d", "4"], ["e", "5", "f", "6"]]
    changed = [r[:] for r in rows]
    changed[1][2] = "d2"
    assert _book(True, rows, 2) != _book(True, changed, 2)


PLAIN = [
    "",
    "plain",
    "a:b > c:d",
    "x & y",
    "<tag>",
    "gpu-0001 OSFP 4",
    "A01 U2 x; B03 U7 y",
    "12.50",
    "0",
    "-3",
    "1e3",
    "abc",
    "=1+1",
    "naïve — ünïcode",
    "a|b",
]


def test_row_template_and_cell_paths_give_xlsxwriters_bytes() -> None:
    """Rows of plain text (one row template each) between rows that need escapes or preserved
    whitespace (cell by cell), numbers and non-numbers in the numeric columns: XlsxWriter's bytes."""
    from supernodeiac.outputs.workbook import _ROW_JOIN, _row_texts

    rows = []
    for n in range(120):
        source = PLAIN if n % 3 else HOSTILE
        rows.append([source[(n * 5 + k * 7) % len(source)] for k in range(len(COLUMNS))])
    rows.append(["a\x7f b", "1", "c", "2"])  # the join character inside a cell, before a space
    fast = [r for r in rows if _row_texts(_ROW_JOIN.join(r), len(r)) is not None]
    assert 40 < len(fast) < len(rows) - 20  # both paths are taken
    assert _book(True, rows, 3) == _book(False, rows, 3)


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError):
        _book(True, [["a", "1", "b", "2"], ["a", "1", "b"], ["c", "3", "d", "4"]], 1)


def test_a_row_template_row_is_one_whose_every_cell_xlsxwriter_only_escapes() -> None:
    """_row_texts over the joined row against XlsxWriter's own per-cell steps (its control
    character escape, its rich-string test, its xml:space test, its XML escape), on random cells
    of characters near every boundary: texts only when XlsxWriter would only XML-escape each cell,
    those escaped texts, and texts whenever that holds (a text with the join character or a rich
    string's opening tag aside)."""
    import random

    from xlsxwriter.utility import _preserve_whitespace
    from xlsxwriter.xmlwriter import XMLwriter

    from supernodeiac.outputs.workbook import _ROW_JOIN, _row_texts

    alphabet = ["a", "Z", "0", "_", "x", "_x00A0_", " ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\u2003", "\u3000"]
    alphabet += ["&", "<", ">", "<r>", "</r>", "&amp;", "\x00", "\x08", "\x1f", "\x7f", "\ufffe", "\uffff", "é", "|", ";"]
    rnd = random.Random(24)
    seen = {True: 0, False: 0}
    for _ in range(20_000):
        row = ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 4))) for _ in range(rnd.randrange(1, 5))]
        escaped = [XMLwriter._escape_control_characters(v) for v in row]
        rich = [v.startswith("<r>") and v.endswith("</r>") for v in escaped]
        only_escaped = all(e == v and not r and not _preserve_whitespace(v) for v, e, r in zip(row, escaped, rich, strict=True))
        texts = _row_texts(_ROW_JOIN.join(row), len(row))
        if texts is not None:
            assert only_escaped, row
            assert texts == [v.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for v in row], row
        elif only_escaped:
            assert any(_ROW_JOIN in v or "<r>" in v for v in row), row
        seen[texts is not None] += 1
    assert min(seen.values()) > 1_000


def test_a_sheet_of_plain_rows_gives_xlsxwriters_bytes() -> None:
    rows = [[PLAIN[(n * 5 + k * 7) % len(PLAIN)] for k in range(len(COLUMNS))] for n in range(60)]
    assert all(not any(x.strip() != x for x in r) for r in rows)
    assert any(">" in x for r in rows for x in r)  # escaped in the row template
    assert _book(True, rows, 2) == _book(False, rows, 2)


def test_parts_packed_in_memory_are_the_parts_packed_from_temp_files() -> None:
    """The per-row workbooks' packing (XlsxWriter's in-memory packager over snc's sheets) against
    XlsxWriter's own temp-file packing: the same parts in the same order, byte for byte; only the
    zip entries' dates and modes differ."""
    import zipfile

    rows = [[HOSTILE[(n + k * 3) % len(HOSTILE)] for k in range(len(COLUMNS))] for n in range(40)]

    def parts(in_memory: bool) -> list[tuple[str, bytes]]:
        buffer = io.BytesIO()
        options = {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False}
        book = _Book(buffer, options, parts_in_memory=True) if in_memory else xlsxwriter.Workbook(buffer, options)
        book.set_properties({"created": datetime.datetime(2000, 1, 1)})
        fmt = book.add_format({"bg_color": "#DDEBF7"})
        for sheet_no in range(3):
            sheet = book.add_worksheet(f"s{sheet_no}")
            sheet.freeze_panes(1, 0)
            sheet.repeat_rows(0)
            sheet.autofilter(0, 0, len(rows), len(COLUMNS) - 1)
            for col, text in enumerate(COLUMNS):
                sheet.write_string(0, col, text)
            if in_memory:
                _Cells().write(sheet, COLUMNS, [(r, fmt) for r in rows])
            else:
                for n, r in enumerate(rows, start=1):
                    _write_row(sheet, n, COLUMNS, r, fmt)
        book.close()
        with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z:
            assert z.testzip() is None
            dates = {i.date_time for i in z.infolist()}
            assert dates == {(1980, 1, 1, 0, 0, 0) if in_memory else (1980, 1, 31, 0, 0, 0)}
            return [(i.filename, z.read(i)) for i in z.infolist()]

    packed, plain = parts(True), parts(False)
    assert [name for name, _ in packed] == [name for name, _ in plain]
    assert len([name for name, _ in packed if name.startswith("xl/worksheets/")]) == 3
    assert packed == plain
