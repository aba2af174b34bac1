"""How findings are written for people and tools: compiler-style text, JSON, GitHub workflow
commands (SARIF is :mod:`supernodeiac.findings.sarif`). Pure text; the CLI prints it.

Verbosity is one notion across every format: ``quiet`` drops info findings (and, for text, the
per-file summary), ``verbose`` adds what only a person debugging wants (on standard error, so
machine formats on standard output stay parseable).
"""

from __future__ import annotations

from collections.abc import Iterable
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


def human(finding: Finding) -> str:
    """``file:line:col: severity[rule]: message`` and an indented hint line, like a compiler."""
    where = str(finding.location) if finding.location else "<blueprint>"
    text = f"{where}: {finding.severity.value}[{finding.rule}]: {finding.message}"
    if finding.hint:
        text += f"\n    hint: {finding.hint}"
    return text


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
