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
from pathlib import Path

MANIFEST = "MANIFEST.json"


def manifest(artifacts: dict[str, bytes], blueprint_name: str) -> bytes:
    entries = [
        {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for path, data in sorted(artifacts.items())
    ]
    return (json.dumps({"blueprint": blueprint_name, "files": entries}, indent=2) + "\n").encode()


def write(artifacts: dict[str, bytes], target: Path, blueprint_name: str) -> Path:
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    try:
        for rel, data in sorted(artifacts.items()):
            dest = staging / rel
            if dest.resolve().parent != staging.resolve() and staging.resolve() not in dest.resolve().parents:
                raise ValueError(f"artifact path escapes the output folder: {rel}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        (staging / MANIFEST).write_bytes(manifest(artifacts, blueprint_name))
        os.chmod(staging, 0o755)
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rmdir(old)
            os.rename(target, old)
        os.rename(staging, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
