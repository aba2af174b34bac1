"""``snc bind``: the subnet manager's files with the GUIDs of the fabric as it was discovered.

The rendered ``opensm/<fabric>/`` files carry the plan's GUIDs (facts/guid_plan.py), which no
real switch or HCA has: OpenSM would find none of the roots (ftree falls back to minhop) and no
partition member (every HCA left with the limited Default key only). ``bind`` reads
``ibnetdiscover`` output of the built fabric, matches every discovered node to the plan by node
description and checks the cabling with the comparison ``snc verify`` makes; only when the whole
fabric is there as planned does it write the same files (outputs/opensm.py ``guid_files``) with
the discovered GUIDs, and a ``guids.csv`` that maps each to its planned device and GUID.

Bad input is a :class:`DiscoveryError` with its file and line: not ibnetdiscover output, a dump
whose nodes the plan does not know (another fabric's), a truncated dump (a port line whose peer
has no node record), two nodes with one planned description, one fabric in two dumps. A cabling
difference (a miscabled, missing or unknown node) is a verify discrepancy. Either way nothing is
bound. Pure: paths in, files out (the CLI writes them through writer.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..facts.ib_fabric import IbFabric, IbNode
from ..model.blueprint import Blueprint
from ..outputs.base import RenderContext
from ..outputs.csv_safe import CsvWriter
from ..outputs.opensm import guid_files
from . import Result, ib_fabrics_of, ib_match, verify
from .errors import DiscoveryError
from .ibnetdiscover import Topology, looks_like_ibnetdiscover, parse_ibnetdiscover

__all__ = ["Bound", "bind"]

MAP_COLUMNS = [
    "fabric",
    "device",
    "port",
    "kind",
    "node_guid",
    "port_guid",
    "planned_node_guid",
    "planned_port_guid",
    "description",
    "discovered",
]


@dataclass
class Bound:
    """What ``bind`` found: the cabling comparison, and (only when it has no error) the files."""

    result: Result
    fabrics: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return self.result.exit_code


def _read(spec: str) -> Topology:
    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise DiscoveryError(spec, 0, f"cannot read: {exc}") from None
    if not looks_like_ibnetdiscover(text):
        raise DiscoveryError(spec, 1, "not ibnetdiscover output (snc bind reads the topology `ibnetdiscover` prints)")
    topo = parse_ibnetdiscover(text, spec)
    for node in sorted(topo.nodes.values(), key=lambda n: n.line):
        for port, (peer, _, line) in sorted(node.ports.items(), key=lambda kv: kv[1][2]):
            if peer not in topo.nodes:
                # ibnetdiscover prints a record for every node it reaches: a peer without one was cut off.
                raise DiscoveryError(
                    spec,
                    line,
                    f"port {port} of '{node.description}' leads to node 0x{peer:016x}, which has no record: "
                    "the dump is truncated (take it again with ibnetdiscover > FILE)",
                )
    return topo


class _Discovered:
    """Discovered GUIDs of one plan fabric's nodes, from its (single) topology."""

    def __init__(self, ib: IbFabric, topo: Topology, matched: dict[int, tuple[IbFabric, IbNode]]) -> None:
        self.ib, self.topo = ib, topo
        self.node: dict[tuple[int, int], int] = {}
        self.port: dict[tuple[int, int], int] = {}
        self.line: dict[tuple[int, int], int] = {}
        for guid, (owner, n) in matched.items():
            if owner is not ib:
                continue
            found = topo.nodes[guid]
            self.node[n.key] = guid
            self.line[n.key] = found.line
            if n.is_switch:
                self.port[n.key] = guid  # switch port 0 carries the node GUID (IBA 14.2.5.6)
                continue
            connected = sorted(found.ports)
            port_guid = found.port_guids.get(connected[0]) if connected else None
            if port_guid is None:
                raise DiscoveryError(topo.path, found.line, f"'{found.description}': no port GUID on its port lines")
            self.port[n.key] = port_guid
        absent = [n for n in ib.nodes.values() if n.key not in self.node]
        if absent:  # the comparison reports their cables as missing; this only guards the files
            raise DiscoveryError(topo.path, 0, f"{len(absent)} planned node(s) of fabric {ib.name} not discovered")

    def node_guid(self, n: IbNode) -> int:
        return self.node[n.key]

    def port_guid(self, n: IbNode) -> int:
        return self.port[n.key]

    def rows(self, fabric: Fabric) -> Iterator[list[str]]:
        ib, name = self.ib, Path(self.topo.path).name
        for n in ib.switches + ib.cas:
            d = fabric.devices[n.device]
            port = "" if n.is_switch else fabric.layouts[d.model].name(n.port)
            yield [
                ib.name,
                d.name,
                port,
                "switch" if n.is_switch else "hca",
                f"0x{self.node[n.key]:016x}",
                f"0x{self.port[n.key]:016x}",
                f"0x{n.guid:016x}",
                f"0x{ib.port_guid(n):016x}",
                self.topo.nodes[self.node[n.key]].description,
                f"{name}:{self.line[n.key]}",
            ]


def bind(blueprint: Blueprint, catalogue: Catalogue, fabric: Fabric, specs: list[str]) -> Bound:
    """Bind the InfiniBand fabrics the ibnetdiscover files ``specs`` cover (one file per fabric).
    Raises DiscoveryError for input that cannot be read or understood."""
    fabrics = ib_fabrics_of(fabric)
    topologies = {spec: _read(spec) for spec in specs}
    owner: dict[str, str] = {}
    matches: dict[str, dict[int, tuple[IbFabric, IbNode]]] = {}
    for spec, topo in topologies.items():
        matched = matches[spec] = ib_match(fabric, topo, fabrics)
        if 2 * len(matched) < len(topo.nodes):
            # Names like gpu-0001 recur across blueprints: a dump mostly of strangers is another fabric's.
            stranger = min((n for n in topo.nodes.values() if n.guid not in matched), key=lambda n: n.line)
            raise DiscoveryError(
                spec,
                stranger.line,
                f"only {len(matched)} of the {len(topo.nodes)} nodes in this dump are in the plan (the first "
                f"stranger is '{stranger.description}'): " + _why_strangers(fabric, fabrics, stranger.description),
            )
        for name in sorted({ib.name for ib, _ in matched.values()}):
            if name in owner:
                raise DiscoveryError(spec, 0, f"fabric {name} is in {owner[name]} too: give one ibnetdiscover dump per fabric")
            owner[name] = spec
    result = verify(blueprint, catalogue, fabric, specs, parsed=topologies)
    bound = Bound(result, sorted(owner, key=[ib.name for ib in fabrics].index))
    if result.errors:
        return bound
    ctx = RenderContext(blueprint, catalogue, fabric)
    for ib in fabrics:
        if ib.name not in owner:
            continue
        spec = owner[ib.name]
        found = _Discovered(ib, topologies[spec], matches[spec])
        base = f"opensm/{ib.name}/"
        files = guid_files(ctx, ib, found.node_guid, found.port_guid, bound=True)
        for path, data in files.items():
            bound.files[base + path] = data
        bound.files[base + "guids.csv"] = b"".join(CsvWriter(MAP_COLUMNS).stream(found.rows(fabric)))
    return bound


def _why_strangers(fabric: Fabric, fabrics: list[IbFabric], description: str) -> str:
    """What a dump of strangers most likely is. An HCA's description is "<host> <RDMA device>"
    (rdma-ndd): a planned host whose NIC names the plan does not have means the model's data port
    names are not the RDMA devices the hosts enumerate, which is the same fabric, not another."""
    host, _, device = description.partition(" ")
    names = sorted(n.description.partition(" ")[2] for ib in fabrics for n in ib.cas if fabric.devices[n.device].name == host)
    if not names or not device:
        return "another fabric's dump?"
    return (
        f"host {host} is in the plan, but with NICs {', '.join(names)}, not {device}: give the model's data ports "
        "the RDMA device names the hosts enumerate (ibdev2netdev on one node) in the catalogue, then bind again"
    )
