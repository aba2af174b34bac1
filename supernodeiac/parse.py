"""Document -> Blueprint, turning pydantic's errors into located findings with suggestions."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from .findings import Finding, Severity
from .model.blueprint import Blueprint
from .source import Document


class ParseError(Exception):
    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


def parse(doc: Document) -> Blueprint:
    try:
        return Blueprint.model_validate(doc.data)
    except ValidationError as exc:
        findings = []
        seen: set[tuple] = set()
        for err in exc.errors(include_url=False):
            finding = _finding(doc, err)
            key = (finding.path, finding.message)
            if key not in seen:
                seen.add(key)
                findings.append(finding)
        raise ParseError(findings) from None


def _clean_loc(loc: tuple) -> tuple:
    """Drop pydantic's union-tag steps ('fat-tree', 'function-after[...]') from a location."""
    out = []
    for part in loc:
        if isinstance(part, str) and ("[" in part or part in _TAGS):
            continue
        out.append(part)
    return tuple(out)


_TAGS = {"orthogonal", "switched", "fat-tree", "dragonfly", "dragonfly-plus", "cxl-pool", "two-level"}


def _finding(doc: Document, err: dict[str, Any]) -> Finding:
    loc = _clean_loc(tuple(err["loc"]))
    kind = err["type"]
    where = doc.locate(loc)
    field = str(loc[-1]) if loc else "blueprint"
    hint = ""
    if kind == "extra_forbidden":
        known = _known_fields(loc[:-1])
        close = difflib.get_close_matches(field, known, n=3, cutoff=0.5)
        message = f"unknown key {field!r}"
        hint = (
            ("did you mean " + " or ".join(repr(c) for c in close) + "?")
            if close
            else ("allowed here: " + ", ".join(known) if known else "")
        )
    elif kind == "missing":
        message = f"missing required key {field!r}"
        where = doc.locate(loc[:-1])
    elif kind == "union_tag_invalid":
        ctx = err.get("ctx", {})
        message = f"unknown kind {ctx.get('tag')!r}"
        hint = f"expected one of {ctx.get('expected_tags')}"
        where = doc.locate(loc + ("kind",))
    elif kind == "union_tag_not_found":
        message = "missing key 'kind'"
    else:
        value = err.get("input")
        shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
        message = f"{field}: {err['msg'].removeprefix('Value error, ')} (got {shown})"
        if kind == "literal_error":
            hint = "expected " + err.get("ctx", {}).get("expected", "")
    return Finding("schema", Severity.ERROR, message, loc, hint, where)


def _known_fields(loc: tuple) -> list[str]:
    """Field names allowed at a blueprint path, for 'did you mean' on unknown keys."""
    model: Any = Blueprint
    for part in loc:
        if isinstance(part, int):
            continue
        model = _field_model(model, part)
        if model is None:
            return []
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(f.alias or name for name, f in model.model_fields.items())
    return []


def _field_model(model: Any, name: str) -> Any:
    import typing

    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    for fname, f in model.model_fields.items():
        if fname == name or f.alias == name:
            return _unwrap(f.annotation, typing)
    return None


def _unwrap(tp: Any, typing: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is None:
        return tp
    for arg in typing.get_args(tp):
        inner = _unwrap(arg, typing)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return None
