"""Project configuration: ``[tool.snc]`` in pyproject.toml, or a ``.snc.toml`` (same keys, at top level).

Found from the working directory upwards, stopping at the repository root (a folder with
``.git``); in one folder ``.snc.toml`` wins over pyproject.toml, and a pyproject.toml without
``[tool.snc]`` is passed over. ``--config FILE`` names one explicitly.

.. code-block:: toml

    [tool.snc]
    format = "github"                     # default --format of validate and render
    docs_url = "https://example.org/snc/docs"   # where docs/rules.md is published (SARIF helpUri)

    [tool.snc.severity]                   # per rule: error | warning | info
    oversubscription = "error"

    [tool.snc.ignore]                     # per rule: the reason (required), optionally the files
    management = "the lab racks have no BMC network yet (NET-12)"
    scaleup-ratio = { reason = "PCIe-only test boards", files = ["blueprints/lab/*.yaml"] }

Severity and ignore apply to design findings (build and checks); rules of the load and parse
stages cannot be changed, since nothing can be built past them. A bad configuration is a
``config`` finding at its file and line (exit 2), like a bad blueprint.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .findings import Finding, Location, Severity
from .findings.formats import FINDING_FORMATS
from .findings.rules import BY_ID
from .util.suggest import did_you_mean

CONFIG_FILES = (".snc.toml", "pyproject.toml")
MAX_CONFIG_BYTES = 1024 * 1024  # a pyproject.toml is a few kB; past this it is not a configuration
KEYS = {"format", "docs_url", "severity", "ignore"}
FIXED_STAGES = {"load", "parse", "config", "render"}


class ConfigError(Exception):
    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


@dataclass(frozen=True, slots=True)
class Ignore:
    rule: str
    reason: str
    files: tuple[str, ...]  # fnmatch patterns relative to the config file's folder; () = every file
    location: Location

    def covers(self, finding: Finding, base: Path) -> bool:
        if finding.rule != self.rule:
            return False
        if not self.files:
            return True
        if finding.location is None:
            return False
        path = Path(finding.location.file)
        try:
            rel = path.resolve().relative_to(base.resolve()).as_posix()
        except (ValueError, OSError):
            rel = path.as_posix()
        return any(fnmatch.fnmatch(rel, pattern) for pattern in self.files)


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # None: no configuration file (the defaults)
    format: str | None = None
    docs_url: str | None = None
    severity: dict[str, Severity] = field(default_factory=dict)
    ignore: tuple[Ignore, ...] = ()

    @property
    def base(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def apply(self, findings: list[Finding]) -> tuple[list[Finding], list[tuple[Finding, Ignore]]]:
        """The findings with severities overridden and ignored ones removed; and what was ignored
        (with the ignore entry that matched, to say why)."""
        kept: list[Finding] = []
        ignored: list[tuple[Finding, Ignore]] = []
        for f in findings:
            match = next((i for i in self.ignore if i.covers(f, self.base)), None)
            if match is not None:
                ignored.append((f, match))
                continue
            severity = self.severity.get(f.rule)
            kept.append(f if severity is None or severity is f.severity else replace(f, severity=severity))
        return kept, ignored


def find(start: Path | None = None) -> Path | None:
    """The configuration file that applies in ``start`` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in CONFIG_FILES:
            candidate = folder / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_tool_snc(candidate)):
                return candidate
        if (folder / ".git").exists():
            return None
    return None


def _has_tool_snc(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            return True  # let load() report it
        tool = tomllib.loads(raw.decode("utf-8")).get("tool")
        return isinstance(tool, dict) and "snc" in tool  # `tool = 5` is another tool's business
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # let load() report it, at its line


def load(path: Path | None) -> Config:
    """The configuration in ``path`` (None: the defaults). Raises ConfigError with located findings."""
    if path is None:
        return Config()
    shown = _shown(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([_finding(f"cannot read configuration: {exc}", Location(shown, 0, 0))]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            [_finding(f"the configuration is larger than {MAX_CONFIG_BYTES:,} bytes, the most snc reads", Location(shown, 1, 1))]
        )
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, col = _toml_error_position(str(exc))
        raise ConfigError([_finding(f"not valid TOML: {exc}", Location(shown, line, col))]) from None
    prefix: tuple[str, ...] = ("tool", "snc") if path.name == "pyproject.toml" else ()
    data: Any = doc
    for key in prefix:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    return _parse(data, prefix, _Locator(text, shown), path)


def _shown(path: Path) -> str:
    """The path as findings show it: relative to the working directory (configs are found upwards)."""
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)


def _parse(data: Any, prefix: tuple[str, ...], at: _Locator, path: Path) -> Config:
    findings: list[Finding] = []

    def bad(message: str, keys: tuple[str, ...], hint: str = "") -> None:
        findings.append(_finding(message, at(prefix + keys), hint))

    if not isinstance(data, dict):
        bad("the snc configuration must be a table", ())
        raise ConfigError(findings)
    for key in sorted(set(data) - KEYS):
        bad(f"unknown key {_brief(key)}", (key,), did_you_mean(key[:64], KEYS, "keys"))
    fmt = data.get("format")
    if fmt is not None and (not isinstance(fmt, str) or fmt not in FINDING_FORMATS):
        bad(
            f"format {_brief(fmt)} is not one of {', '.join(FINDING_FORMATS)}",
            ("format",),
            did_you_mean(fmt[:64] if isinstance(fmt, str) else "", FINDING_FORMATS, "formats"),
        )
    docs_url = data.get("docs_url")
    if docs_url is not None and (not isinstance(docs_url, str) or not re.match(r"^[a-z][a-z0-9+.-]*://", docs_url)):
        bad("docs_url must be an absolute URL (https://...)", ("docs_url",))
    severity: dict[str, Severity] = {}
    for rule_id, value in _table(data, "severity", bad).items():
        if _known_rule(rule_id, ("severity", rule_id), bad):
            if not isinstance(value, str) or value not in {s.value for s in Severity}:
                bad(f"severity {_brief(value)} of rule {_brief(rule_id)} is not error, warning or info", ("severity", rule_id))
            else:
                severity[rule_id] = Severity(value)
    ignores: list[Ignore] = []
    for rule_id, value in _table(data, "ignore", bad).items():
        keys = ("ignore", rule_id)
        if not _known_rule(rule_id, keys, bad):
            continue
        entry = {"reason": value} if isinstance(value, str) else value
        if not isinstance(entry, dict):
            bad(f"ignore {_brief(rule_id)}: give the reason as text, or a table {{reason, files}}", keys)
            continue
        for extra in sorted(set(entry) - {"reason", "files"}):
            bad(f"ignore {_brief(rule_id)}: unknown key {_brief(extra)}", keys, "keys: reason, files")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            bad(
                f"ignoring rule {_brief(rule_id)} needs a reason",
                keys,
                'say why, for the next reader: management = "the lab has no BMC network"',
            )
            continue
        files = entry.get("files", [])
        if isinstance(files, str):
            files = [files]
        if not isinstance(files, list) or not all(isinstance(p, str) for p in files):
            bad(f"ignore {_brief(rule_id)}: files must be a list of glob patterns", keys)
            continue
        ignores.append(Ignore(rule_id, reason.strip(), tuple(files), at(prefix + keys)))
    if findings:
        raise ConfigError(findings)
    return Config(path, fmt, docs_url, severity, tuple(ignores))


def _brief(value: Any) -> str:
    """A value as a message shows it: its repr, cut short (a configuration may hold a megabyte
    string or a deeply nested table where one word was expected)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"a deeply nested {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _table(data: dict, key: str, bad: Any) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        bad(f"{key} must be a table of rule ids", (key,))
        return {}
    return value


def _known_rule(rule_id: str, keys: tuple[str, ...], bad: Any) -> bool:
    known = BY_ID.get(rule_id)
    if known is None:
        bad(f"no rule named {_brief(rule_id)}", keys, did_you_mean(rule_id[:64], BY_ID, "rules"))
        return False
    if known.stage in FIXED_STAGES:
        bad(
            f"rule {_brief(rule_id)} belongs to the {known.stage} stage and cannot be changed",
            keys,
            "only design rules (build and checks) can",
        )
        return False
    return True


def _finding(message: str, location: Location, hint: str = "") -> Finding:
    return Finding("config", Severity.ERROR, message, (), hint, location)


def _toml_error_position(message: str) -> tuple[int, int]:
    m = re.search(r"at line (\d+), column (\d+)", message)
    return (int(m.group(1)), int(m.group(2))) if m else (1, 1)


class _Locator:
    """Where a key path is written in TOML text, found by reading table headers and ``key =``
    lines (tomllib keeps no positions). Falls back to the nearest table found, or line 1."""

    _KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")

    def __init__(self, text: str, file: str) -> None:
        self.file = file
        self.positions: dict[tuple[str, ...], tuple[int, int]] = {}
        table: tuple[str, ...] = ()
        for n, line in enumerate(text.splitlines(), 1):
            header = _header(line)
            if header is not None:
                table = _dotted(header)
                self.positions.setdefault(table, (n, line.index("[") + 1))
                continue
            key = self._KEY.match(line)
            if key:
                name = key.group(1)
                self.positions.setdefault(table + _dotted(name), (n, line.index(name[0]) + 1))

    def __call__(self, keys: tuple[str, ...]) -> Location:
        for end in range(len(keys), -1, -1):
            found = self.positions.get(tuple(keys[:end]))
            if found is not None:
                return Location(self.file, *found)
        return Location(self.file, 1, 1)


def _header(line: str) -> str | None:
    """The name in a ``[table]`` or ``[[array]]`` header line, else None. Read by hand, not by a
    regex: the one used before backtracked cubically on a line of '[' and spaces (a multi-line
    string may hold any line), and this is one pass."""
    text = line.lstrip()
    if not text.startswith("["):
        return None
    start = 2 if text.startswith("[[") else 1
    end = text.find("]", start)
    if end < 0:
        return None
    name = text[start:end].strip()
    return name or None


def _dotted(text: str) -> tuple[str, ...]:
    parts = re.findall(r""""([^"]*)"|'([^']*)'|([^.\s]+)""", text)
    return tuple(a or b or c for a, b, c in parts)
