"""RoCE perftests attributed by switch port counters (issue 19): the plan lists per wave the
switches ECMP may route its traffic across and the cable behind each SONiC port; perftest.sh
reads `portstat -a -j -r` on them before and after each wave (run here under a fake ssh);
check-results names the cable whose error counters grew during a failing test's wave, says the
failure is not localised where none did, and locates a counter file that is not portstat JSON."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import shipped, shipped_outputs

from supernodeiac.facts.acceptance_plan import plan, wave_key
from supernodeiac.verify.check_results import check

NAME = "roce-rail-2tier"
STAGE, RAIL = "tier1-2", "0"


def _tsv(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(data.decode().splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def _waves(files: dict[str, bytes]) -> dict[str, list[str]]:
    return {r["wave"]: r["switches"].split(";") for r in _tsv(files["acceptance/roce/counters.tsv"])}


def test_the_plan_lists_each_waves_ecmp_switches_and_every_switch_port_cable():
    c = shipped(NAME)
    f = c.fabric
    files = shipped_outputs(NAME, "acceptance")
    tests = _tsv(files["acceptance/roce/perftest.tsv"])
    waves = _waves(files)
    # One line per run of perftest.sh (stage, rail, wave), named as the script names it.
    assert set(waves) == {wave_key(t["stage"], int(t["rail"]) if t["rail"] else None, int(t["wave"])) for t in tests}
    spines = sorted(d.name for d in f.devices if d.group == "roce" and d.tier == 2)
    for t in tests:
        sw = set(waves[wave_key(t["stage"], int(t["rail"]) if t["rail"] else None, int(t["wave"]))])
        ends = {t["server"], t["client"]}
        leaves = {d for cable in t["cables"].split(";") for d in _ends(f, cable) if d not in ends}
        assert leaves <= sw
        if t["stage"] == "endpoint":  # traffic turning at the leaf crosses no spine
            assert not sw & set(spines)
        else:  # ECMP may hash it onto any spine
            assert set(spines) <= sw
    # Every cable of the fabric behind its SONiC port(s): a host link at its leaf, a leaf-spine cable at both ends.
    ports = _tsv(files["acceptance/roce/switch_ports.tsv"])
    ids = f.links.ids()
    seen: dict[str, list[str]] = {}
    for r in ports:
        assert re.fullmatch(r"Ethernet[0-9]+", r["interface"])
        seen.setdefault(r["cable"], []).append(r["link"])
    assert set(seen) == {ids[i] for i in f.links.indices_of("roce")}
    assert all(v == ["host"] or v == ["switch", "switch"] for v in seen.values())
    assert len({(r["switch"], r["interface"]) for r in ports}) == len(ports)
    assert plan(c.fabric, c.blueprint).ecmp["roce"]
    ib = shipped_outputs("small-ib", "acceptance")
    assert not [p for p in ib if p.endswith(("counters.tsv", "switch_ports.tsv"))]


def _ends(f, cable: str) -> tuple[str, str]:
    i = f.links.ids().index(cable)
    return f.devices[f.links.a[i]].name, f.devices[f.links.b[i]].name


def _portstat(ports: list[dict[str, str]], switch: str) -> str:
    """portstat -a -j's shape (utilities_common/netstat.py table_as_json): per interface, every
    column, numbers grouped with commas."""
    doc = {}
    for r in ports:
        if r["switch"] != switch:
            continue
        row = {"STATE": "U", "RX_OK": "1,234,567", "RX_BPS": "0.00 B/s", "RX_UTIL": "0.00%", "TX_OK": "7,654,321"}
        row |= {k: "0" for k in ("RX_ERR", "RX_DRP", "RX_OVR", "TX_ERR", "TX_DRP", "TX_OVR")}
        row["TRIM"] = "N/A"  # a counter the switch does not support
        doc[r["interface"]] = row
    return json.dumps(doc, indent=4, sort_keys=True)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """perftest.sh for one stage and rail under a fake ssh: ib_write_bw prints a line-rate row,
    portstat prints the switch's ports with every counter still."""
    tmp = tmp_path_factory.mktemp("roce-counters")
    files = shipped_outputs(NAME, "acceptance")
    for path, data in files.items():
        if path.startswith("acceptance/roce/"):
            (tmp / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp / path).write_bytes(data)
    ports = _tsv(files["acceptance/roce/switch_ports.tsv"])
    bin_dir, scratch, calls = tmp / "bin", tmp / "scratch", tmp / "calls"
    for d in (bin_dir, scratch, calls):
        d.mkdir()
    for sw in {r["switch"] for r in ports}:
        (scratch / f"portstat-{sw}.json").write_text(_portstat(ports, sw))
    scripts = {
        "fake-ssh": '#!/bin/bash\nhost=$1; shift\ncd "$SCRATCH" && HOST=$host exec bash -c "$*"\n',
        "ib_write_bw": '#!/bin/bash\necho " #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]"\n'
        'echo " 65536  5000  0.00  391.23  0.746"\n',
        "ib_write_lat": '#!/bin/bash\necho " 2  1000  1.50  3.00  1.60  1.62  0.05  1.80  2.10"\n',
        "portstat": (
            '#!/bin/bash\nprintf "%s\\0" "$HOST" "$(basename "$0")" "$@" >"$(mktemp "$CALLS/call.XXXXXX")"\n'
            'cat "portstat-$HOST.json"\n'
        ),
        "sleep": "#!/bin/bash\n",  # the script's 2 s for each server to listen
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SSH": str(bin_dir / "fake-ssh"), "SCRATCH": str(scratch), "CALLS": str(calls)}
    results = tmp / "res"
    script = tmp / "acceptance/roce/perftest.sh"
    r = subprocess.run(["bash", str(script), str(results), STAGE, RAIL], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    argv = [tuple(a.decode() for a in p.read_bytes().split(b"\0")[:-1]) for p in sorted(calls.iterdir())]
    return tmp, results, files, ports, argv, script


def test_the_script_reads_every_switch_of_each_wave_before_and_after_it(ran):
    _tmp, results, files, _ports, argv, script = ran
    waves = {k: v for k, v in _waves(files).items() if k.startswith(f"{STAGE}-r{RAIL}-")}
    assert len(waves) >= 2
    want = {f"{k}.{phase}.{sw}.json" for k, sws in waves.items() for sw in sws for phase in ("before", "after")}
    assert {p.name for p in (results / "counters").iterdir()} == want
    assert sorted(argv) == sorted((sw, "portstat", "-a", "-j", "-r") for sws in waves.values() for sw in sws for _ in (0, 1))
    if shutil.which("shellcheck"):
        sc = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
        assert sc.returncode == 0, sc.stdout


def _fail(results: Path, test: str) -> None:
    (results / "perftest" / f"{test}.bw.txt").write_text(
        " #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n 65536  5000  0.00  101.50  0.190\n"
    )


def _copy(ran, tmp_path: Path) -> tuple[Path, Path, dict[str, dict[str, str]], list[dict[str, str]]]:
    tmp, results, files, ports, _argv, _s = ran
    res = tmp_path / "res"
    shutil.copytree(results, res)
    tests = {t["test"]: t for t in _tsv(files["acceptance/roce/perftest.tsv"])}
    return tmp / "acceptance", res, tests, ports


def _outcome(report, test: str):
    return next(o for o in report.outcomes if o.id == test)


def test_a_healthy_wave_passes_and_a_failure_without_a_moved_counter_is_not_localised(ran, tmp_path):
    acceptance, res, tests, _ports = _copy(ran, tmp_path)
    mine = [t for t in tests.values() if t["stage"] == STAGE and t["rail"] == RAIL]
    report = check(acceptance, res)
    assert all(_outcome(report, t["test"]).status == "pass" for t in mine)
    assert not [o for o in report.outcomes if o.kind == "counters"]
    _fail(res, mine[0]["test"])
    o = _outcome(check(acceptance, res), mine[0]["test"])
    assert o.status == "fail" and o.verdict == "not-localised"
    assert "no counter moved: path not localised" in o.detail


def test_rx_err_growing_on_one_spine_port_names_that_cable(ran, tmp_path):
    acceptance, res, tests, ports = _copy(ran, tmp_path)
    mine = [t for t in tests.values() if t["stage"] == STAGE and t["rail"] == RAIL]
    failing = mine[0]
    key = wave_key(STAGE, int(RAIL), int(failing["wave"]))
    # A leaf-spine cable on no test's planned path of this wave: ECMP may still have hashed onto it.
    planned = {c for t in mine if t["wave"] == failing["wave"] for c in (t["cables"] + ";" + t["via"]).split(";")}
    spine_port = next(
        r for r in ports if r["link"] == "switch" and r["switch"].startswith("roce-spine") and r["cable"] not in planned
    )
    # Another NIC's host link in the same wave: not the failing test's, so not its suspect.
    other = next(t for t in mine if t["wave"] == failing["wave"] and t["test"] != failing["test"])
    host_port = next(r for r in ports if r["link"] == "host" and r["cable"] in other["via"].split(";"))
    for port, n in ((spine_port, 17), (host_port, 5)):
        after = res / "counters" / f"{key}.after.{port['switch']}.json"
        doc = json.loads(after.read_text())
        doc[port["interface"]]["RX_ERR"] = f"{n:,}"
        after.write_text(json.dumps(doc))
    _fail(res, failing["test"])
    report = check(acceptance, res)
    o = _outcome(report, failing["test"])
    assert o.status == "fail" and o.verdict == "counter-moved"
    assert o.suspects[: o.likely] == [spine_port["label"]]
    assert o.what.startswith(f"counter moved on {spine_port['label']} (RX_ERR +17 at {spine_port['switch']} ")
    assert host_port["label"] not in o.what
    # The other test passed: the moved counter on its own host link is noted, not failed.
    p = _outcome(report, other["test"])
    assert p.status == "pass" and f"counter moved on {host_port['label']} (RX_ERR +5" in p.detail


def test_a_counter_file_that_is_not_portstat_json_is_a_located_error(ran, tmp_path):
    acceptance, res, tests, _ports = _copy(ran, tmp_path)
    t = next(t for t in tests.values() if t["stage"] == STAGE and t["rail"] == RAIL)
    key = wave_key(STAGE, int(RAIL), int(t["wave"]))
    switch = _waves(ran[2])[key][0]
    (res / "counters" / f"{key}.after.{switch}.json").write_text('{\n  "Ethernet0": {"RX_ERR": "0",\n')
    doc = json.loads((res / "counters" / f"{key}.before.{switch}.json").read_text())
    report = check(acceptance, res)
    (problem,) = [o for o in report.outcomes if o.kind == "counters"]
    assert problem.status == "unreadable" and problem.id == f"{key}.{switch}"
    assert problem.detail.startswith(f"counters/{key}.after.{switch}.json:3:1: not portstat JSON")
    assert problem in report.failed
    # A cell that is not a counter is located by interface and column.
    iface = next(iter(doc))
    doc[iface]["TX_DRP"] = "lots"
    (res / "counters" / f"{key}.after.{switch}.json").write_text(json.dumps(doc))
    (problem,) = [o for o in check(acceptance, res).outcomes if o.kind == "counters"]
    assert f"counters/{key}.after.{switch}.json: {iface}: TX_DRP is 'lots', not a counter" in problem.detail
