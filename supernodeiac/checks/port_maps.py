"""Port maps: a switch's SONiC port names must be the catalogue's, so that the cabling list, the
configs, the LLDP expectations and ``snc verify`` name every port alike."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error
from ..sonic_ports import PortMapError, SonicPorts
from . import CHECKS, CheckContext


@CHECKS.register("port-map")
def check_port_maps(ctx: CheckContext) -> Iterator[Finding]:
    f, maps = ctx.fabric, ctx.catalogue.port_maps
    overridden = ctx.blueprint.catalogue.port_maps
    for model in sorted({d.model for d in f.devices} & set(maps)):
        path = ("catalogue", "port_maps", model) if model in overridden else ("catalogue",)
        try:
            ports = SonicPorts(f.models[model], maps[model])
        except PortMapError as exc:
            yield error("port-map", f"port map of {model}: {exc}", path, "one group per catalogue port group role")
            continue
        names = f.layouts[model].names
        wrong = [(names[i], sp.name) for i, sp in enumerate(ports.ports) if sp is not None and sp.name != names[i]]
        if wrong:
            shown = ", ".join(f"{a} is {b}" for a, b in wrong[:3])
            yield error(
                "port-map",
                f"port map of {model} names {len(wrong)} ports unlike the catalogue ({shown}{', ...' if len(wrong) > 3 else ''})",
                path,
                "make first_name/name_step give the catalogue's port names (the configs and the cabling list must agree)",
            )
