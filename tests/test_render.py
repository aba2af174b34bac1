"""Bill of materials and diagrams, checked against the Fabric and the catalogue."""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
import shutil
import subprocess
from collections import Counter

import pytest
from conftest import compile_text

from supernodeiac.render import RenderContext, render_all
from supernodeiac.render import diagram as diagram_mod
from supernodeiac.render.bom import render_bom
from supernodeiac.render.diagram import render_diagram
from supernodeiac.render.stock import ordered_length

DOT = shutil.which("dot")


def _ctx(c) -> RenderContext:
    return RenderContext(c.blueprint, c.catalogue, c.fabric)


def _bom(c) -> tuple[list[dict], dict]:
    out = render_bom(_ctx(c))
    rows = list(csv.DictReader(io.StringIO(out["bom/bom.csv"].decode())))
    return rows, json.loads(out["bom/summary.json"])


def fat_tree(nodes: int, *, ratio: str = "1:1", rail_optimized: bool = True, pin: str | None = None, extra: str = "") -> str:
    """A 2-tier NDR fat tree of ``nodes`` HGX nodes, racks sized to fit."""
    node_racks = math.ceil(nodes / 4)
    media = f"\n    media: {{pin: {pin}}}" if pin else ""
    return f"""
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: gen-{nodes}}}
{extra}
site:
  rows:
    - {{name: A, racks: {node_racks}}}
    - {{name: N, racks: 16}}
nodes:
  - {{name: gpu, model: hgx-h100, count: {nodes}, placement: {{row: A, per_rack: 4, first_u: 2}}}}
scaleout:
  - name: ib
    kind: fat-tree
    transport: infiniband
    tiers: 2
    switch: qm9700
    rail_optimized: {str(rail_optimized).lower()}
    oversubscription: {{leaf: "{ratio}"}}
    endpoints: [{{group: gpu}}]{media}
    placement:
      leaf: {{row: N, per_rack: 16, first_u: 2}}
      spine: {{row: N, first_rack: 9, per_rack: 16, first_u: 2}}
management:
  switch: sn2201
"""


def _built(text: str):
    c = compile_text(text)
    assert c.fabric is not None, [f.message for f in c.findings]
    return c


# -- bill of materials ------------------------------------------------------------------------


def test_bom_devices_match_fabric_and_catalogue(small_ib):
    rows, summary = _bom(small_ib)
    f, cat = small_ib.fabric, small_ib.catalogue
    expected = Counter((d.model, d.role) for d in f.devices)
    got = {(r["item"], r["detail"]): r for r in rows if r["section"] == "device"}
    assert set(got) == set(expected)
    for (model, role), count in expected.items():
        row = got[(model, role)]
        assert int(row["count"]) == count
        assert float(row["power_w"]) == pytest.approx(count * cat.devices[model].power_w)
        assert float(row["relative_cost"]) == pytest.approx(count * cat.devices[model].relative_cost)
    assert summary["totals"]["devices"] == len(f.devices)


def test_bom_cables_by_fabric_medium_and_stock_length(small_ib):
    rows, summary = _bom(small_ib)
    f, cat = small_ib.fabric, small_ib.catalogue
    expected = Counter((k.fabric, k.kind, k.medium, ordered_length(cat, k.medium, k.length_m)) for k in f.links)
    got = Counter()
    for r in rows:
        if r["section"] in ("cable", "connector", "cartridge"):
            got[(r["fabric"], r["section"], r["item"], float(r["length_m"]))] += int(r["count"])
            medium = cat.media[r["item"]]
            assert float(r["length_m"]) in medium.stock_lengths_m
            assert float(r["power_w"]) == pytest.approx(int(r["count"]) * 2 * medium.power_w_per_end)
            assert float(r["relative_cost"]) == pytest.approx(int(r["count"]) * medium.relative_cost)
    assert got == expected
    by_fabric = Counter(k.fabric for k in f.links)
    assert {name: v["links"] for name, v in summary["fabrics"].items()} == dict(by_fabric)


def test_bom_power_and_cost_totals(small_ib):
    _, summary = _bom(small_ib)
    f, cat = small_ib.fabric, small_ib.catalogue
    devices_w = sum(cat.devices[d.model].power_w for d in f.devices)
    media_w = sum(2 * cat.media[k.medium].power_w_per_end for k in f.links)
    cost = sum(cat.devices[d.model].relative_cost for d in f.devices) + sum(cat.media[k.medium].relative_cost for k in f.links)
    totals = summary["totals"]
    assert totals["power_w"]["devices"] == pytest.approx(devices_w)
    assert totals["power_w"]["media"] == pytest.approx(media_w)
    assert totals["power_w"]["total"] == pytest.approx(devices_w + media_w)
    assert totals["relative_cost"]["total"] == pytest.approx(cost, abs=1e-3)


@pytest.mark.parametrize("per_end", [1, 0.5, 0.25])
def test_bom_transceivers_formula(per_end):
    """Optical media: transceivers = ceil(per end x 2 x links), per fabric and medium."""
    extra = f"catalogue:\n  media:\n    dr: {{transceivers_per_end: {per_end}}}"
    c = _built(fat_tree(16, pin="dr", extra=extra))
    _, summary = _bom(c)
    links = sum(1 for k in c.fabric.links if k.fabric == "ib")
    assert all(k.medium == "dr" for k in c.fabric.links if k.fabric == "ib")
    lines = [t for t in summary["transceivers"] if t["medium"] == "dr"]
    assert lines == [
        {"fabric": "ib", "medium": "dr", "links": links, "per_end": per_end, "count": math.ceil(per_end * 2 * links)}
    ]
    # copper management cables need none
    assert not [t for t in summary["transceivers"] if t["fabric"] == "mgmt"]


# -- diagrams ---------------------------------------------------------------------------------

EDGE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" -- "((?:[^"\\]|\\.)*)" \[(.*)\];$')
NODE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)" \[label="((?:[^"\\]|\\.)*)"')


def _parse(dot: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    nodes, edges = {}, []
    for line in dot.splitlines():
        if "style=invis" in line:
            continue
        m = EDGE.match(line)
        if m:
            edges.append(m.groups())
            continue
        m = NODE.match(line)
        if m:
            nodes[m.group(1)] = m.group(2)
    return nodes, edges


def test_device_view_edges_merge_every_link(small_ib):
    f = small_ib.fabric
    out = render_diagram(_ctx(small_ib))
    for fabric in f.fabrics():
        dot = out[f"diagrams/{fabric}.dot"].decode()
        nodes, edges = _parse(dot)
        links = [k for k in f.links if k.fabric == fabric]
        members = {f.devices[i].name for k in links for i in (k.a, k.b)}
        assert set(nodes) == members
        expected = Counter(tuple(sorted((f.devices[k.a].name, f.devices[k.b].name))) for k in links)
        got = {}
        for a, b, attrs in edges:
            got[tuple(sorted((a, b)))] = int(re.search(r": (\d+) links", attrs).group(1))
        assert got == dict(expected)
        assert "(devices view)" in dot


def test_group_view_beyond_the_threshold():
    """A fabric larger than the device limit: one node per (tier, role, model, group), leaves per SU."""
    c = _built(fat_tree(64))
    f = c.fabric
    out = render_diagram(_ctx(c))
    dot = out["diagrams/ib.dot"].decode()
    assert "(groups view)" in dot
    nodes, edges = _parse(dot)
    links = [k for k in f.links if k.fabric == "ib"]
    members = {i for k in links for i in (k.a, k.b)}
    assert len(members) > diagram_mod.DETAIL_MAX_DEVICES

    def group(i: int) -> tuple:
        d = f.devices[i]
        su = d.coord("su")
        return (d.role, d.group + (f" su {su + 1}" if su is not None else ""), d.model)

    groups = Counter(group(i) for i in members)
    sus = f.facts["ib"]["built_sus"]
    assert len(groups) == 1 + sus + 1  # the nodes, the leaves of each SU, the spines
    got = {}
    for label in nodes.values():
        role, where, count, model = re.match(r"(\S+) \(([^)]+)\)\\n([\d,]+) x (\S+)", label).groups()
        got[(role, where, model)] = int(count.replace(",", ""))
    assert got == dict(groups)
    assert sum(int(re.search(r'label="([\d,]+) links', attrs).group(1).replace(",", "")) for _, _, attrs in edges) == len(links)
    assert len(edges) == 2 * sus  # nodes to each SU's leaves, each SU's leaves to the spines


def test_render_is_byte_identical():
    a = render_all(_ctx(_built(fat_tree(24))), ["diagram", "bom"])
    b = render_all(_ctx(_built(fat_tree(24))), ["diagram", "bom"])
    assert a == b
    assert {"bom/bom.csv", "bom/summary.json", "diagrams/ib.dot", "diagrams/mgmt.dot"} <= set(a[0])


@pytest.mark.skipif(DOT is None, reason="Graphviz `dot` not installed")
def test_svg_from_dot(small_ib):
    out = render_diagram(_ctx(small_ib))
    for fabric in small_ib.fabric.fabrics():
        dot = out[f"diagrams/{fabric}.dot"]
        subprocess.run([DOT, "-Tcanon"], input=dot, check=True, capture_output=True, timeout=60)
        svg = html.unescape(out[f"diagrams/{fabric}.svg"].decode())
        assert svg.lstrip().startswith("<?xml") and svg.rstrip().endswith("</svg>")
        nodes, _ = _parse(dot.decode())
        for name in nodes:
            assert f"<title>{name}</title>" in svg
    assert not [k for k in out if k.startswith("notice:")]


def test_without_dot_a_notice_and_the_dot_files(small_ib, monkeypatch):
    monkeypatch.setattr(diagram_mod.shutil, "which", lambda _name: None)
    out = render_diagram(_ctx(small_ib))
    assert not [k for k in out if k.endswith(".svg")]
    assert {f"diagrams/{name}.dot" for name in small_ib.fabric.fabrics()} <= set(out)
    notices = [v.decode() for k, v in out.items() if k.startswith("notice:")]
    assert len(notices) == 1 and "dot" in notices[0] and "\n" not in notices[0]
