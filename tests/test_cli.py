"""The CLI contract: output formats, exit codes, `snc render`'s atomic writes, `snc schema`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT, copy_of_shipped_render, read_tree

from supernodeiac import writer
from supernodeiac.cli import main
from supernodeiac.load.source import load_file
from supernodeiac.outputs import RENDERERS

SMALL = BLUEPRINTS / "small-ib.yaml"
SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))

# One error at a known place and one warning: a typo'd key is invalid (exit 2), so the
# findings here come from a buildable blueprint whose pinned multimode optics cannot reach the
# leaves 60 m down the row (exit 1).
FINDINGS_BP = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: t
site:
  rows:
    - {name: A, racks: 100}
nodes:
  - name: gpu
    model: hgx-h100
    count: 4
    placement: {row: A, per_rack: 4, first_u: 2}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    media: {pin: sr}
    endpoints:
      - group: gpu
    placement:
      leaf: {row: A, first_rack: 100, per_rack: 8, first_u: 2}
      spine: {row: A, first_rack: 100, per_rack: 4, first_u: 20}
"""


def _invoke(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


@pytest.fixture()
def findings_file(tmp_path: Path) -> Path:
    path = tmp_path / "bp.yaml"
    path.write_text(FINDINGS_BP)
    return path


def _json_findings(path: Path) -> list[dict]:
    [report] = json.loads(_invoke("validate", "--format", "json", str(path)).output)
    return report["findings"]


def test_json_format(findings_file):
    result = _invoke("validate", "--format", "json", str(findings_file))
    assert result.exit_code == 1
    [report] = json.loads(result.output)
    assert report["file"] == str(findings_file) and report["stage"] == "built" and report["exit_code"] == 1
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert errors and all(f["rule"] == "reach" for f in errors)
    # the pinned optics are what fails: the finding points at the pin (line 17, 'pin' at column 13)
    assert {(f["line"], f["col"]) for f in errors} == {(17, 13)}
    assert report["devices"] > 0 and report["links"] > 0


def test_human_format_is_compiler_style(findings_file):
    result = _invoke("validate", str(findings_file))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert any(line.startswith(f"{findings_file}:17:13: error[reach]: ") for line in lines)
    head = lines.index(next(line for line in lines if line.startswith(f"{findings_file}:17:13: error[reach]: ")))
    # The source line under a gutter with a caret at column 13, then the hint.
    assert lines[head + 2] == "  17 | " + findings_file.read_text().splitlines()[16]
    assert lines[head + 3].index("^") == len("  17 | ") + 12
    assert lines[head + 4].startswith("    hint: ")
    assert lines[-1].startswith(f"{findings_file}: ") and "error(s)" in lines[-1]


def test_quiet_hides_info(findings_file):
    loud = _invoke("validate", str(findings_file)).output
    quiet = _invoke("validate", "-q", str(findings_file)).output
    assert "info[" in loud and "info[" not in quiet
    assert "error[reach]" in quiet


def test_github_annotations(findings_file):
    result = _invoke("validate", "--format", "github", str(findings_file))
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("::error ")]
    assert errors
    assert errors[0].startswith(f"::error file={findings_file},line=17,col=13,title=reach::")
    # one line per finding: newlines inside a message are escaped
    assert all("\n" not in line for line in errors)


# The parts of SARIF 2.1.0 that code-scanning consumers rely on (from the OASIS schema).
SARIF_ESSENTIALS = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "format": "uri"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1},
                                    "version": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {"id": {"type": "string", "minLength": 1}},
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "ruleIndex", "level", "message", "locations"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": 0},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {
                                    "type": "object",
                                    "required": ["text"],
                                    "properties": {"text": {"type": "string", "minLength": 1}},
                                },
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation"],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "required": ["uri"],
                                                        "properties": {"uri": {"type": "string", "format": "uri-reference"}},
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine"],
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1},
                                                            "startColumn": {"type": "integer", "minimum": 1},
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def _sarif(*paths: Path) -> tuple[int, dict, str]:
    result = _invoke("validate", "--format", "sarif", *map(str, paths))
    return result.exit_code, json.loads(result.output), result.output


def test_sarif_shape_rules_and_locations(findings_file, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(FINDINGS_BP.replace("    count: 4\n", "    count: 4\n    cuont: 4\n"))
    code, log, _ = _sarif(findings_file, bad)
    assert code == 2  # the worst of the files
    jsonschema.validate(log, SARIF_ESSENTIALS, format_checker=jsonschema.FormatChecker())
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == sorted(set(rules))
    expected = [f for p in (findings_file, bad) for f in _json_findings(p)]
    assert len(run["results"]) == len(expected)
    assert {r["ruleId"] for r in run["results"]} == set(rules)
    for result, finding in zip(run["results"], expected, strict=True):
        assert rules[result["ruleIndex"]] == result["ruleId"] == finding["rule"]
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[finding["severity"]]
        assert result["message"]["text"].startswith(finding["message"])
        phys = result["locations"][0]["physicalLocation"]
        assert phys["region"] == {"startLine": finding["line"], "startColumn": finding["col"]}
        assert Path(phys["artifactLocation"]["uri"].removeprefix("file://")) == Path(finding["file"])
    typo = next(r for r in run["results"] if r["ruleId"] == "schema")
    assert "did you mean 'count'?" in typo["message"]["text"]
    assert typo["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "nodes[0].cuont"


def test_sarif_is_deterministic_and_relative_paths_stay_relative(monkeypatch):
    monkeypatch.chdir(BLUEPRINTS.parent)
    first = _sarif(Path("blueprints/small-ib.yaml"))[2]
    second = _sarif(Path("blueprints/small-ib.yaml"))[2]
    assert first == second
    log = json.loads(first)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"] for loc in r["locations"]}
    assert uris == {"blueprints/small-ib.yaml"}


def test_sarif_without_a_line_has_no_region(tmp_path):
    code, log, _ = _sarif(tmp_path / "missing.yaml")
    assert code == 2
    jsonschema.validate(log, SARIF_ESSENTIALS)
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "io" and "region" not in result["locations"][0]["physicalLocation"]


# -- render ----------------------------------------------------------------------------------------


def test_render_writes_and_says_how_many(tmp_path):
    out = tmp_path / "o"
    result = _invoke("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 0, result.output
    tree = read_tree(out)
    manifest = json.loads(tree.pop("MANIFEST.json"))
    assert f"wrote {len(tree)} files to {out}/" in result.output.splitlines()
    assert sorted(e["path"] for e in manifest["files"]) == sorted(tree)
    assert all(e["bytes"] == len(tree[e["path"]]) for e in manifest["files"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]  # no staging folder left


def test_render_replaces_a_previous_render_atomically(tmp_path):
    out = tmp_path / "o"
    writer.write({"cabling/cables.csv": b"old", "stale.csv": b"from an older render"}, out, "small-ib")
    assert _invoke("render", str(SMALL), "-o", str(out)).exit_code == 0
    assert "stale.csv" not in read_tree(out) and read_tree(out)["cabling/cables.csv"] != b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_render_refuses_a_folder_it_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = _invoke("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 1
    assert "not written by snc" in result.output
    assert read_tree(out) == {"notes.txt": b"keep me"}


def _first_render(tmp_path: Path) -> tuple[Path, dict[str, bytes], list[str]]:
    """A folder as `snc render` left it (the shared render of small-ib, copied: the same bytes and
    modes), its files and the listing beside it."""
    out = copy_of_shipped_render("small-ib", tmp_path / "o")
    return out, read_tree(out), sorted(p.name for p in tmp_path.iterdir())


def test_a_failing_renderer_writes_nothing(tmp_path, monkeypatch):
    out, before, listing = _first_render(tmp_path)

    def boom(ctx):
        raise RuntimeError("renderer crashed")

    monkeypatch.setitem(RENDERERS._entries, "zz-boom", boom)
    result = _invoke("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 3
    assert "internal error while rendering" in result.output and "renderer crashed" in result.output
    assert read_tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


@pytest.mark.parametrize("bad", ["../escape.txt", "/tmp/abs.txt", "a/../../b.txt", "", "MANIFEST.json", "a\\b.txt"])
def test_an_escaping_artifact_path_is_refused(bad, tmp_path, monkeypatch):
    out, before, listing = _first_render(tmp_path)
    monkeypatch.setitem(RENDERERS._entries, "zz-escape", lambda ctx: {"ok.txt": b"x", bad: b"evil"})
    result = _invoke("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 1
    assert "cannot write" in result.output and "unchanged" in result.output
    assert read_tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing
    assert not (tmp_path / "escape.txt").exists()


@pytest.mark.parametrize("exchange", [True, False])
def test_a_failure_during_the_swap_keeps_the_old_render(tmp_path, monkeypatch, exchange):
    """The swap fails (the disk, a permission): the old render is in place, no staging left;
    with renameat2's exchange (one step) and with the two-rename fallback."""
    out, before, listing = _first_render(tmp_path)
    real_rename = os.rename

    def no_space(*args):
        raise OSError(28, "No space left on device")

    def rename(src, dst):
        if Path(src).name.startswith(".o.snc-") and Path(src).suffix != ".old" and Path(dst) == out:
            no_space()
        real_rename(src, dst)

    if exchange:
        monkeypatch.setattr(writer, "exchange", no_space)
    else:
        monkeypatch.setattr(writer, "exchange", lambda a, b: False)
        monkeypatch.setattr(writer.os, "rename", rename)
    with pytest.raises(OSError):
        writer.write({"x.txt": b"new"}, out, "t")
    assert read_tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_a_failure_while_writing_files_leaves_no_staging(tmp_path, monkeypatch):
    out, before, listing = _first_render(tmp_path)
    real = writer._write_one
    calls = []

    def write_one(folder_fd, rel, data):
        calls.append(rel)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        return real(folder_fd, rel, data)

    monkeypatch.setattr(writer, "_write_one", write_one)
    result = _invoke("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 1 and "Input/output error" in result.output
    monkeypatch.undo()
    assert read_tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_unknown_only_output(tmp_path):
    result = _invoke("render", str(SMALL), "-o", str(tmp_path / "o"), "--only", "cablng")
    assert result.exit_code == 2 and "cablng" in result.output
    assert not (tmp_path / "o").exists()


# -- schema ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema() -> dict:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_schema_validates_every_shipped_blueprint(schema, path):
    jsonschema.Draft202012Validator(schema).validate(load_file(path).data)


def test_schema_rejects_what_the_compiler_rejects(schema):
    data = load_file(SMALL).data
    validator = jsonschema.Draft202012Validator(schema)
    typo = json.loads(json.dumps(data))
    typo["nodes"][0]["placment"] = typo["nodes"][0].pop("placement")
    assert not validator.is_valid(typo)
    kind = json.loads(json.dumps(data))
    kind["scaleout"][0]["kind"] = "fat-tre"
    assert not validator.is_valid(kind)
    count = json.loads(json.dumps(data))
    count["nodes"][0]["count"] = "many"
    assert not validator.is_valid(count)


@pytest.mark.parametrize(("ratio", "ok"), [("1:2", True), ("2 : 1", True), (2, True), (1.5, True), ("two", False), (0, False)])
def test_schema_takes_ratios_as_the_compiler_does(schema, ratio, ok):
    """A ratio is a 'down:up' text or a number for the compiler, so for the schema too."""
    from supernodeiac.load.source import load_text
    from supernodeiac.pipeline import compile_document

    data = load_file(SMALL).data
    doc = json.loads(json.dumps(data))
    doc["scaleout"][0]["oversubscription"] = {"leaf": ratio}
    assert jsonschema.Draft202012Validator(schema).is_valid(doc) is ok
    text = SMALL.read_text().replace('oversubscription: {leaf: "1:1"}', f"oversubscription: {{leaf: {json.dumps(ratio)}}}")
    assert "oversubscription: {leaf: " in text
    compiled = compile_document(load_text(text, "ratio.yaml"))
    assert (compiled.exit_code != 2) is ok


def test_schema_is_stable():
    first = CliRunner().invoke(main, ["schema"]).output
    assert first == CliRunner().invoke(main, ["schema"]).output
    assert json.loads(first)["$schema"].startswith("https://json-schema.org/")


# -- docs/blueprint.md and README.md stay true to the models ----------------------------------------------


def _yaml_blocks(doc: str = "docs/blueprint.md") -> list[str]:
    text = (ROOT / doc).read_text()
    return [block.split("```", 1)[0] for block in text.split("```yaml\n")[1:]]


@pytest.mark.parametrize("doc", ["docs/blueprint.md", "README.md"])
def test_documented_blueprint_validates_clean(tmp_path, doc):
    first = _yaml_blocks(doc)[0]
    path = tmp_path / "doc.yaml"
    path.write_text(first)
    result = _invoke("validate", "-q", str(path))
    assert result.exit_code == 0, result.output
    assert "warning[" not in result.output


def test_documented_catalogue_names_exist():
    """Every device and medium docs/blueprint.md names as built in is in the shipped catalogue."""
    from supernodeiac.catalog import builtin_data

    text = (ROOT / "docs" / "blueprint.md").read_text()
    paragraph = text[text.index("Built-in devices include") :].split("\n\n", 1)[0]
    named = re.findall(r"`([a-z0-9-]+)`", paragraph)
    data = builtin_data()
    assert len(named) >= 20
    assert [n for n in named if n not in data["devices"] and n not in data["media"]] == []


def test_documented_ethernet_settings_validate():
    from ruamel.yaml import YAML

    from supernodeiac.model.clos import EthernetSettings

    [block] = [b for b in _yaml_blocks() if b.startswith("ethernet:")]
    EthernetSettings.model_validate(YAML(typ="safe").load(block)["ethernet"])


@pytest.mark.parametrize(
    ("args", "code", "expect"),
    [
        (["validate", str(BLUEPRINTS / "small-ib.yaml")], 0, "0 error(s)"),
        (["validate", "no-such-blueprint.yaml"], 2, "cannot read blueprint"),
        (["--version"], 0, "version"),
        (["frobnicate"], 2, "No such command"),
    ],
)
def test_console_script_exits_with_the_code_and_every_line_flushed(args, code, expect):
    """The installed entry point (cli.run) ends the process without teardown: its exit codes and
    its output must be exactly those of main(), everything written before it ends."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "supernodeiac", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stderr
    assert expect in done.stdout + done.stderr
