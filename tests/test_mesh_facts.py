"""Switchless scale-up meshes (issue 21): the Huawei Atlas 800T A2's HCCS mesh beside an MI300X
xGMI mesh (tests/data/ascend-hccs-mesh.yaml). The board's accelerator links are facts
(facts/mesh.py), counted against the full-mesh formulas: n(n-1)/2 pairs per board,
links_per_pair x n(n-1)/2 board links, links_per_pair x link_gbps / 8 GB/s per pair one way and
(n-1) times that per accelerator. None of them is a cable: cabling, BOM and labels hold the
data and management ports only. Ascend runs HCCL: no NCCL files, no nccl-tests binary, and the
checklist names hccl_test.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest

from supernodeiac.catalog.collectives import model_figures
from supernodeiac.explain import explain, to_text
from supernodeiac.facts.mesh import mesh_facts
from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file, render

BLUEPRINT = Path(__file__).parent / "data" / "ascend-hccs-mesh.yaml"
ATLAS, MI300X = "atlas-800t-a2", "mi300x-8gpu"


def _rows(data: bytes, delimiter: str = ",") -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode()), delimiter=delimiter))


@pytest.fixture(scope="module")
def mesh():
    c = compile_file(BLUEPRINT)
    assert not [f for f in c.findings if f.severity in (Severity.ERROR, Severity.WARNING)], [
        f.message for f in c.findings if f.severity in (Severity.ERROR, Severity.WARNING)
    ]
    files, notices = render(c, only=["cabling", "bom", "labels", "acceptance", "nccl", "rccl"])
    return c, files, notices


def _nodes(c) -> dict[str, int]:
    """Host model -> node count, from the blueprint itself."""
    out: Counter[str] = Counter()
    for g in c.blueprint.nodes:
        out[g.model] += g.count
    return dict(out)


def test_the_atlas_catalogue_entry_is_an_hccs_full_mesh_of_eight_npus(mesh):
    c, _files, _notices = mesh
    m = c.catalogue.devices[ATLAS]
    acc, board = m.accelerators, m.internal_mesh
    assert (m.vendor, acc.model, acc.count) == ("Huawei", "Ascend910B", 8)
    # one HCCS link to each of the 7 peers; the catalogue's validator holds links = per pair x (n - 1)
    assert board.links_per_pair == 1 and acc.links == board.links_per_pair * (acc.count - 1) == 7
    assert m.internal_scaleup is None
    data = [g for g in m.ports if g.role == "data"]
    assert sum(g.count for g in data) == acc.count and {g.speed_gbps for g in data} == {200}
    # what is not from a Huawei data sheet read here is graded so
    grades = {s.grade for s in m.sources}
    assert "UNCONFIRMED" in grades and "PRIMARY" in grades


@pytest.mark.parametrize("model", [ATLAS, MI300X])
def test_mesh_facts_hold_the_full_mesh_formulas(mesh, model):
    c, _files, _notices = mesh
    facts = mesh_facts(c.fabric)
    m = c.catalogue.devices[model]
    acc, n, per_pair = m.accelerators, m.accelerators.count, m.internal_mesh.links_per_pair
    b = facts.boards[model]
    assert (b.accelerator, b.accelerators, b.links_per_pair) == (acc.model, n, per_pair)
    assert b.pairs == n * (n - 1) // 2 == len(b.pair_list()) == len(set(b.pair_list()))
    assert all(0 <= x < y < n for x, y in b.pair_list())
    assert b.links == per_pair * n * (n - 1) // 2
    assert b.pair_gbytes == per_pair * acc.link_gbps / 8
    assert b.accelerator_gbytes == pytest.approx((n - 1) * per_pair * acc.link_gbps / 8)
    assert b.accelerator_bidir_gbytes == pytest.approx(acc.bidir_gbytes)
    # the hosts of the model are the blueprint's nodes of it, in device order
    hosts = facts.hosts[model]
    assert len(hosts) == _nodes(c)[model] and hosts == sorted(hosts)
    assert {c.fabric.devices[h].model for h in hosts} == {model}


def test_mesh_totals_over_the_fabric(mesh):
    c, _files, _notices = mesh
    facts = mesh_facts(c.fabric)
    nodes = _nodes(c)
    n_of = {m: c.catalogue.devices[m].accelerators.count for m in nodes}
    per_pair = {m: c.catalogue.devices[m].internal_mesh.links_per_pair for m in nodes}
    assert facts.host_count == sum(nodes.values()) == 24
    assert facts.pairs == sum(nodes[m] * n_of[m] * (n_of[m] - 1) // 2 for m in nodes) == 24 * 28
    assert facts.links == sum(nodes[m] * per_pair[m] * n_of[m] * (n_of[m] - 1) // 2 for m in nodes)
    assert mesh_facts(c.fabric) is facts  # computed once per Fabric


def test_board_links_are_no_cables_no_bom_line_and_no_label(mesh):
    c, files, _notices = mesh
    f = c.fabric
    links = _rows(files["cabling/links.csv"])
    assert len(links) == len(f.links)
    assert all(r["a_device"] != r["b_device"] for r in links)  # no accelerator-to-accelerator trace on a sheet
    ends = Counter([r["a_device"] for r in links] + [r["b_device"] for r in links])
    for model in (ATLAS, MI300X):
        m = c.catalogue.devices[model]
        data = sum(g.count for g in m.ports if g.role == "data")
        mgmt = sum(g.count for g in m.ports if g.role == "mgmt")
        for h in mesh_facts(f).hosts[model]:
            # a host's cables are its data NICs and its BMC, not its n(n-1)/2 pairs
            assert ends[f.devices[h].name] == data + mgmt
    # the BOM orders the 24 servers and the cables of the sheet, nothing for the boards' pairs
    bom = _rows(files["bom/bom.csv"])
    nodes = {r["item"]: int(r["count"]) for r in bom if r["section"] == "node"}
    assert nodes == _nodes(c)
    cable_ids = {r["cable_id"] for r in _rows(files["cabling/cables.csv"])}
    labels = _rows(files["labels/labels.csv"])
    assert {r["cable_id"] for r in labels} == cable_ids
    assert Counter(r["cable_id"] for r in labels) == Counter({i: 2 for i in cable_ids})


def test_ascend_hosts_are_not_cuda_hosts(mesh):
    c, files, notices = mesh
    vendor = model_figures().vendor_of("Ascend910B")
    assert vendor is not None and (vendor.library, vendor.tool, vendor.collective_test) == ("HCCL", "", "hccl_test")
    # no NCCL file names an Atlas host model; the notice says why
    assert not [p for p in files if p.startswith("nccl/") and ATLAS in p]
    assert any(f"no NCCL files for {ATLAS}: its accelerators (Ascend910B) use HCCL, not NCCL" in n for n in notices)
    atlas_hosts = {c.fabric.devices[h].name for h in mesh_facts(c.fabric).hosts[ATLAS]}
    assert not [r for r in _rows(files["rccl/hosts.tsv"], "\t") if r["host"] in atlas_hosts]
    # nccl-tests.sh runs no binary for them (tool none); the checklist names the vendor's test
    runs = _rows(files["acceptance/nccl-tests.tsv"], "\t")
    npu_domains = [r for r in runs if r["stage"] == "domain" and r["hosts"].removeprefix("host:") in atlas_hosts]
    assert len({r["hosts"] for r in npu_domains}) == len(atlas_hosts)
    assert {r["tool"] for r in npu_domains} == {"none"}
    assert {r["tool"] for r in runs if r["group"].startswith("gpu-")} == {"rccl-tests"}
    checklist = files["acceptance/checklist.md"].decode()
    assert "run the vendor's own collective test, hccl_test (HCCL), against the same design figures" in checklist


def test_xgmi_stage_takes_the_mesh_facts_and_leaves_hccs_out(mesh):
    c, files, _notices = mesh
    facts = mesh_facts(c.fabric)
    rows = _rows(files["acceptance/xgmi.tsv"], "\t")
    mi = facts.boards[MI300X]
    # only the MI300X hosts have a pair copy test (TransferBench); the Atlas hosts none
    assert [r["host"] for r in rows] == [c.fabric.devices[h].name for h in facts.hosts[MI300X]]
    assert {(r["accelerators"], r["links_per_pair"], float(r["pair_gbytes"])) for r in rows} == {
        (str(mi.accelerators), str(mi.links_per_pair), mi.pair_gbytes)
    }
    # both directions of every pair, per host
    checklist = files["acceptance/checklist.md"].decode()
    assert f"({2 * mi.pairs * len(rows)} pairs)" in checklist
    # the scale-up link stage lists the Atlas hosts with their 7 links at the HCCS rate, for CANN's
    # topology query (tests/test_hccs_topo.py runs and grades it)
    scaleup = [r for r in _rows(files["acceptance/scaleup.tsv"], "\t") if r["accelerator"] == "Ascend910B"]
    atlas = c.catalogue.devices[ATLAS].accelerators
    assert len(scaleup) == len(facts.hosts[ATLAS])
    assert {(r["tool"], r["links"], float(r["link_gbytes"])) for r in scaleup} == {
        ("acl-topo", str(atlas.links), atlas.link_gbps / 8)
    }


def test_scaleup_class_names_the_pair_bandwidth(mesh):
    c, _files, _notices = mesh
    facts = mesh_facts(c.fabric)
    msgs = [f.message for f in c.findings if f.rule == "scaleup-class"]
    for model in (ATLAS, MI300X):
        b = facts.boards[model]
        line = next(m for m in msgs if f"x {model}," in m)
        assert f"switchless full mesh of {b.accelerators} {b.accelerator} ({b.links} point-to-point links" in line
        assert f"{b.accelerator_bidir_gbytes:g} GB/s per accelerator, {b.pair_gbytes:g} GB/s per pair one way" in line


def test_explain_reports_the_meshes(mesh):
    c, _files, _notices = mesh
    report = explain(c.blueprint, c.catalogue, c.fabric)
    facts = mesh_facts(c.fabric)
    m = report["meshes"]
    assert (m["hosts"], m["pairs"], m["links"]) == (facts.host_count, facts.pairs, facts.links)
    by_model = {b["model"]: b for b in m["boards"]}
    assert sorted(by_model) == sorted(facts.hosts)
    atlas = c.catalogue.devices[ATLAS].accelerators
    a = by_model[ATLAS]
    assert (a["hosts"], a["accelerators"], a["pairs"], a["links"]) == (16, 8, 28, 28)
    assert a["pair_gbytes"] == atlas.link_gbps / 8
    assert a["accelerator_gbytes"] == 7 * atlas.link_gbps / 8 and a["accelerator_bidir_gbytes"] == atlas.bidir_gbytes
    text = to_text(report)
    assert f"scale-up meshes: 24 hosts, {facts.pairs:,} accelerator pairs, {facts.links:,} board links" in text
    assert (
        f"16 x {ATLAS}: 8 Ascend910B in a full mesh, 28 pairs x 1 link = 28 links per board; "
        f"{atlas.link_gbps / 8:g} GB/s per pair one way" in text
    )


def test_explain_of_a_design_without_meshes_has_no_mesh_section():
    c = compile_file(Path(__file__).parents[1] / "blueprints" / "small-ib.yaml")
    report = explain(c.blueprint, c.catalogue, c.fabric)
    assert report["meshes"] is None and "scale-up meshes" not in to_text(report)
    assert mesh_facts(c.fabric).pairs == 0
