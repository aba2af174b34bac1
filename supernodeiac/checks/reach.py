"""Reach: every cable's length plus margin fits its medium at its lane rate."""

from __future__ import annotations

from collections.abc import Iterator

from ..build.media import fits_cages
from ..fabric import Link
from ..findings import Finding, error
from . import CHECKS, CheckContext


def _margin(ctx: CheckContext, link) -> float:
    policy = ctx.blueprint.media
    path = link.origin
    # A fabric's own media policy wins over the blueprint default.
    node = ctx.blueprint
    for part in path:
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
    f, media = ctx.fabric, ctx.catalogue.media
    reported: set[tuple] = set()
    margins: dict[tuple, float] = {}
    # All but the length is shared by many links: (medium, lane rate, cages, origin) -> the
    # (reach, margin) to hold lengths to, or None when the medium itself is unusable there.
    limits: dict[tuple, tuple[float | None, float] | None] = {}
    port_groups = [f.layouts[d.model].port_groups for d in f.devices]
    for link in f.links:
        pa, pb = port_groups[link.a], port_groups[link.b]
        if not (0 <= link.a_port < len(pa) and 0 <= link.b_port < len(pb)):
            continue  # a port the device does not have: the port-budget check reports it
        ga, gb = pa[link.a_port], pb[link.b_port]
        key = (link.medium, link.lane_gbps, ga.cage, gb.cage, link.origin)
        limit = limits.get(key, _UNSEEN)
        if limit is _UNSEEN:
            problem = _unusable(ctx, link, ga.cage, gb.cage)
            if problem is not None:
                limit = None
                if problem[0] not in reported:
                    reported.add(problem[0])
                    yield problem[1]
            else:
                medium = media[link.medium]
                margin = 0.0
                if medium.needs_margin:
                    margin = margins.get(link.origin, -1.0)
                    if margin < 0:
                        margin = margins[link.origin] = _margin(ctx, link)
                limit = (medium.reach_at(link.lane_gbps), margin)
            limits[key] = limit
        if limit is None:
            continue
        reach, margin = limit
        if reach is None or link.length_m + margin > reach + 1e-9:
            rkey = ("reach", link.medium, link.origin)
            if rkey in reported:
                continue
            reported.add(rkey)
            a, b = f.devices[link.a], f.devices[link.b]
            rating = "no rating" if reach is None else f"reach {reach:g} m"
            yield error(
                "reach",
                f"{link.id}: {link.length_m:.1f} m + {margin:g} m margin exceeds {link.medium} ({rating} at "
                f"{link.lane_gbps:g} Gb/s per lane), {a.name} to {b.name}",
                link.origin,
                "use optics (e.g. drop the pin to let the policy choose) or place the devices closer",
            )


def _unusable(ctx: CheckContext, link: Link, cage_a: str, cage_b: str) -> tuple[tuple, Finding] | None:
    """(dedup key, finding) when the link has no medium, an unknown one, or one that does not plug in."""
    f, media = ctx.fabric, ctx.catalogue.media
    if not link.medium:
        a, b = f.devices[link.a], f.devices[link.b]
        return ("none", link.origin, link.lane_gbps, cage_a, cage_b), error(
            "reach",
            f"no medium reaches {link.length_m:.1f} m at {link.lane_gbps:g} Gb/s per lane "
            f"between {a.name} ({cage_a}) and {b.name} ({cage_b}) ({link.id})",
            link.origin,
            "move the racks closer, allow optics in the media policy, or add a medium to the catalogue",
        )
    medium = media.get(link.medium)
    if medium is None:
        return ("unknown", link.medium), error(
            "unknown-catalogue-item",
            f"no medium named {link.medium!r} in the catalogue",
            link.origin,
            f"known media: {', '.join(sorted(media))}",
        )
    if not fits_cages(medium, cage_a, cage_b):
        return ("cage", link.medium, cage_a, cage_b), error(
            "media-fit",
            f"{link.medium} does not plug into {cage_a} <> {cage_b} ({link.id})",
            link.origin,
            f"{link.medium} fits: {', '.join(medium.cages)}",
        )
    return None
