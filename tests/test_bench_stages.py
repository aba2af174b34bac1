"""bench/stages.py times every stage, check and renderer, and writes the same files for its floor."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import stages  # noqa: E402  (bench/stages.py)

from supernodeiac.checks import CHECKS  # noqa: E402
from supernodeiac.outputs import RENDERERS  # noqa: E402
from supernodeiac.pipeline import compile_file, render  # noqa: E402


def test_every_stage_check_and_renderer_once_and_the_floor_writes_the_render(tmp_path: Path) -> None:
    blueprint = ROOT / "blueprints" / "small-ib.yaml"
    result = stages.stages(blueprint, tmp_path / "out", do_render=True)
    names = [(s["stage"], s["name"]) for s in result["stages"]]
    assert [n for st, n in names if st == "check"] == list(CHECKS.names())
    assert [n for st, n in names if st == "render"] == list(RENDERERS.names())
    assert {st for st, _ in names} == {"import", "load", "parse", "build", "check", "render", "write"}
    compiled = compile_file(blueprint)
    artifacts, _ = render(compiled)
    assert result["files"] == len(artifacts) + 1  # and MANIFEST.json
    assert result["bytes"] > sum(len(v) for v in artifacts.values())  # the manifest's bytes too
    assert compiled.fabric is not None and result["links"] == len(compiled.fabric.links)
    assert result["floor_cpu_s"] > 0
    assert not (tmp_path / "out").exists() and not (tmp_path / "floor").exists()  # both cleaned up
