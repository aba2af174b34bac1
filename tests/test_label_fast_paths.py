"""The label renderer's shortcuts (issue 24) against the plain way: labels.csv and every rack's PDF
are what a ``Label`` per plug end from ``cable_rows``, sorted per rack by (U, cable ID, end) and
written row by row through the csv module, makes; a page of plain labels (one format call, sizes
in numpy) is what the label-by-label path makes of the same lines."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest
from conftest import BLUEPRINTS, compile_text
from hypothesis import given, settings
from hypothesis import strategies as st
from test_media import ONE_RACK, SPLIT

from supernodeiac.catalog.label_stock import label_stocks
from supernodeiac.facts.cable_plan import CablePlan, cable_plan
from supernodeiac.outputs import cabling, labels
from supernodeiac.outputs.base import RenderContext, Stream
from supernodeiac.outputs.cable_columns import end_table
from supernodeiac.outputs.cabling import CABLE_COLUMNS, cable_rows, label_columns, label_ends, simple_cables
from supernodeiac.outputs.csv_safe import CsvWriter
from supernodeiac.outputs.labels import (
    Label,
    _blob,
    _column_texts,
    _file_part,
    _num,
    _padded,
    _padded_all,
    _pdf_document,
    _pdf_string,
    _sheet_pdf,
    _Sheets,
    _sizes,
    _text,
    font_size,
    render_labels,
)


def _reference(ctx: RenderContext) -> dict[str, bytes]:
    stock = label_stocks()[ctx.blueprint.naming.label_stock]
    racks = ctx.fabric.racks
    c_no, c_id = CABLE_COLUMNS.index("cable_no"), CABLE_COLUMNS.index("cable_id")
    per: dict[int, list[Label]] = defaultdict(list)
    for r in cable_rows(ctx):
        for k, end in enumerate(r.ends):
            tag = "a" if k == 0 else "b" if len(r.ends) == 2 else f"leg{k}"
            name = racks[end.rack].name if end.rack >= 0 else ""
            per[end.rack].append(Label(name, end.u, r.text[c_no], r.text[c_id], tag, end.short))
    width = max(len(x.lines) for v in per.values() for x in v)
    csv = CsvWriter(["rack", "sheet", "position", "u", "cable_no", "cable_id", "end", *[f"line{i + 1}" for i in range(width)]])
    out = {}
    for i in sorted(per, key=lambda i: (racks[i].row_index, racks[i].position, racks[i].name) if i >= 0 else (-1, 0, "")):
        rack = racks[i].name if i >= 0 else ""
        held = sorted(per[i], key=lambda x: (x.u, x.cable_id, x.end))
        out[f"labels/{_file_part(rack or 'unracked')}.pdf"] = _sheet_pdf(ctx, rack, held, stock)
        for n, x in enumerate(held):
            sheet, pos = divmod(n, stock.per_sheet)
            pad = [""] * (width - len(x.lines))
            csv.writerow([rack, str(sheet + 1), str(pos + 1), str(x.u or ""), x.cable_no, x.cable_id, x.end, *x.lines, *pad])
    out["labels/labels.csv"] = csv.getvalue()
    return out


def _rendered(ctx: RenderContext) -> dict[str, bytes]:
    return {path: bytes(v) if isinstance(v, Stream) else v for path, v in render_labels(ctx).items()}


NAMINGS = [
    "",  # the defaults
    # lines wrapped at 12 characters (label line counts differ), the other stock
    "naming:\n  label_width: 12\n  label_stock: avery-l7160\n",
    # a comma in a line (the tuple form), a paren and a non-ASCII character (escaped, octal)
    'naming:\n  short_label: ["{number}, {fabric}", "at ({rack}) U{u} {device} \\u00e9 {port}"]\n',
]


# Every shipped design's cables are one link each (labels made a column at a time); these mix in
# twin-port cables and splitters (made cable by cable, cabling.label_ends).
MIXED = {
    "twin-port": ONE_RACK.format(spine_u=38, media="", catalogue=""),
    "splitter": SPLIT.format(node_rack=1, node_u=2, gap=0),
}


def _design(blueprint: str) -> str:
    return MIXED[blueprint] if blueprint in MIXED else (BLUEPRINTS / f"{blueprint}.yaml").read_text()


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize("blueprint", ["small-ib", "roce-rail-2tier", *MIXED])
def test_renderer_is_the_plain_way(blueprint: str, naming: str) -> None:
    text = _design(blueprint)
    assert "\nnaming:" not in text
    c = compile_text(text.replace("\nsite:", "\n" + naming + "site:", 1))
    assert c.fabric is not None, [f.message for f in c.findings]
    simple = simple_cables(cable_plan(c.fabric, c.catalogue))
    assert simple.any() and (blueprint not in MIXED or not simple.all())  # both ways of making labels
    assert _rendered(c.render_context()) == _reference(c.render_context())


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize("blueprint", ["small-ib", "roce-rail-2tier", *MIXED])
def test_label_columns_are_label_ends(blueprint: str, naming: str) -> None:
    """label_columns' devices and lines (columns, or wrapped lines) of the one-link cables, any
    subset of them, are label_ends' (rack, U, lines) of each end, A first."""
    c = compile_text(_design(blueprint).replace("\nsite:", "\n" + naming + "site:", 1))
    ctx = c.render_context()
    simple = simple_cables(cable_plan(c.fabric, c.catalogue))
    e = end_table(c.fabric, ctx.memo)
    for keep in (simple, simple & (np.arange(len(simple)) % 3 == 1)):
        items = np.flatnonzero(keep)
        made = list(label_columns(ctx, items))  # the A ends', then the B ends'
        got = []
        for n, k in enumerate(items.tolist()):
            ends = []
            for dev, (lines, wrapped) in made:
                d = int(dev[n])
                ends.append((e.rack_index[d], e.u_int[d], tuple(x[n] for x in lines) if wrapped is None else wrapped[n]))
            got.append((k, ends))
        assert got == list(label_ends(ctx, keep))
    assert "width: 12" not in naming or made[0][1][1] is not None  # the wrapped form made


@pytest.mark.parametrize("blueprint", ["small-ib", *MIXED])
def test_ids_out_of_plan_order_and_repeated(blueprint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cable IDs not in plan order, some equal: labels still sort by (U, cable ID, end), equal IDs'
    ends by tag across the cables, each label naming its own cable's number."""
    c = compile_text(_design(blueprint))
    real = cabling.cable_ids

    def shuffled(f, plan):  # type: ignore[no-untyped-def]
        ids = real(f, plan)
        return [ids[k - 1] if k % 3 == 1 else f"{ids[k]}~" if k % 7 == 0 else ids[k] for k in range(len(ids))]

    monkeypatch.setattr(cabling, "cable_ids", shuffled)
    monkeypatch.setattr(labels, "cable_ids", shuffled)
    made = _rendered(c.render_context())
    assert made == _reference(c.render_context())
    assert b"~," in made["labels/labels.csv"]  # the shuffled IDs are the ones used


def test_cables_on_two_cords(monkeypatch: pytest.MonkeyPatch) -> None:
    """A link on two fibre cords is two items (cord 1/2 and 2/2) of the same link: each has its
    labels (none of the shipped designs has such links)."""
    c = compile_text((BLUEPRINTS / "small-ib.yaml").read_text())
    real = cable_plan(c.fabric, c.catalogue)
    cords = np.where(np.arange(len(real)) % 3 == 0, 2, 1)
    item = np.repeat(np.arange(len(real)), cords)
    cord = np.arange(len(item)) - np.repeat(np.cumsum(cords) - cords, cords) + 1
    plan = CablePlan(real.links[real.start[:-1]][item], np.arange(len(item) + 1), cord, cords[item], real.shape[item])
    monkeypatch.setattr(cabling, "cable_plan", lambda f, cat: plan)
    monkeypatch.setattr(labels, "cable_plan", lambda f, cat: plan)
    monkeypatch.setattr(cabling, "cable_ids", lambda f, p: [f"C{k:05d}" for k in range(len(p))])
    monkeypatch.setattr(labels, "cable_ids", lambda f, p: [f"C{k:05d}" for k in range(len(p))])
    made = _rendered(c.render_context())
    assert made == _reference(c.render_context())
    assert made["labels/labels.csv"].count(b"\n") == 2 * len(plan) + 1


LINES = [
    ("AB12CD ib", "R01 U12 gpu-0001 OSFP 3 port 2", "to L01 U40 leaf-su01-01 OSFP 17"),
    ("EF34GH ib", "R01 U12 gpu-0001 OSFP 4", "to L01 U40 leaf-su01-01 OSFP 18 and a line too long for the label"),
    ("IJ", "x"),
    ("", "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"),
    ("50% {} %s {0}", "%(x)s %%"),  # the page template's placeholders are %s: a line's own are text
]


@pytest.mark.parametrize("stock_key", sorted(label_stocks()))
@pytest.mark.parametrize("count", [1, 30, 31, 95])
def test_plain_pages_are_the_label_by_label_way(stock_key: str, count: int) -> None:
    stock = label_stocks()[stock_key]
    lines = [LINES[n % len(LINES)] for n in range(count)]
    fast = _Sheets(stock).pdf("t", [_text(x) for x in lines])
    assert all(isinstance(_text(x), str) for x in lines)  # the string form: the page path
    assert fast == _Sheets(stock).pdf("t", list(lines))  # tuples: label by label, sizes by font_size


def test_sizes_in_bulk_are_font_size() -> None:
    """The numpy sizes are font_size's to the bit, over widths that cross every 0.25 pt step."""
    pick = random.Random(24)
    line = lambda: "".join(pick.choices("iIlW@ -.0aZ~m", k=pick.randrange(20, 70)))  # noqa: E731
    lines = [tuple(line() for _ in range(1 + n % 5)) for n in range(1500)]
    lines[7:12] = [("",), ("", "x"), ("x", ""), ("", "", ""), ("",)]  # empty lines and labels: no width
    for stock in label_stocks().values():
        texts = [_text(x) for x in lines]
        sizes, counts = _sizes(texts, _blob(texts), stock)
        assert sizes == [font_size(x, stock) for x in lines]
        assert counts == [len(x) for x in lines]
        assert len(set(sizes)) > 10


def _plain_document(contents: list[bytes], page: tuple[float, float], title: str) -> bytes:
    """A PDF's objects one by one, each offset read off the bytes written so far."""
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(len(contents)))
    box = f"[0 0 {_num(page[0])} {_num(page[1])}]"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(contents)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Title " + _pdf_string(title).encode("latin-1") + b" /Author (snc) /Producer (snc) >>",
    ]
    for i, data in enumerate(contents):
        resources = "/Resources << /Font << /F1 3 0 R >> >>"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox {box} {resources} /Contents {6 + 2 * i} 0 R >>".encode())
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.mark.parametrize("pages", [0, 1, 2, 7, 12])
def test_pdf_document_is_the_plain_way(pages: int) -> None:
    """The page objects formatted from one template and the offsets summed: the bytes and xref of
    writing each object and reading its offset off the output."""
    pick = random.Random(pages)
    contents = [bytes(pick.randrange(256) for _ in range(pick.randrange(0, 3000))) for _ in range(pages)]
    for page, title in (((612.0, 792.0), "t"), ((595.2756, 841.8898), "rack (A01) \\ \u00e9 labels")):
        made = _pdf_document(contents, page, title)
        assert made == _plain_document(contents, page, title)
        xref = int(made.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
        assert made[xref:].startswith(b"xref\n")
        for k, line in enumerate(made[xref:].split(b"\n")[3 : 3 + 4 + 2 * pages], 1):  # each offset at its object
            assert made[int(line[:10]) :].startswith(b"%d 0 obj\n" % k)


_HOSTILE = st.text(alphabet="ab 1-,é\t", max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=4), st.lists(st.lists(_HOSTILE, min_size=0, max_size=5), max_size=8))
def test_column_texts_of_wrapped_lines_are_each_ends_text(k: int, wrapped_lists: list[list[str]]) -> None:
    """_column_texts joins wrapped ends in C and keeps them as strings only when no line holds a
    comma and no end is without lines: each must be what _text makes of that end, the count the
    most lines."""
    wrapped = [tuple(x) for x in wrapped_lists]
    columns = [[(w[j] if j < len(w) else "") for w in wrapped] for j in range(k)]
    texts, most, same = _column_texts(columns, wrapped)
    assert texts == [_text(w) for w in wrapped]
    assert most == max(map(len, wrapped), default=0)
    assert not same


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_HOSTILE, st.lists(_HOSTILE, max_size=4).map(tuple)), max_size=10), st.integers(0, 6))
def test_padding_in_bulk_is_label_by_label(texts: list, width: int) -> None:
    """labels.csv's cells padded a rack at a time (_padded_all) are _padded's, strings or not,
    with more lines than the width too."""
    assert _padded_all(texts, width) == [_padded(x, width) for x in texts]
