"""An unchanged render is not done twice: the output folder is recognised as what the blueprint
renders (render_state.py), and every change of an input, or of the folder, renders again."""

from __future__ import annotations

import os
import shutil

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac.cli import main

UP_TO_DATE = "up to date"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SNC_NO_RENDER_CACHE", raising=False)
    blueprint = tmp_path / "bp" / "small-ib.yaml"
    blueprint.parent.mkdir()
    shutil.copy(BLUEPRINTS / "small-ib.yaml", blueprint)
    return tmp_path, blueprint, tmp_path / "out"


def _render(*args: str) -> str:
    result = CliRunner().invoke(main, ["render", *args])
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_an_unchanged_render_writes_nothing(env):
    _tmp, bp, out = env
    assert "wrote" in _render(str(bp), "-o", str(out))
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    text = _render(str(bp), "-o", str(out))
    assert UP_TO_DATE in text and "wrote" not in text
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_check_of_an_unchanged_render_is_up_to_date_and_a_hand_edit_is_drift(env):
    _tmp, bp, out = env
    _render(str(bp), "-o", str(out))
    assert UP_TO_DATE in _render("--check", str(bp), "-o", str(out))
    csv = out / "bom" / "bom.csv"
    data = csv.read_bytes()
    csv.write_bytes(data[:-2] + b"X\n")  # same size: the modification time and inode tell
    result = CliRunner().invoke(main, ["render", "--check", str(bp), "-o", str(out)])
    assert result.exit_code == 1 and "drift" in result.output


@pytest.mark.parametrize(
    "change",
    ["blueprint", "force", "extra-file", "removed-file", "only"],
)
def test_every_change_renders_again(env, change):
    _tmp, bp, out = env
    _render(str(bp), "-o", str(out))
    args = [str(bp), "-o", str(out)]
    if change == "blueprint":
        bp.write_text(bp.read_text() + "\n# a comment moves no cable, but findings' lines may move\n")
    elif change == "force":
        args.append("--force")
    elif change == "extra-file":
        (out / "notes.txt").write_text("mine")
    elif change == "removed-file":
        os.remove(out / "bom" / "bom.csv")
    elif change == "only":
        args += ["--only", "bom"]
    text = _render(*args)
    assert UP_TO_DATE not in text


def test_a_changed_include_renders_again(env):
    tmp, bp, out = env
    shared = tmp / "bp" / "shared.yaml"
    shared.write_text("naming: {cable_id: '{a}-{a_port}'}\n")
    text = bp.read_text().replace("kind: Blueprint\n", "kind: Blueprint\ninclude: [shared.yaml]\n", 1)
    bp.write_text(text)
    assert "wrote" in _render(str(bp), "-o", str(out))
    assert UP_TO_DATE in _render(str(bp), "-o", str(out))
    shared.write_text("naming: {cable_id: '{a}-{a_port}-x'}\n")
    assert UP_TO_DATE not in _render(str(bp), "-o", str(out))


def test_the_findings_of_the_first_render_are_shown_again(env):
    _tmp, bp, out = env
    first = CliRunner().invoke(main, ["render", str(bp), "-o", str(out), "--format", "json"])
    second = CliRunner().invoke(main, ["render", str(bp), "-o", str(out), "--format", "json"])
    assert first.exit_code == second.exit_code == 0
    assert first.output.splitlines()[0] == second.output.splitlines()[0]


def test_no_cache_means_a_full_render(env, monkeypatch, tmp_path):
    _tmp, bp, out = env
    _render(str(bp), "-o", str(out))
    monkeypatch.setenv("SNC_CACHE_DIR", str(tmp_path / "elsewhere"))  # a fresh machine, a CI clone
    assert UP_TO_DATE not in _render(str(bp), "-o", str(out))


def test_the_shortcut_can_be_turned_off(env, monkeypatch):
    _tmp, bp, out = env
    _render(str(bp), "-o", str(out))
    monkeypatch.setenv("SNC_NO_RENDER_CACHE", "1")
    assert "wrote" in _render(str(bp), "-o", str(out))


def test_the_code_digest_covers_every_template_and_catalogue_file():
    """A changed template or catalogue file is a changed input, also in a source checkout where
    the package reaches templates/ through a link (a walk that skips links would miss them)."""
    from conftest import ROOT

    from supernodeiac import render_state

    names = {p.relative_to(render_state.PACKAGE).as_posix() for p in render_state.code_files()}
    templates = {"templates/" + p.relative_to(ROOT / "templates").as_posix() for p in (ROOT / "templates").rglob("*.j2")}
    data = render_state.PACKAGE / "catalog" / "data"
    catalogue = {p.relative_to(render_state.PACKAGE).as_posix() for p in data.glob("*.yaml")}
    assert len(templates) > 10 and templates <= names
    assert catalogue and catalogue <= names


def _parses(monkeypatch) -> list[str]:
    """Every blueprint parse a render does (the shortcut's own check reads none)."""
    import supernodeiac.load.source as source

    seen: list[str] = []
    real = source.load_file

    def counted(path, *args, **kwargs):
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(source, "load_file", counted)
    return seen


def test_the_shortcut_reads_the_recorded_files_not_the_blueprint(env, monkeypatch):
    _tmp, bp, out = env
    _render(str(bp), "-o", str(out))
    seen = _parses(monkeypatch)
    assert UP_TO_DATE in _render(str(bp), "-o", str(out))
    assert seen == []
    bp.write_text(bp.read_text() + "\n# changed\n")  # new bytes: the full check, then a render
    assert UP_TO_DATE not in _render(str(bp), "-o", str(out))
    assert seen


def test_an_include_swapped_for_a_link_is_read_again(env, monkeypatch):
    tmp, bp, out = env
    shared = tmp / "bp" / "shared.yaml"
    shared.write_text("naming: {cable_id: '{a}-{a_port}'}\n")
    bp.write_text(bp.read_text().replace("kind: Blueprint\n", "kind: Blueprint\ninclude: [shared.yaml]\n", 1))
    _render(str(bp), "-o", str(out))
    elsewhere = tmp / "elsewhere.yaml"
    elsewhere.write_bytes(shared.read_bytes())  # the same bytes, but the path now leads elsewhere
    shared.unlink()
    shared.symlink_to(elsewhere)
    # The recorded files are not trusted: the blueprint is read again and the link refused, as a
    # first render would refuse it.
    result = CliRunner().invoke(main, ["render", str(bp), "-o", str(out)])
    assert result.exit_code == 2 and "outside the repository" in result.output
    assert UP_TO_DATE not in result.output


def test_the_default_folder_is_per_working_directory(env, monkeypatch):
    tmp, bp, _out = env
    first, second = tmp / "a", tmp / "b"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    assert "wrote" in _render(str(bp))
    assert UP_TO_DATE in _render(str(bp))
    monkeypatch.chdir(second)  # another checkout's out/ holds nothing yet
    assert "wrote" in _render(str(bp))


def test_a_link_added_in_the_folder_renders_again(env):
    tmp, bp, out = env
    _render(str(bp), "-o", str(out))
    (out / "linked").symlink_to(tmp)
    assert UP_TO_DATE not in _render(str(bp), "-o", str(out))
