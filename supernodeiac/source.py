"""Load a blueprint's YAML with a source map, so every later stage can point at file:line:col.

The loader returns a :class:`Document`: the plain data (dicts, lists, scalars) that pydantic
parses, plus the ruamel round-trip tree kept only to answer "where is this path in the file?".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from .findings import Finding, Location, Severity

PathKey = str | int
BlueprintPath = tuple[PathKey, ...]


class LoadError(Exception):
    """The file could not be read or is not YAML; carries one finding for the CLI."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


@dataclass(slots=True)
class Document:
    """One loaded blueprint: plain data for parsing, the round-trip tree for locations."""

    path: str
    data: Any
    tree: Any = field(repr=False)

    def locate(self, path: BlueprintPath) -> Location:
        """The file:line:col of the deepest node of ``path`` that exists in the file.

        A path into something the YAML did not spell out (a default) points at its nearest
        written ancestor, which is where a user would add the missing key.
        """
        node = self.tree
        line, col = 0, 0
        for key in path:
            if isinstance(node, CommentedMap) and key in node:
                # Point at the key for mappings: "unknown key" and "bad value" both read well there.
                line, col = node.lc.key(key)
                node = node[key]
            elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
                line, col = node.lc.item(key)
                node = node[key]
            else:
                break
        else:
            if isinstance(node, CommentedMap | CommentedSeq) and not path:
                line, col = node.lc.line, node.lc.col
        return Location(self.path, line + 1, col + 1)


def _plain(node: Any) -> Any:
    """Round-trip YAML nodes to plain Python types (pydantic and hashing want plain data)."""
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def load_text(text: str, path: str) -> Document:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path, 1, 1)
        problem = exc.problem or exc.context or "not valid YAML"
        raise LoadError(
            Finding(
                "yaml-syntax",
                Severity.ERROR,
                f"YAML syntax error: {problem}",
                hint="check indentation and quoting near this position",
                location=where,
            )
        ) from None
    except YAMLError as exc:
        raise LoadError(Finding("yaml-syntax", Severity.ERROR, f"YAML error: {exc}", location=Location(path, 1, 1))) from None
    if not isinstance(tree, CommentedMap):
        raise LoadError(
            Finding(
                "yaml-shape",
                Severity.ERROR,
                "a blueprint must be a YAML mapping (apiVersion, kind, metadata, ...)",
                hint="start the file with 'apiVersion: supernodeiac/v1'",
                location=Location(path, 1, 1),
            )
        )
    return Document(path=path, data=_plain(tree), tree=tree)


def load_file(path: str | Path) -> Document:
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LoadError(
            Finding("io", Severity.ERROR, f"cannot read blueprint: {reason}", location=Location(shown, 0, 0))
        ) from None
    return load_text(text, shown)
