"""Drift: a committed output folder against what the blueprint renders now (``snc render --check``).

Pure comparison: the render happens in memory, the folder is only read (nothing is created,
written or removed, even where ``snc render`` would clear a killed run's staging). Each file that
differs is a ``drift`` finding located at the file in the output folder, naming what differs (the
JSON keys, the CSV rows and columns, the lines) so a pipeline shows reviewers where a hand edit or
a stale render is.

The folder is read as the writer (:mod:`supernodeiac.writer`) would judge it before replacing
it: ``MANIFEST.json`` is compared like any other file, less the excluded paths, and one that is
not snc's (no ``format: snc-manifest/1``, ``tool: snc``) or is an older snc's is said to be so;
links and special files are reported, never followed; the staging of a killed run (``.snc-*``
at the top) is snc's own and left out.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..findings import Finding, Location, Severity
from ..writer import MANIFEST, MANIFEST_FORMAT, STAGING_PREFIX, TOOL, manifest
from .artifacts import FileChange, FolderArtifacts, diff_artifacts

HINT = "render again (snc render FILE -o DIR) and commit the result, or undo the hand edit"


def drift_findings(
    artifacts: Mapping[str, bytes],
    blueprint_name: str,
    folder: Path,
    exclude: Sequence[str] = (),
    notices: Sequence[str] = (),
) -> list[Finding]:
    """One finding per file of ``folder`` that differs from ``artifacts`` (plus its manifest).

    ``notices`` are the render's (an output it could not produce here, such as SVGs without
    Graphviz): a committed file missing from the render for that reason is said to be so."""
    problem = _not_a_folder(folder)
    if problem is not None:
        return [problem]

    def kept(path: str) -> bool:
        return not any(fnmatch.fnmatch(path, pattern) for pattern in exclude)

    expected = {p: b for p, b in artifacts.items() if kept(p)}
    expected[MANIFEST] = manifest({p: b for p, b in artifacts.items() if kept(p)}, blueprint_name)
    try:
        found = FolderArtifacts(folder, skip_prefix=STAGING_PREFIX)
        committed: Mapping[str, bytes] = found
        if exclude:
            committed = {p: found[p] for p in found if kept(p)}
            if MANIFEST in committed:
                committed[MANIFEST] = _without(committed[MANIFEST], kept)
        changes = diff_artifacts(committed, expected).files
    except OSError as exc:
        return [_error(f"{folder}/ cannot be read: {exc.strerror or exc}", folder)]
    out = [
        _error(f"{path} is {what}: snc writes regular files only, and snc render will not replace this folder", folder / path)
        for path, what in sorted(found.odd.items())
        if kept(path)
    ]
    for change in changes:
        message = _manifest_problem(committed[MANIFEST]) if change.path == MANIFEST and MANIFEST in committed else None
        out.append(_error(message, folder / MANIFEST) if message else _finding(change, folder, notices))
    return out


def _not_a_folder(folder: Path) -> Finding | None:
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return _error(f"{folder}/ does not exist: the rendered outputs are not committed", folder)
    except OSError as exc:
        return _error(f"{folder}/ cannot be read: {exc.strerror or exc}", folder)
    if stat.S_ISLNK(st.st_mode):
        return _error(
            f"{folder} is a symbolic link (to {os.readlink(folder)}): snc render replaces folders, not links; "
            "give -o the folder it points to",
            folder,
        )
    if not stat.S_ISDIR(st.st_mode):
        return _error(f"{folder} is not a folder: snc render writes its outputs into a folder", folder)
    return None


def _manifest_problem(data: bytes) -> str | None:
    """What is wrong with a committed manifest beyond its listing, when it is not this snc's."""
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        return f"{MANIFEST} was not written by snc (not a manifest): snc render will not replace this folder"
    if doc.get("format") == MANIFEST_FORMAT and doc.get("tool") == TOOL:
        return None  # ours: its listing is compared key by key
    if set(doc) == {"blueprint", "files"}:
        return f"{MANIFEST} was written by an older snc (without format {MANIFEST_FORMAT!r}): render again to update it"
    return (
        f"{MANIFEST} was not written by snc (it does not say format {MANIFEST_FORMAT!r}, tool {TOOL!r}): "
        "snc render will not replace this folder"
    )


def _without(data: bytes, kept: Callable[[str], bool]) -> bytes:
    """A committed manifest less the excluded files, written as the writer writes one."""
    try:
        doc = json.loads(data)
        doc["files"] = [e for e in doc["files"] if kept(e["path"])]
    except (ValueError, KeyError, TypeError):
        return data  # not a manifest snc wrote: compared as it is
    return (json.dumps(doc, indent=2) + "\n").encode()


def _error(message: str, where: Path) -> Finding:
    return Finding("drift", Severity.ERROR, message, (), HINT, Location(str(where), 0, 0))


def _unproduced(path: str, notices: Sequence[str]) -> str | None:
    """The render's notice that explains why ``path`` was not rendered here (a missing tool)."""
    if path.endswith(".svg"):
        for notice in notices:
            if notice.startswith("diagram:") and "SVG" in notice:
                return notice
    return None


def _finding(change: FileChange, folder: Path, notices: Sequence[str] = ()) -> Finding:
    if change.status == "added":
        message = f"{change.path} is missing: the blueprint renders it"
    elif change.status == "removed" and (why := _unproduced(change.path, notices)):
        return Finding(
            "drift",
            Severity.ERROR,
            f"{change.path} could not be rendered here to compare: {why}",
            (),
            "install the missing tool (graphviz for SVG), or leave the file out: --exclude 'diagrams/*.svg'",
            Location(str(folder / change.path), 0, 0),
        )
    elif change.status == "removed":
        message = f"{change.path} is not rendered by the blueprint any more (a stale or foreign file)"
    else:
        message = f"{change.path} differs from what the blueprint renders: {change.summary()}"
        if change.keys:
            message += "; keys " + ", ".join(k.path for k in change.keys[:5]) + (" ..." if change.key_changes > 5 else "")
        for what, examples in change.row_examples.items():
            message += f"; {what} rows " + ", ".join(examples[:3]) + (" ..." if change.rows.get(what, 0) > 3 else "")
    return _error(message, folder / change.path)
