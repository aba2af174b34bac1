"""Blueprints and includes are read through resolved paths inside the repository root: a link out
of it, a FIFO or a device, and a link loop are each a located error (exit 2), never a hang, an
outside file's values in a finding, or an internal error (exit 3)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, ROOT

SMALL = BLUEPRINTS / "small-ib.yaml"


def _validate(*args: str, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "supernodeiac", "validate", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree (a `.git` folder marks it) holding the small blueprint, and a secret outside it."""
    work = tmp_path / "repo"
    work.mkdir()
    (work / ".git").mkdir()
    (work / "small.yaml").write_text(SMALL.read_text())
    (tmp_path / "secret.yaml").write_text("apiVersion: TOP-SECRET-VALUE\n")
    return work


def test_a_top_level_blueprint_linked_out_of_the_repository_is_refused(repo):
    (repo / "bp.yaml").symlink_to(repo.parent / "secret.yaml")
    code, out = _validate("bp.yaml", cwd=repo)
    assert code == 2, out
    assert "bp.yaml: error[io]: cannot read blueprint: it is a symbolic link to a file outside" in out
    assert "TOP-SECRET-VALUE" not in out


def test_outside_a_repository_the_blueprints_folder_is_the_root(tmp_path):
    (tmp_path / "secret.yaml").write_text("apiVersion: TOP-SECRET-VALUE\n")
    folder = tmp_path / "designs"
    folder.mkdir()
    (folder / "bp.yaml").symlink_to(tmp_path / "secret.yaml")
    (folder / "real.yaml").write_text(SMALL.read_text())
    (folder / "alias.yaml").symlink_to("real.yaml")  # a link inside the folder is read as usual
    code, out = _validate("designs/bp.yaml", "designs/alias.yaml", cwd=tmp_path)
    assert code == 2 and "TOP-SECRET-VALUE" not in out, out
    assert "designs/bp.yaml: error[io]: cannot read blueprint: it is a symbolic link to a file outside" in out
    assert "designs/alias.yaml: error" not in out


def test_a_link_inside_the_repository_is_read(repo):
    (repo / "designs").mkdir()
    (repo / "designs" / "bp.yaml").symlink_to("../small.yaml")
    code, out = _validate("designs/bp.yaml", cwd=repo)
    assert code == 0, out


def test_an_include_linked_out_of_the_repository_is_refused_at_its_line(repo):
    (repo / "shared.yaml").symlink_to(repo.parent / "secret.yaml")
    text = (repo / "small.yaml").read_text()
    (repo / "small.yaml").write_text("include: [shared.yaml]\n" + text)
    code, out = _validate("small.yaml", cwd=repo)
    assert code == 2 and "TOP-SECRET-VALUE" not in out, out
    assert "small.yaml:1:11: error[compose]: cannot include 'shared.yaml': it lies outside the repository" in out


@pytest.mark.parametrize("where", ["top", "include"])
def test_a_fifo_is_refused_without_waiting_for_a_writer(repo, where):
    os.mkfifo(repo / "pipe.yaml")
    if where == "include":
        (repo / "small.yaml").write_text("include: [pipe.yaml]\n" + (repo / "small.yaml").read_text())
    start = time.monotonic()
    code, out = _validate("pipe.yaml" if where == "top" else "small.yaml", cwd=repo)  # hung forever before
    assert code == 2 and time.monotonic() - start < 30, out
    if where == "top":
        assert "pipe.yaml: error[io]: cannot read blueprint: it is a FIFO (named pipe), not a file" in out
    else:
        assert "small.yaml:1:11: error[compose]: cannot include 'pipe.yaml': it is a FIFO (named pipe), not a file" in out


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused_unopened(tmp_path, device):
    code, out = _validate(device, cwd=tmp_path)
    assert code == 2 and "error[io]: cannot read blueprint: it is a character device, not a file" in out, out


@pytest.mark.parametrize("loop", ["self", "pair"])
def test_an_include_link_loop_is_located(repo, loop):
    if loop == "self":
        (repo / "a.yaml").symlink_to("a.yaml")
    else:
        (repo / "a.yaml").symlink_to("b.yaml")
        (repo / "b.yaml").symlink_to("a.yaml")
    (repo / "small.yaml").write_text("include: [a.yaml]\n" + (repo / "small.yaml").read_text())
    code, out = _validate("small.yaml", cwd=repo)
    assert code == 2, out  # exit 3 (RuntimeError: symlink loop) before
    assert "small.yaml:1:11: error[compose]: cannot include 'a.yaml': too many levels of symbolic links" in out
    code, out = _validate("a.yaml", cwd=repo)
    assert code == 2 and "a.yaml: error[io]: cannot read blueprint: too many levels of symbolic links" in out, out
