"""Reach: every cable's length plus margin fits its medium at its lane rate."""

from __future__ import annotations

from collections.abc import Iterator

from ..build.media import fits_cages
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


@CHECKS.register("reach")
def check_reach(ctx: CheckContext) -> Iterator[Finding]:
    f, media = ctx.fabric, ctx.catalogue.media
    reported: set[tuple] = set()
    margins: dict[tuple, float] = {}
    for link in f.links:
        ga = f.port_group(link.a, link.a_port)
        gb = f.port_group(link.b, link.b_port)
        a, b = f.devices[link.a], f.devices[link.b]
        if not link.medium:
            key = ("none", link.origin, link.lane_gbps, ga.cage, gb.cage)
            if key not in reported:
                reported.add(key)
                yield error(
                    "reach",
                    f"no medium reaches {link.length_m:.1f} m at {link.lane_gbps:g} Gb/s per lane "
                    f"between {a.name} ({ga.cage}) and {b.name} ({gb.cage}) ({link.id})",
                    link.origin,
                    "move the racks closer, allow optics in the media policy, or add a medium to the catalogue",
                )
            continue
        medium = media.get(link.medium)
        if medium is None:
            key = ("unknown", link.medium)
            if key not in reported:
                reported.add(key)
                known = ", ".join(sorted(media))
                yield error(
                    "unknown-catalogue-item",
                    f"no medium named {link.medium!r} in the catalogue",
                    link.origin,
                    f"known media: {known}",
                )
            continue
        if not fits_cages(medium, ga.cage, gb.cage):
            key = ("cage", link.medium, ga.cage, gb.cage)
            if key not in reported:
                reported.add(key)
                yield error(
                    "media-fit",
                    f"{link.medium} does not plug into {ga.cage} <> {gb.cage} ({link.id})",
                    link.origin,
                    f"{link.medium} fits: {', '.join(medium.cages)}",
                )
            continue
        reach = medium.reach_at(link.lane_gbps)
        margin = 0.0
        if medium.needs_margin:
            margin = margins.get(link.origin, -1.0)
            if margin < 0:
                margin = margins[link.origin] = _margin(ctx, link)
        if reach is None or link.length_m + margin > reach + 1e-9:
            key = ("reach", link.medium, link.origin)
            if key in reported:
                continue
            reported.add(key)
            limit = "no rating" if reach is None else f"reach {reach:g} m"
            yield error(
                "reach",
                f"{link.id}: {link.length_m:.1f} m + {margin:g} m margin exceeds {link.medium} ({limit} at "
                f"{link.lane_gbps:g} Gb/s per lane), {a.name} to {b.name}",
                link.origin,
                "use optics (e.g. drop the pin to let the policy choose) or place the devices closer",
            )
