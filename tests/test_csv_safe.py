"""No CSV cell snc writes starts with a formula character unless it is neutralised: the shared
writer (outputs/csv_safe.py), its fast path, and every CSV of every shipped blueprint."""

from __future__ import annotations

import csv
import dataclasses
import io

import pytest
from conftest import BLUEPRINTS, compile_text, shipped_files

from supernodeiac.outputs.csv_safe import CsvWriter, live_formulas, safe_cell
from supernodeiac.pipeline import render

SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+2", "'=1+2"),
        ("+cmd", "'+cmd"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-3", "-3"),  # numbers are numbers
        ("+1.5", "+1.5"),
        ("-1e5", "-1e5"),
        ("leaf-01", "leaf-01"),
        ("", ""),
        (7, 7),
    ],
)
def test_safe_cell(cell, written):
    assert safe_cell(cell) == written


ROWS = [
    ["a", "b", "c"],
    ["=x", "b", "c"],
    ["a", "+x", "c"],
    ["a", "b", "-x"],
    ["a", "b", "@x"],
    ["a", "-1", "+2.5"],
    ["a,b", "c", "d"],
    ['a"b', "c", "d"],
    ["a\nb", "c", "d"],
    ["a\rb", "c", "d"],
    ["a\tb", "c", "d"],
    ["a", "=1,2", "d"],
    ["", "", ""],
    ["x=y", "a-b", "c@d"],
    ["é", "ñ-x", "ü"],  # UTF-8 text: the batch test reads bytes
    ["é", "=ñ", "c"],
    ['é"', "b,ü", "c"],
]


def test_the_fast_path_writes_what_the_csv_module_writes_for_safe_cells():
    fast = CsvWriter(["h1", "h2", "h3"])
    fast.text_rows([list(r) for r in ROWS])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["h1", "h2", "h3"])
    w.writerows([[safe_cell(c) for c in r] for r in ROWS])
    assert fast.getvalue() == buf.getvalue().encode()
    assert live_formulas(fast.getvalue()) == []


@pytest.mark.parametrize("bad", range(len(ROWS)))
def test_one_bad_row_in_a_batch_of_clean_ones_is_written_as_the_csv_module_writes_it(bad, monkeypatch):
    """The fast path checks rows a batch at a time; a batch holding one row that needs quoting or
    neutralising (in any position, also a batch's first) is written row by row, the same bytes."""
    monkeypatch.setattr(CsvWriter, "_BATCH", 7)
    rows = [[f"r{i}", "x-y", "1"] for i in range(20)]
    for at in (0, 3, 6, 7, 19):
        rows[at] = list(ROWS[bad])
    fast = CsvWriter(["h1", "h2", "h3"])
    fast.text_rows([list(r) for r in rows])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["h1", "h2", "h3"])
    w.writerows([[safe_cell(c) for c in r] for r in rows])
    assert fast.getvalue() == buf.getvalue().encode()
    assert live_formulas(fast.getvalue()) == []


def test_a_streamed_csv_is_the_same_bytes_in_pieces(monkeypatch):
    monkeypatch.setattr(CsvWriter, "_CHUNK", 100)
    monkeypatch.setattr(CsvWriter, "_BATCH", 5)
    rows = [[f"r{i}", "x-y" if i % 7 else "=evil", "1"] for i in range(103)]
    whole = CsvWriter(["h1", "h2", "h3"])
    whole.text_rows([list(r) for r in rows])
    pieces = list(CsvWriter(["h1", "h2", "h3"]).stream(iter(rows)))
    assert len(pieces) > 5 and b"".join(pieces) == whole.getvalue()
    assert list(CsvWriter(["h"]).stream(iter([]))) == [b"h\n"]


@pytest.mark.parametrize("bad", range(len(ROWS)))
def test_rows_given_as_columns_are_written_as_the_csv_module_writes_them(bad):
    """text_columns (the cabling lists' path): a block whose columns are all clean is joined as it
    is; one holding a row that needs quoting or neutralising is written row by row, the same bytes.
    A column the caller says is clean (gathered from tested cells) is not tested again."""
    rows = [[f"r{i}", "x-y", "1"] for i in range(20)]
    for at in (0, 6, 19):
        rows[at] = list(ROWS[bad])
    columns = [list(c) for c in zip(*rows, strict=True)]
    fast = CsvWriter(["h1", "h2", "h3"])
    fast.text_columns(columns[:], [False, False, False])
    fast.text_columns([[], [], []])
    fast.text_columns(columns, [])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["h1", "h2", "h3"])
    w.writerows([[safe_cell(c) for c in r] for r in rows + rows])
    assert fast.getvalue() == buf.getvalue().encode()
    assert live_formulas(fast.getvalue()) == []
    trusted = CsvWriter(["h1", "h2", "h3"])
    trusted.text_columns(columns, [True, True, True])  # the caller's word is taken: joined as it is
    assert trusted.getvalue().decode() == "h1,h2,h3\n" + "".join(",".join(r) + "\n" for r in rows)
    with pytest.raises(ValueError):
        CsvWriter(["h1", "h2"]).text_columns(columns)
    # Two clean cells given as one piece (width 2, joined by a comma), beside the third column:
    # split apart again when the block goes row by row.
    clean = [[f"r{i}" for i in range(20)], ["x-y"] * 20]
    for third in (columns[2], ["1"] * 20):
        joined = CsvWriter(["h1", "h2", "h3"])
        joined.text_columns([list(map(",".join, zip(*clean, strict=True))), third], [True, False], [2, 1])
        plain = CsvWriter(["h1", "h2", "h3"])
        plain.text_rows([[a, b, c] for a, b, c in zip(*clean, third, strict=True)])
        assert joined.getvalue() == plain.getvalue()


@pytest.mark.parametrize("bad", sorted({c for r in ROWS for c in r} | {"\tx", "x\r", "-3", "+1.5", "@", "é,"}))
def test_a_column_is_clean_csv_exactly_when_each_cell_is_written_as_it_is(bad):
    from supernodeiac.outputs.csv_safe import FORMULA_START, csv_cells_clean

    def plain(cell: str) -> bool:
        """The csv module writes it unquoted, no formula start, and no tab or carriage return
        (which the csv module may leave unquoted but spreadsheets misread)."""
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([cell, ""])
        return buf.getvalue() == cell + ",\n" and not {"\t", "\r"} & set(cell) and cell[:1] not in FORMULA_START

    for at in (0, 2, 4):
        cells = ["ok", "a-b", "c=d", "", "x"]
        cells[at] = bad
        assert csv_cells_clean(cells) is all(map(plain, cells)), cells
    assert csv_cells_clean([]) and csv_cells_clean(iter(["a", "b"]))


def test_a_short_row_cannot_hide_a_comma_in_a_cell():
    """Commas are counted per batch: a row with a cell missing must not make room for a comma
    inside another row's cell (that cell must still be quoted)."""
    rows = [["a", "b"], ["c,d", "e", "f"]]
    fast = CsvWriter(["h1", "h2", "h3"])
    fast.text_rows(rows)
    assert fast.getvalue().decode().splitlines()[1:] == ["a,b", '"c,d",e,f']


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_no_rendered_csv_cell_is_a_formula(path):
    csvs = {name: data for name, data in shipped_files(path.stem).items() if name.endswith(".csv")}
    assert csvs
    for name, data in csvs.items():
        assert live_formulas(data) == [], name


def test_text_from_the_catalogue_is_neutralised_in_the_bom():
    """Free text (a description) can start with anything; the BOM shows it, neutralised."""
    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    evil = '=HYPERLINK(\\"http://x\\",\\"click\\")'
    c = compile_text(text.replace("\nsite:", f'\ncatalogue:\n  devices:\n    qm9700: {{description: "{evil}"}}\nsite:', 1))
    assert c.exit_code == 0, [f.message for f in c.findings]
    artifacts, _ = render(c, ["bom"])
    rows = list(csv.DictReader(io.StringIO(artifacts["bom/bom.csv"].decode())))
    assert {r["description"] for r in rows if r["item"] == "qm9700"} == {'\'=HYPERLINK("http://x","click")'}


def test_cabling_neutralises_names_that_bypass_the_templates(small_ib):
    """Were a name ever to start with a formula character (the templates refuse it), the
    cabling list would still not carry it live: every column goes through csv_safe."""
    f = small_ib.fabric
    devices = [dataclasses.replace(d, name=f"={d.name}") if d.role == "leaf" else d for d in f.devices]
    fabric = dataclasses.replace(f, devices=devices)
    racks = [dataclasses.replace(r, name=f"@{r.name}", row=f"-{r.row}") for r in f.racks]
    fabric = dataclasses.replace(fabric, racks=racks)
    compiled = dataclasses.replace(small_ib, fabric=fabric)
    artifacts, _ = render(compiled, ["cabling"])
    for path in ("cabling/cables.csv", "cabling/links.csv"):
        data = artifacts[path]
        assert live_formulas(data) == [], path
        assert b",'=ib-leaf" in data and b",'@N01," in data and b",'-N," in data, path


def test_the_audit_finds_live_formulas_in_a_plain_csv():
    """live_formulas, which every CSV test above relies on, does find what the writer neutralises."""
    raw = b'id,label\n=1+2,"@SUM(A1)"\n-3,+1.5\n\'=x,"\tcmd"\n'
    assert live_formulas(raw) == ["=1+2", "@SUM(A1)", "\tcmd"]


_HOSTILE = ["=1", "+a", "-b", "@c", "\tx", "\rx", "a\tb", "a\nb", "a\x1fb", "a\x85b", "a\u2028b", "x\r", "", "-3", "ok"]


@pytest.mark.parametrize("bad", _HOSTILE)
@pytest.mark.parametrize("column", [0, 1, 2])
@pytest.mark.parametrize("row", [0, 3, 7])
def test_tsv_lines_in_a_block_are_tsv_line_row_by_row(bad, column, row):
    from supernodeiac.outputs.csv_safe import tsv_line, tsv_lines

    rows = [[f"r{r}", f"c{r}", f"{r}.5"] for r in range(8)]
    rows[row][column] = bad
    columns = [list(c) for c in zip(*rows, strict=True)]
    assert tsv_lines(columns) == "".join(tsv_line(r) + "\n" for r in rows)
    assert tsv_lines([[] for _ in range(3)]) == ""


@pytest.mark.parametrize("bad", [*_HOSTILE, "é", "-é", "é\tb", "é\x85", "=é", "é\u2028", "\u00a0x", "é\nb"])
@pytest.mark.parametrize("neighbour", ["ok", "ça"])
def test_a_column_is_clean_exactly_when_each_cell_is_its_own_tsv_cell(bad, neighbour):
    """cells_clean (the column test behind tsv_lines and physical.tsv) says yes only when every cell
    comes out of tsv_cell unchanged and starts with no formula character; ASCII and other text
    take different tests, so both are tried, the odd cell first, in the middle and last, in a short
    column and a long one."""
    from supernodeiac.outputs.csv_safe import FORMULA_START, cells_clean, tsv_cell

    for size, at in ((5, 0), (5, 2), (5, 4), (200, 0), (200, 117), (200, 199)):  # a long column: its distinct cells
        cells = [f"{neighbour}{k % 7}" for k in range(size)]
        cells[at] = bad
        expected = all(tsv_cell(c) == c and c[:1] not in FORMULA_START | {"=", "+", "-", "@"} for c in cells)
        assert cells_clean(cells) is expected, (cells, expected)
    assert cells_clean(["", "a", ""]) and not cells_clean(["a", "-3"])
