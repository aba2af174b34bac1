"""`snc diff --rev` with revisions that hold ':' (a commit-message search `:/text`, `@{...}`):
read as the commit they name, or refused clearly at the blueprint; before, git split `REV:path`
at the revision's own colon and the blueprint was misread."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac.cli import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "x.yaml").write_text(SMALL)
    git("add", ".")
    git("commit", "-qm", "first: sixteen nodes")
    assert "count: 16" in SMALL
    (tmp_path / "x.yaml").write_text(SMALL.replace("count: 16", "count: 12", 1))
    git("commit", "-qam", "second: twelve nodes")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.usefixtures("repo")
def test_a_message_search_with_a_colon_reads_that_commit():
    result = CliRunner().invoke(main, ["diff", "--rev", ":/first: sixteen..:/second: twelve", "x.yaml", "--no-outputs"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("snc diff :/first: sixteen:x.yaml -> :/second: twelve:x.yaml")
    assert "removed" in result.output  # four nodes fewer: the two commits, not one file read twice
    same = CliRunner().invoke(main, ["diff", "--rev", "HEAD~1..HEAD", "x.yaml", "--no-outputs"])
    assert same.output.split("\n", 1)[1] == result.output.split("\n", 1)[1]


@pytest.mark.parametrize("rev", ["HEAD:x.yaml..HEAD", "HEAD..HEAD~1:x.yaml", ":/no such message..HEAD"])
@pytest.mark.usefixtures("repo")
def test_a_revision_that_names_no_commit_is_refused_at_the_blueprint(rev):
    result = CliRunner().invoke(main, ["diff", "--rev", rev, "x.yaml", "--no-outputs"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    bad = rev.split("..")[0] if rev.split("..")[0] != "HEAD" else rev.split("..")[1]
    assert f"{bad}:x.yaml: error[io]: cannot read blueprint: {bad!r} is not a commit in" in result.output
    assert "nothing compared" in result.output
