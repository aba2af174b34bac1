"""Whether an output folder already holds what a blueprint renders, so an unchanged render (and
``render --check`` of an unchanged design) answers in milliseconds instead of building the
Fabric again.

Two things must hold:

* **The inputs are the same**: a digest of everything a render reads: the blueprint and every
  file it includes (their bytes), snc's own code and data (every file of the package: its
  Python, templates and catalogue, so an edited checkout counts as a new snc), the project
  configuration that decides findings, the options (``--only``) and whether Graphviz's ``dot``
  is there (it makes the SVGs).
* **The folder is untouched**: every file the folder's manifest lists, and the manifest, has the
  size, modification time and inode it had when snc wrote it.

Both are kept in the user's cache (``$SNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/snc``, else
``~/.cache/snc``), one small JSON file per output folder, never in the folder: MANIFEST.json stays
the same bytes on every machine, and a fresh clone (CI) renders in full. Anything unexpected (no
cache entry, an unreadable one, a file changed, added or missing) means "render again": this is
an optimisation, never a source of truth. ``--force`` skips it once, ``SNC_NO_RENDER_CACHE=1``
always.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from .findings import Finding, Location, Severity

STATE_FORMAT = "snc-render-state/1"
PACKAGE = Path(__file__).resolve().parent
_CODE_SUFFIXES = {".py", ".yaml", ".j2", ".json", ".typed"}


def code_files() -> list[Path]:
    """Every file of the package a render reads, in a stable order. The walk follows directory
    links: in a source checkout ``supernodeiac/templates`` links to the top-level templates/, and
    pathlib's rglob would pass over it, so a changed template would not count as a change."""
    found: list[Path] = []
    for root, dirs, files in os.walk(PACKAGE, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [Path(root, f) for f in sorted(files) if Path(f).suffix in _CODE_SUFFIXES]
    return found


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over every file of the package (path and bytes), templates and catalogue included."""
    h = hashlib.sha256()
    for path in code_files():
        h.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _dot_identity() -> str:
    dot = shutil.which("dot")
    if dot is None:
        return "no dot"
    try:
        st = os.stat(dot)
    except OSError:
        return "no dot"
    return f"{os.path.realpath(dot)}:{st.st_size}:{st.st_mtime_ns}"


def input_digest(files: Iterable[tuple[str, bytes]], options: Mapping[str, Any]) -> str:
    """The digest of a render's inputs: the blueprint's files (path, bytes), the code, the options."""
    h = hashlib.sha256()
    h.update(STATE_FORMAT.encode() + b"\0" + code_digest().encode() + b"\0")
    for path, data in sorted(files):
        h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    h.update(json.dumps({**options, "dot": _dot_identity()}, sort_keys=True, default=str).encode())
    return h.hexdigest()


def disabled() -> bool:
    """``SNC_NO_RENDER_CACHE=1``: every render renders (and records nothing)."""
    return os.environ.get("SNC_NO_RENDER_CACHE", "") not in ("", "0")


def _cache_dir() -> Path:
    explicit = os.environ.get("SNC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "snc"


def _entry(target: Path) -> Path:
    # The path as given, links not followed: a link to a rendered folder is not that folder (the
    # writer and --check refuse links; they must see it).
    key = hashlib.sha256(os.path.abspath(target).encode()).hexdigest()[:32]
    return _cache_dir() / f"render-{key}.json"


def _held(target: Path) -> dict[str, os.stat_result | None]:
    """Every entry under ``target`` (path with ``/``) and its stat, None for anything that is not a
    regular file (a link, a FIFO): one scandir walk, whose entries carry their stat (a pathlib
    lstat per file made the shortcut of a 20,000-file render take half a second)."""
    held: dict[str, os.stat_result | None] = {}
    stack = [("", os.fspath(target))]
    while stack:
        prefix, folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append((rel + "/", entry.path))
                elif entry.is_file(follow_symlinks=False):
                    held[rel] = entry.stat(follow_symlinks=False)
                else:
                    held[rel] = None
    return held


def fingerprint(target: Path) -> list[list[Any]] | None:
    """(path, size, mtime_ns, inode) of the manifest and of every file it lists, None when the
    folder is not a render of snc's whose files are all there as regular files."""
    if target.is_symlink():
        return None
    try:
        held = _held(target)
        st = held.get("MANIFEST.json")
        if st is None or st.st_size > 16 * 1024 * 1024:
            return None
        doc = json.loads((target / "MANIFEST.json").read_bytes())
        listed = sorted(str(f["path"]) for f in doc["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    # A file added beside the listed ones is drift too: the folder holds the listed files and the
    # manifest, nothing else.
    if len(held) != len(listed) + 1:
        return None
    out: list[list[Any]] = [["MANIFEST.json", st.st_size, st.st_mtime_ns, st.st_ino]]
    for rel in listed:
        fst = held.get(rel)
        if fst is None:
            return None
        out.append([rel, fst.st_size, fst.st_mtime_ns, fst.st_ino])
    return out


def _finding_of(d: Mapping[str, Any]) -> Finding:
    loc = Location(d["file"], d["line"], d["col"]) if d.get("file") is not None else None
    path = tuple(int(p) if p.isdigit() else p for p in str(d.get("path", "")).split("/") if p)
    return Finding(d["rule"], Severity(d["severity"]), d["message"], path, d.get("hint", ""), loc)


def up_to_date(target: Path, digest: str) -> tuple[list[Finding], list[str]] | None:
    """The findings the last render of ``target`` reported, when it is still what the inputs
    render; None when it must be rendered again (or cannot be told)."""
    if disabled():
        return None
    try:
        state = json.loads(_entry(target).read_bytes())
        if state.get("format") != STATE_FORMAT or state.get("digest") != digest:
            return None
        if state.get("fingerprint") != fingerprint(target):
            return None
        return [_finding_of(d) for d in state["findings"]], [str(n) for n in state.get("notices", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(target: Path, digest: str, findings: Iterable[Finding], notices: Iterable[str] = ()) -> None:
    """Record that ``target`` now holds what ``digest``'s inputs render (best effort: a cache that
    cannot be written only costs the next render its shortcut)."""
    if disabled():
        return
    prints = fingerprint(target)
    if prints is None:
        return
    state = {
        "format": STATE_FORMAT,
        "target": os.path.abspath(target),
        "digest": digest,
        "fingerprint": prints,
        "findings": [f.as_dict() for f in findings],
        "notices": list(notices),  # said again by the shortcut, as the render said them
    }
    _store(_entry(target), state)


def _store(entry: Path, state: dict[str, Any]) -> None:
    """Write a cache entry whole or not at all (best effort: a cache that cannot be written only
    costs the next render its shortcut)."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f".{entry.name}.{os.getpid()}")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, entry)
    except OSError:
        return


def _sources_entry(blueprint: str, out: str | None) -> Path:
    # The same blueprint rendered into the same folder (the default folder depends on the working
    # directory, as out/ is relative to it).
    where = os.path.abspath(out) if out is not None else ["default", os.getcwd()]
    key = hashlib.sha256(json.dumps([os.path.abspath(blueprint), where]).encode()).hexdigest()[:32]
    return _cache_dir() / f"sources-{key}.json"


def remember_sources(blueprint: str, out: str | None, target: Path, sources: Iterable[str]) -> None:
    """Record which files a render of ``blueprint`` into ``out`` read (the blueprint first, then its
    includes) and the folder it wrote, so that the next render can tell whether anything changed
    from those files' bytes without parsing the blueprint: the same bytes at the same paths
    include the same files and name the same folder."""
    if disabled():
        return
    state = {
        "format": STATE_FORMAT,
        "target": os.fspath(target),
        "sources": [[os.path.abspath(p), os.path.realpath(p)] for p in sources],
    }
    _store(_sources_entry(blueprint, out), state)


def recall_sources(blueprint: str, out: str | None) -> tuple[Path, list[tuple[str, bytes]]] | None:
    """(folder, [(resolved path, bytes)] of every file the last render read) when each of those
    paths still leads to the file it led to; None when there is no record or a path now resolves
    elsewhere (a link swapped in: the full check reads the blueprint again)."""
    if disabled():
        return None
    try:
        state = json.loads(_sources_entry(blueprint, out).read_bytes())
        if state.get("format") != STATE_FORMAT:
            return None
        pairs = [(str(given), str(real)) for given, real in state["sources"]]
        if not pairs or pairs[0][0] != os.path.abspath(blueprint):
            return None
        files: list[tuple[str, bytes]] = []
        for given, real in pairs:
            if os.path.realpath(given) != real:
                return None
            with open(real, "rb") as fh:
                files.append((real, fh.read()))
        return Path(state["target"]), files
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget(target: Path) -> None:
    try:
        _entry(target).unlink()
    except OSError:
        return
