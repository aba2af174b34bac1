"""Dragonfly and Dragonfly+ checks: balance (a = 2p = 2h) and global links measured on the Fabric.

The radix budget (p + a - 1 + h <= radix) and the group count (g <= a*h + 1) are enforced by
the builder, which cannot cable ports that do not exist; here the built Fabric is measured:

* ``dragonfly-global-links``: the global links per unordered group pair, counted on the
  Fabric's links (one dict entry per pair, linear in links), must all equal the planned ``m``
  and every pair of built groups must have them;
* ``dragonfly-local`` (same pass over the links): every router links to every other of its
  group (Dragonfly), every leaf to every spine of its group with the same number of links
  (Dragonfly+);
* ``dragonfly-balance``: a warning when a != 2p or a != 2h, saying which side has more ports
  than the balanced design and by how much;
* ``dragonfly-size``: an info line with the design figures and free global ports.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from itertools import compress

from ..fabric import Fabric
from ..findings import Finding, error, info, warning
from . import CHECKS, CheckContext

KINDS = ("dragonfly", "dragonfly-plus")


def _fabrics(ctx: CheckContext) -> Iterator[tuple[int, str, dict]]:
    for i, spec in enumerate(ctx.blueprint.scaleout):
        facts = ctx.fabric.facts.get(spec.name)
        if spec.kind in KINDS and facts is not None and facts.get("kind") == spec.kind:
            yield i, spec.name, facts


def measure_links(fabric: Fabric, name: str, global_role: str) -> tuple[dict[tuple[int, int], int], dict[int, dict[int, int]]]:
    """(global links per unordered group pair, local links per switch by peer) of one fabric.

    ``global_role`` is the role of the switches that carry global links (router or spine);
    local links are those between two switches of one group. One pass over the links, with the
    switches' groups in a list indexed by device (a dict lookup per link end costs more).
    """
    devices = fabric.devices
    group_of: list[int] = [-1] * len(devices)
    carries: list[bool] = [False] * len(devices)
    for d in devices:
        if d.group == name and d.tier > 0:
            group_of[d.index] = d.coord("group")
            carries[d.index] = d.role == global_role
    pairs: dict[tuple[int, int], int] = {}
    # Local links as each switch's list of peers, counted per switch at the end (Counter counts
    # in C): two list appends per link cost less than making, hashing and counting a pair key.
    peers: defaultdict[int, list[int]] = defaultdict(list)
    t = fabric.links
    # This fabric's links, chosen per spec rather than per link (compress runs in C).
    wanted = [spec.fabric == name for spec in t.specs]
    if all(wanted):
        ends = zip(t.a, t.b)
    else:
        keep = list(map(wanted.__getitem__, t.spec))
        ends = zip(compress(t.a, keep), compress(t.b, keep))
    for a, b in ends:
        ga, gb = group_of[a], group_of[b]
        if ga < 0 or gb < 0:
            continue
        if ga != gb:
            if carries[a] and carries[b]:
                key = (ga, gb) if ga < gb else (gb, ga)
                pairs[key] = pairs.get(key, 0) + 1
            continue
        peers[a].append(b)
        if a != b:
            peers[b].append(a)
    local = {switch: dict(Counter(found)) for switch, found in peers.items()}
    return pairs, local


@CHECKS.register("dragonfly-global-links")
def check_wiring(ctx: CheckContext) -> Iterator[Finding]:
    """Global links per group pair, and the groups' local wiring, from one pass over the links."""
    for i, name, facts in _fabrics(ctx):
        role = "router" if facts["kind"] == "dragonfly" else "spine"
        pairs, local = measure_links(ctx.fabric, name, role)
        yield from _global_findings(name, facts, pairs, ("scaleout", i))
        yield from _local_findings(ctx.fabric, name, facts, local, ("scaleout", i))


def _global_findings(name: str, facts: dict, pairs: dict[tuple[int, int], int], path: tuple) -> Iterator[Finding]:
    g, m = facts["g"], facts["global_parallel"]
    expected = g * (g - 1) // 2 if m else 0
    off = {pair: n for pair, n in pairs.items() if n != m}
    missing = expected - len(pairs)
    if not off and missing <= 0:
        return
    counts = sorted(set(pairs.values()))
    detail = []
    if off:
        pair, n = min(off.items())
        detail.append(f"groups {pair[0] + 1} and {pair[1] + 1} have {n}")
    if missing > 0:
        detail.append(f"{missing} of {expected} group pairs have none")
    yield error(
        "dragonfly-global-links",
        f"{name}: global links per group pair differ (counts {counts or [0]}; planned {m} per pair): " + "; ".join(detail),
        path,
        "every group pair must have the same number of global links: check grow_to_groups and hand-made changes",
    )


def _local_findings(f: Fabric, name: str, facts: dict, local: dict[int, dict[int, int]], path: tuple) -> Iterator[Finding]:
    if facts["kind"] == "dragonfly":
        want_peers, want_links, role = facts["a"] - 1, 1, "router"
    else:
        want_peers, want_links, role = facts["spines_per_group"], facts["leaf_spine_parallel"], "leaf"
    for d in f.devices:
        if d.group != name or d.role != role:
            continue
        peers = local.get(d.index, {})
        if len(peers) != want_peers or any(n != want_links for n in peers.values()):
            yield error(
                "dragonfly-local",
                f"{name}: {d.name} reaches {len(peers)} switches of its group (links {sorted(set(peers.values()))}); "
                f"the design wants {want_peers}, {want_links} link(s) each",
                path,
                "a group must be all to all (Dragonfly) or a full leaf/spine Clos (Dragonfly+)",
            )
            return  # one is enough: the rest of the group says the same


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
        yield info("dragonfly-size", text, ("scaleout", i))
