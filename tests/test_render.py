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

from supernodeiac.catalog.parts import ordered_length
from supernodeiac.outputs import RenderContext, render_all
from supernodeiac.outputs import diagram as diagram_mod
from supernodeiac.outputs.bom import render_bom
from supernodeiac.outputs.diagram import render_diagram

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


def test_bom_devices_one_line_per_model(small_ib):
    rows, summary = _bom(small_ib)
    f, cat = small_ib.fabric, small_ib.catalogue
    expected = Counter(d.model for d in f.devices)
    got = {r["item"]: r for r in rows if r["section"] in ("switch", "node", "facility")}
    assert set(got) == set(expected)
    facility = ("chassis", "power-shelf", "pdu", "console-server")
    for model, count in expected.items():
        row = got[model]
        kind = cat.devices[model].kind
        assert row["section"] == ("switch" if kind in ("switch", "switch-board") else "facility" if kind in facility else "node")
        assert int(row["count"]) == count and row["part"]
        roles = Counter(d.role for d in f.devices if d.model == model)
        assert row["detail"] == ", ".join(f"{role} {n}" for role, n in sorted(roles.items()))
        assert float(row["power_w"]) == pytest.approx(count * cat.devices[model].power_w)
        assert float(row["relative_cost"]) == pytest.approx(count * cat.devices[model].relative_cost)
    assert summary["totals"]["devices"] == len(f.devices)


def test_every_bom_line_has_a_part_number_or_a_marked_placeholder(small_ib):
    rows, _ = _bom(small_ib)
    lines = [r for r in rows if r["section"] != "total"]
    assert lines and all(r["part"] and r["part_status"] in ("exact", "family", "generic") and r["grade"] for r in lines)
    # the NDR optics of small-ib are all vendor parts with ordering numbers
    optics = [r for r in lines if r["section"] == "transceiver"]
    assert optics and all(r["part_status"] == "exact" and r["opn"].startswith("980-9I") for r in optics)


def test_bom_cables_are_assemblies_at_their_stock_length(small_ib):
    """Every cable line is a catalogue assembly at one of its stock lengths; straight cables count
    once per cage pair (a twin-port cable serves both ports), Cat6 once per link."""
    rows, _ = _bom(small_ib)
    f, cat = small_ib.fabric, small_ib.catalogue
    lines = [r for r in rows if r["section"] == "cable"]
    for r in lines:
        medium = cat.media[r["item"]]
        assert float(r["length_m"]) in medium.stock_lengths_m
        plugs = 2 if medium.shape == "straight" else 1 + medium.legs
        assert float(r["power_w"]) == pytest.approx(int(r["count"]) * plugs * medium.power_w_per_end)
        assert float(r["relative_cost"]) == pytest.approx(int(r["count"]) * medium.relative_cost)
    # recount from the links: distinct cage pairs per (fabric, medium, stock length)
    pairs: dict[tuple, set] = {}
    for k in f.links:
        m = cat.media[k.medium]
        if m.shape != "straight":
            continue
        ca = (k.a, f.layouts[f.devices[k.a].model].port_cages[k.a_port])
        cb = (k.b, f.layouts[f.devices[k.b].model].port_cages[k.b_port])
        pairs.setdefault((k.fabric, k.medium, ordered_length(cat, k.medium, k.length_m)), set()).add(min(ca, cb))
    assert {(r["fabric"], r["item"], float(r["length_m"])): int(r["count"]) for r in lines} == {
        key: len(v) for key, v in pairs.items()
    }


def test_bom_power_and_cost_totals(small_ib):
    rows, summary = _bom(small_ib)
    f, cat = small_ib.fabric, small_ib.catalogue
    devices_w = sum(cat.devices[d.model].power_w for d in f.devices)
    lines = [r for r in rows if r["section"] not in ("switch", "node", "facility", "total")]
    media_w = sum(float(r["power_w"]) for r in lines)
    modules_w = sum(int(r["count"]) * cat.transceivers[r["item"]].power_w for r in lines if r["section"] == "transceiver")
    assert modules_w > 0 and media_w >= modules_w
    cost = sum(cat.devices[d.model].relative_cost for d in f.devices) + sum(float(r["relative_cost"]) for r in lines)
    totals = summary["totals"]
    assert totals["power_w"]["devices"] == pytest.approx(devices_w)
    assert totals["power_w"]["media"] == pytest.approx(media_w)
    assert totals["power_w"]["total"] == pytest.approx(devices_w + media_w)
    assert totals["relative_cost"]["total"] == pytest.approx(cost, abs=1e-3)


@pytest.mark.parametrize("pct", [0, 2, 10])
def test_bom_spares_by_part_class(pct):
    extra = f"bom:\n  spares_pct: {{transceiver: {pct}, fibre: 5}}"
    c = _built(fat_tree(16, extra=extra))
    rows, _ = _bom(c)
    for r in rows:
        if r["section"] == "total":
            continue
        count, spares = int(r["count"]), int(r["spares"])
        want = {"transceiver": pct, "fibre": 5}.get(r["section"], 0)
        assert spares == math.ceil(count * want / 100) and int(r["order"]) == count + spares
        # spares are ordered, not powered
        assert float(r["power_w"]) == pytest.approx(count * float(r["unit_power_w"]))


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
        dot = out[f"diagrams/{fabric}-devices.dot"].decode()
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
        role, where, count, model = re.match(r"(\S+)\\n\(([^)]+)\)\\n([\d,]+) x (\S+)", label).groups()
        got[(role, where, model)] = int(count.replace(",", ""))
    assert got == dict(groups)
    assert sum(int(re.search(r": ([\d,]+) links, ", attrs).group(1).replace(",", "")) for _, _, attrs in edges) == len(links)
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
        dot = out[f"diagrams/{fabric}-devices.dot"]
        subprocess.run([DOT, "-Tcanon"], input=dot, check=True, capture_output=True, timeout=60)
        svg = html.unescape(out[f"diagrams/{fabric}-devices.svg"].decode())
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
