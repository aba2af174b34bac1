"""File names are data too: a blueprint committed as `a<LF>::error file=x::forged<ESC>[31m.yaml`
(a pull request may add any name; CI runs `snc validate blueprints/*.yaml`) printed its line
break and escape raw in the human findings, the summary and the progress lines, so a line of the
log read as a GitHub workflow command (a forged annotation) and the terminal was recoloured. Each
is shown escaped now, one line per finding; JSON keeps the name as it is, SARIF percent-encodes it
(tests/test_hostile_inputs.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac.cli import _Reporter, main
from supernodeiac.findings import Location
from supernodeiac.findings.formats import Verbosity

NAME = "a\n::error file=x::forged\x1b[31m\u2028.yaml"
SHOWN = "a\\x0a::error file=x::forged\\x1b[31m\\u2028.yaml"


@pytest.fixture
def hostile_name(tmp_path, monkeypatch) -> str:
    (tmp_path / ".git").mkdir()
    text = (BLUEPRINTS / "small-ib.yaml").read_text().replace("count: 16", "count: -1", 1)
    (tmp_path / NAME).write_text(text)
    monkeypatch.chdir(tmp_path)
    return NAME


def _lines(output: str) -> list[str]:
    return output.splitlines()


def test_human_findings_and_summary_show_the_name_escaped(hostile_name):
    r = CliRunner().invoke(main, ["validate", "-v", hostile_name])
    assert r.exit_code == 2, r.output
    assert f"{SHOWN}:29:5: error[schema]: nodes[0].count: input should be greater than 0 (got -1)" in _lines(r.output)
    assert f"{SHOWN}: 1 error(s), 0 warning(s)" in _lines(r.output)
    assert not [line for line in _lines(r.output) if line.startswith("::")]  # no line reads as a workflow command
    assert "\x1b" not in r.output and "\u2028" not in r.output


def test_github_annotations_carry_the_name_percent_escaped(hostile_name):
    r = CliRunner().invoke(main, ["validate", "--format", "github", hostile_name])
    assert r.exit_code == 2
    annotations = [line for line in _lines(r.output) if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith("::error file=a%0A%3A%3Aerror file=x%3A%3Aforged"), r.output


def test_json_keeps_the_name_whole(hostile_name):
    r = CliRunner().invoke(main, ["validate", "--format", "json", hostile_name])
    [report] = json.loads(r.stdout)
    assert report["file"] == NAME and report["findings"][0]["file"] == NAME


def test_locations_and_progress_lines_are_one_line():
    assert str(Location(NAME, 3, 1)) == f"{SHOWN}:3:1" and str(Location(NAME, 0, 0)) == SHOWN
    assert str(Location("bp.yaml", 3, 1)) == "bp.yaml:3:1"
    reporter = _Reporter(NAME, Verbosity.VERBOSE)
    assert reporter.status().startswith(f"{SHOWN}: starting (")
