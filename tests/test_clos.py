"""The Clos / fat-tree builder, InfiniBand and Ethernet: the compiled Fabric against the textbook
formulas, graph facts measured on the Fabric, growth stability, located errors with alternatives,
and the RoCEv2 address / ASN / lossless plan.

Small designs use catalogue-override switches and 1-NIC hosts so the numbers are easy to derive
by hand; the shipped blueprints are checked on their own numbers.
"""

from __future__ import annotations

import ipaddress
import math
from collections import Counter
from fractions import Fraction
from itertools import combinations

import networkx as nx
import pytest
from conftest import BLUEPRINTS, cable_ends, compile_text

from supernodeiac.builders.clos_plan import TierPorts, largest_parallel, plan_clos, split_ports
from supernodeiac.fabric import Fabric
from supernodeiac.facts.host_addresses import HostAddresses
from supernodeiac.facts.link_addresses import LinkAddresses
from supernodeiac.facts.oversubscription import measure
from supernodeiac.findings import Severity
from supernodeiac.pipeline import Compiled, Stage, compile_file

HEADER = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: clos-test}}
catalogue:
  devices:
    sw:
      kind: switch
      transport: {transport}
      description: test switch of radix {radix}
      ports: [{{role: data, count: {radix}, speed_gbps: 400, lanes: 4, cage: osfp}}]
      sources: [{{ref: test, grade: ILLUSTRATIVE}}]
    host:
      kind: node
      description: test host
      ports: [{{role: data, count: {nics}, speed_gbps: 400, lanes: 4, cage: osfp}}]
      sources: [{{ref: test, grade: ILLUSTRATIVE}}]
site:
  rows: [{{name: A, racks: {racks}}}, {{name: N, racks: 40}}]
nodes:
  - {{name: h, model: host, count: {hosts}, placement: {{row: A, per_rack: 40}}}}
"""

ETHERNET = """\
    ethernet:
      addressing: {{loopbacks: {loopbacks}, p2p: {p2p}{hosts}}}
      bgp: {{asn_first: {asn_first}, asn_last: {asn_last}}}
      lossless:
        pfc_priorities: [3]
        dscp_to_tc: {{26: 3, 48: 6}}
        roce_dscp: 26
        cnp_dscp: 48
        ecn: {{min_threshold_bytes: 150000, max_threshold_bytes: 1500000, max_probability_pct: 5}}
"""


def fat_tree(
    *,
    hosts: int,
    radix: int = 8,
    nics: int = 1,
    tiers: int = 2,
    switch: str = "sw",
    transport: str = "infiniband",
    extra: str = "",
    ethernet: dict | None = None,
    fabric: str = "f",
) -> str:
    """A blueprint with ``hosts`` test hosts on one fat tree; ``extra`` adds fat-tree keys."""
    text = HEADER.format(transport=transport, radix=radix, nics=nics, hosts=hosts, racks=math.ceil(hosts / 40) + 1)
    return text + "scaleout:\n" + fabric_entry(fabric, tiers, switch, transport, extra, ethernet)


def fabric_entry(name: str, tiers: int, switch: str, transport: str, extra: str, ethernet: dict | None) -> str:
    core = "      core: {row: N, first_rack: 30, per_rack: 40}\n" if tiers == 3 else ""
    text = (
        f"  - name: {name}\n    kind: fat-tree\n    transport: {transport}\n    tiers: {tiers}\n    switch: {switch}\n"
        f"{extra}"
        "    endpoints: [{group: h}]\n"
        "    placement:\n"
        "      leaf: {row: N, per_rack: 40}\n"
        "      spine: {row: N, first_rack: 20, per_rack: 40}\n"
        f"{core}"
    )
    if transport == "ethernet":
        params = {
            "loopbacks": "10.0.0.0/22",
            "p2p": "10.64.0.0/16",
            "hosts": ", hosts: 10.128.0.0/16",  # "" leaves the host ports unaddressed
            "asn_first": 4200000000,
            "asn_last": 4200009999,
        }
        text += ETHERNET.format(**{**params, **(ethernet or {})})
    return text


def ok(text: str) -> Compiled:
    c = compile_text(text)
    bad = [f"{f.location}: {f.severity.value}[{f.rule}] {f.message}" for f in c.findings if f.severity is not Severity.INFO]
    assert c.stage is Stage.BUILT and c.exit_code == 0 and not bad, bad
    return c


def role(f: Fabric, name: str) -> list[int]:
    return [d.index for d in f.devices if d.role == name]


def fabric_links(f: Fabric, name: str) -> list:
    return list(f.links_of(name))


# -- arithmetic -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("radix", "ratio", "down", "up"), [(64, 1, 32, 32), (64, 2, 42, 21), (64, 3, 48, 16), (128, 3, 96, 32)])
def test_split_ports_keeps_the_ratio(radix, ratio, down, up):
    p = split_ports(radix, Fraction(ratio))
    assert (p.down, p.up) == (down, up)
    assert p.down + p.up <= radix and Fraction(p.down, p.up) >= ratio


def test_largest_parallel_divides_and_fits():
    assert largest_parallel(32, 32, 64) == 2  # DGX-SuperPOD-like: 32 leaves, 2 links to each of 16 spines
    assert largest_parallel(32, 24, 64) == 2  # 3 would fit 72 > 64 no; 2 divides 32
    assert largest_parallel(21, 3, 64) == 21
    assert largest_parallel(32, 65, 64) is None


# -- 2 tiers --------------------------------------------------------------------------------------


def test_two_tier_cable_count_is_the_formula(small_ib):
    """nodes x NICs + service ports + leaves x uplinks, with the leaves a whole SU per 32 nodes."""
    f = small_ib.fabric
    nodes = [d for d in f.devices if d.group == "gpu"]
    nics = len(f.layouts["hgx-h100"].ports_of("data"))
    k = len(f.layouts["qm9700"].ports_of("data"))
    leaves = math.ceil(len(nodes) / (k // 2)) * nics  # rail-optimised: one leaf per rail per SU
    ufm_ports = len(f.layouts["ufm-appliance"].ports_of("data")) * sum(1 for d in f.devices if d.group == "ufm")
    assert len(role(f, "leaf")) == leaves
    assert len(fabric_links(f, "ib")) == len(nodes) * nics + ufm_ports + leaves * (k // 2)


def test_two_tier_not_rail_optimised_formula():
    # 8-NIC hosts on radix-64 leaves: 4 nodes per leaf (32 down), 10 nodes -> 3 leaves, the last half full.
    c = ok(fat_tree(hosts=10, nics=8, radix=64, extra="    rail_optimized: false\n"))
    f = c.fabric
    leaves = role(f, "leaf")
    assert len(leaves) == math.ceil(10 * 8 / 32)
    assert len(fabric_links(f, "f")) == 10 * 8 + len(leaves) * 32
    # every NIC of a node lands on the same leaf (the node's 8 NICs take 8 consecutive down ports)
    host_leaf = {(link.a, f.devices[link.b].name) for link in fabric_links(f, "f") if f.devices[link.a].role == "node"}
    assert len(host_leaf) == 10
    # p = largest divisor of 32 with 3 leaves x p <= 64: 16 links to each of 2 spines
    assert len(role(f, "spine")) == 2 and c.fabric.facts["f"]["leaf_spine_parallel"] == 16


def test_two_tier_k_ary_formulas_and_graph():
    """A k-ary 2-tier tree: k^2/2 hosts, 3k/2 switches, k^2 cables; leaf-to-leaf in 2 switch hops."""
    k = 8
    c = ok(fat_tree(hosts=k * k // 2, radix=k))
    f = c.fabric
    assert len(role(f, "leaf")) + len(role(f, "spine")) == 3 * k // 2
    assert len(fabric_links(f, "f")) == k * k
    g = f.graph("f")
    assert nx.is_connected(g)  # every host pair connected
    switches = g.subgraph(role(f, "leaf") + role(f, "spine"))
    leaves = role(f, "leaf")
    dist = dict(nx.all_pairs_shortest_path_length(switches))
    assert max(dist[a][b] for a, b in combinations(leaves, 2)) == 2


def test_one_to_two_blueprint_reports_one_to_two():
    # qm9700 at 1:2: 42 down, 21 up; 42 one-NIC hosts fill the one SU.
    c = compile_text(fat_tree(hosts=42, radix=64, extra='    oversubscription: {leaf: "1:2"}\n'))
    # One leaf's 21 uplinks all go to one spine, which uses 21 of its 64 ports: the only warning.
    [w] = [x for x in c.findings if x.severity is not Severity.INFO]
    assert w.rule == "port-utilisation" and "21 of its 64" in w.message
    f = c.fabric
    [leaf] = role(f, "leaf")
    down = sum(link.gbps for link in fabric_links(f, "f") if link.b == leaf and f.devices[link.a].tier == 0)
    up = sum(link.gbps for link in fabric_links(f, "f") if link.a == leaf and f.devices[link.b].tier == 2)
    assert Fraction(down) / Fraction(up) == 2
    assert measure(f, "f") == {1: Fraction(2)}
    [msg] = [x.message for x in c.findings if x.rule == "oversubscription"]
    assert "leaf 2:1" in msg and "end-to-end worst case 2:1" in msg


def test_too_many_hosts_for_two_tiers_is_located_with_alternatives():
    """2,049 one-NIC hosts on radix-64 switches: 2 tiers give 64 leaves x 32 = 2,048."""
    good = ok(fat_tree(hosts=2048, radix=64))
    assert len(fabric_links(good.fabric, "f")) == 2048 + 64 * 32
    c = compile_text(fat_tree(hosts=2049, radix=64))
    assert c.stage is Stage.UNBUILDABLE and c.exit_code == 1
    [e] = [x for x in c.findings if x.severity is Severity.ERROR]
    assert e.rule == "topology-too-big" and "needs 65 leaves" in e.message
    # located at the fabric's endpoints key: line 24 of the generated text, column 5
    lines = fat_tree(hosts=2049, radix=64).splitlines()
    assert lines[e.location.line - 1].strip().startswith("endpoints:")
    assert (e.location.file, e.location.col) == ("test.yaml", 5)
    assert "at most 2,048 nodes in 2 tiers" in e.hint
    assert "tiers: 3 (up to 65,536 nodes" in e.hint  # k^3/4 with k = 64
    assert "radix >= 65" in e.hint and "q3400 144" in e.hint


def test_transport_mismatch_names_the_switches_that_fit():
    c = compile_text(fat_tree(hosts=8, switch="sn5600"))
    [e] = [x for x in c.findings if x.severity is Severity.ERROR]
    assert e.rule == "transport" and "ethernet switch" in e.message
    assert "qm9700" in e.hint and "q3400" in e.hint


# -- 3 tiers --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def k8() -> Compiled:
    return ok(fat_tree(hosts=128, radix=8, tiers=3))


def test_k_ary_three_tier_formulas(k8):
    """k = 8: k^3/4 = 128 hosts, 5k^2/4 = 80 switches (k^2/2 leaves and spines, k^2/4 cores), 3k^3/4 cables."""
    k, f = 8, k8.fabric
    assert len(role(f, "node")) == k**3 // 4
    assert (len(role(f, "leaf")), len(role(f, "spine")), len(role(f, "core"))) == (k * k // 2, k * k // 2, k * k // 4)
    assert len(role(f, "leaf")) + len(role(f, "spine")) + len(role(f, "core")) == 5 * k * k // 4
    assert len(fabric_links(f, "f")) == 3 * k**3 // 4
    assert {d.coord("pod") for d in f.devices if d.role == "spine"} == set(range(k))  # k pods


def test_k_ary_three_tier_graph_facts(k8):
    f = k8.fabric
    g = f.graph("f")
    assert nx.is_connected(g)  # every host pair connected
    leaves = role(f, "leaf")
    switches = g.subgraph(leaves + role(f, "spine") + role(f, "core"))
    worst = 0
    for leaf in leaves:  # 32 BFS on 80 switches
        dist = nx.single_source_shortest_path_length(switches, leaf)
        worst = max(worst, max(dist[x] for x in leaves))
    assert worst == 4  # leaf -> spine -> core -> spine -> leaf across pods
    assert measure(f, "f") == {1: Fraction(1), 2: Fraction(1)}


def test_k_ary_three_tier_one_more_host_is_too_big():
    c = compile_text(fat_tree(hosts=129, radix=8, tiers=3))
    [e] = [x for x in c.findings if x.severity is Severity.ERROR]
    assert e.rule == "topology-too-big" and "needs 9 pods" in e.message
    assert "at most 128 nodes in 3 tiers" in e.hint and "radix >= 9" in e.hint


def balanced(f: Fabric, name: str) -> dict[str, set[int]]:
    """Links per (lower, upper) switch pair, grouped by tier pair; asserts every expected pair exists."""
    devices = f.devices
    pairs: Counter[tuple[int, int]] = Counter()
    for link in f.links_of(name):
        a, b = devices[link.a], devices[link.b]
        if a.tier and b.tier:
            lo, hi = (a, b) if a.tier < b.tier else (b, a)
            pairs[(lo.index, hi.index)] += 1
    leaves = [d for d in devices if d.role == "leaf" and d.coord("fabric") == name]
    spines = [d for d in devices if d.role == "spine" and d.coord("fabric") == name]
    cores = [d for d in devices if d.role == "core" and d.coord("fabric") == name]
    per_pod = f.facts[name]["leaves_per_pod"]
    counts: dict[str, set[int]] = {"leaf-spine": set(), "spine-core": set()}
    wired = 0  # links on the expected pairs; any other switch-to-switch link is a wiring error
    for leaf in leaves:
        pod = (leaf.coord("su") * f.facts[name]["leaves_per_su"] + leaf.coord("leaf")) // per_pod
        for spine in spines:
            if spine.coord("pod", 0) == pod:
                counts["leaf-spine"].add(pairs[(leaf.index, spine.index)])
                wired += pairs[(leaf.index, spine.index)]
    for spine in spines:
        for core in cores:
            if core.coord("plane") == spine.coord("plane"):
                counts["spine-core"].add(pairs[(spine.index, core.index)])
                wired += pairs[(spine.index, core.index)]
    assert wired == sum(pairs.values())
    return counts


@pytest.mark.parametrize("blueprint", ["small-ib", "roce-rail-2tier", "ib-3tier", "roce-3tier-oversub"])
def test_every_leaf_reaches_every_spine_equally(blueprint):
    c = compile_file(str(BLUEPRINTS / f"{blueprint}.yaml"))
    name = c.blueprint.scaleout[0].name  # the compute fabric (ib-3tier also has a storage fabric)
    facts = c.fabric.facts[name]
    counts = balanced(c.fabric, name)
    # one multiplicity per tier pair, never 0 (every pair wired), and the one the plan chose
    assert counts["leaf-spine"] == {facts["leaf_spine_parallel"]}
    assert counts["spine-core"] == ({facts["spine_core_parallel"]} if facts["tiers"] == 3 else set())


def test_k8_every_spine_reaches_every_core_of_its_plane_once(k8):
    assert balanced(k8.fabric, "f") == {"leaf-spine": {1}, "spine-core": {1}}


# -- scalable units, services, growth -------------------------------------------------------------


def test_partly_filled_su_is_provisioned_whole():
    c = compile_file(str(BLUEPRINTS / "roce-rail-2tier.yaml"))
    f = c.fabric
    facts = f.facts["roce"]
    assert (facts["nodes"], facts["su_nodes"], facts["built_sus"]) == (96, 64, 2)
    down = Counter(link.b for link in f.links_of("roce") if f.devices[link.a].tier == 0)
    up = Counter(link.a for link in f.links_of("roce") if f.devices[link.b].tier == 2)
    su2 = [d.index for d in f.devices if d.role == "leaf" and d.coord("su") == 1]
    assert len(su2) == 8  # all 8 rails' leaves of the half-filled SU
    assert {down[i] for i in su2} == {96 - 64} and {up[i] for i in su2} == {64}


def test_service_endpoints_take_the_top_down_ports_and_their_slot():
    """ib-3tier's UFM HA pair: 2 appliances x 2 ports take the top down port of SU 0's leaves of
    rails 0-3, leaves first (UFM 1 on rails 0 and 1, UFM 2 on rails 2 and 3); slot 32 of SU 0 stays empty."""
    c = compile_file(str(BLUEPRINTS / "ib-3tier.yaml"))
    f = c.fabric
    ufms = [d.index for d in f.devices if d.group == "ufm"]
    k = len(f.layouts["qm9700"].ports_of("data"))
    top = f.layouts["qm9700"].ports_of("data")[k // 2 - 1]
    ends = {
        ufm: sorted(
            (f.devices[link.b].coord("su"), f.devices[link.b].coord("rail"), link.b_port)
            for link in f.links_of("ib")
            if link.a == ufm
        )
        for ufm in ufms
    }
    assert ends == {ufms[0]: [(0, 0, top), (0, 1, top)], ufms[1]: [(0, 2, top), (0, 3, top)]}
    su0 = {d.index for d in f.devices if d.role == "leaf" and d.coord("su") == 0}
    nodes_su0 = {link.a for link in f.links_of("ib") if link.b in su0 and f.devices[link.a].group != "ufm"}
    assert len(nodes_su0) == k // 2 - 1  # slot 32 of SU 0 stays empty: 31 nodes
    assert not [link for link in f.links_of("ib") if link.b in su0 and link.b_port == top and link.a not in ufms]


@pytest.mark.parametrize(
    ("tiers", "radix", "nics", "small", "big", "grow"),
    [
        (2, 16, 4, 2 * 8, 3 * 8, 4),  # 4 rails, SU = 8 nodes on 4 leaves; 2 and 3 SUs of 4
        (3, 8, 1, 2 * 4 * 4, 3 * 4 * 4 - 2, 32),  # k = 8: pods of 4 SUs; 2 pods, then 3 (the last partly)
    ],
)
def test_growth_keeps_every_cable_and_address(tiers, radix, nics, small, big, grow):
    extra = f"    grow_to_sus: {grow}\n"
    a = ok(fat_tree(hosts=small, radix=radix, nics=nics, tiers=tiers, transport="ethernet", extra=extra))
    b = ok(fat_tree(hosts=big, radix=radix, nics=nics, tiers=tiers, transport="ethernet", extra=extra))
    ea, eb = cable_ends(a.fabric, "f"), cable_ends(b.fabric, "f")
    assert len(eb) > len(ea)
    assert {i: eb.get(i) for i in ea} == ea  # every cable of the smaller build, same ends and ports
    attrs_b = {d.name: d.attrs for d in b.fabric.devices if d.attrs}
    for d in a.fabric.devices:
        if d.attrs:
            assert attrs_b[d.name] == d.attrs, d.name  # loopback, ASN, p2p block unchanged
    la, lb = LinkAddresses(a.fabric, "f"), LinkAddresses(b.fabric, "f")
    ha, hb = HostAddresses(a.fabric, "f"), HostAddresses(b.fabric, "f")
    by_id = {link.id: link for link in b.fabric.links_of("f")}
    hosts = 0
    for link in a.fabric.links_of("f"):
        other = by_id[link.id]
        assert la(link) == lb(other)
        pair = ha.pair(link.a, link.a_port, link.b, link.b_port)
        assert pair == hb.pair(other.a, other.a_port, other.b, other.b_port)  # host /31s unchanged
        hosts += pair is not None
    assert hosts == small * nics  # every host link of the smaller build is addressed


def test_grow_to_below_the_built_size_is_an_error():
    c = compile_text(fat_tree(hosts=40, radix=8, extra="    grow_to_sus: 2\n"))
    [e] = [x for x in c.findings if x.severity is Severity.ERROR]
    assert e.rule == "grow-to" and e.path[-1] == "grow_to_sus" and "10" in e.hint


def test_plan_counts_reserved_slots():
    plan = plan_clos(
        tiers=2,
        rail_optimized=True,
        nics=8,
        leaf=TierPorts(32, 32),
        spine=TierPorts(64, 0),
        core_radix=0,
        nodes=31,
        service_ports={0: 10},
    )
    # 10 service ports over 8 leaves: the top port of all 8 and the next one of 2 -> slots 31 and 30
    assert plan.reserved == {0: frozenset({30, 31})}
    assert plan.built_sus == 2  # 30 nodes fit SU 0, the 31st opens SU 1
    assert list(plan.node_slots(31))[-2:] == [(0, 29), (1, 0)]


# -- RoCEv2: addresses, ASNs, lossless ------------------------------------------------------------


@pytest.fixture(scope="module")
def roce2() -> Compiled:
    return compile_file(str(BLUEPRINTS / "roce-rail-2tier.yaml"))


@pytest.fixture(scope="module")
def roce3() -> Compiled:
    return compile_file(str(BLUEPRINTS / "roce-3tier-oversub.yaml"))


def test_roce_2tier_numbers(roce2):
    f = roce2.fabric
    facts = f.facts["roce"]
    # 96 nodes x 8 rails; SU = 64 nodes on 8 leaves; spines planned for 4 SUs: 32 leaves x p <= 128 -> p = 4
    assert (facts["leaves"], facts["spines"], facts["leaf_spine_parallel"]) == (16, 16, 4)
    assert len(fabric_links(f, "roce")) == 96 * 8 + 16 * 64
    assert facts["max_nodes"] == 4 * 64 and facts["ceiling_nodes"] == (128 // 8) * 64
    # breakout: 128 logical 400G ports on 64 OSFP cages, named on the O128 port map
    layout = f.layouts["sn5600-128x400g"]
    data = layout.ports_of("data")
    assert len(data) == 128 and {layout.slot(p).group.ports_per_cage for p in data} == {2}
    assert [layout.name(p) for p in data[:3]] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert {link.gbps for link in f.links_of("roce")} == {400}
    eth = facts["ethernet"]
    assert (eth["addressing"]["loopbacks_needed"], eth["addressing"]["loopbacks_needed_planned"]) == (32, 48)
    assert (eth["addressing"]["p2p_needed"], eth["addressing"]["p2p_needed_planned"]) == (16 * 64, 32 * 64)
    assert (eth["bgp"]["needed"], eth["bgp"]["needed_planned"]) == (16 + 1, 32 + 1)


def test_roce_2tier_addresses_follow_coordinates(roce2):
    f = roce2.fabric
    lo = ipaddress.ip_network("10.0.0.0/24")
    for d in f.devices:
        if d.role == "leaf":
            index = d.coord("su") * 8 + d.coord("leaf")
            assert d.attrs["loopback"] == f"{lo.network_address + 1 + index}/32"
            assert d.attrs["asn"] == 4200000000 + index
        elif d.role == "spine":
            assert d.attrs["loopback"] == f"{lo.broadcast_address - 1 - d.coord('plane')}/32"
            assert d.attrs["asn"] == 4200000999  # RFC 7938: one ASN for the top tier
    addresses = LinkAddresses(f, "roce")
    seen = set()
    p2p = ipaddress.ip_network("10.64.0.0/20")
    for link in f.links_of("roce"):
        pair = addresses(link)
        if f.devices[link.a].tier == 0:
            assert pair is None
            continue
        leaf_ip, spine_ip = (ipaddress.ip_interface(x) for x in pair)  # A end is the leaf
        assert leaf_ip.network == spine_ip.network and leaf_ip.network.prefixlen == 31 and leaf_ip.network.subnet_of(p2p)
        assert int(spine_ip.ip) % 2 == 0 and int(leaf_ip.ip) == int(spine_ip.ip) + 1
        seen.add(leaf_ip.network)
    assert len(seen) == 16 * 64
    first = next(
        link for link in f.links_of("roce") if f.devices[link.a].name == "roce-leaf-su001-01" and f.devices[link.b].tier == 2
    )
    assert addresses(first) == ("10.64.0.1/31", "10.64.0.0/31")


def test_roce_3tier_numbers(roce3):
    f = roce3.fabric
    facts = f.facts["roce"]
    # leaves 3:1 of 128: 96 down, 32 up; SU = 96 nodes. 4 storage servers on SU 0 take slot 96 there:
    # 95 + 96 + 96 + 13 -> 4 SUs, 32 leaves; pods of 16 leaves -> 2 pods built, 12 planned (24 SUs)
    assert (facts["nodes"], facts["built_sus"], facts["pods"], facts["planned_pods"]) == (300, 4, 2, 12)
    assert (facts["leaf_down"], facts["leaf_up"], facts["leaves"]) == (96, 32, 32)
    # p1: largest divisor of 32 with 16 x p <= 64 -> 4; a spine uses 16 x 4 = 64 down and so 64 up (1:1)
    assert (facts["spine_down_used"], facts["spine_up"], facts["leaf_spine_parallel"], facts["spines_per_pod"]) == (64, 64, 4, 8)
    # p2: largest divisor of 64 with 12 pods x p <= 128 -> 8: 64 / 8 = 8 cores per plane, 8 planes
    assert (facts["spine_core_parallel"], facts["cores_per_plane"], facts["cores"]) == (8, 8, 64)
    assert len(fabric_links(f, "roce")) == 300 * 8 + 8 + 32 * 32 + 16 * 64
    assert measure(f, "roce") == {1: Fraction(3), 2: Fraction(1)}
    [msg] = [x.message for x in roce3.findings if x.rule == "oversubscription"]
    assert "leaf 3:1" in msg and "end-to-end worst case 3:1" in msg


def test_roce_3tier_asns_and_ipv6_links(roce3):
    f = roce3.fabric
    for d in f.devices:
        if d.role == "spine":
            assert d.attrs["asn"] == 65534 - 1 - d.coord("pod")  # one ASN per pod's spines
        elif d.role == "core":
            assert d.attrs["asn"] == 65534
    leaf_asns = [d.attrs["asn"] for d in f.devices if d.role == "leaf"]
    assert sorted(leaf_asns) == list(range(64512, 64512 + 32))
    addresses = LinkAddresses(f, "roce")
    blocks = [addresses.block(k.a, k.a_port, k.b, k.b_port) for k in f.links_of("roce")]
    numbered = [b for b in blocks if b is not None]
    assert len(numbered) == len(set(numbered)) == 32 * 32 + 16 * 64
    spine_core = next(
        link for link in f.links_of("roce") if f.devices[link.a].name == "roce-spine-p01-01" and f.devices[link.b].role == "core"
    )
    # spine 0's 64 uplinks count down from the top of the /112: block 32768 - 64, the first uplink
    lower, upper = (ipaddress.ip_interface(x) for x in addresses(spine_core))
    assert str(upper) == f"{ipaddress.ip_network('fd00:100:64::/112').network_address + 2 * (32768 - 64)}/127"
    assert int(lower.ip) == int(upper.ip) + 1


def test_pools_too_small_only_for_growth_warn():
    # 8 hosts on radix 8: 2 SUs of one leaf (4 down, 4 up), 4 spines; grow_to_sus 8 plans 8 leaves.
    # Built: 2 + 4 = 6 loopbacks (a /29 holds 6), 2 x 4 = 8 links (a /27 holds 16), 2 + 1 ASNs (5 held).
    # Planned: 8 + 4 = 12 loopbacks, 8 x 4 = 32 links, 8 + 1 ASNs.
    eth = {"loopbacks": "10.0.0.0/29", "p2p": "10.64.0.0/27", "asn_first": 64512, "asn_last": 64516}
    c = compile_text(fat_tree(hosts=8, radix=8, transport="ethernet", extra="    grow_to_sus: 8\n", ethernet=eth))
    assert c.exit_code == 0
    warnings = {(x.rule, x.path[-1]): x for x in c.findings if x.severity is Severity.WARNING}
    assert sorted(warnings) == [("address-pool", "loopbacks"), ("address-pool", "p2p"), ("asn-range", "bgp")]
    lo, p2p, asn = warnings[("address-pool", "loopbacks")], warnings[("address-pool", "p2p")], warnings[("asn-range", "bgp")]
    assert lo.message == "f: loopback pool 10.0.0.0/29 holds 6 switch addresses; growing to grow_to_sus needs 12"
    assert lo.hint == "a /28 or larger, before the fabric grows"
    assert p2p.message == "f: point-to-point pool 10.64.0.0/27 holds 16 /31 links; growing to grow_to_sus needs 32"
    assert p2p.hint == "a /26 or larger, before the fabric grows"
    assert asn.message == "f: ASN range 64512-64516 holds 5; growing to grow_to_sus needs 9"
    assert asn.hint == "asn_last: 64520 or higher"
    # the built fabric fits, so every switch got its loopback and ASN
    switches = [d for d in c.fabric.devices if d.group == "f"]
    assert len(switches) == 6 and all("loopback" in d.attrs and "asn" in d.attrs for d in switches)


def test_pool_checks_count_needs():
    # 8 leaves (32 hosts of radix 8) + 4 spines = 12 loopbacks; a /29 holds 6. 8 x 4 = 32 links; a /27 holds 16.
    eth = {"loopbacks": "10.0.0.0/29", "p2p": "10.64.0.0/27", "asn_first": 64512, "asn_last": 64516}
    c = compile_text(fat_tree(hosts=32, radix=8, transport="ethernet", ethernet=eth))
    errors = {(x.rule, x.path[-1]): x for x in c.findings if x.severity is Severity.ERROR}
    assert (
        "holds 6 switch addresses; the fabric needs 12 (8 leaves, 4 spines, 0 cores)"
        in errors[("address-pool", "loopbacks")].message
    )
    assert errors[("address-pool", "loopbacks")].hint == "a /28 or larger"
    assert "holds 16 /31 links; the fabric has 32 switch-to-switch links" in errors[("address-pool", "p2p")].message
    assert errors[("address-pool", "p2p")].hint.startswith("a /26 or larger")
    asn = errors[("asn-range", "bgp")]
    assert "holds 5 ASNs; the fabric needs 9" in asn.message and "asn_last: 64520" in asn.hint
    assert "4200000000-4294967294 holds 94,967,295" in asn.hint  # RFC 6996's 32-bit private range
    assert c.exit_code == 1
    # nothing half-assigned: the too-small pools left every switch without those attributes
    assert all(d.attrs is None or "loopback" not in d.attrs for d in c.fabric.devices)


def test_two_fabrics_on_the_same_pools_are_duplicates():
    text = fat_tree(hosts=8, radix=8, transport="ethernet") + fabric_entry("g", 2, "sw", "ethernet", "", None).replace(
        "[{group: h}]", "[{group: h2}]"
    )
    text = text.replace(
        "scaleout:\n", "  - {name: h2, model: host, count: 8, placement: {row: A, first_rack: 2, per_rack: 40}}\nscaleout:\n"
    )
    c = compile_text(text)
    rules = Counter(x.rule for x in c.findings if x.severity is Severity.ERROR)
    assert rules["address-duplicate"] >= 2 and rules["asn-duplicate"] >= 1
    messages = " ".join(x.message for x in c.findings if x.rule == "address-duplicate")
    assert "loopback 10.0.0.1/32 is on f-leaf-su001-01 and g-leaf-su001-01" in messages
    assert "g loopbacks pool 10.0.0.0/22 overlaps f loopbacks pool 10.0.0.0/22" in messages


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ("pfc_priorities: [3]", "pfc_priorities: [8]", "less than or equal to 7"),
        ("{26: 3, 48: 6}", "{26: 3, 64: 6}", "less than or equal to 63"),
        ("{26: 3, 48: 6}", "{26: 1, 48: 6}", "roce_dscp 26 maps to traffic class 1, which has no PFC"),
        ("max_threshold_bytes: 1500000", "max_threshold_bytes: 1000", "exceeds max_threshold_bytes"),
        ("asn_first: 4200000000", "asn_first: 65000", "not inside one private range"),
        ("p2p: 10.64.0.0/16", "p2p: 10.0.0.0/16", "overlaps the point-to-point pool"),
        ("p2p: 10.64.0.0/16", "p2p: 10.64.0.1/16", "host bits set"),
    ],
)
def test_invalid_ethernet_settings_are_schema_errors(old, new, expect):
    text = fat_tree(hosts=8, radix=8, transport="ethernet")
    assert old in text
    c = compile_text(text.replace(old, new))
    assert c.stage is Stage.UNREADABLE and c.exit_code == 2
    assert any(expect in x.message and x.location and x.location.line > 0 for x in c.findings), [x.message for x in c.findings]


def test_pfc_priority_without_dscp_is_a_warning():
    text = fat_tree(hosts=8, radix=8, transport="ethernet").replace("pfc_priorities: [3]", "pfc_priorities: [3, 4]")
    c = compile_text(text)
    [w] = [x for x in c.findings if x.severity is Severity.WARNING]
    assert w.rule == "lossless" and "priority 4" in w.message and w.path[-1] == "pfc_priorities"


def test_unnumbered_needs_no_p2p_pool():
    c = ok(fat_tree(hosts=16, radix=8, transport="ethernet", ethernet={"p2p": "unnumbered"}))
    f = c.fabric
    assert all("p2p_block" not in d.attrs for d in f.devices if d.attrs)
    assert all(LinkAddresses(f, "f")(link) is None for link in f.links_of("f"))
    assert all("loopback" in d.attrs and "asn" in d.attrs for d in f.devices if d.role in ("leaf", "spine"))


def test_ethernet_settings_need_ethernet_transport():
    c = compile_text(fat_tree(hosts=8, radix=8, transport="ethernet").replace("transport: ethernet", "transport: infiniband"))
    assert c.exit_code == 2 and any("apply to transport: ethernet only" in x.message for x in c.findings)


def test_su_wider_than_a_leaf_spreads_each_rail_over_several_leaves():
    # 2 rails on radix-8 leaves (4 down): su_nodes 6 -> 2 leaves per rail, 4 leaves per SU.
    c = ok(fat_tree(hosts=9, radix=8, nics=2, extra="    su_nodes: 6\n    grow_to_sus: 2\n"))
    f = c.fabric
    leaves = [f.devices[i] for i in role(f, "leaf")]
    assert len(leaves) == 2 * 4  # 9 nodes -> 2 SUs, each provisioned whole
    for link in f.links_of("f"):
        node, leaf = f.devices[link.a], f.devices[link.b]
        if node.role != "node":
            continue
        nic = f.layouts["host"].ports_of("data").index(link.a_port)
        assert leaf.coord("rail") == nic  # NIC r always lands on a rail-r leaf
        su, slot = divmod(node.coord("index"), 6)
        assert leaf.coord("su") == su and leaf.coord("leaf") == nic * 2 + slot // 4 and link.b_port == slot % 4


@pytest.mark.parametrize(
    ("leaf_k", "top_k", "su_nodes", "per_pod", "pods", "p2", "cores"),
    [
        # qm9700 leaves under q3400 spines (the arithmetic fits; the cabling does not: XDR ports
        # run no NDR lanes, test_media's no-downshift test). A pod of 64 leaves uses 64 of a
        # spine's 72 down ports, so a non-blocking spine cables 64 uplinks (not 72): 64 / p2 = 32
        # cores per plane, 32 planes.
        (64, 144, 32, 64, 64, 2, 32 * 32),
        (144, 144, 72, None, 26, 4, 72 * 18),  # bench/generate.py 131k, all-XDR: 72-node SUs, pods of 9 SUs
    ],
)
def test_131k_gpu_designs_plan(leaf_k, top_k, su_nodes, per_pod, pods, p2, cores):
    """16,384 eight-rail nodes in 3 tiers: the plan behind the scale benchmark (arithmetic only)."""
    one = Fraction(1)
    plan = plan_clos(
        tiers=3,
        rail_optimized=True,
        nics=8,
        leaf=split_ports(leaf_k, one),
        spine=split_ports(top_k, one),
        core_radix=top_k,
        nodes=16_384,
        su_nodes=su_nodes,
        leaves_per_pod=per_pod,
    )
    assert plan.built_sus * su_nodes >= 16_384 > (plan.built_sus - 1) * su_nodes
    assert (plan.built_pods, plan.p2, plan.cores) == (pods, p2, cores)
    assert plan.leaves_per_pod * plan.p1 <= plan.spine.down and plan.built_pods * plan.p2 <= top_k


def test_two_links_on_one_point_to_point_block_are_reported_by_their_cable_ids():
    from supernodeiac.checks import CheckContext
    from supernodeiac.checks.clos import check_duplicates

    c = compile_text(fat_tree(hosts=8, radix=8, transport="ethernet"))
    assert c.exit_code == 0, [x.message for x in c.findings]
    f = c.fabric
    leaves = [d for d in f.devices if d.role == "leaf"]
    assert len(leaves) >= 2
    # The second leaf takes the first's blocks: each of its uplinks now collides with one of the first's.
    leaves[1].attrs = {**leaves[1].attrs, "p2p_block": leaves[0].attrs["p2p_block"]}
    found = [x for x in check_duplicates(CheckContext(c.blueprint, c.catalogue, f)) if "point-to-point" in x.message]
    ups = {d.index: [k for k in f.links_of("f") if k.a == d.index and f.devices[k.b].role == "spine"] for d in leaves[:2]}
    assert len(found) == 1
    assert (
        found[0].message == f"f: links {ups[leaves[0].index][0].id} and {ups[leaves[1].index][0].id} share a point-to-point block"
    )
