"""A verify result as text (for people at a terminal), JSON (for tools) and Markdown (for a ticket)."""

from __future__ import annotations

import json

from ..util import markdown as md
from . import Result


def _inputs(r: Result) -> str:
    parts = []
    for i in r.inputs:
        what = i.get("device") or i.get("fabrics", "")
        parts.append(f"{i['path']} ({i['format']}{': ' + what if what else ''})")
    return ", ".join(parts)


def _summary(r: Result) -> str:
    errors = r.errors
    warnings = len(r.discrepancies) - errors
    if not r.discrepancies:
        return f"{r.checked} planned cables checked: all as planned"
    return f"{r.checked} planned cables checked: {r.matched} as planned; {errors} difference(s), {warnings} unverified"


def to_text(r: Result) -> str:
    lines = [f"snc verify: blueprint {r.blueprint} against {_inputs(r)}", _summary(r)]
    for d in r.discrepancies:
        lines.append("")
        lines.append(f"{d.severity}[{d.kind}]: {d.message}")
        lines.append(f"    fix: {d.fix}")
        for c in d.cables:
            lines.append(f"    cable {c['id']}: {c['a']} <-> {c['b']} (label '{c['label']}')")
        for s in d.found:
            lines.append(f"    found: {s['a']} <-> {s['b']} ({s['where']})")
    return "\n".join(lines) + "\n"


def to_json(r: Result) -> str:
    doc = {
        "blueprint": r.blueprint,
        "inputs": r.inputs,
        "checked": r.checked,
        "matched": r.matched,
        "exit_code": r.exit_code,
        "differences": [d.as_dict() for d in r.discrepancies],
    }
    return json.dumps(doc, indent=2) + "\n"


def to_markdown(r: Result) -> str:
    """Every name, label, path and tool's word escaped for Markdown (``util/markdown.py``)."""
    lines = [f"# Cabling check: {md.text(r.blueprint)}", "", f"Inputs: {md.text(_inputs(r))}", ""]
    lines += [f"**{md.text(_summary(r))}**", ""]
    if r.discrepancies:
        lines += ["| # | kind | cables | found | fix |", "|---:|---|---|---|---|"]
        for n, d in enumerate(r.discrepancies, 1):
            cables = "<br>".join(f"{md.code(c['id'])}: {md.text(c['a'])} ↔ {md.text(c['b'])}" for c in d.cables) or "-"
            found = "<br>".join(md.text(f"{s['a']} ↔ {s['b']} ({s['where']})") for s in d.found) or "-"
            lines.append(f"| {n} | {md.text(d.kind)} | {cables} | {found} | {md.text(d.fix)} |")
        lines.append("")
    return "\n".join(lines)


FORMATS = {"text": to_text, "json": to_json, "markdown": to_markdown}
