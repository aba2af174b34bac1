"""GitHub workflow-command annotations: escaped as the runner unescapes them, errors and warnings only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac.cli import main
from supernodeiac.findings import Finding, Location, Severity, plain_text
from supernodeiac.findings.formats import github, parse_workflow_command

# A buildable blueprint with an error (a pinned DAC that cannot reach), a warning (no management
# network) and infos.
_SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
BAD = _SMALL[: _SMALL.index("management:")].replace(
    "    rail_optimized: true\n", "    rail_optimized: true\n    media: {pin: dac}\n"
)


def test_a_file_named_with_comma_and_colon_parses_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("a,b:c.yaml").write_text(BAD)
    result = CliRunner().invoke(main, ["validate", "--format", "github", "a,b:c.yaml"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ")) for line in lines)
    for line in lines:
        command, props, message = parse_workflow_command(line)
        assert props["file"] == "a,b:c.yaml"
        assert int(props["line"]) >= 1 and int(props["col"]) >= 1
        assert command in ("error", "warning") and message
    assert any(parse_workflow_command(line)[1]["title"] == "reach" for line in lines)


def test_info_findings_spend_no_annotation(tmp_path):
    path = tmp_path / "bp.yaml"
    path.write_text(BAD)
    human = CliRunner().invoke(main, ["validate", str(path)]).output
    annotations = CliRunner().invoke(main, ["validate", "--format", "github", str(path)]).output.splitlines()
    assert "info[" in human
    # One annotation per (severity, rule, line): repeated findings at one line are grouped.
    heads = {re.sub(r"(:\d+):\d+: ((?:error|warning)\[[\w-]+\]): .*", r"\1 \2", line) for line in human.splitlines()}
    assert len(annotations) == sum(1 for line in heads if " error[" in line or " warning[" in line)
    assert not any(line.startswith("::notice") for line in annotations)


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("a,b:c.yaml", "plain"),
        ("100%.yaml", "50% of 2,000: done\nnext line\r\nand more"),
        ("x::y.yaml", "ends with %0A literally"),
        ("dir/sub,dir/f.yaml", "::error file=evil::injected"),
    ],
)
def test_escaping_round_trips(file, message):
    f = Finding("reach", Severity.ERROR, message, (), "a hint: with, punctuation", Location(file, 3, 5))
    line = github(f)
    assert line is not None and "\n" not in line and "\r" not in line
    command, props, text = parse_workflow_command(line)
    assert command == "error"
    assert props == {"file": file, "line": "3", "col": "5", "title": "reach"}
    # A finding is one line: line breaks in its message are escaped when it is made (plain_text),
    # so the annotation carries them as text, never as a second command.
    assert text == f"{plain_text(message)} (hint: a hint: with, punctuation)"


def test_info_is_not_an_annotation_and_unplaced_findings_have_no_file():
    assert github(Finding("x", Severity.INFO, "m")) is None
    _, props, _ = parse_workflow_command(github(Finding("x", Severity.WARNING, "m", location=Location("<stdin>", 2, 1))) or "")
    assert props == {"title": "x"}
    _, props, _ = parse_workflow_command(github(Finding("io", Severity.ERROR, "m", location=Location("f.yaml", 0, 0))) or "")
    assert props == {"file": "f.yaml", "title": "io"}
