"""A switch model's ports as SONiC knows them (name, lanes, alias, index, speed), from its port map
and the catalogue's cages.

The catalogue's port map (catalog/data/port_maps.yaml) describes each port group by a few
numbers (first name, name step, first lane, lane step, ...); this module expands it once per
model into one row per port index of the model's :class:`PortLayout`, so renderers index a list.

Everything physical is read from the :class:`PortLayout` (issue 8's cages), the one source of
truth: a port's ``index`` is its cage's faceplate number, its alias takes that number and its
position in the cage, the BREAKOUT_CFG key is the cage's first port, lanes and speed default to
the catalogue group's. :func:`port_map_problems` says where a map disagrees with the catalogue
(the ``port-map`` check reports it), so a config, the cabling list and ``snc verify`` can never
put one port in two cages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..catalog.types import Catalogue, PortGroup, PortMap, SonicPortGroup
from ..fabric import SITE_ROLES, Fabric, PortLayout

# Where a problem is, below the port map (() for the map as a whole): ("groups", 0, "lane_step"),
# ("groups", 0, "ports", 17, "lanes").
At = tuple[str | int, ...]


class PortMapError(ValueError):
    """A port map that does not fit its catalogue model (a role it lacks, a port list of another
    length than the catalogue group), with where in the map it is."""

    def __init__(self, message: str, at: At = ()) -> None:
        super().__init__(message)
        self.at = at


def sonic_switches(fabric: Fabric, catalogue: Catalogue) -> list[int]:
    """Device indices of the switches snc renders a SONiC config_db for (an Ethernet switch whose
    model has a port map), in Fabric order: the one rule the SONiC, DHCP/ZTP outputs and the
    ztp-url check share."""
    models, maps = fabric.models, catalogue.port_maps
    return [
        d.index
        for d in fabric.devices
        if models[d.model].kind == "switch"
        and models[d.model].transport == "ethernet"
        and d.model in maps
        and d.role not in SITE_ROLES  # the site's routers: not ours to configure
    ]


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str
    lanes: str  # "0,1,2,3"
    alias: str
    index: str  # the front-panel cage, 1-based (the catalogue cage's faceplate number)
    speed_mbps: int
    fec: str | None
    group: SonicPortGroup
    cage_master: str  # the cage's first port: the BREAKOUT_CFG key
    first_in_cage: bool


def map_groups(layout: PortLayout, port_map: PortMap) -> list[tuple[SonicPortGroup, PortGroup]]:
    """(map group, the catalogue group it describes): the k-th map group of a role describes the
    k-th catalogue group of that role (a switch whose cages run two speeds, 2 x 400G down and
    1 x 800G up, has two data groups and two map groups). Raises PortMapError for a map group
    with no catalogue group of its role and place."""
    of_role: dict[str, list[PortGroup]] = {}
    for g in layout.groups:
        of_role.setdefault(g.role, []).append(g)
    seen: dict[str, int] = {}
    out: list[tuple[SonicPortGroup, PortGroup]] = []
    missing: list[str] = []
    for group in port_map.groups:
        k = seen.get(group.role, 0)
        seen[group.role] = k + 1
        cats = of_role.get(group.role, [])
        if k >= len(cats):
            missing.append(group.role if not cats else f"{group.role} (group {k + 1}; the model has {len(cats)})")
            continue
        out.append((group, cats[k]))
    if missing:
        raise PortMapError(f"port map names roles the model lacks: {', '.join(missing)}")
    return out


def _speed_mbps(group: PortGroup) -> int:
    return round(group.speed_gbps * 1000)


class SonicPorts:
    """Every port of one model, by port index (None for ports SONiC does not run, e.g. mgmt0)."""

    __slots__ = ("layout", "model", "port_map", "ports")

    def __init__(self, layout: PortLayout, port_map: PortMap) -> None:
        self.layout = layout
        self.model = layout.model
        self.port_map = port_map
        pairs = map_groups(layout, port_map)
        for g, (listing, of) in enumerate(pairs):
            if listing.ports is not None and len(listing.ports) != of.count:
                raise PortMapError(
                    f"{listing.role} ports: {len(listing.ports)} listed, the catalogue group has {of.count}",
                    ("groups", g, "ports"),
                )
        of_group = {id(cat): group for group, cat in pairs}
        names: list[str | None] = []
        for p in range(layout.total):
            group = of_group.get(id(layout.port_groups[p]))
            if group is None:
                names.append(None)
                continue
            names.append(f"{group.prefix}{group.first_name + layout.port_offsets[p] * group.name_step}")
        self.ports: list[SonicPort | None] = []
        for p in range(layout.total):
            name = names[p]
            if name is None:
                self.ports.append(None)
                continue
            cat = layout.port_groups[p]
            group = of_group[id(cat)]
            i, position = layout.port_offsets[p], layout.port_positions[p]
            cage = layout.cages[layout.port_cages[p]]
            lanes = group.lanes or cat.lanes
            listed = group.ports[i] if group.ports is not None else None
            if listed is not None:
                lane_list = ",".join(map(str, listed.lanes))
            else:
                assert group.lane_step is not None  # the model's rule: lane_step or ports
                lane0 = group.first_lane + i * group.lane_step
                lane_list = ",".join(str(lane) for lane in range(lane0, lane0 + lanes))
            sub = chr(ord("a") + position) if cat.ports_per_cage > 1 else ""
            alias = group.alias.format(cage=cage.number, sub=sub, lane=position * cat.lanes + 1)
            self.ports.append(
                SonicPort(
                    name=name,
                    lanes=lane_list,
                    alias=listed.alias if listed is not None and listed.alias is not None else alias,
                    index=str(cage.number),
                    speed_mbps=group.speed_mbps or _speed_mbps(cat),
                    fec=group.fec,
                    group=group,
                    cage_master=names[cage.ports[0]] or name,
                    first_in_cage=position == 0,
                )
            )

    def by_alias(self) -> dict[str, str]:
        """Alias -> port name (LLDP from a SONiC peer reports the alias as its port ID)."""
        return {p.alias: p.name for p in self.ports if p is not None}


_CACHE: dict[tuple[int, int], SonicPorts] = {}


def sonic_ports(layout: PortLayout, port_map: PortMap) -> SonicPorts:
    """The expanded map of a model, made once per (layout, map) pair of objects."""
    key = (id(layout), id(port_map))
    found = _CACHE.get(key)
    if found is None or found.layout is not layout or found.port_map is not port_map:
        found = _CACHE[key] = SonicPorts(layout, port_map)
    return found


_MODE = re.compile(r"([0-9]+)x([0-9]+)G")


def port_map_problems(layout: PortLayout, port_map: PortMap) -> list[tuple[At, str, str]]:
    """(where, problem, hint) for every way the map disagrees with the catalogue model it describes:
    roles the model lacks, port names, lanes, speeds and breakout modes unlike the catalogue's, and
    in a group that lists its ports, entries whose lane count, name or index is not the catalogue
    port's (each kind once per group, at its first entry, with how many there are)."""
    try:
        ports = SonicPorts(layout, port_map)
    except PortMapError as exc:
        hint = "one entry per port of the catalogue group, in port order" if exc.at else "one group per catalogue port group role"
        return [(exc.at, str(exc), hint)]
    out: list[tuple[At, str, str]] = []
    names = layout.names
    wrong = [(names[i], sp.name) for i, sp in enumerate(ports.ports) if sp is not None and sp.name != names[i]]
    if wrong:
        shown = ", ".join(f"{a} is {b}" for a, b in wrong[:3])
        out.append(
            (
                (),
                f"names {len(wrong)} ports unlike the catalogue ({shown}{', ...' if len(wrong) > 3 else ''})",
                "make first_name/name_step give the catalogue's port names (the configs and the cabling list must agree)",
            )
        )
    for g, (group, cat) in enumerate(map_groups(layout, port_map)):
        if group.lanes is not None and group.lanes != cat.lanes:
            out.append(
                (
                    (),
                    f"{group.role} ports have {group.lanes} lanes here and {cat.lanes} in the catalogue",
                    "leave 'lanes' out (the catalogue's is used) or make the catalogue group agree",
                )
            )
        speed = _speed_mbps(cat)
        if group.speed_mbps is not None and group.speed_mbps != speed:
            out.append(
                (
                    (),
                    f"{group.role} ports run at {group.speed_mbps} Mb/s here and {speed} Mb/s in the catalogue",
                    "leave 'speed_mbps' out (the catalogue's is used) or make the catalogue group agree",
                )
            )
        if group.breakout_mode is not None:
            m = _MODE.match(group.breakout_mode)
            assert m is not None  # the model's pattern
            count, gbps = int(m[1]), int(m[2])
            head = f"{cat.ports_per_cage}x{cat.speed_gbps:g}G"
            if count != cat.ports_per_cage or abs(gbps - cat.speed_gbps) > 1e-9:
                out.append(
                    (
                        (),
                        f"breakout mode {group.breakout_mode} splits a cage into {count} x {gbps}G, but the catalogue's "
                        f"{cat.cage} cages hold {cat.ports_per_cage} x {cat.speed_gbps:g}G ports",
                        f"a mode starting {head}, or a catalogue model whose cages are split so (ports_per_cage, speed_gbps)",
                    )
                )
            elif cat.breakout and head not in cat.breakout:
                out.append(
                    (
                        (),
                        f"breakout mode {group.breakout_mode} is not one the catalogue lists for {cat.cage} cages "
                        f"({', '.join(cat.breakout)})",
                        "add it to the catalogue port group's 'breakout' list, or use a listed mode",
                    )
                )
        if group.ports is not None:
            out.extend(_listed_problems(g, group, cat, ports))
    return out


def _listed_problems(g: int, group: SonicPortGroup, cat: PortGroup, ports: SonicPorts) -> list[tuple[At, str, str]]:
    """The entries of a group's port list whose lane count, name or index is not the catalogue's:
    one problem per kind, at the first such entry."""
    rows = [sp for sp in ports.ports if sp is not None and sp.group is group]
    assert group.ports is not None and len(rows) == len(group.ports)  # SonicPorts holds the count
    lanes = group.lanes or cat.lanes
    # kind -> (entries, first entry, its words)
    found: dict[str, tuple[int, int, str]] = {}

    def note(kind: str, k: int, words: str) -> None:
        count, first, first_words = found.get(kind, (0, k, words))
        found[kind] = (count + 1, first, first_words)

    for k, (entry, sp) in enumerate(zip(group.ports, rows, strict=True)):
        if len(entry.lanes) != lanes:
            note("lanes", k, f"{sp.name} has {len(entry.lanes)} lanes ({sp.lanes}), the catalogue's ports {lanes}")
        if entry.name is not None and entry.name != sp.name:
            note("name", k, f"entry {k + 1} is named {entry.name}, the catalogue's port {k + 1} of the group is {sp.name}")
        if entry.index is not None and str(entry.index) != sp.index:
            note("index", k, f"{sp.name} has index {entry.index}, its catalogue cage is {sp.index}")
    hints = {
        "lanes": "list each port's lanes, as many as the catalogue group's 'lanes'",
        "name": "list the ports in the catalogue's port order (or leave 'name' out)",
        "index": "an index is the port's faceplate cage: the catalogue's first_cage/ports_per_cage give it (or leave it out)",
    }
    out: list[tuple[At, str, str]] = []
    for kind, (count, k, words) in found.items():
        more = f" ({count} entries so)" if count > 1 else ""
        out.append((("groups", g, "ports", k, kind), f"{group.role} ports: {words}{more}", hints[kind]))
    return out


def port_map_clashes(layout: PortLayout, port_map: PortMap) -> list[tuple[At, str, str]]:
    """(where, problem, hint) for SerDes lanes two ports share and aliases several ports carry:
    SONiC's port_config.ini would give one lane to two ports (the ASIC cannot be configured) and
    LLDP from a peer, which reports the alias, could not tell the ports apart. Each is reported once
    per group, at the group whose port repeats an earlier one: at its ``lane_step`` or ``alias``,
    or, in a group that lists its ports, at the first repeating entry's ``lanes`` or ``alias``."""
    try:
        ports = SonicPorts(layout, port_map)
    except PortMapError:
        return []  # port_map_problems reports it
    index = {id(g): i for i, g in enumerate(port_map.groups)}
    lane_owner: dict[int, str] = {}
    alias_owner: dict[str, str] = {}
    # group -> (how many repeats, the first repeated lane or alias, its earlier port, this port, where)
    lanes_shared: dict[int, tuple[int, str, str, str, At]] = {}
    aliases_shared: dict[int, tuple[int, str, str, str, At]] = {}
    for p, sp in enumerate(ports.ports):
        if sp is None:
            continue
        g = index[id(sp.group)]
        listed = sp.group.ports[layout.port_offsets[p]] if sp.group.ports is not None else None
        k = layout.port_offsets[p]
        for lane in sp.lanes.split(","):
            owner = lane_owner.setdefault(int(lane), sp.name)
            if owner != sp.name:
                at: At = ("groups", g, "ports", k, "lanes") if listed is not None else ("groups", g, "lane_step")
                count, what, a, b, first = lanes_shared.get(g, (0, lane, owner, sp.name, at))
                lanes_shared[g] = (count + 1, what, a, b, first)
        owner = alias_owner.setdefault(sp.alias, sp.name)
        if owner != sp.name:
            own = listed is not None and listed.alias is not None
            at = ("groups", g, "ports", k, "alias") if own else ("groups", g, "alias")
            count, what, a, b, first = aliases_shared.get(g, (0, sp.alias, owner, sp.name, at))
            aliases_shared[g] = (count + 1, what, a, b, first)
    out: list[tuple[At, str, str]] = []
    for g, (count, lane, a, b, at) in sorted(lanes_shared.items()):
        listed_group = port_map.groups[g].ports is not None
        out.append(
            (
                at,
                f"{port_map.groups[g].role} ports share SerDes lanes: lane {lane} is both {a}'s and {b}'s "
                f"({count} lane{'s' if count != 1 else ''} given twice)",
                "each lane of the board in one port's list only (the hwsku's port_config.ini and platform.json)"
                if listed_group
                else "a lane_step of at least the ports' lanes, and first_lane values that keep the groups' lanes apart",
            )
        )
    for g, (count, alias, a, b, at) in sorted(aliases_shared.items()):
        out.append(
            (
                at,
                f"{port_map.groups[g].role} ports share aliases: {alias!r} is both {a}'s and {b}'s "
                f"({count} port{'s' if count != 1 else ''} repeat an alias)",
                "an alias template with {cage} (and {sub} on split cages), so every port has its own",
            )
        )
    return out
