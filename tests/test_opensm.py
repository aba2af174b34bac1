"""The subnet manager's files: the real OpenSM (Debian opensm, through ibsim's umad2sim preload)
brings every shipped InfiniBand fabric up from the rendered topology with the rendered
configuration and routes it with the intended engine; the forwarding tables it wrote reach every
host from every host; a broken root GUID file fails; the tenants' partitions reach the HCAs.

Without ibsim/OpenSM installed these tests are skipped (CI installs them: .ci/run); the GUID
plan and file-content tests below them run everywhere.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, compile_text, shipped, shipped_outputs
from helpers import ibsim

from supernodeiac.facts.guid_plan import GuidPlan
from supernodeiac.facts.ib_fabric import IbFabric, infiniband_fabrics
from supernodeiac.facts.ib_routing import NCCL_DEFAULT_SL, NUE_WORK_LIMIT, nue_work, routing_plan
from supernodeiac.outputs.opensm import _joined, _topology, _topology_size
from supernodeiac.pipeline import render
from supernodeiac.verify.ibnetdiscover import parse_ibnetdiscover

NEEDS_SIM = pytest.mark.skipif(ibsim.missing() is not None, reason=ibsim.missing() or "")


def _ib_cases() -> list[tuple[str, str]]:
    out = []
    for path in sorted(BLUEPRINTS.glob("*.yaml")):
        c = shipped(path.stem)
        out += [(path.stem, name) for name in infiniband_fabrics(c.fabric)]
    return out


CASES = _ib_cases()
# dragonfly-balanced: 4,608 HCAs on 288 routers, too big for nue (its work is 30 times the limit),
# so the plan routes it with updn from one router: OpenSM brings it up in about 30 s, reading it
# back and checking it takes 1-2 minutes more, so it is brought up and checked (engine, errors, the
# whole plan discovered, every route delivered, no credit loop) in the slow pass, by
# test_shipped_dragonflies_have_no_credit_loop_on_the_vl_nccl_uses.
BIG = {"dragonfly-balanced"}


def _engine(name: str, fabric: str) -> str:
    """The engine the plan renders for a shipped fabric (facts/ib_routing.py)."""
    c = shipped(name)
    return routing_plan(c.blueprint, fabric, c.fabric.facts[fabric]).engine


def _opensm_files(name: str) -> dict[str, bytes]:
    return shipped_outputs(name, "opensm")


def _install(name: str, fabric: str, folder: Path) -> Path:
    """The shipped blueprint's rendered files for ``fabric`` in ``folder`` (ibsim.install)."""
    return ibsim.install(_opensm_files(name), fabric, folder)


# -- with the real tools ---------------------------------------------------------------------------


def test_every_shipped_infiniband_fabric_is_tested():
    names = {n for n, _ in CASES}
    assert {"small-ib", "ib-3tier", "dragonfly-balanced", "dragonfly-plus", "nvl72-pod", "nebula-x128-ib"} <= names


@NEEDS_SIM
@pytest.mark.parametrize("name, fabric", [(n, f) for n, f in CASES if n not in BIG])
def test_opensm_brings_the_fabric_up_with_the_intended_engine(name, fabric, tmp_path):
    """Every shipped fabric but the BIG one (see above)."""
    conf = _install(name, fabric, tmp_path / "etc")
    topology = conf.parent / "ibnetdiscover.topo"
    ib = IbFabric(shipped(name).fabric, fabric)
    timeout = 300
    with ibsim.simulate(topology, tmp_path / "sim") as sim:
        run = sim.opensm(conf, timeout=timeout)
        assert run.subnet_up, run.summary()
        assert run.engine == _engine(name, fabric), run.summary()  # no silent fallback to minhop
        assert run.errors == [], run.summary()
        assert f"{run.engine} tables configured on all switches" in run.log
        # The simulated fabric is the whole plan (OpenSM only sees the component of its own port).
        assert _discovered_counts(sim, timeout) == (len(ib.switches), len(ib.cas))


# p=2, a=4, h=2: the largest balanced Dragonfly of 7-port routers, 9 groups of 4 routers, 72 HCAs
# (9 HGX H100, one per group), one global link per group pair. dfsssp needs 3 virtual lanes here
# (shared/reference/ibsim.md section 4), as on the shipped 576-node one: the same credit loops, in
# about a second instead of minutes.
SMALL_DRAGONFLY = """
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: small-df}
site:
  rows: [{name: A, racks: 9}, {name: N, racks: 3}]
nodes:
  - {name: gpu, model: hgx-h100, count: 9, placement: {row: A, per_rack: 1, first_u: 2}}
scaleout:
  - name: df
    kind: dragonfly
    transport: infiniband
    router: qm9700
    terminals: 2
    routers_per_group: 4
    global_links: 2
    groups: 9
    endpoints: [{group: gpu}]
    placement: {row: N, per_rack: 12, first_u: 2}
"""


def _nccl_sl(files: dict[str, bytes]) -> int:
    """The SL the rendered NCCL environment puts every queue pair on (NCCL_IB_SL, NCCL's default 0)."""
    found = {
        int(m.group(1))
        for path, data in files.items()
        if path.startswith("nccl/") and path.endswith(".env")
        for m in re.finditer(rb"^(?:export )?NCCL_IB_SL=[\"']?(\d+)", data, re.M)
    }
    assert len(found) <= 1, found
    return found.pop() if found else NCCL_DEFAULT_SL


def _routes(sim: ibsim.Simulation, conf: Path, engine: str, timeout: float = 300):
    run = sim.opensm(conf, timeout=timeout)
    assert run.subnet_up and run.engine == engine and run.errors == [], run.summary()
    discovered = parse_ibnetdiscover(sim.ibnetdiscover(timeout))
    tables, lids = ibsim.parse_dump_fts(sim.dump_fts(timeout))
    check = ibsim.walk_routes(discovered, tables, lids)
    assert check.unroutable == [] and check.loops == [] and check.routed == check.pairs
    return run, discovered, tables, lids, check


@NEEDS_SIM
def test_the_dragonfly_routes_have_no_credit_loop_on_the_vl_nccl_uses(tmp_path):
    """OpenSM's own forwarding tables, read back from the simulated switches: the channel-dependency
    graph of every HCA-to-HCA route on the one SL the rendered NCCL environment uses has no cycle.
    The configuration rendered before (dfsssp, whose deadlock freedom lives in per-path SLs NCCL
    never asks for) has one on that SL, on VLs the switches' own SL2VL tables confirm."""
    c = compile_text(SMALL_DRAGONFLY)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    ib = IbFabric(c.fabric, "df")
    assert ib.kind == "dragonfly" and (len(ib.switches), len(ib.cas)) == (36, 72)
    files, _ = render(c, ["opensm", "nccl"])
    sl = _nccl_sl(files)
    folder = tmp_path / "etc"
    folder.mkdir()
    for path, data in files.items():
        if path.startswith("opensm/df/"):
            (folder / path.rsplit("/", 1)[1]).write_bytes(data)
    conf = folder / "opensm.conf"
    text = conf.read_text()
    assert "\nrouting_engine nue\nnue_max_num_vls 1\n" in text
    conf.write_text(text.replace("/etc/opensm", str(folder)))
    old = folder / "old-opensm.conf"  # as rendered before: dfsssp, QoS off (OpenSM's default)
    old.write_text(conf.read_text().replace("routing_engine nue\nnue_max_num_vls 1\n", "routing_engine dfsssp\n"))
    # What the plan renders for a Dragonfly past nue's limit, here pinned: updn from one router.
    pin = "    transport: infiniband\n    routing_engine: updn\n"
    pinned = compile_text(SMALL_DRAGONFLY.replace("    transport: infiniband\n", pin))
    updn = ibsim.install(render(pinned, ["opensm"])[0], "df", tmp_path / "updn")
    assert (updn.parent / "root_guids.conf").read_text() == f"0x{ib.switches[0].guid:016x}\n"
    topology = folder / "ibnetdiscover.topo"
    with ibsim.simulate(topology, tmp_path / "sim") as sim:
        _, discovered, tables, lids, check = _routes(sim, conf, "nue")
        assert check.pairs == 72 * 71
        # Every hop on one VL: the most dependencies any SL2VL table can give one SL, so no cycle
        # here means none on whatever VLs the switches map NCCL's SL to.
        graph = ibsim.dependency_graph(discovered, tables, lids, sl)
        assert graph.channels and graph.cycle() == []

        _, discovered, tables, lids, check = _routes(sim, updn, "updn")
        assert check.pairs == 72 * 71
        graph = ibsim.dependency_graph(discovered, tables, lids, sl)
        assert graph.channels and graph.cycle() == []

        run, discovered, tables, lids, _ = _routes(sim, old, "dfsssp")
        assert run.vls_needed is not None and run.vls_needed > 1, run.summary()  # dfsssp's answer: several VLs
        cycle = ibsim.dependency_graph(discovered, tables, lids, sl).cycle()
        assert len(cycle) >= 3, "dfsssp's routes on one SL should close a credit loop"
        # The loop is real on the switches: NCCL's SL takes one VL at every hop of it.
        nodes = discovered.nodes
        lid_of = {g: lid for lid, g in lids.items()}
        vls = set()
        for k, (sw, out, _) in enumerate(cycle):
            prev_sw, prev_out, _ = cycle[k - 1]
            in_port = nodes[prev_sw].ports[prev_out][1]
            table = ibsim.parse_sl2vl(sim.client(["smpquery", "sl2vl", str(lid_of[sw]), str(out)]))
            vls.add(table[(in_port, out)][sl])
        assert len(vls) == 1, vls


@NEEDS_SIM
@pytest.mark.slow
@pytest.mark.parametrize("name, fabric", [("dragonfly-plus", "dfp"), ("dragonfly-balanced", "df")])
def test_shipped_dragonflies_have_no_credit_loop_on_the_vl_nccl_uses(name, fabric, tmp_path):
    """The shipped Dragonfly+ (updn from the spines) and Dragonfly (updn from one router: 288
    routers are past nue's limit), brought up by the real OpenSM with the rendered files: 1-3 min."""
    conf = _install(name, fabric, tmp_path / "etc")
    topology = conf.parent / "ibnetdiscover.topo"
    ib = IbFabric(shipped(name).fabric, fabric)
    sl = _nccl_sl(render(shipped(name), ["nccl"])[0])
    timeout = 600
    with ibsim.simulate(topology, tmp_path / "sim") as sim:
        run, discovered, tables, lids, check = _routes(sim, conf, _engine(name, fabric), timeout)
        assert f"{run.engine} tables configured on all switches" in run.log
    kinds = [n.kind for n in discovered.nodes.values()]
    assert (kinds.count("switch"), kinds.count("ca")) == (len(ib.switches), len(ib.cas))  # the whole plan
    assert check.pairs == len(ib.cas) * (len(ib.cas) - 1)
    graph = ibsim.dependency_graph(discovered, tables, lids, sl)
    assert graph.channels and graph.cycle() == []


def _discovered_counts(sim: ibsim.Simulation, timeout: float = 300) -> tuple[int, int]:
    topo = parse_ibnetdiscover(sim.ibnetdiscover(timeout))
    kinds = [n.kind for n in topo.nodes.values()]
    return kinds.count("switch"), kinds.count("ca")


@NEEDS_SIM
@pytest.mark.parametrize("name, fabric", [("small-ib", "ib"), ("nebula-x128-ib", "ib"), ("dragonfly-plus", "dfp")])
def test_routes_reach_every_host_from_every_host(name, fabric, tmp_path):
    """An independent walk of the forwarding tables OpenSM programmed (read back with dump_fts)."""
    conf = _install(name, fabric, tmp_path / "etc")
    topology = conf.parent / "ibnetdiscover.topo"
    ib = IbFabric(shipped(name).fabric, fabric)
    with ibsim.simulate(topology, tmp_path / "sim") as sim:
        run = sim.opensm(conf)
        assert run.subnet_up and run.engine == _engine(name, fabric), run.summary()
        discovered = parse_ibnetdiscover(sim.ibnetdiscover())
        tables, lids = ibsim.parse_dump_fts(sim.dump_fts())
    assert len(tables) == len(ib.switches)
    check = ibsim.walk_routes(discovered, tables, lids)
    n = len(ib.cas)
    assert check.pairs == n * (n - 1)
    assert check.unroutable == [] and check.loops == []
    assert check.routed == check.pairs
    tiers = shipped(name).fabric.facts[fabric].get("tiers", 0)
    if ib.kind == "fat-tree":
        assert check.max_hops <= 2 * tiers - 1  # up to the top tier and down: minimal


@NEEDS_SIM
@pytest.mark.parametrize("broken", ["leaves as roots", "unknown GUID"])
def test_a_broken_root_guid_file_fails(broken, tmp_path):
    conf = _install("small-ib", "ib", tmp_path / "etc")
    topology = conf.parent / "ibnetdiscover.topo"
    ib = IbFabric(shipped("small-ib").fabric, "ib")
    roots = conf.parent / "root_guids.conf"
    if broken == "leaves as roots":
        leaves = [n for n in ib.switches if n not in ib.top_switches()]
        roots.write_text("".join(f"0x{n.guid:016x}\n" for n in leaves))
    else:
        roots.write_text("0x0123456789abcdef\n")
    with ibsim.simulate(topology, tmp_path / "sim") as sim:
        run = sim.opensm(conf)
    ok = run.subnet_up and run.engine == "ftree" and run.errors == []
    assert not ok, run.summary()


@NEEDS_SIM
def test_tenant_partitions_reach_the_hcas(tmp_path):
    """ib-3tier's tenants: OpenSM programs each HCA's P_Key table from partitions.conf."""
    conf = _install("ib-3tier", "ib", tmp_path / "etc")
    topology = conf.parent / "ibnetdiscover.topo"
    c = shipped("ib-3tier")
    ib = IbFabric(c.fabric, "ib")
    first = {}
    for n in ib.cas:
        first.setdefault(c.fabric.devices[n.device].group, n)
    with ibsim.Simulation(topology, tmp_path / "sim", first["gpu-d"].node_id) as sim:
        run = sim.opensm(conf)
        assert run.subnet_up and run.errors == [], run.summary()
        guid2lid = (tmp_path / "sim" / "run" / "guid2lid").read_text()
        lids = {int(g, 16): int(lid, 16) for g, lid in re.findall(r"^(0x[0-9a-f]+) (0x[0-9a-f]+)", guid2lid, re.M)}
        tables = {}
        for group in ("gpu-b", "gpu-c", "ufm"):
            lid = lids[ib.port_guid(first[group])]
            out = subprocess.run(
                [shutil.which("smpquery") or "/usr/sbin/smpquery", "pkeys", str(lid)],
                env=sim.env(),
                cwd=tmp_path / "sim" / "run",
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
            tables[group] = {int(k, 16) for k in re.findall(r"0x([0-9a-f]{4})", out)} - {0}
    # Full members of their tenant's partition (top bit set), limited members of the Default one.
    assert tables["gpu-b"] == {0x7FFF, 0x8101}
    assert tables["gpu-c"] == {0x7FFF, 0x8102}
    assert tables["ufm"] == {0x7FFF}


# The 131,072-GPU benchmark's generation (bench/generate.py): HGX B300 on Quantum-X800 Q3400,
# XDR end to end (144 ports of 4 x 200G lanes on 72 twin-port OSFP cages), here at 16 nodes.
XDR = """
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: small-xdr}
site:
  rows: [{name: A, racks: 4}, {name: N, racks: 2}]
nodes:
  - {name: gpu, model: hgx-b300, count: 16, placement: {row: A, per_rack: 4, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    transport: infiniband
    tiers: 2
    switch: q3400
    rail_optimized: true
    endpoints: [{group: gpu}]
    placement:
      leaf: {row: N, per_rack: 8, first_u: 2}
      spine: {row: N, first_rack: 2, per_rack: 4, first_u: 2}
"""


def test_an_xdr_fabric_renders_its_subnet_manager_files(tmp_path):
    c = compile_text(XDR)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["opensm"])
    topo = parse_ibnetdiscover(files["opensm/ib/ibnetdiscover.topo"].decode())
    ib = IbFabric(c.fabric, "ib")
    switches = [n for n in topo.nodes.values() if n.kind == "switch"]
    assert len(switches) == len(ib.switches) and {n.nports for n in switches} == {144}
    assert "4xXDR" in files["opensm/ib/ibnetdiscover.topo"].decode()
    assert "routing_engine ftree" in files["opensm/ib/opensm.conf"].decode()
    if ibsim.missing() is None:  # and the real OpenSM routes it (XDR rate tails, 144-port switches)
        conf = ibsim.install(files, "ib", tmp_path / "etc")
        topology = conf.parent / "ibnetdiscover.topo"
        with ibsim.simulate(topology, tmp_path / "sim") as sim:
            run = sim.opensm(conf)
        assert run.subnet_up and run.engine == "ftree" and run.errors == [], run.summary()


# -- the files themselves (no tools needed) ---------------------------------------------------------


def test_engine_and_files_follow_the_topology():
    kinds = {"fat-tree": "ftree", "dragonfly-plus": "updn"}
    for name, fabric in CASES:
        files = _opensm_files(name)
        conf = files[f"opensm/{fabric}/opensm.conf"].decode()
        c = shipped(name)
        ib = IbFabric(c.fabric, fabric)
        work = nue_work(c.fabric.facts[fabric])
        if ib.kind == "dragonfly":  # nue while its work is small, updn from one router past that
            assert work is not None
            engine = "nue" if work <= NUE_WORK_LIMIT else "updn"
        else:
            assert work is None
            engine = kinds[ib.kind]
        assert f"\nrouting_engine {engine}\n" in conf
        assert ("root_guid_file /etc/opensm/root_guids.conf" in conf) == (engine != "nue")
        assert "lmc 0" in conf and "partition_config_file /etc/opensm/partitions.conf" in conf
        cn = files[f"opensm/{fabric}/cn_guids.conf"].decode().split()
        io = files.get(f"opensm/{fabric}/io_guids.conf", b"").decode().split()
        assert len(cn) + len(io) == len(ib.cas) and not set(cn) & set(io)
        assert ("nue_max_num_vls 1\n" in conf) == (engine == "nue")
        if engine == "nue":
            continue
        roots = files[f"opensm/{fabric}/root_guids.conf"].decode().split()
        if ib.kind == "dragonfly":  # one root: the first router of the first group
            assert roots == [f"0x{ib.switches[0].guid:016x}"]
            assert c.fabric.devices[ib.switches[0].device].name.endswith("g001-r01")
        else:  # a fat tree's top tier, a Dragonfly+'s spines
            top = max(c.fabric.devices[n.device].tier for n in ib.switches)
            assert len(roots) == sum(1 for n in ib.switches if c.fabric.devices[n.device].tier == top)
    # The shipped Dragonfly is past nue's limit (288 routers, 4,608 HCAs); the 72-host one is not.
    assert nue_work(shipped("dragonfly-balanced").fabric.facts["df"]) == (4608 + 288) * (2 * (4464 + 2304)) * 46
    assert nue_work(compile_text(SMALL_DRAGONFLY).fabric.facts["df"]) == (72 + 36) * 180 * 4


def test_rendered_topology_is_the_plan():
    c = shipped("small-ib")
    topo = parse_ibnetdiscover(_opensm_files("small-ib")["opensm/ib/ibnetdiscover.topo"].decode())
    ib = IbFabric(c.fabric, "ib")
    assert len(topo.nodes) == len(ib.switches) + len(ib.cas) == 8 + 4 + 132
    links = topo.links()
    assert len(links) == len(c.fabric.links.indices_of("ib")) == 388
    for node in topo.nodes.values():  # every link listed on both ends, consistently
        for port, (peer, peer_port, _) in node.ports.items():
            assert topo.nodes[peer].ports[peer_port][:2] == (node.guid, port)
    spine = next(n for n in topo.nodes.values() if n.description == "ib-spine-001")
    assert spine.kind == "switch" and spine.nports == 64 and len(spine.ports) == 64
    host = next(n for n in topo.nodes.values() if n.description == "gpu-0003 mlx5_4")
    leaf = topo.nodes[host.ports[1][0]]
    assert leaf.description == "ib-leaf-su001-03" and host.ports[1][1] == 3


@pytest.mark.parametrize("name", ["small-ib", "nvl72-pod", "dragonfly-plus", "nebula-x128-ib", "dgx-h100-superpod-4su"])
def test_the_topology_length_counted_in_bulk_is_the_texts(name):
    """``snc diff`` tells two topologies apart by the length _topology_size counts without the text."""
    c = shipped(name)
    for fabric in infiniband_fabrics(c.fabric):
        ib = IbFabric(c.fabric, fabric)
        assert _topology_size(ib) == len(_joined(_topology(ib))) > 0
    # Descriptions past ASCII count in bytes (the file is UTF-8).
    ib = IbFabric(c.fabric, infiniband_fabrics(c.fabric)[0])
    ib.switches[0].description, ib.cas[-1].description = "spine-ü", "nœud mlx5_0"
    assert _topology_size(ib) == len(_joined(_topology(ib)))


def test_guids_are_unique_and_survive_growth():
    base = (BLUEPRINTS / "small-ib.yaml").read_text()
    c1 = shipped("small-ib")
    grown = base.replace("count: 16\n    placement: {row: A", "count: 24\n    placement: {row: A").replace(
        "- {name: A, racks: 4,", "- {name: A, racks: 6,"
    )
    c2 = compile_text(grown)
    assert c2.exit_code == 0, [f.message for f in c2.findings]
    g1, g2 = GuidPlan(c1.fabric), GuidPlan(c2.fabric)
    ib1, ib2 = IbFabric(c1.fabric, "ib", g1), IbFabric(c2.fabric, "ib", g2)
    assert len(ib2.cas) > len(ib1.cas)
    by_desc2 = {n.description: n.guid for n in ib2.nodes.values()}
    for n in ib1.nodes.values():
        assert by_desc2[n.description] == n.guid, n.description
    guids = [n.guid for n in ib2.nodes.values()] + [ib2.port_guid(n) for n in ib2.cas]
    assert len(guids) == len(set(guids))
    assert all(g >> 40 == 0x02534E for g in guids)  # locally administered, never a vendor's OUI


def test_partitions_file():
    files = _opensm_files("ib-3tier")
    text = files["opensm/ib/partitions.conf"].decode()
    assert "Default=0x7fff, ipoib, defmember=limited : ALL, ALL_SWITCHES=full, SELF=full ;" in text
    assert "team-a=0x0101, ipoib, defmember=full :" in text
    assert "team-b=0x0102, ipoib, mtu=5, defmember=full :" in text
    c = shipped("ib-3tier")
    ib = IbFabric(c.fabric, "ib")
    team_a = {f"0x{ib.port_guid(n):016x}" for n in ib.cas if c.fabric.devices[n.device].group in ("gpu-a", "gpu-b")}
    body = text.split("team-a=")[1].split(";")[0]
    assert set(re.findall(r"0x[0-9a-f]{16}", body)) == team_a
    small = _opensm_files("small-ib")["opensm/ib/partitions.conf"].decode()
    assert "Default=0x7fff, ipoib, defmember=full : ALL, ALL_SWITCHES=full, SELF=full ;" in small


@pytest.mark.parametrize(
    "tenants, message",
    [
        ("[{name: t1, pkey: 0x10, groups: [gpu]}, {name: t2, pkey: 0x10, groups: [gpu]}]", "share the P_Key 0x0010"),
        ("[{name: t1, pkey: 0x10, groups: [nope]}]", "which is no node group"),
        ("[{name: t1, pkey: 0x7fff, groups: [gpu]}]", "0x7fff is the Default partition"),
        ("[{name: t1, pkey: 0, groups: [gpu]}]", "between 0x0001 and 0x7ffe"),
        ("[{name: t1, pkey: 0x18001, groups: [gpu]}]", "is not a 16-bit number"),
        ("[{name: t1, pkey: 0x8001, groups: [gpu], sl: 16}]", "less than or equal to 15"),
    ],
)
def test_tenant_mistakes_are_located_errors(tenants, message):
    text = (BLUEPRINTS / "small-ib.yaml").read_text() + f"\ntenants: {tenants}\n"
    c = compile_text(text)
    assert c.exit_code in (1, 2)
    found = [f for f in c.findings if message in f.message]
    assert found and all(f.location is not None and f.location.line > 40 for f in found), [f.message for f in c.findings]


# -- bound to a fabric with the hardware's GUIDs (snc bind) -------------------------------------------


# ib-3tier (2,048 HCAs, every P_Key table read) is the slow pass; small-ib (132 HCAs) runs the same
# bring-up, bind, routing and P_Key reads by default.
@NEEDS_SIM
@pytest.mark.parametrize("name", ["small-ib", pytest.param("ib-3tier", marks=pytest.mark.slow)])
def test_bound_files_bring_up_a_fabric_with_the_hardwares_guids(name, tmp_path):
    """The plan's cabling with vendor GUIDs (what a site has): ibnetdiscover, snc bind, then the real
    OpenSM with the bound files routes with ftree (no AB24 root not found / AB25 no valid roots),
    every route is delivered, and the compute HCAs hold their partition keys as full members."""
    from supernodeiac.verify.bind import bind

    c = shipped(name)
    ib = IbFabric(c.fabric, "ib")
    plan = _opensm_files(name)["opensm/ib/ibnetdiscover.topo"].decode()
    site = tmp_path / "site.topo"
    site.write_text(ibsim.vendor_guids(plan))
    with ibsim.simulate(site, tmp_path / "sim") as sim:
        discovered = tmp_path / "fabric.topo"
        discovered.write_text(sim.ibnetdiscover())
        topo = parse_ibnetdiscover(discovered.read_text())
        planned = {n.guid for n in ib.nodes.values()}
        assert len(topo.nodes) == len(ib.nodes) and not planned & set(topo.nodes)  # none of the plan's GUIDs
        if name == "small-ib":  # the plan's own files on this fabric: the failure bind is for
            plain = sim.opensm(_install(name, "ib", tmp_path / "plan"))
            assert "AB24" in plain.log and plain.engine != "ftree", plain.summary()
        bound = bind(c.blueprint, c.catalogue, c.fabric, [str(discovered)])
        assert bound.exit_code == 0 and bound.fabrics == ["ib"], [d.message for d in bound.result.discrepancies][:5]
        run = sim.opensm(ibsim.install(bound.files, "ib", tmp_path / "etc"))
        assert run.subnet_up and run.engine == "ftree" and run.errors == [], run.summary()
        assert "AB24" not in run.log and "AB25" not in run.log
        tables, lids = ibsim.parse_dump_fts(sim.dump_fts())
        check = ibsim.walk_routes(topo, tables, lids)
        n = len(ib.cas)
        assert check.pairs == n * (n - 1) and check.routed == check.pairs, (check.unroutable[:5], check.loops[:5])
        lid_of = {g: lid for lid, g in lids.items()}
        sm_node = next(g for g, node in topo.nodes.items() if node.description == ibsim.first_hca_description(site))
        by_desc = {node.description: node for node in topo.nodes.values()}
        service = {"ufm"}
        keys = {t.pkey for t in c.blueprint.tenants}
        tenant_of = {g: t.pkey for t in c.blueprint.tenants for g in t.groups}
        # Every HCA's table, read from its own SMA: one smpquery per port, eight at a time.
        port_guid = {n.key: by_desc[n.description].port_guids[min(by_desc[n.description].ports)] for n in ib.cas}
        lid_of_ca = {key: lid_of[guid] for key, guid in port_guid.items()}
        started = time.monotonic()
        tables_of = sim.pkeys(sorted(lid_of_ca.values()))
        print(f"{name}: P_Key tables of {len(tables_of)} HCAs read in {time.monotonic() - started:.1f} s")
        assert len(tables_of) == len(ib.cas)
        for node in ib.cas:
            found = by_desc[node.description]
            group = c.fabric.devices[node.device].group
            table = tables_of[lid_of_ca[node.key]]
            if found.guid == sm_node:  # the SM's own port: SELF=full in the Default partition
                assert 0xFFFF in table, (node.description, table)
            elif not keys:
                assert table == {0xFFFF}, (node.description, table)  # no tenants: full members of Default
            elif group in service:
                assert table == {0x7FFF}, (node.description, table)
            else:  # its tenant's key with the full-member bit (0x8000), the Default one as limited member
                assert table == {0x7FFF, 0x8000 | tenant_of[group]}, (node.description, table)


@pytest.mark.parametrize(
    "engine, severity",
    [(None, "info"), ("nue", "info"), ("dfsssp", "error"), ("lash", "error"), ("updn", "info"), ("ftree", "error")],
)
def test_the_routing_check_says_which_engine_and_errors_where_nccl_can_deadlock(engine, severity):
    text = SMALL_DRAGONFLY
    if engine is not None:
        text = text.replace("    transport: infiniband\n", f"    transport: infiniband\n    routing_engine: {engine}\n")
    c = compile_text(text)
    (f,) = [f for f in c.findings if f.rule == "ib-routing"]
    assert f.severity.value == severity and f"routes with {engine or 'nue'}" in f.message
    assert (c.exit_code == 1) == (severity == "error")
    if severity == "error":
        assert "NCCL_IB_SL" in f.message and "nue" in f.hint
        assert f.path == ("scaleout", 0, "routing_engine")  # located at the line that chose it
    conf = render(c, ["opensm"])[0]["opensm/df/opensm.conf"].decode()
    assert f"\nrouting_engine {engine or 'nue'}\n" in conf
    assert ("NOT deadlock-free" in conf) == (severity == "error")


def test_a_dragonfly_past_nues_limit_is_routed_from_one_router_and_pinned_nue_warns():
    """dragonfly-balanced: nue's work (3.0e9) is 30 times NUE_WORK_LIMIT, so the plan takes updn
    from one root router and says why; naming nue there is deadlock-free but a warning (it computes
    for half an hour, again after every link failure)."""
    (f,) = [f for f in shipped("dragonfly-balanced").findings if f.rule == "ib-routing"]
    assert f.severity.value == "info" and "updn (the plan's choice, rooted at one router)" in f.message
    assert "taken over nue" in f.message and "3.0e9" in f.message and "1.0e8" in f.message
    text = (BLUEPRINTS / "dragonfly-balanced.yaml").read_text()
    c = compile_text(text.replace("    transport: infiniband\n", "    transport: infiniband\n    routing_engine: nue\n"))
    (f,) = [f for f in c.findings if f.rule == "ib-routing"]
    assert f.severity.value == "warning" and "routes with nue" in f.message and "can deadlock" not in f.message
    assert "uses updn" in f.hint and f.path == ("scaleout", 0, "routing_engine") and c.exit_code == 0
