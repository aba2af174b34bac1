from __future__ import annotations

from pathlib import Path

import pytest

from supernodeiac.pipeline import Compiled, compile_document, compile_file
from supernodeiac.source import load_text

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINTS = ROOT / "blueprints"


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under a folder, by its posix path relative to it (to compare whole renders)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def compile_text(text: str, name: str = "test.yaml") -> Compiled:
    """Compile blueprint text held in a test (the path shows up in findings)."""
    return compile_document(load_text(text, name))


@pytest.fixture(scope="session")
def small_ib() -> Compiled:
    c = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    assert c.exit_code == 0, [str(f.location) + " " + f.message for f in c.findings]
    return c
