"""Every device name and cable ID is unique (templates that drop a coordinate collide)."""

from __future__ import annotations

from collections.abc import Iterator

from ..fabric import Device
from ..findings import Finding, error
from .base import CHECKS, CheckContext


def _template_path(ctx: CheckContext, device: Device) -> tuple:
    """Where the name came from: the role's template in naming.devices, a node group's own
    ``naming``, or else the entry that made the device (its builder's default template)."""
    if device.role in ctx.blueprint.naming.devices:
        return ("naming", "devices", device.role)
    origin = device.origin
    if len(origin) == 2 and origin[0] == "nodes" and ctx.blueprint.nodes[origin[1]].naming is not None:
        return (*origin, "naming")
    return origin


@CHECKS.register("names-unique")
def check_names(ctx: CheckContext) -> Iterator[Finding]:
    devices = ctx.fabric.devices
    seen: dict[str, int] = {}
    repeats: dict[str, list[int]] = {}  # name -> every device that has it (insertion order)
    # Names are compared without case too: they name files (configs, NCCL files, per-device
    # folders), which collide on case-insensitive file systems. A set of the names (folded only
    # when one has a capital) says whether any repeats: walk 10^6 devices only then.
    unique = ctx.fabric.has_unique_names(fold_case=True)
    for d in () if unique else devices:
        first = seen.setdefault(d.name.lower(), d.index)
        if first != d.index:
            repeats.setdefault(d.name.lower(), [first]).append(d.index)
    # One finding per template that collides, naming its first repeated name and how far it goes.
    by_path: dict[tuple, list[str]] = {}
    for name, indices in repeats.items():
        for path in dict.fromkeys(_template_path(ctx, devices[i]) for i in indices):
            by_path.setdefault(path, []).append(name)
    for path, names in by_path.items():
        holders = [devices[i] for i in repeats[names[0]]]
        name = holders[0].name
        groups = ", ".join(sorted({d.group for d in holders}))
        more = f"; {len(names) - 1} more name(s) collide the same way" if len(names) > 1 else ""
        spellings = sorted({d.name for d in holders})
        what = (
            f"device name {name!r} is given to {len(holders)} devices ({groups})"
            if len(spellings) == 1
            else f"device names {' and '.join(map(repr, spellings[:3]))} differ only in case ({len(holders)} devices: "
            f"{groups}), and collide as file names on case-insensitive systems"
        )
        yield error(
            "names-unique",
            f"{what}{more}",
            path,
            "add a coordinate such as {su}, {rail}, {group} or {index} to the naming template",
        )
    if repeats:
        return  # cable IDs are made of device names: theirs would repeat the same mistake
    if ctx.fabric.cable_ids_distinct(names_unique=True):  # no name repeats (the walk above found none)
        return  # shown from the names and the link ends, without formatting 10^6 IDs
    t = ctx.fabric.links
    ids = t.ids()
    if len(set(ids)) == len(ids):
        return  # the common case, decided in one pass; otherwise find the first repeat below
    first_of: dict[str, int] = {}
    for i, cable_id in enumerate(ids):
        if cable_id in first_of:
            f = ctx.fabric
            ends = [
                f"{f.devices[a].name}:{f.port_name(a, a_port)} > {f.devices[b].name}:{f.port_name(b, b_port)}"
                for a, a_port, b, b_port in ((t.a[j], t.a_port[j], t.b[j], t.b_port[j]) for j in (first_of[cable_id], i))
            ]
            yield error(
                "names-unique",
                f"cable ID {cable_id!r} is used twice ({ends[0]} and {ends[1]})",
                ("naming", "cable_id"),
                "include {a_port} (or {b}/{b_port}) in naming.cable_id",
            )
            break  # one is enough: a template that collides collides everywhere
        first_of[cable_id] = i
