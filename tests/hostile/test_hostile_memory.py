"""Large field files stay cheap: a 200 MB results file made `snc check-results` peak at 1.7 GB;
it is now refused unread (at most 4 MiB + 1 byte of any result is read), in a process whose peak
memory is that of a small run. Measured in a child process (its own peak RSS, `wait4`), with a
file of real bytes, not a sparse one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest
from conftest import BLUEPRINTS, ROOT
from helpers.peak_rss import run_measured
from test_acceptance import _write_results

from supernodeiac.pipeline import compile_file, render


def _peak(command: list[str]) -> tuple[int, str, int, float]:
    """(exit code, stdout, peak RSS in KB, wall seconds) of a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as out:
        measured = run_measured(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        out.seek(0)
        text = out.read().decode()
    return measured.exit_code, text, measured.peak_kb, measured.wall_s


@pytest.fixture(scope="module")
def acceptance() -> dict[str, bytes]:
    artifacts, _ = render(compile_file(str(BLUEPRINTS / "small-ib.yaml")), ["acceptance"])
    return dict(artifacts)


def test_a_200_mb_results_file_is_refused_in_bounded_memory(tmp_path, acceptance):
    plan_dir, results, rows = _write_results(tmp_path, acceptance, 0.9, None)
    big = results / "perftest" / f"{rows[0]['test']}.bw.txt"
    line = b" 65536      5000           400.00             360.00               0.686646\n"
    with big.open("wb") as fh:  # 200 MB of plausible perftest lines, on disk
        block = line * (1 << 20 // len(line) + 1)
        while fh.tell() < 200 << 20:
            fh.write(block)
    command = [sys.executable, "-m", "supernodeiac", "check-results", "--format", "json", str(plan_dir), str(results)]
    code, out, peak_kb, took = _peak(command)
    assert code == 1, out
    [failure] = json.loads(out)["failures"]
    assert failure["id"] == rows[0]["test"] and failure["status"] == "unreadable"
    assert "is larger than 4,194,304 bytes" in failure["detail"]
    print(f"check-results on a 200 MB result: peak {peak_kb // 1024} MB, {took:.1f} s")
    assert peak_kb < 300 * 1024, f"peak {peak_kb // 1024} MB"  # 1.7 GB before
    assert took < 60  # a guard, not a timing test (about 1 s here)
