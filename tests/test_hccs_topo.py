"""The Ascend scale-up link check (issue 21): scaleup.sh runs CANN's pyACL topology query on every
Atlas host of a switchless HCCS mesh (tests/data/ascend-hccs-mesh.yaml) and ``snc check-results``
reads it: every ordered NPU pair must be joined by HCCS (aclrtGetDevicesTopo's bit 0x01, or 0x40
through an HCCS switch); a pair on PCIe or SMP is a board link down, named by its NPUs.

The hosts are faked with a module ``acl`` that implements the calls the program makes, as CANN's
API reference documents them (``acl.rt.get_device_count() -> (count, ret)``,
``acl.rt.get_devices_topo(i, j) -> (value, ret)``), so the script's own program runs unchanged.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import compile_text

from supernodeiac.pipeline import render
from supernodeiac.verify.check_results import check
from supernodeiac.verify.check_scaleup import grade_acl_topo

BLUEPRINT = Path(__file__).parent / "data" / "ascend-hccs-mesh.yaml"

# A stand-in for CANN's pyACL: 8 NPUs fully meshed over HCCS; FAKE_ACL_DOWN="2-5" puts that
# pair on the PCIe host bridge (PHB, 0x08) both ways, FAKE_ACL_COUNT changes the device count.
FAKE_ACL = """
import os
_down = {tuple(sorted(map(int, p.split("-")))) for p in os.environ.get("FAKE_ACL_DOWN", "").split(",") if p}
class rt:
    @staticmethod
    def get_device_count():
        return int(os.environ.get("FAKE_ACL_COUNT", "8")), 0
    @staticmethod
    def get_devices_topo(i, j):
        return (0x08 if tuple(sorted((i, j))) in _down else 0x01), 0
def init():
    return 0
def finalize():
    return 0
"""


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    c = compile_text(BLUEPRINT.read_text())
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["acceptance"])
    root = tmp_path_factory.mktemp("plan")
    for path, data in files.items():
        if path.startswith("acceptance/"):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
    return root / "acceptance"


def _rows(plan: Path) -> list[dict[str, str]]:
    with (plan / "scaleup.tsv").open() as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def _run(plan: Path, tmp: Path, **env: str) -> Path:
    """scaleup.sh after, every host faked by bash running the remote line with the fake pyACL."""
    fake = tmp / "fake"
    (fake / "bin").mkdir(parents=True)
    (fake / "acl.py").write_text(FAKE_ACL)
    ssh = fake / "bin" / "fake-ssh"
    ssh.write_text('#!/bin/bash\nhost=$1; shift\nexec bash -c "$*"\n')
    ssh.chmod(0o755)
    results = tmp / "results"
    full = {**os.environ, "SSH": str(ssh), "PYTHONPATH": str(fake), **env}
    run = subprocess.run(["bash", str(plan / "scaleup.sh"), str(results), "after"], env=full, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return results


def test_atlas_hosts_get_the_acl_topology_check(plan):
    rows = _rows(plan)
    c = compile_text(BLUEPRINT.read_text())
    atlas = {
        d.name for d in c.fabric.devices if (m := c.fabric.models[d.model]).accelerators and m.accelerators.model == "Ascend910B"
    }
    assert atlas and {r["host"] for r in rows if r["tool"] == "acl-topo"} == atlas
    assert all(r["accelerators"] == "8" and r["links"] == "7" for r in rows if r["tool"] == "acl-topo")
    script = (plan / "scaleup.sh").read_text()
    assert "acl.rt.get_devices_topo(i, j)" in script
    if shutil.which("shellcheck"):
        r = subprocess.run(["shellcheck", str(plan / "scaleup.sh")], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout
    checklist = (plan / "checklist.md").read_text()
    assert "aclrtGetDevicesTopo" in checklist and "not read by `snc check-results`" not in checklist.split("acl-topo")[1][:400]


def test_healthy_meshes_pass_and_a_pair_off_hccs_fails_by_name(plan, tmp_path):
    rows = [r for r in _rows(plan) if r["tool"] == "acl-topo"]
    results = _run(plan, tmp_path / "ok")
    record = (results / "scaleup" / f"{rows[0]['check']}.after.txt").read_text().splitlines()
    assert record[:2] == ["== topo", "count 8 0"] and len(record) == 2 + 8 * 7
    outcomes = {o.id: o for o in check(plan, results).outcomes if o.kind == "scaleup"}
    assert {outcomes[r["check"]].status for r in rows} == {"pass"}
    assert "56 ordered pairs on HCCS" in outcomes[rows[0]["check"]].detail

    bad = _run(plan, tmp_path / "bad", FAKE_ACL_DOWN="2-5")
    outcomes = {o.id: o for o in check(plan, bad).outcomes if o.kind == "scaleup"}
    one = outcomes[rows[0]["check"]]
    assert one.status == "fail" and "NPU 2 -> 5: PHB, not HCCS" in one.detail and "NPU 5 -> 2" in one.detail
    assert "NPU 0 -> 1" not in one.detail


def _row(n: int = 8) -> dict[str, str]:
    return {"tool": "acl-topo", "accelerators": str(n), "links": str(n - 1)}


def test_the_reader_tells_a_missing_pyacl_a_short_list_and_a_failed_call_apart():
    missing = (
        "== topo\nTraceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'acl'\n"
    )
    v = grade_acl_topo(_row(), missing)
    assert v.status == "unreadable" and "ModuleNotFoundError" in v.detail and "set_env.sh" in v.detail
    short = "== topo\ncount 4 0\n" + "".join(f"{i} {j} 0 1\n" for i in range(4) for j in range(4) if i != j)
    v = grade_acl_topo(_row(), short)
    assert v.status == "fail" and "4 NPUs listed, the host has 8" in v.detail
    gaps = "== topo\ncount 2 0\n0 1 0 1\n"
    v = grade_acl_topo(_row(2), gaps)
    assert v.status == "fail" and "NPU 1 -> 0: not reported" in v.detail
    failed = "== topo\ncount 2 0\n0 1 0 64\n1 0 507000 0\n"
    v = grade_acl_topo(_row(2), failed)
    assert v.status == "fail" and "returned 507000" in v.detail and "NPU 0 -> 1" not in v.detail  # 0x40: HCCS switch
    assert grade_acl_topo(_row(), "nothing here").status == "unreadable"
