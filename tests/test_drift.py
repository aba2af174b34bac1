"""`snc render --check`: the committed output folder against a fresh render, without writing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, copy_of_shipped_render, read_tree

from supernodeiac.cli import main
from supernodeiac.findings.formats import parse_workflow_command

SMALL = str(BLUEPRINTS / "small-ib.yaml")


@pytest.fixture()
def rendered(tmp_path):
    """A folder as `snc render` left it (the shared render of small-ib, copied: same bytes and modes)."""
    return copy_of_shipped_render("small-ib", tmp_path / "out")


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


# -- the folder as issue 7's writer judges it ------------------------------------------------------


def _drift(result) -> list[str]:
    [report] = json.loads(result.output)
    return sorted(f["message"] for f in report["findings"] if f["rule"] == "drift")


def test_the_manifest_is_read_as_the_writer_reads_it(rendered):
    path = rendered / "MANIFEST.json"
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["tool"]) == ("snc-manifest/1", "snc")
    # snc 0.1 wrote only the blueprint and the files
    path.write_text(json.dumps({"blueprint": doc["blueprint"], "files": doc["files"]}, indent=2) + "\n")
    assert _drift(_check(rendered, "--format", "json")) == [
        "MANIFEST.json was written by an older snc (without format 'snc-manifest/1'): render again to update it"
    ]
    # someone else's
    path.write_text(json.dumps({"format": "other/1", "tool": "x", "files": []}) + "\n")
    [message] = _drift(_check(rendered, "--format", "json"))
    assert message.startswith("MANIFEST.json was not written by snc") and "will not replace this folder" in message


def test_a_killed_runs_staging_is_left_out_and_left_alone(rendered):
    """The staging folder and lock a SIGKILLed render leaves inside the folder are snc's own:
    not drift, and --check (which never writes) does not clear them either."""
    (rendered / ".snc-4242-deadbeef").mkdir()
    (rendered / ".snc-4242-deadbeef" / "half.csv").write_text("x")
    (rendered / ".snc-4242-deadbeef.lock").write_text("{}")
    before = read_tree(rendered)
    assert _check(rendered).exit_code == 0
    assert read_tree(rendered) == before


def test_links_and_non_folders_are_reported_not_followed(rendered, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the report")
    (rendered / "notes").symlink_to(secret)
    result = _check(rendered, "--format", "json")
    assert result.exit_code == 1
    assert _drift(result) == [
        f"notes is a symbolic link (to {secret}): snc writes regular files only, and snc render will not replace this folder"
    ]
    (rendered / "notes").unlink()
    link = tmp_path / "link"
    link.symlink_to(rendered)
    result = _check(link)
    assert result.exit_code == 1 and "is a symbolic link" in result.output and "give -o the folder it points to" in result.output
    result = _check(secret)
    assert result.exit_code == 1 and "is not a folder" in result.output
    result = CliRunner().invoke(main, ["render", "--check", SMALL, "-o", ""])
    assert result.exit_code == 2 and "-o needs a folder" in result.output
    assert secret.read_text() == "not for the report" and sorted(p.name for p in tmp_path.iterdir()) == [
        "link",
        "out",
        "secret.txt",
    ]
