from __future__ import annotations

from pathlib import Path

import pytest

from supernodeiac.fabric import Fabric
from supernodeiac.load.source import load_text
from supernodeiac.pipeline import Compiled, compile_document, compile_file

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINTS = ROOT / "blueprints"


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under a folder, by its posix path relative to it (to compare whole renders)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cable_ends(f: Fabric, fabric: str | None = None) -> dict[str, tuple[str, str, str, str]]:
    """Cable ID -> (A device, A port, B device, B port) of every link (of one fabric if named),
    to check that growing a blueprint leaves existing cables where they are."""
    links = f.links if fabric is None else f.links_of(fabric)
    return {
        link.id: (
            f.devices[link.a].name,
            f.port_name(link.a, link.a_port),
            f.devices[link.b].name,
            f.port_name(link.b, link.b_port),
        )
        for link in links
    }


def compile_text(text: str, name: str = "test.yaml") -> Compiled:
    """Compile blueprint text held in a test (the path shows up in findings)."""
    return compile_document(load_text(text, name))


@pytest.fixture(scope="session")
def small_ib() -> Compiled:
    c = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    assert c.exit_code == 0, [str(f.location) + " " + f.message for f in c.findings]
    return c


@pytest.fixture(autouse=True)
def _render_cache(tmp_path_factory, monkeypatch):
    """Tests render every time (many re-render one folder to see what a second render does) and
    never write into the user's ~/.cache; tests/test_incremental.py turns the shortcut back on."""
    monkeypatch.setenv("SNC_CACHE_DIR", str(tmp_path_factory.mktemp("snc-cache")))
    monkeypatch.setenv("SNC_NO_RENDER_CACHE", "1")
