"""Node groups: compute nodes, storage and appliances, each placed by its group's placement."""

from __future__ import annotations

from ..model.nodes import NodeGroup
from . import BUILDERS
from .context import BuildContext


@BUILDERS.register("nodes")
def build_nodes(ctx: BuildContext, group: NodeGroup, path: tuple) -> None:
    ctx.model(group.model, path + ("model",), ("node", "appliance", "compute-board", "memory"))
    template = group.naming or "{group}-{index:04d}"
    for i in range(group.count):
        name = template.format(group=group.name, index=i + 1)
        ctx.add_device(
            name=name,
            role="node",
            model=group.model,
            group=group.name,
            placement=group.placement,
            slot=i,
            origin=path,
            coords=(("index", i),),
        )
