"""`snc check-results` on whole result sets of small-ib: the tools' real output formats (ibtracert
recorded on ibsim, nvidia-smi nvlink, the uplink script's records), and verdicts that name the right
cables: a healthy fabric, a 41.6 GB/s fabric run, a degraded link found from the recorded paths,
a knee too early, a path off the plan, a link down inside a domain, a bad management uplink."""

from __future__ import annotations

import csv
import gzip
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import shipped_files, shipped_outputs
from test_check_results import nccl_output
from test_physical_acceptance import healthy as physical_healthy

from supernodeiac.cli import main
from supernodeiac.verify.check_results import check
from supernodeiac.verify.ibtracert import parse_ibtracert

DATA = Path(__file__).parent / "data" / "acceptance"
BW = (
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
    " 65536      5000             {bw:.2f}            {bw:.2f}              0.70\n"
)


def _tsv(text: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(text.decode().splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.fixture(scope="module")
def small_plan(tmp_path_factory):
    files = shipped_files("small-ib")
    root = tmp_path_factory.mktemp("plan")
    for path, data in files.items():
        if path.startswith("acceptance/"):
            target = root / Path(path).relative_to("acceptance")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    traces = {}
    for chunk in gzip.decompress((DATA / "small-ib-ib.traces.txt.gz").read_bytes()).decode().split("== ")[1:]:
        name, body = chunk.split("\n", 1)
        traces[name] = body
    plan = {
        "perf": _tsv(files["acceptance/ib/perftest.tsv"]),
        "nccl": _tsv(files["acceptance/nccl-tests.tsv"]),
        "scaleup": _tsv(files["acceptance/scaleup.tsv"]),
        "uplinks": _tsv(files["acceptance/management/uplinks.tsv"]),
        "ports": _tsv(files["acceptance/ib/ports.tsv"]),
        "physical": _tsv(files["acceptance/ib/physical.tsv"]),
    }
    return root, plan, traces


def _port_block(state: str = "up", speed: str = "100000", crc: int = 0) -> str:
    return f"operstate {state}\nspeed {speed}\nrx_errors 0\ntx_errors 0\nrx_crc_errors {crc}\n"


def _uplink_record(row: dict[str, str], *, state="up", speed=None, crc_after=0, received=100) -> str:
    speed = speed or str(int(float(row["line_gbps"]) * 1000))
    ping = (
        f"PING {row['target']} ({row['target']}) from 10.0.0.1 {row['bind']}: 56(84) bytes of data.\n\n"
        f"--- {row['target']} ping statistics ---\n"
        f"100 packets transmitted, {received} received, {100 - received}% packet loss, time 19804ms\n"
    )
    return (
        f"== a before\n{_port_block()}== b before\n{_port_block()}== ping\n{ping}"
        f"== a after\n{_port_block(state, speed, crc_after)}== b after\n{_port_block()}"
    )


def healthy(tmp_path: Path, plan: dict, traces: dict[str, str]) -> Path:
    """Every stage's results as the scripts write them, everything well within the design."""
    results = tmp_path / "results"
    for sub in ("perftest", "nccl", "scaleup", "management"):
        (results / sub).mkdir(parents=True)
    for r in plan["perf"]:
        (results / "perftest" / f"{r['test']}.bw.txt").write_text(BW.format(bw=0.95 * float(r["line_gbps"])))
        (results / "perftest" / f"{r['test']}.trace.txt").write_text(traces[r["test"]])
    for r in plan["nccl"]:
        half = int(r["knee_bytes"]) / 9
        (results / "nccl" / f"{r['run']}.txt").write_text(nccl_output(0.98 * float(r["busbw_gbytes"]), int(r["np"]), half))
    status = (DATA / "h100-nvlink-status.txt").read_text()
    errors = (DATA / "h100-nvlink-errors.txt").read_text()
    for r in plan["scaleup"]:
        for phase in ("before", "after"):
            (results / "scaleup" / f"{r['check']}.{phase}.txt").write_text(f"== status\n{status}== errors\n{errors}")
    for r in plan["uplinks"]:
        (results / "management" / f"{r['test']}.txt").write_text(_uplink_record(r))
    physical_healthy(results, "ib", plan["physical"])  # stage 0: every cable end reads its planned part
    return results


def test_every_recorded_path_of_small_ib_is_the_planned_one(small_plan, tmp_path):
    """The traces real ibtracert printed on ibsim read back as the plan's cables, test by test."""
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    report = check(plan_dir, results)
    perf = [o for o in report.outcomes if o.kind == "perftest"]
    assert len(perf) == len(plan["perf"]) == 324
    assert all(o.path_source == "recorded" and "off the plan" not in o.detail for o in perf)
    label = {r["cable"]: r["label"] for r in plan["ports"]}
    for o, r in zip(perf[::37], plan["perf"][::37], strict=True):
        planned = {label[c] for c in (r["cables"] + ";" + r["via"]).split(";") if c}
        assert set(o.path) == planned and len(o.path) == len(planned)
    tier = next(r for r in plan["perf"] if r["stage"] == "tier1-2")
    trace = parse_ibtracert(traces[tier["test"]])
    assert trace.complete and len(trace.hops) == 4 and trace.source == f"{tier['client']} {tier['client_dev']}"


def test_healthy_sample_set_passes_every_stage(small_plan, tmp_path):
    plan_dir, plan, traces = small_plan
    report = check(plan_dir, healthy(tmp_path, plan, traces))
    assert not report.failed and report.count("missing") == 0
    kinds = {o.kind for o in report.outcomes}
    assert kinds == {"physical", "perftest", "nccl", "scaleup", "uplink"}
    assert sum(o.kind == "scaleup" for o in report.outcomes) == 16 and sum(o.kind == "uplink" for o in report.outcomes) == 12
    result = CliRunner().invoke(main, ["check-results", str(plan_dir), str(tmp_path / "results")])
    assert result.exit_code == 0 and "0 failed" in result.output


def test_a_41_6_gbytes_fabric_run_fails_with_no_cable_to_blame(small_plan, tmp_path):
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    (results / "nccl" / "fabric-ib-all_reduce.txt").write_text(nccl_output(41.6, 128, 16 << 20))
    (failure,) = check(plan_dir, results).failed
    assert failure.id == "fabric-ib-all_reduce" and failure.verdict == "low-plateau"
    assert "failed perftests" not in failure.what  # every link passed: the cap is elsewhere (a NIC setting, NCCL)


def test_a_degraded_link_is_named_from_the_recorded_paths(small_plan, tmp_path):
    """One leaf-spine cable at half rate: every test whose recorded path crosses it runs at half,
    and each names that cable first: the one cable all the failing paths share that no passing
    test crossed."""
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    ports = {(r["a_node"], int(r["a_port"])): r for r in plan["ports"]} | {
        (r["b_node"], int(r["b_port"])): r for r in plan["ports"]
    }
    on_path = {r["test"]: {ports[hop[1]]["cable"] for hop in parse_ibtracert(traces[r["test"]]).hops} for r in plan["perf"]}
    # The leaf-spine cable on most recorded paths (under test in one, crossed on the way by others).
    spine_cables = [r for r in plan["ports"] if "spine" in r["b_node"] or "spine" in r["a_node"]]
    bad = max(spine_cables, key=lambda r: (sum(r["cable"] in c for c in on_path.values()), r["cable"]))
    crossing = [t for t, cables in on_path.items() if bad["cable"] in cables]
    for r in plan["perf"]:
        if r["test"] in crossing:
            (results / "perftest" / f"{r['test']}.bw.txt").write_text(BW.format(bw=0.5 * float(r["line_gbps"])))
    (results / "nccl" / "fabric-ib-all_reduce.txt").write_text(nccl_output(185, 128, 64 << 20))
    report = check(plan_dir, results)
    failed = {o.id: o for o in report.failed}
    assert set(failed) == {*crossing, "fabric-ib-all_reduce"} and len(crossing) >= 2
    for test in crossing:
        # The cable the failing paths share comes first; cables only this test crossed follow.
        o = failed[test]
        assert o.path_source == "recorded" and o.suspects[0] == bad["label"]
        assert o.what.startswith(f"{bad['label']} (suspect on the recorded path, crossed by no passing test and by ")
    assert bad["label"] in failed["fabric-ib-all_reduce"].what
    cli = CliRunner().invoke(main, ["check-results", str(plan_dir), str(results)])
    assert cli.exit_code == 1 and f"FAIL perftest {crossing[0]}" in cli.output and bad["label"] in cli.output


def test_a_knee_too_early_is_a_capped_domain(small_plan, tmp_path):
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    (results / "nccl" / "domain-gpu-0003-all_reduce.txt").write_text(nccl_output(480, 8, 16 << 20, cap=200))
    (failure,) = check(plan_dir, results).failed
    assert failure.id == "domain-gpu-0003-all_reduce" and failure.verdict == "early-knee"


def test_a_path_off_the_plan_is_said_and_its_untested_cable_named(small_plan, tmp_path):
    """A test routed over another spine than planned: it still passes, but its planned spine cables
    were not under test; the detail names them and the spine it took."""
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    tiers = [r for r in plan["perf"] if r["stage"] == "tier1-2"]
    one = tiers[0]
    other = next(
        r for r in tiers if parse_ibtracert(traces[r["test"]]).hops[1][1][0] != parse_ibtracert(traces[one["test"]]).hops[1][1][0]
    )
    (results / "perftest" / f"{one['test']}.trace.txt").write_text(traces[other["test"]])
    o = next(o for o in check(plan_dir, results).outcomes if o.id == one["test"])
    assert o.status == "pass" and "routed off the plan" in o.detail
    assert "not on the recorded path, so not tested" in o.detail
    assert all(label in o.detail for label in one["labels"].split(";"))


def test_an_unreadable_trace_falls_back_to_the_planned_path(small_plan, tmp_path):
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    test = plan["perf"][0]["test"]
    (results / "perftest" / f"{test}.trace.txt").write_text("ibtracert: iberror: failed: Failed to get route information\n")
    o = next(o for o in check(plan_dir, results).outcomes if o.id == test)
    assert o.status == "pass" and o.path_source == "planned" and "Failed to get route information" in o.detail


@pytest.mark.parametrize(
    "edit, expect",
    [
        (lambda s: s.replace("Link 7: 26.562 GB/s", "Link 7: <inactive>", 1), "GPU 0: link 7 inactive"),
        (lambda s: s.replace("Link 3: 26.562 GB/s", "Link 3: 13.281 GB/s", 1), "GPU 0: link 3 (13.281 GB/s) below 25 GB/s"),
        (lambda s: s.replace("\t Link 17: 26.562 GB/s\nGPU 1", "GPU 1", 1), "GPU 0: 17 links listed, 18 expected"),
        (lambda s: s.replace("Link 5: CRC Errors: 0", "Link 5: CRC Errors: 12", 1), "GPU 0 link 5: CRC Errors +12"),
    ],
)
def test_a_scale_up_link_down_slow_or_counting_errors_fails_its_host(small_plan, tmp_path, edit, expect):
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    check_id = plan["scaleup"][2]["check"]
    after = results / "scaleup" / f"{check_id}.after.txt"
    after.write_text(edit(after.read_text()))
    (failure,) = check(plan_dir, results).failed
    assert failure.kind == "scaleup" and failure.id == check_id and expect in failure.detail
    assert plan["scaleup"][2]["host"] in failure.what


@pytest.mark.parametrize(
    "change, expect",
    [
        ({"state": "down", "speed": "-1"}, "is down"),
        ({"speed": "40000"}, "at 40000 Mb/s, its line rate is 100000"),
        ({"crc_after": 7}, "rx_crc_errors +7"),
        ({"received": 97}, "3 of 100 pings"),
    ],
)
def test_a_bad_management_uplink_is_named_by_cable_label(small_plan, tmp_path, change, expect):
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    row = plan["uplinks"][3]
    (results / "management" / f"{row['test']}.txt").write_text(_uplink_record(row, **change))
    (failure,) = check(plan_dir, results).failed
    assert failure.kind == "uplink" and expect in failure.detail and row["label"] in failure.what
    cli = CliRunner().invoke(main, ["check-results", str(plan_dir), str(results)])
    assert cli.exit_code == 1 and f"FAIL uplink {row['test']}" in cli.output and row["label"] in cli.output


def test_a_record_that_is_not_the_scripts_output_is_unreadable(small_plan, tmp_path):
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    (results / "management" / f"{plan['uplinks'][0]['test']}.txt").write_text("ssh: connect to host: refused\n")
    (results / "scaleup" / f"{plan['scaleup'][0]['check']}.after.txt").write_text("== status\nNVIDIA-SMI has failed\n")
    failed = {o.kind: o for o in check(plan_dir, results).failed}
    assert failed["uplink"].status == "unreadable" and "no '== a before' section" in failed["uplink"].detail
    assert failed["scaleup"].status == "unreadable" and "no 'GPU n:' line" in failed["scaleup"].detail


def test_perftest_results_of_another_plan_are_named_not_ignored(small_plan, tmp_path):
    """A bandwidth result whose test the plan does not have (dgx-h100-superpod-4su's, in small-ib's
    results folder) is a located error, as a stray nccl-tests table is; before, it was skipped."""
    plan_dir, plan, traces = small_plan
    results = healthy(tmp_path, plan, traces)
    ours = {r["test"] for r in plan["perf"]}
    theirs = _tsv(shipped_outputs("dgx-h100-superpod-4su", "acceptance")["acceptance/ib/perftest.tsv"])
    test = next(r["test"] for r in theirs if r["test"] not in ours)
    stray = results / "perftest" / f"{test}.bw.txt"
    stray.write_text(BW.format(bw=0.95 * float(theirs[0]["line_gbps"])))
    # Its path and latency files alone are side records of a run, not results to grade.
    (results / "perftest" / f"{test}.trace.txt").write_text(traces[plan["perf"][0]["test"]])
    (failure,) = check(plan_dir, results).failed
    assert (failure.kind, failure.id, failure.status, failure.verdict) == ("perftest", test, "unreadable", "foreign")
    assert f"{stray}: no test {test!r} in {plan_dir}/*/perftest.tsv" in failure.detail and "another plan" in failure.detail
    cli = CliRunner().invoke(main, ["check-results", str(plan_dir), str(results)])
    assert cli.exit_code == 1 and "Traceback" not in cli.output and f"UNREADABLE perftest {test}" in cli.output


@pytest.mark.parametrize(
    "text, error",
    [
        ("/usr/sbin/ibtracert: iberror: failed: Failed to get route information\n", "iberror"),
        ('From ca {0x1} portnum 1 lid 1-1 "gpu-0001 mlx5_0"\n[1] -> switch port {0x2}[1] lid 2-2 "leaf"\n', "stops short"),
        (
            'From ca {0x1} portnum 1 lid 1-1 "a"\n[1] -> switch port {0x2}[1] lid 2-2 "b"\nTo ca {0x3} portnum 1 lid 3-3 "c"\n',
            "ends at",
        ),
        ('From ca {0x1} portnum 1 lid 1-1 "a"\n[x] -> somewhere\n', "not an ibtracert hop"),
        ("$(touch CANARY)\n", "not ibtracert output"),
    ],
)
def test_ibtracert_reader_says_what_is_wrong(text, error):
    assert error in parse_ibtracert(text).error


def test_a_ports_table_cut_short_is_skipped_not_a_crash(small_plan, tmp_path):
    plan_dir, plan, traces = small_plan
    copy = tmp_path / "plan"
    shutil.copytree(plan_dir, copy)
    ports = copy / "ib" / "ports.tsv"
    lines = ports.read_text().splitlines()
    ports.write_text("\n".join([lines[0], lines[1].split("\t", 2)[0], *lines[2:]]) + "\n")
    report = check(copy, healthy(tmp_path, plan, traces))
    assert not report.failed
    first = next(o for o in report.outcomes if o.id == plan["perf"][0]["test"])
    assert first.path_source == "planned" and "hops no cable of the plan joins" in first.detail
