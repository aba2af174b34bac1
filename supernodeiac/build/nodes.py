"""Node groups: compute nodes, storage and appliances, each placed by its group's placement."""

from __future__ import annotations

from ..fabric import Device
from ..model.nodes import NODE_NAMING, NodeGroup
from . import BUILDERS
from .context import BuildContext


@BUILDERS.register("nodes")
def build_nodes(ctx: BuildContext, group: NodeGroup, path: tuple) -> None:
    ctx.model(group.model, path + ("model",), ("node", "appliance", "compute-board", "memory"))
    template = group.naming or NODE_NAMING  # checked by parse.template_findings
    height = ctx.catalogue.devices[group.model].height_u
    where = ctx.geometry.place_many(group.placement, group.count, height, ctx.placement_path(path, group.placement))
    fabric, members = ctx.fabric, ctx.groups.setdefault(group.name, [])
    # One Device per node without the per-device checks of add_device: a group can hold 10^5 nodes.
    for i, (rack, u) in enumerate(where):
        name = template.format(group=group.name, index=i + 1)
        device = Device(0, name, "node", group.model, group.name, rack, u, height, (("index", i),), path, 0)
        members.append(fabric.add_device(device).index)
