"""What a naming template may hold, and the characters of the names it makes.

Names leave snc in many forms: device names become host names, file names and identifiers in
switch configs, inventories and diagrams; cable IDs and labels are printed and opened in
spreadsheets. A blueprint may come from anyone, so every template (``naming.cable_id``,
``naming.cable_label``, ``naming.devices.<role>``, ``nodes[].naming``, a CXL pool's hosts
``naming``, ``site.rack_name`` and a catalogue port group's ``name``) is checked once, when the
blueprint is parsed, without formatting anything large:

* fields are plain names (``{a}``, no ``{a.attr}``, ``{a[0]}`` or ``{a!r}``), and a format spec
  is one of the forms a name needs: none, ``d``, or a zero-padded width ``0Nd`` / ``0N`` with N
  at most :data:`MAX_WIDTH` (``{rack:02d}``); so no template can ask for a 20-million-character
  field, a sign or a space;
* the literal text between fields uses only the characters of its kind of name (below);
* the name starts with a letter or digit: either the template's first literal character is
  one, or it starts with a field, whose values (names, which start so themselves, and
  non-negative numbers) do. So no name can start with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return, which a spreadsheet would run as a formula.

Values that fill the fields are names made under the same rules (group, fabric and row names
are ``Name``s; device, rack and port names come from checked templates) and whole numbers, so
every name snc makes is in its character set by construction, and no per-name check is needed
on 10^6 cables.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Collection
from dataclasses import dataclass

MAX_WIDTH = 16  # widest zero-padded number a template may ask for (``{index:04d}`` is 4)
MAX_TEMPLATE = 200  # characters in a template
_SPEC = re.compile(r"(?:0([1-9][0-9]?))?d?")
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class NameKind:
    """A kind of name: what it is called in messages and which characters its literal text may use."""

    what: str
    chars: str  # a regex character class body, also shown in messages and docs
    printable: bool = False  # any printable character instead (labels are text for people)

    def bad_char(self, text: str) -> str | None:
        """The first character of ``text`` this kind of name may not hold, else None."""
        for ch in text:
            if self.printable:
                if not ch.isprintable():
                    return ch
            elif not re.fullmatch(f"[{self.chars}]", ch):
                return ch
        return None

    @property
    def allowed(self) -> str:
        return "printable characters (no tabs, line breaks or other control characters)" if self.printable else self.chars


DEVICE = NameKind("device name", "A-Za-z0-9_.-")
RACK = NameKind("rack name", "A-Za-z0-9_.-")
PORT = NameKind("port name", "A-Za-z0-9_./:-")
# A port's name as printed on the faceplate ("OSFP 3 port 2"): words separated by spaces.
PHYSICAL_PORT = NameKind("printed port name", "A-Za-z0-9_./: -")
CABLE_ID = NameKind("cable ID", "A-Za-z0-9_./:#-")
LABEL = NameKind("cable label", "", printable=True)
# A cage's form factor (osfp, qsfp112, cxl-x16): printed port names are made from it ({FORM},
# {form}), and those reach scripts, env files and configs, so it is a name, not free text.
FORM_FACTOR = NameKind("form factor", "A-Za-z0-9_.-")
# Free text (descriptions, vendors, part numbers, source notes): any printable character, no tab,
# line break or other control character, so it cannot start a line of a file it is written to.
TEXT = NameKind("text field", "", printable=True)
MAX_NAME = 63
MAX_TEXT = 500


def name_problem(value: str, kind: NameKind, max_length: int = MAX_NAME) -> str | None:
    """Why ``value`` is not a ``kind`` name (checked where it is read), else None: it starts with a
    letter or digit (text-like kinds: with a printable character), uses only the kind's characters
    and has at most ``max_length`` of them."""
    shown = value if len(value) <= 60 else value[:57] + "..."
    if len(value) > max_length:
        return f"{kind.what} {shown!r} is {len(value)} characters long (at most {max_length})"
    if not value and not kind.printable:
        return f"{kind.what} is empty"
    bad = kind.bad_char(value)
    if bad is not None:
        return f"{kind.what} {shown!r} has {bad!r}, which a {kind.what} may not contain (it uses only {kind.allowed})"
    if value and not kind.printable and not (value[0].isascii() and value[0].isalnum()):
        return f"{kind.what} {shown!r} starts with {value[0]!r} (it starts with a letter or digit)"
    return None


def template_problem(template: str, kind: NameKind, fields: Collection[str] | None = None) -> tuple[str, str] | None:
    """(problem, hint) when ``template`` may not make a ``kind`` name, else None.

    ``fields`` are the fields its user fills; None when they depend on where it is used (a role
    template serves several builders, which report an unknown field when they fill it).
    Nothing is formatted here.
    """
    shown = template if len(template) <= 60 else template[:57] + "..."
    if not template:
        return f"naming template for a {kind.what} is empty", "give a template such as '{group}-{index:04d}'"
    if len(template) > MAX_TEMPLATE:
        hint = f"a template has at most {MAX_TEMPLATE} characters"
        return f"naming template {shown!r} is {len(template)} characters long", hint
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f"naming template {shown!r} is malformed: {exc}", "write fields as {name}; double a brace ({{) to print it"
    known = ("fields: " + ", ".join(sorted(fields))) if fields else "fields are plain names such as {index}"
    for literal, name, spec, conversion in parts:
        bad = kind.bad_char(literal)
        if bad is not None:
            return (
                f"naming template {shown!r} has {bad!r}, which a {kind.what} may not contain",
                f"a {kind.what} uses only {kind.allowed}",
            )
        if name is None:
            continue
        if not _FIELD.fullmatch(name):
            what = "a positional field" if name == "" or name.isdigit() else "a field with an attribute or index"
            return f"naming template {shown!r} has {what} {{{name}}}", known
        if conversion:
            return f"naming template {shown!r} converts a field ({{{name}!{conversion}}})", "drop the '!" + conversion + "'"
        m = _SPEC.fullmatch(spec or "")
        if m is None or (m.group(1) and int(m.group(1)) > MAX_WIDTH):
            return (
                f"naming template {shown!r} formats {{{name}}} with {spec!r}",
                f"a field takes no format, 'd', or a zero-padded width such as '03d' (at most {MAX_WIDTH} digits)",
            )
        if fields is not None and name not in fields:
            close = difflib.get_close_matches(name, sorted(fields), n=3, cutoff=0.6)
            hint = "did you mean " + " or ".join(repr(c) for c in close) + "?" if close else known
            return f"naming template {shown!r} uses unknown field {{{name}}}", hint
    lead = parts[0][0] if parts else ""
    if lead and not (lead[0].isascii() and lead[0].isalnum()):
        return (
            f"naming template {shown!r} makes {kind.what}s that start with {lead[0]!r}",
            f"a {kind.what} starts with a letter, a digit or a field (a spreadsheet runs a cell that starts with "
            "=, +, - or @ as a formula)",
        )
    return None
