"""The workbook's own xlsx writer (outputs/workbook.py: inline strings, cells without
references, a row template per sheet) against XlsxWriter as the reference: the cells openpyxl
reads from both are the same, hostile cell text included (XML escapes, control characters, the
_xHHHH_ escape, whitespace to preserve, rich-string look-alikes, numbers and non-numbers in
numeric columns); the row-template path and the cell-by-cell path write the same XML; the
package is a valid, deterministic zip whose parts are the ones its content types name."""

from __future__ import annotations

import io
import random
import re
import zipfile

import openpyxl
import pytest
import xlsxwriter

from supernodeiac.outputs.workbook import _ROW_JOIN, _row_texts, _rows_xml, _string_tail, _template, _Xlsx

COLUMNS = ["cable_id", "length_m", "label", "u"]
NUMERIC = {"length_m", "u"}
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
    "a\x7f b",
]
PLAIN = ["", "plain", "a:b > c:d", "x & y", "<tag>", "gpu-0001 OSFP 4", "12.50", "0", "-3", "1e3", "=1+1", "naïve", "a|b"]


def _mine(rows: list[list[str]], fills: int) -> bytes:
    book = _Xlsx("t")
    header = book.style(bold=True)
    formats = [book.style(fill=f"#{k + 1:02X}0000", border="#BFBFBF") for k in range(fills)]
    for sheet_no in range(2):
        body = _rows_xml(COLUMNS, [(r, formats[(n * 7 + sheet_no) % fills]) for n, r in enumerate(rows)])
        book.table(f"s{sheet_no}", COLUMNS, header, body, len(rows))
    return book.close()


def _reference(rows: list[list[str]], fills: int) -> bytes:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(
        buffer, {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False, "strings_to_urls": False}
    )
    header = book.add_format({"bold": True})
    formats = [book.add_format({"bg_color": f"#{k + 1:02X}0000"}) for k in range(fills)]
    for sheet_no in range(2):
        sheet = book.add_worksheet(f"s{sheet_no}")
        for col, text in enumerate(COLUMNS):
            sheet.write_string(0, col, text, header)
        for n, r in enumerate(rows, start=1):
            fmt = formats[((n - 1) * 7 + sheet_no) % fills]
            for col, value in enumerate(r):
                try:
                    number = float(value) if COLUMNS[col] in NUMERIC and value else None
                except ValueError:
                    number = None
                if number is None:
                    sheet.write_string(n, col, value, fmt)
                else:
                    sheet.write_number(n, col, number, fmt)
    book.close()
    return buffer.getvalue()


def _cells(data: bytes) -> list[list[tuple[object, str | None]]]:
    """Every sheet's cells as openpyxl reads them: (value, fill colour)."""
    book = openpyxl.load_workbook(io.BytesIO(data))
    return [[(c.value if c.value is not None else "", c.fill.fgColor.rgb) for row in ws.iter_rows() for c in row] for ws in book]


@pytest.mark.parametrize("count", [0, 1, 2, 50])
def test_cells_read_back_as_xlsxwriters(count: int) -> None:
    rows = [[HOSTILE[(n + k * 3) % len(HOSTILE)] for k in range(len(COLUMNS))] for n in range(count)]
    mine, ref = _cells(_mine(rows, 5)), _cells(_reference(rows, 5))
    # The one difference: XlsxWriter writes a text that looks like rich-string XML as that XML
    # (the cell reads "rich"); snc keeps the text, as the CSVs do.
    ref = [[("<r><t>rich</t></r>" if v == "rich" else v, f) for v, f in s] for s in ref]
    assert [[v for v, _ in s] for s in mine] == [[v for v, _ in s] for s in ref]
    # The fills: the same colour on the same cells (the header's none).
    assert [[f for _, f in s] for s in mine] == [[f for _, f in s] for s in ref]
    if count == 50:
        values = {v for s in mine for v, _ in s}
        # openpyxl does not undo the _xHHHH_ escape (Excel does): the escaped texts.
        assert {"ctl_x0001__x001F_", "_x005F_x0041_ literal", " leading", "<r><t>rich</t></r>", 12.5} <= values


def test_a_changed_cell_changes_the_file() -> None:
    rows = [["a", "1", "b", "2"], ["c", "3", "d", "4"], ["e", "5", "f", "6"]]
    changed = [r[:] for r in rows]
    changed[1][2] = "d2"
    assert _mine(rows, 2) == _mine([r[:] for r in rows], 2)  # deterministic
    assert _mine(rows, 2) != _mine(changed, 2)


def _each_row(body: list[str]) -> list[str]:
    """A sheet body's rows, one text each (a sheet of template rows is one text of them all)."""
    return re.split(r"(?=<row )", "".join(body))[1:]


def test_a_sheet_of_template_rows_is_each_row_s_template_filled() -> None:
    """The sheet-at-once path (the templates' pieces and the texts put in place column-wise)
    writes what each row's own %-format of its format's template writes, rows of several
    formats mixed, and the escaped texts (not the originals) where a sheet needs the escape."""
    for source in (PLAIN, [t for t in PLAIN if not any(c in t for c in "&<>")]):
        rows = [[source[(n * 5 + k * 3) % len(source)] for k in range(len(COLUMNS))] for n in range(70)]
        xfs = [(n * n) % 3 + 1 for n in range(len(rows))]
        body = _rows_xml(COLUMNS, list(zip(rows, xfs, strict=True)))
        expected = []
        for n, (r, xf) in enumerate(zip(rows, xfs, strict=True), start=2):
            texts = _row_texts(_ROW_JOIN.join(r), len(r))
            assert texts is not None
            for c, name in enumerate(COLUMNS):
                if name in NUMERIC:
                    try:
                        number = float(r[c]) if r[c] else None
                    except ValueError:
                        number = None
                    texts[c] = f"><v>{number:.16G}</v></c>" if number is not None else _string_tail(r[c])
            expected.append(_template(COLUMNS, xf) % (n, *texts))
        assert _each_row(body) == expected
        assert {xf for xf in xfs} == {int(x) for x in re.findall(r'<c s="(\d+)"', "".join(body))}


def test_row_template_and_cell_paths_write_the_same_xml() -> None:
    """Rows of plain text (the row template) between rows that need escapes or preserved
    whitespace (cell by cell): each row's XML is the cell-by-cell XML of its texts."""
    rows = []
    for n in range(120):
        source = PLAIN if n % 3 else HOSTILE
        rows.append([source[(n * 5 + k * 7) % len(source)] for k in range(len(COLUMNS))])
    fast = [r for r in rows if _row_texts(_ROW_JOIN.join(r), len(r)) is not None]
    assert 40 < len(fast) < len(rows) - 20  # both paths are taken
    xml = _each_row(_rows_xml(COLUMNS, [(r, 3) for r in rows]))
    plain_xml = _each_row(_rows_xml(COLUMNS, [(r, 3) for r in fast]))  # a sheet of template rows only
    for n, (r, got) in enumerate(zip(rows, xml, strict=True), start=2):
        tails = []
        for c, v in enumerate(r):
            try:
                number = float(v) if COLUMNS[c] in NUMERIC and v else None
            except ValueError:
                number = None
            tails.append(f"><v>{number:.16G}</v></c>" if number is not None else _string_tail(v))
        assert got == f'<row r="{n}">' + "".join(f'<c s="3"{t}' for t in tails) + "</row>", r
    assert [re.sub(r'^<row r="\d+">', "", x) for x in plain_xml] == [
        re.sub(r'^<row r="\d+">', "", x) for x, r in zip(xml, rows, strict=True) if r in fast
    ]
    assert _template(COLUMNS, 3).count("%s") == len(COLUMNS)


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError):
        _rows_xml(COLUMNS, [(["a", "1", "b", "2"], 0), (["a", "1", "b"], 0)])


def test_a_row_template_row_is_one_whose_every_cell_needs_only_the_xml_escape() -> None:
    """_row_texts over the joined row against the per-cell steps (control characters, the
    _xHHHH_ escape, whitespace at an end), on random cells of characters near every boundary:
    texts only when each cell needs only the XML escape, those escaped texts, and texts whenever
    that holds (a text with the join character aside)."""
    alphabet = ["a", "Z", "0", "_", "x", "_x00A0_", " ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\u2003", "\u3000"]
    alphabet += ["&", "<", ">", "<r>", "</r>", "&amp;", "\x00", "\x08", "\x1f", "\x7f", "\ufffe", "\uffff", "é", "|", ";"]
    rnd = random.Random(24)
    seen = {True: 0, False: 0}
    for _ in range(20_000):
        row = ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 4))) for _ in range(rnd.randrange(1, 5))]
        only_escaped = all(
            not re.search(r"[\x00-\x08\x0b-\x1f\ufffe\uffff]|_x[0-9a-fA-F]{4}_", v) and not re.search(r"^\s|\s$", v) for v in row
        )
        texts = _row_texts(_ROW_JOIN.join(row), len(row))
        if texts is not None:
            assert only_escaped, row
            assert texts == [v.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for v in row], row
            assert [f' t="inlineStr"><is><t>{t}</t></is></c>' for t in texts] == [_string_tail(v) for v in row]
        elif only_escaped:
            assert any(_ROW_JOIN in v for v in row), row
        seen[texts is not None] += 1
    assert min(seen.values()) > 1_000


def test_the_package_holds_the_parts_its_content_types_and_relationships_name() -> None:
    rows = [[PLAIN[(n * 5 + k * 7) % len(PLAIN)] for k in range(len(COLUMNS))] for n in range(30)]
    data = _mine(rows, 2)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None
        names = set(z.namelist())
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        types = z.read("[Content_Types].xml").decode()
        overrides = set(re.findall(r'PartName="/([^"]+)"', types))
        assert overrides | {"[Content_Types].xml", "_rels/.rels", "xl/_rels/workbook.xml.rels"} == names
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
        assert {f"xl/{t}" for t in re.findall(r'Target="([^"]+)"', rels)} == {
            n for n in names if n.startswith("xl/") and "_rels" not in n and "workbook.xml" not in n
        }
        workbook = z.read("xl/workbook.xml").decode()
    assert workbook.count("_xlnm.Print_Titles") == 2 and workbook.count("_xlnm._FilterDatabase") == 2
    ws = openpyxl.load_workbook(io.BytesIO(data))["s1"]
    assert ws.freeze_panes == "A2" and ws.auto_filter.ref == "A1:D31" and ws.print_title_rows == "$1:$1"
    assert ws.page_setup.orientation == "landscape" and ws.page_setup.paperSize == 9 and ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.max_row == 31 and ws.max_column == 4
