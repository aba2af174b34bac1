"""Dragonfly and Dragonfly+: the compiled Fabric against the textbook formulas and graph facts.

Small designs with catalogue-override switches of exactly the radix needed (p=2, a=4, h=2:
k = 7, 9 groups, 72 endpoints), measured on the Fabric (links, Fabric.graph()).
"""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.builders.context import BuildContext
from supernodeiac.builders.dragonfly import cage_sections, global_link_arrays, global_links, global_plan, peer, peers
from supernodeiac.builders.geometry import Geometry
from supernodeiac.catalog.types import DeviceModel
from supernodeiac.checks import CheckContext
from supernodeiac.checks.dragonfly import check_wiring
from supernodeiac.fabric import Fabric, PortLayout
from supernodeiac.findings import Severity
from supernodeiac.pipeline import Compiled, Stage, compile_file

HEADER = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: df-test}}
catalogue:
  devices:
    router:
      kind: switch
      description: test router of exactly the radix needed
      ports: [{{role: data, count: {radix}, speed_gbps: 400, lanes: 4, cage: osfp}}]
      sources: [{{ref: test, grade: ILLUSTRATIVE}}]
    host:
      kind: node
      description: test host
      ports: [{{role: data, count: {nics}, speed_gbps: 400, lanes: 4, cage: osfp}}]
      sources: [{{ref: test, grade: ILLUSTRATIVE}}]
site:
  rows: [{{name: A, racks: 40}}, {{name: N, racks: 40}}]
nodes:
  - {{name: h, model: host, count: {hosts}, placement: {{row: A, per_rack: 16}}}}
"""


def dragonfly(
    p: int = 2,
    a: int = 4,
    h: int = 2,
    *,
    hosts: int | None = None,
    nics: int = 1,
    radix: int | None = None,
    extra: str = "",
) -> str:
    hosts = hosts if hosts is not None else a * p * (a * h + 1) // nics
    return HEADER.format(radix=radix or p + a - 1 + h, nics=nics, hosts=hosts) + (
        "scaleout:\n"
        "  - name: df\n"
        "    kind: dragonfly\n"
        "    router: router\n"
        f"    terminals: {p}\n"
        f"    routers_per_group: {a}\n"
        f"    global_links: {h}\n"
        "    endpoints: [{group: h}]\n"
        "    placement: {row: N}\n" + extra
    )


def built(text: str) -> Compiled:
    c = compile_text(text)
    assert c.stage is Stage.BUILT and c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings]
    return c


def groups_of(fabric: Fabric, name: str, role: str) -> dict[int, int]:
    return {d.index: d.coord("group") for d in fabric.devices if d.group == name and d.role == role}


def global_pair_counts(fabric: Fabric, name: str, role: str) -> Counter:
    grp = groups_of(fabric, name, role)
    pairs: Counter = Counter()
    for link in fabric.links_of(name):
        if link.a in grp and link.b in grp and grp[link.a] != grp[link.b]:
            pairs[frozenset((grp[link.a], grp[link.b]))] += 1
    return pairs


def router_diameter(fabric: Fabric, name: str, roles: tuple[str, ...]) -> int:
    """Switch-hop diameter over the given roles, measured on Fabric.graph() by BFS from each."""
    g = fabric.graph(name)
    switches = [d.index for d in fabric.devices if d.group == name and d.role in ("router", "leaf", "spine")]
    sub = g.subgraph(switches)
    ends = [d.index for d in fabric.devices if d.group == name and d.role in roles]
    return max(max(nx.single_source_shortest_path_length(sub, s)[t] for t in ends) for s in ends)


# -- the balanced textbook Dragonfly -----------------------------------------------------------


@pytest.fixture(scope="module")
def balanced() -> Compiled:
    return built(dragonfly())


def test_full_balanced_dragonfly_counts_match_the_formulas(balanced: Compiled) -> None:
    f = balanced.fabric
    p, a, h = 2, 4, 2
    g = a * h + 1
    facts = f.facts["df"]
    assert (facts["p"], facts["a"], facts["h"], facts["g"], facts["k"]) == (p, a, h, g, p + a - 1 + h)
    assert facts["max_groups"] == g and facts["capacity"] == a * p * g == 72
    routers = [d for d in f.devices if d.role == "router"]
    assert len(routers) == g * a
    hosts = [d for d in f.devices if d.role == "node"]
    terminal_links = [link for link in f.links if f.devices[link.a].role == "node"]
    # N = a*p*(a*h+1) endpoints, each cabled once, to a router's terminal port.
    assert len(hosts) == len(terminal_links) == a * p * (a * h + 1)
    assert all(f.devices[link.b].role == "router" for link in terminal_links)
    assert Counter(link.a for link in terminal_links) == Counter({d.index: 1 for d in hosts})
    # Every router: p terminals, a-1 local, h global ports, i.e. exactly its radix.
    degree = Counter()
    for link in f.links:
        degree[link.a] += 1
        degree[link.b] += 1
    assert {degree[r.index] for r in routers} == {p + a - 1 + h}
    assert len(f.links) == a * p * g + g * a * (a - 1) // 2 + g * (g - 1) // 2


def test_every_host_pair_connected_and_router_diameter_is_three(balanced: Compiled) -> None:
    f = balanced.fabric
    g = f.graph("df")
    hosts = [d.index for d in f.devices if d.role == "node"]
    assert nx.is_connected(g.subgraph(hosts + [d.index for d in f.devices if d.role == "router"]))
    # local - global - local: at most 3 router hops between any two routers.
    assert router_diameter(f, "df", ("router",)) == 3


def test_terminal_ports_follow_the_slot_formula(balanced: Compiled) -> None:
    f, p, a, h = balanced.fabric, 2, 4, 2
    checked = 0
    for link in f.links_of("df"):
        host = f.devices[link.a]
        if host.role != "node":
            continue
        t = host.coord("index")
        router = f.devices[link.b]
        assert (router.coord("group"), router.coord("router")) == (t // (a * p), (t % (a * p)) // p)
        assert f.layouts[router.model].ports_of("data").index(link.b_port) == t % p
        checked += 1
    assert checked == a * p * (a * h + 1)  # every terminal port of the full-size fabric


def test_local_links_are_all_to_all_inside_each_group(balanced: Compiled) -> None:
    f = balanced.fabric
    grp = groups_of(f, "df", "router")
    local = Counter()
    for link in f.links_of("df"):
        if link.a in grp and link.b in grp and grp[link.a] == grp[link.b]:
            local[frozenset((link.a, link.b))] += 1
    assert set(local.values()) == {1}
    assert len(local) == 9 * 4 * 3 // 2


@pytest.mark.parametrize("arrangement", ["absolute", "relative", "circulant"])
@pytest.mark.parametrize(("p", "a", "h", "groups"), [(2, 4, 2, None), (2, 4, 2, 5), (2, 4, 2, 4), (1, 3, 3, 7), (1, 2, 3, 6)])
def test_global_links_per_group_pair_equal_for_each_arrangement(arrangement: str, p: int, a: int, h: int, groups) -> None:
    g = groups or a * h + 1
    extra = f"    arrangement: {arrangement}\n" + (f"    groups: {groups}\n" if groups else "")
    c = built(dragonfly(p, a, h, hosts=a * p * g, extra=extra))
    pairs = global_pair_counts(c.fabric, "df", "router")
    m = (a * h) // (g - 1)
    assert len(pairs) == g * (g - 1) // 2
    assert set(pairs.values()) == {m}
    assert c.fabric.facts["df"]["global_spare_per_group"] == a * h - m * (g - 1)
    sizes = [f for f in c.findings if f.rule == "dragonfly-size"]
    free = a * h - m * (g - 1)
    assert len(sizes) == 1 and ((f"{free} of {a * h} global ports per group left free" in sizes[0].message) == (free > 0))


@pytest.mark.parametrize("arrangement", ["absolute", "relative", "circulant"])
@pytest.mark.parametrize("planned", [2, 3, 8, 9, 10])
def test_arrangements_are_involutions_reaching_every_other_group_once(arrangement: str, planned: int) -> None:
    for i in range(planned):
        peers = []
        for s in range(planned - 1):
            j, s2 = peer(arrangement, planned, i, s)
            assert peer(arrangement, planned, j, s2) == (i, s)
            peers.append(j)
        assert sorted(peers) == [x for x in range(planned) if x != i]


@pytest.mark.parametrize("arrangement", ["absolute", "relative", "circulant"])
def test_bulk_global_links_are_the_generator_link_for_link(arrangement: str) -> None:
    """The builders' numpy form of the global wiring (peers, global_link_arrays) lists the same
    links in the same order as the per-link definition, for odd and even planned groups, groups
    left to grow into, several switches and ports per group, and no global link at all."""
    for planned in (1, 2, 3, 8, 9, 10, 17):
        i, s = (np.repeat(np.arange(planned), planned - 1), np.tile(np.arange(planned - 1), planned))
        j, s2 = peers(arrangement, planned, i, s)
        assert list(zip(j.tolist(), s2.tolist())) == [peer(arrangement, planned, x, y) for x, y in zip(i.tolist(), s.tolist())]
        for built in {1, 2, planned // 2 or 1, planned}:
            for switches, h in ((1, 1), (2, 3), (4, 4), (3, 5), (4, 16)):
                plan = global_plan(arrangement, planned, switches, h)
                want = list(global_links(plan, built))
                got = list(zip(*(x.tolist() for x in global_link_arrays(plan, built))))
                assert got == want, (planned, built, switches, h)
                assert len(got) == plan.parallel * built * (built - 1) // 2


def test_arrangements_wire_differently() -> None:
    wiring = {}
    for arrangement in ("absolute", "relative", "circulant"):
        f = built(dragonfly(extra=f"    arrangement: {arrangement}\n")).fabric
        wiring[arrangement] = sorted((f.devices[k.a].name, k.a_port, f.devices[k.b].name, k.b_port) for k in f.links)
    assert len({tuple(w) for w in wiring.values()}) == 3


def test_global_plan_parallel_links() -> None:
    plan = global_plan("absolute", 4, 4, 2)  # 8 group ports, 3 peers: 2 each, 2 free
    assert (plan.parallel, plan.used, plan.spare) == (2, 6, 2)


def test_growth_with_absolute_arrangement_keeps_existing_cables() -> None:
    """Planned for a*h+1 groups, building 5 then 9 leaves every cable of the 5 where it was."""
    extra = "    grow_to_groups: 9\n    groups: {g}\n"
    small = built(dragonfly(hosts=40, extra=extra.format(g=5))).fabric
    full = built(dragonfly(hosts=72, extra=extra.format(g=9))).fabric

    def cables(f: Fabric) -> set[tuple]:
        return {(k.id, f.devices[k.a].name, k.a_port, f.devices[k.b].name, k.b_port) for k in f.links}

    assert small.facts["df"]["global_reserved_per_group"] == 4
    assert cables(small) < cables(full)


def test_multi_nic_hosts_take_consecutive_terminal_ports_when_asked() -> None:
    f = built(dragonfly(nics=2, extra="    terminal_order: consecutive\n")).fabric
    checked = 0
    for link in f.links_of("df"):
        host = f.devices[link.a]
        if host.role != "node":
            continue
        nic = f.layouts[host.model].ports_of("data").index(link.a_port)
        t = host.coord("index") * 2 + nic
        router = f.devices[link.b]
        assert (router.coord("group"), router.coord("router")) == (t // 8, (t % 8) // 2)
        checked += 1
    assert checked == 4 * 2 * (4 * 2 + 1)  # a * p * (a * h + 1) terminal ports, two per host
    assert f.facts["df"]["terminal_order"] == "consecutive"


def test_multi_nic_hosts_are_rail_aligned_by_default() -> None:
    """2 NICs per host, a = 4 routers per group: routers 0-1 of a group carry NIC 0 (rail 0) of the
    group's 4 hosts, routers 2-3 NIC 1; p = 2 hosts per router. By hand, host i (4 per group) NIC r:
    group i // 4, router r * 2 + (i % 4) // 2, terminal port i % 2."""
    f = built(dragonfly(nics=2)).fabric
    assert f.facts["df"]["terminal_order"] == "rail-aligned"
    rails_of: dict[int, set[int]] = {}
    checked = 0
    for link in f.links_of("df"):
        host = f.devices[link.a]
        if host.role != "node":
            continue
        nic = f.layouts[host.model].ports_of("data").index(link.a_port)
        i = host.coord("index")
        router = f.devices[link.b]
        assert (router.coord("group"), router.coord("router")) == (i // 4, nic * 2 + (i % 4) // 2)
        assert f.layouts[router.model].ports_of("data").index(link.b_port) == i % 2
        rails_of.setdefault(router.index, set()).add(nic)
        checked += 1
    assert checked == 4 * 2 * (4 * 2 + 1)
    assert all(len(r) == 1 for r in rails_of.values())  # every router carries one rail


def test_rail_aligned_when_impossible_is_an_error_with_the_fix() -> None:
    c = compile_text(dragonfly(p=2, a=3, h=2, nics=2, hosts=3 * 2 * 7 // 2, extra="    terminal_order: rail-aligned\n"))
    [e] = [x for x in c.findings if x.severity is Severity.ERROR]
    assert e.rule == "rails" and e.path[-1] == "terminal_order" and "multiple of 2" in e.hint
    # Left to the default, the same design falls back to consecutive terminals.
    ok = built(dragonfly(p=2, a=3, h=2, nics=2, hosts=3 * 2 * 7 // 2))
    assert ok.fabric.facts["df"]["terminal_order"] == "consecutive"


def test_tampered_fabric_fails_the_pair_check(balanced: Compiled) -> None:
    f = balanced.fabric
    grp = groups_of(f, "df", "router")
    victim = next(k for k in f.links if k.a in grp and k.b in grp and grp[k.a] != grp[k.b])
    tampered = Fabric(f.name, f.models, f.racks, f.devices, [k for k in f.links if k != victim], f.layouts, f.facts)
    findings = list(check_wiring(CheckContext(balanced.blueprint, balanced.catalogue, tampered)))
    assert [x.rule for x in findings] == ["dragonfly-global-links"]
    assert f"groups {grp[victim.a] + 1} and {grp[victim.b] + 1}" in findings[0].message or "have none" in findings[0].message
    assert "1 of 36 group pairs have none" in findings[0].message


@pytest.mark.parametrize(
    "extra",
    [
        "",
        'naming: {cable_id: "{fabric}:{b}:{b_port}#{a}"}\nmedia: {pin: aoc}\n',
        'naming: {cable_id: "{a}-{a_port}-x"}\n',
    ],
)
def test_bulk_links_are_the_links_connect_makes(extra: str) -> None:
    """The builders' bulk paths (BuildContext.add_links, add_link_rows) and connect agree on every field of every link."""
    c = compile_text(dragonfly(extra="").replace("site:", extra + "site:"))
    assert c.fabric is not None, [f.message for f in c.findings]
    f, bp = c.fabric, c.blueprint
    # The same devices, no links; the geometry lays out the same racks again.
    copy = Fabric(f.name, f.models, [], f.devices, [], f.layouts, f.facts, cable_id=bp.naming.cable_id)
    ctx = BuildContext(bp, c.catalogue, copy, Geometry(bp.site, copy))
    assert copy.racks == f.racks
    chooser = ctx.chooser(None, ("media",))
    for k in f.links_of("df"):
        made = ctx.connect("df", k.a, k.a_port, k.b, k.b_port, chooser=chooser, origin=("scaleout", 0), tier=k.tier)
        assert made.medium == k.medium and made.gbps == k.gbps and copy.links[-1] == k
    # The builder hands each tier's links over in one call (node-leaf, local, global, in that order).
    # Single-port cages: the per-cage settling after the build changes none of them.
    runs: dict[str, list] = {}
    for k in f.links_of("df"):
        runs.setdefault(k.tier, []).append(k)
    for tier, run in runs.items():
        ctx.add_links(
            "df",
            [k.a for k in run],
            [k.a_port for k in run],
            [k.b for k in run],
            [k.b_port for k in run],
            chooser=chooser,
            origin=("scaleout", 0),
            tier=tier,
        )
    n = len(f.links.indices_of("df"))
    assert copy.links[-n:] == list(f.links_of("df"))
    for tier, run in runs.items():
        rows = [(k.a, k.a_port, k.b, k.b_port) for k in run]
        ctx.add_link_rows("df", rows, chooser=chooser, origin=("scaleout", 0), tier=tier)
    assert copy.links[-n:] == list(f.links_of("df"))
    if "pin" in extra:
        assert {k.medium for k in f.links_of("df")} == {"aoc"} and all(k.pinned for k in f.links_of("df"))
        assert next(iter(f.links_of("df"))).id.startswith("df:")


# -- impossible designs -------------------------------------------------------------------------


def test_too_many_groups_is_an_error_at_the_groups_key_with_alternatives() -> None:
    text = dragonfly(hosts=80, extra="    groups: 10\n")
    c = compile_text(text)
    assert c.stage is Stage.UNBUILDABLE and c.exit_code == 1
    (finding,) = c.findings
    assert finding.rule == "dragonfly-groups" and finding.severity is Severity.ERROR
    line = text.splitlines().index("    groups: 10") + 1
    assert (finding.location.line, finding.location.col) == (line, 5)
    assert "at most 9 groups" in finding.message and "asks for 10" in finding.message
    # nearest valid: the most groups a=4,h=2 join; or h=3 (10 groups need 9 peers: ceil(9/4)); or a=5.
    assert "groups: 9" in finding.hint
    assert "global_links: 3" in finding.hint and "routers_per_group: 5" in finding.hint
    assert "exceeds router's 7" in finding.hint


def test_too_many_endpoints_points_at_the_endpoints() -> None:
    text = dragonfly(hosts=73)
    c = compile_text(text)
    (finding,) = c.findings
    assert finding.rule == "dragonfly-groups" and "needs 10 groups for its 73 endpoint ports" in finding.message
    assert finding.location.line == text.splitlines().index("    endpoints: [{group: h}]") + 1


def test_radix_budget_is_an_error_with_fits() -> None:
    text = dragonfly(2, 4, 3, radix=7, hosts=8)
    c = compile_text(text)
    (finding,) = c.findings
    assert finding.rule == "dragonfly-radix"
    assert "2 + 4 - 1 + 3 = 8" in finding.message
    assert "global_links: 2" in finding.hint and "routers_per_group: 3" in finding.hint and "terminals: 1" in finding.hint


def test_balanced_defaults_come_from_the_radix() -> None:
    text = HEADER.format(radix=15, nics=1, hosts=32) + (
        "scaleout:\n  - {name: df, kind: dragonfly, router: router, endpoints: [{group: h}], placement: {row: N}}\n"
    )
    f = built(text).fabric
    assert (f.facts["df"]["p"], f.facts["df"]["a"], f.facts["df"]["h"]) == (4, 8, 4)


@pytest.mark.parametrize(
    ("p", "a", "h", "expect"),
    [
        (2, 4, 1, "terminals over-provisioned against global links: p = 2 is 1 more than h = 1"),
        (2, 4, 3, "global links over-provisioned: h = 3 is 1 more than p = 2"),
        (2, 6, 2, "local links over-provisioned: a = 6 is 2 more than 2p = 4"),
        (3, 4, 3, "terminals over-provisioned against local links: 2p = 6 is 2 more than a = 4"),
    ],
)
def test_balance_warning_says_which_side_and_by_how_much(p: int, a: int, h: int, expect: str) -> None:
    c = compile_text(dragonfly(p, a, h, hosts=a * p * 2, extra="    groups: 2\n"))
    # (copper runs at their rated reach also warn, rule reach-margin: not what this test is about)
    warnings = [f for f in c.findings if f.severity is Severity.WARNING and f.rule != "reach-margin"]
    assert [w.rule for w in warnings] == ["dragonfly-balance"]
    assert expect in warnings[0].message
    assert c.exit_code == 0


# -- Dragonfly+ ------------------------------------------------------------------------------------

PLUS = """\
scaleout:
  - name: dfp
    kind: dragonfly-plus
    switch: leaf
    spine_switch: spine
    leaves: {leaves}
    spines: {spines}
    global_links: {h}
{extra}    endpoints: [{{group: h}}]
    placement: {{leaf: {{row: N}}, spine: {{row: N, first_u: 20}}}}
"""


def plus(
    leaves: int = 3, spines: int = 2, up: int = 4, down: int = 4, h: int = 2, hosts: int | None = None, extra: str = ""
) -> str:
    """Leaves of down+up ports at down:up, spines of leaves*(up/spines) + h ports."""
    p1 = up // spines
    g = spines * h + 1
    hosts = hosts if hosts is not None else leaves * down * g
    head = HEADER.format(radix=down + up, nics=1, hosts=hosts).replace("    router:", "    leaf:")
    spine = (
        "    spine:\n      kind: switch\n      description: test spine\n"
        f"      ports: [{{role: data, count: {leaves * p1 + h}, speed_gbps: 400, lanes: 4, cage: osfp}}]\n"
        "      sources: [{ref: test, grade: ILLUSTRATIVE}]\n"
    )
    head = head.replace("site:\n", spine + "site:\n")
    ratio = f'    oversubscription: "{down}:{up}"\n'
    return head + PLUS.format(leaves=leaves, spines=spines, h=h, extra=ratio + extra)


def test_dragonfly_plus_counts_match_the_formulas() -> None:
    leaves, spines, up, down, h = 3, 2, 4, 4, 2
    c = built(plus(leaves, spines, up, down, h))
    f = c.fabric
    g = spines * h + 1
    p1 = up // spines
    facts = f.facts["dfp"]
    assert facts["capacity"] == leaves * down * (spines * h + 1) == facts["endpoint_ports"]
    assert sum(d.role == "leaf" for d in f.devices) == g * leaves
    assert sum(d.role == "spine" for d in f.devices) == g * spines
    assert {d.tier for d in f.devices if d.role == "leaf"} == {1} and {d.tier for d in f.devices if d.role == "spine"} == {2}
    roles = Counter(tuple(sorted((f.devices[k.a].role, f.devices[k.b].role))) for k in f.links)
    assert roles[("leaf", "node")] == leaves * down * g
    assert roles[("leaf", "spine")] == g * leaves * up
    assert roles[("spine", "spine")] == g * (g - 1) // 2
    # every leaf reaches every spine of its group with p1 links
    grp = {d.index: d.coord("group") for d in f.devices if d.role in ("leaf", "spine")}
    ls = Counter((k.a, k.b) for k in f.links if f.devices[k.a].role == "leaf" and f.devices[k.b].role == "spine")
    assert set(ls.values()) == {p1} and all(grp[a] == grp[b] for a, b in ls)
    assert set(global_pair_counts(f, "dfp", "spine").values()) == {1}
    # leaf - spine - spine - leaf
    assert router_diameter(f, "dfp", ("leaf",)) == 3
    hosts = [d.index for d in f.devices if d.role == "node"]
    assert nx.is_connected(f.graph("dfp").subgraph(hosts + list(grp)))


def test_dragonfly_plus_parallel_globals_with_fewer_groups() -> None:
    c = built(plus(hosts=3 * 4 * 3, extra="    groups: 3\n    arrangement: circulant\n"))
    pairs = global_pair_counts(c.fabric, "dfp", "spine")
    assert len(pairs) == 3 and set(pairs.values()) == {4 // 2}


def test_dragonfly_plus_too_many_groups() -> None:
    c = compile_text(plus(hosts=60, extra="    groups: 6\n"))
    (finding,) = c.findings
    assert finding.rule == "dragonfly-groups" and "at most 5 groups" in finding.message
    assert "groups: 5" in finding.hint and "global_links: 3" in finding.hint


def test_dragonfly_plus_spines_must_divide_leaf_up_ports() -> None:
    c = compile_text(plus(spines=3, up=4, h=2, hosts=12, extra="    groups: 1\n"))
    (finding,) = c.findings
    assert finding.rule == "dragonfly-radix" and "spines: one of 1, 2, 4" in finding.hint


# -- shipped blueprints ----------------------------------------------------------------------------


def test_shipped_balanced_dragonfly_uses_the_radix_and_is_rail_aligned() -> None:
    """dragonfly-balanced: p = 16, a = 32, h = 16 on 64-port routers (63 used), 9 groups of 64
    eight-NIC nodes. By hand: m = a*h // (g - 1) = 512 // 8 = 64 global links per group pair;
    NIC r of a group's node q lands on router 4r + q // 16, terminal port q mod 16; the routers sit
    in their group's compute racks (top-of-rack), 2 per rack."""
    c = compile_file(str(BLUEPRINTS / "dragonfly-balanced.yaml"))
    f = c.fabric
    facts = f.facts["df"]
    p, a, h, g = facts["p"], facts["a"], facts["h"], facts["g"]
    assert (p, a, h, g) == (16, 32, 16, 9) and a == 2 * p == 2 * h and facts["k"] == 63
    assert set(global_pair_counts(f, "df", "router").values()) == {64}
    assert len(global_pair_counts(f, "df", "router")) == 9 * 8 // 2
    assert facts["terminal_order"] == "rail-aligned" and facts["rails"] == 8
    nodes = {d.index: d for d in f.devices if d.role == "node"}
    order = {d: i for i, d in enumerate(sorted(nodes))}  # slot order: groups in endpoint order, nodes in index order
    checked = 0
    for link in f.links_of("df"):
        if link.a not in nodes:
            continue
        i = order[link.a]
        r = f.layouts["hgx-h100"].ports_of("data").index(link.a_port)
        group, q = divmod(i, 64)
        router = f.devices[link.b]
        assert (router.coord("group"), router.coord("router")) == (group, 4 * r + q // 16)
        assert f.layouts["qm9700"].ports_of("data").index(link.b_port) == q % 16
        checked += 1
    assert checked == 576 * 8
    # top-of-rack: group j's routers in the racks of its nodes, 2 per rack
    for d in f.devices:
        if d.role == "router":
            group_racks = {n.rack for n in nodes.values() if n.group == f"gpu-{d.coord('group') + 1}"}
            assert d.rack in group_racks and d.u in (36, 37)
    assert not [x for x in c.findings if x.rule == "port-utilisation" and x.severity is Severity.WARNING]
    # cage-aligned sections: terminals 0-15, local 16-46, global 48-63 (47 shares the last local cage, empty)
    data = f.layouts["qm9700"].ports_of("data")
    tiers_of_cage: dict[tuple[int, int], set[str]] = {}
    used: set[int] = set()
    layout = f.layouts["qm9700"]
    for link in f.links_of("df"):
        spec_tier = link.tier
        for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if f.devices[dev].role == "router":
                tiers_of_cage.setdefault((dev, layout.port_cages[port]), set()).add(spec_tier)
                used.add(data.index(port))
    assert all(len(t) == 1 for t in tiers_of_cage.values())
    assert used == set(range(47)) | set(range(48, 64))
    assert facts["cage_aligned"] == {"router": True}


def test_cage_sections_start_on_new_cages_and_pack_when_the_radix_has_no_room() -> None:
    """Twin-port cages: sections 3, 2, 2 take cages 0-1 (port 3 empty), 2, 3; sections 3, 3, 2 of
    8 ports do not fit aligned (10 > 8), so they pack: ports 0-2, 3-5, 6-7, False."""
    model = DeviceModel.model_validate(
        {
            "kind": "switch",
            "description": "8 ports in twin-port cages",
            "ports": [{"role": "data", "count": 8, "speed_gbps": 400, "lanes": 4, "cage": "osfp", "ports_per_cage": 2}],
            "sources": [{"ref": "test", "grade": "ILLUSTRATIVE"}],
        }
    )
    layout = PortLayout(model)
    data = layout.ports_of("data")
    assert [layout.port_cages[x] for x in data] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert cage_sections(layout, data, [3, 2, 2]) == ([data[0:3], data[4:6], data[6:8]], True)
    assert cage_sections(layout, data, [3, 3, 2]) == ([data[0:3], data[3:6], data[6:8]], False)
    assert cage_sections(layout, data, [2, 2]) == ([data[0:2], data[2:4]], True)


def test_a_router_using_a_quarter_of_its_ports_is_a_utilisation_warning() -> None:
    """p = 4, a = 8, h = 4 on a 64-port router: k = 15 of 64 (23 %), below the 50 % planning floor."""
    c = compile_text(dragonfly(4, 8, 4, radix=64, hosts=8 * 4 * 3, extra="    groups: 3\n"))
    [w] = [x for x in c.findings if x.rule == "port-utilisation" and x.severity is Severity.WARNING]
    assert "uses 15 of its 64 data ports (23%)" in w.message and "terminals 16, routers_per_group 32" in w.hint
    ok = compile_text(
        dragonfly(4, 8, 4, radix=64, hosts=8 * 4 * 3, extra="    groups: 3\n") + "planning: {port_utilisation_min: 0.2}\n"
    )
    assert not [x for x in ok.findings if x.rule == "port-utilisation" and x.severity is Severity.WARNING]


def _wiring_findings(c: Compiled, links: list) -> list:
    f = c.fabric
    tampered = Fabric(f.name, f.models, f.racks, f.devices, links, f.layouts, f.facts)
    return list(check_wiring(CheckContext(c.blueprint, c.catalogue, tampered)))


def test_a_missing_local_link_names_the_first_router_short_of_peers(balanced: Compiled) -> None:
    f = balanced.fabric
    grp = groups_of(f, "df", "router")
    local = [k for k in f.links if k.a in grp and k.b in grp and grp[k.a] == grp[k.b]]
    victim = local[len(local) // 2]  # a link inside some group, between two of its routers
    found = _wiring_findings(balanced, [k for k in f.links if k != victim])
    assert [x.rule for x in found] == ["dragonfly-local"]
    first = f.devices[min(victim.a, victim.b)]  # routers are checked in device order
    assert found[0].message == (
        f"df: {first.name} reaches 2 switches of its group (links [1]); the design wants 3, 1 link(s) each"
    )


def test_a_doubled_leaf_spine_link_is_reported_with_its_counts() -> None:
    c = built(plus())  # 3 leaves, 2 spines, 4 up ports: 2 links from each leaf to each spine
    f = c.fabric
    up = next(k for k in f.links if f.devices[k.a].role == "leaf" and f.devices[k.b].role == "spine")
    found = _wiring_findings(c, [*f.links, up])  # the same leaf and spine once more
    local = [x for x in found if x.rule == "dragonfly-local"]
    assert len(local) == 1
    assert local[0].message == (
        f"dfp: {f.devices[up.a].name} reaches 2 switches of its group (links [2, 3]); the design wants 2, 2 link(s) each"
    )


@pytest.mark.parametrize("k", [8, 16])
def test_the_bench_dragonfly_plus_is_the_largest_of_its_radix_and_validates_clean(k: int) -> None:
    """bench/dragonfly_gen.py --plus K: (K/2)^2 * ((K/2)^2 + 1) endpoints, one global link per
    group pair, every switch port used, no warning (the 1,049,600-endpoint benchmark at K = 64)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "dragonfly_gen.py"
    spec = importlib.util.spec_from_file_location("dragonfly_gen", path)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("dragonfly_gen", gen)
    spec.loader.exec_module(gen)
    c = compile_text(gen.dragonfly_plus_blueprint(k), "dfp.yaml")
    assert c.fabric is not None
    assert not [f.message for f in c.findings if f.severity.value in ("error", "warning")]
    half = k // 2
    groups = half * half + 1
    endpoints = half * half * groups
    kinds = Counter(d.role for d in c.fabric.devices)
    assert kinds == {"node": endpoints, "leaf": groups * half, "spine": groups * half}
    assert len(c.fabric.links) == endpoints + endpoints + groups * half * half // 2
