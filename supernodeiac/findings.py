"""Findings: what checks (and the loader, parser and builders) say about a blueprint."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import PurePath
from urllib.parse import quote


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


def format_path(path: tuple) -> str:
    """A blueprint path as a reader writes it: ``scaleout[0].placement.leaf``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass(frozen=True, slots=True)
class Location:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnostic, compiler style.

    ``path`` is the blueprint path the finding is about (``("scaleout", 0, "oversubscription")``);
    the pipeline turns it into ``location`` with the document's source map, so checks never
    deal with files.
    """

    rule: str
    severity: Severity
    message: str
    path: tuple = ()
    hint: str = ""
    location: Location | None = None

    def at(self, location: Location) -> Finding:
        return replace(self, location=location)

    def sort_key(self) -> tuple:
        loc = self.location
        return (
            loc.file if loc else "",
            loc.line if loc else 0,
            loc.col if loc else 0,
            self.severity.rank,
            self.rule,
            self.message,
        )

    def as_dict(self) -> dict:
        loc = self.location
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "file": loc.file if loc else None,
            "line": loc.line if loc else None,
            "col": loc.col if loc else None,
            "path": "/".join(str(p) for p in self.path),
            "hint": self.hint,
        }


def error(rule: str, message: str, path: tuple = (), hint: str = "") -> Finding:
    return Finding(rule, Severity.ERROR, message, tuple(path), hint)


def warning(rule: str, message: str, path: tuple = (), hint: str = "") -> Finding:
    return Finding(rule, Severity.WARNING, message, tuple(path), hint)


def info(rule: str, message: str, path: tuple = (), hint: str = "") -> Finding:
    return Finding(rule, Severity.INFO, message, tuple(path), hint)


class BuildError(Exception):
    """A blueprint that parses but cannot be built (an impossible topology, a bad reference)."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


# -- SARIF 2.1.0 (code-scanning upload) ------------------------------------------------------------

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _sarif_uri(file: str) -> str:
    """A relative path stays relative (code scanning resolves it against the repository)."""
    p = PurePath(file)
    if p.is_absolute():
        return "file://" + quote(p.as_posix())
    return quote(p.as_posix())


def sarif_log(findings: list[Finding], tool_version: str) -> dict:
    """One SARIF run: a rule per rule id (sorted), one result per finding in the given order.

    Deterministic by construction: no timestamps, no invocation data, rules sorted.
    """
    rules = sorted({f.rule for f in findings})
    index = {r: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        text = f.message + (f"\nhint: {f.hint}" if f.hint else "")
        result: dict = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": text},
        }
        loc = f.location
        if loc is not None:
            physical: dict = {"artifactLocation": {"uri": _sarif_uri(loc.file)}}
            if loc.line > 0:
                physical["region"] = {"startLine": loc.line, "startColumn": max(loc.col, 1)}
            location: dict = {"physicalLocation": physical}
            if f.path:
                location["logicalLocations"] = [{"fullyQualifiedName": format_path(f.path), "kind": "member"}]
            result["locations"] = [location]
        if f.hint:
            result["properties"] = {"hint": f.hint}
        results.append(result)
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
                        "rules": [{"id": r} for r in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
