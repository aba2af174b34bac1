"""Document -> Blueprint, turning pydantic's errors into located findings with suggestions.

Three passes, all before anything is built, so a typo is reported as the typo it is:

1. the blueprint against its pydantic models (unknown keys with "did you mean", wrong types,
   unknown ``kind``), each error mapped back to the key that caused it;
2. the naming templates against the fields their users fill in (a bad template would
   otherwise surface as a ``KeyError`` deep in a builder or renderer);
3. the catalogue with the blueprint's overrides laid over it, so a mistyped override key
   points at the override; then every media policy's ``pin`` and ``allow`` names against it
   (an unknown name in ``allow`` would otherwise be dropped without a word).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ..catalog import merged
from ..catalog.host_topology import HostLayouts, merged_host_topology
from ..catalog.types import Catalogue
from ..findings import Finding, Severity, format_path
from ..model import name_rules
from ..model.blueprint import Blueprint, built_fabrics
from ..model.common import MediaPolicy
from ..model.name_rules import NameKind, template_problem
from ..util import suggest
from .source import Document


class ParseError(Exception):
    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = findings


def parse(doc: Document) -> Blueprint:
    try:
        blueprint = Blueprint.model_validate(doc.data)
    except ValidationError as exc:
        raise ParseError(validation_findings(doc, exc, Blueprint, doc.data)) from None
    findings = name_findings(doc, blueprint) + template_findings(doc, blueprint) + catalogue_findings(doc, blueprint)
    findings += host_topology_findings(doc, blueprint)
    if not findings:
        findings = media_reference_findings(doc, blueprint)
    if findings:
        raise ParseError(findings)
    return blueprint


# -- walking a pydantic error location alongside the models and the data -------------------------


@dataclass(slots=True)
class _Step:
    """Where a pydantic ``loc`` leads: the blueprint path, and the type and data found there."""

    path: tuple
    tp: Any  # the annotation at the end of the path (a model, list[...], Literal[...], ...)
    data: Any


def _strip(tp: Any) -> Any:
    """Annotated[X, ...] -> X; X | None -> X (a None alternative never explains an error)."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) == 1:
                tp = args[0]
                continue
        return tp


def _members(tp: Any) -> list[type[BaseModel]]:
    """The model alternatives of a union (a discriminated union of topology kinds)."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return [a for a in (_strip(x) for x in typing.get_args(tp)) if _is_model(a)]
    return []


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _kinds(model: type[BaseModel]) -> list[str]:
    """The ``kind`` values a union member accepts (its Literal tag)."""
    field = model.model_fields.get("kind")
    if field is None or typing.get_origin(_strip(field.annotation)) is not Literal:
        return []
    return [str(v) for v in typing.get_args(_strip(field.annotation))]


def _pick(tp: Any, data: Any, tag: Any = None) -> Any:
    """A union resolved to the member the document's own ``kind`` names (or pydantic's tag)."""
    members = _members(tp)
    if not members:
        return tp
    kind = data.get("kind") if isinstance(data, dict) else None
    for wanted in (kind, tag):
        for m in members:
            if wanted is not None and (str(wanted) in _kinds(m) or wanted == m.__name__):
                return m
    return tp  # undecided: no member is assumed


def _field(model: type[BaseModel], name: Any) -> Any:
    for fname, f in model.model_fields.items():
        if name in (fname, f.alias):
            return f
    return None


def _walk(root: Any, loc: tuple, data: Any) -> _Step:
    """Follow a pydantic ``loc`` from ``root``, dropping the steps pydantic inserts for unions
    (the member's tag, 'function-after[...]') so the path names keys the user wrote."""
    tp, node, out = root, data, []
    for part in loc:
        tp = _pick(_strip(tp), node, part)
        if _members(tp) or (isinstance(part, str) and "[" in part):
            continue  # an undecided union's tag or a validator wrapper: not a key in the file
        if _is_model(tp):
            f = _field(tp, part)
            if f is None and isinstance(part, str) and (part in _kinds(tp) or part == tp.__name__):
                continue  # the tag of the member already picked from the data
            tp = f.annotation if f is not None else None
        else:
            origin, args = typing.get_origin(tp), typing.get_args(tp)
            if origin in (list, tuple) and args and isinstance(part, int):
                tp = args[0]
            elif origin is dict and len(args) == 2:
                tp = args[1]
            else:
                tp = None
        out.append(part)
        if isinstance(node, dict):
            node = node.get(str(part))
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
    return _Step(tuple(out), _pick(_strip(tp), node), node)


def _known_fields(root: Any, path: tuple, data: Any) -> list[str]:
    """Keys allowed at a blueprint path (union members picked by the item's ``kind``)."""
    step = _walk(root, path, data)
    if _is_model(step.tp):
        return sorted(f.alias or name for name, f in step.tp.model_fields.items())
    return []


# -- pydantic errors -> findings ---------------------------------------------------------------

_TYPE_WORDS = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    return repr(value)


def validation_findings(doc: Document, exc: ValidationError, root: Any, data: Any, prefix: tuple = ()) -> list[Finding]:
    """Located findings for a pydantic error; ``prefix`` places a sub-document (the catalogue)."""
    raw = [_finding(doc, err, root, data, prefix) for err in exc.errors(include_url=False)]
    # An unknown key that is a near-miss of a missing required key is one mistake, not two:
    # keep the "unknown key ... did you mean" and drop the "missing".
    suggested = {(f.path[:-1], s) for f, s in raw if s}
    findings: list[Finding] = []
    seen: set[tuple] = set()
    for finding, _ in raw:
        missing = finding.message.startswith("missing required key")
        if missing and (finding.path[:-1], finding.path[-1]) in suggested:
            continue
        key = (finding.path, finding.message)
        if key not in seen:
            seen.add(key)
            findings.append(finding)
    return findings


def _finding(doc: Document, err: ErrorDetails, root: Any, data: Any, prefix: tuple) -> tuple[Finding, str | None]:
    """One finding, and the key it suggests (for folding a missing key into its typo)."""
    step = _walk(root, tuple(err["loc"]), data)
    loc = step.path
    path = prefix + loc
    kind = err["type"]
    ctx = err.get("ctx") or {}
    where = doc.locate(path)
    field = str(loc[-1]) if loc else "blueprint"
    parent = format_path(path[:-1])
    suggestion: str | None = None
    hint = ""
    if kind == "extra_forbidden":
        known = _known_fields(root, loc[:-1], data)
        close = suggest.close_names(field, known)
        suggestion = close[0] if close else None
        message = f"unknown key {field!r}" + (f" in {parent}" if parent else "")
        hint = suggest.did_you_mean(field, known)
    elif kind == "missing":
        message = f"missing required key {field!r}" + (f" in {parent}" if parent else "")
        where = doc.locate(path[:-1])
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        tags = sorted(t for m in _members(_strip(_container_item(root, loc, data))) for t in _kinds(m))
        if not tags:
            tags = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",") if t.strip(" '")]
        if kind == "union_tag_invalid":
            tag = str(ctx.get("tag"))
            message = f"unknown kind {tag!r}" + (f" in {format_path(path)}" if path else "")
            hint = suggest.suggestion(suggest.close_names(tag, tags)) + "kinds: " + ", ".join(tags)
            where = doc.locate(path + ("kind",))
        else:
            message = "missing key 'kind'" + (f" in {format_path(path)}" if path else "")
            hint = "kinds: " + ", ".join(tags)
    elif kind == "literal_error":
        value = err.get("input")
        allowed = [str(a) for a in typing.get_args(step.tp)] if typing.get_origin(step.tp) is Literal else []
        message = f"{format_path(path)}: {_shown(value)} is not allowed"
        close = suggest.close_names(str(value), allowed) if len(allowed) > 1 else []
        expected = str(ctx.get("expected", " or ".join(repr(a) for a in allowed)))
        hint = suggest.suggestion(close) + "expected " + expected
    elif kind in _TYPE_WORDS:
        message = f"{format_path(path)}: expected {_TYPE_WORDS[kind]}, got {_shown(err.get('input'))}"
    elif kind == "value_error" and not isinstance(err.get("input"), dict | list):
        message = f"{format_path(path)}: {err['msg'].removeprefix('Value error, ')}"
        if repr(err.get("input")) not in message:  # validators often quote the value already
            message += f" (got {_shown(err.get('input'))})"
    else:
        # Constraints (gt, min_length, pattern) and model-level rules: pydantic's words are clear.
        message = f"{format_path(path) or 'blueprint'}: {_lower(err['msg'].removeprefix('Value error, '))}"
        if kind not in ("value_error", "assertion_error") and not isinstance(err.get("input"), dict | list):
            message += f" (got {_shown(err.get('input'))})"
    return Finding("schema", Severity.ERROR, message, path, hint, where), suggestion


def _container_item(root: Any, loc: tuple, data: Any) -> Any:
    """The (unresolved) annotation at ``loc``: a union stays a union, to list its kinds."""
    if not loc:
        return root
    step = _walk(root, loc[:-1], data)
    tp = _strip(step.tp)
    if _is_model(tp):
        f = _field(tp, loc[-1])
        return f.annotation if f is not None else None
    args = typing.get_args(tp)
    if typing.get_origin(tp) in (list, tuple) and args:
        return args[0]
    if typing.get_origin(tp) is dict and len(args) == 2:
        return args[1]
    return None


def _lower(msg: str) -> str:
    return msg[:1].lower() + msg[1:] if msg[:2] != msg[:2].upper() else msg


# -- names of groups and networks ----------------------------------------------------------------

MANAGEMENT_NAME = "mgmt"  # the management builder's group and fabric name


def name_findings(doc: Document, bp: Blueprint) -> list[Finding]:
    """Node groups, scale-up domains, scale-out fabrics, CXL pools (and the hosts a pool makes)
    share one namespace: endpoints and hosts name a group, a device's group and a link's fabric
    are these names, and Fabric.facts is keyed by them. The management network takes 'mgmt'."""
    named: list[tuple[str, tuple]] = [(g.name, ("nodes", i, "name")) for i, g in enumerate(bp.nodes)]
    named += [(d.name, ("scaleup", i, "name")) for i, d in enumerate(bp.scaleup)]
    named += [(x.name, ("scaleout", i, "name")) for i, x in enumerate(bp.scaleout)]
    # A planed fat tree builds one fabric per plane ('<name>-p1', ...): those names are taken too.
    named += [(n, ("scaleout", i, "planes")) for i, x, n in built_fabrics(bp) if n != x.name]
    for i, pool in enumerate(bp.cxl):
        named.append((pool.name, ("cxl", i, "name")))
        named += [(h.name, ("cxl", i, "hosts", j, "name")) for j, h in enumerate(pool.hosts) if h.name is not None]
    seen: dict[str, tuple] = {MANAGEMENT_NAME: ("management",)} if bp.management is not None else {}
    rows: dict[str, tuple] = {}  # keyed by the folded name
    findings = []
    # Names are compared without case: they name files and folders (acceptance/<fabric>/,
    # diagrams/<fabric>.dot, imex/<domain>/, elevation/<row>.pdf), which collide on
    # case-insensitive file systems.
    for i, row in enumerate(bp.site.rows):  # rows are a namespace of their own (placements name them)
        path = ("site", "rows", i, "name")
        first = rows.setdefault(row.name.casefold(), path)
        if first is not path:
            hint = "give each row its own name (placements find a row by name)"
            findings.append(
                Finding(
                    "names-unique",
                    Severity.ERROR,
                    f"row {row.name!r} is already the name of {format_path(first[:-1])}{_case(row.name, bp, first)}",
                    path,
                    hint,
                    doc.locate(path),
                )
            )
    for name, path in named:
        first = seen.setdefault(name.casefold(), path)
        if first is path:
            continue
        what = "the management network" if first == ("management",) else format_path(first[:-1])
        findings.append(
            Finding(
                "names-unique",
                Severity.ERROR,
                f"{name!r} is already the name of {what}{_case(name, bp, first)}",
                path,
                "node groups, scale-up domains, fabrics and CXL pools share one namespace: give this one its own name",
                doc.locate(path),
            )
        )
    return findings


def _case(name: str, bp: Blueprint, first: tuple) -> str:
    """', spelt 'X'' when the first holder spells the name otherwise (it differs only in case)."""
    other = MANAGEMENT_NAME if first == ("management",) else _value_at(bp, first)
    if not isinstance(other, str) or other == name:
        return ""
    return f" (spelt {other!r}: names that differ only in case collide as file names on case-insensitive systems)"


def _value_at(bp: Blueprint, path: tuple) -> object:
    node: Any = bp
    for part in path:
        node = node[part] if isinstance(part, int) else getattr(node, part, None)
    return node


# -- naming templates --------------------------------------------------------------------------

_CABLE_FIELDS = {"fabric": "ib", "a": "leaf-01", "a_port": "p1", "b": "spine-01", "b_port": "p1"}


def _template_problem(template: str, sample: dict[str, Any] | None, kind: NameKind) -> tuple[str, str] | None:
    """(problem, hint) when ``template`` may not make ``kind`` names (see name_rules) or, with a
    sample of its fields, when ``template.format(**sample)`` would fail; else None."""
    problem = template_problem(template, kind, None if sample is None else sorted(sample))
    if problem is not None or sample is None:
        return problem
    try:
        template.format(**sample)  # safe to try: the spec is one of name_rules' short forms
    except (ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
        return f"naming template {template!r} cannot be filled: {exc}", "fields: " + ", ".join(sorted(sample))
    return None


# A sample end of a cable for naming.end_label: the local end's fields, then the far end's.
_END_SAMPLE: dict[str, Any] = {
    "site": "dc1",
    "row": "A",
    "rack": "A01",
    "u": 2,
    "device": "gpu-0001",
    "port": "OSFP 1 port 1",
    "os_port": "mlx5_0",
    "cable": "gpu-0001-mlx5_0",
}
_END_LABEL_SAMPLE: dict[str, Any] = {**_END_SAMPLE, **{"far_" + k: v for k, v in _END_SAMPLE.items()}}


_SHORT_END: dict[str, Any] = {"row": "A", "rack": "A01", "u": 2, "device": "gpu-0001", "port": "OSFP 1 port 1"}
_SHORT_LABEL_SAMPLE: dict[str, Any] = {
    "number": "K3M9QX",
    "fabric": "ib",
    "cable": "gpu-0001-mlx5_0",
    **_SHORT_END,
    **{"far_" + k: v for k, v in _SHORT_END.items()},
}


def template_findings(doc: Document, bp: Blueprint) -> list[Finding]:
    """Every naming template of the blueprint: its form and characters (name_rules), and its
    fields where they are fixed (cables, racks, node groups); builders fill role templates
    (naming.devices) and report a field they lack there."""
    checks: list[tuple[str, dict[str, Any] | None, tuple, NameKind]] = [
        (bp.naming.cable_id, _CABLE_FIELDS, ("naming", "cable_id"), name_rules.CABLE_ID),
        (bp.naming.cable_label, _CABLE_FIELDS, ("naming", "cable_label"), name_rules.LABEL),
        (bp.naming.end_label, _END_LABEL_SAMPLE, ("naming", "end_label"), name_rules.LABEL),
        (bp.site.rack_name, {"row": "A", "rack": 1}, ("site", "rack_name"), name_rules.RACK),
    ]
    for i, line in enumerate(bp.naming.short_label):
        checks.append((line, _SHORT_LABEL_SAMPLE, ("naming", "short_label", i), name_rules.LABEL))
    for role, template in bp.naming.devices.items():
        checks.append((template, None, ("naming", "devices", role), name_rules.DEVICE))
    for i, group in enumerate(bp.nodes):
        if group.naming is not None:
            checks.append((group.naming, {"group": group.name, "index": 1}, ("nodes", i, "naming"), name_rules.DEVICE))
    for i, pool in enumerate(bp.cxl):
        for j, hosts in enumerate(pool.hosts):
            if hosts.naming is not None:  # hosts the pool makes are named like a node group
                path = ("cxl", i, "hosts", j, "naming")
                checks.append((hosts.naming, {"group": hosts.label, "index": 1}, path, name_rules.DEVICE))
    findings = []
    for template, sample, path, kind in checks:
        problem = _template_problem(template, sample, kind)
        if problem is not None:
            findings.append(Finding("naming", Severity.ERROR, problem[0], path, problem[1], doc.locate(path)))
    return findings


# -- catalogue overrides -----------------------------------------------------------------------


def catalogue_findings(doc: Document, bp: Blueprint) -> list[Finding]:
    """The catalogue with the blueprint's overrides laid over it, validated entry by entry."""
    overrides = bp.catalogue.model_dump()
    if not any(overrides.values()):
        return []
    data = merged(overrides)
    try:
        Catalogue.model_validate(data)
    except ValidationError as exc:
        findings = validation_findings(doc, exc, Catalogue, data, prefix=("catalogue",))
        findings = [g for f in findings for g in _cross_entry(doc, f, overrides)]
        # An error in a built-in entry the blueprint did not touch points at 'catalogue:'.
        out = []
        for f in findings:
            rel = f.path[1:]
            if len(rel) >= 2 and rel[1] not in overrides.get(str(rel[0]), {}):
                f = Finding(f.rule, f.severity, f.message, ("catalogue",), f.hint, doc.locate(("catalogue",)))
            out.append(f)
        return out
    return []


def host_topology_findings(doc: Document, bp: Blueprint) -> list[Finding]:
    """Host PCI/NUMA layouts (``catalogue: host_topology:``) with the built-in ones, validated
    like the other catalogue sections: an error points at the key of the override."""
    overrides = bp.catalogue.host_topology
    if not overrides:
        return []
    data = {"host_topology": merged_host_topology(overrides)}
    try:
        HostLayouts.model_validate(data)
    except ValidationError as exc:
        out = []
        for f in validation_findings(doc, exc, HostLayouts, data, prefix=("catalogue",)):
            if len(f.path) >= 3 and f.path[2] not in overrides:
                f = Finding(f.rule, f.severity, f.message, ("catalogue",), f.hint, doc.locate(("catalogue",)))
            out.append(f)
        return out
    return []


def _cross_entry(doc: Document, f: Finding, overrides: dict[str, Any]) -> list[Finding]:
    """The catalogue's cross-entry checks (a medium's modules against its cord, a line's names)
    report at the catalogue as a whole, several problems in one message: one finding each, at the
    override entry that caused it when the blueprint made one (rule ``media-fit``)."""
    if f.path != ("catalogue",) or not f.message.startswith("catalogue: "):
        return [f]
    out = []
    for problem in f.message[len("catalogue: ") :].split("; "):
        head, _, _ = problem.partition(":")
        section, _, name = head.partition(".")
        path: tuple = ("catalogue",)
        if name and name in (overrides.get(section) or {}):
            path = ("catalogue", section, name)
        if " no " in problem and "named" in problem:
            hint = "name an entry of the catalogue (its media:, transceivers: or cords:), or add one in the override"
        else:
            hint = "a transceiver medium's modules and its fibre cord must take the same fibre and connector"
        out.append(Finding("media-fit", Severity.ERROR, f"catalogue {problem}", path, hint, doc.locate(path)))
    return out


# -- media references --------------------------------------------------------------------------


def _policies(node: Any, path: tuple) -> typing.Iterator[tuple[MediaPolicy, tuple]]:
    """Every media policy in the blueprint, wherever a topology model declares one."""
    if isinstance(node, MediaPolicy):
        yield node, path
    elif isinstance(node, BaseModel):
        for name, f in type(node).model_fields.items():
            yield from _policies(getattr(node, name), path + (f.alias or name,))
    elif isinstance(node, list | tuple):
        for i, item in enumerate(node):
            yield from _policies(item, path + (i,))
    elif isinstance(node, dict):
        for key, item in node.items():
            yield from _policies(item, path + (key,))


def media_reference_findings(doc: Document, bp: Blueprint) -> list[Finding]:
    """Every medium a policy names (``pin``, ``allow``, ``forbid``, network-wide and per tier) is a
    catalogue medium or a kind of medium (``dac``, ``sr``, ...)."""
    media = merged(bp.catalogue.model_dump())["media"]
    known = sorted(set(media) | {str(entry.get("kind")) for entry in media.values() if entry.get("kind")})
    findings = []
    for policy, path in _policies(bp, ()):
        rules = [(policy, path)] + [(tp, path + ("tiers", tier)) for tier, tp in policy.tiers.items()]
        for rule, where in rules:
            names = ([(rule.pin, where + ("pin",))] if rule.pin is not None else []) + [
                (name, where + ("allow", i)) for i, name in enumerate(rule.allow or [])
            ]
            names += [(name, where + ("forbid", i)) for i, name in enumerate(rule.forbid)]
            for name, at in names:
                if name not in known:
                    findings.append(
                        Finding(
                            "unknown-catalogue-item",
                            Severity.ERROR,
                            f"no medium named {name!r} in the catalogue",
                            at,
                            suggest.did_you_mean(name, known, "media"),
                            doc.locate(at),
                        )
                    )
    return findings
