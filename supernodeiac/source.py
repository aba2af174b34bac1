"""Load a blueprint's YAML with a source map, so every later stage can point at file:line:col.

The loader returns a :class:`Document`: the plain data (dicts, lists, scalars) that pydantic
parses, plus the ruamel round-trip tree kept only to answer "where is this path in the file?".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.constructor import DuplicateKeyError
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
            if isinstance(node, CommentedMap):
                found = _map_key(node, key)
                if found is _MISSING:
                    break
                # Point at the key for mappings: "unknown key" and "bad value" both read well there.
                pos = _key_position(node, found)
                if pos is None:  # a key merged in with '<<' has no position of its own here
                    break
                line, col = pos
                node = node[found]
            elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
                line, col = node.lc.item(key)
                node = node[key]
            else:
                break
        else:
            if isinstance(node, CommentedMap | CommentedSeq) and not path:
                line, col = node.lc.line, node.lc.col
        return Location(self.path, line + 1, col + 1)


_MISSING = object()


def _map_key(node: CommentedMap, key: PathKey) -> Any:
    """The key of ``node`` that a path step names; paths hold str(key) for non-string YAML keys."""
    if key in node:
        return key
    for k in node:
        if str(k) == str(key):
            return k
    return _MISSING


def _key_position(node: CommentedMap, key: Any) -> tuple[int, int] | None:
    try:
        return node.lc.key(key)
    except (KeyError, TypeError, AttributeError):
        return None


class _Unsupported(Exception):
    """A YAML construct a blueprint does not use; carries the path for the source map."""

    def __init__(self, path: BlueprintPath, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what


def _plain(node: Any, path: BlueprintPath = ()) -> Any:
    """Round-trip YAML nodes to plain Python types (pydantic and hashing want plain data).

    Application tags (``!foo``) are refused rather than passed on: pydantic would print the
    tag object's repr, and a blueprint has no use for them.
    """
    if isinstance(node, TaggedScalar):
        raise _Unsupported(path, f"YAML tag {node.tag.value!r}")
    if isinstance(node, CommentedMap | CommentedSeq):
        tag = getattr(getattr(node, "tag", None), "value", None)
        if tag is not None and tag.startswith("!") and not tag.startswith("tag:yaml.org"):
            raise _Unsupported(path, f"YAML tag {tag!r}")
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v, path + (str(k),)) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_plain(v, path + (i,)) for i, v in enumerate(node)]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def _syntax_finding(exc: MarkedYAMLError, path: str) -> Finding:
    """A ruamel error as a finding at the problem's position, with the context in the hint."""
    mark = exc.problem_mark or exc.context_mark
    where = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path, 1, 1)
    problem = (exc.problem or exc.context or "not valid YAML").strip()
    ctx_mark = exc.context_mark
    hint = "check indentation and quoting near this position"
    if isinstance(exc, DuplicateKeyError):
        # ruamel words it 'found duplicate key "c" with value "2" (original value: "1")'.
        return Finding(
            "yaml-syntax",
            Severity.ERROR,
            problem.replace("found duplicate", "duplicate"),
            hint="a key may appear only once in a mapping: keep one and delete the other",
            location=where,
        )
    if "\t" in problem or "\\t" in problem:  # ruamel prints the tab escaped
        hint = "YAML indents with spaces only: replace the tab with spaces"
    elif "mapping values are not allowed" in problem:
        hint = "is this line indented deeper than the key above it, or does a value hold an unquoted ': '?"
    elif exc.context and ctx_mark is not None and (ctx_mark.line, ctx_mark.column) != (mark.line, mark.column):
        # 'while parsing a flow mapping' at the '{' that was never closed: say where it opened.
        what = exc.context.strip().removeprefix("while parsing ").removeprefix("while scanning ")
        hint = f"in {what} that starts at line {ctx_mark.line + 1}, column {ctx_mark.column + 1}"
        if "flow" in what:
            hint += ": is a closing bracket or a comma missing?"
    return Finding("yaml-syntax", Severity.ERROR, f"YAML syntax error: {problem}", hint=hint, location=where)


def load_text(text: str, path: str) -> Document:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as exc:
        raise LoadError(_syntax_finding(exc, path)) from None
    except YAMLError as exc:
        raise LoadError(Finding("yaml-syntax", Severity.ERROR, f"YAML error: {exc}", location=Location(path, 1, 1))) from None
    if not isinstance(tree, CommentedMap):
        what = "empty" if tree is None else ("a list" if isinstance(tree, CommentedSeq) else f"a {type(tree).__name__} value")
        raise LoadError(
            Finding(
                "yaml-shape",
                Severity.ERROR,
                f"a blueprint must be a YAML mapping (apiVersion, kind, metadata, ...); this file is {what}",
                hint="start the file with 'apiVersion: supernodeiac/v1' and 'kind: Blueprint'",
                location=Location(path, 1, 1),
            )
        )
    doc = Document(path=path, data=None, tree=tree)
    try:
        doc.data = _plain(tree)
    except _Unsupported as exc:
        raise LoadError(
            Finding(
                "yaml-syntax",
                Severity.ERROR,
                f"{exc.what} is not supported in a blueprint",
                exc.path,
                "remove the tag; values are plain strings, numbers, lists and mappings",
                doc.locate(exc.path),
            )
        ) from None
    return doc


def load_file(path: str | Path) -> Document:
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(
            Finding(
                "io",
                Severity.ERROR,
                f"cannot read blueprint: not UTF-8 text (byte {exc.start})",
                hint="save the blueprint as UTF-8 YAML",
                location=Location(shown, 0, 0),
            )
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        reason = reason[:1].lower() + reason[1:]
        hint = "give the path of a blueprint file, not a folder" if isinstance(exc, IsADirectoryError) else ""
        raise LoadError(
            Finding("io", Severity.ERROR, f"cannot read blueprint: {reason}", hint=hint, location=Location(shown, 0, 0))
        ) from None
    return load_text(text, shown)
