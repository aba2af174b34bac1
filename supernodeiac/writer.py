"""The only code that touches out/: writes a render atomically, with a manifest.

Artifacts are written into a fresh sibling folder first and swapped into place with renames,
so a failed or interrupted render never leaves a half-written output folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

MANIFEST = "MANIFEST.json"


def manifest(artifacts: dict[str, bytes], blueprint_name: str) -> bytes:
    entries = [
        {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for path, data in sorted(artifacts.items())
    ]
    return _manifest(entries, blueprint_name)


def _manifest(entries: list[dict], blueprint_name: str) -> bytes:
    return (json.dumps({"blueprint": blueprint_name, "files": entries}, indent=2) + "\n").encode()


def _write_one(dest: Path, data: Any) -> dict:
    """Write bytes, or a stream chunk by chunk (hashing as it goes); the manifest entry's size and hash."""
    if isinstance(data, bytes | bytearray):
        dest.write_bytes(data)
        return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    digest, size = hashlib.sha256(), 0
    with dest.open("wb") as out:
        for chunk in data.chunks():
            out.write(chunk)
            digest.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": digest.hexdigest()}


class WriteError(Exception):
    """The artifacts cannot be written where asked; the target folder is left as it was."""


def _safe_relpath(rel: str) -> PurePosixPath:
    """A renderer's artifact path, refused when it could land outside the output folder."""
    p = PurePosixPath(rel)
    if not rel or "\\" in rel or p.is_absolute() or any(part in ("", ".", "..") for part in rel.split("/")):
        raise WriteError(f"artifact path {rel!r} escapes the output folder (or is not a plain relative path)")
    if rel == MANIFEST:
        raise WriteError(f"artifact path {rel!r} is reserved for the manifest")
    return p


def _replaceable(target: Path) -> None:
    """Only a folder snc wrote (it has a MANIFEST.json) or an empty one is replaced wholesale:
    ``-o ~`` must never delete a home directory."""
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir() or target.is_symlink():
        raise WriteError(f"{target} exists and is not a folder")
    if (target / MANIFEST).is_file() or not any(target.iterdir()):
        return
    raise WriteError(f"{target} is not empty and was not written by snc (no {MANIFEST}); choose another -o folder")


def write(artifacts: Mapping[str, Any], target: Path, blueprint_name: str) -> Path:
    """Write ``artifacts`` (bytes, or ``render.Stream`` values written chunk by chunk) as the new
    content of ``target``, all or nothing.

    The files go into a staging folder beside the target, which then replaces it by rename;
    on any failure the staging folder is removed and the old target is put back.
    """
    target = Path(target)
    paths = {rel: _safe_relpath(rel) for rel in sorted(artifacts)}
    _replaceable(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    old: Path | None = None
    try:
        entries = []
        for rel, data in sorted(artifacts.items()):
            dest = staging.joinpath(*paths[rel].parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            entries.append({"path": rel, **_write_one(dest, data)})
        (staging / MANIFEST).write_bytes(_manifest(entries, blueprint_name))
        os.chmod(staging, 0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rmdir(old)
            os.rename(target, old)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None and not target.exists():
            os.rename(old, target)  # put the previous render back
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target
