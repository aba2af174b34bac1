"""Cabling that can be installed and optics that can be ordered (issue 8), checked from the
rendered files: one plug per cage, modules per occupied optical cage, connectors per board pair,
cartridges per rack assembly, physical port names and per-end labels."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import sys
from collections import Counter, defaultdict
from functools import cache

import pytest
from conftest import BLUEPRINTS, ROOT, compile_text, shipped, shipped_files

from supernodeiac.catalog import Catalogue, merged
from supernodeiac.fabric import PortLayout
from supernodeiac.pipeline import render

SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))
SHIPPED_NAMES = {p.stem for p in SHIPPED}


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _rendered(c, name: str | None = None) -> tuple[list[dict], list[dict], dict]:
    """links.csv, bom.csv and summary.json of ``c``; of the shared render when ``name`` is a shipped blueprint."""
    assert c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings if f.severity.value == "error"]
    artifacts = shipped_files(name) if name in SHIPPED_NAMES else _generated(name)[1] if name in GENERATED else render(c)[0]
    cables = list(csv.DictReader(io.StringIO(artifacts["cabling/links.csv"].decode())))
    bom = list(csv.DictReader(io.StringIO(artifacts["bom/bom.csv"].decode())))
    return cables, bom, json.loads(artifacts["bom/summary.json"])


def _cases() -> list[tuple[str, str]]:
    cases = [(p.stem, p.read_text()) for p in SHIPPED]
    cases.append(("bench-1k", _bench_module("generate").blueprint(128)))
    cases.append(("bench-dragonfly", _bench_module("dragonfly_gen").dragonfly_blueprint(p=2, a=4, h=2, rows=2)))
    return cases


CASES = _cases()
GENERATED = {name: text for name, text in CASES if name not in SHIPPED_NAMES}


@cache
def _generated(name: str):
    """A generated case compiled and its cabling and BOM rendered once per process (two tests read them)."""
    c = compile_text(GENERATED[name], f"{name}.yaml")
    assert c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings if f.severity.value == "error"]
    return c, render(c, ["cabling", "bom"])[0]


def _plugs(cables: list[dict], catalogue: Catalogue) -> dict[tuple[str, str], list[tuple]]:
    """Every cage (device, cage as printed) with what each of its rows puts into it."""
    cages: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for r in cables:
        if r["kind"] != "cable":
            continue
        medium = catalogue.media[r["medium"]]
        for end, far in (("a", "b"), ("b", "a")):
            cages[(r[f"{end}_device"], r[f"{end}_cage"])].append(
                (
                    medium.shape,
                    r["medium"],
                    r[f"{end}_transceiver"],
                    (r[f"{far}_device"], r[f"{far}_cage"]),
                    r[f"{end}_physical"],
                    r[f"{far}_physical"],
                )
            )
    return cages


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_no_cage_holds_more_than_one_plug(name, text):
    """Re-derived from links.csv alone: a cage takes one plug. A straight cable faces one cage
    (position for position); a splitter head faces single-link leg cages; only a transceiver (one
    module, a fibre per optical port) or a splitter fans a cage out to several devices."""
    c = shipped(name) if name in SHIPPED_NAMES else _generated(name)[0]
    cables, _, _ = _rendered(c, name)
    rows_per_cage = _plugs(cables, c.catalogue)
    assert rows_per_cage
    fanned = 0
    for cage, rows in rows_per_cage.items():
        media = {row[1] for row in rows}
        assert len(media) == 1, (cage, rows)
        shape = rows[0][0]
        fars = {row[3] for row in rows}
        if shape == "straight":
            assert len(fars) == 1, (cage, rows)  # one cable: both ports to one far cage
            [far] = fars
            back = rows_per_cage[far]
            assert {row[3] for row in back} == {cage}
            # port i of this cage to port i of the far one
            assert all(row[4].rsplit(" ", 1)[-1] == row[5].rsplit(" ", 1)[-1] for row in rows if " port " in row[4])
        elif shape == "splitter":
            if len(rows) > 1 or len(rows_per_cage[next(iter(fars))]) > 1:  # the head's side
                assert all(len(rows_per_cage[far]) == 1 for far in fars), (cage, rows)
        else:
            assert shape == "transceiver"
            assert len({row[2] for row in rows}) == 1, (cage, rows)  # one module part per cage
        if len({far[0] for far in fars}) > 1:
            fanned += 1
            assert shape in ("transceiver", "splitter")
    if name in ("small-ib", "bench-1k"):
        assert fanned  # the rail-optimised node cages feed two rail leaves each


@pytest.mark.parametrize("name,text", CASES, ids=[c[0] for c in CASES])
def test_transceivers_recounted_from_the_cabling_sheet_equal_the_bom(name, text):
    """Modules = occupied optical cages, by part and side, counted from links.csv's cage columns."""
    c = shipped(name) if name in SHIPPED_NAMES else _generated(name)[0]
    cables, bom, summary = _rendered(c, name)
    f = c.fabric
    kind = {d.name: f.models[d.model].kind for d in f.devices}
    cages: dict[tuple[str, str, str], tuple[str, str]] = {}
    for r in cables:
        for end in ("a", "b"):
            part = r[f"{end}_transceiver"]
            if part and part != "(integrated)":
                device = r[f"{end}_device"]
                side = "switch" if kind[device] in ("switch", "switch-board") else "host"
                cages[(r["fabric"], device, r[f"{end}_cage"])] = (part, side)
    recount = Counter((fabric, part, side) for (fabric, _, _), (part, side) in cages.items())
    listed = Counter()
    for r in bom:
        if r["section"] == "transceiver":
            listed[(r["fabric"], r["part"], r["detail"].split(" side")[0])] += int(r["count"])
    assert listed == recount
    assert summary["totals"]["transceivers"] == sum(recount.values())
    # one fibre cord per optical port in use: the sheet's fibres column, by fabric
    fibres = Counter()
    for r in cables:
        if r["fibres"]:
            fibres[r["fabric"]] += int(r["fibres"])
    assert {fab: v.get("fibre", 0) for fab, v in summary["fabrics"].items() if v.get("fibre")} == dict(fibres)


def test_orthogonal_connectors_are_board_pairs_and_cartridges_rack_assemblies():
    for name in ("nebula-x128-ib", "supercluster-2level"):
        c = shipped(name)
        _, bom, _ = _rendered(c, name)
        facts = c.fabric.facts["x128"]
        [line] = [r for r in bom if r["section"] == "connector"]
        assert int(line["count"]) == facts["supernodes"] * facts["compute_boards"] * facts["switch_boards"]  # 4 x 16 x 8
        assert int(line["count"]) == 512 and line["detail"] == "per board pair"
    c = shipped("nvl72-pod")
    cables, bom, _ = _rendered(c, "nvl72-pod")
    [line] = [r for r in bom if r["section"] == "cartridge"]
    racks = {(r["a_rack"]) for r in cables if r["kind"] == "cartridge"}
    assert int(line["count"]) == c.fabric.facts["nvl"]["supernodes"] == len(racks) == 8
    assert "4 cartridges each" in line["detail"]
    # the cartridge links themselves are not ordered at stock lengths
    assert not [r for r in bom if r["section"] == "cable" and r["item"] == "nvlink-cartridge"]


def test_cage_and_physical_names_as_printed():
    cat = Catalogue.model_validate(merged(None))
    qm = PortLayout(cat.devices["qm9700"])
    port = qm.names.index("IB1/3/2")
    assert qm.physical_name(port) == "OSFP 3 port 2" and qm.cage_of(port).number == 3 and qm.position(port) == 2
    assert qm.cage_ports(qm.cage_of(port)) == (4, 5) and len(qm.cages) == 34  # 32 OSFP, RJ45 management and console
    assert qm.physical_name(qm.names.index("console")) == "CONSOLE" and qm.names.index("console") == qm.total - 1
    sn = PortLayout(cat.devices["sn5600-128x400g"])
    port = sn.names.index("Ethernet500")
    assert sn.physical_name(port) == "OSFP 63b" and sn.cage_of(port).number == 63
    dgx = PortLayout(cat.devices["hgx-h100"])
    # DGX H100 user guide: OSFP1 P1 = GPU 7, P2 = GPU 4; ... OSFP4 P2 = GPU 0 (port i is GPU i's NIC)
    assert [dgx.cage_ports(i) for i in range(4)] == [(7, 4), (6, 5), (2, 1), (3, 0)]
    assert dgx.physical_name(0) == "OSFP 4 port 2" and dgx.name(0) == "mlx5_0"
    assert {dgx.cage_of(p).top for p in range(8)} == {"flat"} and {qm.cage_of(p).top for p in range(64)} == {"finned"}
    sw = PortLayout(cat.devices["sn2201"])
    assert sw.physical_name(sw.names.index("Ethernet48")) == "QSFP28 49"
    # physical names never repeat within a device, for every built-in model
    for name, model in cat.devices.items():
        layout = PortLayout(model)
        assert len(set(layout.physical_names)) == layout.total, name


def test_labels_per_end_carry_both_ends_locations(small_ib):
    cables, _, _ = _rendered(small_ib, "small-ib")
    row = next(r for r in cables if r["cable_id"] == "gpu-0001-mlx5_0")
    assert row["a_label"] == f"small-ib/A/A01/U02/gpu-0001/{row['a_physical']} > N/N01/U02/ib-leaf-su001-01/{row['b_physical']}"
    assert row["b_label"] == f"small-ib/N/N01/U02/ib-leaf-su001-01/{row['b_physical']} > A/A01/U02/gpu-0001/{row['a_physical']}"
    for r in cables:
        assert r["a_label"].split(" > ")[0].endswith(f"{r['a_device']}/{r['a_physical']}")
        assert r["b_label"].split(" > ")[1].endswith(f"{r['a_device']}/{r['a_physical']}")


def test_end_label_template_from_the_blueprint():
    template = "{site}:{rack}-U{u:02d}:{os_port} TO {far_rack}-U{far_u:02d}:{far_os_port} [{cable}]"
    text = (
        (BLUEPRINTS / "small-ib.yaml")
        .read_text()
        .replace("site:\n", f'naming:\n  end_label: "{template}"\nsite:\n  name: DC1\n', 1)
    )
    c = compile_text(text)
    cables, _, _ = _rendered(c)
    row = next(r for r in cables if r["cable_id"] == "gpu-0001-mlx5_0")
    assert row["a_label"] == "DC1:A01-U02:mlx5_0 TO N01-U02:IB1/1/1 [gpu-0001-mlx5_0]"
    assert row["b_label"] == "DC1:N01-U02:IB1/1/1 TO A01-U02:mlx5_0 [gpu-0001-mlx5_0]"
    bad = compile_text(text.replace("{cable}]", "{cabel}]"))
    assert bad.exit_code == 2 and [f.rule for f in bad.findings] == ["naming"]
    assert bad.findings[0].path == ("naming", "end_label")


def test_links_csv_keeps_the_per_link_columns():
    """The per-link list's first 21 columns keep their names and order (tools read them by position)."""
    from supernodeiac.outputs.cabling import COLUMNS

    assert COLUMNS[:21] == [
        "cable_id", "label", "fabric", "kind", "a_row", "a_rack", "a_u", "a_device", "a_port", "b_row", "b_rack",
        "b_u", "b_device", "b_port", "medium", "fibre", "length_m", "routed_m", "lane_gbps", "lanes", "gbps",
    ]  # fmt: skip


def test_spec_api_for_config_renderers(small_ib):
    """What the switch-config and NCCL renderers read: a port's cage and position, and per link
    the medium and the modules in both cages."""
    f = small_ib.fabric
    leaf = f.device("ib-leaf-su001-01")
    layout = f.layout(leaf)
    used = Counter(layout.cage_of(k.b_port).index for k in f.links if k.b == leaf.index and k.tier == "node-leaf")
    # the 16 nodes of rail 0 fill 8 cages, both ports each (2 x 400G); the UFM takes one port of another
    assert sorted(used.values()) == [1] + [2] * 8
    link = next(k for k in f.links if k.a == f.device("gpu-0001").index and k.fabric == "ib")
    assert (link.medium, link.a_module, link.b_module, link.tier) == ("sr4-400g", "mma4z00-ns-flt", "mma4z00-ns", "node-leaf")
    # the NIC of GPU 0 (mlx5_0) sits in the DGX's OSFP 4, position 2
    cage = f.cage(link.a, link.a_port)
    assert (cage.number, cage.form, cage.top, f.physical_name(link.a, link.a_port)) == (4, "osfp", "flat", "OSFP 4 port 2")
    assert f.port_name(link.a, link.a_port) == "mlx5_0"


def test_a_physical_name_template_with_an_unknown_field_is_a_located_error():
    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    override = (
        "catalogue:\n  devices:\n    qm9700:\n      ports:\n"
        '        - {role: data, count: 64, speed_gbps: 400, lanes: 4, cage: osfp, ports_per_cage: 2, physical: "{slot}"}\n'
    )
    c = compile_text(text.replace("site:\n", override + "site:\n", 1))
    assert c.exit_code == 2
    [e] = c.findings
    assert "physical" in e.message and "slot" in e.message and e.path[:3] == ("catalogue", "devices", "qm9700")
