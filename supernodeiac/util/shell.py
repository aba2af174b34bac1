"""Text for files a shell reads (env files operators source, scripts snc writes).

An env file is a list of ``KEY=value`` assignments and comments: a key is a plain variable name,
a value one shell word (quoted where it needs it), and a comment one line with no control
character, so no value can end its line and start a command of its own.
"""

from __future__ import annotations

import re
import shlex

ENV_KEY = re.compile(r"[A-Z_][A-Z0-9_]*")
# Control characters (C0, DEL, C1) and Unicode's line and paragraph separators.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def assignment(key: str, value: object) -> str:
    """``KEY=value`` for a sourced env file: the key checked, the value one quoted shell word.

    Values snc plans (paths, NIC lists, numbers) need no quotes, so the line also reads as it is
    in /etc/nccl.conf, which takes values without shell quoting."""
    if not ENV_KEY.fullmatch(key):
        raise ValueError(f"{key!r} is not an environment variable name")
    text = str(value)
    if CONTROL.search(text):
        raise ValueError(f"the value of {key} holds a control character")
    return f"{key}={shlex.quote(text)}"


def comment_text(value: object) -> str:
    """``value`` as text inside a ``#`` comment: every control character (a line break would
    end the comment) becomes a space."""
    return CONTROL.sub(" ", str(value))
