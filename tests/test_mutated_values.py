"""Every scalar of a shipped blueprint, replaced by a value a typo could leave there, must give
located findings (or a clean build), never an internal error: the compiler's promise for bad
input, checked field by field rather than case by case."""

from __future__ import annotations

import copy
import io

import pytest
from conftest import BLUEPRINTS
from ruamel.yaml import YAML

from supernodeiac.load.source import load_text
from supernodeiac.pipeline import compile_document

NUMBERS = (0, -1, 10**12, "x")
TEXTS = ("", 0, "no-such-thing")  # 0 for a ratio once divided by zero


def _scalars(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _scalars(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _scalars(value, (*path, i))
    elif not isinstance(node, bool):
        yield path, node


@pytest.mark.parametrize("name", ["small-ib", "dragonfly-plus", "cxl-pool"])
def test_no_mutated_scalar_crashes_the_compiler(name):
    yaml = YAML()
    data = yaml.load((BLUEPRINTS / f"{name}.yaml").read_text())
    tried = 0
    for path, value in list(_scalars(data)):
        for new in NUMBERS if isinstance(value, int | float) else TEXTS:
            mutated = copy.deepcopy(data)
            node = mutated
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = new
            buf = io.StringIO()
            yaml.dump(mutated, buf)
            compiled = compile_document(load_text(buf.getvalue(), f"{name}.yaml"))  # raises on an internal error
            located = [f for f in compiled.findings if f.severity.value == "error"]
            assert all(f.location is not None for f in located), (path, new, [f.message for f in located])
            tried += 1
    assert tried > 60
