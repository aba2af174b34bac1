"""Layer 2 of the Fabric: which cabled switch ports bridge in which VLAN, and the loops that makes.

One rule, read by the SONiC renderer (``VLAN_MEMBER``) and by the ``management-loop`` check, so
what the configs bridge is what the check looks at. Only management switches bridge (every data
fabric is routed: /31s or InfiniBand); on them:

* an access port (role ``data``) of a rack or out-of-band switch is an untagged member of the
  management VLAN;
* flat design: every other cabled front-panel port of a rack, aggregation or out-of-band switch
  is a tagged member (the VLAN spans the site);
* routed design: the rack switches' uplinks and the aggregation switches are routed, so each
  rack's VLAN ends at its switch.

A loop is a cycle of bridged links within one VLAN (parallel links between two switches count:
without a LAG they loop too). End devices (BMCs, hosts, PDUs) do not bridge between their ports.
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
    return "tagged" if design == "flat" else None


@dataclass(frozen=True, slots=True)
class Loop:
    vlan: int
    devices: list[int]  # the cycle's switches in order (the first is not repeated)
    links: list[int]  # the links along it, in the same order (link i joins devices[i] and devices[i + 1])


def l2_loops(fabric: Fabric, design: str, vlan: int, limit: int = 8) -> tuple[list[Loop], int]:
    """Up to ``limit`` independent cycles of bridged links, and how many there are (the links that
    close one): one union-find pass over the links, then a path search in the spanning forest for
    each of the first ``limit`` closing links."""
    devices = fabric.devices
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
