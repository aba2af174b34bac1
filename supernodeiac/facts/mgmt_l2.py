"""Layer 2 of the Fabric: which cabled switch ports bridge in which VLAN, and the loops that makes.

One rule, read by the SONiC renderer (``VLAN_MEMBER``) and by the ``management-loop`` check, so
what the configs bridge is what the check looks at. Only management switches bridge (every data
fabric is routed: /31s or InfiniBand); on them:

* an access port (role ``data``) of a rack or out-of-band switch is an untagged member of the
  management VLAN;
* flat design: every other cabled front-panel port of a rack, aggregation or out-of-band switch
  is a tagged member (the VLAN spans the site);
* routed design: the rack switches' uplinks and the aggregation switches are routed, so each
  rack's VLAN ends at its switch;
* MCLAG design: bridged as flat, but the aggregation pair is one MCLAG domain and the links
  between switches are PortChannels (:func:`mgmt_lags`): each rack switch's uplinks are one
  PortChannel (half its members on each peer), the cables between the pair the peer link.

A loop is a cycle of bridged links within one VLAN (parallel links between two switches count:
without a LAG they loop too). A PortChannel is one logical link, and an MCLAG pair one bridge (its
peer link inside it), as LACP and the MCLAG peers make them. End devices (BMCs, hosts, PDUs) do
not bridge between their ports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fabric import Fabric

MGMT_SWITCHES = ("mgmt", "mgmt-agg", "mgmt-oob")


def bridge_mode(role: str, port_role: str, design: str) -> str | None:
    """'untagged', 'tagged', or None (routed, or not on a bridge) for a cabled front-panel port
    of role ``port_role`` on a device of ``role`` in a management network of ``design``."""
    if role not in MGMT_SWITCHES or port_role == "mgmt":
        return None  # a switch's own eth0 never bridges
    if role in ("mgmt", "mgmt-oob") and port_role == "data":
        return "untagged"
    return "tagged" if design in ("flat", "mclag") else None


def routing_aggregation(design: str, aggs: list[int]) -> list[int]:
    """The aggregation switches (of ``aggs``, in Fabric order) that route the management network,
    i.e. carry its prefixes at layer 3 and may uplink to the site: every one in the routed design,
    the MCLAG pair (both carry the gateway), the first in the flat design (the one VLAN's gateway)."""
    return aggs[:1] if design == "flat" else list(aggs)


def gateway_owners(fabric: Fabric, design: str) -> list[int]:
    """The switches that carry the management network's one gateway address on its VLAN (flat:
    the first aggregation switch; MCLAG: both peers). None in the routed design, where every rack
    (and out-of-band) switch is its own segment's gateway, nor without aggregation switches."""
    if design == "routed":
        return []
    return routing_aggregation(design, [d.index for d in fabric.devices if d.role == "mgmt-agg"])


@dataclass(frozen=True, slots=True)
class MgmtLags:
    """The MCLAG design's PortChannels. A PortChannel is numbered by its lowest member's position
    among the aggregation switch's data ports, plus one (the same number on both peers, since
    the uplinks of a rack position land on the same port of each, and the same number at the rack
    switch's end): ``PortChannel<n>``. The peer link, on the top data ports, is numbered the same way."""

    of_port: dict[tuple[int, int], int]  # (device, port) -> PortChannel number
    pair: tuple[int, int] | None  # the MCLAG peers (device indices), in Fabric order
    peer_link: int | None  # the peer link's PortChannel number
    rack_lags: dict[int, int]  # rack switch -> its uplink PortChannel number


NO_LAGS = MgmtLags({}, None, None, {})


def mgmt_lags(fabric: Fabric, design: str) -> MgmtLags:
    """The PortChannels of a management network (none outside the MCLAG design)."""
    if design != "mclag":
        return NO_LAGS
    devices = fabric.devices
    aggs = [d.index for d in devices if d.role == "mgmt-agg"]
    if len(aggs) != 2:
        return NO_LAGS
    rank: dict[int, dict[int, int]] = {}
    for agg in aggs:
        data = fabric.layouts[devices[agg].model].ports_of("data")
        rank[agg] = {p: n for n, p in enumerate(data)}
    t = fabric.links
    uplinks: dict[int, list[tuple[int, int, int]]] = {}  # rack switch -> (its port, agg, agg port)
    peer: list[tuple[int, int, int, int]] = []
    for a, a_port, b, b_port in zip(t.a, t.a_port, t.b, t.b_port, strict=True):
        ra, rb = devices[a].role, devices[b].role
        if ra == "mgmt-agg" and rb == "mgmt-agg":
            if a_port in rank[a] and b_port in rank[b]:
                peer.append((a, a_port, b, b_port))
            continue
        for x, xp, y, yp in ((a, a_port, b, b_port), (b, b_port, a, a_port)):
            if devices[x].role == "mgmt" and devices[y].role == "mgmt-agg" and yp in rank[y]:
                uplinks.setdefault(x, []).append((xp, y, yp))
    of_port: dict[tuple[int, int], int] = {}
    rack_lags: dict[int, int] = {}
    for sw, ends in uplinks.items():
        n = min(rank[agg][port] for _, agg, port in ends) + 1
        rack_lags[sw] = n
        for own, agg, port in ends:
            of_port[(sw, own)] = n
            of_port[(agg, port)] = n
    peer_link = None
    if peer:
        peer_link = min(rank[a][ap] for a, ap, _, _ in peer) + 1
        for a, ap, b, bp in peer:
            of_port[(a, ap)] = of_port[(b, bp)] = peer_link
    return MgmtLags(of_port, (aggs[0], aggs[1]), peer_link, rack_lags)


@dataclass(frozen=True, slots=True)
class Loop:
    vlan: int
    devices: list[int]  # the cycle's switches in order (the first is not repeated)
    links: list[int]  # the links along it, in the same order (link i joins devices[i] and devices[i + 1])


def l2_loops(fabric: Fabric, design: str, vlan: int, limit: int = 8) -> tuple[list[Loop], int]:
    """Up to ``limit`` independent cycles of bridged links, and how many there are (the links that
    close one): one union-find pass over the links, then a path search in the spanning forest for
    each of the first ``limit`` closing links. In the MCLAG design the pair is one node (its first
    switch) and the members of a PortChannel one link (its first member)."""
    devices = fabric.devices
    lags = mgmt_lags(fabric, design)
    node = {lags.pair[1]: lags.pair[0]} if lags.pair is not None else {}
    seen_lags: set[tuple[int, int, int, int]] = set()
    roles = [fabric.layouts[d.model].port_roles for d in devices]
    is_switch = [d.role in MGMT_SWITCHES for d in devices]
    t = fabric.links
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    forest: dict[int, list[tuple[int, int]]] = {}  # device -> (neighbour, link) in the spanning forest
    loops: list[Loop] = []
    closing = 0
    for i, (a, a_port, b, b_port) in enumerate(zip(t.a, t.a_port, t.b, t.b_port, strict=True)):
        if not (is_switch[a] and is_switch[b]):
            continue
        ra, rb = roles[a], roles[b]
        if not (0 <= a_port < len(ra) and 0 <= b_port < len(rb)):
            continue  # an out-of-range port is the port-budget check's finding
        if bridge_mode(devices[a].role, ra[a_port], design) is None or bridge_mode(devices[b].role, rb[b_port], design) is None:
            continue
        if lags.pair is not None:
            la, lb = lags.of_port.get((a, a_port)), lags.of_port.get((b, b_port))
            a, b = node.get(a, a), node.get(b, b)
            if a == b and la is not None and la == lb == lags.peer_link:
                continue  # the peer link: inside the MCLAG pair
            if la is not None and lb is not None:
                key = (a, la, b, lb) if a <= b else (b, lb, a, la)
                if key in seen_lags:
                    continue  # another member of a PortChannel already counted
                seen_lags.add(key)
        x, y = find(a), find(b)
        if x != y:
            parent[x] = y
            forest.setdefault(a, []).append((b, i))
            forest.setdefault(b, []).append((a, i))
            continue
        closing += 1
        if len(loops) < limit:
            path, via = _path(forest, b, a)
            loops.append(Loop(vlan, path, via + [i]))
    return loops, closing


def _path(forest: dict[int, list[tuple[int, int]]], start: int, goal: int) -> tuple[list[int], list[int]]:
    """The devices from ``start`` to ``goal`` in the spanning forest, and the links between them."""
    came: dict[int, tuple[int, int]] = {start: (-1, -1)}
    frontier = [start]
    while frontier and goal not in came:
        nxt = []
        for node in frontier:
            for peer, link in forest.get(node, ()):
                if peer not in came:
                    came[peer] = (node, link)
                    nxt.append(peer)
        frontier = nxt
    devices, links = [goal], []
    while devices[-1] != start:
        prev, link = came[devices[-1]]
        links.append(link)
        devices.append(prev)
    devices.reverse()
    links.reverse()
    return devices, links
