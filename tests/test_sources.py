"""The product cites public sources only.

Everything users get (the package with its catalogue data, templates, docs, README, shipped
blueprints, and the rendered goldens as samples of the outputs) must name the documents a
reader can look up: vendor pages, standards, papers, or snc's own docs. The engineers' private
notes and the labels inside them mean nothing to a user, so a mention of one fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PRODUCT = ["supernodeiac", "templates", "docs", "README.md", "blueprints", "tests/golden"]

PRIVATE = re.compile(
    r"\b(?:domain|design|formats|hardware|physical|ibsim)\.md\b"
    r"|\bshared/(?:reference|domain|design)\b|/work/shared\b"
    r"|\bresearch notes?\b"
    r"|\bCatalogue A\b|\bNote B\b",
    re.IGNORECASE,
)


def product_files() -> list[Path]:
    files: list[Path] = []
    for entry in PRODUCT:
        path = ROOT / entry
        if path.is_file():
            files.append(path)
        else:
            files.extend(p for p in sorted(path.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)
    return files


def mentions(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # binary fixtures carry no prose
        return []
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = PRIVATE.search(line)
        if match:
            found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    return found


@pytest.mark.parametrize(
    "text",
    [
        "see physical.md 1.3",
        "(hardware.md, CPO comparison)",
        "formats.md 2.1",
        "domain.md's table",
        "design.md",
        "ibsim.md",
        "shared/domain.md: 60 %",
        "shared/reference/physical.md 1.5",
        "/work/shared/reference",
        "the research notes",
        "(Catalogue A)",
        "Note B quoting the manual",
    ],
)
def test_pattern_catches_each_private_name(text: str) -> None:
    assert PRIVATE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "include: [../shared/catalogue.yaml]",  # a user's own fragment folder
        "catalogue physical.yaml",
        "docs/acceptance.md",
        "docs/architecture.md",
        "a third-party GitHub note quotes it",
    ],
)
def test_pattern_spares_public_names(text: str) -> None:
    assert not PRIVATE.search(text)


def test_product_files_are_scanned() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in product_files()}
    for expected in (
        "README.md",
        "docs/acceptance.md",
        "templates/acceptance-checklist.md.j2",
        "supernodeiac/catalog/data/physical.yaml",
        "supernodeiac/model/hosts.py",
    ):
        assert expected in names


def test_product_cites_no_private_notes() -> None:
    found = [hit for path in product_files() for hit in mentions(path)]
    assert not found, "private notes cited in the product (cite the public source instead):\n" + "\n".join(found)
