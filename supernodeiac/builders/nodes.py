"""Node groups: compute nodes, storage and appliances, each placed by its group's placement."""

from __future__ import annotations

from ..fabric import Device
from ..fabric.cable_naming import positional_format
from ..model.nodes import NODE_NAMING, NodeGroup
from .base import BUILDERS
from .context import BuildContext


@BUILDERS.register("nodes")
def build_nodes(ctx: BuildContext, group: NodeGroup, path: tuple) -> None:
    ctx.model(group.model, path + ("model",), ("node", "appliance", "compute-board", "memory"))
    template = group.naming or NODE_NAMING  # checked by parse.template_findings
    ctx.reserve(group.count, path + ("count",))
    height = ctx.catalogue.devices[group.model].height_u
    where = ctx.geometry.place_many(group.placement, group.count, height, ctx.placement_path(path, group.placement))
    name = positional_format(template, ("group", "index"))
    gname, model, first = group.name, group.model, len(ctx.fabric.devices)
    # A group can hold 10^5 nodes: made in one comprehension and added to the Fabric at once.
    devices = [
        Device(first + i, name(gname, i + 1), "node", model, gname, rack, u, height, (("index", i),), path, 0)
        for i, (rack, u) in enumerate(where)
    ]
    ctx.groups.setdefault(gname, []).extend(ctx.fabric.add_devices(devices))
