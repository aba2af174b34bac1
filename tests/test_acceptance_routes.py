"""Routed link tests against the real subnet manager: OpenSM (Debian opensm, through ibsim's
umad2sim preload) routes the rendered fabric with the rendered configuration; walking the
forwarding tables it wrote (dump_fts), every tier test of the acceptance plan crosses the cables
it names, every switch-link direction any HCA-to-HCA route loads is on some test's path, and no
two tests of a wave share a link direction. The model itself (facts/ib_routes.py) must give
OpenSM's tables entry for entry. Skipped without ibsim/OpenSM (CI installs them: .ci/run).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from conftest import BLUEPRINTS
from helpers import ibsim

from supernodeiac.facts.acceptance_plan import _service_groups, plan
from supernodeiac.facts.ib_fabric import IbFabric
from supernodeiac.facts.ib_routes import MAX_ENTRIES, FtreeRoutes, ftree_routes
from supernodeiac.pipeline import compile_file, render

NEEDS_SIM = pytest.mark.skipif(ibsim.missing() is not None, reason=ibsim.missing() or "")
# dgx-h100-superpod-4su and nvl72-pod have part-filled leaves (dummy targets) and, the former, parallel
# leaf-spine cables.
CASES = [
    ("small-ib", "ib"),
    pytest.param("dgx-h100-superpod-4su", "ib", marks=pytest.mark.slow),
    pytest.param("nvl72-pod", "ib", marks=pytest.mark.slow),
    pytest.param("ib-3tier", "ib", marks=pytest.mark.slow),  # three tiers: 192 switches, 2,044 HCA ports
]


@cache
def _compiled(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    return c


def _real_tables(name: str, fabric: str, tmp: Path):
    """(discovered topology, switch GUID -> {LID: port}, LID -> port GUID) from OpenSM on ibsim."""
    artifacts, _ = render(_compiled(name), ["opensm"])
    folder = tmp / "etc"
    conf = ibsim.install(artifacts, fabric, folder)
    topology = folder / "ibnetdiscover.topo"
    first = re.search(r'^Ca\s+\d+\s+"(H-[0-9a-f]+)"', topology.read_text(), re.M).group(1)  # type: ignore[union-attr]
    with ibsim.Simulation(topology, tmp / "sim", first) as sim:
        run = sim.opensm(conf)
        assert run.subnet_up and run.engine == "ftree", run.summary()
        tables, lids = ibsim.parse_dump_fts(sim.dump_fts())
    return tables, lids


@NEEDS_SIM
@pytest.mark.parametrize("name, fabric", CASES)
def test_planned_tier_tests_follow_the_routes_opensm_programs(name, fabric, tmp_path):
    c = _compiled(name)
    f, t = c.fabric, c.fabric.links
    tables, lids = _real_tables(name, fabric, tmp_path)
    ib = IbFabric(f, fabric)
    sw_key = {n.guid: n.key for n in ib.switches}
    port_of_guid = {ib.port_guid(n): n.key for n in ib.cas}
    lid_of = {port_of_guid[g]: lid for lid, g in lids.items() if g in port_of_guid}
    table_of = {sw_key[g]: tab for g, tab in tables.items()}

    def real_path(src, dst):
        """(link, device it leaves) from HCA port src to HCA port dst, by the real tables."""
        peer, _p, link = ib.nodes[src].links[1]
        hops = [(link, src[0])]
        while ib.nodes[peer].is_switch:
            out = table_of[peer][lid_of[dst]]
            nxt, _p, link = ib.nodes[peer].links[out]
            hops.append((link, peer[0]))
            peer = nxt
        assert peer == dst
        return hops

    # The model gives OpenSM's forwarding tables, entry for entry (every HCA destination).
    model = ftree_routes(f, fabric, _service_groups(c.blueprint, fabric))
    assert model is not None
    wrong = [
        (ib.nodes[k].description, ib.nodes[d].description)
        for k, tab in table_of.items()
        for lid, port in tab.items()
        if (d := port_of_guid.get(lids.get(lid, -1))) is not None and model.lft[d].get(k) != port
    ]
    assert wrong == []

    p = plan(f, c.blueprint)
    assert p.routed[fabric]
    key_of = {(n.device, n.port): n.key for n in ib.cas}
    tier_tests = [x for x in p.perftests[fabric] if x.stage.startswith("tier")]
    assert tier_tests
    loaded: set[tuple[int, int]] = set()
    per_wave: Counter = Counter()
    for x in tier_tests:
        src, dst = key_of[(x.client, x.client_port)], key_of[(x.server, x.server_port)]
        hops = real_path(src, dst)
        cables = {h[0] for h in hops}
        assert set(x.under_test) <= cables, x.id  # the cables it names carry its traffic
        assert hops == x.hops, x.id  # the planned path is the routed one
        loaded.update(h for h in hops if _switch_link(f, t, h[0]))
        for h in hops:
            per_wave[(x.wave, h)] += 1
    assert max(per_wave.values()) == 1  # no two tests of a wave share a link direction
    # Every switch-link direction some HCA-to-HCA route loads is on a planned test's path.
    routed: set[tuple[int, int]] = set()
    cas = [n.key for n in ib.cas]
    leaves: dict[int, tuple[int, int]] = {}
    for k in cas:
        leaves.setdefault(ib.nodes[k].links[1][0][0], k)
    for src in leaves.values():
        for dst in cas:
            if ib.nodes[dst].links[1][0][0] != ib.nodes[src].links[1][0][0]:
                routed.update(h for h in real_path(src, dst) if _switch_link(f, t, h[0]))
    assert routed == loaded
    gaps = {(i, x) for i, x in p.one_way[fabric]} | {(i, x) for i in p.untestable[fabric] for x in (t.a[i], t.b[i])}
    every = {(i, x) for i in t.indices_of(fabric) if _switch_link(f, t, i) for x in (t.a[i], t.b[i])}
    assert gaps == every - loaded  # what the plan reports untested is exactly what no route loads
    # The reason each one-way row gives counts the parallel cables OpenSM's real routes use.
    for (i, x), why in p.why[fabric].items():
        m = re.fullmatch(r"the routes from \S+ \w+ to \S+ use (\d+) of the (\d+) parallel cables .*", why)
        if x == -1 or m is None:
            continue
        y = t.b[i] if t.a[i] == x else t.a[i]
        bundle = [j for j in t.indices_of(fabric) if {t.a[j], t.b[j]} == {x, y}]
        assert (int(m[1]), int(m[2])) == (sum((j, x) in loaded for j in bundle), len(bundle)), why


@NEEDS_SIM
@pytest.mark.slow
def test_model_gives_opensm_tables_on_a_three_tier_tree(tmp_path):
    """The model is exact on a three-tier tree: on ib-3tier it gives the real OpenSM's 392,448
    entries (under MAX_ENTRIES, so the plan routes its tests on them; about 2 minutes with OpenSM)."""
    c = _compiled("ib-3tier")
    f = c.fabric
    ib = IbFabric(f, "ib")
    assert len(ib.switches) * len(ib.cas) <= MAX_ENTRIES
    tables, lids = _real_tables("ib-3tier", "ib", tmp_path)
    model = ftree_routes(f, "ib", _service_groups(c.blueprint, "ib"))
    assert isinstance(model, FtreeRoutes)
    sw_key = {n.guid: n.key for n in ib.switches}
    port_of_guid = {ib.port_guid(n): n.key for n in ib.cas}
    checked = wrong = 0
    for g, tab in tables.items():
        for lid, port in tab.items():
            d = port_of_guid.get(lids.get(lid, -1))
            if d is not None:
                checked += 1
                wrong += model.lft[d].get(sw_key[g]) != port
    assert checked == len(ib.switches) * len(ib.cas) and wrong == 0


def _switch_link(f, t, i: int) -> bool:
    models = f.models
    return all(models[f.devices[d].model].kind == "switch" for d in (t.a[i], t.b[i]))
