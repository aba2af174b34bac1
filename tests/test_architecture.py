"""The layer contract of the package (docs/architecture.md), checked on the AST import graph.

Every room (a folder, or one of the few top-level modules) has a layer; a module may import its
own room and rooms of lower layers only, lazy imports (inside functions) and ``TYPE_CHECKING``
imports included. Rooms on one layer are independent of each other. No module imports in a
circle. The package keeps at most eight top-level modules, and every module path the docs name
exists.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "supernodeiac"

# Lowest first. A room's imports may only go to rooms of lower layers (and to itself).
LAYERS: list[tuple[str, ...]] = [
    ("util",),
    ("findings", "model"),
    ("catalog",),
    ("load", "fabric"),
    ("facts",),
    ("builders",),
    ("checks", "outputs"),
    ("config", "writer", "render_state", "pipeline"),
    ("explain", "verify", "compare", "push"),
    ("cli", "__init__"),
    ("__main__",),
]
LAYER_OF = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}


def module_name(path: Path, package: Path) -> tuple[str, bool]:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join(parts), is_pkg


def package_modules(package: Path) -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        if "templates" in path.relative_to(package).parts:
            continue
        name, is_pkg = module_name(path, package)
        out[name] = (path, is_pkg)
    return out


def room_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def import_edges(package: Path) -> list[tuple[str, str, int]]:
    """(importer, imported module, line) for every import of the package, wherever it stands."""
    mods = package_modules(package)
    names = frozenset(mods)
    edges = []
    for name, (path, is_pkg) in mods.items():
        edges.extend(_module_edges(path.read_text(), name, is_pkg, package.name, names))
    return edges


@cache
def _module_edges(text: str, name: str, is_pkg: bool, top: str, mods: frozenset[str]) -> tuple[tuple[str, str, int], ...]:
    """One module's imports of the package, by its text (the planted copies change one or two
    modules: the others are not parsed again)."""
    edges = []
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base) + (f".{node.module}" if node.module else "")
            else:
                target = node.module or ""
            if target != top and not target.startswith(top + "."):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                edges.append((name, sub if sub in mods else target, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == top or alias.name.startswith(top + "."):
                    edges.append((name, alias.name, node.lineno))
    return tuple(edges)


def contract_violations(package: Path) -> list[str]:
    problems = []
    mods = package_modules(package)
    for importer, imported, line in import_edges(package):
        a, b = room_of(importer), room_of(imported)
        if a == b:
            continue
        la, lb = LAYER_OF.get(a), LAYER_OF.get(b)
        where = f"{mods[importer][0].relative_to(package.parent)}:{line}"
        if la is None or lb is None:
            problems.append(f"{where}: room {a if la is None else b!r} has no layer in the contract")
        elif lb > la:
            problems.append(f"{where}: {importer} ({a}, layer {la}) imports {imported} ({b}, layer {lb}): upward")
        elif lb == la:
            problems.append(f"{where}: {importer} imports {imported}: rooms {a} and {b} share layer {la}")
    return problems


def circles(package: Path) -> list[list[str]]:
    g = nx.DiGraph()
    for importer, imported, _line in import_edges(package):
        if importer != imported:
            g.add_edge(importer, imported)
    # A package's face importing its plugins, which import a sibling base module, is no circle;
    # a plugin importing its package's face (which imports the plugin) is.
    return [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]


def test_no_upward_or_sideways_imports():
    assert contract_violations(PACKAGE) == []


def test_no_import_circles():
    assert circles(PACKAGE) == []


def test_every_room_has_a_layer():
    rooms = {room_of(m) for m in package_modules(PACKAGE)}
    assert rooms <= set(LAYER_OF), sorted(rooms - set(LAYER_OF))


def test_at_most_eight_top_level_modules():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


@pytest.fixture
def planted(tmp_path):
    """A copy of the package where one lower module imports a higher one."""
    import shutil

    copy = tmp_path / "supernodeiac"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("templates", "__pycache__", "data"))
    return copy


def test_planted_upward_import_is_caught(planted):
    target = planted / "facts" / "hosts.py"
    target.write_text(target.read_text() + "\n\ndef _late():\n    from ..outputs import render_all  # noqa\n")
    found = contract_violations(planted)
    assert any("facts.hosts" in p and "upward" in p for p in found), found


def test_planted_circle_is_caught(planted):
    target = planted / "util" / "registry.py"
    target.write_text(target.read_text() + "\nfrom . import templating  # noqa\n")
    templating = planted / "util" / "templating.py"
    templating.write_text(templating.read_text() + "\nfrom . import registry  # noqa\n")
    assert any("supernodeiac.util.registry" in c for c in circles(planted))


def test_planted_sideways_import_is_caught(planted):
    target = planted / "checks" / "ports.py"
    target.write_text(target.read_text() + "\nfrom ..outputs import base  # noqa\n")
    assert any("share layer" in p for p in contract_violations(planted))


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `supernodeiac/x/y.py`, `x/y.py` or `y.py` in backticks: a module of this package by path.
PATH_IN_TICKS = re.compile(r"`((?:supernodeiac/)?(?:[a-z_]+/)*[a-z_0-9]+\.py)`")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_module_paths_in_docs_resolve(doc):
    known = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    others = [p for p in ROOT.glob("*/*.py")] + [p for p in (ROOT / "tests").rglob("*.py")]
    elsewhere = {str(p.relative_to(ROOT)) for p in others} | {p.name for p in others}
    missing = []
    for m in PATH_IN_TICKS.finditer(doc.read_text()):
        path = m.group(1).removeprefix("supernodeiac/")
        if path in known or path in elsewhere or m.group(1) in elsewhere:
            continue
        # a bare file name must be unique in the package to count as resolved
        if "/" not in path and sum(1 for k in known if k.endswith("/" + path) or k == path) == 1:
            continue
        missing.append(m.group(1))
    assert missing == [], f"{doc.name} names modules that do not exist: {sorted(set(missing))}"


def test_architecture_page_maps_every_module():
    """docs/architecture.md's module map names every module (``python -m tests.helpers.module_map``)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    modules = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if "templates" not in p.parts)
    missing = [m for m in modules if f"| `{m}` |" not in page]
    assert missing == [], f"regenerate the map in docs/architecture.md: {missing}"
