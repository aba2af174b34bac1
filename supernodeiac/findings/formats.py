"""How findings are written for people and tools: compiler-style text, JSON, GitHub workflow
commands (SARIF is :mod:`supernodeiac.findings.sarif`). Pure text; the CLI prints it.

Verbosity is one notion across every format: ``quiet`` drops info findings (and, for text, the
per-file summary), ``verbose`` adds what only a person debugging wants (on standard error, so
machine formats on standard output stay parseable).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from enum import IntEnum

from . import Finding, Severity

FINDING_FORMATS = ["human", "json", "github", "sarif"]


class Verbosity(IntEnum):
    QUIET = 0  # errors and warnings only
    NORMAL = 1  # every finding
    VERBOSE = 2  # every finding, plus stage timings and what the configuration ignored

    @classmethod
    def of(cls, quiet: bool, verbose: bool) -> Verbosity:
        return cls.QUIET if quiet else (cls.VERBOSE if verbose else cls.NORMAL)


def shown(findings: Iterable[Finding], verbosity: Verbosity) -> list[Finding]:
    """The findings a verbosity level shows (info ones only above quiet)."""
    return [f for f in findings if verbosity > Verbosity.QUIET or f.severity is not Severity.INFO]


# ANSI SGR codes of the human format's colours (the CLI decides whether to use them:
# a terminal, NO_COLOR, FORCE_COLOR).
_SGR = {
    Severity.ERROR: "1;31",
    Severity.WARNING: "1;33",
    Severity.INFO: "1;36",
    "where": "1",
    "gutter": "34",
    "caret": "1;32",
    "hint": "32",
}
_TOKEN = re.compile(r"[^\s:,{}\[\]#]+|\S")  # a key, a plain value, or one punctuation mark
SNIPPET_WIDTH = 160  # characters of a source line shown; longer lines are cut around the column


def _paint(text: str, what: object, colour: bool) -> str:
    return f"\x1b[{_SGR[what]}m{text}\x1b[0m" if colour and text else text  # type: ignore[index]


def human(finding: Finding, source_line: str | None = None, colour: bool = False) -> str:
    """``file:line:col: severity[rule]: message``, the source line with a caret under the located
    column (when ``source_line``, the text of that line, is given), and an indented hint line,
    like a compiler. ``colour`` adds ANSI colours (plain text otherwise)."""
    loc = finding.location
    where = str(loc) if loc else "<blueprint>"
    severity = finding.severity
    text = (
        f"{_paint(where + ':', 'where', colour)} {_paint(f'{severity.value}[{finding.rule}]', severity, colour)}: "
        f"{finding.message}"
    )
    if source_line is not None and loc is not None and loc.line > 0:
        text += "\n" + snippet(source_line, loc.line, loc.col, colour)
    if finding.hint:
        text += f"\n    {_paint('hint:', 'hint', colour)} {finding.hint}"
    return text


def snippet(line: str, number: int, col: int, colour: bool = False) -> str:
    """The source line under a gutter with its number, and a caret span under the token at ``col``
    (1-based): the key or value the finding is about. Control characters are shown as spaces, and
    a long line is cut around the column, so the terminal shows what the file says and no more."""
    line = "".join(" " if (ord(c) < 32 or ord(c) == 127) else c for c in line.rstrip("\r\n"))
    start = max(col - 1, 0)
    if start > len(line):
        start = len(line)
    match = _TOKEN.match(line, start)
    width = max(len(match.group()) if match else 1, 1)
    shift = 0
    if len(line) > SNIPPET_WIDTH:  # keep the column in view
        shift = max(0, min(start - SNIPPET_WIDTH // 2, len(line) - SNIPPET_WIDTH))
        line = line[shift : shift + SNIPPET_WIDTH]
        width = min(width, SNIPPET_WIDTH - (start - shift))
    gutter = " " * len(str(number))
    bar = _paint("|", "gutter", colour)
    carets = _paint("^" * width, "caret", colour)
    return (
        f"  {gutter} {bar}\n"
        f"  {_paint(str(number), 'gutter', colour)} {bar} {line}\n"
        f"  {gutter} {bar} {' ' * (start - shift)}{carets}"
    )


# -- GitHub Actions workflow commands ---------------------------------------------------------------
# The runner splits '::command key=value,key=value::message' on ',' and '::' and unescapes %XX;
# so data escapes '%', CR and LF, and property values also ',' and ':' (a file named 'a,b:c.yaml'
# would otherwise end the property early).

_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES = _DATA_ESCAPES + ((":", "%3A"), (",", "%2C"))
GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}  # info would spend the annotation cap


def escape_data(text: str) -> str:
    for raw, escaped in _DATA_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def escape_property(text: str) -> str:
    for raw, escaped in _PROPERTY_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def github(finding: Finding) -> str | None:
    """One workflow command that shows the finding on the pull request's diff; None for info
    findings (GitHub shows at most 10 error and 10 warning annotations per step, and 50 per job:
    they are kept for what needs action)."""
    level = GITHUB_LEVEL.get(finding.severity)
    if level is None:
        return None
    loc = finding.location
    props = []
    if loc is not None and not (loc.file.startswith("<") and loc.file.endswith(">")):
        props.append(f"file={escape_property(loc.file)}")
        if loc.line > 0:
            props += [f"line={loc.line}", f"col={max(loc.col, 1)}"]
    props.append(f"title={escape_property(finding.rule)}")
    message = finding.message + (f" (hint: {finding.hint})" if finding.hint else "")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


GITHUB_PLACES = 3  # places a grouped annotation names before "and N more"


def github_annotations(findings: Iterable[Finding]) -> list[str]:
    """Workflow commands for ``findings``, one per (severity, rule, file, line): repeated findings
    at one line (8 racks over budget, all from one placement) become one annotation with their
    count and the first few messages, since GitHub shows only 10 of each level per step."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.severity not in GITHUB_LEVEL:
            continue
        loc = f.location
        key = (f.severity.rank, f.rule, loc.file if loc else "", loc.line if loc else 0)
        groups.setdefault(key, []).append(f)
    out = []
    for group in groups.values():
        first = group[0]
        if len(group) > 1:
            places = "; ".join(f.message for f in group[:GITHUB_PLACES])
            more = f"; and {len(group) - GITHUB_PLACES} more" if len(group) > GITHUB_PLACES else ""
            message = f"{len(group)} {first.rule} {first.severity.value}s here: {places}{more}"
            first = replace(first, message=message)
        line = github(first)
        if line is not None:
            out.append(line)
    return out


def parse_workflow_command(line: str) -> tuple[str, dict[str, str], str]:
    """(command, properties, message) of a workflow command line, unescaped as the runner does.

    The inverse of :func:`github`, for tests and for tools that read snc's annotations back.
    """
    if not line.startswith("::"):
        raise ValueError(f"not a workflow command: {line!r}")
    head, sep, data = line[2:].partition("::")
    if not sep:
        raise ValueError(f"not a workflow command: {line!r}")
    command, _, props_text = head.partition(" ")
    props: dict[str, str] = {}
    for item in filter(None, props_text.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"property without '=': {item!r}")
        props[key] = _unescape(value, _PROPERTY_ESCAPES)
    return command, props, _unescape(data, _DATA_ESCAPES)


def _unescape(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for raw, escaped in reversed(escapes):  # '%25' last, so '%252C' stays '%2C'
        text = text.replace(escaped, raw)
    return text


# -- JSON -----------------------------------------------------------------------------------------------


def finding_dicts(findings: Iterable[Finding]) -> list[dict]:
    return [f.as_dict() for f in findings]
