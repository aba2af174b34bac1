"""Findings as SARIF 2.1.0, the format code scanning (GitHub, Azure DevOps, IDE viewers) reads.

What consumers rely on, beyond the schema:

* **repository-relative locations**: a file under the repository root (the nearest folder with a
  ``.git`` above the working directory) is written as a relative URI with ``uriBaseId:
  SRCROOT``, and ``originalUriBaseIds`` says where SRCROOT is; code scanning matches the URI
  against the files of the commit. A file outside the root keeps an absolute ``file://`` URI;
  standard input (``<stdin>``) has no physical location, only the blueprint path.
* **partialFingerprints**: a hash of the rule, the file, the blueprint path and the message,
  none of which moves when lines are added above the finding, so an alert keeps its identity
  across commits instead of being closed and reopened.
* **rule metadata**: short and full description and help from the rule catalogue
  (:mod:`supernodeiac.findings.rules`), and a help URI when the documentation's URL is known.

Deterministic: no timestamps, no invocation data, rules sorted.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePath
from urllib.parse import quote

from . import Finding, Severity, format_path
from .rules import DOCS_PAGE, rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "SRCROOT"
FINGERPRINT_KEY = "sncFinding/v1"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def repository_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: the working directory) that holds a
    ``.git`` (a folder, or a file in a worktree); the start folder itself when there is none."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def _is_stream(file: str) -> bool:
    """``<stdin>`` and the like: a name for findings, not a file to point code scanning at."""
    return file.startswith("<") and file.endswith(">")


def artifact_location(file: str, root: Path) -> dict:
    """The SARIF artifactLocation of a finding's file: relative to SRCROOT when under ``root``."""
    path = Path(file)
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        rel = PurePath(absolute.resolve()).relative_to(root)
    except ValueError:
        return {"uri": "file://" + _uri_path(absolute.resolve().as_posix())}
    return {"uri": _uri_path(rel.as_posix()), "uriBaseId": SRCROOT}


def _uri_path(path: str) -> str:
    """A path as a URI path (RFC 3986): its bytes percent-encoded. A file name that is not UTF-8
    reaches Python as surrogate escapes (PEP 383); ``os.fsencode`` gives back its bytes, so
    ``b'err\\xff.yaml'`` is ``err%FF.yaml``, the URI of that very file, not an encoding error."""
    return quote(os.fsencode(path))


def fingerprint(f: Finding, uri: str) -> str:
    """Stable across line moves: what the finding is and where in the blueprint, not its line."""
    key = "\0".join((f.rule, uri, format_path(f.path), f.message))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def rule_descriptor(rule_id: str, docs_url: str | None) -> dict:
    r = rule(rule_id)
    help_text = f"{r.full}\n\nSee {DOCS_PAGE}#{r.anchor}."
    descriptor: dict = {
        "id": r.id,
        "shortDescription": {"text": r.short},
        "fullDescription": {"text": r.full},
        "help": {
            "text": help_text,
            "markdown": f"**{r.short}.** {r.full}\n\nSee [{DOCS_PAGE}#{r.anchor}]({DOCS_PAGE}#{r.anchor}).",
        },
        "properties": {"stage": r.stage},
    }
    uri = r.help_uri(docs_url)
    if uri:
        descriptor["helpUri"] = uri
    return descriptor


def _result(f: Finding, rule_index: int, root: Path) -> dict:
    text = f.message + (f"\nhint: {f.hint}" if f.hint else "")
    result: dict = {"ruleId": f.rule, "ruleIndex": rule_index, "level": _LEVEL[f.severity], "message": {"text": text}}
    loc = f.location
    where = loc.file if loc is not None else ""
    location: dict = {}
    if loc is not None and not _is_stream(loc.file):
        artifact = artifact_location(loc.file, root)
        where = artifact["uri"]
        physical: dict = {"artifactLocation": artifact}
        if loc.line > 0:
            physical["region"] = {"startLine": loc.line, "startColumn": max(loc.col, 1)}
        location["physicalLocation"] = physical
    if f.path:
        location["logicalLocations"] = [{"fullyQualifiedName": format_path(f.path), "kind": "member"}]
    if location:
        result["locations"] = [location]
    result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint(f, where)}
    if f.hint:
        result["properties"] = {"hint": f.hint}
    return result


def sarif_log(findings: list[Finding], tool_version: str, *, root: Path | None = None, docs_url: str | None = None) -> dict:
    """One SARIF run: a rule descriptor per rule id (sorted), one result per finding in order."""
    root = repository_root() if root is None else root.resolve()
    rules = sorted({f.rule for f in findings})
    index = {r: i for i, r in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "snc",
                        "fullName": "supernodeiac blueprint compiler",
                        "version": tool_version,
                        "rules": [rule_descriptor(r, docs_url) for r in rules],
                    }
                },
                "originalUriBaseIds": {
                    SRCROOT: {
                        "uri": "file://" + _uri_path(root.as_posix()).rstrip("/") + "/",
                        "description": {"text": "The root of the repository that holds the blueprints."},
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index[f.rule], root) for f in findings],
            }
        ],
    }
