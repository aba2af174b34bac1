"""Every device name and cable ID is unique (templates that drop a coordinate collide)."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error
from . import CHECKS, CheckContext


@CHECKS.register("names-unique")
def check_names(ctx: CheckContext) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for d in ctx.fabric.devices:
        if d.name in seen:
            first = ctx.fabric.devices[seen[d.name]]
            yield error(
                "names-unique",
                f"device name {d.name!r} is used twice ({first.group} and {d.group})",
                d.origin,
                "add a coordinate such as {su}, {rail} or {index} to the naming template",
            )
            continue
        seen[d.name] = d.index
    links = ctx.fabric.links
    if len({link.id for link in links}) == len(links):
        return  # the common case, decided in one pass; otherwise find the first repeat below
    ids: set[str] = set()
    for link in links:
        if link.id in ids:
            yield error(
                "names-unique",
                f"cable ID {link.id!r} is used twice",
                ("naming", "cable_id"),
                "include {a_port} (or {b}/{b_port}) in naming.cable_id",
            )
            break  # one is enough: a template that collides collides everywhere
        ids.add(link.id)
