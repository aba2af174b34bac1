"""Reach: every cable's length plus margin fits its medium at its lane rate."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..device_arrays import unique_ints
from ..findings import Finding, error
from ..link_table import LinkTable
from . import CHECKS, CheckContext


def _margin(ctx: CheckContext, origin: tuple) -> float:
    policy = ctx.blueprint.media
    # A fabric's own media policy wins over the blueprint default.
    node = ctx.blueprint
    for part in origin:
        node = node[part] if isinstance(part, int) else getattr(node, part, None)
        if node is None:
            break
        own = getattr(node, "media", None)
        if own is not None and hasattr(own, "margin_m"):
            policy = own
    return policy.margin_m


_UNSEEN = (-1.0, -1.0)  # a limits entry not worked out yet (None is a real value there)


@CHECKS.register("reach")
def check_reach(ctx: CheckContext) -> Iterator[Finding]:
    if not _clean(ctx):
        f = ctx.fabric
        # Each device's cage per port (one list per model, shared by its devices).
        by_model = {m: [g.cage for g in f.layouts[m].port_groups] for m in {d.model for d in f.devices}}
        yield from _walk(ctx, [by_model[d.model] for d in f.devices])


def _clean(ctx: CheckContext) -> bool:
    """True when no link has a finding, decided in bulk: the medium, rate and margin per
    (spec, cage, cage) combination, then one vectorised comparison of every length with its
    bound (the same float arithmetic as the walk). Anything doubtful is left to :func:`_walk`."""
    f, media = ctx.fabric, ctx.catalogue.media
    t = f.links
    if not t:
        return True
    dv, arr = f.device_arrays(), t.arrays()
    if not (dv.ports_in_range(arr.a, arr.a_port) and dv.ports_in_range(arr.b, arr.b_port)):
        return False  # a port the device does not have: the walk skips such links
    cage_of, cages = dv.port_table("cage", lambda g: g.cage)
    n = len(cages)
    cage_a, cage_b = cage_of[dv.rows(arr.a, arr.a_port)], cage_of[dv.rows(arr.b, arr.b_port)]
    specs = t.specs
    # Everything but the length comes from the spec: the bound each link's length + margin must keep.
    margin_of = [0.0] * len(specs)
    bound_of = [0.0] * len(specs)
    for combo in unique_ints((arr.spec * n + cage_a) * n + cage_b).tolist():
        s, rest = divmod(combo, n * n)
        spec = specs[s]
        medium = media.get(spec.medium) if spec.medium else None
        if medium is None or not medium.plugs_into(cages[rest // n], cages[rest % n]):
            return False
        reach = medium.reach_at(spec.lane_gbps)
        if reach is None:
            return False
        margin_of[s] = _margin(ctx, spec.origin) if medium.needs_margin else 0.0
        bound_of[s] = reach + 1e-9
    margins, bounds = np.array(margin_of, dtype=np.float64), np.array(bound_of, dtype=np.float64)
    return not bool((arr.length_m + margins[arr.spec] > bounds[arr.spec]).any())


def _walk(ctx: CheckContext, cages: list[list[str]]) -> Iterator[Finding]:
    """Every link in order: the findings of a fabric that has some."""
    f, media = ctx.fabric, ctx.catalogue.media
    t = f.links
    specs = t.specs
    reported: set[tuple] = set()
    margins: dict[tuple, float] = {}
    # All but the length is shared by the links of one spec between two kinds of cage: the
    # (reach, margin) to hold lengths to, or None when the medium itself is unusable there.
    limits: dict[tuple, tuple[float | None, float] | None] = {}
    for i, a, a_port, b, b_port, length_m, s in zip(range(len(t)), t.a, t.a_port, t.b, t.b_port, t.length_m, t.spec):
        ca, cb = cages[a], cages[b]
        if not (0 <= a_port < len(ca) and 0 <= b_port < len(cb)):
            continue  # a port the device does not have: the port-budget check reports it
        cage_a, cage_b = ca[a_port], cb[b_port]
        spec = specs[s]
        key = (s, cage_a, cage_b)
        limit = limits.get(key, _UNSEEN)
        if limit is _UNSEEN:
            problem = _unusable(ctx, t, i, cage_a, cage_b)
            if problem is not None:
                limit = None
                if problem[0] not in reported:
                    reported.add(problem[0])
                    yield problem[1]
            else:
                medium = media[spec.medium]
                margin = 0.0
                if medium.needs_margin:
                    margin = margins.get(spec.origin, -1.0)
                    if margin < 0:
                        margin = margins[spec.origin] = _margin(ctx, spec.origin)
                limit = (medium.reach_at(spec.lane_gbps), margin)
            limits[key] = limit
        if limit is None:
            continue
        reach, margin = limit
        if reach is None or length_m + margin > reach + 1e-9:
            rkey = ("reach", spec.medium, spec.origin)
            if rkey in reported:
                continue
            reported.add(rkey)
            da, db = f.devices[a], f.devices[b]
            rating = "no rating" if reach is None else f"reach {reach:g} m"
            yield error(
                "reach",
                f"{t.id_of(i)}: {length_m:.1f} m + {margin:g} m margin exceeds {spec.medium} ({rating} at "
                f"{spec.lane_gbps:g} Gb/s per lane), {da.name} to {db.name}",
                spec.origin,
                "use optics (e.g. drop the pin to let the policy choose) or place the devices closer",
            )


def _unusable(ctx: CheckContext, t: LinkTable, i: int, cage_a: str, cage_b: str) -> tuple[tuple, Finding] | None:
    """(dedup key, finding) when link ``i`` has no medium, an unknown one, or one that does not plug in."""
    f, media = ctx.fabric, ctx.catalogue.media
    spec = t.specs[t.spec[i]]
    if not spec.medium:
        a, b = f.devices[t.a[i]], f.devices[t.b[i]]
        return ("none", spec.origin, spec.lane_gbps, cage_a, cage_b), error(
            "reach",
            f"no medium reaches {t.length_m[i]:.1f} m at {spec.lane_gbps:g} Gb/s per lane "
            f"between {a.name} ({cage_a}) and {b.name} ({cage_b}) ({t.id_of(i)})",
            spec.origin,
            "move the racks closer, allow optics in the media policy, or add a medium to the catalogue",
        )
    medium = media.get(spec.medium)
    if medium is None:
        return ("unknown", spec.medium), error(
            "unknown-catalogue-item",
            f"no medium named {spec.medium!r} in the catalogue",
            spec.origin,
            f"known media: {', '.join(sorted(media))}",
        )
    if not medium.plugs_into(cage_a, cage_b):
        return ("cage", spec.medium, cage_a, cage_b), error(
            "media-fit",
            f"{spec.medium} does not plug into {cage_a} <> {cage_b} ({t.id_of(i)})",
            spec.origin,
            f"{spec.medium} fits: {', '.join(medium.cages)}",
        )
    return None
