"""'Did you mean ...?': the nearest known names to a mistyped one, for hints everywhere (the
parser, the builders, the configuration)."""

from __future__ import annotations

import difflib
import typing


def close_names(name: str, known: typing.Sequence[str]) -> list[str]:
    """The (at most three) known names nearest to a mistyped one, nearest first."""
    return difflib.get_close_matches(name, known, n=3, cutoff=0.6)


def suggestion(close: list[str]) -> str:
    """'did you mean 'a' or 'b'? ' (with a trailing space), or '' when nothing is close."""
    return "did you mean " + " or ".join(repr(c) for c in close) + "? " if close else ""


def did_you_mean(name: str, known: typing.Iterable[str], label: str = "allowed here") -> str:
    """'did you mean ...?' for the closest names, else the list of what is allowed (after ``label``)."""
    known = sorted(set(known))
    close = close_names(name, known)
    if close:
        return suggestion(close).rstrip()
    if not known:
        return ""
    return f"{label}: " + ", ".join(known[:16]) + (" ..." if len(known) > 16 else "")
