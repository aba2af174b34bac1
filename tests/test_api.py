"""The documented Python API: names, types shipped (py.typed), and that it does what the CLI does."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT

import supernodeiac as snc
from supernodeiac.cli import main


def test_public_names_resolve_and_all_is_complete():
    assert sorted(snc.__all__) == sorted([*snc._EXPORTS, "__version__"])
    for name in snc.__all__:
        assert getattr(snc, name) is not None
    assert callable(snc.diff) and snc.diff.__module__ == "supernodeiac.compare"


def test_py_typed_ships_with_the_package():
    assert (ROOT / "supernodeiac" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


def test_compile_render_diff_through_the_api(tmp_path):
    c = snc.compile_file(BLUEPRINTS / "small-ib.yaml")
    assert isinstance(c, snc.Compiled) and c.stage is snc.Stage.BUILT and c.exit_code == 0
    assert all(isinstance(f, snc.Finding) and isinstance(f.severity, snc.Severity) for f in c.findings)
    files, notices = snc.render(c)
    out = snc.write(files, tmp_path / "o", c.blueprint.metadata.name)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted([*files, "MANIFEST.json"])
    assert snc.drift_findings(files, c.blueprint.metadata.name, out) == []
    d = snc.diff(c, snc.compile_text((BLUEPRINTS / "small-ib.yaml").read_text(), "same.yaml"))
    assert isinstance(d, snc.Diff) and d.empty
    assert snc.diff_text(d).startswith("snc diff ") and snc.diff_markdown(d).startswith("### snc diff")


def test_importing_the_package_is_cheap():
    code = "import sys, supernodeiac; print('supernodeiac.pipeline' in sys.modules, 'pydantic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_completion_scripts():
    markers = {"bash": "complete -o nosort -F", "zsh": "#compdef snc", "fish": "complete --no-files --command snc"}
    for shell, marker in markers.items():
        result = CliRunner().invoke(main, ["completion", shell])
        assert result.exit_code == 0 and marker in result.output and "_SNC_COMPLETE" in result.output


def test_rules_command_lists_the_catalogue():
    out = CliRunner().invoke(main, ["rules"]).output
    assert len(out.splitlines()) == len(snc.RULES) and any(line.startswith("reach ") for line in out.splitlines())
