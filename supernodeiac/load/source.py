"""Load a blueprint's YAML with a source map, so every later stage can point at file:line:col.

The loader returns a :class:`Document`: the plain data (dicts, lists, scalars) that pydantic
parses, plus the ruamel round-trip tree kept only to answer "where is this path in the file?".
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from ruamel.yaml.scalarbool import ScalarBoolean

from ..findings import Finding, Location, Severity

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
    size: int = 0  # bytes of the file (UTF-8), for limits over several files (composition)
    values: int = 0  # keys, list items and scalars, aliases expanded (what MAX_VALUES bounds)

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


# Limits on what a blueprint file may hold. They sit far above any real blueprint (the largest
# shipped or generated one, 131,072 GPUs, is 24 KB, 813 lines, 3,328 values; none nests more
# than 6 levels) and far below what hurts: a hostile or broken file is a located error within a second
# instead of minutes and gigabytes (ruamel reads about 200 KB a second; an alias bomb of 1.8 KB
# would expand to 10^10 values; Python's own recursion stops near 480 levels).
MAX_FILE_BYTES = 512 * 1024
MAX_DEPTH = 64  # nested mappings and lists
MAX_VALUES = 100_000  # keys, list items and scalars, with every alias expanded
MAX_NUMBER_DIGITS = 100  # a plain number longer than this is a typo (and Python refuses 4,300+)


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


class _LimitError(MarkedYAMLError):
    """A document past one of the limits above, at the node that crosses it."""

    def __init__(self, problem: str, mark: Any, hint: str) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.hint = hint


class _BoundedComposer(Composer):
    """ruamel's composer, counting as it goes: the nesting depth, and the values the document
    holds once every alias is expanded (an alias is cheap to write and is copied wherever it
    is used: ten levels of ten aliases make 10^10 values from 1.8 KB). Each is refused at the
    node that crosses its limit, before anything is copied."""

    def compose_document(self) -> Any:
        self._depth = 0
        self._values = 0
        self._sizes: dict[int, int] = {}  # id(anchored node) -> values it expands to
        return super().compose_document()

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            target = self.anchors.get(event.anchor)
            if target is not None:  # an undefined alias is ruamel's error to report
                size = self._sizes.get(id(target))
                if size is None:
                    raise _LimitError(
                        f"alias *{event.anchor} refers to a value that contains it (a loop)",
                        event.start_mark,
                        "a blueprint is a tree of values: an alias may repeat a finished value, not one it sits in",
                    )
                self._count(size, event.start_mark, f"alias *{event.anchor} expands to {size:,} values, which takes")
            return super().compose_node(parent, index)
        start = self._values
        self._count(1, event.start_mark, "this value takes")
        nested = isinstance(event, MappingStartEvent | SequenceStartEvent)
        if nested:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _LimitError(
                    f"the blueprint nests more than {MAX_DEPTH} levels deep here",
                    event.start_mark,
                    f"a blueprint nests 5 to 7 levels; at most {MAX_DEPTH} are read (is a bracket never closed?)",
                )
        node = super().compose_node(parent, index)
        if nested:
            self._depth -= 1
        elif len(event.value) > MAX_NUMBER_DIGITS and str(getattr(node.tag, "value", node.tag)) in _NUMBER_TAGS:
            raise _LimitError(
                f"a number with {len(event.value):,} digits",
                event.start_mark,
                f"numbers in a blueprint have at most {MAX_NUMBER_DIGITS} digits: is this a typo?",
            )
        if event.anchor is not None:
            self._sizes[id(node)] = self._values - start
        return node

    def _count(self, values: int, mark: Any, what: str) -> None:
        self._values += values
        if self._values > MAX_VALUES:
            raise _LimitError(
                f"{what} the blueprint past {MAX_VALUES:,} values",
                mark,
                f"a blueprint holds at most {MAX_VALUES:,} values (keys, list items and scalars) once its aliases "
                "are expanded; an alias repeats everything its anchor holds",
            )


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
    if isinstance(node, bool | ScalarBoolean):  # an anchored boolean is a ScalarBoolean (an int)
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


# ruamel names tokens the way its grammar does; a blueprint's author reads these words instead.
_TOKENS = {
    "'?'": "a key",
    "'-'": "a list item ('-')",
    "'<block mapping start>'": "the start of a mapping",
    "'<block sequence start>'": "the start of a list",
    "'<block end>'": "the end of the block",
    "<block end>": "the end of the block",
    "'<scalar>'": "a value",
    "'<stream end>'": "the end of the file",
    "'<document start>'": "a new document ('---')",
}


def _readable(problem: str) -> str:
    for token, words in _TOKENS.items():
        problem = problem.replace(token, words)
    return problem


def _syntax_finding(exc: MarkedYAMLError, path: str) -> Finding:
    """A ruamel error as a finding at the problem's position, with the context in the hint."""
    mark = exc.problem_mark or exc.context_mark
    where = Location(path, mark.line + 1, mark.column + 1) if mark else Location(path, 1, 1)
    problem = (exc.problem or exc.context or "not valid YAML").strip()
    ctx_mark = exc.context_mark
    hint = "check indentation and quoting near this position"
    if isinstance(exc, _LimitError):
        return Finding("yaml-limit", Severity.ERROR, problem, hint=exc.hint, location=where)
    if isinstance(exc, DuplicateKeyError):
        # ruamel words it 'found duplicate key "c" with value "2" (original value: "1")'.
        return Finding(
            "yaml-syntax",
            Severity.ERROR,
            problem.replace("found duplicate", "duplicate"),
            hint="a key may appear only once in a mapping: keep one and delete the other",
            location=where,
        )
    if "another document" in problem:
        first = f" (the first starts at line {ctx_mark.line + 1})" if ctx_mark is not None else ""
        return Finding(
            "yaml-syntax",
            Severity.ERROR,
            f"a blueprint is one YAML document, and a second one starts here{first}",
            hint="delete the '---' (or '...') line, or put each blueprint in a file of its own",
            location=where,
        )
    started = ""
    if ctx_mark is not None and mark is not None and (ctx_mark.line, ctx_mark.column) != (mark.line, mark.column):
        started = f" that starts at line {ctx_mark.line + 1}, column {ctx_mark.column + 1}"
    context = (exc.context or "").strip()
    what = context.removeprefix("while parsing ").removeprefix("while scanning ")
    if "\t" in problem or "\\t" in problem:  # ruamel prints the tab escaped
        hint = "YAML indents with spaces only: replace the tab with spaces"
    elif "mapping values are not allowed" in problem:
        hint = "is this line indented deeper than the key above it, or does a value hold an unquoted ': '?"
    elif problem.endswith("'?'") and "block collection" in what:
        # '- item' lines, then 'key:' at the same indentation: one level cannot hold both.
        hint = (
            f"this key is indented like the list{started}: a list and the keys of a mapping cannot share "
            "one indentation level; indent the list under a key of its own, or this key less"
        )
    elif started and what != context:
        # 'while parsing a flow mapping' at the '{' that was never closed: say where it opened.
        hint = f"in {what}{started}"
        if "flow" in what:
            hint += ": is a closing bracket or a comma missing?"
    elif started and context:
        hint = f"{context}{started}"
    return Finding("yaml-syntax", Severity.ERROR, f"YAML syntax error: {_readable(problem)}", hint=hint, location=where)


def _loader() -> YAML:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.Composer = _BoundedComposer
    return yaml


def _whole_file_error(path: str, message: str, hint: str) -> LoadError:
    return LoadError(Finding("yaml-limit", Severity.ERROR, message, hint=hint, location=Location(path, 1, 1)))


def load_text(text: str, path: str) -> Document:
    # Bytes as the file holds them (a character is at most 4): encoded only when it could matter.
    size = len(text) if len(text) * 4 <= MAX_FILE_BYTES else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise _whole_file_error(
            path,
            f"the blueprint is {size:,} bytes; snc reads blueprints of at most {MAX_FILE_BYTES:,} bytes",
            "a blueprint describes intent, not every device: is this a generated file or the wrong one?",
        )
    loader = _loader()
    try:
        tree = loader.load(text)
    except MarkedYAMLError as exc:
        raise LoadError(_syntax_finding(exc, path)) from None
    except YAMLError as exc:
        raise LoadError(Finding("yaml-syntax", Severity.ERROR, f"YAML error: {exc}", location=Location(path, 1, 1))) from None
    except (RecursionError, MemoryError) as exc:  # the limits above should make these unreachable
        raise _whole_file_error(
            path, f"the blueprint is too large or too deeply nested to read ({type(exc).__name__})", "simplify the file"
        ) from None
    except ValueError as exc:  # a scalar ruamel cannot convert (its constructors raise plain ValueErrors)
        raise LoadError(
            Finding("yaml-syntax", Severity.ERROR, f"YAML value cannot be read: {exc}", location=Location(path, 1, 1))
        ) from None
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
    exact = size if len(text) * 4 > MAX_FILE_BYTES else len(text.encode("utf-8", "surrogatepass"))
    doc = Document(path=path, data=None, tree=tree, size=exact, values=getattr(loader.composer, "_values", 0))
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


# What a path is when it is not a regular file, for the message (os.stat's file types).
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_a_file(mode: int) -> str | None:
    """What a path of this mode is when it is not a regular file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _io_error(shown: str, message: str, hint: str = "") -> LoadError:
    return LoadError(
        Finding("io", Severity.ERROR, f"cannot read blueprint: {message}", hint=hint, location=Location(shown, 0, 0))
    )


def read_root(path: str | Path) -> Path:
    """The folder a blueprint's files must lie in: the git work tree that holds the blueprint's
    folder (as named, before links are followed), else that folder itself."""
    from ..findings.sarif import repository_root

    return repository_root(Path(os.path.abspath(path)).parent)


def _outside(path: str | Path, root: Path) -> bool:
    """Whether ``path``, links followed, lies outside ``root`` (a link loop is os.stat's to report)."""
    try:
        Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return True
    except (OSError, RuntimeError):  # RuntimeError: a link loop on Python before 3.13
        return False
    return False


def load_file(path: str | Path, root: Path | None = None) -> Document:
    """Read and load the blueprint at ``path``: a regular file (a FIFO, device or socket is
    refused without being opened: opening a FIFO blocks until a writer comes) inside ``root``
    (default :func:`read_root`), so that a link cannot make snc read and quote a file from
    elsewhere on the machine."""
    shown = str(path)
    try:
        kind = _not_a_file(os.stat(path).st_mode)  # follows links: what open would read
        if kind == "a directory":
            raise _io_error(shown, "is a directory", "give the path of a blueprint file, not a folder")
        if kind is not None:
            raise _io_error(
                shown,
                f"it is {kind}, not a file",
                "give the path of a blueprint file; '-' reads the blueprint from standard input",
            )
        where = root if root is not None else read_root(path)
        if _outside(path, where):
            raise _io_error(
                shown,
                f"it is a symbolic link to a file outside {where}",
                f"blueprints and the files they include are read inside {where} (the git work tree, or the "
                "blueprint's folder outside one): copy the file in, or give its own path",
            )
        # O_NONBLOCK: a path swapped for a FIFO since the stat does not block the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            kind = _not_a_file(os.fstat(f.fileno()).st_mode)
            if kind is not None:
                raise _io_error(shown, f"it is {kind}, not a file", "give the path of a blueprint file")
            # Read one byte past the limit: enough to refuse a huge file unread.
            raw = f.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise _whole_file_error(
                shown,
                f"the blueprint is larger than {MAX_FILE_BYTES:,} bytes, the most snc reads",
                "a blueprint describes intent, not every device: is this a generated file or the wrong one?",
            )
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _io_error(shown, f"not UTF-8 text (byte {exc.start})", "save the blueprint as UTF-8 YAML") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        reason = reason[:1].lower() + reason[1:]
        hint = "give the path of a blueprint file, not a folder" if isinstance(exc, IsADirectoryError) else ""
        raise _io_error(shown, reason, hint) from None
    return load_text(text, shown)
