"""Reach like the data sheets: a link's ordered stock length is within its medium's rated reach.

The routed length already carries the service loop, so it is rounded up to the medium's next
stock length (a splitter: its longest leg; a transceiver link: its fibre cord) and that length
must be within the rated reach at the link's lane rate (transceivers: the lesser of the two
modules'), less the policy's explicit derating (``margin_m``, ``derate_pct``; default off).

Rules: ``reach`` (no medium, no stock length long enough, or past the rated reach: an error that
names the part and its reach), ``media-fit`` (the medium does not take one of the two cages: form
factor, top, lanes, lane rate), ``unknown-catalogue-item``, and ``reach-margin``: a warning when a
copper cable is ordered within ``copper_warning_m`` of its rated reach (copper at the edge of its
reach drops links under load). Decided in bulk per (spec, cage shape, cage shape); links are
walked only to write the findings, in table order, once per medium and origin.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..catalog.fit import CageShape, Fit, fit
from ..fabric import Fabric, LinkSpec
from ..facts.cage_plan import assemblies, link_shapes
from ..findings import Finding, error, warning
from ..model.common import MediaPolicy
from .base import CHECKS, CheckContext

# Per-link outcome codes.
_OK, _NO_MEDIUM, _UNKNOWN, _UNFIT, _NO_STOCK, _PAST, _NEAR = range(7)


def policy_for(ctx: CheckContext, origin: tuple) -> MediaPolicy:
    """The media policy that governs links made at ``origin`` (a network's own wins over the default)."""
    policy = ctx.blueprint.media
    node: Any = ctx.blueprint  # walks down the blueprint's models, lists and fields
    for part in origin:
        node = node[part] if isinstance(part, int) else getattr(node, str(part), None)
        if node is None:
            break
        own = getattr(node, "media", None)
        if isinstance(own, MediaPolicy):
            policy = own
    return policy


@dataclass(frozen=True, slots=True)
class _Combo:
    """What every link of one (spec, cage shape, cage shape) shares."""

    code: int  # _OK, or why no link of it can be right
    fit: Fit
    bound: float  # the longest ordered length the derated reach allows
    margin: float
    warn_from: float  # copper: an ordered length above this is near its limit (inf: never)


@CHECKS.register("reach")
def check_reach(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    t = f.links
    if not len(t):
        return
    arr = t.arrays()
    sa, sb, shapes = link_shapes(f)
    n_shapes = len(shapes) + 1
    combo_key = (arr.spec * n_shapes + (sa + 1)) * n_shapes + (sb + 1)
    order = np.argsort(combo_key, kind="stable")
    keys = combo_key[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else np.zeros(0, dtype=np.int64)
    ends = np.append(starts[1:], len(keys))
    length = assemblies(f, ctx.catalogue.media).length_m
    code = np.zeros(len(t), dtype=np.int64)
    ordered = np.zeros(len(t), dtype=np.float64)
    combos: dict[int, _Combo] = {}
    for s0, s1 in zip(starts.tolist(), ends.tolist(), strict=True):
        key = int(keys[s0])
        rest, b_id = divmod(key, n_shapes)
        spec_index, a_id = divmod(rest, n_shapes)
        combo = combos[key] = _combo(ctx, spec_index, a_id - 1, b_id - 1, shapes)
        members = order[s0:s1]
        if combo.code != _OK:
            code[members] = combo.code
            continue
        stock = np.array(combo.fit.stock, dtype=np.float64)
        lengths = length[members]
        at = np.searchsorted(stock, lengths - 1e-9, side="left")
        missing = at >= len(stock)
        got = stock[np.minimum(at, len(stock) - 1)]
        ordered[members] = np.where(missing, 0.0, got)
        verdict = np.where(missing, _NO_STOCK, np.where(got > combo.bound + 1e-9, _PAST, _OK))
        verdict = np.where((verdict == _OK) & (got > combo.warn_from + 1e-9), _NEAR, verdict)
        code[members] = verdict
    if not code.any():
        return
    yield from _findings(ctx, code, ordered, length, combo_key, combos)


def _combo(ctx: CheckContext, spec_index: int, a_id: int, b_id: int, shapes: list[CageShape]) -> _Combo:
    spec = ctx.fabric.links.specs[spec_index]
    none = Fit(spec.medium, "")
    if a_id < 0 or b_id < 0:
        return _Combo(_OK, none, 0, 0, float("inf"))  # a port the device lacks: the port-budget check reports it
    if not spec.medium:
        return _Combo(_NO_MEDIUM, none, 0, 0, float("inf"))
    medium = ctx.catalogue.media.get(spec.medium)
    if medium is None:
        return _Combo(_UNKNOWN, none, 0, 0, float("inf"))
    got = fit(ctx.catalogue, spec.medium, spec.lane_gbps, shapes[a_id], shapes[b_id], spec.lanes)
    if got.problem or got.reach is None:
        return _Combo(_UNFIT, got, 0, 0, float("inf"))
    policy = policy_for(ctx, spec.origin)
    margin = policy.margin_m if medium.needs_margin else 0.0
    bound = got.reach * (1 - policy.derate_pct / 100) - margin
    warn_from = got.reach - policy.copper_warning_m if medium.copper else float("inf")
    return _Combo(_OK, got, bound, margin, warn_from)


def _findings(
    ctx: CheckContext,
    code: np.ndarray,
    ordered: np.ndarray,
    length: np.ndarray,
    combo_key: np.ndarray,
    combos: dict[int, _Combo],
) -> Iterator[Finding]:
    """The findings of the flagged links, in table order, once per kind of problem and origin."""
    f = ctx.fabric
    t = f.links
    specs = t.specs
    reported: set[tuple] = set()
    near: dict[tuple, list] = {}  # (medium, origin) -> [count, first link, ordered, reach]
    for i in np.flatnonzero(code).tolist():
        c = int(code[i])
        spec = specs[t.spec[i]]
        combo = combos[int(combo_key[i])]
        if c == _NEAR:
            entry = near.setdefault((spec.medium, spec.origin), [0, i, float(ordered[i]), combo.fit.reach])
            entry[0] += 1
            continue
        key: tuple
        if c == _NO_MEDIUM:
            key = ("none", spec.origin, spec.lane_gbps)
        elif c == _UNKNOWN:
            key = ("unknown", spec.medium)
        elif c == _UNFIT:
            key = ("fit", spec.medium, combo.fit.problem)
        else:
            key = ("reach", spec.medium, spec.origin)
        if key in reported:
            continue
        reported.add(key)
        yield _finding(ctx, c, i, float(length[i]), float(ordered[i]), combo)
    for (medium, origin), (count, i, got, reach) in near.items():
        policy = policy_for(ctx, origin)
        da, db = f.devices[t.a[i]], f.devices[t.b[i]]
        more = f" and {count - 1} more" if count > 1 else ""
        yield warning(
            "reach-margin",
            f"{t.id_of(i)}{more}: {medium} ordered at {got:g} m, within {policy.copper_warning_m:g} m of its "
            f"{reach:g} m rated reach, {da.name} to {db.name}",
            origin,
            "copper at the edge of its reach drops links under load: move the devices closer, allow optics, "
            "or set an explicit derating (media.margin_m / derate_pct); media.copper_warning_m tunes this warning",
        )


def _finding(ctx: CheckContext, c: int, i: int, length_m: float, ordered_m: float, combo: _Combo) -> Finding:
    f = ctx.fabric
    t = f.links
    spec = t.specs[t.spec[i]]
    da, db = f.devices[t.a[i]], f.devices[t.b[i]]
    cid = t.id_of(i)
    if c == _NO_MEDIUM:
        return error(
            "reach",
            f"no medium reaches {length_m:.1f} m at {spec.lane_gbps:g} Gb/s per lane between {da.name} "
            f"({_cage(f, t.a[i], t.a_port[i])}) and {db.name} ({_cage(f, t.b[i], t.b_port[i])}) ({cid})",
            spec.origin,
            _why_none(ctx, i),
        )
    if c == _UNKNOWN:
        media = ctx.catalogue.media
        return error(
            "unknown-catalogue-item",
            f"no medium named {spec.medium!r} in the catalogue",
            spec.origin,
            f"known media: {', '.join(sorted(media))}",
        )
    if c == _UNFIT:
        medium = ctx.catalogue.media[spec.medium]
        problem = combo.fit.problem or f"{spec.medium} has no rating at {spec.lane_gbps:g} Gb/s per lane"
        return error(
            "media-fit",
            f"{spec.medium} does not plug into {_cage(f, t.a[i], t.a_port[i])} <> {_cage(f, t.b[i], t.b_port[i])}: "
            f"{problem} ({cid})",
            spec.origin,
            f"{spec.medium} fits: {', '.join(medium.cages)}; let the policy choose, or add a part to the catalogue",
        )
    part = _part(ctx, spec)
    reach = combo.fit.reach or 0.0
    derated = "" if combo.bound >= reach - 1e-9 else f" (derated to {combo.bound:g} m by the media policy)"
    if c == _NO_STOCK:
        longest = combo.fit.stock[-1] if combo.fit.stock else 0
        message = (
            f"{cid}: {length_m:.1f} m is longer than any {spec.medium} ({part}) ordered: the longest is "
            f"{longest:g} m, rated reach {reach:g} m at {spec.lane_gbps:g} Gb/s per lane{derated}, {da.name} to {db.name}"
        )
    else:
        message = (
            f"{cid}: {length_m:.1f} m needs a {ordered_m:g} m {spec.medium} ({part}), which exceeds its rated "
            f"reach of {reach:g} m at {spec.lane_gbps:g} Gb/s per lane{derated}, {da.name} to {db.name}"
        )
    return error(
        "reach", message, spec.origin, "use optics (e.g. drop the pin to let the policy choose) or place the devices closer"
    )


def _cage(f: Fabric, device: int, port: int) -> str:
    layout = f.layouts[f.devices[device].model]
    if not 0 <= port < layout.total:
        return "?"
    g = layout.port_groups[port]
    return CageShape.of(g, layout.model.kind).describe()


def _part(ctx: CheckContext, spec: LinkSpec) -> str:
    """The part family a reach finding names: the cable's, or the two modules' of a transceiver link."""
    m = ctx.catalogue.media[spec.medium]
    if m.shape == "transceiver":
        modules = ctx.catalogue.transceivers
        names = [modules[k].part.number for k in dict.fromkeys((spec.a_module, spec.b_module)) if k in modules]
        return " + ".join(names) or spec.medium
    return m.part.number if m.part is not None else spec.medium


def _why_none(ctx: CheckContext, i: int) -> str:
    """Why no medium fits: a lane rate a cage does not run, or the longest reach on offer."""
    f = ctx.fabric
    t = f.links
    spec = t.specs[t.spec[i]]
    la, lb = f.layouts[f.devices[t.a[i]].model], f.layouts[f.devices[t.b[i]].model]
    a = CageShape.of(la.port_groups[t.a_port[i]], la.model.kind)
    b = CageShape.of(lb.port_groups[t.b_port[i]], lb.model.kind)
    for cage in (a, b):
        if not cage.runs_at(spec.lane_gbps):
            got = fit(ctx.catalogue, next(iter(ctx.catalogue.media)), spec.lane_gbps, a, b, spec.lanes)
            return f"{got.problem}: the two ends share no lane rate; use matching switches and NICs"
    best = max(
        (
            (r.reach, name)
            for name in ctx.catalogue.media
            if not (r := fit(ctx.catalogue, name, spec.lane_gbps, a, b, spec.lanes)).problem and r.reach is not None
        ),
        default=None,
    )
    if best is None:
        return "no catalogue medium takes these two cages at this lane rate: add one (catalogue: media:)"
    return (
        f"the longest reach any catalogue medium has here is {best[0]:g} m ({best[1]}); move the racks closer, "
        "allow it in the media policy, or add a medium to the catalogue"
    )
