"""A switch model's ports as SONiC knows them (name, lanes, alias, index, speed), from its port map.

The catalogue's port map (catalog/data/port_maps.yaml) describes each port group by a few
numbers (first name, name step, first lane, lane step, ...); this module expands it once per
model into one row per port index of the model's :class:`PortLayout`, so renderers index a list.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog.types import DeviceModel, PortMap, SonicPortGroup


class PortMapError(ValueError):
    """A port map that does not fit its catalogue model (a role it lacks, names that differ)."""


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str
    lanes: str  # "0,1,2,3"
    alias: str
    index: str  # the front-panel cage, 1-based
    speed_mbps: int
    fec: str | None
    group: SonicPortGroup
    cage_master: str  # the cage's first port: the BREAKOUT_CFG key
    first_in_cage: bool


class SonicPorts:
    """Every port of one model, by port index (None for ports SONiC does not run, e.g. mgmt0)."""

    __slots__ = ("model", "port_map", "ports")

    def __init__(self, model: DeviceModel, port_map: PortMap) -> None:
        self.model = model
        self.port_map = port_map
        by_role = {g.role: g for g in port_map.groups}
        self.ports: list[SonicPort | None] = []
        for cat in model.ports:
            group = by_role.get(cat.role)
            if group is None:
                self.ports.extend([None] * cat.count)
                continue
            per_cage = cat.ports_per_cage
            master = ""
            for i in range(cat.count):
                cage, sub = divmod(i, per_cage)
                lane0 = group.first_lane + i * group.lane_step
                name = f"{group.prefix}{group.first_name + i * group.name_step}"
                if sub == 0:
                    master = name
                self.ports.append(
                    SonicPort(
                        name=name,
                        lanes=",".join(str(lane) for lane in range(lane0, lane0 + group.lanes)),
                        alias=group.alias.format(cage=group.first_cage + cage, sub=chr(ord("a") + sub) if per_cage > 1 else ""),
                        index=str(group.first_cage + cage),
                        speed_mbps=group.speed_mbps,
                        fec=group.fec,
                        group=group,
                        cage_master=master,
                        first_in_cage=sub == 0,
                    )
                )
        missing = sorted(set(by_role) - {g.role for g in model.ports})
        if missing:
            raise PortMapError(f"port map names roles the model lacks: {', '.join(missing)}")

    def by_alias(self) -> dict[str, str]:
        """Alias -> port name (LLDP from a SONiC peer reports the alias as its port ID)."""
        return {p.alias: p.name for p in self.ports if p is not None}


_CACHE: dict[tuple[int, int], SonicPorts] = {}


def sonic_ports(model: DeviceModel, port_map: PortMap) -> SonicPorts:
    """The expanded map of a model, made once per (model, map) pair of objects."""
    key = (id(model), id(port_map))
    found = _CACHE.get(key)
    if found is None or found.model is not model or found.port_map is not port_map:
        found = _CACHE[key] = SonicPorts(model, port_map)
    return found
