"""File names are data too: a blueprint committed as `a<LF>::error file=x::forged<ESC>[31m.yaml`
(a pull request may add any name; CI runs `snc validate blueprints/*.yaml`) printed its line
break and escape raw in the human findings, the summary and the progress lines, so a line of the
log read as a GitHub workflow command (a forged annotation) and the terminal was recoloured. Each
is shown escaped now, one line per finding; JSON keeps the name as it is, SARIF percent-encodes it
(tests/test_hostile_inputs.py)."""

from __future__ import annotations

import json
import os

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
    # A name that is not UTF-8: its bytes (a lone 0x9b is CSI on an 8-bit terminal) shown as bytes.
    assert str(Location(os.fsdecode(b"bad\x9b\xff.yaml"), 3, 1)) == "bad\\x9b\\xff.yaml:3:1"
    reporter = _Reporter(NAME, Verbosity.VERBOSE)
    assert reporter.status().startswith(f"{SHOWN}: starting (")


@pytest.mark.parametrize("raw", [b"bad\xff name%.yaml", NAME.encode()], ids=["not-utf8", "control"])
def test_sarif_of_a_hostile_file_name_is_schema_valid(tmp_path, monkeypatch, raw):
    """A file name that is not UTF-8 raised UnicodeEncodeError (a raw traceback) in SARIF; it is
    percent-encoded now, and the log (as code scanning uploads it) is valid against the official
    OASIS 2.1.0 schema, its URI naming the very file."""
    from urllib.parse import unquote_to_bytes

    import jsonschema
    from conftest import ROOT

    (tmp_path / ".git").mkdir()
    name = os.fsdecode(raw)
    (tmp_path / name).write_text((BLUEPRINTS / "small-ib.yaml").read_text().replace("count: 16", "count: -1", 1))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["validate", "--format", "sarif", name])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    log = json.loads(r.stdout)
    schema = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_bytes())
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    assert not [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(log)]
    [result] = log["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert unquote_to_bytes(uri) == raw and all(0x20 < ord(c) < 0x7F for c in uri), uri
