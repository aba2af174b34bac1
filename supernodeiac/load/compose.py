"""Composition: a blueprint that extends a shared design and includes shared fragments.

.. code-block:: yaml

    extends: ../designs/pod-a.yaml       # the design this site overlays (one file)
    include:                             # fragments laid under this file, in order
      - ../shared/catalogue.yaml
    metadata: {name: pod-a-hall-2}
    nodes:
      - {name: gpu, count: 64}           # same name: only the keys given change

The result is the base (``extends``), then each ``include`` in order, then the file itself, each
laid over what came before: mappings merge key by key, lists of named entries (rows, node
groups, domains, fabrics, pools) merge by ``name`` (a new name is appended), anything else is
replaced by the later file. Paths are relative to the file that names them, stay inside the
repository (the folder holding ``.git`` above the top blueprint, or that blueprint's folder),
and end in ``.yaml`` or ``.yml``.

Every value keeps the position where it was written: the composed document's source map is
merged alongside its data, so a finding about a value from an included file points at that
file's line. A reference that cannot be followed (missing file, cycle, too deep) is a
``compose`` error at the reference in the including file; a file that cannot be parsed is
reported in that file, with the including file in the hint. Included files are read by the
same loader as the top blueprint (:func:`supernodeiac.load.source.load_file`), with its bounds, and
the composed blueprint, all its files together, is held to one file's size and value limits
(``yaml-limit`` at the reference that crosses them): composition cannot multiply what a
blueprint may hold. A file at a git revision is read the same way, at most
:data:`~supernodeiac.load.source.MAX_FILE_BYTES` of it.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..findings import Finding, Location, Severity
from .source import MAX_FILE_BYTES, MAX_VALUES, BlueprintPath, Document, LoadError, load_file, load_text

KEYS = ("extends", "include")
MAX_DEPTH = 8  # files in one chain of extends/include
MAX_FILES = 64  # distinct files in one composed blueprint
SUFFIXES = (".yaml", ".yml")


# -- the source map of a composed document ----------------------------------------------------------


class LocNode:
    """Where a node of the document was written, and its children's positions (by key or index)."""

    __slots__ = ("at", "keys", "items")

    def __init__(self, at: Location, keys: dict[str, LocNode] | None = None, items: list[LocNode] | None = None) -> None:
        self.at = at
        self.keys = keys
        self.items = items

    def locate(self, path: BlueprintPath) -> Location:
        """The position of the deepest node of ``path`` that was written (as Document.locate)."""
        node, found = self, self.at
        for key in path:
            child: LocNode | None = None
            if node.keys is not None:
                child = node.keys.get(str(key))
            elif node.items is not None and isinstance(key, int) and 0 <= key < len(node.items):
                child = node.items[key]
            if child is None:
                break
            node, found = child, child.at
        return found


def locations(doc: Document) -> LocNode:
    """The source map of a loaded (round-trip) document as a LocNode tree."""
    return _loc(doc.tree, Location(doc.path, doc.tree.lc.line + 1, doc.tree.lc.col + 1), doc.path)


def _loc(node: Any, at: Location, file: str) -> LocNode:
    if isinstance(node, CommentedMap):
        keys = {}
        for k, v in node.items():
            try:
                line, col = node.lc.key(k)
                where = Location(file, line + 1, col + 1)
            except (KeyError, TypeError, AttributeError):  # merged in with '<<': no position of its own
                where = at
            keys[str(k)] = _loc(v, where, file)
        return LocNode(at, keys=keys)
    if isinstance(node, CommentedSeq):
        items = []
        for i, v in enumerate(node):
            line, col = node.lc.item(i)
            items.append(_loc(v, Location(file, line + 1, col + 1), file))
        return LocNode(at, items=items)
    return LocNode(at)


@dataclass(slots=True)
class ComposedDocument(Document):
    """A blueprint merged from several files: ``data`` merged, ``locate`` into the file that wrote it."""

    where: LocNode | None = field(default=None, repr=False)
    sources: tuple[str, ...] = ()  # every file read, the top one first

    def locate(self, path: BlueprintPath) -> Location:
        assert self.where is not None
        return self.where.locate(path)


# -- where files come from ------------------------------------------------------------------------------


class Source(Protocol):
    """Resolves and loads the files a blueprint names (the file system, or a git revision)."""

    def resolve(self, including: str, ref: str) -> str | None:
        """The path of ``ref`` named in ``including``; None when it lies outside what may be read."""
        ...

    def load(self, path: str) -> Document: ...

    def key(self, path: str) -> str:
        """One spelling per file (./a.yaml and a.yaml are the same file), for cycles and caching."""
        ...


@dataclass
class FileSource:
    """Files on disk, inside ``root`` (the repository of the top blueprint)."""

    root: Path

    @classmethod
    def for_file(cls, path: str) -> FileSource:
        from ..findings.sarif import repository_root

        start = Path(path).parent if not path.startswith("<") else Path.cwd()
        return cls(repository_root(start if start.is_dir() else Path.cwd()))

    def resolve(self, including: str, ref: str) -> str | None:
        base = "" if including.startswith("<") else posixpath.dirname(Path(including).as_posix())
        target = posixpath.normpath(posixpath.join(base, ref)) if base else posixpath.normpath(ref)
        try:
            Path(target).resolve().relative_to(self.root.resolve())
        except ValueError:
            return None
        except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13): load says so at the include
            return target
        return target

    def load(self, path: str) -> Document:
        return load_file(path, self.root)

    def key(self, path: str) -> str:
        if path.startswith("<"):
            return path
        try:
            return str(Path(path).resolve())
        except (OSError, RuntimeError):  # a link loop
            return path


@dataclass
class GitSource:
    """Files as committed at ``rev`` in the repository at ``repo`` (paths relative to its root)."""

    repo: Path
    rev: str
    _commit: str | None = field(default=None, init=False, repr=False)

    def resolve(self, including: str, ref: str) -> str | None:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(self.relative(including)), ref))
        return None if target.startswith("../") or target == ".." else f"{self.rev}:{target}"

    def relative(self, path: str) -> str:
        """A path shown as ``rev:path`` (as git names it) or given relative to the repository; the
        revision is a prefix, not split at a colon (``:/fix: typo`` and ``main@{1:00}`` hold one)."""
        return path[len(self.rev) + 1 :] if path.startswith(f"{self.rev}:") else path

    def commit(self) -> str:
        """The commit the revision names, as git resolves it (once): the blob is read as
        ``COMMIT:path``, since git splits ``REV:path`` at the revision's own colon otherwise."""
        if self._commit is None:
            self._commit = _git_commit(self.repo, self.rev)
        return self._commit

    def load(self, path: str) -> Document:
        rel = self.relative(path)
        shown = f"{self.rev}:{rel}"
        where = Location(shown, 0, 0)
        if self.rev.startswith("-"):  # git would read it as an option
            raise LoadError(_io(f"cannot read blueprint: {self.rev!r} is not a revision", where))
        try:
            commit = self.commit()
        except LookupError as exc:
            raise LoadError(_io(f"cannot read blueprint: {exc}", where, _REV_HINT)) from None
        raw, error = _git_blob(self.repo, f"{commit}:{rel}")
        if error is not None:
            raise LoadError(_io(f"cannot read blueprint: {error}", where))
        if len(raw) > MAX_FILE_BYTES:
            raise LoadError(
                Finding(
                    "yaml-limit",
                    Severity.ERROR,
                    f"the blueprint is larger than {MAX_FILE_BYTES:,} bytes, the most snc reads",
                    (),
                    "a blueprint describes intent, not every device: is this a generated file or the wrong one?",
                    Location(shown, 1, 1),
                )
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LoadError(_io(f"cannot read blueprint: not UTF-8 text (byte {exc.start})", where)) from None
        return load_text(text, shown)

    def key(self, path: str) -> str:
        return f"{self.rev}:{self.relative(path)}"


_REV_HINT = "give a commit: a branch, tag, hash or HEAD~N ('REV:PATH' names a file, which --rev takes as FILE)"


def _rev_parse(repo: Path, spec: str, rev: str) -> str:
    """``git rev-parse --verify`` of ``spec``: a full object hash, or LookupError naming ``rev``."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", spec],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LookupError(f"cannot run git to resolve {rev!r}: {exc}") from None
    name = proc.stdout.decode("ascii", "replace").strip()
    if proc.returncode != 0 or re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", name) is None:
        raise LookupError(f"{rev!r} is not a commit in {repo}")
    return name


def _git_commit(repo: Path, rev: str) -> str:
    """The full hash of the commit ``rev`` names; LookupError (with the reason) when it names none.
    Resolved as given first (``:/text`` takes the rest of the string as its pattern, so no suffix
    can follow it), then peeled to a commit (an annotated tag names one; ``REV:path`` names none)."""
    return _rev_parse(repo, _rev_parse(repo, rev, rev) + "^{commit}", rev)


def _git_blob(repo: Path, name: str) -> tuple[bytes, str | None]:
    """At most MAX_FILE_BYTES + 1 bytes of the blob ``rev:path`` (enough to refuse a larger one
    unread), or the reason git gives for not having it."""
    try:
        proc = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "blob", name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return b"", f"cannot run git to read {name}: {exc}"
    assert proc.stdout is not None and proc.stderr is not None
    try:
        raw = proc.stdout.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            proc.kill()
        stderr = proc.stderr.read(64 * 1024)
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return b"", f"git took too long to read {name}"
    finally:
        proc.stdout.close()
        proc.stderr.close()
    if len(raw) > MAX_FILE_BYTES:
        return raw, None
    if code != 0:
        reason = stderr.decode(errors="replace").strip().splitlines()
        return b"", reason[-1] if reason else f"git cat-file failed on {name}"
    return raw, None


def _io(message: str, where: Location, hint: str = "") -> Finding:
    return Finding("io", Severity.ERROR, message, (), hint, where)


# -- composing -------------------------------------------------------------------------------------------


def has_references(doc: Document) -> bool:
    return isinstance(doc.data, dict) and any(k in doc.data for k in KEYS)


def compose(doc: Document, source: Source | None = None) -> Document:
    """``doc`` with its ``extends`` and ``include`` resolved (``doc`` itself when it has none).

    Raises LoadError (one located finding) when a reference cannot be followed.
    """
    if not has_references(doc):
        return doc
    composer = _Composer(source or FileSource.for_file(doc.path), size=doc.size, values=doc.values)
    data, where = composer.resolve(doc, ())
    return ComposedDocument(
        doc.path,
        data,
        doc.tree,
        size=composer.size,
        values=composer.values,
        where=where,
        sources=tuple(d.path for d in composer.loaded.values()),
    )


@dataclass
class _Composer:
    source: Source
    loaded: dict[str, Document] = field(default_factory=dict)
    size: int = 0  # bytes of every file read so far
    values: int = 0  # and their values, aliases expanded

    def resolve(self, doc: Document, chain: tuple[str, ...]) -> tuple[Any, LocNode]:
        self.loaded.setdefault(self.source.key(doc.path), doc)
        own_where = locations(doc)
        if not has_references(doc):
            return doc.data, own_where
        layers = [self._layer(doc, ref, at, chain + (self.source.key(doc.path),)) for ref, at in self._references(doc)]
        own = {k: v for k, v in doc.data.items() if k not in KEYS}
        own_keys = {k: v for k, v in (own_where.keys or {}).items() if k not in KEYS}
        merged = (own, LocNode(own_where.at, keys=own_keys))
        if layers:
            base = layers[0]
            for layer in layers[1:]:
                base = merge(base, layer)
            merged = merge(base, merged)
        return merged

    def _references(self, doc: Document) -> Iterator[tuple[str, BlueprintPath]]:
        extends = doc.data.get("extends")
        if extends is not None:
            if not isinstance(extends, str):
                raise self._error(
                    doc, ("extends",), "extends names one blueprint file (a string)", "extends: ../designs/base.yaml"
                )
            yield extends, ("extends",)
        include = doc.data.get("include")
        if include is not None:
            refs = [include] if isinstance(include, str) else include
            if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
                raise self._error(
                    doc, ("include",), "include is a list of YAML file names", "include: [../shared/catalogue.yaml]"
                )
            for i, ref in enumerate(refs):
                yield ref, ("include", i) if isinstance(include, list) else ("include",)

    def _layer(self, doc: Document, ref: str, at: BlueprintPath, chain: tuple[str, ...]) -> tuple[Any, LocNode]:
        if not ref.endswith(SUFFIXES) or PurePosixPath(ref).is_absolute() or "\\" in ref:
            raise self._error(doc, at, f"cannot include {ref!r}: give a relative path to a .yaml or .yml file")
        target = self.source.resolve(doc.path, ref)
        if target is None:
            raise self._error(
                doc, at, f"cannot include {ref!r}: it lies outside the repository", "keep shared files inside the repository"
            )
        key = self.source.key(target)
        if key in chain:
            shown = {self.source.key(d.path): d.path for d in self.loaded.values()}
            cycle = " -> ".join([*(shown.get(k, k) for k in chain[chain.index(key) :]), target])
            raise self._error(doc, at, f"include cycle: {cycle}", "a file may not include itself, directly or through others")
        if len(chain) >= MAX_DEPTH:
            raise self._error(doc, at, f"includes nest deeper than {MAX_DEPTH} files", "flatten the chain of extends/include")
        sub = self.loaded.get(key)
        if sub is None:
            if len(self.loaded) >= MAX_FILES:
                raise self._error(doc, at, f"a blueprint may be composed of at most {MAX_FILES} files")
            try:
                sub = self.source.load(target)
            except LoadError as exc:
                raise LoadError(self._included_failure(doc, at, ref, exc.finding)) from None
            self._count(doc, at, ref, sub)
        if not isinstance(sub.data, dict):
            raise self._error(doc, at, f"{ref!r} is not a YAML mapping")
        return self.resolve(sub, chain)

    def _count(self, doc: Document, at: BlueprintPath, ref: str, sub: Document) -> None:
        """Add ``sub`` to the composed blueprint's size and values; past one file's limits is an error."""
        self.size += sub.size
        self.values += sub.values
        hint = "a composed blueprint is held to one blueprint's limits, all its files together: is this the right file?"
        if self.size > MAX_FILE_BYTES:
            message = (
                f"with {ref!r} the composed blueprint is {self.size:,} bytes; "
                f"a blueprint, all its files together, is at most {MAX_FILE_BYTES:,}"
            )
            raise LoadError(Finding("yaml-limit", Severity.ERROR, message, at, hint, doc.locate(at)))
        if self.values > MAX_VALUES:
            message = (
                f"with {ref!r} the composed blueprint holds {self.values:,} values; "
                f"a blueprint, all its files together, holds at most {MAX_VALUES:,}"
            )
            raise LoadError(Finding("yaml-limit", Severity.ERROR, message, at, hint, doc.locate(at)))

    def _error(self, doc: Document, at: BlueprintPath, message: str, hint: str = "") -> LoadError:
        return LoadError(Finding("compose", Severity.ERROR, message, at, hint, doc.locate(at)))

    def _included_failure(self, doc: Document, at: BlueprintPath, ref: str, inner: Finding) -> Finding:
        where = doc.locate(at)
        if inner.rule == "io":  # nothing to point at inside a file that cannot be read: point at the reference
            return Finding(
                "compose",
                Severity.ERROR,
                f"cannot include {ref!r}: {inner.message.removeprefix('cannot read blueprint: ')}",
                at,
                inner.hint,
                where,
            )
        hint = f"included from {where}" + (f"; {inner.hint}" if inner.hint else "")
        return replace(inner, hint=hint)


def merge(base: tuple[Any, LocNode], over: tuple[Any, LocNode]) -> tuple[Any, LocNode]:
    """``over`` laid over ``base``: data and source map together."""
    (bd, bl), (od, ol) = base, over
    if isinstance(bd, dict) and isinstance(od, dict) and bl.keys is not None and ol.keys is not None:
        data, keys = dict(bd), dict(bl.keys)
        for k, v in od.items():
            if k in data and k in keys:
                data[k], keys[k] = merge((data[k], keys[k]), (v, ol.keys[k]))
            else:
                data[k], keys[k] = v, ol.keys[k]
        return data, LocNode(ol.at, keys=keys)
    if _named(bd) and _named(od) and bl.items is not None and ol.items is not None:
        data_list, items = list(bd), list(bl.items)
        index = {item["name"]: i for i, item in enumerate(data_list)}
        for item, where in zip(od, ol.items, strict=True):
            i = index.get(item["name"])
            if i is None:
                index[item["name"]] = len(data_list)
                data_list.append(item)
                items.append(where)
            else:
                data_list[i], items[i] = merge((data_list[i], items[i]), (item, where))
        return data_list, LocNode(ol.at, items=items)
    return od, ol


def _named(value: Any) -> bool:
    """A list of mappings each with a distinct string ``name``: merged entry by entry."""
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value):
        return False
    return len({v["name"] for v in value}) == len(value)
