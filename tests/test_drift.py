"""`snc render --check`: the committed output folder against a fresh render, without writing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, read_tree

from supernodeiac.cli import main
from supernodeiac.formats import parse_workflow_command

SMALL = str(BLUEPRINTS / "small-ib.yaml")


@pytest.fixture()
def rendered(tmp_path):
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["render", SMALL, "-o", str(out)]).exit_code == 0
    return out


def _check(out, *extra: str):
    return CliRunner().invoke(main, ["render", "--check", SMALL, "-o", str(out), *extra])


def test_a_fresh_render_passes(rendered):
    result = _check(rendered)
    assert result.exit_code == 0, result.output
    assert f"{rendered}/ is up to date" in result.output


def test_a_one_byte_edit_fails_naming_the_file_and_writes_nothing(rendered):
    path = rendered / "cabling" / "cables.csv"
    data = bytearray(path.read_bytes())
    at = data.index(b",aoc-100g,") + 1
    data[at] = ord("A")  # aoc-100g -> Aoc-100g on one row
    path.write_bytes(bytes(data))
    before = read_tree(rendered)
    stamps = {p: p.stat().st_mtime_ns for p in rendered.rglob("*")}
    result = _check(rendered)
    assert result.exit_code == 1
    [line] = [line for line in result.output.splitlines() if "error[drift]" in line]
    assert line.startswith(
        f"{rendered}/cabling/cables.csv: error[drift]: cabling/cables.csv differs from what the blueprint renders"
    )
    assert "1 row(s) changed; columns medium (1)" in line
    assert read_tree(rendered) == before and {p: p.stat().st_mtime_ns for p in rendered.rglob("*")} == stamps
    assert sorted(p.name for p in rendered.parent.iterdir()) == ["out"]  # no staging folder either


def test_a_json_edit_names_the_keys(rendered):
    path = rendered / "bom" / "summary.json"
    doc = json.loads(path.read_text())
    doc["totals"]["devices"] += 1
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    result = _check(rendered, "--format", "github")
    assert result.exit_code == 1
    [line] = result.output.splitlines()
    command, props, message = parse_workflow_command(line)
    assert command == "error" and props["file"] == f"{rendered}/bom/summary.json" and props["title"] == "drift"
    assert "keys totals/devices" in message


def test_missing_stale_and_manifest(rendered):
    (rendered / "diagrams" / "ib.dot").unlink()
    (rendered / "notes.txt").write_text("hand-written")
    result = _check(rendered, "--format", "json")
    assert result.exit_code == 1
    [report] = json.loads(result.output)
    messages = sorted(f["message"] for f in report["findings"] if f["rule"] == "drift")
    assert messages == [
        "diagrams/ib.dot is missing: the blueprint renders it",
        "notes.txt is not rendered by the blueprint any more (a stale or foreign file)",
    ]


def test_exclude_leaves_out_paths_and_their_manifest_entries(rendered):
    for svg in rendered.glob("diagrams/*.svg"):
        svg.write_text("<svg>laid out by another Graphviz version</svg>")
    assert _check(rendered).exit_code == 1
    assert _check(rendered, "--exclude", "diagrams/*.svg").exit_code == 0


def test_no_output_folder(tmp_path):
    result = _check(tmp_path / "never")
    assert result.exit_code == 1 and "does not exist" in result.output


def test_a_blueprint_with_errors_is_reported_as_such(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((BLUEPRINTS / "small-ib.yaml").read_text().replace("count: 16", "count: many"))
    result = CliRunner().invoke(main, ["render", "--check", str(bad), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and "error[schema]" in result.output
