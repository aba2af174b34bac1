"""`snc diff`'s fast path: the per-link tables (cabling lists, p2p sheets) rendered with only the
rows that may differ (compare/rows.py), the per-row and per-rack files (workbooks, elevation
sheets, label sheets) of the rows and racks that may differ, proven to give the report that
rendering them whole gives."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections import Counter

import pytest
from conftest import compile_text
from test_diff import ROCE, SMALL, UFM_AT_20, UFM_AT_30, _one_more_su, _spines_one_rack_on

from supernodeiac.compare import diff
from supernodeiac.compare.report import to_json, to_markdown, to_text
from supernodeiac.compare.rows import select
from supernodeiac.outputs import opensm, render_all
from supernodeiac.outputs.base import SAME_PREFIX, SUBSETS, Sized

TABLES = ["acceptance", "cabling", "netbox", "opensm", "p2p"]
PINNED = SMALL.replace("    rail_optimized: true\n", "    rail_optimized: true\n    media: {tiers: {leaf-spine: {pin: dr}}}\n")
RENAMED = SMALL.replace("  - name: ufm\n", "  - name: fm\n").replace("      - group: ufm\n", "      - group: fm\n")
NEW_IDS = SMALL.replace("site:\n", "naming:\n  cable_id: '{a}-{a_port}-{b}-{b_port}'\n\nsite:\n", 1)
# Row N's racks renamed X01, X02 (every network device with them): racks on one side only.
ROW_RENAMED = SMALL.replace("{name: N, racks: 2}", "{name: X, racks: 2}").replace("row: N,", "row: X,")
# An empty row C before row N: row N's racks move down the Fabric's rack list (other indices).
ROW_BEFORE = SMALL.replace("    - {name: N, racks: 2}", "    - {name: C, racks: 1}\n    - {name: N, racks: 2}")
# The UFM appliances' names long enough that their labels take more lines (labels.csv's width).
LONG_NAMES = RENAMED.replace("  - name: fm\n", "  - name: fabric-manager-appliance-unit\n").replace(
    "      - group: fm\n", "      - group: fabric-manager-appliance-unit\n"
)

# small-ib with its leaves at U10 (room below for the spines), and with a second scalable unit:
# 16 more nodes in rack A05-A08, their 8 leaves in N02 and more spines (N03).
SMALL_U10 = SMALL.replace("leaf: {row: N, per_rack: 8, first_u: 2}", "leaf: {row: N, per_rack: 8, first_u: 10}")
SMALL_2SU = (
    SMALL_U10.replace("{name: A, racks: 4, planned_racks: 8,", "{name: A, racks: 8, planned_racks: 8,")
    .replace("{name: N, racks: 2}", "{name: N, racks: 3}")
    .replace("    model: hgx-h100\n    count: 16\n", "    model: hgx-h100\n    count: 32\n")
)

# A storage node's entry first among the nodes: every later entry's HCA GUIDs are made from
# another entry position (facts/guid_plan), the devices and cables of the others the same.
STORE = "  - {name: store, model: storage-node, count: 1, placement: {row: N, first_rack: 1, per_rack: 1, first_u: 30}}\n"
ENTRY_FIRST = SMALL.replace("nodes:\n", "nodes:\n" + STORE, 1)

PAIRS = {
    "one more scalable unit": (ROCE, _one_more_su(ROCE)),
    "one more InfiniBand scalable unit": (SMALL_U10, SMALL_2SU),
    "a scalable unit less": (_one_more_su(ROCE), ROCE),
    "two appliances move up their rack": (SMALL, SMALL.replace(UFM_AT_20, UFM_AT_30)),
    "leaf-spine optics pinned": (SMALL, PINNED),
    "spines one rack on": (SMALL, _spines_one_rack_on()),
    "a group renamed": (SMALL, RENAMED),
    "other cable IDs (whole tables)": (SMALL, NEW_IDS),
    "a row's racks renamed": (SMALL, ROW_RENAMED),
    "longer names, longer labels": (SMALL, LONG_NAMES),
    "a row inserted before another": (SMALL, ROW_BEFORE),
    "no change": (SMALL, SMALL),
    "a node entry first": (SMALL, ENTRY_FIRST),
}


@pytest.fixture(scope="module")
def compiled():
    cache: dict[str, object] = {}

    def get(text: str):
        if text not in cache:
            cache[text] = compile_text(text, f"bp{len(cache)}.yaml")
        return cache[text]

    return get


def _reports(d) -> tuple:
    return (json.loads(to_json(d)), to_text(d, limit=None), to_markdown(d))


@pytest.mark.parametrize("pair", list(PAIRS))
def test_the_fast_path_gives_the_report_of_whole_tables(pair, compiled):
    old, new = (compiled(t) for t in PAIRS[pair])
    fast, whole = diff(old, new, only=TABLES), diff(old, new, only=TABLES, fast=False)
    assert _reports(fast) == _reports(whole)
    assert fast.artifacts is not None and whole.artifacts is not None
    assert [f.as_dict() for f in fast.artifacts.files] == [f.as_dict() for f in whole.artifacts.files]
    assert fast.artifacts.unchanged == whole.artifacts.unchanged
    if pair == "no change":
        assert not fast.artifacts.files and fast.artifacts.unchanged > 0


@pytest.mark.parametrize("pair", [p for p in PAIRS if "whole" not in p])
def test_the_rows_left_out_are_the_same_bytes_on_both_sides(pair, compiled):
    """What the subset render leaves out of each table is the same lines on both sides (so the
    lines on one side only, all the comparison reads, are those of the whole tables), and what
    it keeps is lines of the whole table."""
    old, new = (compiled(t) for t in PAIRS[pair])
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    for name in TABLES:
        whole_o, _ = render_all(old.render_context(), [name])
        whole_n, _ = render_all(new.render_context(), [name])
        part_o = {p: bytes(x) for p, x in SUBSETS.get(name)(old.render_context(), sel.old).items()}
        part_n = {p: bytes(x) for p, x in SUBSETS.get(name)(new.render_context(), sel.new).items()}
        # A file a subset form leaves out as the same on both sides (SAME_PREFIX): the same there.
        same = {p.removeprefix(SAME_PREFIX) for p in part_o if p.startswith(SAME_PREFIX)}
        assert same == {p.removeprefix(SAME_PREFIX) for p in part_n if p.startswith(SAME_PREFIX)}
        for path in same:
            assert whole_o.pop(path) == whole_n.pop(path), path
            del part_o[SAME_PREFIX + path], part_n[SAME_PREFIX + path]
        assert set(part_o) == set(whole_o) and set(part_n) == set(whole_n)
        for path in set(whole_o) & set(whole_n):
            lo, ln = Counter(whole_o[path].splitlines()), Counter(whole_n[path].splitlines())
            ko, kn = Counter(part_o[path].splitlines()), Counter(part_n[path].splitlines())
            assert not ko - lo and not kn - ln, path  # kept lines are lines of the whole table
            assert lo - ko == ln - kn, path  # left-out lines: the same on both sides
            assert lo - ln <= ko and ln - lo <= kn, path  # every line on one side only is kept


@pytest.mark.parametrize("pair", [p for p in PAIRS if "whole" not in p])
def test_perftest_lines_the_same_on_both_sides_are_left_out(pair, compiled):
    """perftest.tsv (sorted by its own columns) in the diff's order, both sides rendered and then
    made: each side leaves out the lines of the tests the other side has the same, the same lines
    on both sides, and keeps every line on one side only; RoCE (addresses per test) is whole."""
    old, new = (compiled(t) for t in PAIRS[pair])
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    sides = [SUBSETS.get("acceptance")(c.render_context(), s) for c, s in ((old, sel.old), (new, sel.new))]
    made = [{p: bytes(x) for p, x in side.items()} for side in sides]  # after both rendered, as snc diff makes them
    whole = [render_all(c.render_context(), ["acceptance"])[0] for c in (old, new)]
    paths = [p for p in set(whole[0]) & set(whole[1]) if p.endswith("perftest.tsv")]
    assert paths
    left = 0
    for path in paths:
        (lo, ln), (ko, kn) = ([Counter(x[path].splitlines()) for x in pair_] for pair_ in (whole, made))
        assert not ko - lo and not kn - ln and lo - ko == ln - kn, path
        assert lo - ln <= ko and ln - lo <= kn, path
        for w, m in zip(whole, made, strict=True):  # the lines kept in the whole file's order
            kept = set(m[path].splitlines())
            assert m[path].splitlines() == [x for x in w[path].splitlines() if x in kept]
        left += sum((lo - ko).values())
    if pair in ("one more scalable unit", "a scalable unit less"):
        assert left == 0  # RoCE: whole
    elif pair not in ("one more InfiniBand scalable unit", "a row's racks renamed"):  # (there every test moves)
        assert left > 0
    # Made before the other side's render (no keys there yet): whole on both sides.
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    first = {p: bytes(x) for p, x in SUBSETS.get("acceptance")(old.render_context(), sel.old).items()}
    second = {p: bytes(x) for p, x in SUBSETS.get("acceptance")(new.render_context(), sel.new).items()}
    for path in paths:
        assert (first[path], second[path]) == (whole[0][path], whole[1][path])


def test_only_the_changed_rows_are_rendered(compiled):
    # one more SU: the new side's added links alone; nothing of the old side
    old, new = compiled(ROCE), compiled(_one_more_su(ROCE))
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    added = len(new.fabric.links) - len(old.fabric.links)
    assert (int(sel.old.links.sum()), int(sel.new.links.sum())) == (0, added) == (0, 1132)
    assert int(sel.old.cables.sum()) == 0 and 0 < int(sel.new.cables.sum()) <= added
    # two appliances move up their rack: their six cables (BMC and two IB ports each), both sides
    old, new = compiled(SMALL), compiled(SMALL.replace(UFM_AT_20, UFM_AT_30))
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    ids = {f"ufm-000{i}-{p}" for i in (1, 2) for p in ("bmc", "ib0", "ib1")}
    for side, c in ((sel.old, old), (sel.new, new)):
        kept = {c.fabric.links.ids()[i] for i in side.links.nonzero()[0].tolist()}
        assert kept == ids
        assert int(side.cables.sum()) == 6
    # a change every row reads (the cable ID template): no selection, the tables whole
    assert select(compiled(SMALL).render_context(), compiled(NEW_IDS).render_context()) is None


def test_the_whole_report_is_the_same_with_every_renderer(compiled):
    """Every renderer, not only the tables: the fast diff's report is the whole-render one."""
    old, new = compiled(SMALL), compiled(SMALL.replace(UFM_AT_20, UFM_AT_30))
    fast, whole = diff(old, new), diff(old, new, fast=False)
    assert _reports(fast) == _reports(whole)
    paths = {f.path for f in fast.artifacts.files}
    assert {"cabling/cables.csv", "cabling/links.csv"} <= paths


@pytest.mark.parametrize("pair", ["one more scalable unit", "two appliances move up their rack", "spines one rack on"])
def test_per_row_workbooks_of_untouched_rows_are_not_made(pair, compiled, monkeypatch):
    """Past ROW_LIMIT cables (lowered here to reach it on a small design) one workbook per row of
    racks: the fast diff makes only those of rows where a cable may differ, with the same report."""
    from supernodeiac.outputs import workbook

    monkeypatch.setattr(workbook, "ROW_LIMIT", 10)
    old, new = (compiled(t) for t in PAIRS[pair])
    fast, whole = diff(old, new, only=["workbook"]), diff(old, new, only=["workbook"], fast=False)
    assert _reports(fast) == _reports(whole)
    assert whole.artifacts.files and all(f.path.startswith("cabling/rows/") for f in whole.artifacts.files)
    sel = select(old.render_context(), new.render_context())
    assert sel is not None and sel.new.hall_rows is not None
    made = {p for p in SUBSETS.get("workbook")(new.render_context(), sel.new) if not p.startswith("same:")}
    rows = {r.row for r in new.fabric.racks}
    # the rows made are those whose workbook changed, and fewer than all
    assert {f.path for f in whole.artifacts.files if f.status != "removed"} <= made
    assert len(made) < len(rows) or pair == "spines one rack on"


@pytest.mark.parametrize("pair", list(PAIRS))
def test_per_row_workbooks_take_the_other_sides_sheets_of_untouched_racks(pair, compiled, monkeypatch):
    """Past ROW_LIMIT (lowered), the side made second takes from the first the pull-list sheets
    of the racks where no cable of either side may differ, as deflated parts, and its workbooks
    are the bytes of the whole render's, as the first side's are."""
    from supernodeiac.outputs import workbook

    monkeypatch.setattr(workbook, "ROW_LIMIT", 10)
    old, new = (compiled(t) for t in PAIRS[pair])
    co, cn = old.render_context(), new.render_context()
    sel = select(co, cn)
    whole = [{p: bytes(v) for p, v in render_all(c.render_context(), ["workbook"])[0].items()} for c in (old, new)]
    if sel is None:  # other cable IDs: nothing known the same, the diff renders whole
        assert pair == "other cable IDs (whole tables)"
        return
    made: list[int] = []
    table = workbook._Xlsx.table

    def counted(self, *args):
        made.append(1)
        return table(self, *args)

    monkeypatch.setattr(workbook._Xlsx, "table", counted)
    sides = [SUBSETS.get("workbook")(c, s) for c, s in ((co, sel.old), (cn, sel.new))]
    taken = 0
    for path in sorted(set(sides[0]) | set(sides[1])):
        for n, files in enumerate(sides):
            if path.startswith(SAME_PREFIX) or path not in files:
                continue
            made.clear()
            data = bytes(files[path])
            assert data == whole[n][path]
            if n == 1:  # the second side: its sheets made plus those taken are all of the workbook's
                with zipfile.ZipFile(io.BytesIO(data)) as z:
                    sheets = sum(1 for x in z.namelist() if x.startswith("xl/worksheets/")) - 1  # the summary
                taken += sheets - len(made)
    # Each taken once: what is left is a row's whose workbook is on one side only.
    left = {k.removeprefix("workbook_sheets/") for k in sel.old.shared if k.startswith("workbook_sheets/")}
    assert not {f"cabling/rows/{r}.xlsx" for r in left} & set(sides[0]) & set(sides[1]), (pair, left)
    if pair in ("one more scalable unit", "one more InfiniBand scalable unit", "a scalable unit less"):
        assert taken > 0
    if pair == "no change":
        assert taken == 0  # no row of racks whose workbook may differ: none made


@pytest.mark.parametrize("pair", list(PAIRS))
def test_elevation_sheets_of_untouched_rows_are_not_made(pair, compiled):
    """The elevation's per-row SVG sheets and PDFs: made only for rows of racks where a device,
    a link end, the racks or the budget may differ, with the report of the whole render."""
    old, new = (compiled(t) for t in PAIRS[pair])
    fast, whole = diff(old, new, only=["elevation"]), diff(old, new, only=["elevation"], fast=False)
    assert _reports(fast) == _reports(whole)
    assert [f.as_dict() for f in fast.artifacts.files] == [f.as_dict() for f in whole.artifacts.files]
    sel = select(old.render_context(), new.render_context())
    if sel is None:
        return
    out = SUBSETS.get("elevation")(new.render_context(), sel.new)
    made = {p for p in out if not p.startswith("same:")}
    changed = {f.path for f in whole.artifacts.files if f.status != "removed"}
    assert changed <= made
    if pair in ("two appliances move up their rack", "leaf-spine optics pinned", "no change"):
        assert any(p.startswith("same:elevation/") for p in out)  # some rows are left out


# The racks whose label sheets the fast diff makes, per pair (None: every rack's, the whole output).
LABEL_RACKS = {
    "two appliances move up their rack": {"N01", "N02"},  # the appliances' and their switches' racks
    "spines one rack on": {"N01", "N02", "N03"},
    "a group renamed": {"N01", "N02"},
    "a row's racks renamed": {"N01", "N02", "X01", "X02", "A01", "A02", "A03", "A04"},  # A: cables to row N
    "other cable IDs (whole tables)": None,
    "longer names, longer labels": None,  # labels.csv gets another line cell: its header differs
    "no change": set(),
}


@pytest.mark.parametrize("pair", list(PAIRS))
def test_label_sheets_of_untouched_racks_are_not_made(pair, compiled):
    """The label PDFs and labels.csv: made only for racks where a cable that may differ has a
    label (or that are on one side only), with the report of the whole render."""
    old, new = (compiled(t) for t in PAIRS[pair])
    fast, whole = diff(old, new, only=["labels"]), diff(old, new, only=["labels"], fast=False)
    assert _reports(fast) == _reports(whole)
    assert [f.as_dict() for f in fast.artifacts.files] == [f.as_dict() for f in whole.artifacts.files]
    assert fast.artifacts.unchanged == whole.artifacts.unchanged
    sel = select(old.render_context(), new.render_context())
    assert sel is not None or pair == "other cable IDs (whole tables)"
    if pair in LABEL_RACKS:
        assert (sel.new.racks if sel else None) == LABEL_RACKS[pair]
    if sel is None or sel.new.racks is None:
        return
    assert sel.old.racks == sel.new.racks
    changed = {f.path for f in whole.artifacts.files}
    for c, side in ((old, sel.old), (new, sel.new)):
        whole_files, _ = render_all(c.render_context(), ["labels"])
        part = {p: bytes(x) for p, x in SUBSETS.get("labels")(c.render_context(), side).items()}
        made = {p for p in part if not p.startswith("same:")}
        same = {p.removeprefix("same:") for p in part if p.startswith("same:")}
        assert not made & same and made | same == set(whole_files)
        assert {p for p in changed if p in whole_files} <= made
        assert same == {f"labels/{r.name}.pdf" for r in c.fabric.racks if r.name not in side.racks} & set(whole_files)
        for p in made - {"labels/labels.csv"}:
            assert part[p] == whole_files[p], p  # a rack's sheets are those of the whole render
    if pair in ("two appliances move up their rack", "a group renamed", "no change"):
        assert any(p.startswith("same:labels/") for p in SUBSETS.get("labels")(new.render_context(), sel.new))


@pytest.mark.parametrize("pair", [p for p in LABEL_RACKS if LABEL_RACKS[p] is not None])
def test_the_label_rows_left_out_are_the_same_on_both_sides(pair, compiled):
    """labels.csv's subset: the rows of the racks made, each a row of the whole table but for the
    empty line cells past the longest label made (the same number on both sides); the rows left
    out are the same lines on both sides, and every line on one side only is made; the PDFs left
    out are the same bytes on both sides."""
    old, new = (compiled(t) for t in PAIRS[pair])
    sel = select(old.render_context(), new.render_context())
    assert sel is not None and sel.new.racks is not None
    whole = [render_all(c.render_context(), ["labels"])[0] for c in (old, new)]
    parts = [SUBSETS.get("labels")(c.render_context(), s) for c, s in ((old, sel.old), (new, sel.new))]
    for p in parts[0]:
        if p.startswith("same:"):
            assert whole[0][p.removeprefix("same:")] == whole[1][p.removeprefix("same:")]
    tables = [w["labels/labels.csv"].splitlines() for w in whole]
    made = [bytes(x["labels/labels.csv"]).splitlines() for x in parts]
    assert tables[0][0] == tables[1][0] and made[0][0] == made[1][0]
    cells, width = made[0][0].count(b",") - 6, tables[0][0].count(b",") - 6  # line cells: made, whole
    assert made[0][0] + b"".join(b",line%d" % n for n in range(cells + 1, width + 1)) == tables[0][0]
    pad = b"," * (width - cells)
    lo, ln = Counter(tables[0][1:]), Counter(tables[1][1:])
    ko, kn = (Counter(line + pad for line in m[1:]) for m in made)
    assert not ko - lo and not kn - ln  # made lines are the whole table's
    assert lo - ko == ln - kn  # left-out lines: the same on both sides
    assert lo - ln <= ko and ln - lo <= kn  # every line on one side only is made


def test_a_rack_subset_has_the_whole_tables_rows_but_its_own_line_cells(compiled):
    """The rows of racks whose labels are shorter than the design's longest (row A's, beside the
    long-named appliances' in row N): the whole table's rows less the empty cells past the
    subset's longest label; its PDFs the whole render's bytes."""
    import numpy as np

    from supernodeiac.facts.cable_plan import cable_plan
    from supernodeiac.outputs.base import RowSelection

    c = compiled(LONG_NAMES)
    racks = frozenset({"A01", "A03"})
    whole, _ = render_all(c.render_context(), ["labels"])
    links, cables = np.zeros(len(c.fabric.links), dtype=bool), np.zeros(len(cable_plan(c.fabric, c.catalogue)), dtype=bool)
    part = {p: bytes(x) for p, x in SUBSETS.get("labels")(c.render_context(), RowSelection(links, cables, None, racks)).items()}
    assert {p for p in part if not p.startswith("same:")} == {"labels/A01.pdf", "labels/A03.pdf", "labels/labels.csv"}
    assert {p.removeprefix("same:") for p in part if p.startswith("same:")} == set(whole) - set(part)
    assert part["labels/A01.pdf"] == whole["labels/A01.pdf"] and part["labels/A03.pdf"] == whole["labels/A03.pdf"]
    table, made = whole["labels/labels.csv"].splitlines(), part["labels/labels.csv"].splitlines()
    cells, width = made[0].count(b",") - 6, table[0].count(b",") - 6
    assert 0 < cells < width  # the subset's labels are shorter: fewer line cells
    rows = [line for line in table[1:] if line.split(b",", 1)[0] in (b"A01", b"A03")]
    assert [line + b"," * (width - cells) for line in made[1:]] == rows


@pytest.mark.parametrize(
    "pair", ["one more scalable unit", "a scalable unit less", "a row's racks renamed", "a row inserted before another"]
)
def test_the_workbook_cables_the_same_on_both_sides_are_made_once(pair, compiled, monkeypatch):
    """The per-row workbooks' cables: the side made second takes the twins the first made (rack
    indices mapped by name: a row inserted moves the next rows' racks down the list), making only the
    rest, and gets what a pass of its own gives; the first side's are taken once."""
    import numpy as np

    from supernodeiac.facts.cable_plan import cable_plan
    from supernodeiac.outputs import workbook
    from supernodeiac.outputs.cabling import pull_cables

    old, new = (compiled(t) for t in PAIRS[pair])
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    made: list[int] = []

    def counted(ctx, keep=None):
        made.append(len(cable_plan(ctx.fabric, ctx.catalogue)) if keep is None else int(keep.sum()))
        return pull_cables(ctx, keep)

    monkeypatch.setattr(workbook, "pull_cables", counted)
    sides = [(old, sel.old), (new, sel.new)]
    if pair == "a scalable unit less":
        sides.reverse()  # the new side first: the old one takes from it
    got, keeps = [], []
    for n, (c, side) in enumerate(sides):
        keep = np.ones(len(cable_plan(c.fabric, c.catalogue)), dtype=bool)
        if n == 0:
            keep[1::3] = False  # the first side makes two thirds of its cables: the others' twins are made again
        keeps.append(keep)
        got.append(workbook._pulls(c.render_context(), keep, side))
        assert got[-1] == pull_cables(c.render_context(), keep)
    twins = sides[1][1].twins
    again = (twins < 0) | ~keeps[0][np.maximum(twins, 0)]
    assert made == [int(keeps[0].sum()), int(again.sum())] and made[1] < len(got[1])
    assert not sel.old.shared  # taken: nothing left for another renderer
    if pair == "one more scalable unit":
        assert int((twins < 0).sum()) == 1132
    if pair == "a row inserted before another":  # twins in row N, their racks' indices not the same
        index = [{r.name: r.index for r in c.fabric.racks} for c in (old, new)]
        assert index[0]["N01"] != index[1]["N01"]
        assert any(e.rack == index[1]["N01"] for x in got[1] for e in x.ends)


# "other cable IDs": no row selection (tables whole), the diagrams deferred all the same.
DIAGRAM_PAIRS = [
    "one more scalable unit",
    "two appliances move up their rack",
    "a group renamed",
    "other cable IDs (whole tables)",
]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")
@pytest.mark.parametrize("pair", [*DIAGRAM_PAIRS, "no change"])
def test_a_diagram_whose_dot_is_the_same_on_both_sides_is_not_laid_out(pair, compiled, monkeypatch):
    """An SVG is a function of its DOT text and of `dot`: the fast diff lays out only the
    diagrams whose DOT differs or is on one side, with the report of laying out every one."""
    from supernodeiac.outputs import diagram
    from supernodeiac.util import child_process

    old, new = (compiled(t) for t in PAIRS[pair])
    whole = diff(old, new, only=["diagram"], fast=False)
    fed: list[bytes] = []
    real = child_process.run

    def counted(args, data, timeout_s):
        fed.append(data)
        return real(args, data, timeout_s)

    monkeypatch.setattr(child_process, "run", counted)
    fast = diff(old, new, only=["diagram"])
    assert _reports(fast) == _reports(whole)
    assert fast.artifacts is not None and whole.artifacts is not None
    assert fast.artifacts.unchanged == whole.artifacts.unchanged
    dots = [{f"{d.fabric}": d.dot for d in diagram.diagrams(c.fabric) if d.edges <= diagram.SVG_MAX_EDGES} for c in (old, new)]
    given = b"".join(fed)
    laid_out = {stem for side in dots for stem, text in side.items() if text.encode() in given}
    assert laid_out == {stem for stem in set(dots[0]) | set(dots[1]) if dots[0].get(stem) != dots[1].get(stem)}
    if pair == "no change":
        assert not fed and not fast.artifacts.files
    if pair == "one more scalable unit":  # the overview and the new SU's views, not the others
        assert laid_out and len(laid_out) < len(dots[1])


@pytest.mark.parametrize("pair", ["one more InfiniBand scalable unit", "two appliances move up their rack", "spines one rack on"])
def test_ports_tsv_keeps_the_rows_that_may_differ_where_both_sides_have_one_link_order(pair, compiled):
    """ports.tsv (a line per link, in link order): the subset form keeps the selected links'
    lines, in order, only where the links both sides have are in one order in both link tables
    (the spines re-racked: their links come later); else the table whole, so that a table whose
    lines only moved is still reported changed."""
    old, new = (compiled(t) for t in PAIRS[pair])
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    assert sel.new.ordered == (pair != "spines one rack on")
    path = "acceptance/ib/ports.tsv"
    for c, side in ((old, sel.old), (new, sel.new)):
        whole = render_all(c.render_context(), ["acceptance"])[0][path].splitlines()
        part = bytes(SUBSETS.get("acceptance")(c.render_context(), side)[path]).splitlines()
        if not side.ordered:
            assert part == whole
            continue
        ids = c.fabric.links.ids()
        kept = {ids[i] for i in c.fabric.links.indices_of("ib") if side.links[i]}
        assert part[0] == whole[0] and part[1:] == [line for line in whole[1:] if line.split(b"\t", 1)[0].decode() in kept]
        assert len(part) - 1 == len(kept) < len(whole) - 1


def test_the_devices_whose_guids_may_differ(compiled):
    """The GUIDs are made from each device's entry and rank (facts/guid_plan): a node entry put
    first moves every later entry's HCAs (16 GPU nodes, 2 appliances) and adds the storage node;
    the switches' GUIDs (their rank in the fabric) stay. Devices both sides have in another order
    (the entries swapped): not known, guids.csv whole."""
    sel = select(compiled(SMALL).render_context(), compiled(ENTRY_FIRST).render_context())
    assert sel is not None and sel.new.guids == sel.old.guids
    store = {d.name for d in compiled(ENTRY_FIRST).fabric.devices if d.group == "store"}
    assert len(store) == 1
    assert sel.new.guids == {f"gpu-{k:04d}" for k in range(1, 17)} | {"ufm-0001", "ufm-0002"} | store
    gpu = "  - name: gpu\n    model: hgx-h100\n    count: 16\n    placement: {row: A, per_rack: 4, first_u: 2}\n"
    swapped = SMALL.replace(gpu, "")
    swapped = swapped.replace(
        "    placement: {row: N, first_rack: 2, per_rack: 2, first_u: 20}\n",
        "    placement: {row: N, first_rack: 2, per_rack: 2, first_u: 20}\n" + gpu,
        1,
    )
    assert swapped.count("name: gpu\n") == 1 and swapped.index("name: ufm") < swapped.index("name: gpu")
    sel = select(compiled(SMALL).render_context(), compiled(swapped).render_context())
    assert sel is not None and sel.new.guids is None


@pytest.mark.parametrize(
    ("pair", "made", "same"),
    [
        ("one more InfiniBand scalable unit", 0, False),  # another length: changed, neither made
        ("no change", 0, True),  # no link of the fabric may differ: the same, neither made
        ("two appliances move up their rack", 2, False),  # its links may differ, the same length: both
    ],
)
def test_an_ibnetdiscover_topology_is_made_only_where_its_length_cannot_tell(pair, compiled, monkeypatch, made, same):
    """ibnetdiscover.topo is compared as bytes: where no link of its fabric may differ it is the
    same file on both sides; otherwise its length, counted without the text, tells a changed one
    (the report gives the two lengths and no more), and only one of equal lengths is made."""
    old, new = (compiled(t) for t in PAIRS[pair])
    whole = diff(old, new, only=["opensm"], fast=False)
    calls = []
    topology = opensm._topology
    monkeypatch.setattr(opensm, "_topology", lambda ib: calls.append(ib.name) or topology(ib))
    sel = select(old.render_context(), new.render_context())
    assert sel is not None
    part = SUBSETS.get("opensm")(old.render_context(), sel.old)
    assert (SAME_PREFIX + "opensm/ib/ibnetdiscover.topo" in part) is same
    assert same or isinstance(part["opensm/ib/ibnetdiscover.topo"], Sized)
    fast = diff(old, new, only=["opensm"])
    assert _reports(fast) == _reports(whole)
    assert len(calls) == made
