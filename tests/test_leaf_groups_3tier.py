"""Per-group leaf models in a 3-tier fat tree (issue 21): tests/data/gpu-npu-roce-3tier.yaml, GPU
servers on 400G-down leaves and NPU servers on 200G-down leaves, each set in pods of its own, all
pods under the same cores. The formulas (the blueprint's header states them), per set g with n_g
servers, r = 8 rails, su_g slots, planned SUs G_g, down speed v_g, 400G uplinks, 1:1 at both tiers,
spines of D = 64 down ports, cores of K = 128 ports:

* leaves_g = ceil(n_g / su_g) x r; uplinks_g u_g = ceil(su_g x v_g / 400)             (32, 24)
* spines per pod S = gcd(u_g) (the planes every pod has)                               8
* links per leaf and spine p1_g = u_g / S                                              (4, 3)
* leaves per pod L_g = floor(D / p1_g / r) x r: whole SUs of one set                   (16, 16)
* pods_g = ceil(SUs_g / (L_g / r)), planned ceil(G_g / (L_g / r))            built (1, 1), planned (2, 2)
* spine uplinks w_g = L_g x p1_g                                                       (64, 48)
* cores per plane C = the smallest divisor of gcd(w_g) with sum(planned pods_g x w_g) / C <= K: 2
* cores = S x C = 16; links per spine and core p2_g = w_g / C                          (32, 24)
* links: host n_g x r per set; leaf-spine sum(leaves_g x u_g); spine-core sum(pods_g x S x w_g)

Each set keeps its own run of coordinates (leaf index, SU and pod numbers, spines, core ports,
addresses), so growing one set moves nothing of the other."""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import compile_text
from test_growth import _compile, sub_fabric_problems
from test_leaf_groups import _error, links_by_tier_and_speed  # as in 2 tiers

from supernodeiac.facts.link_addresses import LinkAddresses
from supernodeiac.load.source import load_file
from supernodeiac.pipeline import compile_file, render

BLUEPRINT = Path(__file__).parent / "data" / "gpu-npu-roce-3tier.yaml"
TEXT = BLUEPRINT.read_text()

RAILS, SPINE_DOWN, CORE_PORTS, UP_GBPS = 8, 64, 128, 400
GROUPS = {  # group: (servers, SU slots, planned SUs, down-port speed, leaf model, leaf name prefix)
    "gpu": (32, 32, 4, 400, "sn5600-128x400g", "roce-leaf-su"),
    "npu": (32, 48, 3, 200, "sn5600-64x200g-64x400g", "roce-leaf-npu-"),
}


@cache
def _compiled():
    c = compile_file(str(BLUEPRINT))
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    return c


def _shape() -> dict[str, dict[str, int]]:
    """Every figure of the docstring's formulas, per set."""
    out: dict[str, dict[str, int]] = {}
    ups = {g: math.ceil(su * v / UP_GBPS) for g, (_, su, _, v, _, _) in GROUPS.items()}
    s = math.gcd(*ups.values())
    for g, (n, su, planned, _, _, _) in GROUPS.items():
        p1 = ups[g] // s
        per_pod = SPINE_DOWN // p1 // RAILS * RAILS
        sus_per_pod = per_pod // RAILS
        sus = math.ceil(n / su)
        out[g] = {
            "leaves": sus * RAILS,
            "up": ups[g],
            "S": s,
            "p1": p1,
            "per_pod": per_pod,
            "pods": math.ceil(sus / sus_per_pod),
            "planned_pods": math.ceil(planned / sus_per_pod),
            "w": per_pod * p1,
        }
    common = math.gcd(*(x["w"] for x in out.values()))
    c = next(
        c
        for c in range(1, common + 1)
        if common % c == 0 and sum(x["planned_pods"] * x["w"] // c for x in out.values()) <= CORE_PORTS
    )
    for x in out.values():
        x["C"], x["p2"] = c, x["w"] // c
    return out


def _leaves(f, group: str) -> list:
    return [d for d in f.devices if d.role == "leaf" and d.name.startswith(GROUPS[group][5])]


def test_counts_follow_the_formulas():
    f = _compiled().fabric
    facts = f.facts["roce"]
    shape = _shape()
    assert {g: (x["S"], x["p1"], x["per_pod"], x["w"], x["C"], x["p2"]) for g, x in shape.items()} == {
        "gpu": (8, 4, 16, 64, 2, 32),
        "npu": (8, 3, 16, 48, 2, 24),
    }  # the header's numbers, from the formulas
    sets = {s["group"] or "gpu": s for s in facts["leaf_sets"]}
    for g, x in shape.items():
        leaves = _leaves(f, g)
        assert len(leaves) == x["leaves"] and {d.model for d in leaves} == {GROUPS[g][4]}
        s = sets[g]
        assert (s["leaf_up"], s["leaf_spine_parallel"]) == (x["up"], x["p1"])
        pods = s["pods"]
        assert (pods["leaves_per_pod"], pods["built"], pods["planned"]) == (x["per_pod"], x["pods"], x["planned_pods"])
        assert (pods["spine_up"], pods["spine_core_parallel"]) == (x["w"], x["p2"])
    built_pods = sum(x["pods"] for x in shape.values())
    spines = [d for d in f.devices if d.role == "spine"]
    cores = [d for d in f.devices if d.role == "core"]
    assert facts["spines_per_pod"] == 8 and facts["cores_per_plane"] == 2
    assert len(spines) == facts["spines"] == built_pods * 8 == 16
    assert len(cores) == facts["cores"] == 8 * 2 == 16
    assert facts["pods"] == built_pods and facts["planned_pods"] == sum(x["planned_pods"] for x in shape.values()) == 4
    assert facts["ports_planned"]["core"] == sum(x["planned_pods"] * x["p2"] for x in shape.values()) == 112


def test_links_per_tier_and_speed():
    by = links_by_tier_and_speed(_compiled().fabric)
    shape = _shape()
    assert by == Counter(
        {
            ("node-leaf", 400.0): GROUPS["gpu"][0] * RAILS,
            ("node-leaf", 200.0): GROUPS["npu"][0] * RAILS,
            ("leaf-spine", 400.0): sum(x["leaves"] * x["up"] for x in shape.values()),
            ("spine-core", 400.0): sum(x["pods"] * x["S"] * x["w"] for x in shape.values()),
        }
    )
    assert by[("leaf-spine", 400.0)] == 448 and by[("spine-core", 400.0)] == 896


def test_each_pod_is_one_set_and_every_plane_reaches_every_core_of_it():
    """A pod's spines see leaves of one model only, p1_g links from each; the plane-j spine of every
    pod of every set sends p2_g links to each core of plane j, set g's pods on core ports from the
    planned pods of the sets before it (GPU: 2 planned pods x 32 = ports 0-63)."""
    f = _compiled().fabric
    t = f.links
    shape = _shape()
    core_data = f.layouts["sn5600-128x400g"].ports_of("data")
    group_of = {d.index: g for g in GROUPS for d in _leaves(f, g)}
    pod_models: dict[int, set[str]] = {}
    leaf_links: dict[tuple[int, int], int] = Counter()
    spine_core: dict[tuple[int, int], int] = Counter()
    core_ports: dict[int, set[int]] = {}
    for i in t.indices_of("roce"):
        a, b = f.devices[t.a[i]], f.devices[t.b[i]]
        roles = {a.role, b.role}
        if roles == {"leaf", "spine"}:
            leaf, spine = (a, b) if a.role == "leaf" else (b, a)
            pod_models.setdefault(spine.index, set()).add(group_of[leaf.index])
            leaf_links[(leaf.index, spine.index)] += 1
        elif roles == {"spine", "core"}:
            spine, core, cport = (a, b, t.b_port[i]) if a.role == "spine" else (b, a, t.a_port[i])
            assert spine.coord("plane") == core.coord("plane")
            spine_core[(spine.index, core.index)] += 1
            core_ports.setdefault(spine.index, set()).add(core_data.index(cport))
    assert all(len(g) == 1 for g in pod_models.values()) and len(pod_models) == 16
    for g, x in shape.items():
        assert {n for (leaf, _), n in leaf_links.items() if group_of[leaf] == g} == {x["p1"]}
        set_spines = [s for s, gs in pod_models.items() if gs == {g}]
        assert len(set_spines) == x["pods"] * x["S"]
        first = 0 if g == "gpu" else shape["gpu"]["planned_pods"] * shape["gpu"]["p2"]
        for s in set_spines:
            got = {n for (sp, _), n in spine_core.items() if sp == s}
            assert got == {x["p2"]} and sum(1 for sp, _ in spine_core if sp == s) == x["C"]
            assert core_ports[s] == set(range(first, first + x["p2"]))  # the set's first pod
    pods = {g: sorted({f.devices[s].coord("pod") for s, gs in pod_models.items() if gs == {g}}) for g in GROUPS}
    assert pods == {"gpu": [0], "npu": [shape["gpu"]["planned_pods"]]}  # the NPU set's pods count on after the GPU plan


def test_addresses_are_unique_and_keyed_by_each_sets_runs():
    """Loopbacks, ASNs and point-to-point blocks: the NPU spines are the fabric's spines 16 on (2
    planned GPU pods x 8), in pod 2's ASN, their uplink blocks after the GPU spines' planned ones."""
    f = _compiled().fabric
    spines = {d.name: d for d in f.devices if d.role == "spine"}
    npu0 = spines["roce-spine-p03-01"]
    asn_last = 4200000999
    assert npu0.attrs["asn"] == asn_last - 1 - 2
    assert spines["roce-spine-p01-01"].attrs["asn"] == asn_last - 1
    blocks = 4096  # 10.64.0.0/19 in /31s
    gpu_spine_blocks = 2 * 8 * 64
    assert npu0.attrs["p2p_block"] == blocks - gpu_spine_blocks - 48
    links = LinkAddresses(f, "roce")
    positions = f.links.indices_of("roce")
    a, b = links.bulk(positions)
    got = [x for x in a + b if x is not None]
    assert len(got) == 2 * (448 + 896) and len(set(got)) == len(got)
    loopbacks = [d.attrs["loopback"] for d in f.devices if d.attrs and "loopback" in d.attrs and d.name.startswith("roce-")]
    assert len(loopbacks) == 16 + 16 + 16 and len(set(loopbacks)) == len(loopbacks)
    eth = f.facts["roce"]["ethernet"]
    assert eth["addressing"]["p2p_needed_planned"] == 32 * 32 + 24 * 24 + 2 * 8 * 64 + 2 * 8 * 48
    assert eth["bgp"]["needed_planned"] == 56 + 4 + 1


def test_no_ratio_or_intent_warning():
    c = _compiled()
    assert not [x for x in c.findings if x.severity == "warning"], [x.message for x in c.findings if x.severity == "warning"]


def test_sonic_configs_of_each_leaf_model_spine_and_core_pass_the_sonic_models():
    libyang = pytest.importorskip("libyang", reason="PyPI libyang (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    artifacts, _ = render(_compiled(), ["sonic"])
    configs = {p: json.loads(b) for p, b in artifacts.items() if p.startswith("sonic/roce-")}
    assert len(configs) == 16 + 16 + 16
    picks = {
        "gpu leaf": "sonic/roce-leaf-su001-01.json",
        "npu leaf": "sonic/roce-leaf-npu-su005-01.json",
        "npu spine": "sonic/roce-spine-p03-01.json",
        "core": "sonic/roce-core-01-01.json",
    }
    for name, path in picks.items():
        try:
            validate(configs[path])
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")
    shape = _shape()
    spine = configs[picks["npu spine"]]
    # an NPU pod spine: BGP to its pod's 8 leaves and to the 2 cores of its plane
    assert len(spine["BGP_NEIGHBOR"]) == shape["npu"]["leaves"] * shape["npu"]["p1"] + shape["npu"]["w"]
    npu = configs[picks["npu leaf"]]
    speeds = Counter((p["speed"], p["admin_status"]) for p in npu["PORT"].values())
    assert speeds[("200000", "up")] == GROUPS["npu"][0] and speeds[("400000", "up")] == shape["npu"]["up"]


# -- growth ---------------------------------------------------------------------------------------


def _grow(group: str, servers: int) -> dict:
    """More servers of one set in racks after the built ones: NPU servers at the end of row B (the
    last row); GPU servers as a second group on the fabric's own (GPU) leaves, in a new last row."""
    data = copy.deepcopy(load_file(BLUEPRINT).data)
    rows = data["site"]["rows"]
    if group == "npu":
        node = next(n for n in data["nodes"] if n["name"] == "npu")
        node["count"] += servers
        rows[-1]["racks"] = math.ceil(node["count"] / 4)
        return data
    rows.append({"name": "G", "racks": math.ceil(servers / 4), "budget": {"power_kw": 45}})
    data["nodes"].append(
        {"name": "gpu2", "model": "hgx-h100-bf3", "count": servers, "placement": {"row": "G", "per_rack": 4, "first_u": 2}}
    )
    data["scaleout"][0]["endpoints"].insert(1, {"group": "gpu2"})
    return data


@pytest.mark.parametrize(
    ("group", "servers", "other"),
    [("gpu", 32, "npu"), ("gpu", 96, "npu"), ("npu", 64, "gpu")],
    ids=["gpu-su-in-its-pod", "gpu-second-pod", "npu-su-and-pod"],
)
def test_growing_one_set_moves_nothing_built(group, servers, other):
    """A GPU SU in its pod, a second GPU pod (within grow_to_sus 4), NPU SUs to 3 (a second NPU pod):
    every built device keeps its name, place, ports, addresses and ASN, every cable its ID and ends,
    and the set that did not grow gains nothing."""
    old = _compile(load_file(BLUEPRINT).data, "old.yaml")
    new = _compile(_grow(group, servers), "new.yaml")
    problems = sub_fabric_problems(old, new)
    assert not problems, problems[:5]
    grew, same = GROUPS[group][5], GROUPS[other][5]
    assert len(_leaves(new.fabric, group)) > len(_leaves(old.fabric, group))
    assert [d.name for d in _leaves(new.fabric, other)] == [d.name for d in _leaves(old.fabric, other)]
    assert grew != same


# -- what cannot be built, located ------------------------------------------------------------------


def test_cores_out_of_ports_is_a_located_error():
    """GPU planned to 62 SUs: 31 pods x 64 + 2 NPU pods x 48 = 2,080 spine uplinks per plane, over
    at most gcd(64, 48) = 16 cores per plane: 130 ports each, a core has 128."""
    e = _error(TEXT.replace("    grow_to_sus: 4\n", "    grow_to_sus: 62\n"), "topology-too-big")
    assert e.path == ("scaleout", 0, "leaves")
    assert "33 planned pods" in e.message and "130 down ports on each of 16 cores" in e.message and "128" in e.message
    assert "core switch" in e.hint


def test_sets_whose_uplinks_share_no_pod_shape_are_refused_with_the_numbers():
    """At 3:1 the GPU leaves cable ceil(32 / 3) = 11 uplinks, the NPU leaves ceil(48 x 200 / 400 / 3)
    = 8: gcd 1, so one spine per pod and 11 links from every GPU leaf: an SU of 8 leaves needs 88
    of a spine's 64 down ports. Still refused: every pod's spines must be the planes of every other."""
    text = TEXT.replace('oversubscription: {leaf: "1:1"}', 'oversubscription: {leaf: "3:1"}')
    e = _error(text, "pod-size")
    assert e.path == ("scaleout", 0, "leaves")
    assert "88" in e.message and "64" in e.message and "11, 8" in e.message and "su_nodes" in e.hint


def test_leaves_per_pod_applies_to_every_set():
    """leaves_per_pod 8: one SU per pod in both sets, GPU 4 planned pods, NPU 3; the cores take
    (4 x 32 + 3 x 24) / C <= 128 with C dividing gcd(32, 24) = 8: C = 2."""
    text = TEXT.replace("    grow_to_sus: 4\n", "    grow_to_sus: 4\n    leaves_per_pod: 8\n")
    c = compile_text(text.replace("{name: NS, racks: 4}", "{name: NS, racks: 7}"), "lpp.yaml")  # 7 pods x 8 spines
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity == "error"]
    facts = c.fabric.facts["roce"]
    assert [s["pods"]["planned"] for s in facts["leaf_sets"]] == [4, 3]
    assert [s["pods"]["spine_up"] for s in facts["leaf_sets"]] == [32, 24]
    assert facts["cores_per_plane"] == 2 and facts["planned_pods"] == 7
