"""The pre-commit hook definitions and the GitHub Action's steps, run as the shell commands they are,
in a scratch git repository of blueprints with committed outputs."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, ROOT
from ruamel.yaml import YAML

from supernodeiac.findings.formats import parse_workflow_command

pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
# the UFM pair ten units up rack N02 (U30-U31, free)
MOVED = SMALL.replace(
    "placement: {row: N, first_rack: 2, per_rack: 2, first_u: 20}", "placement: {row: N, first_rack: 2, per_rack: 2, first_u: 30}"
)
assert MOVED != SMALL


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this environment's snc first
    env.update(extra or {})
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300)


def _git(repo: Path, *args: str) -> None:
    done = _run(["git", *args], repo)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """main: small-ib and its committed render; branch pr: UFM moved up its rack, render updated."""
    repo = tmp_path_factory.mktemp("blueprints-repo")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    (repo / "blueprints").mkdir()
    (repo / "blueprints" / "small.yaml").write_text(SMALL)
    assert _run(["snc", "render", "blueprints/small.yaml"], repo).returncode == 0
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-q", "-b", "pr")
    (repo / "blueprints" / "small.yaml").write_text(MOVED)
    assert _run(["snc", "render", "blueprints/small.yaml"], repo).returncode == 0
    _git(repo, "commit", "-qam", "move the UFM up its rack")
    return repo


def _restore(repo: Path) -> None:
    _git(repo, "checkout", "-q", "--", ".")


# -- pre-commit ----------------------------------------------------------------------------------------------


def _hooks() -> dict[str, dict]:
    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return {h["id"]: h for h in hooks}


def _run_hook(hook: dict, repo: Path) -> subprocess.CompletedProcess:
    """What pre-commit runs: the entry, its args, then the staged files its `files` pattern matches."""
    files = [f for f in _run(["git", "ls-files"], repo).stdout.split() if re.search(hook["files"], f)]
    assert files, hook["id"]
    return _run([*shlex.split(hook["entry"]), *hook.get("args", []), *files], repo)


def test_pre_commit_hooks_pass_and_fail_as_they_should(repo):
    hooks = _hooks()
    assert set(hooks) == {"snc-validate", "snc-render-check"}
    assert all(h["language"] == "python" for h in hooks.values())
    for hook in hooks.values():
        done = _run_hook(hook, repo)
        assert done.returncode == 0, (hook["id"], done.stdout, done.stderr)
    try:
        path = repo / "out" / "small-ib" / "bom" / "summary.json"
        devices = json.loads(path.read_bytes())["totals"]["devices"]
        path.write_bytes(path.read_bytes().replace(f'"devices": {devices}'.encode(), f'"devices": {devices + 1}'.encode()))
        done = _run_hook(hooks["snc-render-check"], repo)
        assert done.returncode == 1 and "out/small-ib/bom/summary.json: error[drift]" in done.stdout
        (repo / "blueprints" / "small.yaml").write_text(MOVED.replace("count: 16", "cuont: 16"))
        done = _run_hook(hooks["snc-validate"], repo)
        line = MOVED[: MOVED.index("count: 16")].count("\n") + 1
        assert done.returncode == 2 and f"blueprints/small.yaml:{line}:5: error[schema]" in done.stdout
    finally:
        _restore(repo)


# -- the GitHub Action -------------------------------------------------------------------------------------


class Actions:
    """Just enough of the runner to run the composite action's steps: ${{ }} expressions from a
    context, `if` conditions of the shapes the action uses, GITHUB_OUTPUT per step."""

    def __init__(self, repo: Path, tmp: Path, inputs: dict[str, str]) -> None:
        self.action = YAML(typ="safe").load((ROOT / "action.yml").read_text())
        defaults = {k: str(v.get("default", "")) for k, v in self.action["inputs"].items()}
        self.repo, self.tmp = repo, tmp
        self.context: dict[str, str] = {f"inputs.{k}": v for k, v in {**defaults, **inputs}.items()}
        self.context.update(
            {
                "github.action_path": str(ROOT),
                "github.base_ref": "main",
                "github.token": "test-token",
                "github.event.pull_request.number": "7",
                "runner.temp": str(tmp),
            }
        )

    def value(self, expr: str) -> str:
        expr = expr.strip()
        if expr in self.context:
            return self.context[expr]
        raise AssertionError(f"unknown expression {expr!r}")

    def substitute(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m.group(1)), str(text))

    def condition(self, text: str | None) -> bool:
        if text is None:
            return True
        expr = text.strip().removeprefix("${{").removesuffix("}}")
        expr = expr.replace("!cancelled()", "True").replace("&&", " and ").replace("||", " or ")
        expr = re.sub(r"\b(inputs|steps|github)\.[\w.-]+", lambda m: repr(self.value(m.group(0))), expr)
        return bool(eval(expr, {"__builtins__": {}}, {"True": True}))  # noqa: S307 - the action's own conditions

    def run(self, env: dict[str, str]) -> dict[str, subprocess.CompletedProcess]:
        done: dict[str, subprocess.CompletedProcess] = {}
        for step in self.action["runs"]["steps"]:
            assert step["shell"] == "bash" and "uses" not in step
            if not self.condition(step.get("if")):
                continue
            output = self.tmp / f"output-{len(done)}"
            output.write_text("")
            step_env = {k: self.substitute(v) for k, v in step.get("env", {}).items()}
            full = _env({**env, **step_env, "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(self.tmp / "summary.md")})
            result = _run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], self.repo, full)
            done[step["name"]] = result
            for line in output.read_text().splitlines():
                key, _, value = line.partition("=")
                self.context[f"steps.{step.get('id')}.outputs.{key}"] = value
        return done


@pytest.fixture()
def fake_gh(tmp_path) -> Path:
    """A `gh` that records what it was asked to do (and fails --edit-last: no comment yet)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log, body = tmp_path / "gh.log", shlex.quote(str(tmp_path / "comment.md"))
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$@" >> {shlex.quote(str(log))}\n'
        'for a in "$@"; do [ "$a" = --edit-last ] && exit 1; done\n'
        f'prev=""; for a in "$@"; do [ "$prev" = --body-file ] && cp "$a" {body}; prev=$a; done\n'
    )
    gh.chmod(0o755)
    return bin_dir


def test_the_action_validates_checks_and_comments_the_diff(repo, tmp_path, fake_gh):
    actions = Actions(repo, tmp_path, {"install": "none"})
    steps = actions.run({"PATH": f"{fake_gh}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert list(steps) == [
        "Install snc",
        "Validate blueprints",
        "Committed outputs are up to date",
        "Semantic diff of the pull request",
        "Comment the diff",
    ]
    for name, result in steps.items():
        assert result.returncode == 0, (name, result.stdout, result.stderr)
    assert steps["Validate blueprints"].stdout == ""  # clean: no annotation
    comment = (tmp_path / "comment.md").read_text()
    assert comment.startswith("<!-- snc-diff -->\n## supernodeiac: what this pull request changes")
    assert "### snc diff: `" in comment and "**Existing cabling changes: 6 moved; see the work orders.**" in comment
    # The far end re-plugged, escaped for Markdown/HTML (labels are in cables.csv and the JSON report).
    moved = r"far end mgmt-N02:Ethernet19 \[RJ45 20\] (N02 U48) -> mgmt-N02:Ethernet29 \[RJ45 30\] (N02 U48)"
    assert f"ufm-0001-bmc; {moved}" in comment
    calls = (tmp_path / "gh.log").read_text().splitlines()
    assert calls[0].startswith("pr comment 7 --edit-last --body-file ") and calls[1].startswith("pr comment 7 --body-file ")


def test_the_action_fails_with_annotations_on_stale_outputs(repo, tmp_path, fake_gh):
    path = repo / "out" / "small-ib" / "cabling" / "cables.csv"
    try:
        path.write_bytes(path.read_bytes().replace(b",aoc-100g,", b",AOC-100G,", 1))
        steps = Actions(repo, tmp_path, {"install": "none", "comment": "false"}).run({})
        check = steps["Committed outputs are up to date"]
        assert check.returncode == 1
        [line] = [line for line in check.stdout.splitlines() if line.startswith("::error")]
        command, props, message = parse_workflow_command(line)
        assert (
            props["file"] == "out/small-ib/cabling/cables.csv" and props["title"] == "drift" and "columns medium (1)" in message
        )
        assert "Comment the diff" not in steps
    finally:
        _restore(repo)
