"""Routed tier tests on the forwarding tables a real subnet manager programmed (snc routed-tests).

The acceptance window's OpenSM (the rendered opensm-window.conf: dfsssp, lmc 1) routes the
fabric on ibsim; its dump_fts goes to snc routed-tests. Walking the real tables from each test's
client to the LID it aims at, over the topology ibsim discovers and the cable names ports.tsv
gives: the path carries every cable the test names, every cabled switch link is crossed in both
directions by some test, and no two tests of a wave share a link direction. small-ib also runs
with vendor GUIDs (the plan's identities nowhere in the dump: matched by node description).
The dump reader's errors are located (file:line). Skipped without ibsim/OpenSM (CI installs them).
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS
from helpers import ibsim

from supernodeiac.cli import main
from supernodeiac.pipeline import compile_file, render
from supernodeiac.verify.check_results import check
from supernodeiac.verify.dump_fts import parse_dump_fts
from supernodeiac.verify.errors import DiscoveryError
from supernodeiac.verify.ibnetdiscover import parse_ibnetdiscover
from supernodeiac.verify.routed_tests import routed_tests

NEEDS_SIM = pytest.mark.skipif(ibsim.missing() is not None, reason=ibsim.missing() or "")
# (blueprint, fabric, vendor GUIDs, the rendered OpenSM file run): fat trees in the window (dfsssp);
# Dragonflies, whose routes snc does not model, on production's own file (updn).
CASES = [
    ("small-ib", "ib", False, "opensm-window.conf"),
    ("small-ib", "ib", True, "opensm-window.conf"),
    pytest.param("dgx-h100-superpod-4su", "ib", False, "opensm-window.conf", marks=pytest.mark.slow),  # parallel cables
    pytest.param("ib-3tier", "ib", False, "opensm-window.conf", marks=pytest.mark.slow),  # 8,192 directions
    ("dragonfly-plus", "dfp", False, "opensm.conf"),
    pytest.param("dragonfly-balanced", "df", False, "opensm.conf", marks=pytest.mark.slow),  # 13,536 directions
]


@cache
def _compiled(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    return c


def _tsv(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode()), delimiter="\t", quoting=csv.QUOTE_NONE))


def _window(
    name: str, vendor: bool, tmp: Path, fabric: str = "ib", conf_name: str = "opensm-window.conf"
) -> tuple[str, str, str]:
    """(dump_fts text, ibnetdiscover text, OpenSM's summary) of the rendered OpenSM file on ibsim."""
    artifacts, _ = render(_compiled(name), ["opensm"])
    folder = tmp / "etc"
    conf = ibsim.install(artifacts, fabric, folder, conf_name)
    engine = re.search(r"^routing_engine (\S+)", conf.read_text(), re.M).group(1)  # type: ignore[union-attr]
    topology = folder / "ibnetdiscover.topo"
    if vendor:
        topology.write_text(ibsim.vendor_guids(topology.read_text()))
    first = ibsim.first_hca(topology)
    with ibsim.Simulation(topology, tmp / "sim", first) as sim:
        run = sim.opensm(conf)
        assert run.subnet_up and run.engine == engine and not run.errors, run.summary()
        if engine == "dfsssp":
            assert run.vls_needed == 1, run.summary()  # one VL: no credit loop on SL 0
        return sim.dump_fts(), sim.ibnetdiscover(), run.summary()


@NEEDS_SIM
@pytest.mark.parametrize("name, fabric, vendor, conf", CASES)
def test_routed_tests_cross_every_switch_link_both_ways_on_the_real_routes(name, fabric, vendor, conf, tmp_path):
    c = _compiled(name)
    dump_text, discovered, _summary = _window(name, vendor, tmp_path, fabric, conf)
    dump = tmp_path / "window.fts"
    dump.write_text(dump_text)
    routed = routed_tests(c.blueprint, c.catalogue, c.fabric, [str(dump)])
    files = routed.files
    tests = _tsv(files[f"{fabric}/perftest.tsv"])
    ports = _tsv(files[f"{fabric}/ports.tsv"])
    assert tests and f"{fabric}/untestable.tsv" not in files
    # The real tables (read by the test's own parser) and the discovered topology, not the plan.
    tables, lids = ibsim.parse_dump_fts(dump_text)
    topo = parse_ibnetdiscover(discovered)
    by_desc = {n.description: n for n in topo.nodes.values()}
    if vendor:
        assert not {n.guid for n in topo.nodes.values()} & {g for g in tables if g >> 40 == 0x02534E}
    # A cable by the (node description, IB port) at either end, as ports.tsv names them.
    cable_at = {}
    switch_cables = set()
    for row in ports:
        cable_at[(row["a_node"], int(row["a_port"]))] = row["cable"]
        cable_at[(row["b_node"], int(row["b_port"]))] = row["cable"]
        if by_desc[row["a_node"]].kind == by_desc[row["b_node"]].kind == "switch":
            switch_cables.add(row["cable"])
    crossed: set[tuple[str, str]] = set()  # (cable, node it leaves)
    per_wave: Counter = Counter()
    for t in tests:
        client = by_desc[f"{t['client']} {t['client_dev']}"]
        server = by_desc[f"{t['server']} {t['server_dev']}"]
        dlid = int(t["dlid"])
        assert lids[dlid] in server.port_guids.values() or lids[dlid] == server.guid + 1, t["test"]
        node, port = client, 1
        path = []
        for _ in range(16):
            cable = cable_at[(node.description, port)]
            path.append((cable, node.description))
            peer, _peer_port, _line = node.ports[port]
            node = topo.nodes[peer]
            if node.kind != "switch":
                break
            port = tables[node.guid][dlid]
        assert node is server, t["test"]  # the real routes deliver to the server's port
        cables = {c for c, _ in path}
        assert set(t["cables"].split(";")) <= cables, t["test"]  # it loads what it names
        for hop in path:
            crossed.add(hop)
            per_wave[(t["stage"], t["rail"], t["wave"], hop)] += 1
    assert max(per_wave.values()) == 1  # no two tests of a wave share a link direction
    ends = {(r["cable"], r["a_node"]) for r in ports if r["cable"] in switch_cables}
    ends |= {(r["cable"], r["b_node"]) for r in ports if r["cable"] in switch_cables}
    assert len(ends) == 2 * len(switch_cables)
    assert ends <= crossed  # every cabled switch link, both directions
    # The script aims each client at its LID; check-results reads the routed plan like the rendered one.
    script = files[f"{fabric}/perftest.sh"].decode()
    assert '--dlid "$dlid"' in script and "dump_fts" not in script.split("set -euo")[1]


def _table(guid: str, desc: str, rows: list[str], count: int | None = None) -> str:
    head = f"Unicast lids [0x0-0x20] of switch DR path slid 0; dlid 0; 0,1 guid {guid} ({desc}):\n"
    head += "  Lid  Out   Destination\n       Port     Info \n"
    return head + "".join(r + "\n" for r in rows) + f"{len(rows) if count is None else count} valid lids dumped \n"


GOOD = _table(
    "0x02534e8010000000",
    "leaf-1",
    [
        "0x0002 001 : (Channel Adapter portguid 0x02534e0000000001: 'gpu-0001 mlx5_0')",
        "0x0003 001 : (path #2 out of 2: portguid 0x02534e0000000001)",
        "0x0004 000 : (Switch portguid 0x02534e8010000000: 'leaf-1')",
    ],
)


def _lids_of(tables, port_guid: int) -> list[int]:
    return sorted(lid for lid, d in tables.lids.items() if d.port_guid == port_guid)


def test_dump_reader_keeps_lmc_paths_and_reads_opensms_own_file():
    t = parse_dump_fts(GOOD + GOOD.replace("0x02534e8010000000 (leaf-1)", "0x02534e8010000100 (leaf-2)"), "d")
    assert set(t.switches) == {0x02534E8010000000, 0x02534E8010000100}
    leaf = t.switches[0x02534E8010000000]
    assert {lid: leaf.port(lid) for lid in range(len(leaf.out)) if leaf.port(lid) is not None} == {2: 1, 3: 1, 4: 0}
    assert t.lids[3].port_guid == t.lids[2].port_guid == 0x02534E0000000001 and t.paths == {3: (2, 2)}
    assert t.lids[3].description == "gpu-0001 mlx5_0" and _lids_of(t, 0x02534E0000000001) == [2, 3]
    osm = (
        "Unicast lids [0-4] of switch Lid 4 guid 0x02534e8010000000 ('leaf-1'):\n"
        "0x0002 001 # Channel Adapter portguid 0x02534e0000000001: 'gpu-0001 mlx5_0'\n"
        "0x0003 001 # Channel Adapter portguid 0x02534e0000000001: 'gpu-0001 mlx5_0'\n"
        "0x0004 000 # Switch portguid 0x02534e8010000000: 'leaf-1'\n"
        "4 lids dumped\n"
    )
    o = parse_dump_fts(osm, "lfts")
    assert o.switches[0x02534E8010000000].description == "leaf-1" and _lids_of(o, 0x02534E0000000001) == [2, 3]


@pytest.mark.parametrize(
    "text, line, words",
    [
        (GOOD.replace("3 valid lids", "4 valid lids"), 7, "4 LIDs said dumped"),
        (GOOD.rsplit("3 valid", 1)[0], 1, "no closing"),
        (GOOD.replace("0x0004 000", "0x0002 000"), 6, "twice"),
        (GOOD.replace("0x0004 000", "0x0044 000"), 6, "outside the table's range"),
        (GOOD.replace("portguid 0x02534e0000000001)", "portguid 0x02534e0000000009)"), 5, "whose base LID no row names"),
        ("0x0002 001 : (Channel Adapter portguid 0x1: 'x')\n", 1, "outside a switch's table"),
        (GOOD + GOOD, 8, "dumped twice"),
        (GOOD.replace("0x0004 000 : (Switch", "0x0004 000 : (Gizmo"), 6, "cannot read the destination"),
        (GOOD.replace("0x0004 000", "0x0004 300"), 6, "at most 254 ports"),
        ("Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x1 (x):\n", 1, "multicast"),
        (GOOD.replace("[0x0-0x20]", "[0x0-0x1ffff]"), 1, "16-bit"),
        ("hello\n", 1, "not a line of dump_fts output"),
        ("\n\n", 0, "not dump_fts output"),
    ],
)
def test_dump_reader_errors_are_located(text, line, words):
    with pytest.raises(DiscoveryError) as e:
        parse_dump_fts(text, "w.fts")
    assert e.value.line == line and words in e.value.message, e.value


def test_routed_tests_refuse_tables_that_do_not_fit_the_plan(tmp_path):
    c = _compiled("small-ib")
    bad = tmp_path / "bad.fts"
    bad.write_text(_table("0x00000000000000aa", "not-a-switch", ["0x0001 000 : (Switch portguid 0xaa: 'not-a-switch')"]))
    with pytest.raises(DiscoveryError, match="not a switch of the plan") as e:
        routed_tests(c.blueprint, c.catalogue, c.fabric, [str(bad)])
    assert e.value.line == 1
    r = CliRunner().invoke(main, ["routed-tests", str(BLUEPRINTS / "small-ib.yaml"), str(bad), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and f"{bad}:1:" in r.output and not (tmp_path / "o").exists()


@NEEDS_SIM
def test_routed_tests_cli_script_and_check_results_on_a_window(tmp_path):
    dump_text, _discovered, _ = _window("small-ib", False, tmp_path / "sim")
    dump = tmp_path / "window.fts"
    # One route bent: a leaf sends a host's LID out of another port than the plan cables the host to.
    rows = dump_text.splitlines()
    k = next(i for i, ln in enumerate(rows) if re.match(r"0x[0-9a-f]+ 0(0[1-9]|[12]\d) : \(Channel Adapter", ln))
    bent = re.sub(r"^(0x[0-9a-f]+) 0(\d\d)", lambda m: f"{m[1]} {int(m[2]) % 29 + 1:03d}", rows[k])
    dump.write_text("\n".join([*rows[:k], bent, *rows[k + 1 :]]) + "\n")
    out = tmp_path / "out"
    bp = str(BLUEPRINTS / "small-ib.yaml")
    r = CliRunner().invoke(main, ["routed-tests", bp, str(dump), "-o", str(out)])
    assert r.exit_code == 2 and "not cabled as planned" in r.output and not out.exists(), r.output
    # A dump short of a switch's table, and one of another fabric whose switches share names.
    dump.write_text("Unicast lids".join(dump_text.split("Unicast lids")[:-1]))
    r = CliRunner().invoke(main, ["routed-tests", bp, str(dump), "-o", str(out)])
    assert r.exit_code == 2 and "1 of the 12 switches of fabric ib have no table" in r.output, r.output
    assert "dump the whole fabric" in r.output
    dump.write_text(dump_text)
    other = str(BLUEPRINTS / "dgx-h100-superpod-4su.yaml")
    r = CliRunner().invoke(main, ["routed-tests", other, str(dump), "-o", str(out)])
    assert r.exit_code == 2 and "36 of the 48 switches" in r.output and "another fabric's dump?" in r.output, r.output
    r = CliRunner().invoke(main, ["routed-tests", bp, str(dump), "-o", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)["fabrics"][0]
    assert summary["untested_directions"] == 0 and summary["lids_per_port"] == 2 and summary["directions"] == 512
    assert summary["planned_ports_without_lid"] == []
    # A host port that is down has no LID: said, and no test aims at it.
    guid = re.search(r"portguid (0x[0-9a-f]+): 'gpu-0001 mlx5_0'", dump_text).group(1)  # type: ignore[union-attr]
    down = tmp_path / "down.fts"
    kept = [ln for ln in dump_text.splitlines() if f"portguid {guid}" not in ln]
    down.write_text("\n".join(re.sub(r"^(\d+) valid lids", lambda m: f"{int(m[1]) - 2} valid lids", ln) for ln in kept) + "\n")
    r = CliRunner().invoke(main, ["routed-tests", bp, str(down), "-o", str(tmp_path / "down"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["fabrics"][0]["planned_ports_without_lid"] == ["gpu-0001 mlx5_0"]
    # The script, with stand-in ssh and perftest: each client is given its test's LID.
    subprocess.run(["bash", "-n", str(out / "ib" / "perftest.sh")], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fake-ssh").write_text('#!/bin/bash\nhost=$1; shift\nexec bash -c "$*"\n')
    (bin_dir / "ib_write_bw").write_text(
        '#!/bin/bash\nfor a; do [ "$a" = --dlid ] && echo "dlid $2"; shift; done\n'
        'echo " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"\n'
        'echo " 65536      5000           380.00             379.00   0.723"\n'
    )
    for tool in ("ib_write_lat", "ibtracert", "cat"):
        (bin_dir / tool).write_text("#!/bin/bash\necho 0\n")
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SSH": str(bin_dir / "fake-ssh"), "DURATION": "1"}
    res = tmp_path / "res"
    r2 = subprocess.run(["bash", str(out / "ib" / "perftest.sh"), str(res)], env=env, capture_output=True, text=True)
    assert r2.returncode == 0, r2.stderr
    plan = _tsv((out / "ib" / "perftest.tsv").read_bytes())
    for t in plan:
        assert f"dlid {t['dlid']}" in (res / "perftest" / f"{t['test']}.bw.txt").read_text()
    report = check(out, res)
    assert report.count("pass") == len(plan) and not report.failed
    # A slow test is a failure naming the cables it names.
    slow = res / "perftest" / f"{plan[0]['test']}.bw.txt"
    slow.write_text(" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n 65536 5000 80.00 79.00 0.723\n")
    failed = check(out, res).failed
    assert [o.id for o in failed] == [plan[0]["test"]] and plan[0]["labels"].split(";")[0] in failed[0].what


def test_dump_reader_escapes_control_characters_of_the_sites_descriptions():
    hostile = GOOD.replace("'gpu-0001 mlx5_0'", "'gpu\x1b[2J-0001'").replace("(leaf-1)", "(leaf\x07-1)")
    t = parse_dump_fts(hostile, "d")
    assert t.lids[2].description == "gpu\\x1b[2J-0001" and t.switches[0x02534E8010000000].description == "leaf\\x07-1"
