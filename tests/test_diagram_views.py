"""The detail diagrams beside the overviews: a board grid per supernode of a scale-up domain and a
view per rail of a rail-aligned fabric, counted against the Fabric's links and the published
designs, laid out by the real ``dot``; and the overview's bundle labels, which say each count once."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections import Counter

import pytest
from conftest import shipped

from supernodeiac.outputs import diagram as diagram_mod

DOT = shutil.which("dot")
ROW = re.compile(r"<TR>(.*?)</TR>")
CELL = re.compile(r"<TD[^>]*>(.*?)</TD>")
EDGE = re.compile(r'^  "([^"]+)" -- "([^"]+)" \[label="([^"]*)"', re.M)


@functools.cache
def _all(name: str) -> list[diagram_mod.Diagram]:
    return diagram_mod.diagrams(shipped(name).fabric)


def _views(name: str, mode: str) -> dict[str, diagram_mod.Diagram]:
    return {d.fabric: d for d in _all(name) if d.mode == mode}


def _grid(d: diagram_mod.Diagram) -> tuple[list[str], list[tuple[str, list[str], str]]]:
    """(switch board names, [(compute board name, cells, other fabrics)]) read from the table."""
    [table] = [line for line in d.dot.splitlines() if line.startswith('  "grid" [shape=plaintext')]
    rows = [CELL.findall(r) for r in ROW.findall(table)]
    cols = [c.split("<BR/>")[1] for c in rows[0][1:-1]]
    body = [(cells[0].split("<BR/>")[0].split(" ")[-1], cells[1:-1], cells[-1]) for cells in rows[1:]]
    return cols, body


@pytest.mark.parametrize("name, link_kind", [("nebula-x128-ib", "connector"), ("nvl72-pod", "cartridge")])
def test_domain_grid_cells_are_the_links_of_each_board_pair(name, link_kind):
    c = shipped(name)
    f = c.fabric
    spec = c.blueprint.scaleup[0]
    grids = _views(name, "domain")
    assert len(grids) == min(spec.count, diagram_mod.PART_DIAGRAMS_MAX)
    per_pair = Counter(frozenset((k.a, k.b)) for k in f.links if k.fabric == spec.name)
    other = Counter(i for k in f.links if k.fabric != spec.name for i in (k.a, k.b))
    for stem, d in grids.items():
        assert d.nodes < 200 and '"legend" [shape=plaintext' in d.dot and f"{link_kind} links" in d.dot
        cols, body = _grid(d)
        sn = int(re.search(r"-sn(\d+)-grid$", stem).group(1)) - 1
        boards = [x for x in f.devices if x.group == spec.name and x.coord("supernode") == sn]
        assert set(cols) == {x.name for x in boards if x.role == "switch-board"}
        assert {r for r, _, _ in body} == {x.name for x in boards if x.role == "compute-board"}
        total = 0
        for r, cells, out in body:
            cb = f.device(r)
            for col, cell in zip(cols, cells, strict=True):
                n = per_pair[frozenset((cb.index, f.device(col).index))]
                assert cell == (str(n) if n else "")
                total += n
            assert int(out) == other[cb.index]
        assert f"{total:,} {link_kind} links" in d.dot
        if name == "nvl72-pod":
            # GB200 NVL72: 72 Blackwell GPUs, 18 NVLink 5 links each, all through the NVLink switch trays
            assert total == 72 * 18 and len(cols) == 9 and len(body) == 18
        else:
            # one orthogonal connector per compute slot x switch slot: every cell is filled
            assert all(cell for _, cells, _ in body for cell in cells)
            assert (len(body), len(cols)) == (spec.compute_boards, spec.switch_boards)


def test_rail_views_are_one_nic_position_of_every_su_to_its_rail_leaves():
    """DGX SuperPOD (H100) reference architecture: every SU has one leaf per rail and each node's
    NIC r on rail r's leaf; the view of rail r holds exactly those links."""
    f = shipped("dgx-h100-superpod-4su").fabric
    rails = _views("dgx-h100-superpod-4su", "rail")
    leaves = [d for d in f.devices if d.group == "ib" and d.role == "leaf"]
    n_rails = len({d.coord("rail") for d in leaves})
    assert sorted(rails) == [f"ib-rail{r + 1}" for r in range(n_rails)] and n_rails == 8
    for r in range(n_rails):
        d = rails[f"ib-rail{r + 1}"]
        assert d.nodes < 200 and '"legend" [shape=plaintext' in d.dot
        mine = {x.name for x in leaves if x.coord("rail") == r}
        edges = EDGE.findall(d.dot)
        assert {b for _, b, _ in edges} == mine
        ends = ((f.devices[k.a], f.devices[k.b]) for k in f.links if k.fabric == "ib")
        expected = sum(1 for a, b in ends if {a.name, b.name} & mine and 0 in (a.tier, b.tier))
        drawn = sum(int(re.match(r"(\d+) links? x ", label).group(1)) for _, _, label in edges)
        assert drawn == expected and f"{expected:,} links" in d.dot


def test_rail_views_only_where_the_fabric_is_rail_aligned():
    """ib-3tier: the compute fabric is rail-optimised (a view per rail), its storage fabric is not (none)."""
    f = shipped("ib-3tier").fabric
    rails = list(_views("ib-3tier", "rail"))
    n_rails = len({d.coord("rail") for d in f.devices if d.group == "ib" and d.role == "leaf"})
    assert sorted(rails) == sorted(f"ib-rail{r + 1}" for r in range(n_rails)) and n_rails > 1


def test_overview_bundle_labels_say_each_count_once():
    """'248 links x 400G' then the medium; a count is never repeated after the medium's name."""
    for d in _all("dgx-h100-superpod-4su"):
        if d.mode != "groups":
            continue
        for _, _, label in EDGE.findall(d.dot):
            head, *media = label.split("\\n")
            assert re.fullmatch(r"[\d,]+ links? x \S+|[\d,]+ links?, \S+", head), label
            # One medium ("over X"), or a line per medium with its count ("192 over A", "64 over B").
            assert (len(media) == 1 and media[0].startswith("over ")) or (
                len(media) > 1 and all(re.fullmatch(r"[\d,]+ over \S+", m) for m in media)
            ), label


@pytest.mark.skipif(DOT is None, reason="Graphviz `dot` not installed")
def test_grid_and_rail_views_lay_out_with_dot():
    views = [*_views("nebula-x128-ib", "domain").values()][:1] + [*_views("small-ib", "rail").values()][:1]
    assert len(views) == 2
    for d in views:
        svg = subprocess.run([DOT, "-Tsvg"], input=d.dot.encode(), check=True, capture_output=True, timeout=60).stdout
        assert svg.rstrip().endswith(b"</svg>") and b"Legend" in svg
