"""Impossible perftest figures in `snc check-results`: a bandwidth that is not a finite number a
link can carry is unreadable (a failure naming it), never a pass. NCCL figures (inf, NaN, 1e999,
negative, above the design) are tests/test_hostile_inputs.py's."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS
from test_acceptance import BW_OUTPUT, _write_results

from supernodeiac.cli import main
from supernodeiac.pipeline import compile_file, render


@pytest.fixture(scope="module")
def acceptance() -> dict[str, bytes]:
    artifacts, _ = render(compile_file(str(BLUEPRINTS / "small-ib.yaml")), ["acceptance"])
    return dict(artifacts)


@pytest.mark.parametrize(
    ("figure", "words"),
    [
        ("9" * 5000 + ".00", "an impossible figure: inf Gb/s"),  # 5,000 digits: float() gives inf
        ("inf", "no ib_write_bw result row"),
        ("nan", "no ib_write_bw result row"),
        ("1e999", "no ib_write_bw result row"),
        ("-5.00", "no ib_write_bw result row"),
        ("4000.00", "above the line rate"),  # ten times an NDR port
    ],
)
def test_an_impossible_perftest_bandwidth_is_unreadable(tmp_path, acceptance, figure, words):
    plan_dir, results, rows = _write_results(tmp_path, acceptance, 0.9, None)
    test = rows[0]["test"]
    (results / "perftest" / f"{test}.bw.txt").write_text(BW_OUTPUT.replace("{bw:.2f}", figure))
    r = CliRunner().invoke(main, ["check-results", "--format", "json", str(plan_dir), str(results)])
    assert r.exit_code == 1, r.output
    [failure] = json.loads(r.output)["failures"]
    assert failure["id"] == test and failure["status"] == "unreadable", failure
    assert words in failure["detail"], failure["detail"]
