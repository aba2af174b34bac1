"""What the crew builds from: cables.csv one row per physical cable (counts = the BOM's), the
cabling workbook (opened with openpyxl, converted by LibreOffice) and the label sheets (reportlab)."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from conftest import compile_text
from hypothesis import given, settings
from hypothesis import strategies as st
from test_media import ONE_RACK, SPLIT

from supernodeiac.facts.bom import bill_of_materials
from supernodeiac.facts.cable_plan import cable_numbers
from supernodeiac.pipeline import compile_file, render

openpyxl = pytest.importorskip("openpyxl")

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINTS = ["small-ib", "nebula-x128-ib", "nvl72-pod"]


def _compiled(name: str):
    c = compile_file(ROOT / "blueprints" / f"{name}.yaml")
    assert not c.errors
    return c


def _rows(files, path="cabling/cables.csv"):
    return list(csv.DictReader(io.StringIO(files[path].decode())))


@pytest.mark.parametrize("name", BLUEPRINTS)
def test_cables_csv_is_one_row_per_physical_cable(name):
    """cables.csv rows = the BOM's cable assemblies + fibre cords; connectors and cartridges are
    not rows; links.csv keeps every link; every link of a cable row is a link of links.csv."""
    c = _compiled(name)
    files, _ = render(c, ["cabling"])
    cables, links = _rows(files), _rows(files, "cabling/links.csv")
    bom = bill_of_materials(c.catalogue, c.fabric, c.blueprint)
    assert len(cables) == bom.count("cable") + bom.count("fibre")
    per_fabric = Counter(r["fabric"] for r in cables)
    for fab in bom.fabrics():
        assert per_fabric[fab] == bom.count("cable", fab) + bom.count("fibre", fab)
    assert len(links) == len(c.fabric.links)
    link_ids = {r["cable_id"] for r in links if r["kind"] == "cable"}
    used = [x for r in cables for x in r["link_ids"].split()]
    assert sorted(used) == sorted(link_ids)  # each cable link in exactly one physical cable
    assert len({r["cable_no"] for r in cables}) == len(cables)
    assert not any(r["kind"] in ("connector", "cartridge") for r in links if r["cable_id"] in set(used))


def _bom_count(c, medium: str) -> int:
    return sum(x.count for x in bill_of_materials(c.catalogue, c.fabric, c.blueprint).lines if x.item == medium)


def test_a_twin_port_dac_is_one_row_with_both_ports():
    """A leaf and a spine in one rack, joined cage for cage by MCP4Y10 twin-port DACs (test_media's
    ONE_RACK): two links per assembly, one row naming both ports at each end, one label per plug
    end, and as many rows as the BOM orders DACs."""
    c = compile_text(ONE_RACK.format(spine_u=38, media="", catalogue=""))
    assert not [x for x in c.findings if x.severity.name == "ERROR"]
    files, _ = render(c, ["cabling", "labels"])
    cables, links = _rows(files), _rows(files, "cabling/links.csv")
    bom = bill_of_materials(c.catalogue, c.fabric, c.blueprint)
    assert len(cables) == bom.count("cable") + bom.count("fibre") < len([r for r in links if r["kind"] == "cable"])
    twins = [r for r in cables if r["medium"] == "dac-2x400g"]
    assert len(twins) == _bom_count(c, "dac-2x400g") == 16
    for r in twins:
        assert r["links"] == "2" and len(r["link_ids"].split()) == 2 and not r["legs"]
        for end in "ab":
            cage = r[f"{end}_cage"]
            assert r[f"{end}_ports"] == f"{cage} port 1 + {cage} port 2"
            # the plug is named by its cage on both labels, never by one of its ports
            assert r[f"{end}_label"].split(" > ")[0].endswith("/" + cage)
        assert r["a_short_label"].split(" | ")[1].endswith(" " + r["a_cage"])
        assert r["b_short_label"].split(" | ")[2].endswith(" " + r["a_cage"])
    labels = Counter(x["cable_no"] for x in _rows(files, "labels/labels.csv"))
    assert all(labels[r["cable_no"]] == 2 for r in twins)


def test_a_splitter_is_one_row_listing_its_legs_with_a_label_per_plug_end():
    """An NDR leaf cage feeding two ConnectX-7 NICs through one MCP7Y00 1 x 800G to 2 x 400G
    splitter (test_media's SPLIT): one row per splitter, the head at A by its cage with both ports,
    each leg listed; a label on the head (naming every leg) and on each leg (naming the head's
    cage); rows = the BOM's splitters."""
    c = compile_text(SPLIT.format(node_rack=1, node_u=2, gap=0))
    files, _ = render(c, ["cabling", "labels"])
    cables, links = _rows(files), _rows(files, "cabling/links.csv")
    bom = bill_of_materials(c.catalogue, c.fabric, c.blueprint)
    assert len(cables) == bom.count("cable") + bom.count("fibre")
    splits = [r for r in cables if r["medium"] == "splitter-dac-2x400g"]
    legs_of = {x["cable_id"]: x for x in links}
    assert splits and len(splits) == _bom_count(c, "splitter-dac-2x400g")
    labels = _rows(files, "labels/labels.csv")
    line_cols = [k for k in labels[0] if k.startswith("line")]
    for r in splits:
        legs = r["legs"].split("; ")
        ids = r["link_ids"].split()
        assert len(legs) == len(ids) == int(r["links"]) == 2
        # each leg is a link from the head's cage to a NIC cage of its own
        ends = [legs_of[i] for i in ids]
        heads = {(x["b_device"], x["b_cage"]) for x in ends}
        assert heads == {(r["a_device"], r["a_cage"])}
        nics = [f"{x['a_rack']} U{x['a_u']} {x['a_device']} {x['a_physical']}" for x in ends]
        assert legs == nics and len(set(nics)) == 2
        assert r["a_ports"] == " + ".join(x["b_physical"] for x in ends) == f"{r['a_cage']} port 1 + {r['a_cage']} port 2"
        mine = [x for x in labels if x["cable_no"] == r["cable_no"]]
        assert sorted(x["end"] for x in mine) == ["a", "leg1", "leg2"]  # head + each leg
        text = {x["end"]: [x[k] for k in line_cols if x[k]] for x in mine}
        head = " ".join(text["a"])
        assert all(leg in head for leg in (n.split(" ", 1)[0] + " " + n.split(" ", 1)[1] for n in nics))
        for k, leg in enumerate(nics, 1):
            local, far = text[f"leg{k}"][1], text[f"leg{k}"][2]
            assert local == leg and far.endswith(f"{r['a_device']} {r['a_cage']}")
    assert len(labels) == sum(1 + max(1, len([x for x in r["legs"].split("; ") if x])) for r in cables)


def test_cable_numbers_are_stable_under_growth_and_unique():
    ids = [f"gpu-{i:05d}-mlx5_{j}" for i in range(4000) for j in range(8)]
    numbers = cable_numbers(ids)
    assert len(set(numbers)) == len(ids) and all(len(x) == 6 for x in numbers)
    grown = cable_numbers(ids + [f"gpu-9{i:04d}-mlx5_0" for i in range(500)])
    same = sum(a == b for a, b in zip(numbers, grown, strict=False))
    assert same >= len(ids) - 2  # a new cable changes an old number only on a hash clash
    assert cable_numbers(ids) == numbers


def test_cable_numbers_fill_every_number_and_refuse_one_more():
    """At most 32^length cables get numbers: the last one free is found, one more is an error, not a hang."""
    ids = [f"c{i}" for i in range(32)]
    assert sorted(cable_numbers(ids, length=1)) == sorted("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    with pytest.raises(ValueError, match="33 cables, more than the 32 1-letter numbers"):
        cable_numbers([*ids, "c32"], length=1)


def _plain_cable_numbers(ids: list[str], length: int) -> list[str]:
    """cable_numbers the plain way: an int per hash, the clashes found by one lexsort of (value,
    ID rank), the letters sliced out of one text."""
    import numpy as np

    from supernodeiac.facts.cable_plan import _ALPHABET, _hash

    mask = (1 << (5 * length)) - 1
    values = np.array([_hash(x) & mask for x in ids], dtype=np.int64)
    if len(values):
        order = np.lexsort((np.array(ids, dtype=object).argsort(kind="stable").argsort(), values))
        sv = values[order]
        clash = order[np.concatenate(([False], sv[1:] == sv[:-1]))]
        taken = set(values.tolist())
        for i in sorted(clash.tolist(), key=ids.__getitem__):
            salt = 1
            while (v := _hash(f"{ids[i]}#{salt}") & mask) in taken:
                salt += 1
            taken.add(v)
            values[i] = v
    text = "".join(_ALPHABET[(v >> (5 * (length - 1 - k))) & 31] for v in values.tolist() for k in range(length))
    return [text[k : k + length] for k in range(0, len(text), length)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab-1é", max_size=6), max_size=120), st.sampled_from([2, 3, 6]))
def test_cable_numbers_are_the_plain_ways(ids: list[str], length: int) -> None:
    """The digests read at once, the clashes sorted alone and the letters as fixed-width texts
    give the plain way's numbers; two letters (1,024 numbers) make clashes, repeated IDs too."""
    assert cable_numbers(ids, length) == _plain_cable_numbers(ids, length)
    many = [f"gpu-{i:04d}-{ids[i % len(ids)] if ids else ''}" for i in range(600)]
    assert cable_numbers(many, 2) == _plain_cable_numbers(many, 2)


@pytest.fixture(scope="module")
def small_ib():
    c = _compiled("small-ib")
    files, _ = render(c, ["cabling", "workbook", "labels", "bom"])
    return c, files


def test_workbook_pull_lists_hold_exactly_the_cables_of_each_rack_in_u_order(small_ib, tmp_path):
    c, files = small_ib
    cables = _rows(files)
    data = files["cabling/cabling.xlsx"]
    # No live formula: no cell element carries <f> (what Excel would run).
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/"):
                assert b"<f>" not in z.read(name) and b"<f " not in z.read(name), name
    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    sheets = book.sheetnames
    assert sheets[0] == "Summary"
    racks_with_ends: dict[str, set[str]] = {}
    for r in cables:
        ends = {r["a_rack"], r["b_rack"]} | {x.split(" ")[0] for x in r["legs"].split("; ") if x}
        for rack in ends - {""}:
            racks_with_ends.setdefault(rack, set()).add(r["cable_id"])
    rack_sheets = [s for s in sheets if s.startswith("rack ")]
    assert sorted(s[5:] for s in rack_sheets) == sorted(racks_with_ends)
    for s in rack_sheets:
        rows = list(book[s].iter_rows(values_only=True))
        header, body = rows[0], rows[1:]
        assert header[0] == "far_location"
        ids = [x[header.index("cable_id")] for x in body]
        assert sorted(ids) == sorted(racks_with_ends[s[5:]]) and len(ids) == len(set(ids))
        us = [x[header.index("u")] or 0 for x in body]
        assert us == sorted(us)
    # Fabric sheets: every cable once; the BOM's counts.
    bom = bill_of_materials(c.catalogue, c.fabric, c.blueprint)
    fabric_rows = sum(len(list(book[s].iter_rows())) - 1 for s in sheets if s.startswith("fabric "))
    assert fabric_rows == len(cables) == bom.count("cable") + bom.count("fibre")
    ws = book["Summary"]
    values = [row for row in ws.iter_rows(values_only=True) if row[0] == "cables in this workbook"]
    assert values and values[0][2] == len(cables)


def test_past_the_row_limit_one_workbook_per_row_of_racks(small_ib, monkeypatch):
    """Past ROW_LIMIT cables: cabling/rows/<row>.xlsx per row of racks, no single workbook; each
    holds the pull lists of its row's racks (the same as the single workbook's) and counts the
    cables with an end in the row; its summary says it is one row of a design split by rows."""
    from supernodeiac.outputs import workbook as workbook_mod
    from supernodeiac.outputs.base import RenderContext

    c, files = small_ib
    cables = _rows(files)
    monkeypatch.setattr(workbook_mod, "ROW_LIMIT", len(cables) - 1)
    out = workbook_mod.render_workbook(RenderContext(c.blueprint, c.catalogue, c.fabric))
    racks = {r.name: r.row for r in c.fabric.racks}
    assert sorted(out) == sorted(f"cabling/rows/{row}.xlsx" for row in set(racks.values()))
    whole = openpyxl.load_workbook(io.BytesIO(files["cabling/cabling.xlsx"]), read_only=True)
    for path, data in out.items():
        row = path.rsplit("/", 1)[1].removesuffix(".xlsx")
        book = openpyxl.load_workbook(io.BytesIO(bytes(data)), read_only=True)
        assert not [s for s in book.sheetnames if s.startswith("fabric ")]
        mine = [s for s in whole.sheetnames if s.startswith("rack ") and racks[s[5:]] == row]
        assert [s for s in book.sheetnames if s.startswith("rack ")] == mine
        for s in mine:
            assert list(book[s].iter_rows(values_only=True)) == list(whole[s].iter_rows(values_only=True))
        ends_here = [r for r in cables if {racks.get(r["a_rack"]), racks.get(r["b_rack"])} & {row}]
        summary = list(book["Summary"].iter_rows(values_only=True))
        assert [x[2] for x in summary if x[0] == "cables in this workbook"] == [len(ends_here)]
        assert any(x[0] and x[0].startswith(f"row {row}: ") and "one workbook per row of racks" in x[0] for x in summary)


@pytest.mark.parametrize("cables_first", [True, False])
def test_cables_csv_and_the_row_workbooks_rendered_together_are_each_alone(small_ib, monkeypatch, cables_first):
    """Past ROW_LIMIT the row workbooks make their pull lists a column at a time, a row of
    racks each, without cables.csv's pass (which makes its text only): the bytes are those of
    each rendered alone, whichever is written first, and the memo holds no PullCables."""
    from supernodeiac.outputs import cabling as cabling_mod
    from supernodeiac.outputs import render_all
    from supernodeiac.outputs import workbook as workbook_mod
    from supernodeiac.outputs.base import RenderContext

    c, files = small_ib
    limit = len(_rows(files)) - 1
    monkeypatch.setattr(workbook_mod, "ROW_LIMIT", limit)
    monkeypatch.setattr(cabling_mod, "ROW_LIMIT", limit)
    alone = {}
    for name in ("cabling", "workbook"):
        made, _ = render_all(RenderContext(c.blueprint, c.catalogue, c.fabric), [name])
        alone.update(made)
    passes = []
    real = cabling_mod._cable_blocks

    def counted(ctx):
        passes.append("text")
        return real(ctx)

    monkeypatch.setattr(cabling_mod, "_cable_blocks", counted)
    ctx = RenderContext(c.blueprint, c.catalogue, c.fabric)
    made, _ = render_all(ctx, ["cabling", "workbook"], stream=True)
    order = sorted(made, key=lambda p: (p != "cabling/cables.csv") == cables_first)
    both = {path: bytes(made[path]) for path in order}
    assert both == alone
    assert any(p.startswith("cabling/rows/") for p in both) and "cabling/cabling.xlsx" not in both
    assert passes == ["text"]
    held = [v for v in ctx.memo.values() if isinstance(v, list) and v and isinstance(v[0], cabling_mod.PullCable)]
    assert held == [] and "pull_cables" not in ctx.memo  # no PullCables held for the rest of the render


def test_workbook_prints_and_filters(small_ib):
    _, files = small_ib
    book = openpyxl.load_workbook(io.BytesIO(files["cabling/cabling.xlsx"]))
    ws = book[[s for s in book.sheetnames if s.startswith("rack ")][0]]
    assert ws.freeze_panes == "A2" and ws.auto_filter.ref
    assert ws.page_setup.orientation == "landscape" and ws.print_title_rows == "$1:$1"
    assert ws.column_dimensions["A"].width > 20
    assert ws["A2"].fill.fgColor.rgb not in (None, "00000000")
    # The Summary's dimension (what a read-only reader sizes it by) is its cells': A-C, the last line last.
    summary = openpyxl.load_workbook(io.BytesIO(files["cabling/cabling.xlsx"]), read_only=True)["Summary"]
    assert summary.calculate_dimension() == f"A1:C{summary.max_row}"
    assert list(summary.iter_rows(values_only=True))[-1][0].startswith("far_location is")


def test_libreoffice_converts_the_workbook(small_ib, tmp_path, monkeypatch):
    """The single workbook and a per-row one (past ROW_LIMIT) both convert."""
    from supernodeiac.outputs import workbook as workbook_mod
    from supernodeiac.outputs.base import RenderContext

    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) is not installed: apt-get install -y libreoffice-calc")
    c, files = small_ib
    path = tmp_path / "cabling.xlsx"
    path.write_bytes(files["cabling/cabling.xlsx"])
    monkeypatch.setattr(workbook_mod, "ROW_LIMIT", len(_rows(files)) - 1)
    rows = workbook_mod.render_workbook(RenderContext(c.blueprint, c.catalogue, c.fabric))
    first = sorted(rows)[0]
    row_path = tmp_path / "row.xlsx"
    row_path.write_bytes(bytes(rows[first]))
    profile = tmp_path / "profile"
    run = subprocess.run(
        [
            soffice,
            f"-env:UserInstallation=file://{profile}",
            "--headless",
            "--convert-to",
            "csv",
            "--outdir",
            str(tmp_path),
            str(path),
            str(row_path),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    out = (tmp_path / "cabling.csv").read_text(errors="replace")
    assert "cabling workbook" in out  # the first sheet (Summary), converted
    row = first.rsplit("/", 1)[1].removesuffix(".xlsx")
    assert f"row {row}: " in (tmp_path / "row.csv").read_text(errors="replace")


def test_label_sheets_hold_two_labels_per_cable_and_every_label_fits_its_stock(small_ib):
    from reportlab.lib.units import mm
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from supernodeiac.catalog.label_stock import label_stocks
    from supernodeiac.outputs.labels import FONT, LEADING, font_size

    c, files = small_ib
    cables = _rows(files)
    labels = _rows(files, "labels/labels.csv")
    ends = sum(2 + max(0, len([x for x in r["legs"].split("; ") if x]) - 1) for r in cables)
    assert len(labels) == ends == 2 * len(cables)  # small-ib has no splitters
    stock = label_stocks()[c.blueprint.naming.label_stock]
    width = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
    height = (stock.label_mm[1] - 2 * stock.padding_mm) * mm
    line_cols = [k for k in labels[0] if k.startswith("line")]
    for x in labels:
        lines = tuple(x[k] for k in line_cols if x[k])
        size = font_size(lines, stock)
        assert size >= 6  # legible
        assert max(stringWidth(t, FONT, size) for t in lines) <= width
        assert len(lines) * size * LEADING <= height
        assert all(len(t) <= c.blueprint.naming.label_width for t in lines)
    # One PDF per rack (pypdf reads it), its pages the sheets the CSV numbers; each label's lines
    # the text shown on its sheet, in the CSV's order.
    import io

    import pypdf

    per_rack = Counter(x["rack"] for x in labels)
    for rack, n in per_rack.items():
        reader = pypdf.PdfReader(io.BytesIO(bytes(files[f"labels/{rack}.pdf"])), strict=True)
        assert len(reader.pages) == -(-n // stock.per_sheet)
        for sheet, page in enumerate(reader.pages, 1):
            shown: list[str] = []
            page.extract_text(visitor_text=lambda t, *_, got=shown: got.append(t.strip()) if t.strip() else None)
            want = [t for x in labels if x["rack"] == rack and x["sheet"] == str(sheet) for k in line_cols if (t := x[k])]
            assert shown == want, (rack, sheet)


def test_crew_outputs_are_deterministic(small_ib):
    c, files = small_ib
    again, _ = render(c, ["cabling", "workbook", "labels"])
    for path in ("cabling/cables.csv", "cabling/cabling.xlsx", "labels/labels.csv", "labels/A01.pdf"):
        assert bytes(again[path]) == bytes(files[path]), path


def test_a_wrapped_label_keeps_a_port_name_on_one_line():
    """40 characters a line: "… OSFP 17 port 1" broken before "port", never before a lone "1"; a
    line with no room to move the break still fits; nothing wider than the width."""
    from supernodeiac.outputs.cabling import _wrapped

    line = "to NL03 U12 leaf-su02-07 OSFP 17 port 1"  # 39: fits as it is
    assert _wrapped([line], 40) == (line,)
    long = "to NL03 U12 leaf-su002-0007 OSFP 17 port 1"  # 42
    assert _wrapped([long], 40) == ("to NL03 U12 leaf-su002-0007 OSFP 17", "port 1")
    assert _wrapped(["abcdefghij 1"], 10) == ("abcdefghij", "1")  # no earlier space: the break stays
    for text in (long, "x" * 90, "a b " * 30):
        assert all(len(x) <= 40 for x in _wrapped([text], 40))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=4).flatmap(
        lambda k: st.lists(st.lists(st.text(alphabet="ab 1-", max_size=30), min_size=k, max_size=k), max_size=6).map(
            lambda ends: (k, ends)
        )
    ),
    st.integers(min_value=1, max_value=12),
)
def test_label_lines_wrapped_a_column_at_a_time_are_each_ends_own(case, width):
    """ShortLabels breaks a column of lines at once (wrapped_ends); each end must read what the
    end-by-end _wrapped gives, with a column left whole only where no line of it is too wide."""
    from supernodeiac.outputs.cabling import _wrapped, wrapped_ends

    k, ends = case
    columns = [[e[j] for e in ends] for j in range(k)]
    wide = [max(map(len, c), default=0) > width for c in columns]
    want = [_wrapped(list(e), width) for e in ends] if k else []
    assert wrapped_ends(columns, wide, width) == want
    assert wrapped_ends(columns, [True] * k, width) == want


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab 1-\t\x1c\x85\xa0é\x00,", max_size=40),
            # many lines of one shape, differing in a character (a column's usual content)
            st.tuples(st.sampled_from(["to L01 U2 leaf-", "R00101 U12 gpu-", "x" * 45, "a b " * 6]), st.integers(0, 99)).map(
                lambda t: f"{t[0]}{t[1]:02d} OSFP 1 port 1"
            ),
        ),
        max_size=12,
    ),
    st.integers(min_value=1, max_value=40),
)
def test_a_column_broken_per_shape_is_line_by_line(column: list[str], width: int) -> None:
    """broken_column breaks a column's lines by the cuts of their shape (spaces, other whitespace,
    the rest): each must be _broken's, for hostile lines (tabs, NUL, non-ASCII spaces, lone short
    words at the end, no space at all) and for many lines of one shape."""
    from supernodeiac.outputs import cabling
    from supernodeiac.outputs.cabling import _broken, broken_column

    want = [_broken(x, width) for x in column]
    joined = [cabling.LINE_JOIN.join(x) for x in want]  # what the CSV cells and pull lists take
    assert broken_column(column, width) == want
    assert broken_column(column, width, joined=True) == joined
    block = cabling._BROKEN_BLOCK
    try:
        cabling._BROKEN_BLOCK = 3  # several blocks, ASCII or not, sharing the shapes' cuts
        assert broken_column(column, width) == want
        assert broken_column(column, width, joined=True) == joined
    finally:
        cabling._BROKEN_BLOCK = block
