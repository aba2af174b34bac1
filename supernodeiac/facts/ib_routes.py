"""The routes OpenSM's fat-tree engine (``routing_engine ftree``) programs, computed from the Fabric.

The acceptance plan's tier tests must load the cables they name, and which upper switch carries a
pair's traffic is the subnet manager's choice. This module replays that choice: a model of
OpenSM's ftree (opensm/osm_ucast_ftree.c, OpenSM 3.3; the algorithm of Zahavi et al., "Optimized
InfiniBand fat-tree routing for shift all-to-all communication patterns", 2009) run on the
fabric as snc renders it for OpenSM (opensm/<fabric>/: root_guids.conf, cn_guids.conf, the GUID
plan, the ports of ibnetdiscover.topo). The steps follow the C code:

* ranks by BFS from the roots (the top tier: root_guids.conf); port groups per neighbour, built in
  port order; leaves are the switches with compute-node (CN) ports;
* tuples: BFS from the first leaf in OpenSM's node table (a map keyed by the GUID as stored,
  big-endian, so ordered by the byte-swapped value on x86), each new neighbour taking the lowest
  free index; port groups sorted by the remote switch's tuple;
* CN LIDs routed leaf by leaf in tuple order, each leaf's CNs in port order, then as many dummy
  targets as the fullest leaf has more CNs (they only load counters, but on their whole main path
  up to the roots, as OpenSM 3.3.x does); then non-CN ports in the
  node table's order. A target climbs from its leaf on the least loaded up group (down-route
  counter, ties to the lower byte-swapped GUID) and its least loaded port; at each switch on the
  way every switch below that has no route yet gets one up to it (least loaded port by up-route
  counter); the other up groups get secondary routes that load no counter.

Forwarding depends only on the switch and the destination, so the model keeps, per destination
port, the out port of every switch: O(switches x HCA ports) steps and entries, which is why
:func:`ftree_routes` declines fabrics above ``MAX_ENTRIES`` (the plan then keeps its unrouted
pairs and says so, :func:`route_gap`). tests/test_acceptance_routes.py checks the model against the forwarding tables
the real OpenSM writes on ibsim.

The GUIDs decide OpenSM's tie-breaks and its first leaf: routes computed on the plan's GUIDs hold
for a fabric whose subnet manager files carry them (ibsim, or a site that programs them); a site
with the hardware's GUIDs re-checks its paths with the ibtracert the script records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ..fabric import Fabric
from .ib_fabric import IbFabric, IbNode, node_counts

# Above this many (switch, destination) entries the model is not run: about 2 CPU us per entry
# (ib-3tier's 392,448 entries: 0.84 CPU s), so 10^6 is about 2 s in a render; one 32,768-port plane
# of the 131k XDR design is about 2 x 10^7 entries.
MAX_ENTRIES = 1_000_000


def _stored(guid: int) -> int:
    """A GUID as OpenSM's maps order it: the big-endian bytes read as a little-endian integer."""
    return int.from_bytes(guid.to_bytes(8, "big"), "little")


@dataclass(slots=True, eq=False)
class _Port:
    num: int
    remote_num: int
    link: int
    counter_up: int = 0
    counter_down: int = 0


@dataclass(slots=True, eq=False)
class _Group:
    owner: _Switch
    remote: _Switch | None  # None: an HCA port
    remote_key: tuple[int, int]
    remote_guid: int  # stored order
    ports: list[_Port] = field(default_factory=list)
    counter_up: int = 0
    counter_down: int = 0


@dataclass(slots=True, eq=False)
class _Switch:
    node: IbNode
    key: tuple[int, int] = (-1, -1)  # node.key, kept: every routing step reads it
    rank: int = -1
    tuple: list[int] = field(default_factory=lambda: [0xFF] * 8)
    up: list[_Group] = field(default_factory=list)
    down: list[_Group] = field(default_factory=list)
    is_leaf: bool = False
    min_counter_down: int = 0
    counter_up_changed: bool = False


_COUNTER_UP = attrgetter("counter_up")
_COUNTER_DOWN = attrgetter("counter_down")


class FtreeRoutes:
    """Per destination HCA port (IbNode key): every switch's out port, as OpenSM's ftree sets it."""

    def __init__(self, ib: IbFabric, cn: set[tuple[int, int]]) -> None:
        self.ib = ib
        nodes = ib.nodes
        sws = {n.key: _Switch(n, n.key) for n in ib.switches}
        self.switches = sws
        # Port groups in port order, one per neighbour (OpenSM's sw_add_port keys them by remote LID).
        groups: dict[tuple[int, int], dict[tuple[int, int], _Group]] = {k: {} for k in sws}
        for key, s in sws.items():
            for port in sorted(s.node.links):
                peer_key, peer_port, link = s.node.links[port]
                g = groups[key].get(peer_key)
                if g is None:
                    peer = nodes[peer_key]
                    g = groups[key][peer_key] = _Group(
                        s, sws.get(peer_key), peer_key, _stored(ib.port_guid(peer) if not peer.is_switch else peer.guid)
                    )
                g.ports.append(_Port(port, peer_port, link))
        # Ranks from the roots (root_guids.conf: the top tier), BFS in port order.
        roots = [sws[n.key] for n in ib.top_switches()]
        queue = list(roots)
        for r in roots:
            r.rank = 0
        while queue:
            nxt: list[_Switch] = []
            for s in queue:
                for port in sorted(s.node.links):
                    other = sws.get(s.node.links[port][0])
                    if other is not None and (other.rank < 0 or other.rank > s.rank + 1):
                        other.rank = s.rank + 1
                        nxt.append(other)
            queue = nxt
        for key, s in sws.items():
            for g in groups[key].values():
                if g.remote is None or g.remote.rank > s.rank:
                    s.down.append(g)
                elif g.remote.rank < s.rank:
                    s.up.append(g)
                else:
                    raise ValueError(f"{s.node.description}: a link within one rank (no fat tree for ftree)")
        self.cn = cn
        for ca in ib.cas:
            if ca.key in cn:
                sws[ca.links[1][0]].is_leaf = True
        by_stored = sorted(sws.values(), key=lambda s: _stored(s.node.guid))
        leaves = [s for s in by_stored if s.is_leaf]
        if not leaves:
            raise ValueError("no compute-node port: nothing for ftree to route")
        leaf_rank = next(sws[ca.links[1][0]].rank for ca in sorted(ib.cas, key=lambda c: _stored(c.guid)) if ca.key in cn)
        self._index(leaves[0], leaf_rank)
        leaf_level = sorted((s for s in sws.values() if s.rank == leaf_rank), key=lambda s: s.tuple)
        real = [i for i, s in enumerate(leaf_level) if s.is_leaf]
        self.leaves = leaf_level[real[0] : real[-1] + 1]
        # Routing state: per destination key, switch key -> out port, and least hops.
        self.lft: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
        self._hops: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
        self._route_all(leaf_rank)

    def _index(self, first: _Switch, leaf_rank: int) -> None:
        taken: set[tuple[int, ...]] = set()

        def assign(s: _Switch, t: list[int]) -> None:
            s.tuple = t
            taken.add(tuple(t))

        def new_tuple(frm: list[int], down: bool) -> list[int]:
            t = list(frm)
            if down:
                t[0] += 1
                var = frm[0] + 1
            else:
                t[0] -= 1
                var = frm[0]
            for i in range(0xFF):
                t[var] = i
                if tuple(t) not in taken:
                    return t
            raise ValueError("more than 255 switches in one direction of a tuple")

        assign(first, [first.rank] + [0] * first.rank + [0xFF] * (7 - first.rank))
        queue = [first]
        while queue:
            s = queue.pop(0)
            if s.rank < leaf_rank:
                for g in s.down:
                    if g.remote is not None and g.remote.tuple[0] == 0xFF:
                        assign(g.remote, new_tuple(s.tuple, True))
                        queue.append(g.remote)
                s.down.sort(key=lambda g: g.remote.tuple if g.remote is not None else [0xFF] * 8)
            if s.rank != 0:
                for g in s.up:
                    if g.remote is not None and g.remote.tuple[0] == 0xFF:
                        assign(g.remote, new_tuple(s.tuple, False))
                        queue.append(g.remote)
                s.up.sort(key=lambda g: g.remote.tuple if g.remote is not None else [0xFF] * 8)

    # -- the routing steps of osm_ucast_ftree.c ------------------------------------------------

    # Each routing step reads and writes the tables of one destination: they are looked up once per
    # destination and passed down (``lft``, ``hops``: switch key -> out port, least hops; None for
    # a dummy route, which sets nothing), not per step.

    @staticmethod
    def _set(sw: _Switch, lft: dict[tuple[int, int], int], hops_of: dict[tuple[int, int], int], port: int, hops: int) -> None:
        key = sw.key
        lft[key] = port
        old = hops_of.get(key)
        if old is None or hops < old:
            hops_of[key] = hops

    def _up_going_down(self, sw: _Switch, prev: _Switch | None, tables: tuple[dict, dict] | None, hops: int) -> bool:
        if not sw.down:
            return False
        if sw.counter_up_changed:  # bubble_sort_up: stable, by the groups' up-route counters
            sw.down.sort(key=_COUNTER_UP)
            sw.counter_up_changed = False
        created = False
        for g in sw.down:
            r = g.remote
            if r is None:
                created = True
                continue
            if prev is not None and r is prev:
                continue
            ports = g.ports
            p = ports[0] if len(ports) == 1 else min(ports, key=_COUNTER_UP)  # the first of the least loaded
            if tables is not None:
                lh = tables[1].get(r.key)
                if lh is not None and hops + 1 >= lh:
                    continue
                self._set(r, tables[0], tables[1], p.remote_num, hops + 1)
            routed = self._up_going_down(r, None, tables, hops + 1)
            created |= routed
            if routed:
                p.counter_up += 1
                g.counter_up += 1
                sw.counter_up_changed = True
        return created

    @staticmethod
    def _sort_down(groups: list[_Group]) -> None:
        """bubble_sort_down with port_group_compare_load_down, as written (a lighter remote
        switch falls through to the GUID test, which puts the lower stored GUID first)."""

        def less(a: _Group, b: _Group) -> bool:
            if a.counter_down != b.counter_down:
                return a.counter_down < b.counter_down
            la = a.remote.min_counter_down if a.remote else 0
            lb = b.remote.min_counter_down if b.remote else 0
            if la > lb:
                return False
            return not a.remote_guid > b.remote_guid

        n = len(groups)
        swapped = True
        i = 0
        while swapped:
            swapped = False
            for j in range(1, n - i):
                if less(groups[j], groups[j - 1]):
                    groups[j - 1], groups[j] = groups[j], groups[j - 1]
                    swapped = True
            i += 1

    def _down_going_up(self, sw: _Switch, prev: _Switch | None, tables: tuple[dict, dict] | None, main: bool, hops: int) -> bool:
        created = self._up_going_down(sw, prev, tables, hops)
        if sw.rank == 0:
            return created
        self._sort_down(sw.up)
        g0 = sw.up[0]
        ports0 = g0.ports
        p0 = ports0[0] if len(ports0) == 1 else min(ports0, key=_COUNTER_DOWN)
        r0 = g0.remote
        assert r0 is not None
        if main:
            g0.counter_down += 1
            p0.counter_down += 1
            if g0.counter_down == r0.min_counter_down + 1:
                r0.min_counter_down = min((g.counter_down for g in r0.down), default=1 << 30)
            if tables is not None:
                lft, hops_of = tables
                lh = hops_of.get(r0.key)
                if r0.key not in lft or (lh is not None and hops + 1 < lh):
                    self._set(r0, lft, hops_of, p0.remote_num, hops + 1)
                    created |= self._down_going_up(r0, sw, tables, main, hops + 1)
            else:
                # A dummy climbs its whole main path too, loading the counters of every tier below the
                # roots (OpenSM 3.3.x as Debian ships it; later upstream code stops a dummy after one hop).
                # Without it the spines' port counters to part-filled leaves drift by one and parallel
                # cables swap.
                created |= self._down_going_up(r0, sw, tables, main, hops + 1)
        if tables is None:
            return created
        lft, hops_of = tables
        for g in sw.up[1 if main else 0 :]:
            r = g.remote
            assert r is not None
            lh = hops_of.get(r.key)
            if r.key in lft and lh is not None and hops + 1 >= lh:
                continue
            ports = g.ports
            p = ports[0] if len(ports) == 1 else min(ports, key=_COUNTER_DOWN)
            self._set(r, lft, hops_of, p.remote_num, hops + 1)
            created |= self._down_going_up(r, sw, tables, False, hops + 1)
        return created

    def _tables(self, target: tuple[int, int]) -> tuple[dict, dict]:
        lft = self.lft.get(target)
        if lft is None:
            lft = self.lft[target] = {}
            self._hops[target] = {}
        return lft, self._hops[target]

    def _route_all(self, leaf_rank: int) -> None:
        cn = self.cn
        max_cn = 0
        for leaf in self.leaves:
            max_cn = max(max_cn, sum(1 for g in leaf.down if g.remote is None and g.remote_key in cn))
        for leaf in self.leaves:
            routed = 0
            for g in leaf.down:
                if g.remote is not None or g.remote_key not in cn:
                    continue
                tables = self._tables(g.remote_key)
                self._set(leaf, *tables, g.ports[0].num, 1)
                self._down_going_up(leaf, None, tables, True, 1)
                routed += 1
            for _ in range(max_cn - routed):
                self._down_going_up(leaf, None, None, True, 1)
        for ca in sorted(self.ib.cas, key=lambda c: _stored(c.guid)):
            if ca.key in cn:
                continue
            sw_key, sw_port, _link = ca.links[1]
            sw = self.switches[sw_key]
            tables = self._tables(ca.key)
            self._set(sw, *tables, sw_port, 1)
            self._down_going_up(sw, None, tables, True, 1)

    # -- reading the routes ----------------------------------------------------------------------

    def path(self, src: tuple[int, int], dst: tuple[int, int]) -> list[int]:
        """Link positions from HCA port ``src`` to HCA port ``dst`` (IbNode keys), in order."""
        nodes = self.ib.nodes
        table = self.lft[dst]
        peer, _port, link = nodes[src].links[1]
        out = [link]
        for _ in range(64):
            node = nodes[peer]
            if not node.is_switch:
                if peer != dst:
                    raise ValueError(f"route to {nodes[dst].description} ends at {node.description}")
                return out
            peer, _port, link = node.links[table[peer]]
            out.append(link)
        raise ValueError(f"route to {nodes[dst].description} loops")


def cn_ports(f: Fabric, ib: IbFabric, service: set[str]) -> set[tuple[int, int]]:
    """The compute-node ports of cn_guids.conf: every HCA port but the service endpoints'."""
    return {n.key for n in ib.cas if f.devices[n.device].group not in service}


def route_gap(f: Fabric, name: str, engine: str) -> str:
    """Why snc does not model the routes of InfiniBand fabric ``name`` under OpenSM's ``engine``
    (its tier tests then follow no modelled route); "" where it does."""
    facts: Any = f.facts.get(name) or {}
    if facts.get("kind") != "fat-tree" or engine != "ftree":
        return f"routing engine not modelled: OpenSM's {engine}, where snc models ftree on a fat tree only"
    switches, hca_ports = node_counts(f, name)
    entries = switches * hca_ports
    if entries > MAX_ENTRIES:
        return (
            f"route table too large: {entries:,} entries of switch and destination, "
            f"above the {MAX_ENTRIES:,} snc models in a render"
        )
    return ""


def ftree_routes(f: Fabric, name: str, service: set[str], engine: str = "ftree") -> FtreeRoutes | None:
    """The ftree model of fabric ``name`` (None where :func:`route_gap` gives a reason)."""
    if route_gap(f, name, engine):
        return None
    ib = IbFabric(f, name)
    return FtreeRoutes(ib, cn_ports(f, ib, service))
