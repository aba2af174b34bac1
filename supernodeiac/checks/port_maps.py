"""Port maps: a switch's SONiC ports must be the catalogue's (names, lanes, speeds, cages split as
its breakout mode says), so that the cabling list, the configs, the LLDP expectations and
``snc verify`` name and place every port alike. The catalogue model (its port groups and cages)
is the source of truth; the map only adds what SONiC calls things."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.sonic_ports import port_map_clashes, port_map_problems
from ..findings import Finding, error
from .base import CHECKS, CheckContext


@CHECKS.register("port-map")
def check_port_maps(ctx: CheckContext) -> Iterator[Finding]:
    f, maps = ctx.fabric, ctx.catalogue.port_maps
    overridden = ctx.blueprint.catalogue.port_maps
    for model in sorted({d.model for d in f.devices} & set(maps)):
        path = ("catalogue", "port_maps", model) if model in overridden else ("catalogue",)
        # At the group's key (or a listed port's) when the blueprint wrote the groups, else at the model.
        groups = model in overridden and "groups" in overridden[model]
        layout, port_map = f.layouts[model], maps[model]
        for at, problem, hint in [*port_map_problems(layout, port_map), *port_map_clashes(layout, port_map)]:
            yield error("port-map", f"port map of {model}: {problem}", path + at if groups else path, hint)
