"""Workload sizing (shared/domain.md): bytes per step over the communication budget, against the
design's scale-up and scale-out bandwidth; the placement section of snc explain."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, compile_text

from supernodeiac.cli import main
from supernodeiac.facts.placement import _spill, placement_report
from supernodeiac.model.workloads import Workload


def test_the_domain_notes_examples():
    # 7B MoE, BF16: ~28 GB synchronised per step; 2 s step, 20 % budget (400 ms) -> ~70 GB/s.
    moe = Workload.model_validate({"name": "moe", "parameters": "7B", "step_time_s": 2, "comm_budget": 0.2})
    assert moe.step_bytes("dp") == pytest.approx(28e9)
    assert moe.budget_s == pytest.approx(0.4)
    assert moe.needed_gbytes_s("dp") == pytest.approx(70)
    # A 175B dense model: ~140 GB per step -> ~350 GB/s in the same budget.
    dense = Workload.model_validate({"name": "dense", "bytes_per_step": {"dp": "140 GB"}, "step_time_s": 2})
    assert dense.needed_gbytes_s("dp") == pytest.approx(350)
    assert Workload.model_validate({"name": "q", "bytes_per_step": {"tp": 2.8e10}, "step_time_s": 1}).needed_gbytes_s("tp") == (
        pytest.approx(140)
    )


def _with(workloads: str, blueprint: str = "small-ib"):
    return compile_text((BLUEPRINTS / f"{blueprint}.yaml").read_text() + "workloads:\n" + workloads)


def test_a_design_whose_scale_out_is_too_slow_is_flagged_with_the_numbers():
    c = _with("  - {name: moe-7b, parameters: 7e9, step_time_s: 2, comm_budget: 0.2}\n")
    (f,) = [x for x in c.findings if x.rule == "workload-bandwidth"]
    assert c.exit_code == 1 and f.severity.value == "error"
    # One 400 Gb/s NIC per H100: 50 GB/s per direction, below the 70 GB/s the example needs.
    assert "needs 70 GB/s" in f.message and "gives 50 GB/s" in f.message and "28 GB per step" in f.message
    assert f.location is not None and f.location.line > 50


def test_a_workload_that_fits_is_an_info_finding():
    c = _with("  - {name: moe, parameters: 7e9, step_time_s: 2, comm_budget: 0.5, bytes_per_step: {tp: 140 GB}}\n")
    (f,) = [x for x in c.findings if x.rule == "workload-bandwidth"]
    assert c.exit_code == 0 and f.severity.value == "info"
    assert "TP 140 of 450 GB/s" in f.message and "DP 28 of 50 GB/s" in f.message


def test_ep_across_nodes_over_infiniband_is_a_warning_with_the_numbers():
    # 64-way EP over eight 8-GPU HGX H100 nodes (NVLink domain = one node) on small-ib's NDR fabric:
    # 8 EP ranks per domain, so 56 of each rank's 63 peers are remote: 6.3 GB x 56/63 = 5.6 GB in
    # 0.5 s = 11.2 GB/s, plus DP 1 GB / 0.5 s = 2 GB/s, against one 400G NIC per GPU = 50 GB/s.
    c = _with(
        "  - {name: moe, parallelism: {tp: 1, ep: 64, dp: 2}, bytes_per_step: {ep: 6.3 GB, dp: 1 GB},"
        " step_time_s: 1, comm_budget: 0.5}\n"
    )
    (f,) = [x for x in c.findings if x.rule == "workload-bandwidth"]
    assert c.exit_code == 0 and f.severity.value == "warning", f.message
    assert "TP x EP = 64 spans 8 scale-up domains of 8 accelerators" in f.message
    assert "EP sends 88.9 % of its bytes to other domains (11.2 GB/s)" in f.message
    assert "needs 13.2 GB/s of the 50 GB/s" in f.message
    assert f.location is not None and f.location.line > 50
    (w,) = placement_report(c.blueprint, c.fabric)["workloads"]
    assert w["spill"]["ep_per_domain"] == 8 and w["spill"]["domains_spanned"] == 8 and w["spill"]["carried"]


def test_spilled_traffic_the_scale_out_cannot_carry_is_an_error():
    # The same group with 10x the bytes: 112 GB/s over 50 GB/s NICs.
    c = _with("  - {name: moe, parallelism: {ep: 64}, bytes_per_step: {ep: 63 GB}, step_time_s: 1, comm_budget: 0.5}\n")
    (f,) = [x for x in c.findings if x.rule == "workload-bandwidth"]
    assert c.exit_code == 1 and f.severity.value == "error"
    assert "needs 112 GB/s of the 50 GB/s" in f.message
    # 256-way EP spans 32 domains; small-ib's fabric joins 16.
    c = _with("  - {name: big, parallelism: {ep: 256}, bytes_per_step: {ep: 1 GB}, step_time_s: 1}\n")
    (f,) = [x for x in c.findings if x.rule == "workload-bandwidth"]
    assert f.severity.value == "error" and "more than any scale-out fabric joins (16 domains)" in f.message
    # A TP group wider than the domain sends all of TP's bytes out.
    c = _with("  - {name: tp, parallelism: {tp: 16}, bytes_per_step: {tp: 10 GB}, step_time_s: 1}\n")
    (w,) = placement_report(c.blueprint, c.fabric)["workloads"]
    assert w["spill"]["dimensions"] == [{"dimension": "tp", "share": 1, "needed_gbytes_s": 50}]
    ok = _with("  - {name: big, parallelism: {tp: 8, ep: 9}, bytes_per_step: {ep: 1 GB}, step_time_s: 1}\n", "nvl72-pod")
    assert not [f for f in ok.findings if f.severity.value in ("error", "warning") and f.rule == "workload-bandwidth"]


def test_spilling_with_no_scale_out_network_is_not_carried():
    # Hosts with no cabled scale-out NIC (0 GB/s per accelerator) and no fabric joining their domains.
    w = Workload.model_validate({"name": "m", "parallelism": {"ep": 16}, "bytes_per_step": {"ep": "1 GB"}, "step_time_s": 1})
    s = _spill(w, 8, 0.0, [])
    assert (s["domains_spanned"], s["available_gbytes_s"], s["carried"], s["enough"]) == (2, 0, False, False)


def test_placement_report_numbers():
    c = _with("  - {name: w, parallelism: {tp: 8, dp: 32}, bytes_per_step: {dp: 1 GB}, step_time_s: 1}\n", "nvl72-pod")
    p = placement_report(c.blueprint, c.fabric)
    (d,) = p["domains"]
    # NVL72: 72 GPUs, 18 NVLink 5 links x 400 Gb/s = 900 GB/s per direction; one 400G NIC per GPU = 50 GB/s.
    assert (d["accelerators_per_domain"], d["hosts_per_domain"], d["instances"]) == (72, 18, 8)
    assert d["scaleup_gbytes_per_accelerator"] == 900 and d["scaleout_gbytes_per_accelerator"] == 50
    assert d["scaleup_to_scaleout"] == 18
    (w,) = p["workloads"]
    assert w["pp_x_dp_domains"] == 32 and "more domains than the fabric joins" in w["pp_dp_reach"]["ib"]


def test_explain_has_the_placement_section(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(
        (BLUEPRINTS / "small-ib.yaml").read_text()
        + "workloads:\n  - {name: moe-7b, parameters: 7e9, step_time_s: 2, comm_budget: 0.5}\n"
    )
    text = CliRunner().invoke(main, ["explain", str(path)]).output
    assert "placement (TP/EP inside a scale-up domain" in text and "largest TP x EP 8" in text
    assert "DP (scale-out): 28.0 GB per step -> needs 28 GB/s, has 50 GB/s [ok]" in text
    doc = json.loads(CliRunner().invoke(main, ["explain", "--format", "json", str(path)]).output)
    assert doc["report"]["placement"]["workloads"][0]["dimensions"][0]["needed_gbytes_s"] == 28


def test_quantities_and_a_workload_without_bytes():
    c = _with("  - {name: w, step_time_s: 1}\n")
    assert c.exit_code == 2 and "bytes_per_step" in c.findings[0].message
    c = _with("  - {name: w, parameters: seven, step_time_s: 1}\n")
    assert c.exit_code == 2 and "quantity" in c.findings[0].message
