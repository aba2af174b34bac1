"""The rule catalogue covers every rule id the code emits, and docs/rules.md is generated from it."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

from supernodeiac.findings.rules import BY_ID, RULES, markdown, rule

# Calls whose first argument is a rule id (findings, build failures, planner errors).
EMITTERS = {"Finding", "error", "warning", "info", "fail", "PlanError"}


def emitted_rule_ids() -> dict[str, set[str]]:
    """Rule id -> the modules that emit it, read from the source (string literals only)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "supernodeiac").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            first = node.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            if literal and (name in EMITTERS or (name == "__init__" and "Error" in ast.unparse(func))):
                found.setdefault(first.value, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_emitted_rule_is_in_the_catalogue():
    emitted = emitted_rule_ids()
    assert {"reach", "schema", "yaml-syntax", "port-budget", "compose", "config", "drift"} <= set(emitted)
    missing = {r: sorted(m) for r, m in emitted.items() if r not in BY_ID}
    assert not missing, (
        f"add these rule ids to supernodeiac/rules.py (then python -m supernodeiac.findings.rules > docs/rules.md): {missing}"
    )


def test_topology_too_big_is_covered():
    # raised through ClosSizeError.__init__, which the scan above does not see by name
    assert "topology-too-big" in BY_ID


def test_catalogue_entries_are_complete_and_unique():
    assert len({r.id for r in RULES}) == len(RULES)
    for r in RULES:
        assert r.short and not r.short.endswith(".") and r.full.endswith("."), r.id
        assert r.stage in {"load", "parse", "build", "check", "render", "config"}, r.id
    assert rule("not-a-rule").short == "snc rule not-a-rule"


def test_docs_rules_md_is_generated_from_the_catalogue():
    text = (Path(ROOT) / "docs" / "rules.md").read_text()
    assert text == markdown(), "regenerate: python -m supernodeiac.findings.rules > docs/rules.md"
    for r in RULES:
        assert f"\n### {r.id}\n" in text
