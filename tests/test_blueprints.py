"""Every shipped blueprint validates clean and renders, through the real CLI entry point, to the
bytes recorded in ``tests/golden/manifests/<blueprint>.json`` (a SHA-256 per file; SVGs left out,
their bytes are Graphviz's). Regenerate after an intended change of output with
``SNC_UPDATE_GOLDEN=1 pytest tests/test_blueprints.py`` and review the diff of the hashes' files."""

from __future__ import annotations

import json
import os

import pytest
from conftest import BLUEPRINTS, ROOT, shipped, shipped_render

from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file

SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))
MANIFESTS = ROOT / "tests" / "golden" / "manifests"


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
def test_shipped_blueprint_renders(path):
    out = shipped_render(path.stem)  # `snc render` through the CLI entry point, shared with other tests
    links = (out / "cabling" / "links.csv").read_text().splitlines()
    c = shipped(path.stem)
    assert len(links) - 1 == len(c.fabric.links)  # one row per link, plus the header
    # Same blueprint, same bytes as recorded: a change of any output is deliberate and reviewed.
    manifest = json.loads((out / "MANIFEST.json").read_text())
    hashes = {f["path"]: f["sha256"] for f in manifest["files"] if not f["path"].endswith(".svg")}
    golden = MANIFESTS / f"{path.stem}.json"
    if os.environ.get("SNC_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    recorded = json.loads(golden.read_text())
    changed = sorted(p for p in recorded.keys() | hashes.keys() if recorded.get(p) != hashes.get(p))
    assert not changed, f"{len(changed)} outputs differ from {golden.name} (SNC_UPDATE_GOLDEN=1 to record): {changed[:10]}"
