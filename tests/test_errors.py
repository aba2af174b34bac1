"""Bad input through the real CLI: a located message like a compiler's, no traceback, the right
exit code (2 unreadable or invalid, 1 impossible design), and the output folder left alone.

Every case edits one line of BASE (a clean blueprint) and names the exact line and column the
finding must point at: the offending key, or the character where the YAML stops parsing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import read_tree

from supernodeiac.cli import main

BASE = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: t
site:
  rows:
    - {name: A, racks: 4}
    - {name: N, racks: 2}
nodes:
  - name: gpu
    model: hgx-h100
    count: 16
    placement: {row: A, per_rack: 4, first_u: 2}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints:
      - group: gpu
    placement:
      leaf: {row: N, per_rack: 8, first_u: 2}
      spine: {row: N, first_rack: 2, per_rack: 4, first_u: 2}
management: {switch: sn2201}
"""

DRAGONFLY = """\
  - name: df
    kind: dragonfly
    router: qm9700
    routr: qm9700
    endpoints: [{group: gpu}]
    placement: {row: N}
"""

DRAGONFLY_PLUS = """\
  - name: dfp
    kind: dragonfly-plus
    switch: qm9700
    spine_swich: qm9700
    endpoints: [{group: gpu}]
    placement: {leaf: {row: N}, spine: {row: N}}
"""

CPU = """\
  - {name: cpu, model: hgx-h100, count: 2, naming: 'n{index}', placement: {row: N, per_rack: 2, first_u: 20}}
"""

SWITCHED = """\
scaleup:
  - name: nvl
    kind: switched
    compute_tray: gb200-tray
    switch_tray: nvswitch-tray
    compute_trayz: 18
    placement: {row: A}
"""


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[tuple[str, str], ...]  # (text of BASE, replacement); each text must occur once
    exit: int
    rule: str
    at: tuple[int, int]  # line, column (1-based) the first error must point at
    message: str  # must appear in the message
    hint: str = ""  # must appear in the hint


def edit(old: str, new: str, *more: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return ((old, new), *more)


M = "management:"  # the last line of BASE: insert new sections before it

# fmt: off
CASES = [
    # -- YAML the parser cannot read ----------------------------------------------------------
    Case("tab", edit("  name: t\n", "\tname: t\n"), 2, "yaml-syntax", (4, 1), "'\\t'", "spaces"),
    Case("bad-indent", edit("    count: 16\n", "      count: 16\n"), 2, "yaml-syntax", (12, 12), "mapping values", "indented"),
    Case("unclosed-flow", edit("first_u: 2}\nscaleout", "first_u: 2\nscaleout"), 2, "yaml-syntax", (14, 9), "expected ','",
         "line 13, column 16"),
    Case("unclosed-list", edit("- {name: N, racks: 2}", "- [{name: N, racks: 2}"), 2, "yaml-syntax", (9, 1), "expected ','",
         "line 8, column 7"),
    Case("duplicate-key", edit("    count: 16\n", "    count: 16\n    count: 8\n"), 2, "yaml-syntax", (13, 5),
         'duplicate key "count"', "only once"),
    Case("custom-tag", edit("count: 16", "count: !big 16"), 2, "yaml-syntax", (12, 5), "tag '!big'"),
    # -- keys the models do not know, at every level -------------------------------------------
    Case("top-level", edit(M, "managment:"), 2, "schema", (23, 1), "unknown key 'managment'", "did you mean 'management'?"),
    Case("list-item", edit("    placement: {row: A", "    placment: {row: A"), 2, "schema", (13, 5),
         "unknown key 'placment' in nodes[0]", "did you mean 'placement'?"),
    Case("flow-mapping", edit("{row: A, per_rack: 4, first_u: 2}", "{row: A, per_rack: 4, frist_u: 2}"), 2, "schema", (13, 38),
         "unknown key 'frist_u' in nodes[0].placement", "did you mean 'first_u'?"),
    Case("fat-tree-item", edit("    switch: qm9700\n", "    swich: qm9700\n"), 2, "schema", (17, 5),
         "unknown key 'swich' in scaleout[0]", "did you mean 'switch'"),
    Case("endpoint-item", edit("      - group: gpu\n", "      - group: gpu\n        sux: 0\n"), 2, "schema", (20, 9),
         "unknown key 'sux' in scaleout[0].endpoints[0]", "did you mean 'su'?"),
    Case("deep-placement", edit("      leaf: {row: N,", "      leef: {row: N,"), 2, "schema", (21, 7),
         "unknown key 'leef' in scaleout[0].placement", "did you mean 'leaf'?"),
    # the union member is the one the item's own `kind` names: these keys exist only in that member
    Case("dragonfly-item", edit(M, DRAGONFLY + M), 2, "schema", (26, 5), "unknown key 'routr' in scaleout[1]",
         "did you mean 'router'"),
    Case("dragonfly-plus-item", edit(M, DRAGONFLY_PLUS + M), 2, "schema", (26, 5), "unknown key 'spine_swich' in scaleout[1]",
         "did you mean 'spine_switch'"),
    Case("switched-item", edit("scaleout:", SWITCHED + "scaleout:"), 2, "schema", (19, 5),
         "unknown key 'compute_trayz' in scaleup[0]", "'compute_trays'"),
    Case("catalogue-override", edit("site:", "catalogue:\n  devices:\n    qm9700: {heigth_u: 1}\nsite:"), 2, "schema", (7, 14),
         "unknown key 'heigth_u' in catalogue.devices.qm9700", "did you mean 'height_u'?"),
    # -- wrong values ------------------------------------------------------------------------
    Case("wrong-type", edit("count: 16", "count: many"), 2, "schema", (12, 5),
         "nodes[0].count: expected a whole number, got 'many'"),
    Case("wrong-shape", edit("count: 16", "count: [16]"), 2, "schema", (12, 5), "nodes[0].count: expected a whole number"),
    Case("out-of-range", edit("count: 16", "count: 0"), 2, "schema", (12, 5), "nodes[0].count: input should be greater than 0"),
    Case("count-extra-digits", edit("count: 16", "count: 1600000000"), 2, "schema", (12, 5),
         "nodes[0].count: input should be less than or equal to 2000000"),
    Case("racks-extra-digits", edit("{name: A, racks: 4}", "{name: A, racks: 4000000}"), 2, "schema", (7, 17),
         "site.rows[0].racks: input should be less than or equal to 100000"),
    Case("ratio-zero", edit("    kind: fat-tree\n", "    kind: fat-tree\n    oversubscription: {leaf: 0}\n"), 2, "schema",
         (17, 24), "a ratio given as a number must be positive"),
    Case("wrong-literal", edit("    kind: fat-tree\n", "    kind: fat-tree\n    transport: infinband\n"), 2, "schema", (17, 5),
         "'infinband' is not allowed", "did you mean 'infiniband'?"),
    Case("unknown-kind", edit("kind: fat-tree", "kind: fat-tre"), 2, "schema", (16, 5), "unknown kind 'fat-tre' in scaleout[0]",
         "did you mean 'fat-tree'?"),
    Case("missing-kind", edit("    kind: fat-tree\n", ""), 2, "schema", (15, 5), "missing key 'kind' in scaleout[0]", "fat-tree"),
    Case("missing-key", edit("    count: 16\n", ""), 2, "schema", (10, 5), "missing required key 'count' in nodes[0]"),
    Case("bad-template", edit(M, "naming: {cable_id: '{fabric}-{a_prt}'}\n" + M), 2, "naming", (23, 10), "unknown field {a_prt}",
         "did you mean 'a_port'"),
    Case("bad-group-template", edit("    count: 16\n", "    count: 16\n    naming: '{grp}-{index}'\n"), 2, "naming", (13, 5),
         "unknown field {grp}", "did you mean 'group'"),
    Case("malformed-template", edit(M, "naming: {cable_label: '{a'}\n" + M), 2, "naming", (23, 10), "is malformed"),
    # -- references to things that do not exist -----------------------------------------------
    Case("unknown-model", edit("model: hgx-h100", "model: hgx-h10"), 1, "unknown-catalogue-item", (11, 5), "'hgx-h10'",
         "did you mean 'hgx-h100'"),
    Case("unknown-switch", edit("switch: qm9700", "switch: qm970"), 1, "unknown-catalogue-item", (17, 5), "'qm970'",
         "did you mean 'qm9700'"),
    Case("unknown-pin", edit(M, "media: {pin: dacc}\n" + M), 2, "unknown-catalogue-item", (23, 9), "'dacc'",
         "did you mean 'dac'"),
    Case("unknown-allowed", edit(M, "media: {allow: [dac, aoc, srr]}\n" + M), 2, "unknown-catalogue-item", (23, 27), "'srr'",
         "did you mean 'sr'"),
    Case("unknown-row", edit("leaf: {row: N,", "leaf: {row: Q,"), 1, "unknown-row", (21, 14), "no row named 'Q'", "A, N"),
    Case("unknown-group", edit("- group: gpu", "- group: gpux"), 1, "unknown-reference", (19, 9), "'gpux'",
         "did you mean 'gpu'?"),
    # -- designs that cannot be built ----------------------------------------------------------
    # 9 SUs of 32 nodes x 8 rails = 72 leaves, but a 64-port spine reaches 64 leaves (8 SUs, 256 nodes)
    Case("more-leaves-than-spine-ports",
         edit("count: 16", "count: 264", ("{name: A, racks: 4}", "{name: A, racks: 66}"),
              ("{name: N, racks: 2}", "{name: N, racks: 12}")),
         1, "topology-too-big", (18, 5), "needs 72 leaves", "at most 256 nodes"),
    Case("rack-space", edit("count: 16", "count: 17"), 1, "rack-space", (13, 5), "row A has 4 racks", "add racks to row A"),
    # -- names that collide ------------------------------------------------------------------
    Case("device-names-collide", edit(M, "naming: {devices: {spine: sp}}\n" + M), 1, "names-unique", (23, 20),
         "device name 'sp' is given to 4 devices (ib)", "add a coordinate"),
    Case("node-names-collide",
         edit("    count: 16\n", "    count: 16\n    naming: 'n{index}'\n", ("scaleout:", CPU + "scaleout:")),
         1, "names-unique", (13, 5), "device name 'n1' is given to 2 devices (cpu, gpu); 1 more name(s)", "add a coordinate"),
    Case("cable-ids-collide", edit(M, "naming: {cable_id: '{fabric}-{a}'}\n" + M), 1, "names-unique", (23, 10),
         "cable ID 'ib-gpu-0001' is used twice (gpu-0001:", "include {a_port}"),
    Case("fabric-named-like-a-group", edit("  - name: ib\n", "  - name: gpu\n"), 2, "names-unique", (15, 5),
         "'gpu' is already the name of nodes[0]", "share one namespace"),
    Case("row-named-twice", edit("{name: N, racks: 2}", "{name: A, racks: 2}"), 2, "names-unique", (8, 8),
         "row 'A' is already the name of site.rows[0]", "its own name"),
    Case("fabric-named-mgmt", edit("  - name: ib\n", "  - name: mgmt\n"), 2, "names-unique", (15, 5),
         "'mgmt' is already the name of the management network", "share one namespace"),
]
# fmt: on


def _run(args: list[str]):
    result = CliRunner().invoke(main, args)
    # SystemExit is how the CLI sets its exit code; anything else escaped as a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result


def _write(tmp_path: Path, text: str, name: str = "bp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _mutate(case: Case) -> str:
    text = BASE
    for old, new in case.edits:
        assert text.count(old) == 1, f"{case.id}: {old!r} must occur once"
        text = text.replace(old, new)
    return text


def test_base_is_clean(tmp_path):
    result = _run(["validate", str(_write(tmp_path, BASE))])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_located(case: Case, tmp_path):
    path = _write(tmp_path, _mutate(case))
    result = _run(["validate", "--format", "json", str(path)])
    assert result.exit_code == case.exit, result.output
    [report] = json.loads(result.output)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert errors, report
    first = errors[0]
    assert (first["rule"], first["file"], first["line"], first["col"]) == (case.rule, str(path), *case.at), first
    assert case.message in first["message"], first
    assert case.hint in first["hint"], first
    # The human form is a compiler's: file:line:col: error[rule]: message, then the hint.
    human = _run(["validate", str(path)])
    assert human.exit_code == case.exit
    assert f"{path}:{case.at[0]}:{case.at[1]}: error[{case.rule}]: " in human.output
    if case.hint:
        assert "    hint: " in human.output


def test_a_typo_is_one_finding_not_two(tmp_path):
    """'placment' is an unknown key *and* leaves 'placement' missing: report the typo only."""
    path = _write(tmp_path, BASE.replace("    placement: {row: A", "    placment: {row: A"))
    [report] = json.loads(_run(["validate", "--format", "json", str(path)]).output)
    assert [f["message"] for f in report["findings"]] == ["unknown key 'placment' in nodes[0]"]


def test_every_error_is_reported_not_just_the_first(tmp_path):
    text = BASE.replace("count: 16", "count: many").replace("    switch: qm9700\n", "    swich: qm9700\n")
    [report] = json.loads(_run(["validate", "--format", "json", str(_write(tmp_path, text))]).output)
    assert [(f["line"], f["col"]) for f in report["findings"]] == [(12, 5), (17, 5)]


@pytest.mark.parametrize(
    ("id", "content", "message"),
    [
        ("empty", "", "this file is empty"),
        ("comment-only", "# nothing here\n", "this file is empty"),
        ("list", "- apiVersion: supernodeiac/v1\n- kind: Blueprint\n", "this file is a list"),
        ("scalar", "hello\n", "this file is a str value"),
        ("not-utf8", b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_files_that_are_not_blueprints(id, content, message, tmp_path):
    path = tmp_path / f"{id}.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = _run(["validate", str(path)])
    assert result.exit_code == 2
    assert message in result.output
    assert result.output.startswith(str(path))


def test_missing_file_and_directory(tmp_path):
    missing = _run(["validate", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2
    assert f"{tmp_path / 'nope.yaml'}: error[io]: cannot read blueprint: no such file" in missing.output
    folder = _run(["validate", str(tmp_path)])
    assert folder.exit_code == 2
    assert f"{tmp_path}: error[io]: cannot read blueprint: is a directory" in folder.output


def test_worst_exit_code_wins_over_several_files(tmp_path):
    good = _write(tmp_path, BASE, "good.yaml")
    impossible = _write(tmp_path, BASE.replace("model: hgx-h100", "model: hgx-h10"), "impossible.yaml")
    invalid = _write(tmp_path, BASE.replace("count: 16", "count: many"), "invalid.yaml")
    assert _run(["validate", str(good), str(impossible)]).exit_code == 1
    assert _run(["validate", str(good), str(impossible), str(invalid)]).exit_code == 2


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.id in ("tab", "wrong-type", "unknown-model", "more-leaves-than-spine-ports")],
    ids=lambda c: c.id,
)
def test_bad_input_leaves_the_output_folder_alone(case: Case, tmp_path):
    out = tmp_path / "out"
    first = _run(["render", str(_write(tmp_path, BASE, "good.yaml")), "-o", str(out)])
    assert first.exit_code == 0, first.output
    before = read_tree(out)
    assert "MANIFEST.json" in before and len(before) > 1
    bad = _write(tmp_path, _mutate(case))
    listing = sorted(p.name for p in tmp_path.iterdir())
    result = _run(["render", str(bad), "-o", str(out)])
    assert result.exit_code == case.exit
    assert "nothing written" in result.output
    assert read_tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # no staging folder left behind


def test_devices_beyond_the_limit_are_refused_before_they_are_built(tmp_path, monkeypatch):
    """The total over every entry is capped too: the entry that crosses it is named, and nothing is built."""
    import supernodeiac.builders.context as context

    monkeypatch.setattr(context, "MAX_DEVICES", 19)
    text = BASE.replace("nodes:\n", "nodes:\n" + CPU.replace("count: 2", "count: 4"))
    result = _run(["validate", "--format", "json", str(_write(tmp_path, text))])
    assert result.exit_code == 1, result.output
    [report] = json.loads(result.output)
    [err] = [f for f in report["findings"] if f["severity"] == "error"]
    assert err["rule"] == "size-limit" and (err["line"], err["col"]) == (13, 5)  # the gpu group's count
    assert err["message"] == "this entry adds 16 devices to the 4 already built; snc builds at most 19"
