"""Drift: a committed output folder against what the blueprint renders now (``snc render --check``).

Pure comparison: the render happens in memory, the folder is only read. Each file that differs
is a ``drift`` finding located at the file in the output folder, naming what differs (the JSON
keys, the CSV rows and columns, the lines) so a pipeline shows reviewers where a hand edit or a
stale render is. ``MANIFEST.json`` is compared like any other file, less the excluded paths.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from .compare.artifacts import FileChange, FolderArtifacts, diff_artifacts
from .findings import Finding, Location, Severity
from .writer import MANIFEST, manifest

HINT = "render again (snc render FILE -o DIR) and commit the result, or undo the hand edit"


def drift_findings(
    artifacts: Mapping[str, bytes], blueprint_name: str, folder: Path, exclude: Sequence[str] = ()
) -> list[Finding]:
    """One finding per file of ``folder`` that differs from ``artifacts`` (plus its manifest)."""
    if not folder.is_dir():
        return [
            Finding(
                "drift",
                Severity.ERROR,
                f"{folder}/ does not exist: the rendered outputs are not committed",
                (),
                HINT,
                Location(str(folder), 0, 0),
            )
        ]

    def kept(path: str) -> bool:
        return not any(fnmatch.fnmatch(path, pattern) for pattern in exclude)

    expected = {p: b for p, b in artifacts.items() if kept(p)}
    expected[MANIFEST] = manifest({p: b for p, b in artifacts.items() if kept(p)}, blueprint_name)
    committed: dict[str, bytes] | FolderArtifacts = FolderArtifacts(folder)
    if exclude:
        committed = {p: committed[p] for p in committed if kept(p)}
        if MANIFEST in committed:
            committed[MANIFEST] = _without(committed[MANIFEST], kept)
    return [_finding(change, folder) for change in diff_artifacts(committed, expected).files]


def _without(data: bytes, kept) -> bytes:  # noqa: ANN001 - a path predicate
    """A committed manifest less the excluded files, written as the writer writes one."""
    try:
        doc = json.loads(data)
        doc["files"] = [e for e in doc["files"] if kept(e["path"])]
    except (ValueError, KeyError, TypeError):
        return data  # not a manifest snc wrote: compared as it is
    return (json.dumps(doc, indent=2) + "\n").encode()


def _finding(change: FileChange, folder: Path) -> Finding:
    where = Location(str(folder / change.path), 0, 0)
    if change.status == "added":
        message = f"{change.path} is missing: the blueprint renders it"
    elif change.status == "removed":
        message = f"{change.path} is not rendered by the blueprint any more (a stale or foreign file)"
    else:
        message = f"{change.path} differs from what the blueprint renders: {change.summary()}"
        if change.keys:
            message += "; keys " + ", ".join(k.path for k in change.keys[:5]) + (" ..." if change.key_changes > 5 else "")
        for what, examples in change.row_examples.items():
            message += f"; {what} rows " + ", ".join(examples[:3]) + (" ..." if change.rows.get(what, 0) > 3 else "")
    return Finding("drift", Severity.ERROR, message, (), HINT, where)
