"""CXL memory pools: the compiled Fabric against the pool's arithmetic, and the checks biting."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import BLUEPRINTS, cable_ends, compile_text

from supernodeiac.findings import Severity
from supernodeiac.pipeline import Compiled, Stage, compile_file

POOL = "kvpool"


@pytest.fixture(scope="module")
def shipped() -> Compiled:
    c = compile_file(str(BLUEPRINTS / "cxl-pool.yaml"))
    assert c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings]
    return c


def blueprint(
    *,
    hosts: int = 4,
    host_row: str = "A",
    host_rack: int = 1,
    switches: int = 1,
    per_switch: int = 2,
    promised: float = 256,
    target: float | None = None,
    links: int | None = None,
    catalogue: str = "",
    pool_extra: str = "",
) -> str:
    """A small pool: hosts of one node group, switches and memory in rack A01."""
    target_line = f"\n    per_host_gbytes: {target}" if target is not None else ""
    links_line = f"\n        links: {links}" if links is not None else ""
    return f"""\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: t}}
{catalogue}
site:
  rows:
    - {{name: A, racks: 2}}
    - {{name: B, racks: 2}}
    - {{name: C, racks: 2}}
nodes:
  - name: cpu
    model: cxl-host-2s
    count: {hosts}
    placement: {{row: {host_row}, first_rack: {host_rack}, per_rack: 9, first_u: 2}}
cxl:
  - name: {POOL}
    switch: cxl-switch-256l
    switches: {switches}
    memory: {{model: cxl-mem-1t, per_switch: {per_switch}}}
    hosts:
      - group: cpu
        promised_gb: {promised}{links_line}{target_line}{pool_extra}
    placement:
      switch: {{row: A, per_rack: 2, first_u: 20}}
      memory: {{row: A, per_rack: 12, first_u: 24}}
management:
  switch: sn2201
"""


def of_rule(c: Compiled, rule: str, severity: Severity | None = None) -> list:
    return [f for f in c.findings if f.rule == rule and (severity is None or f.severity is severity)]


def pool_links(c: Compiled) -> list:
    return [link for link in c.fabric.links if link.fabric == POOL]


def line_col(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the first line containing ``needle`` (at the needle)."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError(needle)


# -- the shipped blueprint: counts, ends, capacity and bandwidth from the Fabric -------------------


def test_shipped_pool_counts_match_the_pool_arithmetic(shipped):
    f, spec = shipped.fabric, shipped.blueprint.cxl[0]
    by_role = Counter(d.role for d in f.devices if d.group == POOL)
    hosts = [d for d in f.devices if d.group in {"cpu", "kvhost"}]
    assert by_role["cxl-switch"] == spec.switches
    assert by_role["cxl-memory"] == spec.switches * spec.memory.per_switch
    # each host has one link to each switch (links default: one per switch); each memory device one
    expected_links = len(hosts) * spec.switches + by_role["cxl-memory"]
    assert len(pool_links(shipped)) == expected_links
    facts = f.facts[POOL]
    assert facts["kind"] == "cxl-pool"
    assert facts["hosts"] == len(hosts) == 10
    assert facts["switches"] == spec.switches
    assert facts["switch_ports_used"] == len(hosts) + spec.memory.per_switch


def test_every_host_reaches_every_switch_once_and_no_switch_port_is_shared(shipped):
    f = shipped.fabric
    seen_ports: set[tuple[int, int]] = set()
    per_host: dict[str, Counter] = {}
    for link in pool_links(shipped):
        a, b = f.devices[link.a], f.devices[link.b]
        assert "cxl-switch" in (a.role, b.role)  # every pool link has a switch at one end
        for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
            assert f.port_group(dev, port).role == "cxl"
            assert (dev, port) not in seen_ports
            seen_ports.add((dev, port))
        if a.role == "node":
            per_host.setdefault(a.name, Counter())[b.name] += 1
    switches = sorted(d.name for d in f.devices if d.role == "cxl-switch")
    assert len(per_host) == 10
    for counts in per_host.values():
        assert sorted(counts) == switches and set(counts.values()) == {1}


def test_capacity_and_promise_sums(shipped):
    f, spec = shipped.fabric, shipped.blueprint.cxl[0]
    memory = [d for d in f.devices if d.role == "cxl-memory"]
    capacity = sum(f.models[d.model].memory_gb for d in memory)
    promised = sum(len(shipped_hosts(shipped, e.label)) * e.promised_gb for e in spec.hosts)
    assert f.facts[POOL]["capacity_gb"] == capacity == 12 * 1024
    assert f.facts[POOL]["promised_gb"] == promised == 8 * 1024 + 2 * 1536
    (summary,) = of_rule(shipped, "cxl-capacity")
    assert summary.severity is Severity.INFO
    assert f"{capacity:g} GB" in summary.message and f"{promised:g} GB" in summary.message


def shipped_hosts(c: Compiled, group: str) -> list:
    return [d for d in c.fabric.devices if d.group == group]


def test_per_host_bandwidth_is_lanes_times_rate(shipped):
    f = shipped.fabric
    gbytes: Counter = Counter()
    for link in pool_links(shipped):
        host = link.a if f.devices[link.a].role == "node" else None
        if host is not None:
            assert link.gbps == link.lanes * link.lane_gbps
            gbytes[host] += link.lanes * link.lane_gbps / 8
    assert set(gbytes.values()) == {2 * 16 * 32 / 8}  # two x16 links at 32 GT/s
    assert f.facts[POOL]["per_host_gbytes"] == min(gbytes.values())
    assert f.facts[POOL]["per_host_gbytes"] >= shipped.blueprint.cxl[0].per_host_gbytes


def test_media_are_copper_chosen_by_reach(shipped):
    f, media = shipped.fabric, shipped.catalogue.media
    margin = shipped.blueprint.media.margin_m
    kinds = Counter()
    for link in pool_links(shipped):
        medium = media[link.medium]
        assert medium.kind in {"dac", "aec"}  # PCIe/CXL electricals: copper only
        assert link.length_m + margin <= medium.reach_at(link.lane_gbps)
        same_rack = f.devices[link.a].rack == f.devices[link.b].rack
        kinds[(same_rack, link.medium)] += 1
    # the policy takes passive CDFP inside the rack and the retimed cable only where it must
    assert {m for (same, m) in kinds if same} == {"cdfp-copper"}
    assert {m for (same, m) in kinds if not same} == {"cdfp-aec"}


# -- checks that bite --------------------------------------------------------------------------


def test_over_promised_pool_is_an_error_at_the_promise():
    text = blueprint(hosts=4, per_switch=2, promised=768)  # 4 x 768 GB promised, 2 x 1024 GB built
    c = compile_text(text, "over.yaml")
    (err,) = of_rule(c, "cxl-capacity", Severity.ERROR)
    assert c.exit_code == 1
    assert "3072 GB" in err.message and "2048 GB" in err.message and "1024 GB short" in err.message
    line, col = line_col(text, "promised_gb")
    assert (err.location.file, err.location.line, err.location.col) == ("over.yaml", line, col)
    assert "per_switch: 3" in err.hint  # ceil(3072 / 1024) devices behind the one switch


def test_exactly_full_pool_is_not_an_error():
    c = compile_text(blueprint(hosts=4, per_switch=2, promised=512))
    assert not of_rule(c, "cxl-capacity", Severity.ERROR)


def test_host_two_rows_away_fails_reach_not_optics():
    text = blueprint(hosts=2, host_row="C")
    c = compile_text(text, "far.yaml")
    host_links = [link for link in pool_links(c) if c.fabric.devices[link.a].role == "node"]
    assert host_links and all(link.medium == "" for link in host_links)  # nothing reaches, not even optics
    errors = of_rule(c, "reach", Severity.ERROR)
    assert errors and c.exit_code == 1
    assert "32 Gb/s per lane" in errors[0].message
    line, _ = line_col(text, "- group: cpu")
    assert errors[0].location.line == line
    # the memory devices beside the switch are unaffected
    assert all(link.medium == "cdfp-copper" for link in pool_links(c) if link not in host_links)


def test_pinned_passive_copper_to_the_next_rack_fails_reach():
    # pinned through the pool's own policy (a blueprint-wide pin would pin management too)
    text = blueprint(hosts=2, host_rack=2, pool_extra="\n    media: {pin: cdfp-copper}")
    c = compile_text(text, "pin.yaml")
    errors = of_rule(c, "reach", Severity.ERROR)
    assert errors, [f.message for f in c.findings]
    assert "cdfp-copper" in errors[0].message and "reach 2 m" in errors[0].message
    host_links = [link for link in pool_links(c) if c.fabric.devices[link.a].role == "node"]
    assert all(link.length_m + 0.5 > 2 for link in host_links)


X8_SWITCH = """\
catalogue:
  devices:
    cxl-switch-256l:
      ports:
        - {role: cxl, count: 2, speed_gbps: 512, lanes: 16, cage: cdfp, name: "w{i}"}
        - {role: cxl, count: 8, speed_gbps: 256, lanes: 8, cage: cdfp, name: "n{i}"}
        - {role: mgmt, count: 1, speed_gbps: 1, lanes: 1, cage: rj45, name: mgmt0}
"""


def test_x16_host_in_x8_switch_port_warns_with_the_bandwidth_lost():
    # 2 wide ports go to the first 2 hosts; the third lands on a x8 port
    c = compile_text(blueprint(hosts=3, per_switch=1, catalogue=X8_SWITCH))
    f = c.fabric
    narrow = [link for link in pool_links(c) if link.lanes == 8 and f.devices[link.a].role == "node"]
    assert len(narrow) == 1 and f.devices[narrow[0].a].name == "cpu-0003"
    (warn,) = [w for w in of_rule(c, "cxl-lanes", Severity.WARNING) if "cpu-0003" in w.message]
    lost = (16 - 8) * 32 / 8
    assert f"loses {lost:g} of its 64 GB/s" in warn.message and "runs at x8" in warn.message
    # the x16 memory device on a x8 port is the other mismatch
    assert len(of_rule(c, "cxl-lanes", Severity.WARNING)) == 2


def test_per_host_bandwidth_below_target_is_an_error():
    text = blueprint(hosts=3, per_switch=1, catalogue=X8_SWITCH, target=64)
    c = compile_text(text, "bw.yaml")
    (err,) = of_rule(c, "cxl-bandwidth", Severity.ERROR)
    assert "1 of 3" in err.message and "cpu-0003: 32 GB/s" in err.message and "64 GB/s" in err.message
    assert err.location.line == line_col(text, "per_host_gbytes")[0]
    # the same pool with a target it meets: info only
    ok = compile_text(blueprint(hosts=2, per_switch=1, catalogue=X8_SWITCH, target=64))
    assert not of_rule(ok, "cxl-bandwidth", Severity.ERROR)


def test_pcie6_rate_has_no_retimed_cable_rating():
    # the same parts at 64 GT/s (PCIe 6.0 / CXL 3.x): the AEC has no rating there, so the next rack fails
    gen6 = "catalogue:\n  devices:\n" + "".join(
        f"""    {name}:
      ports:
        - {{role: cxl, count: {count}, speed_gbps: 1024, lanes: 16, cage: cdfp, name: "cxl{{i}}"}}
        - {{role: mgmt, count: 1, speed_gbps: 1, lanes: 1, cage: rj45, name: {mgmt}}}
"""
        for name, count, mgmt in (("cxl-switch-256l", 16, "mgmt0"), ("cxl-mem-1t", 1, "bmc"), ("cxl-host-2s", 2, "bmc"))
    )
    near = compile_text(blueprint(hosts=2, catalogue=gen6))
    assert near.exit_code == 0 and {link.lane_gbps for link in pool_links(near)} == {64}
    assert near.fabric.facts[POOL]["per_host_gbytes"] == 16 * 64 / 8
    far = compile_text(blueprint(hosts=2, host_rack=2, catalogue=gen6))
    assert of_rule(far, "reach", Severity.ERROR)


# -- impossible pools are build errors with the nearest valid alternative ----------------------------


def test_switch_port_budget():
    # 16 ports: 14 hosts + 3 memory devices do not fit; 2 memory devices do
    c = compile_text(blueprint(hosts=14, per_switch=3, promised=1))
    assert c.stage is Stage.UNBUILDABLE
    (err,) = of_rule(c, "port-budget")
    assert "16 CXL ports" in err.message and "needs 17" in err.message
    assert "per_switch: 2" in err.hint
    assert compile_text(blueprint(hosts=14, per_switch=2, promised=1)).stage is Stage.BUILT


def test_links_must_spread_evenly_and_fit_the_hosts_ports():
    c = compile_text(blueprint(switches=2, links=3))
    (err,) = of_rule(c, "cxl-links")
    assert "use links: 2 or 4" in err.hint
    c = compile_text(blueprint(switches=2, links=4))
    (err,) = of_rule(c, "cxl-links")
    assert "have 2 CXL ports; each needs 4" in err.message


def test_host_group_without_cxl_ports_and_unknown_group():
    c = compile_text(blueprint().replace("model: cxl-host-2s", "model: hgx-h100"))
    (err,) = of_rule(c, "cxl-links")
    assert "hgx-h100" in err.message and "cxl-host-2s" in err.hint
    c = compile_text(blueprint().replace("- group: cpu", "- group: cpx"))
    (err,) = of_rule(c, "unknown-reference")
    assert "'cpu'" in err.hint


def test_hosts_entry_is_a_group_or_made_here_not_both():
    text = blueprint().replace("- group: cpu", "- group: cpu\n        model: cxl-host-2s")
    c = compile_text(text)
    assert c.stage is Stage.UNREADABLE
    assert any("not both" in f.message for f in c.findings)


def test_hosts_made_by_the_pool_have_their_naming_checked_before_the_build():
    """A bad template of pool-made hosts is an invalid blueprint (exit 2), located, like a node group's."""
    made = "- name: kv\n        model: cxl-host-2s\n        count: 2\n        naming: '{grp}-{index}'\n"
    made += "        placement: {row: A, first_rack: 2, per_rack: 2, first_u: 12}\n        promised_gb: 1\n      - group: cpu"
    c = compile_text(blueprint().replace("- group: cpu", made))
    assert c.stage is Stage.UNREADABLE and c.exit_code == 2
    (err,) = c.findings
    assert err.rule == "naming" and err.path == ("cxl", 0, "hosts", 0, "naming")
    assert "unknown field {grp}" in err.message and "did you mean 'group'?" in err.hint
    # 6 hosts on single logical devices: one device each
    good = compile_text(blueprint(per_switch=6).replace("- group: cpu", made.replace("{grp}", "{group}")))
    assert good.exit_code == 0, [f.message for f in good.findings]
    assert [d.name for d in good.fabric.devices if d.group == "kv"] == ["kv-1", "kv-2"]


def test_pool_and_its_hosts_need_names_of_their_own():
    c = compile_text(blueprint().replace(f"  - name: {POOL}\n", "  - name: cpu\n"))
    assert c.exit_code == 2
    (err,) = c.findings
    assert (err.rule, err.path, err.message) == ("names-unique", ("cxl", 0, "name"), "'cpu' is already the name of nodes[0]")
    made = "- name: kvpool\n        model: cxl-host-2s\n        count: 2\n"
    made += "        placement: {row: A, first_rack: 2, per_rack: 2, first_u: 12}\n        promised_gb: 1\n      - group: cpu"
    c = compile_text(blueprint().replace("- group: cpu", made))
    (err,) = c.findings
    assert (err.rule, err.path) == ("names-unique", ("cxl", 0, "hosts", 0, "name")) and "cxl[0]" in err.message


# -- growth leaves existing cables where they are -------------------------------------------------


def cable_map(c: Compiled) -> dict[str, tuple]:
    return cable_ends(c.fabric, POOL)


def test_growing_hosts_or_memory_keeps_every_cable():
    base = cable_map(compile_text(blueprint(hosts=4, switches=2, per_switch=2, promised=1)))
    more_hosts = cable_map(compile_text(blueprint(hosts=6, switches=2, per_switch=2, promised=1)))
    more_memory = cable_map(compile_text(blueprint(hosts=4, switches=2, per_switch=4, promised=1)))
    for grown in (more_hosts, more_memory):
        assert len(grown) > len(base)
        assert {k: grown[k] for k in base} == base
