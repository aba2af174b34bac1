"""Golden outputs for small blueprints: any change to what an operator receives shows up as a diff.

Regenerate after an intended change with ``SNC_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and review the diff like code. SVGs are left out: their bytes depend on the Graphviz version.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import read_tree, shipped_files

GOLDEN = Path(__file__).parent / "golden"
CASES = ["small-ib", "cxl-pool"]


def _artifacts(name: str) -> dict[str, bytes]:
    artifacts = shipped_files(name)  # the whole render, shared with the other tests of this process
    return {path: data for path, data in artifacts.items() if not path.endswith(".svg")}


@pytest.mark.parametrize("name", CASES)
def test_golden(name):
    artifacts = _artifacts(name)
    folder = GOLDEN / name
    if os.environ.get("SNC_UPDATE_GOLDEN"):
        for path, data in artifacts.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_bytes(data)
    expected = read_tree(folder)
    assert sorted(artifacts) == sorted(expected)
    for path, data in sorted(artifacts.items()):
        assert data == expected[path], f"{name}/{path} differs from the golden file"
