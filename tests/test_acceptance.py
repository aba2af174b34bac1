"""The acceptance plan: every data link under test exactly once, expected figures from the link
rates, runnable scripts, and the results checker naming a failing link by its cable label."""

from __future__ import annotations

import csv
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, compile_text

from supernodeiac.cli import main
from supernodeiac.facts.acceptance_plan import plan
from supernodeiac.pipeline import compile_file, render
from supernodeiac.verify.check_results import check, ib_write_bw_gbps, ib_write_lat_us, nccl_busbw

CASES = ["small-ib", "ib-3tier", "nvl72-pod", "roce-rail-2tier", "dragonfly-balanced", "dragonfly-plus"]

BW_OUTPUT = """\
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
 Number of qps   : 1            Transport type : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      2374156          0.00               {bw:.2f}               0.746
---------------------------------------------------------------------------------------
"""
LAT_OUTPUT = (
    " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
    "   99% percentile[usec]   99.9% percentile[usec]\n"
    " 2       1000          1.01           4.46         1.05               1.07           0.06"
    "            1.31                   4.46\n"
)
NCCL_OUTPUT = """\
# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    30.27    0.00    0.00      0    29.88    0.00    0.00      0
  8589934592    2147483648     float     sum      -1  {t}  {a}  {bw:.2f}      0  {t}  {a}  {bw2:.2f}      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 120.5
"""


@pytest.mark.parametrize("name", CASES)
def test_perftest_pairs_put_every_data_link_under_test_exactly_once(name):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    p = plan(c.fabric, c.blueprint)
    f, t = c.fabric, c.fabric.links
    assert p.perftests
    for fabric, tests in p.perftests.items():
        assert p.untestable[fabric] == []
        under = Counter(i for test in tests for i in test.under_test)
        data_links = t.indices_of(fabric)
        if p.routed.get(fabric):
            # Routed switch-link tests name a cable once per direction they load first; a direction
            # no route loads is listed instead (test_acceptance_routes.py walks the real tables).
            one_way = Counter(i for i, _x in p.one_way[fabric])
            assert sorted(under) == sorted(data_links) or set(under) == set(data_links), fabric
            for i in data_links:
                switch_link = t.a[i] not in host_ends(f, fabric) and t.b[i] not in host_ends(f, fabric)
                assert under[i] + one_way[i] == (2 if switch_link else 1), (fabric, i)
            continue
        assert sorted(under) == sorted(data_links) and set(under.values()) == {1}, fabric
        for test in tests:
            # A test's links form a path from the server to the client (each end once, inner switches twice).
            path = test.under_test + test.via
            degree: Counter[int] = Counter()
            for i in path:
                degree[t.a[i]] += 1
                degree[t.b[i]] += 1
            if test.server == test.client:  # two NICs of one host through the fabric (a Dragonfly router's host)
                assert test.server_dev != test.client_dev and degree[test.server] == 2
            else:
                assert degree[test.server] == 1 and degree[test.client] == 1
            assert all(v == 2 for d, v in degree.items() if d not in (test.server, test.client))
            # The line rate is the slowest link of the path.
            assert test.gbps == min(t.specs[t.spec[i]].gbps for i in path)
            assert f.devices[test.server].tier == 0 or test.stage != "endpoint"
        # Tests of one wave share no NIC, so a wave can run at once.
        seen: set[tuple] = set()
        for test in tests:
            for nic in ((test.wave, test.server, test.server_dev), (test.wave, test.client, test.client_dev)):
                assert nic not in seen
                seen.add(nic)


def test_a_dragonfly_group_built_without_endpoints_leaves_its_links_untestable_not_a_crash():
    """dragonfly-balanced with one node group fewer: group 9's routers have no host below, so
    their local links and the global links to them are listed as untestable; every other link is
    under test exactly once (this crashed the renderer with a KeyError)."""
    text = (BLUEPRINTS / "dragonfly-balanced.yaml").read_text().replace("      - group: gpu-9\n", "")
    c = compile_text(text, "df-8-of-9.yaml")
    assert c.exit_code == 0
    f, t = c.fabric, c.fabric.links
    p = plan(f, c.blueprint)
    hostless = {d.index for d in f.devices if d.role == "router" and d.coord("group") == 8}
    untestable = p.untestable["df"]
    assert untestable and all(t.a[i] in hostless or t.b[i] in hostless for i in untestable)
    under = Counter(i for test in p.perftests["df"] for i in test.under_test)
    assert set(under.values()) == {1} and sorted([*under, *untestable]) == sorted(t.indices_of("df"))
    # links between two routers that have hosts stay under test
    assert all(i in under for i in t.indices_of("df") if t.a[i] not in hostless and t.b[i] not in hostless)
    artifacts, _ = render(c, only=["acceptance"])
    assert f"{len(untestable)} links carry no host-to-host traffic" in artifacts["acceptance/checklist.md"].decode()
    rows = [r.split("\t") for r in artifacts["acceptance/df/untestable.tsv"].decode().splitlines()[1:]]
    assert rows and all(r[2] == "both" and r[3] == "no host below one end: nothing can load it" for r in rows)


def host_ends(f, fabric: str) -> set[int]:
    """Devices at a fabric's endpoints (tier 0)."""
    from supernodeiac.fabric.views import links_by_fabric, local_tiers

    tiers = local_tiers(f, fabric, links_by_fabric(f)[fabric])
    return (
        {d for d in range(len(f.devices)) if tiers[d] == 0}
        if isinstance(tiers, list)
        else {d for d, v in tiers.items() if v == 0}
    )


def test_rendered_plan_files_scripts_and_checklist(tmp_path):
    c = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    artifacts, _ = render(c, ["acceptance"])
    for path in ("acceptance/ib/perftest.sh", "acceptance/nccl-tests.sh"):
        script = tmp_path / Path(path).name
        script.write_bytes(artifacts[path])
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    rows = list(csv.DictReader(artifacts["acceptance/ib/perftest.tsv"].decode().splitlines(), delimiter="\t"))
    # 16 nodes x 8 rails, the UFM pair's 4 ports, 8 leaves x 32 uplinks: host links once, the
    # uplinks once per direction a route loads (untestable.tsv lists the other directions).
    named = sum(len(r["cables"].split(";")) for r in rows)
    one_way = artifacts["acceptance/ib/untestable.tsv"].decode().splitlines()[1:]
    assert len(c.fabric.links.indices_of("ib")) == 16 * 8 + 4 + 8 * 32
    assert named + len(one_way) == 16 * 8 + 4 + 2 * 8 * 32
    # Each row says why: small-ib's leaf-spine cables run in parallel, and ftree sends the
    # destinations below a leaf down some of a spine's cables to it, not all.
    whys = [r.split("\t") for r in one_way]
    assert all(len(w) == 4 and w[3] for w in whys)
    assert all(" down to " in w[3] and w[2] == "from " + w[3].split()[3] for w in whys)
    for r in rows:
        assert float(r["min_gbps"]) == pytest.approx(0.6 * float(r["line_gbps"])) and float(r["line_gbps"]) == 400
    # Stage by stage, rail by rail.
    order = [(r["stage"], int(r["rail"]) if r["rail"] else -1) for r in rows]
    assert order == sorted(order, key=lambda x: ({"endpoint": 0, "tier1-2": 1}[x[0]], x[1]))
    checklist = artifacts["acceptance/checklist.md"].decode()
    assert "388" in checklist and "60 %" in checklist and "80 %" in checklist
    runs = list(csv.DictReader(artifacts["acceptance/nccl-tests.tsv"].decode().splitlines(), delimiter="\t"))
    by_stage = Counter(r["stage"] for r in runs)
    assert by_stage == {"domain": 16 * 3, "rail": 8 * 3, "fabric": 3}
    bw = {(r["stage"], r["collective"]): (r["algorithm"], float(r["busbw_gbytes"])) for r in runs}
    # H100: 18 NVLinks x 200 Gb/s / 8 = 450 GB/s per direction; NVLS inside the node (~480, nccl-tests#212);
    # a ring across nodes is bound by min(0.82 x 450 NVLink, 0.96 x 8 x 50 GB/s NICs) = 369, not one NIC's 50;
    # a rail run (one GPU per host) by its NIC: 0.96 x 50; alltoall by each rank's own NIC.
    assert bw[("domain", "all_reduce")] == ("nvls", pytest.approx(480.375))
    assert bw[("domain", "all_gather")] == ("ring", 369) and bw[("fabric", "all_reduce")] == ("ring", 369)
    assert bw[("rail", "all_reduce")] == ("ring", 48) and bw[("fabric", "alltoall")] == ("p2p", pytest.approx(50.8))
    fabric = next(r for r in runs if r["run"] == "fabric-ib-all_reduce")
    assert float(fabric["min_busbw_gbytes"]) == pytest.approx(0.8 * 369) and fabric["tool"] == "nccl-tests"
    assert int(fabric["knee_bytes"]) > 0 and "bound: scale-up" in fabric["basis"]
    rail3 = next(r for r in runs if r["group"] == "ib-su001-rail3" and r["collective"] == "all_reduce")
    assert rail3["env"] == "CUDA_VISIBLE_DEVICES=3;NCCL_IB_HCA==mlx5_5:1" and rail3["hosts"] == "hosts/ib-su001.txt"
    assert artifacts["acceptance/hosts/ib-su001.txt"].decode().split() == [f"gpu-{i:04d}" for i in range(1, 17)]


def test_expected_bandwidth_follows_the_taper():
    c = compile_file(str(BLUEPRINTS / "roce-3tier-oversub.yaml"))
    p = plan(c.fabric, c.blueprint)
    facts = c.fabric.facts[c.blueprint.scaleout[0].name]
    taper = max(1, facts["leaf_down"] / facts["leaf_up"]) * max(1, facts["spine_down"] / facts["spine_up"])
    assert taper > 1
    fabric_run = next(r for r in p.nccl if r.stage == "fabric" and r.collective == "alltoall")
    rail_run = next(r for r in p.nccl if r.stage == "rail" and r.collective == "alltoall")
    n, g = len(fabric_run.hosts) * fabric_run.gpus_per_host, fabric_run.gpus_per_host
    # alltoall: each rank's own NIC, over the taper, for the share of its data that leaves the host.
    assert fabric_run.busbw_gbytes == pytest.approx(rail_run.busbw_gbytes / taper * (n - 1) / (n - g))
    ring = next(r for r in p.nccl if r.stage == "fabric" and r.collective == "all_reduce")
    assert ring.busbw_gbytes == pytest.approx(min(0.82 * 450, rail_run.busbw_gbytes * g / taper))


def test_parsers_read_the_tools_output():
    assert ib_write_bw_gbps(BW_OUTPUT.format(bw=391.23)) == pytest.approx(391.23)
    assert ib_write_lat_us(LAT_OUTPUT) == pytest.approx(1.05)
    text = NCCL_OUTPUT.format(t="46000.1", a="186.7", bw=350.12, bw2=352.5)
    assert nccl_busbw(text) == pytest.approx(352.5)
    assert ib_write_bw_gbps("ib_write_bw: Couldn't connect") is None


def _write_results(tmp_path: Path, artifacts: dict[str, bytes], fraction: float, bad: str | None):
    plan_dir = tmp_path / "plan"
    for path, data in artifacts.items():
        target = plan_dir / Path(path).relative_to("acceptance")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    results = tmp_path / "results"
    (results / "perftest").mkdir(parents=True)
    (results / "nccl").mkdir()
    rows = list(csv.DictReader(artifacts["acceptance/ib/perftest.tsv"].decode().splitlines(), delimiter="\t"))
    for r in rows:
        share = 0.55 if r["test"] == bad else fraction
        (results / "perftest" / f"{r['test']}.bw.txt").write_text(BW_OUTPUT.format(bw=float(r["line_gbps"]) * share))
        (results / "perftest" / f"{r['test']}.lat.txt").write_text(LAT_OUTPUT)
    runs = list(csv.DictReader(artifacts["acceptance/nccl-tests.tsv"].decode().splitlines(), delimiter="\t"))
    for r in runs:
        bw = float(r["busbw_gbytes"]) * 0.9
        (results / "nccl" / f"{r['run']}.txt").write_text(NCCL_OUTPUT.format(t="1.0", a="1.0", bw=bw, bw2=bw))
    return plan_dir, results, rows


def test_results_checker_flags_a_fabricated_55_percent_link_by_cable_label(tmp_path):
    c = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    artifacts, _ = render(c, ["acceptance"])
    rows = list(csv.DictReader(artifacts["acceptance/ib/perftest.tsv"].decode().splitlines(), delimiter="\t"))
    bad = next(r for r in rows if r["stage"] == "tier1-2")
    plan_dir, results, _ = _write_results(tmp_path, artifacts, 0.95, bad["test"])
    report = check(plan_dir, results)
    (failure,) = report.failed
    assert failure.id == bad["test"] and failure.measured == pytest.approx(220.0) and "55%" in failure.detail
    labels = bad["labels"].split(";")
    assert len(labels) == 2 and all(label in failure.what for label in labels)
    # ... and the two NICs that ran the test, by the printed port the team at the rack looks for.
    for end in ("server", "client"):
        assert f"{bad[end]} {bad[end + '_dev']} at {bad[end + '_port']}" in failure.what
    assert bad["server_port"].startswith("OSFP ")
    # Every perftest and nccl-tests result read (the scale-up and uplink stages have none here).
    graded = [o for o in report.outcomes if o.kind in ("perftest", "nccl")]
    assert sum(o.status == "pass" for o in graded) == len(graded) - 1 and not any(o.status == "missing" for o in graded)
    # Stage 0 (the physical layer) was not run: its cables are without a result.
    assert {o.status for o in report.outcomes if o.kind == "physical"} == {"missing"}
    # The CLI names the same cables and exits 1.
    result = CliRunner().invoke(main, ["check-results", str(plan_dir), str(results)])
    assert result.exit_code == 1
    assert f"FAIL perftest {bad['test']}" in result.output and labels[0] in result.output
    # At 61 % everything passes; a missing result fails only with --require-all.
    plan_dir, results, _ = _write_results(tmp_path / "ok", artifacts, 0.61, None)
    assert CliRunner().invoke(main, ["check-results", str(plan_dir), str(results)]).exit_code == 0
    next(p for p in sorted((results / "perftest").iterdir()) if p.name.endswith(".bw.txt")).unlink()
    assert CliRunner().invoke(main, ["check-results", str(plan_dir), str(results)]).exit_code == 0
    assert CliRunner().invoke(main, ["check-results", "--require-all", str(plan_dir), str(results)]).exit_code == 1
    assert CliRunner().invoke(main, ["check-results", str(tmp_path), str(results)]).exit_code == 2


def test_a_slow_collective_fails(tmp_path):
    c = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    artifacts, _ = render(c, ["acceptance"])
    plan_dir, results, _ = _write_results(tmp_path, artifacts, 0.9, None)
    run = "fabric-ib-alltoall"
    (results / "nccl" / f"{run}.txt").write_text(NCCL_OUTPUT.format(t="1.0", a="1.0", bw=30.0, bw2=31.0))
    report = check(plan_dir, results)
    (failure,) = report.failed
    assert failure.id == run and failure.expected == pytest.approx(50.8) and failure.threshold == pytest.approx(40.64)
    assert "61%" in failure.detail


def test_growing_by_an_su_keeps_every_existing_endpoint_test_and_its_id():
    """Test IDs are keyed by the switch a test turns at: adding a scalable unit adds tests and
    leaves those of the leaves already built (and their result files) as they were."""
    text = (BLUEPRINTS / "ib-3tier.yaml").read_text()
    smaller = text.replace("{name: gpu-d, model: hgx-h100, count: 63,", "{name: gpu-d, model: hgx-h100, count: 31,", 1)
    assert smaller != text

    def endpoint_tests(src: str) -> dict[str, tuple]:
        c = compile_text(src)
        assert c.exit_code == 0, [f.message for f in c.findings]
        artifacts, _ = render(c, ["acceptance"])
        rows = csv.DictReader(artifacts["acceptance/ib/perftest.tsv"].decode().splitlines(), delimiter="\t")
        keep = ("server", "server_dev", "server_port", "client", "client_dev", "client_port", "cables", "labels")
        return {r["test"]: tuple(r[k] for k in keep) for r in rows if r["stage"] == "endpoint"}

    before, after = endpoint_tests(smaller), endpoint_tests(text)
    assert len(after) > len(before) > 0
    assert {k: after.get(k) for k in before} == before


def test_roce_perftests_run_in_the_lossless_class(tmp_path):
    """RoCE perftests carry the lossless class's DSCP as perftest's --tclass byte (DSCP << 2), so
    the switches' PFC/ECN queue is what the tests load."""
    c = compile_file(str(BLUEPRINTS / "roce-rail-2tier.yaml"))
    spec = c.blueprint.scaleout[0]
    dscp = spec.ethernet.lossless.roce_dscp
    artifacts, _ = render(c, ["acceptance"])
    script = artifacts[f"acceptance/{spec.name}/perftest.sh"].decode()
    assert f'EXTRA=("--tclass={dscp << 2}" -x "${{GID_INDEX:-3}}")' in script
    (tmp_path / "p.sh").write_text(script)
    assert subprocess.run(["bash", "-n", str(tmp_path / "p.sh")], capture_output=True).returncode == 0
    # InfiniBand has no such class.
    ib = render(compile_file(str(BLUEPRINTS / "small-ib.yaml")), ["acceptance"])[0]["acceptance/ib/perftest.sh"].decode()
    assert "--tclass" not in ib
