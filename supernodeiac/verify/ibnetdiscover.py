"""Reading ``ibnetdiscover`` output (the topology-file format; infiniband-diags
``sec_topology-file.rst``, ``ibnetdiscover.c``): nodes with GUIDs, descriptions and port counts,
and every link seen from both ends.

Accepted: the header comments, ``vendid=``/``devid=``/``sysimgguid=``/``switchguid=``/``caguid=``/
``rtguid=`` lines, node headers ``Switch N "S-<guid>" # "<desc>" ...``, ``Ca``/``Hca`` and ``Rt``
headers, port lines ``[p](guid) "peer"[q](guid) # ...`` (with an optional ``[ext N]``), blank lines.
Anything else is a :class:`DiscoveryError` with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import DiscoveryError

_NODE = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]{1,16})"\s*(?:#\s*(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext\s+\d+\])?(?:\(([0-9a-fA-F]+)\))?\s*"([SHR])-([0-9a-fA-F]{1,16})"\[(\d+)\](?:\[ext\s+\d+\])?'
    r"(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$"
)
_ASSIGN = re.compile(
    r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid|hcaguid)\s*=\s*(0x)?[0-9a-fA-F]+(\([0-9a-fA-Fx]*\))?\s*$"
)
_QUOTED = re.compile(r'"([^"]*)"')
_RATE = re.compile(r"\b(\d+)x([A-Z0-9]+)\b")


@dataclass
class DiscoveredNode:
    guid: int
    kind: str  # switch | ca | router
    nports: int
    description: str
    line: int
    ports: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # port -> (peer guid, peer port, line)
    port_guids: dict[int, int] = field(default_factory=dict)


@dataclass
class Topology:
    path: str
    nodes: dict[int, DiscoveredNode]

    def links(self) -> list[tuple[int, int, int, int, int]]:
        """Every link once: (guid a, port a, guid b, port b, line), a <= b."""
        out = []
        for node in self.nodes.values():
            for port, (peer, peer_port, line) in node.ports.items():
                if (node.guid, port) <= (peer, peer_port):
                    out.append((node.guid, port, peer, peer_port, line))
                elif peer not in self.nodes or self.nodes[peer].ports.get(peer_port, (None, None, 0))[:2] != (node.guid, port):
                    out.append((peer, peer_port, node.guid, port, line))  # only this end listed it
        return sorted(set(out))


def parse_ibnetdiscover(text: str, path: str = "<ibnetdiscover>") -> Topology:
    nodes: dict[int, DiscoveredNode] = {}
    current: DiscoveredNode | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _ASSIGN.match(line):
            current = None
            continue
        m = _NODE.match(line)
        if m:
            kind = {"Switch": "switch", "Ca": "ca", "Hca": "ca", "Rt": "router"}[m.group(1)]
            guid = int(m.group(4), 16)
            quoted = _QUOTED.findall(m.group(5) or "")
            if guid in nodes:
                raise DiscoveryError(path, number, f"node {m.group(3)}-{m.group(4)} appears twice")
            current = nodes[guid] = DiscoveredNode(guid, kind, int(m.group(2)), quoted[0] if quoted else "", number)
            continue
        m = _PORT.match(line)
        if m:
            if current is None:
                raise DiscoveryError(path, number, "a port line outside a node record")
            port, peer, peer_port = int(m.group(1)), int(m.group(4), 16), int(m.group(5))
            if not 1 <= port <= max(current.nports, 1) and current.kind != "switch":
                raise DiscoveryError(path, number, f"port {port} of a {current.nports}-port node")
            if port in current.ports:
                raise DiscoveryError(path, number, f"port {port} listed twice")
            current.ports[port] = (peer, peer_port, number)
            if m.group(2):
                current.port_guids[port] = int(m.group(2), 16)
            continue
        raise DiscoveryError(path, number, f"not ibnetdiscover topology syntax: {raw.strip()[:60]!r}")
    if not nodes:
        raise DiscoveryError(path, 0, "no node records (is this ibnetdiscover output?)")
    return Topology(path, nodes)


def looks_like_ibnetdiscover(text: str) -> bool:
    head = text[:4000]
    return bool(re.search(r'^(Switch|Ca|Hca)\s+\d+\s+"[SH]-', head, re.M)) or "Topology file:" in head
