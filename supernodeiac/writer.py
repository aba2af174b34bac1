"""The only code that touches out/: writes a render all or nothing, and never replaces a folder it
cannot prove it wrote.

**Whose folder.** A render's ``MANIFEST.json`` says ``"format": "snc-manifest/1"`` and
``"tool": "snc"`` and lists every file with its size and SHA-256. snc replaces a folder only
when it is empty or its manifest is such a file (a regular file, not a link) that lists exactly
the files the folder holds, at the sizes written: a file or folder it does not list, a link, or
a listed file that was edited (another size) means the folder is someone else's, and it is
refused with a clear error before anything is touched. (A manifest of snc 0.1, without
``format``, is recognised by its shape and the same listing.)

**Streams.** An artifact may be a stream of chunks (a 200 MB cabling list, a thousand switch
configs) rather than bytes: it is written piece by piece into the staging folder and hashed as it
goes, so the manifest's size and SHA-256 are those of the bytes on disk and a large render is
never held whole in memory.

**All or nothing.** The files are written into a staging folder on the same file system, then
swapped with the old render in one step, ``renameat2(RENAME_EXCHANGE)``, so the output folder is
never missing and a process killed at any moment leaves the complete old render or the complete
new one. Where the kernel or file system cannot exchange (not Linux, Linux before 3.15, some
network file systems), the old folder is renamed aside and the new one into place: two renames,
with an instant between them where the folder is missing.

* Normally the staging folder is a hidden sibling, ``.NAME.snc-PID-RANDOM``, and the whole
  folder is exchanged.
* A folder that cannot be replaced is written *inside*: a mount point, the working folder
  (``-o .``) or a folder whose parent snc may not write. The staging folder is then
  ``.snc-PID-RANDOM`` inside it, and each top-level entry (``cabling/``, ``bom/``, ...) is
  exchanged in turn, ``MANIFEST.json`` last; a kill between two entries leaves each entry
  complete (old or new) and a journal that lets the next run accept them as its own.

**Re-checked at the swap.** The output folder and the folder the swap happens in are opened
when inspected and held until the swap; the staging folder is made and filled through those
descriptors. Right before the exchange both paths must still be those folders (``st_dev`` and
``st_ino``, not links) and the output folder must list exactly what was inspected; after it, the
previous render must still list that, or it is exchanged back. Otherwise the write is refused
naming the entry, and nothing is lost (a file saved into the old render during the render stays).
SIGTERM during the write removes the staging folder, as Ctrl-C does, before the process ends.

**Debris.** Every staging folder has a lock file beside it (``<staging>.lock``: tool, pid,
the pid's start time, host) written before the folder is made and removed after it is gone. The
next run into the same folder removes the staging folders of runs that are no longer alive on
this host, and only those: a run that may still be alive (on this host, or any run on another
host) is left alone, and the new render is refused as a concurrent one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import threading
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from .util.progress import NULL, Progress
from .util.renameat2 import exchange, rename_noreplace

MANIFEST = "MANIFEST.json"
MANIFEST_FORMAT = "snc-manifest/1"
STAGING_FORMAT = "snc-staging/1"
TOOL = "snc"
STAGING_PREFIX = ".snc-"  # in-place staging inside the target; a sibling one is ".NAME.snc-"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024


class Chunked(Protocol):
    """A large artifact produced as it is written (``render.Stream``)."""

    def chunks(self) -> Iterator[bytes]: ...


class WriteError(Exception):
    """The artifacts cannot be written where asked; the target folder is left as it was."""


def manifest(artifacts: Mapping[str, bytes], blueprint_name: str) -> bytes:
    entries = [
        {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for path, data in sorted(artifacts.items())
    ]
    return _manifest(entries, blueprint_name)


def _manifest(entries: list[dict[str, Any]], blueprint_name: str) -> bytes:
    doc = {"format": MANIFEST_FORMAT, "tool": TOOL, "blueprint": blueprint_name, "files": entries}
    return (json.dumps(doc, indent=2) + "\n").encode()


def _safe_relpath(rel: str) -> PurePosixPath:
    """A renderer's artifact path, refused when it could land outside the output folder."""
    p = PurePosixPath(rel)
    if not rel or "\\" in rel or p.is_absolute() or any(part in ("", ".", "..") for part in rel.split("/")):
        raise WriteError(f"artifact path {rel!r} escapes the output folder (or is not a plain relative path)")
    if rel == MANIFEST or p.parts[0].startswith(STAGING_PREFIX):
        raise WriteError(f"artifact path {rel!r} is reserved for the manifest or staging")
    return p


# -- staging locks and liveness ------------------------------------------------------------------


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), so that a
    pid reused by another process is not taken for the run that wrote a lock; None off Linux."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the command name may hold spaces and ')'
    return fields[19] if len(fields) > 19 else None


def _alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's
    except OSError:
        return False
    return start is None or _process_start(pid) in (None, start)


@dataclass
class _Lock:
    """A staging folder's lock file, as read back."""

    path: Path
    staging: Path
    pid: int
    host: str
    start: str | None
    state: str
    entries: list[str] = field(default_factory=list)

    @property
    def stale(self) -> bool:
        return self.host == socket.gethostname() and not _alive(self.pid, self.start)


def _read_lock(path: Path) -> _Lock | None:
    """The lock at ``path`` when it is one of ours (a regular file in our format), else None."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        doc = json.loads(path.read_bytes()[:65536])
        if doc.get("format") != STAGING_FORMAT or doc.get("tool") != TOOL:
            return None
        staging = path.with_name(str(doc["staging"]))
        if staging.name + ".lock" != path.name:
            return None
        entries = [str(e) for e in doc.get("entries", [])]
        return _Lock(path, staging, int(doc["pid"]), str(doc["host"]), doc.get("start"), str(doc["state"]), entries)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_lock(path: Path, staging: Path, state: str, entries: list[str] | None = None) -> None:
    pid = os.getpid()
    doc = {
        "format": STAGING_FORMAT,
        "tool": TOOL,
        "staging": staging.name,
        "pid": pid,
        "start": _process_start(pid),
        "host": socket.gethostname(),
        "state": state,
        "entries": entries or [],
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc) + "\n")
    os.replace(tmp, path)  # a lock is read whole or not at all


_TOKEN = re.compile(r"([0-9]+)-[0-9a-f]{8}")


@dataclass
class _Debris:
    """What killed runs left in one folder: locks (each with its staging folder) and lock files
    half written (``.lock.tmp``, recognised by name: the run's pid and a random token)."""

    locks: list[_Lock]
    tmps: list[Path]

    def names(self) -> set[str]:
        return {n for lock in self.locks for n in (lock.path.name, lock.staging.name)} | {t.name for t in self.tmps}


def _debris(folder: Path, prefix: str) -> _Debris:
    """Our staging among ``folder``'s entries named ``prefix<pid>-<token>...``."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(prefix))
    except OSError:
        return _Debris([], [])
    locks, tmps = [], []
    for name in names:
        rest = name[len(prefix) :]
        if rest.endswith(".lock") and (lock := _read_lock(folder / name)) is not None:
            locks.append(lock)
        elif rest.endswith(".lock.tmp") and (m := _TOKEN.fullmatch(rest[: -len(".lock.tmp")])) and not _alive(int(m[1]), None):
            tmps.append(folder / name)
    return _Debris(locks, tmps)


def _remove_staging(lock: _Lock, keep_lock: bool = False) -> None:
    """Delete a staging folder (and the aside folder of the two-rename fallback), then its lock."""
    for path in (lock.staging, lock.staging.with_name(lock.staging.name + ".old")):
        if os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)
    if not keep_lock and not os.path.lexists(lock.staging):
        with contextlib.suppress(OSError):
            os.unlink(lock.path)


# -- whose folder --------------------------------------------------------------------------------


# One entry of a folder as inspected: kind ("d" folder, "f" file, "o" anything else), size,
# inode and modification time (a folder's own size and time change as entries come and go).
_Entry = tuple[str, int, int, int]


@dataclass
class _Target:
    """What is at the output path now."""

    exists: bool
    in_place: bool  # write inside: the folder itself cannot be replaced
    inside: _Debris  # stale staging of killed runs inside the target (in-place runs)
    beside: _Debris  # and beside it
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the folder inspected
    listing: dict[str, _Entry] = field(default_factory=dict)  # everything it held but snc's staging
    skip: set[str] = field(default_factory=set)  # top-level names of that staging, not listed


def _refuse(target: Path, why: str) -> WriteError:
    return WriteError(
        f"{why}; snc replaces only a folder it rendered (its {MANIFEST} lists every file) or an empty one: "
        "choose another -o folder, or move these files away"
    )


def _read_manifest(target: Path) -> dict[str, int] | None:
    """path -> bytes of every file the manifest lists, when it is ours; None when there is none."""
    path = target / MANIFEST
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_MANIFEST_BYTES:
        raise _refuse(target, f"{path} is not a file snc wrote (a link, or not a regular file)")
    try:
        doc = json.loads(path.read_bytes())
        files = doc["files"] if isinstance(doc, dict) else None
        ours = isinstance(doc, dict) and (
            (doc.get("format") == MANIFEST_FORMAT and doc.get("tool") == TOOL)
            or set(doc) == {"blueprint", "files"}  # snc 0.1 wrote these two keys only
        )
        listed = {str(e["path"]): int(e["bytes"]) for e in files} if ours and isinstance(files, list) else None
        if listed is not None and not all(isinstance(e.get("sha256"), str) and len(e["sha256"]) == 64 for e in files or ()):
            listed = None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        listed = None
    if listed is None:
        raise _refuse(target, f"{path} was not written by snc (it does not say format {MANIFEST_FORMAT!r}, tool {TOOL!r})")
    return listed


def _scan(target: Path, skip: set[str]) -> dict[str, _Entry]:
    """Every entry under ``target`` (links not followed) by its path relative to it, but the
    top-level names in ``skip``: what the swap compares with what was inspected."""
    found: dict[str, _Entry] = {}
    base = str(target)
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(f"{base}/{rel}" if rel else base) as it:
            entries = list(it)
        for entry in entries:
            if not rel and entry.name in skip:
                continue
            name = f"{rel}/{entry.name}" if rel else entry.name
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                found[name] = ("d", 0, st.st_ino, 0)
                stack.append(name)
            else:
                kind = "f" if stat.S_ISREG(st.st_mode) else "o"
                found[name] = (kind, st.st_size, st.st_ino, st.st_mtime_ns)
    return found


def _check_listing(target: Path, listed: dict[str, int], entries: dict[str, _Entry], skip: set[str]) -> None:
    """Every file under ``target`` is listed at its size, every folder holds a listed file, and
    nothing is a link or a special file; ``skip``: top-level names that are snc's (staging)."""
    # The folders the listed files sit in (and their parents), by string: a render lists 10^4 files.
    folders: set[str] = set()
    for p in listed:
        head = p.rpartition("/")[0]
        while head and head not in folders:
            folders.add(head)
            head = head.rpartition("/")[0]
    for name, (kind, size, _, _) in entries.items():
        if name == MANIFEST or name.partition("/")[0] in skip:
            continue
        if kind == "d":
            if name not in folders:
                raise _refuse(target, f"{target} holds a folder snc did not write ({name}/)")
        elif kind == "f":
            if name not in listed:
                raise _refuse(target, f"{target} holds a file snc did not write ({name})")
            if size != listed[name]:
                raise _refuse(target, f"{target}/{name} was changed since snc wrote it (its size differs from the manifest)")
        else:
            raise _refuse(target, f"{target} holds a link or special file snc did not write ({name})")


def _inspect(target: Path) -> _Target:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return _Target(False, False, _Debris([], []), _debris_beside(target))
    if stat.S_ISLNK(st.st_mode):
        raise WriteError(
            f"{target} is a symbolic link (to {os.readlink(target)}); snc replaces folders, not links: "
            "give -o the folder it points to"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise WriteError(f"{target} exists and is not a folder; give -o a folder (it is created when missing)")
    inside = _debris(target, STAGING_PREFIX)
    _refuse_live(target, inside.locks)
    # Names inside the target that are snc's own: staging of killed runs, and the entries a
    # killed in-place run was swapping (each one complete, old or new).
    skip = inside.names()
    vouched = {e for lock in inside.locks if lock.state == "swapping" for e in lock.entries}
    listed = _read_manifest(target)
    if listed is None:
        others = sorted(n for n in os.listdir(target) if n not in skip and n not in vouched)
        if others:
            raise _refuse(target, f"{target} is not empty and was not written by snc (no {MANIFEST}; it holds {others[0]})")
    entries = _scan(target, skip)
    if listed is not None:
        _check_listing(target, listed, entries, skip | vouched)
    identity = (st.st_dev, st.st_ino)
    return _Target(True, _cannot_replace(target), inside, _debris_beside(target), identity, entries, skip)


def _debris_beside(target: Path) -> _Debris:
    found = _debris(target.parent, f".{target.name}.snc-")
    _refuse_live(target, found.locks)
    return found


def _refuse_live(target: Path, locks: list[_Lock]) -> None:
    live = [lock for lock in locks if not lock.stale]
    if live:
        lock = live[0]
        raise WriteError(
            f"another snc (pid {lock.pid} on {lock.host}) is writing {target} now; wait for it "
            f"(or, if that run is gone, delete {lock.path} and {lock.staging})"
        )


def _cannot_replace(target: Path) -> bool:
    """A folder that must be written inside rather than swapped whole."""
    if os.path.ismount(target):
        return True
    with contextlib.suppress(OSError):
        if os.path.samefile(target, os.getcwd()):
            return True
    return not os.access(target.parent, os.W_OK | os.X_OK)


# -- writing -------------------------------------------------------------------------------------


_BLOCK = 1 << 20  # bytes of a stream gathered before they are written and hashed
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _write_one(folder_fd: int, rel: str, data: bytes | Chunked) -> dict[str, Any]:
    """Write bytes, or a stream chunk by chunk (hashed and counted as written, never held whole),
    at ``rel`` inside the staging folder's descriptor (so that every file lands in the folder
    made for it, whatever happens to the paths above it); the manifest entry's size and SHA-256
    of exactly the bytes that reached the file."""
    with os.fdopen(os.open(rel, _CREATE, 0o666, dir_fd=folder_fd), "wb") as out:
        if isinstance(data, bytes | bytearray | memoryview):
            out.write(data)
            return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        # A stream's chunks (a config's tables, a sheet's rows) are written and hashed a megabyte
        # at a time: one write and one hash update per block, not per chunk.
        digest, size = hashlib.sha256(), 0
        pending: list[bytes] = []
        held = 0
        for chunk in data.chunks():
            pending.append(chunk)
            held += len(chunk)
            if held >= _BLOCK:
                block = b"".join(pending)
                out.write(block)
                digest.update(block)
                size += held
                pending, held = [], 0
        if pending:
            block = b"".join(pending)
            out.write(block)
            digest.update(block)
            size += held
    return {"bytes": size, "sha256": digest.hexdigest()}


def _fill(
    staging_fd: int,
    artifacts: Mapping[str, bytes | Chunked],
    paths: dict[str, PurePosixPath],
    blueprint_name: str,
    consume: bool,
) -> None:
    entries = []
    folders: set[str] = {""}
    for rel in sorted(artifacts):  # by key: a list of (path, value) pairs would hold every value to the end
        # Consumed: a file's bytes (or the stream's closure and what it captured) are dropped once
        # written, so the files written first do not stay in memory beside those made later.
        data = artifacts.pop(rel) if consume and isinstance(artifacts, MutableMapping) else artifacts[rel]
        parts = paths[rel].parts
        for depth in range(1, len(parts)):  # 10^4 switch folders: each made once
            folder = "/".join(parts[:depth])
            if folder not in folders:
                os.mkdir(folder, dir_fd=staging_fd)
                folders.add(folder)
        entries.append({"path": rel, **_write_one(staging_fd, rel, data)})
        del data
    with os.fdopen(os.open(MANIFEST, _CREATE, 0o666, dir_fd=staging_fd), "wb") as out:
        out.write(_manifest(entries, blueprint_name))  # last: its presence means complete


def _swap_whole(staging: Path, target: Path) -> None:
    """Put ``staging`` at ``target``; afterwards ``staging`` holds the old render (or nothing)."""
    if not os.path.lexists(target):
        if not rename_noreplace(staging, target):
            os.rename(staging, target)
        return
    if exchange(staging, target):
        return
    # No exchange here: the old folder goes aside, the new one in; put the old back on failure.
    aside = staging.with_name(staging.name + ".old")
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        raise
    os.rename(aside, staging)


def _swap_inside(staging: Path, target: Path, lock: Path, skip: set[str]) -> None:
    """Move the staged entries into ``target`` one at a time (MANIFEST.json last), the old ones into
    ``staging``; on failure, every entry moved so far is moved back."""
    new = sorted(os.listdir(staging))
    old = sorted(n for n in os.listdir(target) if n not in skip and n not in new)
    _write_lock(lock, staging, "swapping", sorted(set(new) | set(old)))
    trash = staging / (STAGING_PREFIX + "old")
    os.mkdir(trash)
    done: list[tuple[str, str]] = []
    try:
        for name in old:  # entries of the old render that the new one does not have
            os.rename(target / name, trash / name)
            done.append(("aside", name))
        for name in [n for n in new if n != MANIFEST] + [MANIFEST]:
            if not os.path.lexists(target / name):
                os.rename(staging / name, target / name)
                done.append(("in", name))
            elif exchange(staging / name, target / name):
                done.append(("exchanged", name))
            else:
                os.rename(target / name, trash / name)
                os.rename(staging / name, target / name)
                done.append(("replaced", name))
    except BaseException:
        for how, name in reversed(done):
            with contextlib.suppress(OSError):
                if how == "aside":
                    os.rename(trash / name, target / name)
                elif how == "in":
                    os.rename(target / name, staging / name)
                elif how == "exchanged":
                    exchange(staging / name, target / name)
                else:
                    os.rename(target / name, staging / name)
                    os.rename(trash / name, target / name)
        raise


def _clear(debris: _Debris, keep_swapping: bool) -> None:
    """Remove killed runs' staging; ``keep_swapping`` keeps the journal of an in-place run killed
    mid-swap, which vouches for the target's entries until a new render has replaced them."""
    for lock in debris.locks:
        if lock.stale:  # a live run's staging was refused before anything was touched
            _remove_staging(lock, keep_lock=keep_swapping and lock.state == "swapping")
    for tmp in debris.tmps:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def write(
    artifacts: Mapping[str, bytes | Chunked],
    target: Path,
    blueprint_name: str,
    progress: Progress = NULL,
    consume: bool = False,
) -> Path:
    """Write ``artifacts`` as the new content of ``target``, all or nothing (see the module doc).

    A value is bytes, or a stream (``render.Stream``: anything with ``chunks()``) that is written
    chunk by chunk into the staging folder; a stream that fails midway fails the write like any
    other error, before the swap, so ``target`` is left as it was. ``progress`` is told the
    ``write`` step (streamed outputs are produced inside it). With ``consume`` (a mutable dict
    the caller is done with), each entry is removed from it as its file is written, so that
    what it held can be freed then and not at the end (the dict is left partly emptied when the
    write fails)."""
    with progress.step("write"):
        return _write(artifacts, target, blueprint_name, consume)


def written(target: Path) -> list[dict[str, Any]]:
    """The files of a folder snc wrote, as its manifest lists them (path, bytes, sha256)."""
    doc = json.loads((Path(target) / MANIFEST).read_bytes())
    return list(doc["files"])


def _open_folder(path: Path, dir_fd: int | None = None) -> tuple[int, tuple[int, int]]:
    """A descriptor of the folder at ``path`` (not through a link) and its (st_dev, st_ino). Held
    until the swap, it keeps the folder's inode from being reused, so that the same identity
    later means the same folder."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path.name if dir_fd is not None else path, flags, dir_fd=dir_fd)
    st = os.fstat(fd)
    return fd, (st.st_dev, st.st_ino)


def _same_folder(path: Path, identity: tuple[int, int]) -> str | None:
    """Why ``path`` is no longer the folder of ``identity`` (None when it still is)."""
    try:
        own = os.lstat(path)
        through = os.stat(path)  # a folder above it replaced by a link shows here
    except OSError as exc:
        return f"it is gone ({exc.strerror})"
    if stat.S_ISLNK(own.st_mode):
        return "it is now a symbolic link"
    if (through.st_dev, through.st_ino) != identity:
        return "it is now another folder (it, or a folder above it, was moved or replaced)"
    return None


def _changed(before: dict[str, _Entry], after: dict[str, _Entry]) -> str | None:
    """The first path (in order) that differs between two listings, and how."""
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is None:
            return f"{name} was saved into it"
        if new is None:
            return f"{name} was removed"
        return f"{name} was changed"
    return None


@dataclass
class _Held:
    """The folders inspected before staging, held open until the swap: the output folder (when it
    exists) and the folder the swap happens in (its parent; the output folder itself in place)."""

    target: Path
    found: _Target
    holder: Path
    holder_fd: int
    holder_id: tuple[int, int]
    target_fd: int | None = None

    def close(self) -> None:
        for fd in (self.holder_fd, self.target_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def recheck(self, staging: Path, skip: set[str]) -> None:
        """Right before the swap: the parent, the output folder and its listing are the ones
        inspected, else the swap is refused (and nothing has been touched)."""
        why = _same_folder(self.holder, self.holder_id)
        if why is not None:
            raise WriteError(f"{self.holder}, the folder {self.target.name} is written in, changed during the render: {why}")
        if not os.path.samefile(staging.parent, self.holder):
            raise WriteError(f"the staging folder {staging} is no longer in {self.holder}")
        if not self.found.exists:
            if os.path.lexists(self.target):
                raise WriteError(f"{self.target} appeared during the render; render again to replace it")
            return
        assert self.found.identity is not None
        why = _same_folder(self.target, self.found.identity)
        if why is not None:
            raise WriteError(f"{self.target} changed during the render: {why}")
        self.check_listing(self.target, skip)

    @contextlib.contextmanager
    def swapping(self) -> Iterator[None]:
        """The swap itself goes by path: a folder replaced in the instant after the re-check makes
        the paths miss the staging folder (nothing is exchanged then, or it is moved back); that
        is said as the change it is, not as the bare OSError."""
        try:
            yield
        except OSError:
            why = _same_folder(self.holder, self.holder_id)
            if why is None:
                raise
            raise WriteError(
                f"{self.holder}, the folder {self.target.name} is written in, changed during the swap: {why}"
            ) from None

    def check_listing(self, folder: Path, skip: set[str]) -> None:
        why = _changed(self.found.listing, _scan(folder, skip))
        if why is not None:
            raise WriteError(
                f"{self.target} changed during the render ({why}); snc replaces only what it inspected, so nothing "
                "was replaced: render again"
            )


def _hold(target: Path, found: _Target) -> _Held:
    holder = target if found.in_place else target.parent
    target_fd = None
    if found.exists:
        target_fd, identity = _open_folder(target)
        if identity != found.identity:
            os.close(target_fd)
            raise WriteError(f"{target} was replaced while it was inspected; render again")
    if found.in_place:
        assert target_fd is not None and found.identity is not None
        return _Held(target, found, holder, target_fd, found.identity)
    holder.mkdir(parents=True, exist_ok=True)
    try:
        holder_fd, holder_id = _open_folder(holder)
    except OSError:
        if target_fd is not None:
            os.close(target_fd)
        raise
    return _Held(target, found, holder, holder_fd, holder_id, target_fd)


class _Terminated(BaseException):
    """SIGTERM during the write: unwound like Ctrl-C, so the staging folder is removed."""


@contextlib.contextmanager
def _terminate_cleanly() -> Iterator[None]:
    """While staging exists, SIGTERM unwinds the write (which removes the staging folder) and
    then ends the process by SIGTERM as before; elsewhere, and off the main thread, nothing
    changes. (SIGINT already unwinds: KeyboardInterrupt.)"""
    if (
        not hasattr(signal, "SIGTERM")
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL  # ignored, or the caller's own handler
    ):
        yield
        return

    def raise_terminated(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, previous)
        os.kill(os.getpid(), signal.SIGTERM)  # dies as a killed process does, its exit status that of SIGTERM
        raise SystemExit(128 + signal.SIGTERM) from None  # not reached where the signal is delivered at once
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write(artifacts: Mapping[str, bytes | Chunked], target: Path, blueprint_name: str, consume: bool) -> Path:
    target = Path(os.path.abspath(target))
    paths = {rel: _safe_relpath(rel) for rel in sorted(artifacts)}
    found = _inspect(target)
    held = _hold(target, found)
    try:
        with _terminate_cleanly():
            return _write_held(artifacts, held, paths, blueprint_name, consume)
    finally:
        held.close()


def _write_held(
    artifacts: Mapping[str, bytes | Chunked], held: _Held, paths: dict[str, PurePosixPath], blueprint_name: str, consume: bool
) -> Path:
    target, found = held.target, held.found
    _clear(found.beside, keep_swapping=False)
    _clear(found.inside, keep_swapping=True)
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    staging = target / f"{STAGING_PREFIX}{token}" if found.in_place else target.parent / f".{target.name}.snc-{token}"
    lock = staging.with_name(staging.name + ".lock")
    ours = found.skip | {staging.name, lock.name, lock.name + ".tmp"}
    swapped = False
    staging_fd: int | None = None
    _write_lock(lock, staging, "writing")
    try:
        # Made and filled through descriptors: a folder above replaced mid-run cannot divert a file.
        os.mkdir(staging.name, dir_fd=held.holder_fd)
        staging_fd, _ = _open_folder(staging, held.holder_fd)
        if held.target_fd is not None and not found.in_place:
            os.fchmod(staging_fd, stat.S_IMODE(os.fstat(held.target_fd).st_mode))  # the folder keeps its permissions
        _fill(staging_fd, artifacts, paths, blueprint_name, consume)
        os.close(staging_fd)
        staging_fd = None
        held.recheck(staging, ours)
        if found.in_place:
            with held.swapping():
                _swap_inside(staging, target, lock, ours)
        else:
            with held.swapping():
                _swap_whole(staging, target)
            swapped = found.exists
            if swapped:
                # The old render is in staging now: what it holds must be what was inspected (a
                # file saved in the instant before the exchange), or it goes back, untouched.
                try:
                    held.check_listing(staging, ours)
                except WriteError:
                    if not exchange(staging, target):
                        with contextlib.suppress(OSError):
                            os.unlink(lock)  # unlocked: no later run takes the folder for its debris
                        raise WriteError(f"{target} changed during the swap; its previous content is kept in {staging}") from None
                    swapped = False
                    raise
    except BaseException:
        if staging_fd is not None:
            os.close(staging_fd)
        if not swapped:
            # Through the parent as inspected: the staging is there, whatever the path names now.
            shutil.rmtree(staging.name, ignore_errors=True, dir_fd=held.holder_fd)
            with contextlib.suppress(OSError):
                os.unlink(lock.name, dir_fd=held.holder_fd)
        raise
    _remove_staging(_Lock(lock, staging, os.getpid(), "", None, "done"))  # staging now holds the old render
    if found.in_place:
        _clear(_debris(target, STAGING_PREFIX), keep_swapping=False)  # the new render vouches for itself now
    return target
