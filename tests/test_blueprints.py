"""Every shipped blueprint validates clean and renders, through the real CLI entry point."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS

from supernodeiac.cli import main
from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file

SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))


def test_there_are_blueprints():
    assert len(SHIPPED) >= 1


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_blueprint_is_clean(path):
    c = compile_file(str(path))
    bad = [f"{f.location}: {f.severity.value}[{f.rule}] {f.message}" for f in c.findings if f.severity is not Severity.INFO]
    assert c.exit_code == 0 and not bad, bad
    # names are what operators use: they must be unique across the whole fabric
    names = [d.name for d in c.fabric.devices]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_blueprint_renders(path, tmp_path):
    result = CliRunner().invoke(main, ["render", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    cables = (tmp_path / "out" / "cabling" / "cables.csv").read_text().splitlines()
    c = compile_file(str(path))
    assert len(cables) - 1 == len(c.fabric.links)  # one row per link, plus the header
