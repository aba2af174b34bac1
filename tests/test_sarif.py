"""SARIF against the official OASIS 2.1.0 schema, and what code scanning relies on beyond it:
fingerprints that survive line moves, rule help from the catalogue, repository-relative URIs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT

from supernodeiac.cli import main
from supernodeiac.findings.rules import BY_ID

SCHEMA_FILE = Path(__file__).parent / "data" / "sarif" / "sarif-schema-2.1.0.json"

# A buildable blueprint with an error (a pinned DAC that cannot reach), a warning (no management
# network) and infos.
_SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
BAD = _SMALL[: _SMALL.index("management:")].replace(
    "    rail_optimized: true\n", "    rail_optimized: true\n    media: {pin: dac}\n"
)


@pytest.fixture(scope="module")
def official() -> jsonschema.Draft4Validator:
    data = SCHEMA_FILE.read_bytes()
    # The committed file is the complete, unmodified OASIS schema (see tests/data/sarif/README.md).
    assert hashlib.sha256(data).hexdigest() == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    schema = json.loads(data)
    assert schema["id"].endswith("/sarif-2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json".replace("sarif-2.1.0", "v2.1.0"))
    assert len(schema["definitions"]) == 52 and {"run", "result", "reportingDescriptor", "artifactLocation"} <= set(
        schema["definitions"]
    )
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def _sarif(*args: str) -> dict:
    result = CliRunner().invoke(main, ["validate", "--format", "sarif", *args])
    assert result.exit_code in (0, 1, 2), result.output
    return json.loads(result.output)


@pytest.fixture()
def in_repo(tmp_path, monkeypatch) -> Path:
    """A repository (a folder with .git) with the bad blueprint under blueprints/, as the cwd."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "blueprints").mkdir()
    (tmp_path / "blueprints" / "bad.yaml").write_text(BAD)
    monkeypatch.chdir(tmp_path / "blueprints")  # run from a subfolder: URIs are still repository-relative
    return tmp_path


def test_sarif_validates_against_the_official_schema(official, in_repo):
    log = _sarif("bad.yaml", str(in_repo / "missing.yaml"))
    errors = sorted(official.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert {r["level"] for r in log["runs"][0]["results"]} >= {"error", "warning", "note"}


def test_every_shipped_blueprint_gives_schema_valid_sarif(official):
    log = _sarif(*map(str, sorted(BLUEPRINTS.glob("*.yaml"))))
    assert not list(official.iter_errors(log))
    assert log["runs"][0]["results"]  # infos at least: something was validated


def test_uris_are_relative_to_the_repository_root(in_repo):
    run = _sarif("bad.yaml")["runs"][0]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == in_repo.resolve().as_uri() + "/"
    artifacts = {
        json.dumps(loc["physicalLocation"]["artifactLocation"])
        for r in run["results"]
        for loc in r["locations"]
        if "physicalLocation" in loc
    }
    assert artifacts == {json.dumps({"uri": "blueprints/bad.yaml", "uriBaseId": "SRCROOT"})}


def test_rules_carry_descriptions_and_help(in_repo, tmp_path):
    (in_repo / ".snc.toml").write_text('docs_url = "https://docs.example.org/snc/"\n')
    run = _sarif("bad.yaml")["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({r["ruleId"] for r in run["results"]})
    for r in rules:
        entry = BY_ID[r["id"]]
        assert r["shortDescription"]["text"] == entry.short
        assert r["fullDescription"]["text"] == entry.full
        assert f"docs/rules.md#{r['id']}" in r["help"]["text"] and r["help"]["markdown"]
        assert r["helpUri"] == f"https://docs.example.org/snc/rules.md#{r['id']}"
    assert "reach" in {r["id"] for r in rules}


def test_help_uri_is_left_out_without_a_docs_url(in_repo):
    rules = _sarif("bad.yaml")["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all("helpUri" not in r and r["help"]["text"] for r in rules)


def test_fingerprints_survive_lines_added_above(in_repo):
    path = in_repo / "blueprints" / "bad.yaml"
    before = _sarif("bad.yaml")["runs"][0]["results"]
    path.write_text("# a comment\n# and another\n" + BAD)
    after = _sarif("bad.yaml")["runs"][0]["results"]
    assert len(before) == len(after)
    moved = 0
    for a, b in zip(before, after, strict=True):
        assert a["partialFingerprints"] == b["partialFingerprints"]
        ra = a["locations"][0]["physicalLocation"]["region"]["startLine"]
        rb = b["locations"][0]["physicalLocation"]["region"]["startLine"]
        moved += rb == ra + 2
    assert moved == len(before)
    # and they tell the findings apart
    prints = [r["partialFingerprints"]["sncFinding/v1"] for r in before]
    assert len(set(prints)) == len(prints)


def test_standard_input_has_a_logical_location_only():
    result = CliRunner().invoke(main, ["validate", "--format", "sarif", "-"], input=BAD)
    log = json.loads(result.output)
    results = log["runs"][0]["results"]
    assert results and all("physicalLocation" not in loc for r in results for loc in r.get("locations", []))
    assert any(loc["logicalLocations"] for r in results for loc in r.get("locations", []))


def test_quiet_drops_info_in_every_format(in_repo):
    runner = CliRunner()
    for fmt, infos in (
        ("sarif", lambda out: [r for r in json.loads(out)["runs"][0]["results"] if r["level"] == "note"]),
        ("json", lambda out: [f for c in json.loads(out) for f in c["findings"] if f["severity"] == "info"]),
        ("human", lambda out: [line for line in out.splitlines() if ": info[" in line]),
    ):
        loud = runner.invoke(main, ["validate", "--format", fmt, "bad.yaml"]).output
        quiet = runner.invoke(main, ["validate", "--format", fmt, "-q", "bad.yaml"]).output
        assert infos(loud) and not infos(quiet), fmt
        assert "reach" in quiet, fmt


def test_repository_root_is_this_checkout():
    from supernodeiac.findings.sarif import repository_root

    assert repository_root(ROOT / "supernodeiac") == ROOT
