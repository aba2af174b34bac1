"""Composition: extends and include, merged with every value located in the file that wrote it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac.cli import main
from supernodeiac.load.compose import MAX_DEPTH
from supernodeiac.load.source import MAX_FILE_BYTES, MAX_VALUES
from supernodeiac.pipeline import Stage, compile_file, render

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()

CATALOGUE = textwrap.dedent(
    """\
    # shared by every site
    catalogue:
      media:
        aoc:
          relative_cost: 3.25
    """
)

OVERLAY = textwrap.dedent(
    """\
    extends: ../designs/pod.yaml
    include:
      - ../shared/catalogue.yaml
    metadata:
      name: hall2
    site:
      rows:
        - {name: A, racks: 5}
        - {name: B, racks: 2}
    nodes:
      - name: gpu
        placement: {first_u: 3}
    """
)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    for folder in ("designs", "shared", "sites"):
        (tmp_path / folder).mkdir()
    (tmp_path / "designs" / "pod.yaml").write_text(SMALL)
    (tmp_path / "shared" / "catalogue.yaml").write_text(CATALOGUE)
    (tmp_path / "sites" / "hall2.yaml").write_text(OVERLAY)
    return tmp_path


def _errors(c) -> list[str]:
    return [f"{f.location}: {f.rule}: {f.message} | {f.hint}" for f in c.findings if f.severity.value == "error"]


def test_overlay_merges_base_fragments_and_itself(repo):
    c = compile_file(str(repo / "sites" / "hall2.yaml"))
    assert c.stage is Stage.BUILT, _errors(c)
    bp = c.blueprint
    assert bp.metadata.name == "hall2" and bp.metadata.description.startswith("16 x HGX")  # own name, base description
    gpu = bp.nodes[0]
    assert (gpu.count, gpu.placement.row, gpu.placement.per_rack, gpu.placement.first_u) == (16, "A", 4, 3)  # merged deeply
    assert [g.name for g in bp.nodes] == ["gpu", "ufm"]  # merged by name, ufm kept
    assert [(r.name, r.racks) for r in bp.site.rows] == [("A", 5), ("N", 2), ("B", 2)]  # merged by name, B appended
    assert c.catalogue.media["aoc"].relative_cost == 3.25  # from the shared fragment
    assert [Path(p).resolve() for p in c.document.sources] == [
        repo / "sites" / "hall2.yaml",
        repo / "designs" / "pod.yaml",
        repo / "shared" / "catalogue.yaml",
    ]


def test_a_composed_blueprint_renders_as_its_flat_equivalent(repo, tmp_path):
    flat = tmp_path / "flat.yaml"
    row_n = next(line for line in SMALL.splitlines() if "- {name: N, racks: 2}" in line)
    text = (
        SMALL.replace("name: small-ib", "name: hall2")
        .replace("{name: A, racks: 4", "{name: A, racks: 5")  # its other keys are kept by the merge
        .replace(row_n, row_n + "\n    - {name: B, racks: 2}")
        .replace("{row: A, per_rack: 4, first_u: 2}", "{row: A, per_rack: 4, first_u: 3}")
        .replace("site:\n", "catalogue:\n  media:\n    aoc: {relative_cost: 3.25}\n\nsite:\n", 1)
    )
    assert "{name: A, racks: 5" in text and "{name: B, racks: 2}" in text  # the flat file is the overlay's
    flat.write_text(text)
    composed, plain = compile_file(str(repo / "sites" / "hall2.yaml")), compile_file(str(flat))
    assert plain.stage is Stage.BUILT, _errors(plain)
    assert render(composed)[0] == render(plain)[0]


def test_a_bad_value_is_located_in_the_file_that_wrote_it(repo):
    (repo / "shared" / "catalogue.yaml").write_text(
        CATALOGUE.replace("relative_cost: 3.25", "relative_cost: 3.25\n      reech_m: {100: 3}")
    )
    overlay = OVERLAY.replace("    placement: {first_u: 3}", "    placment: {first_u: 3}")
    (repo / "sites" / "hall2.yaml").write_text(overlay)
    c = compile_file(str(repo / "sites" / "hall2.yaml"))
    where = {f.location.file.rsplit("/", 1)[-1]: (f.location.line, f.location.col, f.message) for f in c.findings}
    assert where["hall2.yaml"][:2] == (overlay.splitlines().index("    placment: {first_u: 3}") + 1, 5)
    assert "placment" in where["hall2.yaml"][2]
    # the catalogue fragment is validated after the blueprint: fix the overlay to see it
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY)
    c = compile_file(str(repo / "sites" / "hall2.yaml"))
    [f] = [f for f in c.findings if f.severity.value == "error"]
    assert f.location.file.endswith("shared/catalogue.yaml") and f.location.line == 6 and "reech_m" in f.message


def test_a_value_from_the_base_points_into_the_base(repo):
    (repo / "designs" / "pod.yaml").write_text(SMALL.replace("    switch: qm9700\n", "    switch: qm9701\n"))
    c = compile_file(str(repo / "sites" / "hall2.yaml"))
    [f] = [f for f in c.findings if f.severity.value == "error"]
    line = SMALL.splitlines().index("    switch: qm9700") + 1
    assert f.rule == "unknown-catalogue-item" and f.location.file.endswith("designs/pod.yaml") and f.location.line == line


def test_a_cycle_is_refused_at_the_reference_that_closes_it(repo):
    (repo / "shared" / "catalogue.yaml").write_text("include: [../sites/hall2.yaml]\n" + CATALOGUE)
    c = compile_file(str(repo / "sites" / "hall2.yaml"))
    [f] = c.findings
    assert c.exit_code == 2 and f.rule == "compose" and "cycle" in f.message
    assert f.location.file.endswith("shared/catalogue.yaml") and (f.location.line, f.location.col) == (1, 11)
    assert "hall2.yaml -> " in f.message and f.message.endswith("hall2.yaml")


def test_a_file_including_itself_is_a_cycle(repo):
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("../shared/catalogue.yaml", "./hall2.yaml"))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "compose" and "cycle" in f.message and f.location.line == 3


def test_a_missing_file_is_reported_at_the_reference(repo):
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("../shared/catalogue.yaml", "../shared/catalog.yaml"))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "compose" and "cannot include '../shared/catalog.yaml'" in f.message
    assert f.location.file.endswith("sites/hall2.yaml") and (f.location.line, f.location.col) == (3, 5)


def test_a_syntax_error_in_an_included_file_is_located_there(repo):
    (repo / "shared" / "catalogue.yaml").write_text(CATALOGUE.replace("relative_cost: 3.25", "relative_cost: [3.25"))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "yaml-syntax" and f.location.file.endswith("shared/catalogue.yaml")
    assert "included from " in f.hint and "hall2.yaml:3:5" in f.hint


@pytest.mark.parametrize(
    ("ref", "words"),
    [("/etc/hosts.yaml", "relative path"), ("../../outside.yaml", "outside the repository"), ("notes.txt", ".yaml or .yml")],
)
def test_references_stay_relative_inside_the_repository(repo, ref, words):
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("../shared/catalogue.yaml", ref))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "compose" and words in f.message and f.location.line == 3


def test_include_must_be_a_list_of_names(repo):
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("include:\n  - ../shared/catalogue.yaml", "include: {a: 1}"))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "compose" and "list of YAML file names" in f.message and f.location.line == 2


def test_nesting_is_bounded(repo):
    for i in range(MAX_DEPTH + 1):
        (repo / "shared" / f"f{i}.yaml").write_text(f"include: [f{i + 1}.yaml]\nnaming: {{}}\n")
    (repo / "shared" / f"f{MAX_DEPTH + 1}.yaml").write_text("naming: {}\n")
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("../shared/catalogue.yaml", "../shared/f0.yaml"))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "compose" and "deeper than" in f.message


def test_standard_input_includes_relative_to_its_given_name(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, ["validate", "-q", "--stdin-filename", "sites/hall2.yaml", "-"], input=OVERLAY)
    assert result.exit_code == 0, result.output
    bad = OVERLAY.replace("first_u: 3", "first_u: -1")
    result = CliRunner().invoke(main, ["validate", "-q", "--stdin-filename", "sites/hall2.yaml", "-"], input=bad)
    assert result.exit_code == 2 and result.output.startswith("sites/hall2.yaml:12:")


def _values(values: int) -> str:
    """A small fragment of about ``values`` YAML values (two bytes each)."""
    return "padding: [" + ",".join("0" * values) + "]\n"


@pytest.mark.parametrize(
    "limit",
    [
        # The real limit: 160,000 values through the pure-Python YAML parser, ~20-40 s on 2 cores.
        pytest.param(MAX_VALUES, marks=pytest.mark.slow, id="real-limit"),
        # The same accounting against a limit of 10,000 (both modules read it at call time).
        pytest.param(10_000, id="small-limit"),
    ],
)
def test_the_composed_blueprint_is_held_to_one_files_value_limit(repo, limit, monkeypatch):
    """Each fragment is within issue 7's bounds; together they are not: refused at the reference
    that crosses the limit, before anything is merged."""
    from supernodeiac.load import compose, source

    monkeypatch.setattr(source, "MAX_VALUES", limit)
    monkeypatch.setattr(compose, "MAX_VALUES", limit)
    for name in ("a", "b", "c"):
        (repo / "shared" / f"{name}.yaml").write_text(_values(limit * 4 // 10))
    assert compile_file(str(repo / "shared" / "a.yaml")).findings[0].rule != "yaml-limit"  # one alone is readable
    refs = "include:\n  - ../shared/a.yaml\n  - ../shared/b.yaml\n  - ../shared/c.yaml\n"
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("include:\n  - ../shared/catalogue.yaml\n", refs))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "yaml-limit" and "'../shared/c.yaml'" in f.message and f"{limit:,}" in f.message
    assert f.location.file.endswith("sites/hall2.yaml") and (f.location.line, f.location.col) == (5, 5)


def test_the_composed_blueprint_is_held_to_one_files_size_limit(repo):
    padding = "# " + "x" * 78 + "\n"
    for name in ("a", "b"):
        (repo / "shared" / f"{name}.yaml").write_text(padding * (MAX_FILE_BYTES * 6 // 10 // 81) + "naming: {}\n")
    refs = "include:\n  - ../shared/a.yaml\n  - ../shared/b.yaml\n"
    (repo / "sites" / "hall2.yaml").write_text(OVERLAY.replace("include:\n  - ../shared/catalogue.yaml\n", refs))
    [f] = compile_file(str(repo / "sites" / "hall2.yaml")).findings
    assert f.rule == "yaml-limit" and "'../shared/b.yaml'" in f.message and "bytes" in f.message
    assert (f.location.line, f.location.col) == (4, 5)
