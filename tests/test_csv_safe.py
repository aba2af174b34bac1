"""No CSV cell snc writes starts with a formula character unless it is neutralised: the shared
writer (render/csv_safe.py), its fast path, and every CSV of every shipped blueprint."""

from __future__ import annotations

import csv
import dataclasses
import io

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import compile_file, render
from supernodeiac.render.csv_safe import FORMULA_START, CsvWriter, safe_cell

SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))


def _unsafe_cells(data: bytes) -> list[str]:
    """Cells a spreadsheet would run: text starting with = + - @ tab or CR that is not a number."""
    bad = []
    for row in csv.reader(io.StringIO(data.decode(), newline="")):
        for cell in row:
            if cell[:1] in FORMULA_START:
                try:
                    float(cell)
                except ValueError:
                    bad.append(cell)
    return bad


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
]


def test_the_fast_path_writes_what_the_csv_module_writes_for_safe_cells():
    fast = CsvWriter(["h1", "h2", "h3"])
    fast.text_rows([list(r) for r in ROWS])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["h1", "h2", "h3"])
    w.writerows([[safe_cell(c) for c in r] for r in ROWS])
    assert fast.getvalue() == buf.getvalue().encode()
    assert _unsafe_cells(fast.getvalue()) == []


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_no_rendered_csv_cell_is_a_formula(path):
    compiled = compile_file(str(path))
    artifacts, _ = render(compiled)
    csvs = {name: data for name, data in artifacts.items() if name.endswith(".csv")}
    assert csvs
    for name, data in csvs.items():
        assert _unsafe_cells(data) == [], name


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
    data = artifacts["cabling/cables.csv"]
    assert _unsafe_cells(data) == []
    assert b",'=ib-leaf" in data and b",'@N01," in data and b",'-N," in data
