"""``snc routed-tests``: tier tests on the routes a fabric's subnet manager really programmed.

The rendered plan's tier tests follow snc's model of OpenSM's ftree (facts/ib_routes.py), which
leaves some switch-link directions unloaded (``untestable.tsv``: ftree sends a spine's traffic for
a leaf down only some of a parallel bundle's cables) and models no other engine. This command
reads the forwarding tables the subnet manager of an acceptance window programmed (``dump_fts``
on a host of the fabric, or OpenSM's ``opensm-lfts.dump``), under any engine and LMC: the window's
``opensm-window.conf`` (dfsssp, with ``lmc 1`` where the LIDs allow) loads every direction on the
shipped fat trees. Every LID of a planned HCA port is a target (with LMC, each of its 2^lmc paths),
and the pairs are chosen on the walked routes: every switch-link direction some route loads is on a
test's path, no two tests of a wave share a direction, and each test aims at its target LID
(``ib_write_bw --dlid``).

The walk follows the plan's cabling, so it is only as true as the cabling: a route that leaves a
leaf by another port than the plan cables its HCA to, a LID a switch has no entry for, or a route
that loops, is an error (take ``snc verify`` first). Pure: paths in, files out (the CLI writes
them through writer.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..facts.acceptance_plan import Plan, RoutedTargets, Target, routed_plan
from ..facts.ib_fabric import IbFabric, IbNode
from ..model.blueprint import Blueprint
from ..outputs.acceptance import routed_files
from ..outputs.base import RenderContext
from . import IbMatcher, ib_fabrics_of
from .dump_fts import ForwardingTables, SwitchTable, looks_like_dump_fts, parse_dump_fts
from .errors import DiscoveryError

__all__ = ["Routed", "routed_tests"]

MAX_DUMP_BYTES = 1 << 31  # 2 GiB: a 131k plane's dump is about 10^8 rows


@dataclass
class FabricRoutes:
    """What one dump gave: the fabric, its targets and the plan made on them."""

    fabric: str
    source: str
    switches: int
    targets: int
    paths_per_port: int
    plan: Plan
    strangers: list[str] = field(default_factory=list)  # LIDs of ports the plan does not have
    absent: list[str] = field(default_factory=list)  # planned HCA ports with no LID in the dump (down, unmanaged)

    def as_dict(self) -> dict[str, Any]:
        """The figures the CLI reports (text and JSON)."""
        name, p = self.fabric, self.plan
        tests = p.perftests[name]
        return {
            "fabric": name,
            "dump": self.source,
            "switches": self.switches,
            "targets": self.targets,
            "lids_per_port": self.paths_per_port,
            "tests": len(tests),
            "waves": len({(t.stage, t.rail, t.wave) for t in tests}),
            "directions": 2 * p.cables.get(name, (0, 0))[1],
            "untested_directions": len(p.one_way[name]) + 2 * len(p.untestable[name]),
            "ports_not_in_plan": self.strangers,
            "planned_ports_without_lid": self.absent,
        }


class _Matched(NamedTuple):
    """A dump matched to the plan: its fabric, a target per LID of each planned HCA port (base LID
    first), the LIDs of ports the plan does not have, the most LIDs a port has, and the planned
    HCA ports the dump gives no LID."""

    ib: IbFabric
    targets: list[Target]
    strangers: list[str]
    lids_per_port: int
    absent: list[str]


@dataclass
class Routed:
    fabrics: list[FabricRoutes] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)


def _read(spec: str) -> ForwardingTables:
    path = Path(spec)
    try:
        if path.stat().st_size > MAX_DUMP_BYTES:
            raise DiscoveryError(spec, 0, f"larger than {MAX_DUMP_BYTES:,} bytes: not one fabric's forwarding tables")
        text = path.read_text(encoding="utf-8", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise DiscoveryError(spec, 0, f"cannot read: {exc}") from None
    if not looks_like_dump_fts(text):
        raise DiscoveryError(spec, 1, "not dump_fts output (snc routed-tests reads what `dump_fts` prints)")
    return parse_dump_fts(text, spec)


def _targets(fabric: Fabric, tables: ForwardingTables, fabrics: list[IbFabric]) -> _Matched:
    """The dump matched to the plan (:class:`_Matched`), its routes walked."""
    match = IbMatcher(fabric, fabrics)
    spec = tables.path
    switch_of: dict[int, IbNode] = {}
    seen: set[tuple[int, int]] = set()  # the planned switches the dump's tables are
    ib: IbFabric | None = None
    for guid, sw in sorted(tables.switches.items(), key=lambda kv: kv[1].line):
        hit = match(guid, sw.description, True)
        if hit is None or not hit[1].is_switch:
            raise DiscoveryError(spec, sw.line, f"switch 0x{guid:016x} ('{sw.description}') is not a switch of the plan")
        if ib is None:
            ib = hit[0]
        elif hit[0] is not ib:
            raise DiscoveryError(spec, sw.line, f"'{sw.description}' is in fabric {hit[0].name}, the dump began in {ib.name}")
        if hit[1].key in seen:
            raise DiscoveryError(spec, sw.line, f"two switches of the dump are {hit[1].description!r} of the plan")
        seen.add(hit[1].key)
        switch_of[guid] = hit[1]
    assert ib is not None  # the parser refuses a dump without a table
    missing = [n.description for n in ib.switches if n.key not in seen]
    if missing:
        raise DiscoveryError(
            spec,
            0,
            f"{len(missing)} of the {len(ib.switches)} switches of fabric {ib.name} have no table "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): "
            + ("another fabric's dump?" if 2 * len(missing) > len(ib.switches) else "dump the whole fabric"),
        )
    by_key = {switch_of[guid].key: sw for guid, sw in tables.switches.items()}
    lids_of: dict[tuple[int, int], list[int]] = {}
    strangers: list[str] = []
    for lid in sorted(tables.lids):
        dest = tables.lids[lid]
        if dest.kind != "ca":
            continue
        hit = match(dest.port_guid, dest.description, False)
        if hit is None or hit[0] is not ib or hit[1].is_switch:
            strangers.append(f"{dest.description or hex(dest.port_guid)} (LID 0x{lid:x})")
            continue
        lids_of.setdefault(hit[1].key, []).append(lid)
    targets: list[Target] = []
    for ca in ib.cas:
        for lid in lids_of.get(ca.key, []):
            table = _Column(by_key, lid)
            leaf, leaf_port, _link = ca.links[1]
            out = table.get(leaf)
            if out != leaf_port:
                where = tables.lids[lid].line
                got = "no entry" if out is None else f"port {out}"
                raise DiscoveryError(
                    spec,
                    where,
                    f"the leaf {ib.nodes[leaf].description} has {got} for LID 0x{lid:x} ({ca.description}), which the plan "
                    f"cables to its port {leaf_port}: the fabric is not cabled as planned (run snc verify first)",
                )
            _walk(ib, table, ca, lid, spec, where=tables.lids[lid].line)
            targets.append((ca.key, table, lid))
    width = max((len(v) for v in lids_of.values()), default=0)
    absent = [ca.description for ca in ib.cas if ca.key not in lids_of]
    return _Matched(ib, targets, strangers, width, absent)


class _Column(Mapping[tuple[int, int], int]):
    """One LID's column of the tables: switch key -> out port, read in place (nothing copied)."""

    __slots__ = ("_tables", "_lid")

    def __init__(self, tables: dict[tuple[int, int], SwitchTable], lid: int) -> None:
        self._tables, self._lid = tables, lid

    def __getitem__(self, key: tuple[int, int]) -> int:
        port = self._tables[key].port(self._lid)
        if port is None:
            raise KeyError(key)
        return port

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return (k for k, t in self._tables.items() if t.port(self._lid) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _walk(ib: IbFabric, table: Mapping[tuple[int, int], int], ca: IbNode, lid: int, spec: str, where: int) -> None:
    """Every switch's route towards the target reaches it over the planned cabling, loop-free.
    Done once per (switch, target) with the walks sharing their tails: switches x targets steps."""
    leaf = ca.links[1][0]
    done = {leaf}
    for start in table:
        path: list[tuple[int, int]] = []
        key = start
        while key not in done:
            if key in path:
                raise DiscoveryError(
                    spec, where, f"the route to LID 0x{lid:x} ({ca.description}) loops through {ib.nodes[key].description}"
                )
            path.append(key)
            port = table.get(key)
            link = ib.nodes[key].links.get(port) if port is not None else None
            if link is None or not ib.nodes[link[0]].is_switch:
                got = (
                    "has no entry" if port is None else f"sends it out of port {port}, which the plan does not cable to a switch"
                )
                raise DiscoveryError(spec, where, f"{ib.nodes[key].description} {got} for LID 0x{lid:x} ({ca.description})")
            key = link[0]
        done.update(path)


def routed_tests(blueprint: Blueprint, catalogue: Catalogue, fabric: Fabric, specs: list[str]) -> Routed:
    """Tier tests on the routes of each dump in ``specs`` (one dump per InfiniBand fabric).
    Raises DiscoveryError for input that cannot be read or does not fit the plan."""
    fabrics = ib_fabrics_of(fabric)
    if not fabrics:
        raise DiscoveryError(specs[0], 0, f"blueprint {blueprint.metadata.name} has no InfiniBand fabric")
    out = Routed()
    owner: dict[str, str] = {}
    ctx = RenderContext(blueprint, catalogue, fabric)
    for spec in specs:
        tables = _read(spec)
        m = _targets(fabric, tables, fabrics)
        ib = m.ib
        if ib.name in owner:
            raise DiscoveryError(spec, 0, f"fabric {ib.name} is in {owner[ib.name]} too: give one dump per fabric")
        owner[ib.name] = spec
        p = routed_plan(fabric, blueprint, ib.name, RoutedTargets(ib, m.targets))
        out.fabrics.append(
            FabricRoutes(ib.name, spec, len(tables.switches), len(m.targets), m.lids_per_port, p, m.strangers, m.absent)
        )
        out.files.update(routed_files(ctx, p, ib.name, spec))
    return out
