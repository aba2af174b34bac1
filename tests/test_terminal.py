"""The terminal experience: progress on long runs, root causes first, source snippets, colour."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT

from supernodeiac.cli import main
from supernodeiac.pipeline import compile_file

SMALL = BLUEPRINTS / "small-ib.yaml"
ESCAPE = re.compile(r"\x1b[\[\]()]")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "SNC_PROGRESS", "CI")}
    env["PYTHONPATH"] = str(ROOT)
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _on_pty(args: list[str], **env: str) -> tuple[int, str, str]:
    """Run snc with standard error on a pseudo-terminal (stdout a pipe): (exit code, stdout, pty text)."""
    code, out, chunks = _pty_run(args, None, **env)
    return code, out, b"".join(data for _, data in chunks).decode(errors="replace")


def _pty_run(args: list[str], seconds: float | None, **env: str) -> tuple[int, str, list[tuple[float, bytes]]]:
    """snc with standard error on a pseudo-terminal until it ends, or is stopped after ``seconds``
    from its start: (exit code, stdout, what the pty got with the second each piece came)."""
    master, slave = pty.openpty()
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "supernodeiac", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if seconds is None else subprocess.DEVNULL,
        stderr=slave,
        env=_env(**env),
        cwd=ROOT,
    )
    os.close(slave)
    chunks: list[tuple[float, bytes]] = []
    try:
        while seconds is None or time.monotonic() - began < seconds:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed the pty
                    break
                if not data:
                    break
                chunks.append((time.monotonic() - began, data))
            elif proc.poll() is not None:
                break
    finally:
        if seconds is not None:
            proc.kill()
    out = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait()
    os.close(master)
    return code, out, chunks


def _timed_lines(args: list[str], **env: str) -> tuple[int, list[tuple[float, str]]]:
    """Run snc with standard error a pipe (a CI log): its lines with the second each arrived."""
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "supernodeiac", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(**env),
        cwd=ROOT,
        text=True,
    )
    assert proc.stderr is not None
    lines = [(time.monotonic() - began, line.rstrip("\n")) for line in proc.stderr]
    return proc.wait(), lines


# -- progress --------------------------------------------------------------------------------------


def test_progress_shows_on_a_terminal_and_is_erased(tmp_path):
    code, out, tty = _on_pty(["render", str(SMALL), "-o", str(tmp_path / "out")])
    assert code == 0, tty
    assert "wrote" in out
    # The live line names the blueprint and a stage with its elapsed seconds ...
    assert re.search(r"small-ib\.yaml: (load|parse|build|check|render|write)\b.*\(\d+ s\)", tty), tty
    # ... and is drawn with terminal controls that erase it at the end.
    assert ESCAPE.search(tty)


def test_quiet_shows_no_progress(tmp_path):
    code, _, tty = _on_pty(["render", "-q", str(SMALL), "-o", str(tmp_path / "out")])
    assert code == 0
    assert tty == ""
    code, lines = _timed_lines(["render", "-q", str(SMALL), "-o", str(tmp_path / "out")], SNC_PROGRESS_INTERVAL="0.05")
    assert code == 0 and lines == []


def test_no_color_on_a_terminal_writes_plain_lines_without_escape_codes(tmp_path):
    code, _, tty = _on_pty(["render", str(SMALL), "-o", str(tmp_path / "out")], NO_COLOR="1", SNC_PROGRESS_INTERVAL="0.05")
    assert code == 0
    assert not ESCAPE.search(tty), repr(tty[:300])
    assert re.search(r"small-ib\.yaml: \w+", tty)


def test_ci_log_gets_a_plain_line_every_interval(tmp_path):
    interval = 0.2
    code, lines = _timed_lines(["render", str(SMALL), "-o", str(tmp_path / "out")], SNC_PROGRESS_INTERVAL=str(interval))
    assert code == 0
    progress = [(t, line) for t, line in lines if re.match(r".*small-ib\.yaml: [\w >-]+ \(\d+ s\)$", line)]
    assert progress, lines
    assert not any(ESCAPE.search(line) for _, line in lines)
    # No gap between two progress lines much longer than the interval (the work runs in between).
    gaps = [b - a for (a, _), (b, _) in zip(progress, progress[1:])]
    assert all(g < interval * 10 for g in gaps), gaps


def _pty_lines(args: list[str], seconds: float, **env: str) -> list[tuple[float, str]]:
    """Standard error of snc on a pseudo-terminal for ``seconds`` from the process's start, each
    line with the second it arrived; then the process is stopped (a long run is not waited for)."""
    lines: list[tuple[float, str]] = []
    pending = b""
    for at, data in _pty_run(args, seconds, **env)[2]:
        *done, pending = (pending + data).split(b"\n")
        lines += [(at, line.decode(errors="replace").rstrip("\r")) for line in done]
    return lines


def test_a_large_render_says_what_it_does_within_seconds_of_starting(tmp_path):
    """The 131,072-GPU design: the first line within 3 s of the process's start (before the
    pipeline's imports end), then one every interval while it imports, loads and builds."""
    sys.path.insert(0, str(ROOT / "bench"))
    import generate  # bench/generate.py

    path = generate.write("131k", tmp_path)
    interval = 0.5
    lines = _pty_lines(
        ["render", "--force", str(path), "-o", str(tmp_path / "out")], 4.0, NO_COLOR="1", SNC_PROGRESS_INTERVAL=str(interval)
    )
    progress = [(t, line) for t, line in lines if re.match(r".*bench-131k\.yaml: [\w >-]+ \(\d+ s\)$", line)]
    assert progress, lines
    assert progress[0][0] < 3.0, progress
    # The line's clock counts from the process's start, not from the end of the imports.
    counted = int(re.findall(r"\((\d+) s\)$", progress[0][1])[0])
    assert counted >= round(progress[0][0]) - 1, progress
    assert len(progress) >= 3, progress
    gaps = [b - a for (a, _), (b, _) in zip(progress, progress[1:])]
    assert max(gaps) < interval * 4, gaps


def test_the_default_interval_keeps_ci_logs_under_ten_seconds_between_lines(monkeypatch):
    from supernodeiac import cli

    monkeypatch.delenv("SNC_PROGRESS_INTERVAL", raising=False)
    assert cli.FIRST_PROGRESS_S + cli._progress_interval() <= 10
    assert cli._progress_interval() * 2 <= 10  # one late tick (a busy machine) still within 10 s


def test_verbose_times_every_stage_and_renderer():
    result = CliRunner().invoke(main, ["render", "-v", str(SMALL), "-o", "/dev/null/x", "--check"])
    timed = set(re.findall(r"small-ib\.yaml: +([\w-]+) \d+\.\d\d s$", result.output, re.M))
    assert {"load", "parse", "build", "check", "render"} <= timed, result.output
    assert {"cabling", "sonic", "opensm", "bom"} <= timed


# -- root cause first ---------------------------------------------------------------------------------


def _grown(tmp_path: Path, management: bool = True) -> Path:
    """The 4-SU SuperPOD grown by one SU: the fifth SU's leaves land on the spines' rack units."""
    text = (BLUEPRINTS / "dgx-h100-superpod-4su.yaml").read_text()
    text = text.replace(
        "    - {name: N, racks: 6}", "    - {name: C, racks: 16, budget: {power_kw: 45}}\n    - {name: N, racks: 8}"
    )
    su5 = "  - {name: dgx-c, model: hgx-h100, count: 32, placement: {row: C, per_rack: 4, first_u: 2}}\n"
    text = text.replace("  - {name: ufm,", su5 + "  - {name: ufm,")
    text = text.replace("      - group: dgx-b\n", "      - group: dgx-b\n      - group: dgx-c\n")
    if not management:
        text = text.split("management:")[0]
    path = tmp_path / "grown.yaml"
    path.write_text(text)
    return path


def test_su_growth_reports_rack_space_first_and_explains_the_port_budget(tmp_path):
    compiled = compile_file(_grown(tmp_path))
    errors = [f for f in compiled.findings if f.severity.value == "error"]
    rules = [f.rule for f in errors]
    assert rules[0] == "rack-space", rules
    assert rules.count("rack-space") == 8  # the 8 leaves of SU 5 on the 8 spines' units of N05
    assert "port-budget" in rules and rules.index("port-budget") > max(i for i, r in enumerate(rules) if r == "rack-space")
    budget = next(f for f in errors if f.rule == "port-budget")
    assert "consequence of the 8 rack-space error(s) above" in budget.hint
    assert "PDU" not in budget.message + budget.hint  # the blueprint has none
    # The same overlaps as a build without the management network finds.
    alone = [f.message for f in compile_file(_grown(tmp_path, management=False)).findings if f.rule == "rack-space"]
    assert sorted(alone) == sorted(f.message for f in errors if f.rule == "rack-space")


def test_diff_with_an_unbuildable_side_prints_its_findings(tmp_path):
    result = CliRunner().invoke(main, ["diff", str(BLUEPRINTS / "dgx-h100-superpod-4su.yaml"), str(_grown(tmp_path))])
    assert result.exit_code == 2
    assert "error[rack-space]" in result.output and "error[port-budget]" in result.output
    assert "could not be built" in result.output


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_short_help(flag):
    result = CliRunner().invoke(main, [flag])
    assert result.exit_code == 0 and "Usage:" in result.output
    result = CliRunner().invoke(main, ["render", flag])
    assert result.exit_code == 0 and "--out" in result.output


# -- compiler-style display ----------------------------------------------------------------------------


def _planted(tmp_path: Path) -> Path:
    """small-ib with a switch model that does not exist."""
    text = SMALL.read_text().replace("switch: qm9700", "switch: qm9799", 1)
    path = tmp_path / "planted.yaml"
    path.write_text(text)
    return path


def test_a_planted_error_shows_its_source_line_and_a_caret(tmp_path):
    path = _planted(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code in (1, 2)
    lines = result.output.splitlines()
    head = next(i for i, line in enumerate(lines) if "error[" in line and "qm9799" in line)
    loc = re.match(r".*?:(\d+):(\d+): ", lines[head])
    assert loc, lines[head]
    number, col = int(loc.group(1)), int(loc.group(2))
    source = path.read_text().splitlines()[number - 1]
    assert lines[head + 2] == f"  {number} | {source}"
    caret = lines[head + 3]
    start = caret.index("^")
    assert start == len(f"  {number} | ") + col - 1
    # The span covers the token at the column (the key or the value), no more.
    token = re.match(r"[^\s:,{}\[\]#]+", source[col - 1 :])
    assert token and caret[start:] == "^" * len(token.group())
    assert not ESCAPE.search(result.output)  # not a terminal: no colour


def test_colour_on_a_terminal_and_none_with_no_color(tmp_path):
    path = _planted(tmp_path)
    # Findings go to standard output: give the command a terminal for both streams via FORCE_COLOR
    # and check the codes, then NO_COLOR (which wins) takes every one away.
    forced = CliRunner().invoke(main, ["validate", str(path)], env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert "\x1b[1;31merror[" in forced.output and "\x1b[0m" in forced.output
    plain = CliRunner().invoke(main, ["validate", str(path)], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert not ESCAPE.search(plain.output) and "error[" in plain.output
    code, out, tty = _on_pty(["explain", str(path)], NO_COLOR="1")  # findings on the terminal (stderr)
    assert "error[" in tty and not ESCAPE.search(tty), repr(tty[:300])
    code, out, tty = _on_pty(["explain", str(path)])
    assert "\x1b[1;31merror[" in tty


def test_repeated_findings_at_one_line_are_one_annotation(tmp_path):
    from supernodeiac.findings.formats import parse_workflow_command

    result = CliRunner().invoke(main, ["validate", "--format", "github", str(_grown(tmp_path))])
    commands = [parse_workflow_command(line) for line in result.stdout.splitlines() if line.startswith("::")]
    rack = [c for c in commands if c[1]["title"] == "rack-space"]
    assert len(rack) == 1
    assert rack[0][2].startswith("8 rack-space errors here: ib-spine-001 ") and "and 5 more" in rack[0][2]
    assert [c[1]["title"] for c in commands] == ["rack-space", "port-budget"]


def test_rules_rule_explains_one_rule_and_how_to_silence_it():
    from supernodeiac.findings.rules import RULES

    [rule] = [r for r in RULES if r.id == "rack-space"]
    result = CliRunner().invoke(main, ["rules", "rack-space"])
    assert result.exit_code == 0
    assert result.output.startswith(f"rack-space (build stage): {rule.short}")
    assert " ".join(result.output.split()).count(rule.full) == 1
    assert '[tool.snc.severity] rack-space = "warning"' in " ".join(result.output.split())
    assert "cannot be silenced" in CliRunner().invoke(main, ["rules", "yaml-syntax"]).output
    wrong = CliRunner().invoke(main, ["rules", "rack-spac"])
    assert wrong.exit_code == 2 and "did you mean rack-space" in wrong.output


def test_version_names_the_catalogue():
    from supernodeiac.catalog import catalogue_version

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert re.fullmatch(r"snc, version \S+, catalogue [0-9a-f]{12} \(\d+ data files\)\n", result.output)
    assert catalogue_version() in result.output


def test_render_json_lists_the_files_written_with_their_hashes(tmp_path):
    import hashlib
    import json

    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", "--format", "json", str(SMALL), "-o", str(out)])
    assert result.exit_code == 0
    [doc] = json.loads(result.stdout)
    assert doc["out"] == str(out)
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != "MANIFEST.json")
    assert [f["path"] for f in doc["files"]] == on_disk
    for f in doc["files"]:
        data = (out / f["path"]).read_bytes()
        assert f["bytes"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()


def test_drift_without_graphviz_names_the_missing_tool(tmp_path, monkeypatch):
    import shutil as sh

    if sh.which("dot") is None:
        pytest.skip("needs Graphviz for the committed render")
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["render", "-q", str(SMALL), "-o", str(out)]).exit_code == 0
    assert any(out.rglob("*.svg"))
    import supernodeiac.outputs.diagram as diagram

    monkeypatch.setattr(diagram.shutil, "which", lambda name, *a, **k: None)
    result = CliRunner().invoke(main, ["render", "--check", str(SMALL), "-o", str(out)])
    assert result.exit_code == 1
    svg = [line for line in result.output.splitlines() if ".svg: error[drift]" in line]
    assert svg and all("Graphviz `dot` not found" in line for line in svg), result.output
    assert "stale or foreign" not in result.output
    # Left out, as the pre-commit hook and the Action do: up to date.
    clean = CliRunner().invoke(main, ["render", "--check", "--exclude", "diagrams/*.svg", str(SMALL), "-o", str(out)])
    assert clean.exit_code == 0, clean.output


def test_the_pre_commit_hook_leaves_svgs_out_as_the_action_does():
    from ruamel.yaml import YAML

    hooks = {h["id"]: h for h in YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text())
    default = action["inputs"]["check-exclude"]["default"]
    assert f'--exclude "{default}"' in hooks["snc-render-check"]["entry"]


def test_counts_agree_with_their_nouns():
    from supernodeiac.util.number_format import plural

    assert [plural("spine", n) for n in (0, 1, 8)] == ["spines", "spine", "spines"]
    assert (plural("leaf"), plural("switch"), plural("leaf", 1)) == ("leaves", "switches", "leaf")
    text = "".join(CliRunner().invoke(main, ["explain", str(b)]).stdout for b in sorted(BLUEPRINTS.glob("*.yaml")))
    assert not re.search(r"(?<![\d,.])1 (racks|links|spines|cores|devices|ports|nodes)\b", text)
    assert "leafs" not in text


@pytest.mark.parametrize("shape", ["ib-fat-tree", "roce", "nvl72", "oex"])
def test_init_writes_a_commented_starter_that_validates_clean(tmp_path, shape):
    path = tmp_path / f"my-{shape}.yaml"
    result = CliRunner().invoke(main, ["init", "--shape", shape, str(path)])
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert text.startswith(f"# A starter blueprint written by `snc init --shape {shape}`")
    compiled = compile_file(path)
    assert compiled.exit_code == 0 and compiled.errors == 0
    assert not [f for f in compiled.findings if f.severity.value == "warning"]
    assert compiled.blueprint.metadata.name == f"my-{shape}"
    # An existing file stays unless --force; a name that would reach outputs unchecked is refused.
    assert CliRunner().invoke(main, ["init", "--shape", shape, str(path)]).exit_code == 1
    assert CliRunner().invoke(main, ["init", "--shape", shape, "--force", str(path)]).exit_code == 0
    bad = CliRunner().invoke(main, ["init", "--shape", shape, "--name", "x; rm -rf /", str(tmp_path / "b.yaml")])
    assert bad.exit_code == 2 and not (tmp_path / "b.yaml").exists()
