"""Field data inside Markdown that GitHub renders (a pull-request comment, a ticket).

Names, labels, messages and tool output come from blueprints and results that anyone may write,
so in a report each is shown as what it is, never as markup: :func:`text` for prose and table
cells, :func:`code` for a name or path in a code span. Both give one line (a line break would end
a table row or start a heading), show control characters as escapes (``\\x1b``), and keep a
``|`` from ending a table cell. :class:`Markdown` marks text that is already Markdown (snc's own
markup around escaped data), so a table builder escapes everything else.

CommonMark lets a backslash escape any ASCII punctuation, so :func:`text` escapes each character
that has a meaning inline (emphasis, code, links and images, raw HTML, entities, strikethrough,
GitHub's math) and writes ``@`` with a word joiner after it, so that GitHub, which finds mentions
in the rendered text, notifies nobody.
"""

from __future__ import annotations

import html
import re


class Markdown(str):
    """Text that is Markdown already: put into a report as it is."""

    __slots__ = ()


# C0 (the tab too), DEL, C1; line breaks and Unicode's line and paragraph separators are spaces.
_BREAK = re.compile("\r\n|[\r\n\u2028\u2029]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# "(" and "!" mean something only beside "[" or "]", ">" only after "<" or at a line's start, and
# "_" inside a word ("all_reduce") is never emphasis.
_SPECIAL = re.compile(r"([\\`*\[\]<|~$&]|(?<![^\W_])_|_(?![^\W_]))")
_LEADING = re.compile(r"^(\s*)([#+-](?=\s|$)|>|=+(?=\s*$)|\d+(?=[.)](\s|$)))")  # a heading, item, quote, rule
MENTION_BREAK = "\u2060"  # WORD JOINER: invisible, and no letter, so '@team' is no longer a mention


def _line(value: object) -> str:
    one = _BREAK.sub(" ", str(value))
    return _CONTROL.sub(lambda m: " " if m.group() == "\t" else f"\\x{ord(m.group()):02x}", one)


def text(value: object) -> Markdown:
    """``value`` shown literally in Markdown prose or a table cell, on one line."""
    if isinstance(value, Markdown):
        return value
    escaped = _SPECIAL.sub(r"\\\1", _line(value)).replace("@", "@" + MENTION_BREAK)
    # '- x', '> x' or '# x' is an item, a quote or a heading only at a line's start; '1. x' too
    return Markdown(_LEADING.sub(_leading, escaped, count=1))


def _leading(m: re.Match) -> str:
    mark = m.group(2)
    return m.group(1) + (f"{mark}\\" if mark[0].isdigit() else f"\\{mark}")


def code(value: object, *, in_table: bool = True) -> Markdown:
    """``value`` as a code span: a fence of more backticks than any run in it (padded with a
    space where it starts or ends with one), on one line; ``|`` escaped for a table (GitHub
    splits cells before it reads code spans, and takes ``\\|`` there as ``|``)."""
    body = _line(value)
    if in_table:
        body = body.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    if body.startswith("`") or body.endswith("`") or (body.startswith(" ") and body.endswith(" ") and body.strip()):
        body = f" {body} "
    return Markdown(f"{fence}{body or ' '}{fence}")


def html_text(value: object) -> Markdown:
    """``value`` inside raw HTML (a ``<summary>``: Markdown reads no escapes there, a browser
    reads tags): entities for ``& < > " '``, on one line, no mention."""
    return Markdown(html.escape(_line(value)).replace("@", "@" + MENTION_BREAK))


def cell(value: object) -> Markdown:
    """A table cell: Markdown as it is, anything else through :func:`text`."""
    return value if isinstance(value, Markdown) else text(value)
