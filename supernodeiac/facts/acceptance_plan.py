"""The acceptance plan as data: perftest pairs that cover every cabled data link once, and
nccl-tests runs per scale-up domain, per rail and across each fabric, with the figures they must
reach (snc's default thresholds, ``acceptance:`` in the blueprint, docs/acceptance.md: a link below
60 % of its line rate is a fault; collectives must reach 80 % of the design's bus bandwidth).
``outputs/acceptance.py`` writes it; ``acceptance_results`` reads the tools' output against it.

**Perftest coverage.** Per scale-out fabric, every link is *under test* in exactly one
``ib_write_bw`` pair (the other links of the pair's path are *via*: already under test elsewhere):

* host links: two NICs on the same switch (two hosts where the switch has them; two NICs of one
  host on a Dragonfly router), traffic turning at that switch: both links under test (an odd one
  out pairs with the first NIC of its switch, its own link alone under test);
* switch links (leaf-spine, spine-core): two links that meet at the same upper switch, with a host
  found below each lower end (rotating over the hosts, so one wave of tests uses each NIC once):
  both links under test, the traffic up one and down the other;
* links between switches of one tier (Dragonfly): one link under test, a host below each end.

Which upper switch carries a pair's traffic is the routing engine's choice (the subnet manager,
ECMP). Where snc models the engine (OpenSM's ftree on a fat tree, facts/ib_routes.py) the tier
tests are chosen on its routes instead; where it does not (another engine, a route table too large,
ECMP on Ethernet) the pairs above stand and ``Plan.unrouted`` says why: such a test may not cross
the cables it names. On InfiniBand the script records each path (``ibtracert``) and check-results
attributes a failure to the cables on it. On RoCE no path is known before or after a run: per
wave, ``Plan.ecmp`` lists the switches whose ports its traffic may cross (each test's leaves and
every switch above them up to the tier its planned path turns at, ECMP's choices), and perftest.sh
reads their port counters before and after the wave so check-results can name the cable whose
error counters moved. Tests are ordered stage by stage, rail by rail; a *wave* is a set of tests
that share no NIC and may run together (in perftest.sh: one stage, rail and wave number).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from ..catalog.host_topology import HostTopology, host_topologies
from ..fabric import Fabric
from ..fabric.cable_naming import cable_id_format
from ..fabric.views import FabricLinks, links_by_fabric, local_tiers
from ..model.blueprint import Blueprint, built_fabrics
from .collectives import Scale, accelerator_of, domain_scale, fabric_scale, predict, rail_scale
from .hosts import Hosts, cached_host_facts, rdma_names
from .ib_fabric import IbFabric, infiniband_fabrics
from .ib_routes import FtreeRoutes, ftree_routes, route_gap
from .ib_routing import routing_plan

COLLECTIVES = ("all_reduce", "all_gather", "alltoall")


@dataclass(slots=True)
class PerfTest:
    id: str
    fabric: str
    stage: str  # endpoint, tier1-2, tier2-3, peer
    rail: int | None
    wave: int
    server: int  # device index
    server_dev: str
    client: int
    client_dev: str
    gbps: float  # line rate: the slowest link of the path
    under_test: list[int]  # link positions
    via: list[int]
    server_port: int  # port index on the server (its printed port: Fabric.physical_name)
    client_port: int
    # Routed tests (facts/ib_routes.py): the path client -> server as (link, device it leaves).
    hops: list[tuple[int, int]] = field(default_factory=list)
    # The server LID the client aims at (ib_write_bw --dlid) where the test follows an LMC path
    # past the base LID of a dumped forwarding table (verify/routed_tests.py); 0: the base LID.
    dlid: int = 0


# A routed test's destination: (HCA port key, every switch's out port towards it, the LID to aim at).
Target = tuple[tuple[int, int], Mapping[tuple[int, int], int], int]


@dataclass(slots=True)
class RoutedTargets:
    """The destinations routed tier tests aim at, on the IB nodes of one fabric (``ib``)."""

    ib: IbFabric
    targets: list[Target]


@dataclass(slots=True)
class NcclRun:
    id: str
    stage: str  # domain, rail, fabric
    group: str  # the domain, leaf group + rail, or fabric
    collective: str
    hosts: list[int]
    gpus_per_host: int
    env: dict[str, str]
    busbw_gbytes: float  # the design's bus bandwidth per rank, GB/s (facts/collectives.py)
    basis: str
    algorithm: str = "ring"  # what NCCL runs at large sizes for this shape
    knee_bytes: int = 0  # the message size where busbw should reach 90 % of its plateau
    tool: str = "nccl-tests"  # the accelerators' collective test; "" where none is known


@dataclass
class Plan:
    perftests: dict[str, list[PerfTest]] = field(default_factory=dict)  # fabric -> tests
    untestable: dict[str, list[int]] = field(default_factory=dict)  # fabric -> links no host pair loads
    # fabric -> (link, device it leaves): a direction of a switch link no routed test loads (ftree
    # sends no HCA-bound traffic down an uplink its leaf's targets do not need).
    one_way: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # fabric -> (link, device it leaves) -> why no routed test loads that direction (untestable.tsv);
    # the device is -1 where neither direction is loaded.
    why: dict[str, dict[tuple[int, int], str]] = field(default_factory=dict)
    routed: dict[str, bool] = field(default_factory=dict)  # fabric -> tier tests on the modelled routes
    # fabric -> why its tier tests follow no modelled route (ib_routes.route_gap, or ECMP); absent
    # where they do. The checklist, perftest.sh and the acceptance-routes finding say it.
    unrouted: dict[str, str] = field(default_factory=dict)
    cables: dict[str, tuple[int, int]] = field(default_factory=dict)  # fabric -> (cables, switch-to-switch cables)
    # fabric -> "data" (the accelerators' scale-out fabric), "storage" or "inband" (the role of the
    # host ports its endpoints attach): each role has its own perftest threshold.
    roles: dict[str, str] = field(default_factory=dict)
    nccl: list[NcclRun] = field(default_factory=list)
    hostfiles: dict[str, list[int]] = field(default_factory=dict)  # name -> hosts
    # Hosts on a data fabric without accelerators (CPU servers): in the perftests, no collective rank.
    not_ranks: list[int] = field(default_factory=list)
    # RoCE fabric -> wave key (wave_key) -> the switches (device indices, sorted) whose ports the
    # wave's traffic may cross under ECMP: perftest.sh reads their counters around the wave.
    ecmp: dict[str, dict[str, list[int]]] = field(default_factory=dict)


def wave_key(stage: str, rail: int | str | None, wave: int | str) -> str:
    """The name of one run of tests in perftest.sh (one stage, rail and wave number): the script
    builds the same name from a perftest.tsv line, and names its counter files by it."""
    return f"{stage}-r{rail}-w{wave}" if rail is not None else f"{stage}-w{wave}"


def ecmp_switches(
    f: Fabric, name: str, tests: list[PerfTest], cabled: dict[str, FabricLinks] | None = None
) -> dict[str, list[int]]:
    """Per wave, the switches whose ports its tests' traffic may cross when the switches hash each
    flow onto any equal-cost uplink: the switches of each test's planned path, and every switch
    above its lower ends up to the tier the planned path turns at (valley-free: the traffic climbs
    from the source's leaf to some switch of that tier and comes down to the destination's).
    ``cabled``: links_by_fabric(f), where the caller has it."""
    fl = (cabled if cabled is not None else links_by_fabric(f)).get(name)
    if fl is None:
        return {}
    tiers = local_tiers(f, name, fl)
    t = f.links
    above: dict[int, set[int]] = {}  # switch -> the switches one tier up it is cabled to
    for a, b in zip(fl.a, fl.b, strict=True):
        ta, tb = tiers[a], tiers[b]
        if ta and tb and ta != tb:
            lo, hi = (a, b) if ta < tb else (b, a)
            above.setdefault(lo, set()).add(hi)
    # The switches above x up to tier ``top`` (x itself not among them), made once per distinct
    # set of switches one tier up: the leaves of a pod share their spines, so each pod's climb is
    # one union (otherwise, at 131k: 3 x 10^5 unions, and a frozenset of about 10^3 switches kept
    # per leaf, some 120 MB of the render's peak). Kept by (x, top) as an index into ``overs``, so
    # a wave merges each distinct climb once.
    over_at: dict[tuple[int, int], int] = {}
    over_of: dict[tuple[frozenset[int], int], int] = {}
    overs: list[frozenset[int]] = []

    def over(x: int, top: int) -> int:
        found = over_at.get((x, top))
        if found is None:
            next_up = frozenset(hi for hi in above.get(x, ()) if tiers[hi] <= top)
            found = over_of.get((next_up, top))
            if found is None:
                out = set(next_up)
                for hi in next_up:
                    out |= overs[over(hi, top)]
                found = over_of[(next_up, top)] = len(overs)
                overs.append(frozenset(out))
            over_at[(x, top)] = found
        return found

    if not tests:
        return {}
    # Columns over every (test, link) pair of the plan (10^5 tests at 131k): each test's path
    # switches, the tier it turns at (top) and its lowest (low); then per wave the distinct path
    # switches and the distinct climbs (low switch, top), each climb's switches made once.
    wave_of: dict[str, int] = {}  # wave key -> its place, in the order tests first name it
    place: dict[tuple[str, int | None, int], int] = {}

    def wave_at(x: PerfTest) -> int:
        k = (x.stage, x.rail, x.wave)
        w = place.get(k)
        if w is None:
            w = place[k] = wave_of.setdefault(wave_key(*k), len(wave_of))
        return w

    wave = [wave_at(x) for x in tests]
    sizes = [len(x.under_test) + len(x.via) for x in tests]
    links = np.fromiter(chain.from_iterable(x.under_test + x.via for x in tests), dtype=np.int64, count=sum(sizes))
    arr = t.arrays()
    tier = np.zeros(len(f.devices), dtype=np.int64)
    tier[np.fromiter(tiers.keys(), dtype=np.int64, count=len(tiers))] = np.fromiter(
        tiers.values(), dtype=np.int64, count=len(tiers)
    )
    owner = np.repeat(np.arange(len(tests), dtype=np.int64), sizes)
    dev = np.concatenate((arr.a[links], arr.b[links]))
    owner = np.concatenate((owner, owner))
    on = tier[dev] > 0
    dev, owner = dev[on], owner[on]
    level = tier[dev]
    top = np.zeros(len(tests), dtype=np.int64)
    np.maximum.at(top, owner, level)
    low = np.full(len(tests), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(low, owner, level)
    waves: list[set[int]] = [set() for _ in wave_of]
    in_wave = np.asarray(wave, dtype=np.int64)[owner]
    n = len(f.devices)
    for key in np.unique(in_wave * n + dev).tolist():
        waves[key // n].add(key % n)
    climbs = level == low[owner]
    span = int(tier.max()) + 1
    merged: set[tuple[int, int]] = set()  # (wave, climb in overs) already in the wave
    for key in np.unique((in_wave[climbs] * n + dev[climbs]) * span + top[owner[climbs]]).tolist():
        w, rest = divmod(key, n * span)
        x = rest // span
        waves[w].add(x)
        k = over(x, rest % span)
        if (w, k) not in merged:
            merged.add((w, k))
            waves[w] |= overs[k]
    return {k: sorted(sw) for k, sw in zip(wave_of, waves, strict=True)}


def _grouped(key: np.ndarray, *columns: np.ndarray) -> dict[int, list[Any]]:
    """key -> the rows (tuples of ``columns``, Python ints) with that key, each list sorted as the
    tuples sort: the columns are sorted with the key first, then column by column."""
    if not len(key):
        return {}
    order = np.lexsort((*columns[::-1], key))
    k = key[order]
    cols = [c[order].tolist() for c in columns]
    cut = (np.flatnonzero(k[1:] != k[:-1]) + 1).tolist()
    rows = list(zip(*cols, strict=True))
    starts, stops = [0, *cut], [*cut, len(rows)]
    return {x: rows[i:j] for x, i, j in zip(k[starts].tolist(), starts, stops, strict=True)}


# Why a RoCE fabric's tier tests follow no modelled route.
ECMP = "ECMP hashes each flow onto one of a switch's equal-cost uplinks, so no path is known before a run nor traced after it"
NO_HOST_BELOW = "no host below one end: nothing can load it"
TURNS_BELOW = "every path between the hosts below it turns at a lower switch"


def perftests(
    f: Fabric,
    name: str,
    rdma: dict[str, list[str]],
    routes: FtreeRoutes | None = None,
    self_one_way: list[tuple[int, int]] | None = None,
    why: dict[tuple[int, int], str] | None = None,
    cabled: dict[str, FabricLinks] | None = None,
    targets: RoutedTargets | None = None,
    endpoints: bool = True,
) -> tuple[list[PerfTest], list[int]]:
    """The fabric's tests, and the links no host pair can load (every path between the hosts
    below them turns at a lower switch: the spine-core links of a single pod; or no host is below
    one end: a Dragonfly group built without endpoints). ``cabled``: links_by_fabric(f), where the
    caller has it. Tier tests follow ``targets`` (a dumped forwarding table's) or else ``routes``
    (the ftree model) where either is given; ``endpoints`` False leaves out the host-link tests."""
    fl = (cabled if cabled is not None else links_by_fabric(f)).get(name)
    if fl is None:
        return [], []
    tiers = local_tiers(f, name, fl)
    t = f.links
    idx = t.indices_of(name)
    devices = f.devices
    gbps_of = [s.gbps for s in t.specs]
    # The fabric's links sorted into host links (by switch), switch links (by upper switch) and
    # links within a tier, in numpy (10^6 links at 131k): each switch's list in the order the
    # tuples sort in, peers in link order.
    arr = t.arrays()
    pos = np.asarray(idx, dtype=np.int64)
    tier = np.zeros(len(devices), dtype=np.int64)
    tier[np.fromiter(tiers.keys(), dtype=np.int64, count=len(tiers))] = np.fromiter(
        tiers.values(), dtype=np.int64, count=len(tiers)
    )
    a_dev, b_dev, a_port, b_port = arr.a[pos], arr.b[pos], arr.a_port[pos], arr.b_port[pos]
    ta, tb = tier[a_dev], tier[b_dev]
    to_host = (ta == 0) | (tb == 0)
    a_host = ta == 0
    switch_end = np.where(a_host, b_dev, a_dev)
    # switch -> (its port, link, host, host port)
    ends: dict[int, list[tuple[int, int, int, int]]] = _grouped(
        switch_end[to_host],
        np.where(switch_end == b_dev, b_port, a_port)[to_host],
        pos[to_host],
        np.where(a_host, a_dev, b_dev)[to_host],
        np.where(a_host, a_port, b_port)[to_host],
    )
    peers: list[int] = pos[~to_host & (ta == tb)].tolist()
    climb = ~to_host & (ta != tb)
    lower = np.where(ta < tb, a_dev, b_dev)[climb]
    # upper switch -> (lower index, link, lower)
    down: dict[int, list[tuple[int, int, int]]] = _grouped(np.where(ta < tb, b_dev, a_dev)[climb], lower, pos[climb], lower)
    turn: dict[int, int] = {}
    hostless: set[int] = set()  # switches with no host below (a Dragonfly group built without endpoints)

    def descend(x: int, avoid: int = -1) -> tuple[int, int, list[int]] | None:
        """A host below switch x (rotating over them; another than ``avoid`` where there is one),
        its port, and the links from x down to it; None when no host is below x."""
        if x in hostless:
            return None
        options: Sequence[tuple[int, ...]] = ends.get(x) or down.get(x) or []
        k = turn.get(x, 0)
        found = None
        for step in range(len(options)):
            turn[x] = k + step + 1
            if x in ends:
                _p, link, host, port = options[(k + step) % len(options)]
                found = (host, port, [link])
            else:
                _lo, link, lower = options[(k + step) % len(options)]
                below = descend(lower, avoid)
                if below is None:
                    continue
                found = (below[0], below[1], [link, *below[2]])
            if found[0] != avoid:
                return found
        if found is None:
            hostless.add(x)
        return found

    rails: dict[int, int | None] = {}

    def rail_of(sw: int) -> int | None:
        found = rails.get(sw, -1)
        if found == -1:
            found = rails[sw] = devices[sw].coord("rail")
        return found

    tests: list[PerfTest] = []
    untestable: list[int] = []
    one_way = self_one_way if self_one_way is not None else []
    why = why if why is not None else {}
    counters: dict[tuple[str, int], int] = {}
    rdma_of = [rdma[d.model] for d in devices]  # per device: its ports' RDMA names
    names = [d.name for d in devices]
    spec = t.spec

    def add(
        stage: str,
        at: int,
        rail: int | None,
        h1: tuple,
        h2: tuple,
        under: list[int],
        via: list[int],
        hops: list[tuple[int, int]] | None = None,
        dlid: int = 0,
    ) -> None:
        # IDs are keyed by the switch the test turns at (stable coordinates): a grown fabric adds
        # tests without renumbering those of the switches already built, and their result files.
        n = counters.get((stage, at), 0) + 1
        counters[(stage, at)] = n
        tests.append(
            PerfTest(
                f"{name}-{stage}-{names[at]}-{n:03d}",
                name,
                stage,
                rail,
                0,
                h1[0],
                rdma_of[h1[0]][h1[1]],
                h2[0],
                rdma_of[h2[0]][h2[1]],
                min([gbps_of[spec[i]] for i in under + via]),
                under,
                via,
                h1[1],
                h2[1],
                hops or [],
                dlid,
            )
        )

    # Host links, switch by switch in rail order: pairs turning at the switch (port k with port
    # k + half, so a host with several NICs on one switch meets another host where it can).
    def by_rail(s: int) -> tuple[int, int]:
        r = rail_of(s)
        return (r if r is not None else -1, s)

    for sw in sorted(ends, key=by_rail) if endpoints else ():
        es = ends[sw]
        half = len(es) // 2
        sw_rail = rail_of(sw)
        for k in range(half):
            (_p1, l1, h1, p1), (_p2, l2, h2, p2) = es[k], es[k + half]
            add("endpoint", sw, sw_rail, (h1, p1), (h2, p2), [l1, l2], [])
        if len(es) % 2 and len(es) > 1:
            (_p, l1, h1, p1), (_q, l0, h0, p0) = es[-1], es[0]
            add("endpoint", sw, sw_rail, (h1, p1), (h0, p0), [l1], [l0])
    # Switch links, upper switch by upper switch: pairs meeting at the upper switch, their lower
    # ends far enough apart that traffic between them must climb to it (no shared neighbour
    # between the hosts and the upper switch's tier: leaves of one pod meet at its spines).
    switch_link = ~to_host
    near_of = _grouped(
        np.concatenate((a_dev[switch_link], b_dev[switch_link])), np.concatenate((b_dev[switch_link], a_dev[switch_link]))
    )
    neighbours: dict[int, set[int]] = {x: {y for (y,) in ys} for x, ys in near_of.items()}
    sides: dict[tuple[int, int], tuple[frozenset[int], int]] = {}

    def side(x: int, top: int) -> tuple[frozenset[int], int]:
        """Switches below tier ``top`` that x reaches directly (lower ends sharing one meet below),
        and the least of them (the order the pairs are made in), made once per switch."""
        found = sides.get((x, top))
        if found is None:
            near = frozenset(n for n in neighbours.get(x, ()) if tiers[n] < top) or frozenset((x,))
            found = sides[(x, top)] = (near, min(near))
        return found

    if targets is None and routes is not None:
        targets = RoutedTargets(routes.ib, [(ca.key, routes.lft[ca.key], 0) for ca in routes.ib.cas])
    if targets is not None:
        gaps: list[tuple[int, int]] = []
        _routed_tests(f, name, targets, tiers, ends, add, gaps, why)
        both: dict[int, int] = {}
        for link, _x in gaps:
            both[link] = both.get(link, 0) + 1
        for link, n in both.items():
            if n == 2:
                untestable.append(link)
                why[(link, -1)] = "no route to an HCA port crosses it either way"
        one_way += [(link, x) for link, x in gaps if both[link] == 1]
    for hi in sorted(down, key=lambda s: (tiers[s], s)) if targets is None else ():
        ds = down[hi]
        top = tiers[hi]
        stage = f"tier{tiers[ds[0][2]]}-{top}"

        near = [(side(x, top), lo, link, x) for lo, link, x in ds]
        near.sort(key=lambda e: (e[0][1], e[1]))
        keyed = [(s, lo, link, x) for (s, _least), lo, link, x in near]
        half = len(keyed) // 2
        single: list[tuple] = []
        for k in range(half):
            e1, e2 = keyed[k], keyed[k + half]
            if not e1[0].isdisjoint(e2[0]) or e1[3] == e2[3]:
                single += [e1, e2]
                continue
            one = descend(e1[3])
            two = descend(e2[3], one[0]) if one else None
            if one is None or two is None:  # no host below one side: nothing can load these links
                untestable += [e1[2], e2[2]]
                why[(e1[2], -1)] = why[(e2[2], -1)] = NO_HOST_BELOW
                continue
            (h1, p1, path1), (h2, p2, path2) = one, two
            rail = rail_of(e1[3])
            rail = rail if rail == rail_of(e2[3]) else None
            add(stage, hi, rail, (h1, p1), (h2, p2), [e1[2], e2[2]], path1 + path2)
        if len(keyed) % 2:
            single.append(keyed[-1])
        for e in single:
            partner = next((o for o in keyed if o[0].isdisjoint(e[0]) and o[3] != e[3]), None)
            if partner is None:  # every path between hosts below turns before this switch
                untestable.append(e[2])
                why[(e[2], -1)] = TURNS_BELOW
                continue
            one = descend(e[3])
            two = descend(partner[3], one[0]) if one else None
            if one is None or two is None:
                untestable.append(e[2])
                why[(e[2], -1)] = NO_HOST_BELOW
                continue
            (h1, p1, path1), (h2, p2, path2) = one, two
            add(stage, hi, None, (h1, p1), (h2, p2), [e[2]], path1 + [partner[2]] + path2)
    for i in peers if targets is None else ():  # routed: the routes cross these links where they load them
        a, b = t.a[i], t.b[i]
        one = descend(a)
        two = descend(b, one[0]) if one else None
        if one is None or two is None:  # a router with no host below (a group built without endpoints)
            untestable.append(i)
            why[(i, -1)] = NO_HOST_BELOW
            continue
        (h1, p1, path1), (h2, p2, path2) = one, two
        add("peer", min(a, b), None, (h1, p1), (h2, p2), [i], path1 + path2)
    # Waves: a test goes to the first wave after every earlier wave that used one of its NICs.
    # Routed tests also take their path's link directions: two tests of a wave never share one.
    free: dict[tuple[int, str], int] = {}  # (device, NIC) -> the first wave it is free in
    used: dict[tuple[int, int], set[int]] = {}  # (link, the device it leaves) -> waves that load it
    for test in tests:
        k1, k2 = (test.server, test.server_dev), (test.client, test.client_dev)
        w = max(free.get(k1, 0), free.get(k2, 0))
        hops = test.hops
        if hops:
            while any(w in used.get(h, ()) for h in hops):
                w += 1
            for h in hops:
                used.setdefault(h, set()).add(w)
        test.wave = w
        free[k1] = free[k2] = w + 1
    return tests, untestable


def _routed_tests(
    f: Fabric,
    name: str,
    routed: RoutedTargets,
    tiers: dict[int, int] | list[int],
    ends: dict[int, list[tuple[int, int, int, int]]],
    add: Callable[..., None],
    one_way: list[tuple[int, int]],
    why: dict[tuple[int, int], str],
) -> None:
    """Switch-link tests on the paths the subnet manager routes (the ftree model of
    facts/ib_routes.py, or the forwarding tables a site dumped: verify/routed_tests.py): pairs
    chosen so that every switch link direction some route loads is on a test's path. Per
    target, the source leaf whose path loads most directions not yet loaded; then any pair
    for what is left. A test names as under test the cables it loads first; ``one_way`` gets the
    (link, device it would leave) directions no route to an HCA port crosses."""
    t = f.links
    devices = f.devices
    targets, ib_nodes = routed.targets, routed.ib.nodes
    nodes_of: dict[tuple[int, int], tuple[int, int]] = {}  # each target's HCA port -> its switch node
    for key, _table, _lid in targets:
        nodes_of[key] = ib_nodes[key].links[1][0]
    leaves = sorted(ends)

    def switch_hops(leaf: int, dst: tuple[int, int], table: Mapping[tuple[int, int], int]) -> list[tuple[int, int]]:
        key = (leaf, -1)
        out: list[tuple[int, int]] = []
        for _ in range(64):
            if key[0] == nodes_of[dst][0]:
                return out
            peer, _p, link = ib_nodes[key].links[table[key]]
            out.append((link, key[0]))
            key = peer
        raise ValueError(f"route to {ib_nodes[dst].description} loops")

    candidates = {
        (ls, k): switch_hops(ls, d, table) for k, (d, table, _lid) in enumerate(targets) for ls in leaves if ls != nodes_of[d][0]
    }
    loaded = {h for hops in candidates.values() for h in hops}
    covered: set[tuple[int, int]] = set()
    chosen: list[tuple[int, int, list[tuple[int, int]]]] = []
    for k in range(len(targets)):
        best, gain = None, 0
        for ls in leaves:
            hops = candidates.get((ls, k))
            if hops is None:
                continue
            g = sum(1 for h in hops if h not in covered)
            if g > gain:
                best, gain = ls, g
        if best is not None:
            hops = candidates[(best, k)]
            chosen.append((best, k, hops))
            covered.update(hops)
    if covered != loaded:
        # What is left, by greedy set cover: the pair loading most directions still unloaded next
        # (lazily: a pair's gain only falls, so a stale heap entry is re-scored when it surfaces).
        # Ties go to the candidates' order, so the same routes give the same tests.
        heap = []
        for order, ((ls, k), hops) in enumerate(candidates.items()):
            g = sum(1 for h in hops if h not in covered)
            if g:
                heap.append((-g, order, ls, k))
        heapq.heapify(heap)
        while heap and covered != loaded:
            neg, order, ls, k = heapq.heappop(heap)
            hops = candidates[(ls, k)]
            g = sum(1 for h in hops if h not in covered)
            if not g:
                continue
            if g < -neg:
                heapq.heappush(heap, (-g, order, ls, k))
                continue
            chosen.append((ls, k, hops))
            covered.update(hops)
    uses: dict[tuple[int, int], int] = {}
    named: set[tuple[int, int]] = set()
    for ls, k, hops in chosen:
        d, _table, dlid = targets[k]
        srcs = [e for e in ends[ls] if e[2] != d[0]]
        if not srcs:
            continue
        _p, s_link, s_host, s_port = min(srcs, key=lambda e: uses.get((e[2], e[3]), 0))
        uses[(s_host, s_port)] = uses.get((s_host, s_port), 0) + 1
        d_link = ib_nodes[d].links[1][2]
        under, via = [], [s_link]
        for h in hops:
            if h in named or h[0] in under:
                via.append(h[0])
            else:
                under.append(h[0])
                named.add(h)
        via.append(d_link)
        top = max(tiers[x] for _link, x in hops) if hops else 1
        at = max((x for _l, x in hops), key=lambda x: tiers[x])
        for link, x in hops:  # the turn: the device the path leaves downwards first
            other = t.b[link] if t.a[link] == x else t.a[link]
            if tiers[other] < tiers[x]:
                at = x
                break
        leaf_d = nodes_of[d][0]
        rail_s, rail_d = devices[ls].coord("rail"), devices[leaf_d].coord("rail")
        path = [(s_link, s_host), *hops, (d_link, leaf_d)]
        add(f"tier{top - 1}-{top}", at, rail_s if rail_s == rail_d else None, d, (s_host, s_port), under, via, path, dlid)
    parallel: dict[tuple[int, int], list[int]] = {}  # (switch, switch) -> the cables between them
    for i in t.indices_of(name):
        a, b = t.a[i], t.b[i]
        if tiers[a] and tiers[b]:
            parallel.setdefault((min(a, b), max(a, b)), []).append(i)
    for i in t.indices_of(name):
        a, b = t.a[i], t.b[i]
        if not (tiers[a] and tiers[b]):
            continue
        group = parallel[(min(a, b), max(a, b))]
        for x, y in ((a, b), (b, a)):
            if (i, x) in covered:
                continue
            one_way.append((i, x))
            used = sum(1 for j in group if (j, x) in covered)
            way = "down" if tiers[y] < tiers[x] else "up" if tiers[y] > tiers[x] else "across"
            if used:
                why[(i, x)] = (
                    f"the routes from {devices[x].name} {way} to {devices[y].name} use {used} of the "
                    f"{len(group)} parallel cables (one output port per destination LID), not this one"
                )
            else:
                why[(i, x)] = f"no route to an HCA port goes {way} from {devices[x].name} to {devices[y].name}"


def _run_design(collective: str, scale: Scale) -> tuple[float, str, int, str]:
    """Design busbw, algorithm, knee size and basis of one run, from the collective model."""
    p = predict(collective, scale)
    parts = [f"{p.algorithm} over {scale.ranks} ranks in {scale.domains} domain{'s' if scale.domains != 1 else ''}"]
    if scale.scaleup_gbytes and scale.per_domain > 1:
        parts.append(f"scale-up {scale.scaleup_gbytes:g} GB/s")
    if scale.domains > 1:
        parts.append(f"NIC {scale.nic_gbytes:.6g} GB/s per rank")
    return p.busbw, p.algorithm, p.knee_bytes, f"{', '.join(parts)}; bound: {p.bound} (facts/collectives.py)"


def nccl_runs(f: Fabric, bp: Blueprint, hosts: Hosts, topologies: dict[str, HostTopology]) -> tuple[list[NcclRun], dict]:
    runs: list[NcclRun] = []
    hostfiles: dict[str, list[int]] = {}

    designs: dict[tuple[str, Scale], tuple[float, str, int, str]] = {}  # rails of one shape repeat 10^3 times at 131k

    def add(stage: str, group: str, hs: list[int], gpus: int, env: dict[str, str], scale: Scale) -> None:
        _model, tool, _nvls = accelerator_of(f, hs[0])
        for coll in COLLECTIVES:
            design = designs.get((coll, scale))
            if design is None:
                design = designs[(coll, scale)] = _run_design(coll, scale)
            busbw, algorithm, knee, basis = design
            runs.append(
                NcclRun(f"{stage}-{group}-{coll}", stage, group, coll, hs, gpus, env, busbw, basis, algorithm, knee, tool)
            )

    # Scale-up: every domain instance, all its accelerators.
    multi_host_domain: set[int] = set()
    for inst, hs in sorted(hosts.domain_hosts.items(), key=lambda x: x[1][0]):
        acc = hosts.accelerators(hs[0])
        if acc * len(hs) < 2:
            continue
        if len(hs) > 1:
            hostfiles[f"domain-{inst}"] = hs
            multi_host_domain.update(hs)
        env = {"NCCL_MNNVL_ENABLE": "1"} if len(hs) > 1 else {}
        add("domain", inst, hs, acc, env, domain_scale(f, hosts, hs))
    # Rails: per leaf group and rail, the accelerator beside that rail's NIC on every host.
    for name, fh in hosts.fabrics.items():
        tc = lossless_tclass(bp, name)
        # RoCE: the runs' traffic in the lossless class (PFC/ECN exercised), as the nccl/ env files set it.
        fabric_env = {"NCCL_IB_TC": str(tc)} if tc is not None else {}
        for g in fh.leaf_groups:
            ranks = [h for h in g.hosts if hosts.accelerators(h)]  # CPU servers: link tests only
            if len(ranks) < 2:
                continue
            hostfiles[g.name] = ranks
            first = ranks[0]
            model = f.devices[first].model
            topo = topologies.get(model)
            pairing = topo.gpu_of_nic() if topo is not None else {}
            data = f.layouts[model].ports_of("data")
            acc = hosts.accelerators(first)
            rdma = topo.rdma_names([f.layouts[model].names[p] for p in data]) if topo is not None else None
            for j, nic in enumerate(fh.nics[first]):
                k = data.index(nic.port)
                gpu = pairing.get(k, k * acc // max(len(data), 1))
                dev = rdma[k] if rdma is not None else nic.name
                label = f"rail{nic.rail}" if nic.rail is not None else f"nic{j}"
                env = {"CUDA_VISIBLE_DEVICES": str(gpu), "NCCL_IB_HCA": f"={dev}:1", **fabric_env}
                if first in multi_host_domain:
                    # Hosts of one NVLink domain would meet over NVLink: the rail run must use the NIC.
                    env["NCCL_MNNVL_ENABLE"] = "0"
                add("rail", f"{g.name}-{label}", ranks, 1, env, rail_scale(nic.gbps, len(ranks)))
        # Across the fabric: every host, every accelerator.
        hs = sorted(h for h in fh.nics if hosts.accelerators(h))
        if len(hs) > 1:
            hostfiles[f"fabric-{name}"] = hs
            add("fabric", name, hs, hosts.accelerators(hs[0]), dict(fabric_env), fabric_scale(f, hosts, name, hs))
    return runs, hostfiles


def lossless_tclass(bp: Blueprint, fabric: str) -> int | None:
    """The IP traffic-class byte of a RoCE fabric's lossless class (its DSCP over the 2 ECN bits:
    perftest's --tclass, NCCL_IB_TC), None without one."""
    spec = next((s for _, s, n in built_fabrics(bp) if n == fabric), None)
    eth = getattr(spec, "ethernet", None)
    return eth.lossless.roce_dscp << 2 if eth is not None and eth.lossless is not None else None


def _service_groups(bp: Blueprint, fabric: str) -> set[str]:
    """Endpoint groups attached as service endpoints (``su:`` set): io_guids.conf, not CNs."""
    for _, spec, name in built_fabrics(bp):
        if name == fabric:
            return {ep.group for ep in getattr(spec, "endpoints", []) if getattr(ep, "su", None) is not None}
    return set()


def _port_role(bp: Blueprint, fabric: str) -> str:
    """What the fabric's endpoints attach: "storage" or "inband" where any endpoint group names
    those ports, else "data" (endpoints without accelerators)."""
    for _, spec, name in built_fabrics(bp):
        if name == fabric:
            roles = {str(getattr(ep, "ports", "data")) for ep in getattr(spec, "endpoints", [])}
            return next((r for r in ("storage", "inband") if r in roles), "data")
    return "data"


def min_fraction(bp: Blueprint, role: str) -> float:
    """The perftest threshold of a fabric of this role (acceptance: in the blueprint)."""
    return bp.acceptance.storage_min_fraction if role in ("storage", "inband") else bp.acceptance.perftest_min_fraction


def _open_fabric(
    out: Plan, f: Fabric, bp: Blueprint, name: str, hosts: Hosts, cabled: dict[str, FabricLinks], routed: bool
) -> None:
    """A fabric's entries of the plan before its tests: its role, whether its tier tests are
    routed, its cable counts (all, switch-to-switch), and empty gap lists for the tests to fill."""
    out.one_way[name] = []
    out.why[name] = {}
    out.roles[name] = "data" if name in hosts.fabrics else _port_role(bp, name)
    out.routed[name] = routed
    fl = cabled.get(name)
    if fl is not None:
        tiers = local_tiers(f, name, fl)
        out.cables[name] = (len(fl), sum(1 for a, b in zip(fl.a, fl.b, strict=True) if tiers[a] and tiers[b]))


def plan(f: Fabric, bp: Blueprint) -> Plan:
    hosts = cached_host_facts(f, bp)
    topologies, _ = host_topologies(bp.catalogue.host_topology)
    rdma = rdma_names(f, topologies)
    out = Plan()
    # Every scale-out fabric: the accelerators' data fabrics, and storage / in-band fabrics cabled
    # to the hosts' storage ports (their own line rates and threshold, docs/acceptance.md).
    cabled = links_by_fabric(f)
    ib = set(infiniband_fabrics(f))
    for name in [n for _, _, n in built_fabrics(bp) if n in hosts.fabrics or n in cabled]:
        routes = None
        if name in ib:
            engine = routing_plan(bp, name, f.facts[name]).engine
            gap = route_gap(f, name, engine)
            routes = None if gap else ftree_routes(f, name, _service_groups(bp, name), engine)
        else:
            gap = ECMP
        _open_fabric(out, f, bp, name, hosts, cabled, routes is not None)
        if routes is None:
            out.unrouted[name] = gap
        out.perftests[name], out.untestable[name] = perftests(f, name, rdma, routes, out.one_way[name], out.why[name], cabled)
        if gap == ECMP:
            out.ecmp[name] = ecmp_switches(f, name, out.perftests[name], cabled)
    out.nccl, out.hostfiles = nccl_runs(f, bp, hosts, topologies)
    out.not_ranks = hosts.cpu_hosts
    return out


def routed_plan(f: Fabric, bp: Blueprint, name: str, routed: RoutedTargets) -> Plan:
    """The tier tests of one fabric on given routes (a dumped forwarding table's: snc
    routed-tests), alone: pairs over every switch-link direction the routes load, waves that
    share no direction; no host-link tests (the rendered plan has them) and no collective runs."""
    topologies, _ = host_topologies(bp.catalogue.host_topology)
    cabled = links_by_fabric(f)
    out = Plan()
    _open_fabric(out, f, bp, name, cached_host_facts(f, bp), cabled, True)
    out.perftests[name], out.untestable[name] = perftests(
        f, name, rdma_names(f, topologies), None, out.one_way[name], out.why[name], cabled, routed, endpoints=False
    )
    for test in out.perftests[name]:  # their own IDs: a rendered plan's tier test may share the rest
        test.id = f"{name}-routed-{test.id[len(name) + 1 :]}"
    _pack_waves(out.perftests[name])
    return out


def _pack_waves(tests: list[PerfTest]) -> None:
    """One stage, "routed", in as few waves as first fit gives: longest paths first, each test in
    the lowest wave where neither of its NICs nor any direction of its path is taken. (The rendered
    plan's waves run stage by stage and rail by rail; here a tier-1 and a tier-3 test may share one.)"""
    nics: dict[tuple[int, str], set[int]] = {}
    directions: dict[tuple[int, int], set[int]] = {}
    for test in sorted(tests, key=lambda t: (-len(t.hops), t.id)):
        taken = [nics.setdefault((test.server, test.server_dev), set()), nics.setdefault((test.client, test.client_dev), set())]
        taken += [directions.setdefault(h, set()) for h in test.hops]
        w = 0
        while any(w in used for used in taken):
            w += 1
        for used in taken:
            used.add(w)
        test.stage, test.rail, test.wave = "routed", None, w


def label_maker(f: Fabric, bp: Blueprint) -> Callable[[Iterable[int]], list[str]]:
    """A function giving the printed labels (naming.cable_label, ports as printed) of links by
    position; the per-device names are gathered once, so a plan of 10^5 tests labels its links in
    one pass."""
    fmt = cable_id_format(bp.naming.cable_label)
    t = f.links
    names = [d.name for d in f.devices]
    ports = [f.layouts[d.model].physical_names for d in f.devices]
    fabric_of = [s.fabric for s in t.specs]
    A, AP, B, BP, S = t.a, t.a_port, t.b, t.b_port, t.spec

    def labels(indices: Iterable[int]) -> list[str]:
        return [fmt(fabric_of[S[i]], names[A[i]], ports[A[i]][AP[i]], names[B[i]], ports[B[i]][BP[i]]) for i in indices]

    return labels


def kept_labels(f: Fabric, bp: Blueprint) -> Callable[[Iterable[int]], list[str]]:
    """:func:`label_maker` that formats each link's label once and keeps it: the acceptance files
    label the same cables three times (physical.tsv, perftest.tsv, switch_ports.tsv), 10^6 labels
    at 131k."""
    made = label_maker(f, bp)
    column: list[str | None] = [None] * len(f.links)

    def labels(indices: Iterable[int]) -> list[str]:
        wanted = indices if isinstance(indices, list) else list(indices)
        missing = [i for i in wanted if column[i] is None]
        for i, text in zip(missing, made(missing), strict=True):
            column[i] = text
        return [column[i] for i in wanted]  # type: ignore[misc]

    return labels


def cable_labels(f: Fabric, bp: Blueprint, indices: list[int]) -> list[str]:
    """Printed labels of some links (naming.cable_label)."""
    return label_maker(f, bp)(indices)
