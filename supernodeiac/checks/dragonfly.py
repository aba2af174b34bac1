"""Dragonfly and Dragonfly+ checks: balance (a = 2p = 2h) and global links measured on the Fabric.

The radix budget (p + a - 1 + h <= radix) and the group count (g <= a*h + 1) are enforced by
the builder, which cannot cable ports that do not exist; here the built Fabric is measured:

* ``dragonfly-global-links``: the global links per unordered group pair, counted on the
  Fabric's links (in bulk: a sort of one key per link), must all equal the planned ``m``
  and every pair of built groups must have them;
* ``dragonfly-local`` (same pass over the links): every router links to every other of its
  group (Dragonfly), every leaf to every spine of its group with the same number of links
  (Dragonfly+);
* ``dragonfly-balance``: a warning when a != 2p or a != 2h, saying which side has more ports
  than the balanced design and by how much;
* ``dragonfly-size``: an info line with the design figures, free global ports, and the
  group-to-group ratios under minimal routing (``facts.dragonfly_ratios.group_ratios``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from ..fabric import Fabric
from ..fabric.fabric_facts import DragonflyKindFacts, is_dragonfly
from ..facts.dragonfly_ratios import group_ratios
from ..findings import Finding, error, info, warning
from .base import CHECKS, CheckContext

_GROUP = attrgetter("group")

KINDS = ("dragonfly", "dragonfly-plus")


def _fabrics(ctx: CheckContext) -> Iterator[tuple[int, str, DragonflyKindFacts]]:
    for i, spec in enumerate(ctx.blueprint.scaleout):
        facts = ctx.fabric.facts.get(spec.name)
        if spec.kind in KINDS and is_dragonfly(facts) and facts["kind"] == spec.kind:
            yield i, spec.name, facts


@dataclass
class Wiring:
    """The global and local links of one Dragonfly fabric, counted on its links.

    ``pairs``/``pair_links``: each unordered pair of groups that has global links (as
    ``lo * groups + hi``, sorted) and how many; ``peer_*``: each (switch, peer in its group)
    pair that has local links (as ``switch * devices + peer``, sorted) and how many.
    """

    groups: int  # the key base of ``pairs``
    pairs: np.ndarray
    pair_links: np.ndarray
    devices: int  # the key base of ``peers``
    peers: np.ndarray
    peer_links: np.ndarray

    def peers_of(self, switch: int) -> dict[int, int]:
        """Peer -> local links, for one switch."""
        lo, hi = np.searchsorted(self.peers, [switch * self.devices, (switch + 1) * self.devices])
        return dict(zip((self.peers[lo:hi] % self.devices).tolist(), self.peer_links[lo:hi].tolist(), strict=True))


def _counted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys sorted, how often each occurs)."""
    if not len(keys):
        return keys, keys
    s = np.sort(keys)
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    return s[starts], np.diff(np.concatenate((starts, [len(s)])))


def _members(f: Fabric, name: str) -> np.ndarray:
    """Positions of the devices the fabric ``name`` made (its switches), found in C among 10^6 devices."""
    devices = f.devices
    return np.flatnonzero(np.fromiter(map(name.__eq__, map(_GROUP, devices)), dtype=bool, count=len(devices)))


def measure_links(fabric: Fabric, name: str, global_role: str) -> Wiring:
    """Global links per unordered group pair and local links per switch and peer, of one fabric.

    ``global_role`` is the role of the switches that carry global links (router or spine);
    local links are those between two switches of one group. Counted in bulk on numpy columns
    (sort and compare), with each switch's group in an array indexed by device.
    """
    devices = fabric.devices
    group_of = np.full(len(devices), -1, dtype=np.int64)
    carries = np.zeros(len(devices), dtype=bool)
    for d in map(devices.__getitem__, _members(fabric, name).tolist()):
        if d.tier > 0:
            group_of[d.index] = d.coord("group")
            carries[d.index] = d.role == global_role
    t = fabric.links
    arr = t.arrays()
    # This fabric's links, chosen per spec rather than per link.
    mine = np.array([spec.fabric == name for spec in t.specs], dtype=bool)[arr.spec] if t.specs else np.zeros(0, dtype=bool)
    a, b = arr.a[mine], arr.b[mine]
    ga, gb = group_of[a], group_of[b]
    switches = (ga >= 0) & (gb >= 0)
    glob = switches & (ga != gb) & carries[a] & carries[b]
    g = int(group_of.max()) + 1 if len(group_of) else 0
    lo, hi = np.minimum(ga[glob], gb[glob]), np.maximum(ga[glob], gb[glob])
    pairs, pair_links = _counted(lo * g + hi)
    # Local links count once for each end (a link from a switch to itself, once).
    local = switches & (ga == gb)
    la, lb = a[local], b[local]
    twice = la != lb
    n = len(devices)
    peers, peer_links = _counted(np.concatenate((la * n + lb, lb[twice] * n + la[twice])))
    return Wiring(g, pairs, pair_links, n, peers, peer_links)


@CHECKS.register("dragonfly-global-links")
def check_wiring(ctx: CheckContext) -> Iterator[Finding]:
    """Global links per group pair, and the groups' local wiring, counted on the links."""
    for i, name, facts in _fabrics(ctx):
        role = "router" if facts["kind"] == "dragonfly" else "spine"
        wiring = measure_links(ctx.fabric, name, role)
        yield from _global_findings(name, facts, wiring, ("scaleout", i))
        yield from _local_findings(ctx.fabric, name, facts, wiring, ("scaleout", i))


def _global_findings(name: str, facts: DragonflyKindFacts, w: Wiring, path: tuple) -> Iterator[Finding]:
    g, m = facts["g"], facts["global_parallel"]
    expected = g * (g - 1) // 2 if m else 0
    off = np.flatnonzero(w.pair_links != m)
    missing = expected - len(w.pairs)
    if not len(off) and missing <= 0:
        return
    counts = sorted(set(w.pair_links.tolist()))
    detail = []
    if len(off):
        first = int(off[0])  # the lowest pair: keys are sorted as (lo, hi)
        lo, hi = divmod(int(w.pairs[first]), w.groups)
        detail.append(f"groups {lo + 1} and {hi + 1} have {int(w.pair_links[first])}")
    if missing > 0:
        detail.append(f"{missing} of {expected} group pairs have none")
    yield error(
        "dragonfly-global-links",
        f"{name}: global links per group pair differ (counts {counts or [0]}; planned {m} per pair): " + "; ".join(detail),
        path,
        "every group pair must have the same number of global links: check grow_to_groups and hand-made changes",
    )


def _local_findings(f: Fabric, name: str, facts: DragonflyKindFacts, w: Wiring, path: tuple) -> Iterator[Finding]:
    if facts["kind"] == "dragonfly":
        want_peers, want_links, role = facts["a"] - 1, 1, "router"
    else:
        want_peers, want_links, role = facts["spines_per_group"], facts["leaf_spine_parallel"], "leaf"
    mine = map(f.devices.__getitem__, _members(f, name).tolist())
    switches = np.array([d.index for d in mine if d.role == role], dtype=np.int64)
    owner = w.peers // w.devices  # the switch of each (switch, peer) entry

    def per_switch(weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(owner, weights=weights, minlength=len(f.devices))[switches]

    # A switch is wired as designed when it has the wanted peers, each with the wanted links.
    bad = np.flatnonzero((per_switch() != want_peers) | (per_switch(w.peer_links != want_links) > 0))
    if len(bad):
        d = f.devices[int(switches[bad[0]])]
        peers = w.peers_of(d.index)
        yield error(
            "dragonfly-local",
            f"{name}: {d.name} reaches {len(peers)} switches of its group (links {sorted(set(peers.values()))}); "
            f"the design wants {want_peers}, {want_links} link(s) each",
            path,
            "a group must be all to all (Dragonfly) or a full leaf/spine Clos (Dragonfly+)",
        )


@CHECKS.register("dragonfly-balance")
def check_balance(ctx: CheckContext) -> Iterator[Finding]:
    for i, name, facts in _fabrics(ctx):
        if facts["kind"] != "dragonfly":
            continue
        p, a, h = facts["p"], facts["a"], facts["h"]
        parts = []
        if h != p:
            if h > p:
                parts.append(f"global links over-provisioned: h = {h} is {h - p} more than p = {p} per router")
            else:
                parts.append(f"terminals over-provisioned against global links: p = {p} is {p - h} more than h = {h} per router")
        if a != 2 * p:
            if a > 2 * p:
                parts.append(f"local links over-provisioned: a = {a} is {a - 2 * p} more than 2p = {2 * p}")
            else:
                parts.append(f"terminals over-provisioned against local links: 2p = {2 * p} is {2 * p - a} more than a = {a}")
        if parts:
            yield warning(
                "dragonfly-balance",
                f"{name}: not balanced (a = 2p = 2h; here p={p}, a={a}, h={h}): " + "; ".join(parts),
                ("scaleout", i),
                f"balanced with p = {p}: routers_per_group {2 * p}, global_links {p}",
            )


@CHECKS.register("dragonfly-size")
def check_size(ctx: CheckContext) -> Iterator[Finding]:
    for i, name, facts in _fabrics(ctx):
        free = facts["global_spare_per_group"]
        reserved = facts["global_reserved_per_group"]
        if facts["kind"] == "dragonfly":
            shape = f"p={facts['p']} a={facts['a']} h={facts['h']}, k={facts['k']} of {facts['radix']} router ports"
        else:
            shape = (
                f"{facts['leaves_per_group']} leaves ({facts['leaf_down']} down, {facts['leaf_up']} up) and "
                f"{facts['spines_per_group']} spines (h={facts['h']}) per group"
            )
        text = (
            f"{name}: {facts['kind']} {shape}; {facts['g']} of at most {facts['max_groups']} groups, "
            f"{facts['endpoint_ports']:,} of {facts['capacity']:,} terminal ports; "
            f"{facts['global_parallel']} global link(s) per group pair ({facts['arrangement']})"
        )
        if reserved:
            text += f"; {reserved} global ports per group reserved for groups up to {facts['planned_groups']}"
        if free:
            text += (
                f"; {free} of {facts['global_ports_per_group']} global ports per group left free "
                f"(more parallel links would unbalance the group pairs)"
            )
        ratios = group_ratios(facts, facts.get("terminal_gbps", 0.0), facts.get("global_gbps", 0.0))
        if ratios is not None:
            text += (
                f"; group to group under minimal routing {ratios['to_one_group']} towards one other group, "
                f"{ratios['uniform']} uniform"
            )
        yield info("dragonfly-size", text, ("scaleout", i))
