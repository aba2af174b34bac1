"""What a planner signs: uplinks sized from the ports in use, the growth reservation and the cheapest
design, group-to-group and pod-to-pod ratios, port use, rail alignment, the networks around the
fabric (storage, management reach, HA services, top-of-rack placement). Every figure is checked
against a hand computation written beside it."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import pytest
from conftest import BLUEPRINTS, cable_ends, compile_text
from test_clos import fat_tree, ok
from test_dragonfly import dragonfly

from supernodeiac.builders.clos_plan import TierPorts, plan_clos, split_ports
from supernodeiac.checks import CheckContext
from supernodeiac.checks.management import check_reach
from supernodeiac.explain import explain, to_text
from supernodeiac.fabric import Fabric
from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file


def _report(c) -> dict:
    return explain(c.blueprint, c.catalogue, c.fabric)


def _fabric(report: dict, name: str) -> dict:
    return next(f for f in report["fabrics"] if f["name"] == name)


def warnings(c, rule: str) -> list:
    return [f for f in c.findings if f.rule == rule and f.severity is Severity.WARNING]


# -- uplinks from the down ports in use ---------------------------------------------------------

# The case: a pod of 48 leaves under 128-port spines declared 3:1. Leaves of radix 12 at 3:1
# have 9 down and 3 up ports; p1 = the largest divisor of 3 with 48 x p1 <= 96 spine down ports = 1,
# so a spine uses 48 of its 96 down ports. Cabling all 32 uplinks the radix allows would build it at
# 48:32 = 1.5:1; ceil(48 / 3) = 16 uplinks keep 3:1.
POD48 = """    tiers: 3
    oversubscription: {leaf: "1:3", spine: "1:3"}
    leaves_per_pod: 48
"""


def pod48(extra: str = "") -> str:
    text = fat_tree(hosts=48 * 9, radix=12, tiers=3, extra=POD48 + extra).replace(
        "    tiers: 3\n    switch: sw", "    switch: sw"
    )
    return text.replace("    switch: sw\n", "    switch: sw\n    spine_switch: big\n", 1).replace(
        "    host:\n",
        "    big:\n      kind: switch\n      transport: infiniband\n      description: 128-port spine\n"
        "      ports: [{role: data, count: 128, speed_gbps: 400, lanes: 4, cage: osfp}]\n"
        "      sources: [{ref: test, grade: ILLUSTRATIVE}]\n    host:\n",
    )


def test_spine_uplinks_follow_the_pods_ports_in_use_not_the_radix():
    c = compile_text(pod48())
    assert c.exit_code == 0, [x.message for x in c.findings if x.severity is Severity.ERROR]
    facts = c.fabric.facts["f"]
    assert (facts["leaf_down"], facts["leaf_up"], facts["leaves_per_pod"], facts["leaf_spine_parallel"]) == (9, 3, 48, 1)
    assert (facts["spine_down"], facts["spine_down_used"], facts["spine_up"]) == (96, 48, 16)
    spine = next(d.index for d in c.fabric.devices if d.role == "spine")
    ends = Counter(
        "down" if c.fabric.devices[k.a if k.b == spine else k.b].tier < 2 else "up"
        for k in c.fabric.links_of("f")
        if spine in (k.a, k.b)
    )
    assert ends == {"down": 48, "up": 16}  # measured on the links: 3:1, the declared ratio
    assert not warnings(c, "ratio-intent")
    [msg] = [x.message for x in c.findings if x.rule == "oversubscription"]
    assert "spine 3:1 (48 down in use : 16 up)" in msg


@pytest.mark.parametrize(("used", "ratio", "up"), [(48, 3, 16), (80, 3, 27), (10, 3, 4), (32, 1, 32), (42, 2, 21)])
def test_sized_uplinks_are_within_one_port_of_the_declared_ratio(used, ratio, up):
    from fractions import Fraction

    from supernodeiac.builders.clos_plan import uplinks_for

    n = uplinks_for(used, Fraction(ratio))
    assert n == up == math.ceil(used / ratio)
    assert n - 1 < used / ratio <= n  # one port's rounding, never fewer uplinks than the ratio asks


def test_an_explicit_uplink_count_that_departs_from_the_ratio_warns_with_both_figures():
    # 24 uplinks for 48 down ports in use: 2:1, declared 3:1 (16 uplinks)
    c = compile_text(pod48("    uplinks: {spine: 24}\n"))
    [w] = warnings(c, "ratio-intent")
    assert "spine tier is designed at 2:1 (48 down ports in use : 24 uplinks), declared 3:1" in w.message
    assert "more uplinks than the declared ratio's 16" in w.message and w.path[-2:] == ("uplinks", "spine")
    assert "uplinks.spine: 16" in w.hint
    # one uplink per leaf for 9 down: 9:1, fewer than 3:1 asks -- and a worse ratio is also an error on the links
    c = compile_text(pod48("    uplinks: {leaf: 1}\n"))
    [w] = warnings(c, "ratio-intent")
    assert "leaf tier is designed at 9:1 (9 down ports in use : 1 uplinks), declared 3:1: fewer uplinks" in w.message
    assert [e.rule for e in c.findings if e.severity is Severity.ERROR] == ["oversubscription"]
    # the count the ratio asks for: no warning
    assert not warnings(compile_text(pod48("    uplinks: {spine: 16}\n")), "ratio-intent")
    # within the tolerance: 17 uplinks give 2.82:1, 6 % from 3:1 (tolerance 10 %)
    assert not warnings(compile_text(pod48("    uplinks: {spine: 17}\n")), "ratio-intent")


def test_upper_tiers_stay_non_blocking_or_warn():
    c = compile_text(pod48())
    [w] = warnings(c, "nonblocking-upper-tiers")
    assert "spine tier is oversubscribed (3:1)" in w.message and w.path[-2:] == ("oversubscription", "spine")
    waived = compile_text(pod48() + "planning: {upper_tiers_nonblocking: false}\n")
    assert not warnings(waived, "nonblocking-upper-tiers")


def test_a_partial_three_tier_build_gets_the_fewest_cores_for_built_plus_growth():
    """k = 8, one-NIC hosts: pods of 4 leaves x 4 hosts, a spine's 4 uplinks. 2 pods built, grown to
    3 (grow_to_sus 12): each plane's cores take 3 pods x 4 uplinks = 12 ports, so 2 cores of 8 ports
    (12 / 8 rounded up), p2 = 2; without growth 2 pods x 4 = 8 ports: 1 core, p2 = 4."""
    grown = ok(fat_tree(hosts=32, radix=8, tiers=3, extra="    grow_to_sus: 12\n")).fabric.facts["f"]
    built = ok(fat_tree(hosts=32, radix=8, tiers=3)).fabric.facts["f"]
    planes = 4
    for facts, pods in ((grown, 3), (built, 2)):
        assert facts["cores_per_plane"] == math.ceil(pods * facts["spine_up"] / facts["core_radix"])
        assert facts["cores"] == planes * facts["cores_per_plane"]
    assert (grown["cores"], built["cores"]) == (8, 4)
    assert grown["growth_reservation"] == {
        "grow_to_sus": 12,
        "built_sus": 8,
        "spines": 0,
        "cores": 4,
        "switch_links": 0,
        "max_nodes": 64,
        "max_nodes_built_only": 32,
    }


def test_growth_with_sized_uplinks_and_explicit_counts_keeps_every_cable():
    """A 3:1 leaf (radix 16: 12 down, 4 up) whose SU is planned at 12 nodes but filled to 7, then 19:
    the uplinks follow the planned SU, so the bigger build adds cables and moves none."""
    extra = '    oversubscription: {leaf: "1:3"}\n    grow_to_sus: 4\n'
    for more in ("", "    uplinks: {leaf: 5}\n"):  # 5 explicit: the leaf lays out 11 down ports
        a = compile_text(fat_tree(hosts=7, radix=16, extra=extra + more))
        b = compile_text(fat_tree(hosts=19, radix=16, extra=extra + more))
        assert a.exit_code == b.exit_code == 0
        ea, eb = cable_ends(a.fabric, "f"), cable_ends(b.fabric, "f")
        assert len(eb) > len(ea) and {i: eb.get(i) for i in ea} == ea
        assert (a.fabric.facts["f"]["leaf_down"], a.fabric.facts["f"]["leaf_up"]) == ((11, 5) if more else (12, 4))


def test_the_plan_sizes_spines_by_the_planned_pod_even_when_partly_built():
    plan = plan_clos(
        tiers=3, rail_optimized=True, nics=1, leaf=split_ports(12, 3), spine=split_ports(128, 3), core_radix=128,
        nodes=9, leaves_per_pod=48,
    )  # fmt: skip
    assert (plan.built_sus, plan.built_pods, plan.spine_used, plan.spine.up) == (1, 1, 48, 16)
    assert plan.spine == TierPorts(96, 16)


# -- growth reservation and the cheapest design -------------------------------------------------


def test_ib_3tier_states_its_growth_reservation_and_the_cheaper_two_tier_design():
    """255 nodes: 64 leaves. 2 tiers: 32 uplinks per leaf over 64-port spines, p = 1, 32 spines: 96
    switches. 3 tiers as built: 64 leaves + 2 pods x 32 spines + 32 planes x 2 cores = 192. Without
    the growth to 4 pods the cores would take p2 = 32 links from each pod's spine: 1 per plane, 32."""
    c = compile_file(str(BLUEPRINTS / "ib-3tier.yaml"))
    ib = _fabric(_report(c), "ib")
    z = ib["sizing"]
    designs = {(d["tiers"], d["scope"]): d for d in z["designs"]}
    assert designs[(2, "built")]["switches"] == 64 + 32
    assert designs[(3, "built")]["switches"] == 64 + 64 + 32
    assert designs[(3, "planned")]["switches"] == 64 + 64 + 64
    assert (2, "planned") not in designs  # 511 nodes need more than 2 tiers of 64-port switches
    qm = c.catalogue.devices["qm9700"]
    r = z["reservation"]
    assert (r["cores"], r["spines"], r["switches"], r["power_w"]) == (32, 0, 32, 32 * qm.power_max_w)
    [line] = [n for n in ib["notes"] if n.startswith("cheapest design")]
    assert "2 tiers, 96 switches instead of 192" in line and "grow_to_sus 16) needs 3 tiers" in line
    text = to_text(_report(c))
    assert "32 cores more than the SUs built need" in text and "2 tiers, 96 switches instead of 192" in text


# -- group to group, pod to pod -----------------------------------------------------------------


def test_dragonfly_plus_group_to_group_ratio_by_hand():
    """dragonfly-plus: a group's 2 leaves x 32 terminal ports x 400G = 25.6 Tb/s; 16 global links x
    400G = 6.4 Tb/s to any one other group: 4:1. Uniform over the 4 others: 25.6 x 4/5 = 20.48 Tb/s
    leaves the group over 4 x 6.4 = 25.6 Tb/s: 0.8:1. Every leaf and spine is 1:1 meanwhile."""
    c = compile_file(str(BLUEPRINTS / "dragonfly-plus.yaml"))
    dfp = _fabric(_report(c), "dfp")
    g = dfp["group_to_group"]
    assert (g["group_terminal_gbps"], g["pair_gbps"], g["links_per_pair"]) == (25600, 6400, 16)
    assert (g["to_one_group"], g["uniform"]) == ("4:1", "0.8:1")
    assert dfp["oversubscription"]["end_to_end"] == "1:1"
    assert "group to group" in to_text(_report(c))
    [size] = [x for x in c.findings if x.rule == "dragonfly-size"]  # the check says it too
    assert "group to group under minimal routing 4:1 towards one other group, 0.8:1 uniform" in size.message


def test_dragonfly_group_to_group_ratio_by_hand():
    """p = 2, a = 4, h = 2, g = 9: a group has a*p = 8 terminals and m = a*h/(g-1) = 1 link to each
    other group: 8:1 to one group; uniform 8 x 8/9 over 8 links: 8/9."""
    c = compile_text(dragonfly())
    g = _fabric(_report(c), "df")["group_to_group"]
    assert (g["to_one_group"], g["uniform"]) == ("8:1", f"{float(8 / 9):.3g}:1")


def test_pod_to_pod_and_leaf_to_leaf_under_minimal_routing():
    # roce-3tier-oversub: a pod's 16 leaves x 96 down in use against 8 spines x 64 uplinks: 1536:512 = 3:1
    c = compile_file(str(BLUEPRINTS / "roce-3tier-oversub.yaml"))
    m = _fabric(_report(c), "roce")["sizing"]["minimal_routing"]
    assert m == {"unit": "pod", "to": "any other pod", "ratio": "3:1"}
    # small-ib, 2 tiers: a leaf's 32 down in use : 32 up
    small = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    assert _fabric(_report(small), "ib")["sizing"]["minimal_routing"]["ratio"] == "1:1"


# -- port use, rail alignment -------------------------------------------------------------------


def test_port_use_per_role_by_hand():
    # dragonfly p=4 a=8 h=4 on 64-port routers: k = 4 + 7 + 4 = 15 ports by design, 15/64 = 23 %
    c = compile_text(dragonfly(4, 8, 4, radix=64, hosts=8 * 4 * 3, extra="    groups: 3\n"))
    [use] = _fabric(_report(c), "df")["port_use"]
    assert (use["role"], use["design_ports"], use["radix"], use["design"]) == ("router", 15, 64, round(15 / 64, 3))
    # in use now: 3 groups, each router 4 terminals + 7 local + global links to 2 groups (m = 32/2 = 16 per pair)
    routers = 3 * 8
    used = routers * (4 + 7) + 2 * 3 * 16  # each global link has two ends
    assert (use["used"], use["total"]) == (used, routers * 64)


def test_rail_alignment_by_hand():
    # ib-3tier: NIC r of every node on a rail-r leaf: each of the 64 leaves one rail (the UFM pair aside)
    c = compile_file(str(BLUEPRINTS / "ib-3tier.yaml"))
    rails = _fabric(_report(c), "ib")["rails"]
    assert (rails["rails"], rails["switches"], rails["single_rail"], rails["aligned"]) == (8, 64, 64, True)
    # dragonfly-plus: 2 leaves per group, 8 nodes x 8 NICs: a leaf takes all 8 NICs of 4 nodes
    c = compile_file(str(BLUEPRINTS / "dragonfly-plus.yaml"))
    rails = _fabric(_report(c), "dfp")["rails"]
    assert (rails["switches"], rails["single_rail"], rails["aligned"]) == (10, 0, False)
    assert "takes NICs 0-7" in rails["detail"] and "multiple of 8" in rails["detail"]
    [i] = [x for x in c.findings if x.rule == "rail-alignment"]
    assert "not rail-aligned" in i.message


# -- networks around the fabric -----------------------------------------------------------------


def test_storage_fabric_on_the_nodes_storage_ports():
    """ib-3tier's storage fabric: 8 servers x 2 ports + 255 nodes x 2 storage ports = 526 ports on
    64-down leaves, 32 endpoints (64 ports) per leaf: 9 leaves; no lossless class (plain Ethernet)."""
    c = compile_file(str(BLUEPRINTS / "ib-3tier.yaml"))
    f = c.fabric
    facts = f.facts["storage"]
    assert facts["leaves"] == math.ceil((8 + 255) / 32) == 9 and facts["ethernet"]["lossless"] is None
    storage_ports = set(f.layouts["hgx-h100"].ports_of("storage"))
    node_links = [k for k in f.links_of("storage") if f.devices[k.a].model == "hgx-h100"]
    assert len(node_links) == 255 * 2 and {k.a_port for k in node_links} == storage_ports
    assert not [k for k in f.links_of("ib") if f.devices[k.a].model == "hgx-h100" and k.a_port in storage_ports]
    servers = [k for k in f.links_of("storage") if f.devices[k.a].group == "store"]
    assert len(servers) == 8 * 2


def test_an_endpoint_without_the_port_role_is_located():
    text = fat_tree(hosts=4, radix=8).replace("endpoints: [{group: h}]", "endpoints: [{group: h, ports: storage}]")
    c = compile_text(text)
    [e] = [x for x in c.findings if x.severity is Severity.ERROR]
    assert e.rule == "no-data-ports" and "no devices with storage ports" in e.message and e.path[-1] == "ports"


def test_management_islands_warn_and_name_the_racks():
    data = "ports: [{role: data, count: 1, speed_gbps: 400, lanes: 4, cage: osfp}]"
    with_bmc = data[:-1] + ", {role: mgmt, count: 1, speed_gbps: 1, cage: rj45}]"
    text = fat_tree(hosts=8, radix=8).replace(data, with_bmc) + "management: {switch: sn2201}\n"
    [w] = warnings(compile_text(text), "management-islands")
    assert "1 of 1 racks' management switches reach no aggregation switch (islands: A01)" in w.message


def test_no_aggregation_switch_is_managed_through_itself(small_ib):
    f = small_ib.fabric
    ctx = CheckContext(small_ib.blueprint, small_ib.catalogue, f)
    assert not list(check_reach(ctx))
    # Re-cable the first aggregation switch's management port to the rack switch of its rack, which uplinks through it.
    agg = next(d for d in f.devices if d.role == "mgmt-agg")
    rack_switch = next(d for d in f.devices if d.role == "mgmt" and d.rack == agg.rack)
    links = list(f.links)
    mgmt_port = f.layouts[agg.model].ports_of("mgmt")[0]
    i = next(k for k, link in enumerate(links) if link.a == agg.index and link.a_port == mgmt_port)
    free = max(p for p in f.layouts[rack_switch.model].ports_of("data"))
    links[i] = dataclasses.replace(links[i], b=rack_switch.index, b_port=free)
    tampered = Fabric(f.name, f.models, f.racks, f.devices, links, f.layouts, f.facts)
    found = list(check_reach(CheckContext(small_ib.blueprint, small_ib.catalogue, tampered)))
    [loop] = [x for x in found if x.rule == "management-loop"]
    assert f"{agg.name} is managed through itself" in loop.message and rack_switch.name in loop.message


def test_consoles_and_pdus_are_cabled(small_ib):
    f = small_ib.fabric
    pdus = [d for d in f.devices if d.role == "pdu"]
    assert len(pdus) == 6 * 3 and {d.height_u for d in pdus} == {0}  # 3 per rack in use, 0U
    consoles = {d.rack: d.index for d in f.devices if d.role == "console"}
    # a console server in each network rack (the compute racks have no console ports but the rack switch's)
    assert {f.racks[r].row for r in consoles} == {"N"}
    console_ports = {(d.index, p) for d in f.devices if d.rack in consoles for p in f.layouts[d.model].ports_of("console")}
    console_ports -= {(d, p) for d in consoles.values() for p in f.layouts[f.devices[d].model].ports_of("console")}
    cabled = {(k.a, k.a_port) for k in f.links if (k.a, k.a_port) in console_ports}
    assert cabled == console_ports
    assert all(consoles[f.devices[k.a].rack] == k.b for k in f.links if (k.a, k.a_port) in console_ports)


def test_ha_pair_on_shared_leaves_is_an_error():
    """2 UFMs of 2 ports on an SU of 2 leaves: ports go leaves-first, so both UFMs land on both leaves."""
    text = """apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: ha}
site:
  rows: [{name: A, racks: 4}, {name: N, racks: 1}]
nodes:
  - {name: gpu, model: hgx-h100, count: 8, placement: {row: A, per_rack: 4, first_u: 2}}
  - {name: ufm, model: ufm-appliance, count: 2, placement: {row: N, per_rack: 2, first_u: 30}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    rail_optimized: false
    endpoints: [{group: gpu}, {group: ufm, su: 0, ha: true}]
    placement:
      leaf: {row: N, per_rack: 8, first_u: 2}
      spine: {row: N, per_rack: 8, first_u: 12}
"""
    c = compile_text(text)
    [e] = [x for x in c.findings if x.rule == "service-ha"]
    assert e.severity is Severity.ERROR and "share leaf" in e.message and e.path[-1] == "ha"
    # small-ib's pair is on 4 different leaves: clean
    small = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    assert not [x for x in small.findings if x.rule == "service-ha"]


def test_leaves_follow_the_compute_racks_across_rows():
    """Top-of-rack leaves: 'follow' puts leaf i in the i-th rack the followed groups occupy, across
    both compute rows, and growing a group appends racks without moving a placed leaf."""
    text = """apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: tor}}
site:
  rows: [{{name: A, racks: 4}}, {{name: B, racks: 4}}]
nodes:
  - {{name: a, model: hgx-h100, count: 8, placement: {{row: A, per_rack: 2, first_u: 2}}}}
  - {{name: b, model: hgx-h100, count: {b}, placement: {{row: B, per_rack: 2, first_u: 2}}}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    rail_optimized: false
    su_nodes: 4
    endpoints: [{{group: a}}, {{group: b}}]
    placement:
      leaf: {{follow: [a, b], per_rack: 1, first_u: 40}}
      spine: {{follow: [a, b], first_rack: 4, per_rack: 1, first_u: 42}}
"""
    small, big = compile_text(text.format(b=4)), compile_text(text.format(b=8))
    assert small.fabric is not None and big.fabric is not None
    f = small.fabric
    racks = [f.racks[d.rack].name for d in f.devices if d.role == "leaf"]
    # 4 nodes (8 NICs each, 32 ports) per leaf: 12 nodes -> 3 leaves, in A01, A02, A03 (the first racks of a, b)
    assert racks == ["A01", "A02", "A03"]
    fb = big.fabric
    leaf_racks = {d.name: fb.racks[d.rack].name for d in fb.devices if d.role == "leaf"}
    assert [leaf_racks[d.name] for d in f.devices if d.role == "leaf"] == racks  # unchanged by growth
    assert sorted(leaf_racks.values()) == ["A01", "A02", "A03", "A04"]
    bad = compile_text(text.format(b=4).replace("follow: [a, b], per_rack: 1, first_u: 40", "follow: [zz], first_u: 40"))
    [e] = [x for x in bad.findings if x.severity is Severity.ERROR]
    assert e.rule == "unknown-reference" and e.path[-2:] == ("follow", 0)


def test_plain_ethernet_needs_no_lossless_class():
    text = fat_tree(hosts=8, radix=8, transport="ethernet")
    cut = text[: text.index("      lossless:")]
    c = ok(cut)
    assert c.fabric.facts["f"]["ethernet"]["lossless"] is None
    assert not [x for x in c.findings if x.rule == "lossless"]


def test_spread_hint_names_only_fixes_that_work():
    """19 links per accelerator over 8 boards x 2 chips: 19 is a multiple of no 2-chip board count
    (19 is odd), so no board count is offered; 16 links (8 x 2) is, and no 2-chip catalogue board
    can take 19: the hint says so instead of suggesting board counts that fail."""
    text = """apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: t19}
catalogue:
  devices:
    oex-cb8:
      accelerators: {count: 8, model: npu, links: 19, link_gbps: 400}
      ports: [{role: scaleup, count: 152, speed_gbps: 400, lanes: 2, cage: orthogonal, name: "a{acc}l{link}"}]
site:
  rows: [{name: S, racks: 1}]
scaleup:
  - {name: sn, kind: orthogonal, compute_board: oex-cb8, switch_board: oex-sb2, compute_boards: 16, switch_boards: 8,
     placement: {row: S, first_u: 1}}
"""
    [e] = compile_text(text).findings
    assert e.rule == "scaleup-spread"
    assert "a multiple of switch_boards x chips per board" in e.hint and "19 is a multiple of no count" in e.hint
    assert "compute_board with 16 links per accelerator" in e.hint
    assert "switch_boards: one of" not in e.hint  # no board count works, so none is offered
