"""[tool.snc] / .snc.toml: defaults, per-rule severity, ignores with a reason, located errors."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac import config as snc_config
from supernodeiac.cli import main

_SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
NO_MGMT = _SMALL[: _SMALL.index("management:")]  # clean but for one 'management' warning


@pytest.fixture()
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "bp.yaml").write_text(NO_MGMT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _validate(*args: str):
    return CliRunner().invoke(main, ["validate", *args])


def _rules(output: str) -> list[tuple[str, str]]:
    [report] = json.loads(output)
    return [(f["rule"], f["severity"]) for f in report["findings"]]


def test_without_configuration_the_warning_stays(repo):
    result = _validate("--format", "json", "bp.yaml")
    assert result.exit_code == 0 and ("management", "warning") in _rules(result.output)


def test_pyproject_severity_turns_a_warning_into_an_error(repo):
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.snc.severity]\nmanagement = "error"\n')
    result = _validate("--format", "json", "bp.yaml")
    assert result.exit_code == 1
    assert ("management", "error") in _rules(result.output)


def test_ignore_needs_a_reason_and_says_it_with_v(repo):
    (repo / ".snc.toml").write_text('[ignore]\nmanagement = "the lab racks have no BMC network yet (NET-12)"\n')
    result = _validate("--format", "json", "bp.yaml")
    assert result.exit_code == 0 and "management" not in {r for r, _ in _rules(result.output)}
    verbose = CliRunner().invoke(main, ["validate", "-v", "bp.yaml"])
    assert "ignored management (.snc.toml:2:1: the lab racks have no BMC network yet (NET-12))" in verbose.output


def test_ignore_can_be_limited_to_files(repo):
    (repo / "lab").mkdir()
    (repo / "lab" / "bp.yaml").write_text(NO_MGMT)
    (repo / ".snc.toml").write_text('[ignore]\nmanagement = {reason = "lab only", files = ["lab/*.yaml"]}\n')
    both = CliRunner().invoke(main, ["validate", "--format", "json", "bp.yaml", "lab/bp.yaml"])
    by_file = {c["file"]: [f["rule"] for f in c["findings"]] for c in json.loads(both.output)}
    assert "management" in by_file["bp.yaml"] and "management" not in by_file["lab/bp.yaml"]


def test_default_format_comes_from_the_configuration(repo):
    (repo / ".snc.toml").write_text('format = "github"\n')
    result = _validate("bp.yaml")
    assert result.output.startswith("::warning file=bp.yaml,")
    assert _validate("--format", "human", "bp.yaml").output.startswith("bp.yaml:")


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ('[ignore]\nmanagement = ""\n', ":2:1:", "needs a reason"),
        ("[severity]\nmanagment = 'error'\n", ":2:1:", "did you mean 'management' or"),
        ("[severity]\nreach = 'fatal'\n", ":2:1:", "not error, warning or info"),
        ("[severity]\nschema = 'warning'\n", ":2:1:", "cannot be changed"),
        ('formt = "json"\n', ":1:1:", "did you mean 'format'?"),
        ('format = "xml"\n', ":1:1:", "not one of"),
        ("[ignore\n", ":1:", "not valid TOML"),
        ('\n\n[ignore.reach]\nreasn = "x"\n', ":3:1:", "unknown key 'reasn'"),
        ("# " + "x" * snc_config.MAX_CONFIG_BYTES + "\n", ":1:1:", "larger than 1,048,576 bytes"),
    ],
)
def test_a_bad_configuration_is_a_located_error(repo, text, where, words):
    (repo / ".snc.toml").write_text(text)
    result = _validate("bp.yaml")
    assert result.exit_code == 2
    assert f".snc.toml{where}" in result.output and "error[config]" in result.output and words in result.output


def test_discovery_stops_at_the_repository_root(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.snc]\nformat = 'json'\n")
    inner = tmp_path / "repo"
    (inner / ".git").mkdir(parents=True)
    (inner / "sub").mkdir()
    assert snc_config.find(inner / "sub") is None
    (inner / "pyproject.toml").write_text("[project]\nname = 'no-snc-here'\n")
    assert snc_config.find(inner / "sub") is None  # a pyproject without [tool.snc] is passed over
    (inner / ".snc.toml").write_text("")
    assert snc_config.find(inner / "sub") == (inner / ".snc.toml").resolve()


def test_explicit_config_option(repo, tmp_path):
    other = tmp_path / "elsewhere.toml"
    other.write_text("[severity]\nmanagement = 'info'\n")
    result = _validate("--format", "json", "--config", str(other), "bp.yaml")
    assert ("management", "info") in _rules(result.output)


@pytest.mark.parametrize("line", ["[" + " " * 100_000, "[ " * 50_000, "[" * 100_000, "[[" + " " * 100_000 + "x"])
def test_a_long_bracket_line_in_a_multiline_string_is_read_in_linear_time(repo, line):
    """A line of '[' and spaces inside a multi-line string (any line may be there) cost the table
    header regex cubic time: 2,000 spaces took 52 s. Now the error below it is found at once."""
    (repo / "pyproject.toml").write_text(f'[project]\ndescription = """\n{line}\n"""\n\n[tool.snc]\nformt = "json"\n')
    start = time.monotonic()
    result = _validate("bp.yaml")
    assert time.monotonic() - start < 5
    assert result.exit_code == 2
    assert "pyproject.toml:7:1:" in result.output and "did you mean 'format'?" in result.output
