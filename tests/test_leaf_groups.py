"""Per-group leaf models in one fat tree (issue 21): GPU servers on 400G-down leaves and NPU servers
on 200G-down leaves, all under the same spines (tests/data/gpu-npu-roce.yaml, whose header states
the formulas). Counts against the formulas, both ends of the links, the addresses keyed by each
set's own coordinates, the SONiC configs against the real YANG models, and every reference in
'leaves' refused at its line."""

from __future__ import annotations

import ipaddress
import json
import math
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import compile_text

from supernodeiac.facts.host_addresses import HostAddresses
from supernodeiac.facts.link_addresses import LinkAddresses
from supernodeiac.pipeline import compile_file, render

BLUEPRINT = Path(__file__).parent / "data" / "gpu-npu-roce.yaml"
TEXT = BLUEPRINT.read_text()

# The design, as the blueprint's header derives it.
RAILS, SPINE_PORTS, UP_GBPS = 8, 128, 400
GROUPS = {  # group: (servers, SU slots, planned SUs, leaf down ports, down-port speed, leaf model)
    "gpu": (32, 32, 2, 64, 400, "sn5600-128x400g"),
    "npu": (32, 48, 1, 64, 200, "sn5600-64x200g-64x400g"),
}


@cache
def _compiled():
    c = compile_file(str(BLUEPRINT))
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    return c


def _uplinks(group: str) -> int:
    _, su, _, _, gbps, _ = GROUPS[group]
    return math.ceil(su * gbps / UP_GBPS)  # 1:1 in bandwidth over the planned SU's down ports in use


def _spines() -> tuple[int, dict[str, int]]:
    """The fewest spines S dividing every set's uplinks whose planned leaves fit a spine; links per pair."""
    ups = {g: _uplinks(g) for g in GROUPS}
    planned = {g: RAILS * GROUPS[g][2] for g in GROUPS}
    common = math.gcd(*ups.values())
    s = next(n for n in range(1, common + 1) if common % n == 0 and sum(planned[g] * ups[g] // n for g in GROUPS) <= SPINE_PORTS)
    return s, {g: ups[g] // s for g in GROUPS}


def _leaves(group: str) -> list:
    f = _compiled().fabric
    want = "roce-leaf-npu-" if group == "npu" else "roce-leaf-su"
    return [d for d in f.devices if d.role == "leaf" and d.name.startswith(want)]


def test_counts_follow_the_formulas():
    f = _compiled().fabric
    facts = f.facts["roce"]
    spines, parallel = _spines()
    assert (spines, parallel) == (8, {"gpu": 4, "npu": 3})  # the header's numbers, from the formula
    sets = {s["group"] or "gpu": s for s in facts["leaf_sets"]}
    assert list(sets) == ["gpu", "npu"]
    for group, (servers, su, planned_sus, down, gbps, model) in GROUPS.items():
        leaves = _leaves(group)
        assert len(leaves) == math.ceil(servers / su) * RAILS
        assert {d.model for d in leaves} == {model}
        s = sets[group]
        assert (s["switch"], s["leaf_down"], s["leaf_up"], s["down_gbps"]) == (model, down, _uplinks(group), gbps)
        assert s["leaf_spine_parallel"] == parallel[group] and s["planned_sus"] == planned_sus
    assert facts["spines"] == spines and len([d for d in f.devices if d.role == "spine"]) == spines
    assert facts["nodes"] == sum(g[0] for g in GROUPS.values())
    assert facts["leaves"] == sum(len(_leaves(g)) for g in GROUPS)
    # spine ports at the planned size: every planned leaf x its links per spine
    assert facts["spine_down_used"] == sum(RAILS * GROUPS[g][2] * parallel[g] for g in GROUPS)


def links_by_tier_and_speed(f, fabric: str = "roce") -> Counter[tuple[str, float]]:
    """The fabric's links counted by (tier, Gb/s)."""
    t = f.links
    by: Counter[tuple[str, float]] = Counter()
    for i in t.indices_of(fabric):
        spec = t.specs[t.spec[i]]
        by[(spec.tier, spec.gbps)] += 1
    return by


def test_cables_per_speed_and_tier():
    """Host links: one per data port at the group's speed; leaf-spine links: leaves x uplinks at 400G."""
    by = links_by_tier_and_speed(_compiled().fabric)
    servers = {g: GROUPS[g][0] for g in GROUPS}
    up = sum(len(_leaves(g)) * _uplinks(g) for g in GROUPS)
    assert by == Counter(
        {
            ("node-leaf", 400.0): servers["gpu"] * RAILS,
            ("node-leaf", 200.0): servers["npu"] * RAILS,
            ("leaf-spine", 400.0): up,
        }
    )
    assert (servers["gpu"] * RAILS, servers["npu"] * RAILS, up) == (256, 256, 448)


def test_both_ends_every_leaf_reaches_every_spine_on_its_own_run_of_spine_ports():
    """Each leaf of set g sends p_g links to every spine; set g's leaves take spine down ports from
    the planned ports of the sets before it (GPU: 16 planned leaves x 4 = ports 0-63), leaf at
    position pos on spine ports offset + pos x p_g .. + p_g - 1; a host link joins a node of the
    group to its own set's leaf."""
    f = _compiled().fabric
    t = f.links
    _, parallel = _spines()
    spine_data = f.layouts["sn5600-128x400g"].ports_of("data")
    offsets = {"gpu": 0, "npu": RAILS * GROUPS["gpu"][2] * parallel["gpu"]}
    node_group = {d.index: d.name.split("-")[0] for d in f.devices if d.role == "node"}
    ups: dict[int, Counter[int]] = {}
    spine_ports: dict[int, set[int]] = {}
    host_leaf_groups: Counter[tuple[str, str]] = Counter()
    leaf_group = {d.index: g for g in GROUPS for d in _leaves(g)}
    for i in t.indices_of("roce"):
        a, b = f.devices[t.a[i]], f.devices[t.b[i]]
        if {a.role, b.role} == {"leaf", "spine"}:
            leaf, spine, sport = (a, b, t.b_port[i]) if a.role == "leaf" else (b, a, t.a_port[i])
            ups.setdefault(leaf.index, Counter())[spine.index] += 1
            spine_ports.setdefault(leaf.index, set()).add(spine_data.index(sport))
        elif {a.role, b.role} == {"leaf", "node"}:
            leaf, node = (a, b) if a.role == "leaf" else (b, a)
            host_leaf_groups[(node_group[node.index], leaf_group[leaf.index])] += 1
    assert set(host_leaf_groups) == {("gpu", "gpu"), ("npu", "npu")}
    for group in GROUPS:
        p = parallel[group]
        for pos, leaf in enumerate(_leaves(group)):
            assert set(ups[leaf.index].values()) == {p} and len(ups[leaf.index]) == _spines()[0]
            first = offsets[group] + pos * p
            assert spine_ports[leaf.index] == set(range(first, first + p))


def test_addresses_are_keyed_by_each_sets_own_coordinates():
    """The NPU set starts after the GPU set's planned leaves: leaf index 16, p2p block 16 x 32,
    host block 16 x 64; each leaf's host subnet summarises to its own down ports, and every link's
    addresses are unique."""
    f = _compiled().fabric
    gpu_planned = RAILS * GROUPS["gpu"][2]
    for group, first in (("gpu", 0), ("npu", gpu_planned)):
        for k, leaf in enumerate(_leaves(group)):
            assert leaf.attrs["asn"] == 4200000000 + first + k
            assert leaf.attrs["loopback"] == f"{ipaddress.ip_address('10.0.0.1') + first + k}/32"
            p2p_first = 0 if group == "gpu" else gpu_planned * _uplinks("gpu")
            assert leaf.attrs["p2p_block"] == p2p_first + k * _uplinks(group)
            assert leaf.attrs["host_block"] == (first + k) * 64  # both models have 64 down ports
    hosts = HostAddresses(f, "roce")
    links = LinkAddresses(f, "roce")
    positions = f.links.indices_of("roce")
    a_host, b_host = hosts.bulk(positions)
    a_link, b_link = links.bulk(positions)
    got = [x for x in a_host + b_host + a_link + b_link if x is not None]
    assert len(got) == 2 * len(positions) and len(set(got)) == len(got)
    # one by one agrees with the bulk path, for a link of each kind and set
    t = f.links
    for i, pos in enumerate(positions):
        pair = hosts.pair(t.a[pos], t.a_port[pos], t.b[pos], t.b_port[pos]) or links.pair(
            t.a[pos], t.a_port[pos], t.b[pos], t.b_port[pos]
        )
        assert pair == ((a_host[i], b_host[i]) if a_host[i] else (a_link[i], b_link[i]))
    npu0 = _leaves("npu")[0]
    assert hosts.summary(npu0.index) == [str(ipaddress.ip_network(f"10.128.{gpu_planned * 64 * 2 // 256}.0/25"))]
    facts = f.facts["roce"]["ethernet"]["addressing"]
    assert facts["p2p_needed_planned"] == sum(RAILS * GROUPS[g][2] * _uplinks(g) for g in GROUPS)
    assert facts["hosts_needed_planned"] == sum(RAILS * GROUPS[g][2] * 64 for g in GROUPS)


def test_sus_count_on_across_the_sets():
    """The NPU set's SU is the fabric's SU 3 (after the GPU set's 2 planned): its leaves' names,
    SU coordinate and the hosts' leaf groups (the schedulers' SU labels) never share an SU number."""
    from supernodeiac.facts.hosts import cached_host_facts

    c = _compiled()
    f = c.fabric
    first_npu_su = GROUPS["gpu"][2]
    assert {d.coord("su") for d in _leaves("gpu")} == {0} and {d.coord("su") for d in _leaves("npu")} == {first_npu_su}
    assert all(d.name.startswith(f"roce-leaf-npu-su{first_npu_su + 1:03d}-") for d in _leaves("npu"))
    groups = cached_host_facts(f, c.blueprint).fabrics["roce"]
    names = {f.devices[h].name.split("-")[0]: g.name for g in groups.leaf_groups for h in g.hosts}
    assert names == {"gpu": "roce-su001", "npu": f"roce-su{first_npu_su + 1:03d}"}


def test_no_oversubscription_or_intent_finding():
    c = _compiled()
    assert not [x for x in c.findings if x.rule in ("oversubscription", "ratio-intent") and x.severity != "info"]
    assert not [x for x in c.findings if x.severity == "warning"], [x.message for x in c.findings if x.severity == "warning"]


@cache
def _sonic() -> dict[str, dict]:
    artifacts, _ = render(_compiled(), ["sonic"])
    return {p: json.loads(b) for p, b in artifacts.items() if p.startswith("sonic/roce-")}


def test_sonic_configs_run_each_leafs_own_speeds_and_pass_the_sonic_models():
    libyang = pytest.importorskip("libyang", reason="PyPI libyang (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    configs = _sonic()
    assert len(configs) == 8 + 8 + 8
    npu, gpu, spine = (
        configs["sonic/roce-leaf-npu-su003-01.json"],
        configs["sonic/roce-leaf-su001-01.json"],
        configs["sonic/roce-spine-001.json"],
    )
    for name, cfg in (("npu", npu), ("gpu", gpu), ("spine", spine)):
        try:
            validate(cfg)
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")
    # NPU leaf: its 64 host ports at 200G, its 24 cabled uplinks at 400G, with BGP to every spine
    speeds = Counter((p["speed"], p["admin_status"]) for p in npu["PORT"].values())
    assert speeds[("200000", "up")] == GROUPS["npu"][0] and speeds[("400000", "up")] == _uplinks("npu")
    assert Counter((p["speed"], p["admin_status"]) for p in gpu["PORT"].values())[("400000", "up")] == 32 + 32
    assert len(npu["BGP_NEIGHBOR"]) == _uplinks("npu") and len(gpu["BGP_NEIGHBOR"]) == _uplinks("gpu")
    assert len(spine["BGP_NEIGHBOR"]) == sum(len(_leaves(g)) * _spines()[1][g] for g in GROUPS)


# -- references at their lines --------------------------------------------------------------------

LEAVES_LINE = "      npu: {switch: sn5600-64x200g-64x400g, down_gbps: 200, su_nodes: 48}"


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def _error(text: str, rule: str):
    c = compile_text(text, "gpu-npu.yaml")
    errors = [x for x in c.findings if x.severity == "error"]
    assert [x.rule for x in errors] == [rule], [x.message for x in errors]
    return errors[0]


def test_an_unknown_leaf_model_is_located_with_the_nearest_names():
    text = TEXT.replace(LEAVES_LINE, LEAVES_LINE.replace("sn5600-64x200g-64x400g", "sn5600-64x200g-64x40g"))
    e = _error(text, "unknown-catalogue-item")
    assert e.path == ("scaleout", 0, "leaves", "npu", "switch") and "sn5600-64x200g-64x400g" in e.hint
    assert e.location is not None and e.location.line == _line_of(text, "npu: {switch")


def test_a_leaf_whose_cages_cannot_run_the_asked_speed_is_located():
    text = TEXT.replace(LEAVES_LINE, LEAVES_LINE.replace("sn5600-64x200g-64x400g", "sn5600-128x400g"))
    e = _error(text, "leaf-speed")
    assert e.path == ("scaleout", 0, "leaves", "npu", "down_gbps")
    assert "400G" in e.message and "sn5600-64x200g-64x400g" in e.hint
    assert e.location is not None and e.location.line == _line_of(text, "npu: {switch")


def test_a_leaves_key_that_is_no_endpoint_group_is_located_with_did_you_mean():
    text = TEXT.replace("      npu: {switch", "      npus: {switch")
    e = _error(text, "unknown-reference")
    assert e.path == ("scaleout", 0, "leaves", "npus") and "npu" in e.hint
    assert e.location is not None and e.location.line == _line_of(text, "npus: {switch")


def test_leaf_sets_build_in_three_tiers_each_set_in_pods_of_its_own():
    """Leaf sets are no longer refused in 3 tiers (tests/test_leaf_groups_3tier.py holds the full
    design): this fabric at 3 tiers puts the GPU set's 2 planned SUs and the NPU SU in a pod each,
    8 spines per pod (gcd(32, 24)), the pods under the same cores. What stays refused is located
    there: sets whose uplink counts give no pod shape every set's SU fits (pod-size), and cores
    too small for every set's planned pods (topology-too-big)."""
    text = TEXT.replace("    tiers: 2\n", "    tiers: 3\n").replace(
        "      spine: {row: NS, per_rack: 4, first_u: 2}",
        "      spine: {row: NS, per_rack: 8, first_u: 2}\n      core: {row: NS, first_rack: 3, per_rack: 8, first_u: 2}",
    )
    text = text.replace("first_rack: 3, per_rack: 1, first_u: 2}", "first_rack: 3, per_rack: 1, first_u: 40}")
    c = compile_text(text.replace("p2p: 10.64.0.0/21 ", "p2p: 10.64.0.0/20 "), "g3.yaml")  # + 16 spines' uplinks
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    facts = c.fabric.facts["roce"]
    assert [(s["group"], s["pods"]["first"], s["pods"]["planned"]) for s in facts["leaf_sets"]] == [(None, 0, 1), ("npu", 1, 1)]
    assert (facts["spines_per_pod"], facts["spines"]) == (8, 16)


def test_spines_too_small_for_the_sets_is_a_located_error():
    """Grown to 5 GPU SUs, (40 x 32 + 8 x 24) / 8 = 184 ports per spine at the most spines: too big."""
    text = TEXT.replace("    grow_to_sus: 2\n", "    grow_to_sus: 5\n")
    e = _error(text, "topology-too-big")
    assert e.path == ("scaleout", 0, "leaves") and "128" in e.message


def test_a_fabric_without_leaves_builds_as_before():
    """The same servers without 'leaves': one leaf model for both groups (the NPU ports at 200G into
    400G ports), no leaf_sets facts, one ASN run."""
    text = TEXT.replace(LEAVES_LINE + "\n", "").replace("    leaves:\n", "")
    c = compile_text(text, "one-model.yaml")
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    facts = c.fabric.facts["roce"]
    assert "leaf_sets" not in facts and {d.model for d in c.fabric.devices if d.role == "leaf"} == {"sn5600-128x400g"}
    assert facts["leaves"] == math.ceil(64 / 32) * RAILS


def test_growth_is_the_planned_sizes_of_every_set_together():
    """Without re-cabling the fabric reaches each set's planned SUs (GPU 2 x 32, NPU 1 x 48 slots):
    the spine ports beyond the plan are spare for one set or another, not for all at once."""
    facts = _compiled().fabric.facts["roce"]
    assert facts["max_nodes"] == sum(GROUPS[g][1] * GROUPS[g][2] for g in GROUPS) == 112
    assert facts["max_leaves"] == sum(RAILS * GROUPS[g][2] for g in GROUPS)
    assert facts["max_endpoint_ports"] == sum(RAILS * GROUPS[g][2] * GROUPS[g][3] for g in GROUPS)


def test_a_declared_2_to_1_halves_every_sets_uplinks_in_bandwidth():
    """2:1 in bandwidth: GPU 32 x 400 / 2 / 400 = 16 uplinks, NPU 48 x 200 / 2 / 400 = 12; spines:
    gcd 4, (16 x 16 + 8 x 12) / S <= 128 gives S = 4 (GPU 4, NPU 3 links per spine); the measured
    ratio and the collectives' taper are 2:1 for both sets."""
    from supernodeiac.facts.collectives import taper
    from supernodeiac.facts.oversubscription import measure

    c = compile_text(TEXT.replace('oversubscription: {leaf: "1:1"}', 'oversubscription: {leaf: "2:1"}'), "two.yaml")
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    sets = {s["group"] or "gpu": s for s in c.fabric.facts["roce"]["leaf_sets"]}
    assert (sets["gpu"]["leaf_up"], sets["npu"]["leaf_up"]) == (16, 12)
    assert c.fabric.facts["roce"]["spines"] == 4
    assert (sets["gpu"]["leaf_spine_parallel"], sets["npu"]["leaf_spine_parallel"]) == (4, 3)
    assert taper(c.fabric, "roce") == 2.0 and taper(_compiled().fabric, "roce") == 1.0
    assert measure(c.fabric, "roce")[1] == 2
    assert not [x for x in c.findings if x.rule in ("oversubscription", "ratio-intent") and x.severity != "info"]


def test_a_leaf_of_two_speeds_tapers_by_bandwidth_not_ports():
    """roce-dual-plane's leaves: 64 x 400G down over 32 x 800G up is 1:1, not the 2:1 a port count gives."""
    from supernodeiac.facts.collectives import taper

    c = compile_file(str(Path(__file__).parent / "data" / "roce-dual-plane.yaml"))
    facts = c.fabric.facts["roce-p1"]
    assert facts["leaf_down"] / facts["leaf_up"] == 2 and taper(c.fabric, "roce-p1") == 1.0


def test_leaf_sets_in_every_plane():
    """planes: 2 splits each server's 8 ports over two planes (4 rails each): every plane has both
    leaf sets, 4 leaves each, under spines of its own, and the address checks find nothing twice."""
    c = compile_text(TEXT.replace("    tiers: 2\n", "    tiers: 2\n    planes: 2\n"), "planes.yaml")
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    for plane in ("roce-p1", "roce-p2"):
        sets = c.fabric.facts[plane]["leaf_sets"]
        assert [(s["group"], s["switch"], s["leaves"]) for s in sets] == [
            (None, "sn5600-128x400g", RAILS // 2),
            ("npu", "sn5600-64x200g-64x400g", RAILS // 2),
        ]
    assert not [x for x in c.findings if x.rule.startswith("address") and x.severity != "info"]
