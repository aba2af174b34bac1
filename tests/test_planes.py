"""Planes: a dual-plane scale-out fabric (Alibaba HPN, SIGCOMM 2024: a NIC's two ports in two separate
planes, each its own Clos), a planed second scale-up level (level-2 plane c joins L1 chip c of every
supernode: a Nebula X128 Matrix of 2,048 accelerators), and the bound of a switch chip's ports x speed
by its catalogue ASIC. Counts against the designs' formulas; both ends of the links read back."""

from __future__ import annotations

import ipaddress
import json
from functools import cache
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import compile_file, render

DATA = Path(__file__).parent / "data"
DUAL = DATA / "roce-dual-plane.yaml"
MATRIX = DATA / "nebula-matrix-2048.yaml"


@cache
def _dual():
    c = compile_file(str(DUAL))
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    return c


@cache
def _matrix():
    c = compile_file(str(MATRIX))
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    return c


def _errors(c, rule):
    return [x for x in c.findings if x.rule == rule and x.severity == "error"]


# -- dual-plane scale-out ------------------------------------------------------------------------


def test_dual_plane_counts_follow_the_formulas():
    """Per plane P of 2: rails r = 16 ports / 2 = 8, an SU of d = 64 nodes (the leaf's 64 x 400G down
    ports) on r leaves, each with 64 x 400 / 800 = 32 uplinks of 800G for 1:1 in bandwidth; spines
    planned for grow_to_sus 2: the largest p dividing 32 with 16 leaves x p <= 64 is 4, so 32 / 4 = 8
    spines. Host links N x r per plane, leaf-spine links leaves x 32 per plane."""
    f = _dual().fabric
    nodes, ports, planes = 64, 16, 2
    rails = ports // planes
    assert sorted(f.fabrics()) == ["mgmt", "roce-p1", "roce-p2"]
    for name in ("roce-p1", "roce-p2"):
        facts = f.facts[name]
        assert facts["rails"] == rails and facts["leaves"] == rails * 1
        assert facts["leaf_down"] == 64 and facts["leaf_up"] == 64 * 400 // 800
        assert facts["leaf_spine_parallel"] == 4 and facts["spines"] == 32 // 4
        tiers = [f.links.specs[f.links.spec[i]].tier for i in f.links.indices_of(name)]
        assert tiers.count("node-leaf") == nodes * rails
        assert tiers.count("leaf-spine") == facts["leaves"] * 32
    assert "roce" not in f.facts


def test_a_leaf_of_two_speeds_runs_400g_down_and_800g_up():
    """The cages fix the split: host links at 400G on the 2 x 400G cages 1-32, uplinks at 800G on
    cages 33-64; the ratio is held in bandwidth (64 x 400 : 32 x 800 = 1:1)."""
    f = _dual().fabric
    t = f.links
    speeds: dict[str, set[float]] = {"node-leaf": set(), "leaf-spine": set()}
    for i in t.indices_of("roce-p1"):
        spec = t.specs[t.spec[i]]
        speeds[spec.tier].add(spec.gbps)
    assert speeds == {"node-leaf": {400.0}, "leaf-spine": {800.0}}
    assert f.facts["roce-p1"]["sizing"]["leaf"]["speed_ratio"] == "1/2"
    c = _dual()
    assert not [x for x in c.findings if x.rule in ("oversubscription", "ratio-intent") and x.severity != "info"]
    # Declared 2:1 in bandwidth: 64 x 400G over 16 x 800G.
    text = DUAL.read_text().replace('oversubscription: {leaf: "1:1"}', 'oversubscription: {leaf: "2:1"}')
    two = compile_text(text, "dual.yaml")
    assert two.exit_code == 0 and two.fabric.facts["roce-p1"]["leaf_up"] == 16


def test_a_nics_two_ports_land_in_two_planes_on_two_leaves():
    """Port i of a node goes to plane i % 2 (as its rail i // 2 there): NIC n's ports 2n and 2n+1 reach
    two different leaves of two different planes (HPN's dual ToR), and no switch is in both planes."""
    f = _dual().fabric
    t = f.links
    leaf_of: dict[tuple[int, int], tuple[str, int]] = {}
    for name in ("roce-p1", "roce-p2"):
        for i in t.indices_of(name):
            a, b = f.devices[t.a[i]], f.devices[t.b[i]]
            if a.role == "node":
                leaf_of[(a.index, t.a_port[i])] = (name, b.index)
            elif b.role == "node":
                leaf_of[(b.index, t.b_port[i])] = (name, a.index)
    data = f.layouts["hgx-b300-2x400g"].ports_of("data")
    nodes = [d for d in f.devices if d.role == "node"]
    assert len(leaf_of) == len(nodes) * len(data)
    for d in nodes:
        for q, port in enumerate(data):
            assert leaf_of[(d.index, port)][0] == f"roce-p{q % 2 + 1}"
        for n in range(len(data) // 2):
            (pa, la), (pb, lb) = leaf_of[(d.index, data[2 * n])], leaf_of[(d.index, data[2 * n + 1])]
            assert pa != pb and la != lb
    groups = {name: {d.index for d in f.devices if d.group == name} for name in ("roce-p1", "roce-p2")}
    assert groups["roce-p1"] and not groups["roce-p1"] & groups["roce-p2"]
    for i in t.indices_of("roce-p1"):
        assert t.a[i] not in groups["roce-p2"] and t.b[i] not in groups["roce-p2"]


def test_each_plane_takes_its_half_of_the_pools_and_asns():
    f = _dual().fabric
    halves = {"roce-p1": ("10.0.0.0/25", 4200000000, 4200000499), "roce-p2": ("10.0.0.128/25", 4200000500, 4200000999)}
    seen: set[str] = set()
    for name, (pool, lo, hi) in halves.items():
        eth = f.facts[name]["ethernet"]
        assert eth["addressing"]["loopbacks"] == pool
        for d in f.devices:
            if d.group != name:
                continue
            assert ipaddress.ip_interface(d.attrs["loopback"]).ip in ipaddress.ip_network(pool)
            assert lo <= d.attrs["asn"] <= hi
            assert d.attrs["loopback"] not in seen
            seen.add(d.attrs["loopback"])


@cache
def _dual_sonic() -> dict[str, dict]:
    artifacts, _ = render(_dual(), ["sonic"])
    return {p: json.loads(b) for p, b in artifacts.items() if p.startswith("sonic/roce-")}


@pytest.mark.parametrize(
    "which",
    [
        pytest.param(("sonic/roce-p2-leaf-su001-01.json", "sonic/roce-p2-spine-001.json"), id="plane-2-leaf-and-spine"),
        pytest.param(None, id="every-switch", marks=pytest.mark.slow),
    ],
)
def test_dual_plane_switch_configs_pass_the_sonic_models(which):
    libyang = pytest.importorskip("libyang", reason="PyPI libyang (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    configs = _dual_sonic()
    assert len(configs) == 2 * (8 + 8)
    for path, cfg in sorted(configs.items()):
        if which is None or path in which:
            try:
                validate(cfg)
            except libyang.LibyangError as exc:
                pytest.fail(f"{path}: {exc}")
        plane = path.split("/")[1][: len("roce-p1")]
        # BGP peers only inside the plane: every neighbour name is a switch of the same plane.
        assert all(n["name"].startswith(plane + "-") for n in cfg["BGP_NEIGHBOR"].values())


def test_ports_that_do_not_split_over_the_planes_are_a_located_error():
    c = compile_text(DUAL.read_text().replace("planes: 2", "planes: 3"), "dual.yaml")
    [e] = _errors(c, "scaleout-planes")
    assert "16 data ports" in e.message and e.path == ("scaleout", 0, "planes")
    assert e.location is not None and e.location.line == DUAL.read_text().splitlines().index("    planes: 2") + 1


def test_a_plane_name_taken_by_another_fabric_is_refused():
    text = DUAL.read_text().replace("  - name: gpu\n", "  - name: roce-p2\n").replace("group: gpu", "group: roce-p2")
    c = compile_text(text, "dual.yaml")
    assert c.exit_code != 0 and any("roce-p2" in x.message for x in c.findings if x.severity == "error")


# -- planed second scale-up level -------------------------------------------------------------------


def test_matrix_counts_follow_the_formulas():
    """16 supernodes x 16 boards x 8 = 2,048 accelerators; L1 chips 16 x (8 boards x 2) = 256; planes
    = chips per supernode = 16; per plane 16 L1 chips x 32 uplinks over s L2 switches of one
    Tomahawk 6 (128 ports) with p parallel links: the fewest with 32 % s == 0 and 16 x 32 / s <= 128
    is s = 4, so p = 8; L2 switches 16 x 4 = 64, chips 64; L1-L2 links 256 x 32 = 8,192 = 64 x 128."""
    f = _matrix().fabric
    m = f.facts["matrix"]
    assert m["accelerators"] == 16 * 16 * 8 == 2048
    assert m["l1_chips"] == 256 and m["planes"] == 16
    assert m["l2_switches"] == 64 and m["l2_switches_per_plane"] == 4 and m["l2_chips"] == 64
    assert m["parallel"] == 8 and m["l2_chip_ports_used"] == 128
    assert len(f.links.indices_of("matrix")) == 256 * 32 == 64 * 128


def test_matrix_plane_c_joins_chip_c_of_every_supernode():
    """Read back from the links: an L1 chip's uplinks reach only L2 switches of plane board x 2 + chip,
    and every plane's L2 chips see one L1 chip of each of the 16 supernodes, 8 links each."""
    f = _matrix().fabric
    t = f.links
    up = f.layouts["oex-sb2-up"].ports_of("uplink")
    per_chip = len(up) // 2
    chip_of = {port: k // per_chip for k, port in enumerate(up)}
    l2_ports = f.layouts["th6-l2-switch"].ports_of("scaleup")
    l2_chip_of = {port: k // 128 for k, port in enumerate(l2_ports)}
    reach: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    for i in t.indices_of("matrix"):
        a, b, ap, bp = t.a[i], t.b[i], t.a_port[i], t.b_port[i]
        if f.devices[a].role != "switch-board":
            a, b, ap, bp = b, a, bp, ap
        key, l2 = (a, chip_of[ap]), (b, l2_chip_of[bp])
        reach.setdefault(key, {})[l2] = reach.setdefault(key, {}).get(l2, 0) + 1
    assert len(reach) == 256
    members: dict[int, set[int]] = {}
    for (board, chip), l2s in reach.items():
        plane = f.devices[board].coord("switch_board") * 2 + chip
        assert {f.devices[d].coord("plane") for d, _ in l2s} == {plane}
        assert len(l2s) == 4 and set(l2s.values()) == {8}
        members.setdefault(plane, set()).add(f.devices[board].coord("supernode"))
    assert sorted(members) == list(range(16)) and all(s == set(range(16)) for s in members.values())
    assert not _errors(_matrix(), "scaleup-l2-reach")


def test_the_matrix_without_planes_does_not_spread():
    """Flat, one L2 chip would take all 256 L1 chips (256 x 800G = 204.8 Tb/s): no count of 64-port
    L2 switches spreads them, and the hint names planes."""
    text = MATRIX.read_text().replace("    planes: true       # plane c: L1 chip c of every supernode\n", "")
    text = text.replace("    switches: 4        # per plane\n", "")
    c = compile_text(text, "matrix.yaml")
    [e] = _errors(c, "scaleup-spread")
    assert "256 L1 chips" in e.message and "planes: true" in e.hint


# -- switch chips against their ASIC ------------------------------------------------------------------

_HYPOTHETICAL = """
catalogue:
  devices:
    olink-l2-switch:
      switch_chips: {count: 2, ports_per_chip: 256, model: CHIP}
      ports:
        - {role: scaleup, count: 512, speed_gbps: 800, lanes: 4, cage: osfp, name: "c{chip}p{chipport}"}
        - {role: mgmt, count: 1, speed_gbps: 1, lanes: 1, cage: rj45, name: mgmt0}
"""


@pytest.mark.parametrize(
    "chip, says",
    [("olink-switch-l2", "its ASIC olink-switch-l2 switches 51.2 Tb/s"), ("mystery-chip", "the largest switch chip")],
)
def test_a_204t_chip_is_a_located_error(chip, says):
    """The L2 switch of blueprints/supercluster-2level.yaml with 256 x 800G per chip: 204.8 Tb/s on one
    chip, rejected against its own ASIC or, naming an unknown chip, against the largest in the catalogue."""
    text = (BLUEPRINTS / "supercluster-2level.yaml").read_text() + _HYPOTHETICAL.replace("CHIP", chip)
    c = compile_text(text, "sc.yaml")
    [e] = _errors(c, "switch-bandwidth")
    assert "204.8 Tb/s per chip" in e.message and says in e.message
    assert e.path[:3] == ("catalogue", "devices", "olink-l2-switch")


def test_a_switch_over_its_lanes_is_an_error():
    text = (BLUEPRINTS / "small-ib.yaml").read_text() + (
        "\ncatalogue:\n  asics:\n    quantum-2: {description: test, capacity_gbps: 25600, serdes_lanes: 128, "
        "sources: [{ref: test, grade: ILLUSTRATIVE}]}\n"
    )
    c = compile_text(text, "ib.yaml")
    errors = _errors(c, "switch-bandwidth")
    assert errors and all("256 lanes" in e.message and "128 SerDes lanes" in e.message for e in errors)


# -- the whole render, with the real consumers at hand ---------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("blueprint", [DUAL, MATRIX], ids=["roce-dual-plane", "nebula-matrix-2048"])
def test_planed_blueprints_render_and_dot_draws_their_diagrams(blueprint, tmp_path):
    import shutil
    import subprocess

    from click.testing import CliRunner

    from supernodeiac.cli import main

    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", str(blueprint), "-o", str(out)])
    assert result.exit_code == 0, result.output
    dots = sorted((out / "diagrams").glob("*.dot"))
    names = {p.stem for p in dots}
    assert {"roce-p1", "roce-p2"} <= names if blueprint == DUAL else {"matrix", "ib"} <= names
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("graphviz dot not installed")
    for p in dots:
        subprocess.run([dot, "-Tsvg", "-o", str(p.with_suffix(".check.svg")), str(p)], check=True, timeout=120)
