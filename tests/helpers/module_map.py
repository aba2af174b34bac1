"""Which test files exercise each module of the package, for docs/architecture.md's map.

A test file counts for a module when it imports it (or a name from it) directly, or when the
file is named after the module's topic (``test_scaleup.py`` for ``builders/scaleup.py`` and
``checks/scaleup.py``). Every test that compiles or renders a blueprint also runs the stages
the pipeline wires together; a module no test names is listed as "(through the pipeline)".
Run ``python -m tests.helpers.module_map`` to print the table.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = ROOT / "supernodeiac"
TESTS = ROOT / "tests"


def package_modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if "templates" in rel.parts:
            continue
        out.append(str(rel))
    return out


def _as_path(module: str) -> list[str]:
    parts = module.split(".")[1:]
    if not parts:
        return ["__init__.py"]
    return ["/".join(parts) + ".py", "/".join(parts) + "/__init__.py"]


def tests_by_module() -> dict[str, set[str]]:
    known = set(package_modules())
    found: dict[str, set[str]] = defaultdict(set)
    for test in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(test.read_text(), str(test))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("supernodeiac"):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("supernodeiac")]
            for name in names:
                for path in _as_path(name):
                    if path in known:
                        found[path].add(str(test.relative_to(ROOT)))
    tests = sorted(TESTS.glob("test_*.py"))
    for module in known:
        stem = Path(module).stem if Path(module).stem != "__init__" else Path(module).parent.name
        topic = stem.removesuffix("s") if len(stem) > 4 else stem
        for test in tests:
            name = test.stem.removeprefix("test_")
            if topic and (name == stem or name.removesuffix("s") == topic or (len(topic) > 4 and topic in name)):
                found[module].add(str(test.relative_to(ROOT)))
    return found


def table() -> str:
    found = tests_by_module()
    lines = ["| module | tests that import it |", "|---|---|"]
    for module in package_modules():
        tests = sorted(found.get(module, set()))
        shown = ", ".join(f"`{Path(t).name}`" for t in tests[:6]) + (f" and {len(tests) - 6} more" if len(tests) > 6 else "")
        lines.append(f"| `{module}` | {shown or '(through the pipeline)'} |")
    return "\n".join(lines) + "\n"


def write_page(page: Path = ROOT / "docs" / "architecture.md") -> None:
    """Replace the table of the page's last section, "## Module map", by a fresh one."""
    head, sep, rest = page.read_text().partition("## Module map\n")
    intro = rest.split("| module |", 1)[0]
    page.write_text(head + sep + intro + table())


if __name__ == "__main__":  # pragma: no cover
    import sys

    if "--write" in sys.argv:
        write_page()
    else:
        print(table(), end="")
