"""Node groups: compute nodes, storage and appliances, each placed by its group's placement."""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

from ..fabric import Device
from ..fabric.cable_naming import numbered_names
from ..model.nodes import NODE_NAMING, NodeGroup
from .base import BUILDERS
from .context import BuildContext

_INDEX = attrgetter("index")


@BUILDERS.register("nodes")
def build_nodes(ctx: BuildContext, group: NodeGroup, path: tuple) -> None:
    ctx.model(group.model, path + ("model",), ("node", "appliance", "compute-board", "memory"))
    template = group.naming or NODE_NAMING  # checked by parse.template_findings
    ctx.reserve(group.count, path + ("count",))
    height = ctx.catalogue.devices[group.model].height_u
    racks, units = ctx.geometry.place_columns(group.placement, group.count, height, ctx.placement_path(path, group.placement))
    names = numbered_names(template, group.name, group.count)
    gname, model, first, n = group.name, group.model, len(ctx.fabric.devices), group.count
    # A group can hold 10^6 nodes: made column by column in one map (C, no per-node Python
    # step); the shared fields are one object each, and so are the coords of each index.
    coords = ctx.index_coords(n)
    devices = list(
        map(
            Device,
            range(first, first + n),
            names,
            repeat("node"),
            repeat(model),
            repeat(gname),
            racks,
            units,
            repeat(height),
            coords,
            repeat(path),
            repeat(0),
        )
    )
    ctx.fabric.add_devices(devices)
    ctx.groups.setdefault(gname, []).extend(map(_INDEX, devices))  # the devices' own index ints, shared
