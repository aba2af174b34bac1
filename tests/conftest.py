from __future__ import annotations

from pathlib import Path

import pytest

from supernodeiac.pipeline import Compiled, compile_document, compile_file
from supernodeiac.source import load_text

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINTS = ROOT / "blueprints"


def compile_text(text: str, name: str = "test.yaml") -> Compiled:
    """Compile blueprint text held in a test (the path shows up in findings)."""
    return compile_document(load_text(text, name))


@pytest.fixture(scope="session")
def small_ib() -> Compiled:
    c = compile_file(str(BLUEPRINTS / "small-ib.yaml"))
    assert c.exit_code == 0, [str(f.location) + " " + f.message for f in c.findings]
    return c
