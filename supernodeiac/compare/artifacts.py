"""What changed between two sets of rendered artifacts ({path: bytes}), file by file.

Generic by format, so every renderer's output (the ones registered today and those added
later: switch configs, NCCL XML, Kubernetes objects) is compared with no code here:

* **JSON**: the key paths that were added, removed or changed (``PORT/Ethernet0/speed``);
  lists of objects that carry an identifying key (``name``, ``path``, ``id``) are matched by it,
  BOM lines by part as above, other lists by position;
* **CSV**: rows added, removed and changed, keyed by the first column (a cable ID), or, in a
  counted table (a ``count`` column), by what identifies an item: for a bill of materials (a
  ``part`` column) the section, fabric and part number, with the catalogue item, length and
  detail added only where a part appears twice, so a line whose roles or totals changed is
  still the same part and its count delta is reported by part; other counted tables by the
  columns before ``count``; for changed rows, which columns changed;
* **other text** (DOT, SVG, XML, YAML, config files): lines added and removed;
* anything else: changed or not.

Byte-identical files are skipped before anything is parsed, so two renders of 10^5-10^6
cables that differ in a few files cost one comparison per file plus the parsing of those few.
Within a keyed CSV only the lines present on one side are decoded and parsed (the lines are
compared as bytes: a 200 MB cabling list is not copied as text).
"""

from __future__ import annotations

import codecs
import csv
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..outputs.base import Sized

MAX_DETAILS = 50  # changed keys or rows listed per file (the counts are always complete)
ID_KEYS = ("name", "path", "id", "cable_id", "key")  # what identifies an object in a JSON list
COUNT_COLUMNS = ("count", "quantity", "qty")
# What identifies a line of a bill of materials, in the order a key is built from: the part
# number first; the rest only where the same part appears on two lines (a module on the switch
# and the host side).
PART_KEYS = ("section", "fabric", "part", "item", "length_m", "detail")
# .tsv and .env: the NCCL host lists and environment files and the acceptance plan (issue 11), line by line.
TEXT_SUFFIXES = {
    *(".dot", ".svg", ".xml", ".yaml", ".yml", ".txt", ".conf", ".cfg", ".md", ".ini", ".toml", ".sh", ".j2"),
    *(".tsv", ".env"),
}

_MISSING = object()
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class KeyChange:
    path: str
    old: Any  # None with status 'added'
    new: Any  # None with status 'removed'
    status: str  # added | removed | changed

    def as_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class CountDelta:
    """One item of a counted table (a BOM line) whose count changed."""

    file: str
    item: tuple[tuple[str, str], ...]  # (column, value) of the key columns
    old: float
    new: float
    about: str = ""  # what the line says beside its key (a BOM line's detail), from the new side

    @property
    def delta(self) -> float:
        return self.new - self.old

    def label(self) -> str:
        text = " ".join(v for _, v in self.item if v)
        return f"{text} ({self.about})" if self.about else text

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "item": dict(self.item),
            "about": self.about,
            "old": _num(self.old),
            "new": _num(self.new),
            "delta": _num(self.delta),
        }


@dataclass
class FileChange:
    path: str
    status: str  # added | removed | changed
    kind: str  # json | csv | text | binary
    old_bytes: int | None = None
    new_bytes: int | None = None
    keys: list[KeyChange] = field(default_factory=list)  # JSON: the first MAX_DETAILS
    key_changes: int = 0  # JSON: all of them
    rows: dict[str, int] = field(default_factory=dict)  # CSV: added / removed / changed
    row_examples: dict[str, list[str]] = field(default_factory=dict)  # CSV: keys of the first rows of each
    columns: dict[str, int] = field(default_factory=dict)  # CSV: changed rows per column
    counts: list[CountDelta] = field(default_factory=list)  # CSV with a count column
    lines: dict[str, int] = field(default_factory=dict)  # text: added / removed

    def summary(self) -> str:
        """One line: what changed in this file."""
        if self.status != "changed":
            return f"{self.status} ({_size(self.new_bytes if self.status == 'added' else self.old_bytes)})"
        if self.kind == "json":
            kinds = Counter(k.status for k in self.keys)
            more = f" (first {len(self.keys)} listed)" if self.key_changes > len(self.keys) else ""
            parts = ", ".join(f"{n} {s}" for s, n in sorted(kinds.items()))
            return f"{self.key_changes} key(s) changed{more}: {parts}" if self.key_changes else "formatting only"
        if self.kind == "csv":
            rows = [f"{n} row(s) {what}" for what, n in self.rows.items() if n]
            if self.columns:
                rows.append(
                    "columns " + ", ".join(f"{c} ({n})" for c, n in sorted(self.columns.items(), key=lambda x: (-x[1], x[0])))
                )
            return "; ".join(rows) or "row order only"
        if self.kind == "text":
            return f"+{self.lines.get('added', 0)} -{self.lines.get('removed', 0)} lines"
        return f"changed ({_size(self.old_bytes)} -> {_size(self.new_bytes)})"

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "status": self.status, "kind": self.kind, "summary": self.summary()}
        if self.keys:
            out["keys"] = [k.as_dict() for k in self.keys]
            out["key_changes"] = self.key_changes
        if self.rows:
            out["rows"] = self.rows
            out["row_examples"] = self.row_examples
            out["columns"] = self.columns
        if self.counts:
            out["counts"] = [c.as_dict() for c in self.counts]
        if self.lines:
            out["lines"] = self.lines
        return out


@dataclass
class ArtifactDiff:
    files: list[FileChange]  # added, removed and changed files, by path
    unchanged: int

    @property
    def counts(self) -> list[CountDelta]:
        return [c for f in self.files for c in f.counts]

    def by_status(self, status: str) -> list[FileChange]:
        return [f for f in self.files if f.status == status]

    def as_dict(self) -> dict:
        return {
            "unchanged": self.unchanged,
            "files": [f.as_dict() for f in self.files],
            "counts": [c.as_dict() for c in self.counts],
        }


class FolderArtifacts(Mapping[str, bytes]):
    """The regular files under a folder as {posix relative path: bytes}, read when asked for.

    Links are not followed (a link in an output folder is not something snc wrote: it is listed
    in ``odd`` with what it is, like a socket or a device file), and top-level names that start
    with ``skip_prefix`` (the writer's staging of a killed run) are left out.
    """

    def __init__(self, folder: Path, skip_prefix: str | None = None) -> None:
        self.folder = folder
        self.odd: dict[str, str] = {}  # path -> what it is, for entries that are not regular files or folders
        self._sizes: dict[str, int] = {}
        stack = [""] if folder.is_dir() else []
        while stack:
            rel = stack.pop()
            with os.scandir(folder / rel if rel else folder) as it:
                entries = list(it)
            for entry in entries:
                name = f"{rel}/{entry.name}" if rel else entry.name
                if not rel and skip_prefix and entry.name.startswith(skip_prefix):
                    continue
                if entry.is_symlink():
                    self.odd[name] = f"a symbolic link (to {os.readlink(entry.path)})"
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(name)
                elif entry.is_file(follow_symlinks=False):
                    self._sizes[name] = entry.stat(follow_symlinks=False).st_size
                else:
                    self.odd[name] = "not a regular file"
        self._paths = sorted(self._sizes)

    def __getitem__(self, key: str) -> bytes:
        if key not in self._sizes:
            raise KeyError(key)
        return (self.folder / key).read_bytes()

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, key: object) -> bool:
        return key in self._sizes

    def size(self, key: str) -> int:
        """The file's size, without reading it."""
        return self._sizes[key]


def _bytes(data: Any) -> bytes:
    """An artifact's bytes: a streamed one (``render.Stream``) is produced here, when compared,
    so that two renders' large outputs are held one file at a time, not all at once."""
    return data if isinstance(data, bytes) else bytes(data)


def _size_of(files: Mapping[str, Any], path: str) -> int:
    size = getattr(files, "size", None)
    if size is not None:
        return size(path)
    data = files[path]
    return data.size if isinstance(data, Sized) else len(_bytes(data))


def diff_artifacts(old: Mapping[str, Any], new: Mapping[str, Any]) -> ArtifactDiff:
    """Every file of two renders compared (values are bytes, or streams produced as they are reached)."""
    files: list[FileChange] = []
    unchanged = 0
    for path in sorted(set(old) | set(new)):
        if path not in new:
            files.append(FileChange(path, "removed", kind_of(path), old_bytes=_size_of(old, path)))
        elif path not in old:
            files.append(FileChange(path, "added", kind_of(path), new_bytes=_size_of(new, path)))
        elif _sizes_differ(path, old[path], new[path]):  # compared as bytes: its lengths tell it changed
            files.append(FileChange(path, "changed", "binary", old[path].size, new[path].size))
        else:
            a, b = _bytes(old[path]), _bytes(new[path])
            if a == b:
                unchanged += 1
            else:
                files.append(compare_file(path, a, b))
    return ArtifactDiff(files, unchanged)


def _sizes_differ(path: str, a: Any, b: Any) -> bool:
    """Both files of a path compared as bytes (no format of its own) know their lengths
    (:class:`outputs.base.Sized`) and these differ: changed, with no byte of either made."""
    return kind_of(path) == "binary" and isinstance(a, Sized) and isinstance(b, Sized) and a.size != b.size


def kind_of(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix == ".csv":
        return "csv"
    return "text" if suffix in TEXT_SUFFIXES else "binary"


def compare_file(path: str, a: bytes, b: bytes) -> FileChange:
    """The change of one file present on both sides with different bytes."""
    change = FileChange(path, "changed", kind_of(path), len(a), len(b))
    try:
        if change.kind == "json":
            _json(change, json.loads(a), json.loads(b))
        elif change.kind == "csv":
            _csv(change, a, b)
        elif change.kind == "text":
            _text(change, a, b)
    except (ValueError, UnicodeDecodeError, csv.Error):  # not what its name says: compare as bytes
        change = FileChange(path, "changed", "binary", len(a), len(b))
    return change


# -- JSON --------------------------------------------------------------------------------------------------


def _json(change: FileChange, a: Any, b: Any) -> None:
    for k in json_changes(a, b):
        change.key_changes += 1
        if len(change.keys) < MAX_DETAILS:
            change.keys.append(k)


def json_changes(a: Any, b: Any, path: str = "") -> Iterator[KeyChange]:
    """Every leaf (or whole subtree) added, removed or changed between two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            sub = _join(path, str(key))
            if key not in b:
                yield KeyChange(sub, a[key], None, "removed")
            elif key not in a:
                yield KeyChange(sub, None, b[key], "added")
            else:
                yield from json_changes(a[key], b[key], sub)
        return
    if isinstance(a, list) and isinstance(b, list):
        by_ids = _by_ids(a, b)
        if by_ids is not None:
            by_a, by_b = by_ids
            for key in sorted(set(by_a) | set(by_b), key=str):
                sub = f"{path}[{key}]"
                if key not in by_b:
                    yield KeyChange(sub, by_a[key], None, "removed")
                elif key not in by_a:
                    yield KeyChange(sub, None, by_b[key], "added")
                else:
                    yield from json_changes(by_a[key], by_b[key], sub)
            return
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(b):
                yield KeyChange(sub, a[i], None, "removed")
            elif i >= len(a):
                yield KeyChange(sub, None, b[i], "added")
            else:
                yield from json_changes(a[i], b[i], sub)
        return
    if a != b or type(a) is not type(b):
        yield KeyChange(path or "(document)", a, b, "changed")


def _id_keys(a: list, b: list) -> tuple[str, ...]:
    """The keys that identify every object of both lists (unique on each side), or ().

    One identifying key when there is one (``name``, ``path``, ``id``...); else the text-valued
    keys, with numeric ones added in name order (never a count) until the objects are told apart
    (a BOM line is its fabric, kind, medium and length).
    """
    items = a + b
    if not items or not all(isinstance(x, dict) for x in items):
        return ()
    common = set(items[0]).intersection(*items[1:])
    for key in ID_KEYS:
        if key in common and all(isinstance(x[key], str | int) for x in items) and _unique(a, b, (key,)):
            return (key,)
    text = sorted(k for k in common if all(isinstance(x[k], str) for x in items))
    numbers = sorted(k for k in common if k not in COUNT_COLUMNS and all(isinstance(x[k], int | float) for x in items))
    keys = tuple(text)
    for extra in [None, *numbers[:3]]:
        if extra is not None:
            keys += (extra,)
        if keys and _unique(a, b, keys):
            return keys
    return ()


def _unique(a: list, b: list, keys: tuple[str, ...]) -> bool:
    return all(len({tuple(_hashable(x[k]) for k in keys) for x in side}) == len(side) for side in (a, b))


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


def _by_ids(a: list, b: list) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both lists by the identity of their objects (BOM lines by part), or None: by position."""
    if a and b and all(isinstance(x, dict) for x in a + b):
        common = set(a[0]).intersection(*a[1:], *b)
        if "part" in common and common & set(COUNT_COLUMNS):
            text = sorted(k for k in common if all(isinstance(x[k], str) for x in a + b))
            cols_of = part_identity(a, b, [*PART_KEYS, *text], lambda x, k: x[k])
            if cols_of is not None:
                by_a, by_b = ({",".join(f"{k}={x[k]}" for k in cols_of(x)): x for x in side} for side in (a, b))
                return by_a, by_b
    id_keys = _id_keys(a, b)
    return (_by_id(a, id_keys), _by_id(b, id_keys)) if id_keys else None


def part_identity(
    a: Sequence[R], b: Sequence[R], names: Sequence[str], get: Callable[[R, str], Any]
) -> Callable[[R], tuple[str, ...]] | None:
    """How a bill of materials' lines are told apart: per line, the columns of its key.

    A line is its section, fabric and part number. Only where one part is on several lines (a
    module on the switch side and on the host side) are the next columns of ``names`` (PART_KEYS
    first: item, length, detail) added, for that part alone, until its lines differ on both
    sides; so a line whose detail (roles, counts) changes is still the same line. None when
    ``names`` has no part, or some lines cannot be told apart.
    """
    order = [k for k in PART_KEYS if k in names]
    if "part" not in order:
        return None
    start = order.index("part") + 1
    base = order[:start]
    rest = order[start:] + [n for n in dict.fromkeys(names) if n not in order]
    groups: dict[tuple, tuple[list[R], list[R]]] = {}
    for side, rows in enumerate((a, b)):
        for row in rows:
            groups.setdefault(tuple(_hashable(get(row, c)) for c in base), ([], []))[side].append(row)
    need: dict[tuple, int] = {}
    for group, sides in groups.items():
        for n in range(len(rest) + 1):
            cols = rest[:n]
            if all(len({tuple(_hashable(get(r, c)) for c in cols) for r in rows}) == len(rows) for rows in sides):
                need[group] = n
                break
        else:
            return None
    return lambda row: (*base, *rest[: need[tuple(_hashable(get(row, c)) for c in base)]])


def _by_id(items: list, keys: tuple[str, ...]) -> dict[str, Any]:
    if len(keys) == 1:
        return {f"{keys[0]}={x[keys[0]]}": x for x in items}
    return {",".join(f"{k}={x[k]}" for k in keys): x for x in items}


def _join(path: str, key: str) -> str:
    shown = json.dumps(key) if ("/" in key or not key) else key
    return f"{path}/{shown}" if path else shown


# -- CSV -----------------------------------------------------------------------------------------------------


def _csv(change: FileChange, a: bytes, b: bytes) -> None:
    a_lines, b_lines = a.splitlines(), b.splitlines()
    if not a_lines or not b_lines or a_lines[0] != b_lines[0]:
        change.rows = {"added": max(len(b_lines) - 1, 0), "removed": max(len(a_lines) - 1, 0), "changed": 0}
        change.columns = {"(header)": 1} if a_lines and b_lines else {}
        return
    header = next(csv.reader([a_lines[0].decode("utf-8")]))
    count_col = next((i for i, h in enumerate(header) if h.lower() in COUNT_COLUMNS), None)
    old_only, new_only = _parse(_only(a_lines, b_lines)), _parse(_only(b_lines, a_lines))
    # A counted table (a BOM: small) is read whole to find what identifies an item.
    key_of = _counted_key(header, count_col, _parse(a_lines[1:]), _parse(b_lines[1:])) if count_col else _columns_key(header, [0])
    old_by, new_by = _keyed(old_only, key_of), _keyed(new_only, key_of)
    if old_by is None or new_by is None:  # a key repeats: rows can only be added or removed
        change.rows = {"added": len(new_only), "removed": len(old_only), "changed": 0}
        return
    changed = sorted(set(old_by) & set(new_by))
    added = sorted(set(new_by) - set(old_by))
    removed = sorted(set(old_by) - set(new_by))
    change.rows = {"added": len(added), "removed": len(removed), "changed": len(changed)}
    change.row_examples = {
        what: [" ".join(v for _, v in key if v) for key in keys[:MAX_DETAILS]]
        for what, keys in (("added", added), ("removed", removed), ("changed", changed))
        if keys
    }
    columns: Counter[str] = Counter()
    for key in changed:
        old_row, new_row = old_by[key], new_by[key]
        for i, name in enumerate(header):
            if _cell(old_row, i) != _cell(new_row, i):
                columns[name] += 1
    change.columns = dict(columns)
    if count_col is not None:
        detail = header.index("detail") if "detail" in header else None
        for key in sorted(set(old_by) | set(new_by)):
            old_n = _number(_cell(old_by[key], count_col)) if key in old_by else 0.0
            new_n = _number(_cell(new_by[key], count_col)) if key in new_by else 0.0
            if old_n is not None and new_n is not None and old_n != new_n:
                row = new_by.get(key) or old_by[key]
                about = _cell(row, detail) if detail is not None and "detail" not in dict(key) else ""
                change.counts.append(CountDelta(change.path, key, old_n, new_n, about))


Key = tuple[tuple[str, str], ...]  # (column, value) pairs


def _columns_key(header: list[str], cols: list[int]) -> Callable[[list[str]], Key]:
    return lambda row: tuple((header[i], _cell(row, i)) for i in cols)


def _counted_key(header: list[str], count_col: int, a: list[list[str]], b: list[list[str]]) -> Callable[[list[str]], Key]:
    """The key of a counted table's row: a BOM line by part (:func:`part_identity`), any other
    counted row, and a row without a count (a total), by every column before the count."""
    before = header[:count_col]
    whole = _columns_key(header, list(range(count_col)))
    counted = [[r for r in rows if _cell(r, count_col) != ""] for rows in (a, b)]
    cols_of = part_identity(counted[0], counted[1], before, lambda r, c: _cell(r, header.index(c)))
    if cols_of is None:
        return whole
    return lambda row: (
        whole(row) if _cell(row, count_col) == "" else tuple((c, _cell(row, header.index(c))) for c in cols_of(row))
    )


def _only(lines: list[bytes], other: list[bytes]) -> list[bytes]:
    """The data lines of ``lines`` that ``other`` does not have (as many times as it lacks them)."""
    data, theirs = lines[1:], set(other[1:])
    if len(theirs) == len(other) - 1 and len(set(data)) == len(data):  # no repeated rows (a cabling list): set lookups
        return [line for line in data if line not in theirs]
    missing = Counter(data)
    missing.subtract(Counter(other[1:]))
    return [line for line, n in missing.items() if n > 0 for _ in range(n)]


def _parse(lines: list[bytes]) -> list[list[str]]:
    return list(csv.reader(line.decode("utf-8") for line in lines))


def _keyed(rows: list[list[str]], key_of: Callable[[list[str]], Key]) -> dict[Key, list[str]] | None:
    """Rows by their key; None when a key repeats."""
    out: dict[Key, list[str]] = {}
    for row in rows:
        key = key_of(row)
        if key in out:
            return None
        out[key] = row
    return out


def _cell(row: list[str], i: int) -> str:
    return row[i] if i < len(row) else ""


def _number(text: str) -> float | None:
    if text == "":
        return 0.0
    try:
        return float(text)
    except ValueError:
        return None


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


# -- text ----------------------------------------------------------------------------------------------------


def _text(change: FileChange, a: bytes, b: bytes) -> None:
    """Lines added and removed, counted on the lines as bytes: a text output of 10^5 lines (an
    acceptance plan at 131k GPUs, 55 MB) is never held as text on either side."""
    _utf8(a)
    _utf8(b)
    a_lines, b_lines = a.splitlines(), b.splitlines()
    set_a, set_b = set(a_lines), set(b_lines)
    if len(set_a) == len(a_lines) and len(set_b) == len(b_lines):  # no line repeats: one intersection
        common = len(set_a & set_b)
        change.lines = {"added": len(set_b) - common, "removed": len(set_a) - common}
        return
    # A line on one side as many times as the other lacks it (_only's count).
    missing = Counter(b_lines)
    missing.subtract(Counter(a_lines))
    change.lines = {
        "added": sum(n for n in missing.values() if n > 0),
        "removed": -sum(n for n in missing.values() if n < 0),
    }


def _utf8(data: bytes, chunk: int = 1 << 20) -> None:
    """Raise UnicodeDecodeError unless ``data`` is UTF-8, decoding a chunk at a time (never the whole)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for start in range(0, len(data), chunk):
        decoder.decode(view[start : start + chunk])
    decoder.decode(b"", final=True)


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit, scale in (("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
