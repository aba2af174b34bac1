"""Findings: what checks (and the loader, parser and builders) say about a blueprint."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

# Control characters (C0 but the tab, DEL, C1, the Unicode line and paragraph separators): a
# blueprint value quoted in a message must not move the terminal's cursor, recolour it, or start
# a line that reads as another finding (`x\nbp.yaml:1:1: error ...`). Shown escaped instead.
# So are the bytes of a file name that is not UTF-8 (Python's surrogate escapes, U+DC80-U+DCFF):
# written raw they could be a C1 control; shown as the byte they stand for (`\xff`).
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\udc80-\udcff]")


def _escaped(ch: re.Match) -> str:
    c = ord(ch.group())
    if 0xDC80 <= c <= 0xDCFF:
        return f"\\x{c - 0xDC00:02x}"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def plain_text(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``), one line."""
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


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
        # A file name may hold control characters too (a line break, an escape sequence): shown
        # escaped, so that a name cannot start a line that reads as another finding.
        file = plain_text(self.file)
        if self.line <= 0:
            return file
        return f"{file}:{self.line}:{self.col}"


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

    def __post_init__(self) -> None:
        if _CONTROL.search(self.message):
            object.__setattr__(self, "message", plain_text(self.message))
        if _CONTROL.search(self.hint):
            object.__setattr__(self, "hint", plain_text(self.hint))

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
    """A blueprint that parses but cannot be built (an impossible topology, a bad reference).

    ``partial`` is what had been built when the error was raised (the builders set it), so the
    structural checks can still name a root cause that the failing stage only felt.
    """

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings
        self.partial: object = None


# Errors that follow from another: a rule -> the structural rules that often cause it. Two
# devices in one rack unit (rack-space) want the same unit-numbered management port
# (port-budget); the overlap is what to fix.
CAUSED_BY: dict[str, tuple[str, ...]] = {"port-budget": ("rack-space",)}
CAUSES = frozenset(r for rules in CAUSED_BY.values() for r in rules)


def causes_first(findings: list[Finding]) -> list[Finding]:
    """Root causes before their consequences: errors of a structural rule (:data:`CAUSES`) come
    first, and each error that may follow from them says so in its hint. Otherwise the order is
    kept (a stable partition of already sorted findings)."""
    causes = [f for f in findings if f.severity is Severity.ERROR and f.rule in CAUSES]
    if not causes:
        return findings
    found = {f.rule for f in causes}
    out = list(causes)
    for f in findings:
        if f.severity is Severity.ERROR and f.rule in CAUSES:
            continue
        related = sorted(found.intersection(CAUSED_BY.get(f.rule, ())))
        if f.severity is Severity.ERROR and related:
            n = sum(1 for c in causes if c.rule in related)
            note = f"note: likely a consequence of the {n} {'/'.join(related)} error(s) above; fix those first"
            f = replace(f, hint=f"{f.hint}; {note}" if f.hint else note)
        out.append(f)
    return out
