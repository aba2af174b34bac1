"""Folded Clos / fat tree, 2 or 3 tiers, InfiniBand or Ethernet (transport is a field, one builder).

The builder first makes a :class:`ClosPlan` (pure arithmetic: sizes, parallel links, growth
limits; every impossible design fails here, before a device is made), then lays out devices and
links from it. Allocation is keyed by stable coordinates so that adding a scalable unit (SU)
leaves every existing cable where it is:

* node slots: SU ``su`` has ``su_nodes`` slots; compute endpoints fill free slots SU by SU, in
  endpoint order. Service endpoints (``su:`` set) take the top down ports of their SU's leaves,
  spread over the leaves first; the node slots those ports belong to stay empty.
* rail-optimised: NIC r of the node in slot s lands on leaf ``r * leaves_per_rail + s // d`` of
  its SU at down port ``s % d`` (d = leaf down ports); otherwise NIC r takes down position
  ``s * nics + r`` of the SU's leaves in order.
* leaf ``l = su * leaves_per_su + i`` (the global leaf index) sends up-port m to spine ``m // p1``
  of its pod, on spine port ``pos * p1 + m % p1`` (pos = l's place in its pod). A 3-tier spine of
  plane j sends up-port m to core ``m // p2`` of plane j, on core port ``pod * p2 + m % p2``.

``p1``/``p2`` (parallel links per leaf-spine / spine-core pair) are the largest divisors of the
up-port count that still let the planned size (``grow_to_sus``) fit the upper switch, so every
leaf reaches every spine of its pod, and every spine every core of its plane, with the same
number of links, and the fewest upper switches do it. The up-port counts themselves follow the
down ports in use in the planned SU / pod (or an explicit ``uplinks:``): ``builders/clos_plan.py``
explains the choice.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

from ..catalog.types import DeviceModel
from ..fabric.fabric_facts import ClosShape, ClosSizing, FatTreeFacts, GrowthReservation, LeafSetFacts, TierSizing
from ..findings import BuildError, error
from ..model.base import ratio_value
from ..model.clos import EthernetSettings, FatTree
from .addressing import LeafBlocks, assign_ethernet
from .base import BUILDERS
from .clos_plan import (
    ClosPlan,
    PlanError,
    TierPorts,
    TooBig,
    capacity,
    ceiling_nodes,
    data_radix,
    designs,
    plan_clos,
    speed_split,
    split_ports,
    uplinks_for,
)
from .context import BuildContext, did_you_mean
from .media import MediaChooser

# -- the builder ---------------------------------------------------------------------------------


@BUILDERS.register("fat-tree")
def build_fat_tree(ctx: BuildContext, spec: FatTree, path: tuple) -> None:
    """One Clos, or one per plane: plane p is the same tree over endpoint ports p, p + P, ...,
    under its own fabric name with its share of the address pools and ASN range."""
    if spec.planes == 1:
        _build_tree(ctx, spec, path, 0)
        return
    for plane, name in enumerate(spec.fabric_names):
        ethernet = _plane_ethernet(ctx, spec, plane, path) if spec.ethernet is not None else None
        _build_tree(ctx, spec.model_copy(update={"name": name, "ethernet": ethernet}), path, plane)


def _plane_ethernet(ctx: BuildContext, spec: FatTree, plane: int, path: tuple) -> EthernetSettings:
    """Plane ``plane``'s share of the Ethernet plan: the plane-th of 2^ceil(log2 P) equal subnets of
    every pool, and the plane-th of P equal runs of the ASN range (keyed by the plane, so adding a
    plane's devices never moves another plane's addresses)."""
    eth = spec.ethernet
    assert eth is not None
    planes = spec.planes
    bits = (planes - 1).bit_length()
    pools: dict[str, str] = {}
    for key in ("loopbacks", "p2p", "hosts"):
        value = getattr(eth.addressing, key)
        if value is None or value == "unnumbered":
            continue
        net = ipaddress.ip_network(value)
        if net.prefixlen + bits > net.max_prefixlen - (0 if key == "loopbacks" else 1):
            raise ctx.fail(
                "scaleout-planes",
                f"the {key} pool {value} cannot be split into {planes} planes",
                path + ("ethernet", "addressing", key),
                f"a pool of /{net.max_prefixlen - bits - 1} or larger",
            )
        pools[key] = str(next(itertools.islice(net.subnets(prefixlen_diff=bits), plane, None)))
    span = eth.bgp.asn_last - eth.bgp.asn_first + 1
    run = span // planes
    if run < 2:
        raise ctx.fail(
            "scaleout-planes",
            f"the ASN range {eth.bgp.asn_first}-{eth.bgp.asn_last} cannot give {planes} planes a range each",
            path + ("ethernet", "bgp"),
            "a wider asn_first-asn_last range",
        )
    first = eth.bgp.asn_first + plane * run
    return eth.model_copy(
        update={
            "addressing": eth.addressing.model_copy(update=pools),
            "bgp": eth.bgp.model_copy(update={"asn_first": first, "asn_last": first + run - 1}),
        }
    )


@dataclass
class _LeafSet:
    """The leaves of one endpoint group (``key``), or the fabric's own (``key`` None: its ``switch``,
    every group 'leaves' does not name, and the service endpoints). Each set fills SUs of its own;
    the sets' leaves, in order, take consecutive runs of the planned leaf coordinates (global leaf
    index, point-to-point and host blocks, spine down ports), so a set that grows within its
    grow_to_sus moves no address of another set."""

    key: str | None
    model_name: str
    switch_path: tuple
    ports: TierPorts  # the port capacity the SUs are laid out on
    ratio: Fraction  # the leaf ratio in ports
    speed_ratio: Fraction  # down port speed / up port speed
    su_nodes: int | None
    grow: int | None
    compute: list[tuple[int, str]]
    knobs: dict = field(default_factory=dict)
    plan: ClosPlan | None = None
    leaves: list[int] = field(default_factory=list)
    first: int = 0  # global leaf index of the set's first leaf
    su_first: int = 0  # the fabric's SU number of the set's first SU (SUs count on across the sets)
    spine_first: int = 0  # spine down-port position its first leaf starts at
    # 3 tiers: the set's pods take a run of the fabric's planned pods (pod numbers, spine indices
    # and loopbacks, spine point-to-point blocks, core down ports) after the sets before it.
    pod_first: int = 0  # the fabric's pod number of the set's first pod
    core_first: int = 0  # core down-port position its first pod starts at
    spine_p2p_first: int = 0  # spine point-to-point blocks (from the top) the sets before it plan
    spines: list[int] = field(default_factory=list)

    @property
    def planned_leaves(self) -> int:
        assert self.plan is not None
        return self.plan.planned_sus * self.plan.leaves_per_su


def _leaf_ports(
    ctx: BuildContext, spec: FatTree, name: str, model: DeviceModel, switch_path: tuple, path: tuple
) -> tuple[TierPorts, Fraction, Fraction, float]:
    """A leaf model's port capacity, its leaf ratio in ports, down/up speed ratio and down speed."""
    n_leaf = ratio_value(spec.oversubscription.leaf)
    leaf_up = spec.uplinks.leaf if spec.uplinks is not None else None
    try:
        mixed = speed_split(model)
    except PlanError as exc:
        raise ctx.fail(exc.rule, exc.message, switch_path if exc.field == ("switch",) else path + exc.field, exc.hint) from None
    if mixed is None:
        speeds = [g.speed_gbps for g in model.ports if g.role == "data"]
        return capacity(data_radix(model), n_leaf, leaf_up), n_leaf, Fraction(1), speeds[0]
    # The cages fix the split (down ports of one speed, up ports of a faster one); the declared
    # ratio is in bandwidth, so in ports it is N x up speed / down speed.
    split, down_gbps, up_gbps = mixed
    if leaf_up is not None and leaf_up > split.up:
        raise ctx.fail(
            "port-budget",
            f"{leaf_up} uplinks per leaf; {name} has {split.up} up ports ({up_gbps:g}G)",
            path + ("uplinks", "leaf"),
            f"at most {split.up}",
        )
    speed_ratio = Fraction(down_gbps) / Fraction(up_gbps)
    return TierPorts(split.down, leaf_up or split.up), n_leaf / speed_ratio, speed_ratio, down_gbps


def _leaf_sets(
    ctx: BuildContext, spec: FatTree, path: tuple, compute: list[tuple[int, str]], owners: list[str], services: bool
) -> list[_LeafSet]:
    """The fabric's leaf sets in build order: its own leaves (when any endpoint takes them), then
    one per 'leaves' entry, each reference checked at its line."""
    compute_groups = list(dict.fromkeys(ep.group for ep in spec.endpoints if ep.su is None))
    service_groups = {ep.group for ep in spec.endpoints if ep.su is not None}
    for key in spec.leaves:
        at = path + ("leaves", key)
        if key in service_groups:
            raise ctx.fail(
                "unknown-reference",
                f"{key} attaches as service endpoints (su set): they take the top ports of the fabric's own leaves",
                at,
                "name a compute endpoint group here, or drop 'su' from its endpoint",
            )
        if key not in compute_groups:
            raise ctx.fail(
                "unknown-reference",
                f"no compute endpoint group named {key!r} in fabric {spec.name}",
                at,
                did_you_mean(key, compute_groups) or f"endpoint groups: {', '.join(compute_groups)}",
            )
    sets: list[_LeafSet] = []
    entries: list[tuple[str | None, str, tuple, int | None, int | None, float | None]] = []
    own = [c for c, g in zip(compute, owners, strict=True) if g not in spec.leaves]
    if not spec.leaves or own or services:
        entries.append((None, spec.switch, path + ("switch",), spec.su_nodes, spec.grow_to_sus, None))
    for key, entry in spec.leaves.items():
        at = path + ("leaves", key)
        entries.append((key, entry.switch, at + ("switch",), entry.su_nodes or spec.su_nodes, entry.grow_to_sus, entry.down_gbps))
    for group, name, switch_path, su_nodes, grow, want_gbps in entries:
        model = _switch(ctx, spec, name, switch_path)
        ports, ratio, speed_ratio, down_gbps = _leaf_ports(ctx, spec, name, model, switch_path, path)
        if want_gbps is not None and abs(want_gbps - down_gbps) > 1e-9:
            runs = sorted(
                n
                for n, m in ctx.catalogue.devices.items()
                if m.kind == "switch"
                and m.transport in (spec.transport, "any")
                and data_radix(m) >= 2
                and _down_gbps(m) == want_gbps
            )
            raise ctx.fail(
                "leaf-speed",
                f"{name}'s down ports run {down_gbps:g}G as its cages are split; leaves.{group}.down_gbps asks {want_gbps:g}G",
                path + ("leaves", group, "down_gbps"),
                f"{spec.transport} switches whose down ports run {want_gbps:g}G: {', '.join(runs) or 'none in the catalogue'}",
            )
        mine = own if group is None else [c for c, g in zip(compute, owners, strict=True) if g == group]
        sets.append(_LeafSet(group, name, switch_path, ports, ratio, speed_ratio, su_nodes, grow, mine))
    return sets


def _down_gbps(model: DeviceModel) -> float | None:
    """The speed of a switch's down ports (its first data group's), None for a switch whose data
    groups do not split into down and up speeds."""
    try:
        mixed = speed_split(model)
    except PlanError:
        return None
    if mixed is not None:
        return mixed[1]
    return next((g.speed_gbps for g in model.ports if g.role == "data"), None)


def _up_gbps(model: DeviceModel) -> float:
    """The speed of a switch's up ports: its faster data group's, or its one data speed."""
    mixed = speed_split(model)
    if mixed is not None:
        return mixed[2]
    return next(g.speed_gbps for g in model.ports if g.role == "data")


def _share_spines(ctx: BuildContext, spec: FatTree, sets: list[_LeafSet], spine: TierPorts, path: tuple) -> int:
    """The fewest spines every leaf of every set reaches with the same number of links each: the
    smallest S dividing every set's uplink count whose planned leaves x (uplinks / S) fit a spine's
    down ports. Each set's plan gets its parallel links, and its planned leaves as the most it
    grows to without re-cabling: the spine ports beyond the plan are spare for whichever set grows
    first, so only the planned sizes are reachable together."""
    ups = [s.plan.leaf.up for s in sets if s.plan is not None]
    planned = [s.planned_leaves for s in sets]
    common = math.gcd(*ups)
    chosen = next(
        (
            n
            for n in range(1, common + 1)
            if common % n == 0 and sum(lv * u // n for lv, u in zip(planned, ups, strict=True)) <= spine.down
        ),
        None,
    )
    if chosen is None:
        need = sum(lv * u // common for lv, u in zip(planned, ups, strict=True))
        per_set = ", ".join(f"{s.key or spec.switch} {lv}" for s, lv in zip(sets, planned, strict=True))
        raise ctx.fail(
            "topology-too-big",
            f"the leaf sets' {sum(planned)} planned leaves ({per_set}) "
            f"need {need} down ports on each of {common} spines; a spine has {spine.down}",
            path + ("leaves",),
            "fewer SUs (grow_to_sus), fewer uplinks per leaf, or a spine switch of higher radix",
        )
    used = sum(lv * u // chosen for lv, u in zip(planned, ups, strict=True))
    offset = first_leaf = first_su = 0
    for s in sets:
        assert s.plan is not None
        p = s.plan.leaf.up // chosen
        s.plan = replace(s.plan, p1=p, spines_per_pod=chosen, leaves_per_pod=s.planned_leaves)
        s.first, s.su_first, s.spine_first = first_leaf, first_su, offset
        first_leaf += s.planned_leaves
        first_su += s.plan.planned_sus
        offset += s.planned_leaves * p
    return used


def _share_pods(
    ctx: BuildContext, spec: FatTree, sets: list[_LeafSet], spine: TierPorts, k_core: int, path: tuple
) -> tuple[int, int]:
    """3 tiers: every pod holds leaves of one set, every pod has the same S spines (the planes), and
    the plane-j spine of every pod of every set reaches every core of plane j with the same number
    of links per pod of a set. S is the largest common divisor of the sets' uplink counts (so each
    leaf sends ``up / S`` links to every spine of its pod, and pods are as large as the spines take,
    as one set's plan makes them); a set's pod is the most whole SUs whose leaves x links fit a
    spine's down ports (or ``leaves_per_pod``), its spines' uplinks follow the pod's ports in use.
    The cores per plane are the fewest C dividing every set's spine uplink count whose planned pods
    x (spine uplinks / C) fit a core. Each set's pods take a run of the planned pods (pod numbers,
    spines, core down ports) after the sets before it, so growing one set within its grow_to_sus
    moves nothing of another. Returns (the most spine down ports a pod uses, core ports used)."""
    n_spine = ratio_value(spec.oversubscription.spine)
    spine_up = spec.uplinks.spine if spec.uplinks is not None else None
    ups = [s.plan.leaf.up for s in sets if s.plan is not None]
    per_plane = math.gcd(*ups)
    shapes: list[tuple[int, int, int, int, int]] = []  # per set: p1, leaves per pod, spine uplinks, built, planned pods
    for s in sets:
        assert s.plan is not None
        lps, up = s.plan.leaves_per_su, s.plan.leaf.up
        p1 = up // per_plane
        name = s.key or spec.switch
        per_pod = spec.leaves_per_pod or (spine.down // p1 // lps) * lps
        if per_pod == 0 or per_pod * p1 > spine.down:
            pods = f"a pod of {per_pod} leaves" if spec.leaves_per_pod else f"one SU of {lps} leaves"
            raise ctx.fail(
                "pod-size",
                f"the {name} leaves send {up} uplinks over the {per_plane} spines per pod that every leaf set shares "
                f"(the largest common divisor of the sets' uplinks {', '.join(map(str, ups))}): {p1} links per spine, so "
                f"{pods} needs {max(per_pod, lps) * p1} down ports on each spine; a spine has {spine.down}",
                path + (("leaves_per_pod",) if spec.leaves_per_pod else ("leaves",) + ((s.key,) if s.key else ())),
                "fewer nodes per SU (su_nodes), uplink counts with a larger common divisor (uplinks.leaf or the leaf "
                "ratio), or a spine switch of higher radix",
            )
        used = per_pod * p1
        s_up = min(spine_up or uplinks_for(used, n_spine), spine.up)
        sus_per_pod = per_pod // lps
        shapes.append((p1, per_pod, s_up, -(-s.plan.built_sus // sus_per_pod), -(-s.plan.planned_sus // sus_per_pod)))
    common = math.gcd(*(sh[2] for sh in shapes))
    need = [(sh[4], sh[2]) for sh in shapes]
    cpp = next((c for c in range(1, common + 1) if common % c == 0 and sum(pp * u // c for pp, u in need) <= k_core), None)
    if cpp is None:
        per_set = ", ".join(f"{s.key or spec.switch} {sh[4]}" for s, sh in zip(sets, shapes, strict=True))
        raise ctx.fail(
            "topology-too-big",
            f"the leaf sets' {sum(sh[4] for sh in shapes)} planned pods ({per_set}) need "
            f"{sum(pp * u // common for pp, u in need)} down ports on each of {common} cores per plane; "
            f"a core has {k_core}",
            path + ("leaves",),
            "fewer SUs (grow_to_sus), a higher spine ratio (fewer spine uplinks), or a core switch of higher radix",
        )
    pod = core = first_leaf = first_su = spine_p2p = 0
    for s, (p1, per_pod, s_up, built, planned) in zip(sets, shapes, strict=True):
        assert s.plan is not None
        s.plan = replace(
            s.plan,
            p1=p1,
            spines_per_pod=per_plane,
            leaves_per_pod=per_pod,
            spine=TierPorts(spine.down, s_up),
            spine_used=per_pod * p1,
            built_pods=built,
            planned_pods=planned,
            p2=s_up // cpp,
            cores_per_plane=cpp,
        )
        s.first, s.su_first, s.pod_first, s.core_first, s.spine_p2p_first = first_leaf, first_su, pod, core, spine_p2p
        first_leaf += s.planned_leaves
        first_su += s.plan.planned_sus
        pod += planned
        core += planned * (s_up // cpp)
        spine_p2p += planned * per_plane * s_up
    return max(sh[1] * sh[0] for sh in shapes), core


def _build_tree(ctx: BuildContext, spec: FatTree, path: tuple, plane: int) -> None:
    f = ctx.fabric
    spine_key = "spine_switch" if spec.spine_switch else "switch"
    core_key = "core_switch" if spec.core_switch else spine_key
    spine_name = spec.spine_switch or spec.switch
    core_name = spec.core_switch or spine_name
    leaf_m = _switch(ctx, spec, spec.switch, path + ("switch",))
    spine_m = _switch(ctx, spec, spine_name, path + (spine_key,))
    core_m = _switch(ctx, spec, core_name, path + (core_key,))
    n_spine = ratio_value(spec.oversubscription.spine)
    explicit = spec.uplinks
    leaf_up = explicit.leaf if explicit is not None else None
    spine_up = explicit.spine if explicit is not None else None
    k_leaf, k_spine = data_radix(leaf_m), data_radix(spine_m)
    for key, k, given in (("leaf", k_leaf, leaf_up), ("spine", k_spine, spine_up)):
        if given is not None and given >= k:
            raise ctx.fail(
                "port-budget",
                f"{given} uplinks per {key} leave no down port on a {k}-port switch",
                path + ("uplinks", key),
                f"at most {k - 1}",
            )
    compute, service, owners = _endpoints(ctx, spec, path)
    sets = _leaf_sets(ctx, spec, path, compute, owners, bool(service))
    # The top tier has no uplinks: all its ports face down.
    spine_ports = capacity(k_spine, n_spine, spine_up) if spec.tiers == 3 else TierPorts(k_spine, 0)
    k_core = data_radix(core_m) if spec.tiers == 3 else 0

    ports_of = _PlanePorts(ctx, spec, plane, path)
    service_ports: dict[int, int] = {}
    for su, dev, port_role in service:
        service_ports[su] = service_ports.get(su, 0) + len(ports_of(f.devices[dev].model, port_role))
    for s in sets:
        if leaf_up is not None and leaf_up >= data_radix(f.models[s.model_name]):
            raise ctx.fail(
                "port-budget",
                f"{leaf_up} uplinks per leaf leave no down port on a {data_radix(f.models[s.model_name])}-port {s.model_name}",
                path + ("uplinks", "leaf"),
                f"at most {data_radix(f.models[s.model_name]) - 1}",
            )
        s.knobs = {
            "rail_optimized": spec.rail_optimized,
            "nics": _nics(ctx, spec, s.compute, ports_of, path),
            "service_ports": service_ports if s.key is None else {},
            "su_nodes": s.su_nodes,
            "leaves_per_pod": spec.leaves_per_pod,
            "leaf_ratio": s.ratio,
            "leaf_uplinks": leaf_up,
        }
        try:
            s.plan = plan_clos(
                tiers=spec.tiers,
                leaf=s.ports,
                spine=spine_ports,
                core_radix=k_core,
                nodes=len(s.compute),
                grow_to_sus=s.grow,
                spine_ratio=n_spine,
                spine_uplinks=spine_up,
                **s.knobs,
            )
        except TooBig as exc:
            raise BuildError(
                [error(exc.rule, exc.message, path + exc.field, _alternatives(ctx, spec, exc, s.knobs, s.ports, spine_m))]
            ) from None
        except PlanError as exc:
            own = s.key is not None and exc.field == ("grow_to_sus",)
            field_path = path + ("leaves", s.key) + exc.field if own and s.key is not None else path + exc.field
            raise ctx.fail(exc.rule, exc.message, field_path, exc.hint) from None
    pods_shared = len(sets) > 1 and spec.tiers == 3
    core_used = 0
    if pods_shared:
        spine_used, core_used = _share_pods(ctx, spec, sets, spine_ports, k_core, path)
    else:
        spine_used = _share_spines(ctx, spec, sets, spine_ports, path) if len(sets) > 1 else 0
    plan = sets[0].plan
    assert plan is not None

    chooser = ctx.chooser(spec.media, path + ("media",) if spec.media else ("media",))
    for s in sets:
        assert s.plan is not None
        s.leaves = _leaves(ctx, spec, s, path, plane)
    for s in sets:
        assert s.plan is not None
        leaf_data = ctx.fabric.layouts[s.model_name].ports_of("data")
        d = s.plan.leaf.down
        _attach(ctx, spec, s.plan, s.leaves, s.compute, service if s.key is None else [], leaf_data[:d], ports_of, chooser, path)
    leaf_data = ctx.fabric.layouts[sets[0].model_name].ports_of("data")
    d = plan.leaf.down
    down_ports, up_ports = leaf_data[:d], leaf_data[d : d + plan.leaf.up]

    spine_data = ctx.fabric.layouts[spine_name].ports_of("data")
    spp, per_pod, p1 = plan.spines_per_pod, plan.leaves_per_pod, plan.p1
    if pods_shared:  # every set's pods in turn, each pod's leaves under its own spines
        spines = []
        for s in sets:
            assert s.plan is not None
            s.spines = _spines(ctx, spec, s.plan, spine_name, path, plane, s.pod_first)
            spines += s.spines
            data = ctx.fabric.layouts[s.model_name].ports_of("data")
            ups = data[s.plan.leaf.down : s.plan.leaf.down + s.plan.leaf.up]
            lpp = s.plan.leaves_per_pod
            for pod in range(s.plan.built_pods):
                pod_spines = s.spines[pod * spp : (pod + 1) * spp]
                pod_leaves = s.leaves[pod * lpp : (pod + 1) * lpp]
                _wire_up(ctx, spec.name, pod_leaves, ups, pod_spines, spine_data, s.plan.p1, chooser, path, "leaf-spine")
    else:
        spines = _spines(ctx, spec, plan, spine_name, path, plane)
    if len(sets) == 1:
        leaves = sets[0].leaves
        for pod in range(plan.built_pods):
            pod_spines = spines[pod * spp : (pod + 1) * spp]
            first = pod * per_pod
            _wire_up(
                ctx, spec.name, leaves[first : first + per_pod], up_ports, pod_spines, spine_data, p1, chooser, path, "leaf-spine"
            )
    elif not pods_shared:  # 2 tiers: every set's leaves under the same spines, each set on its run of spine ports
        for s in sets:
            assert s.plan is not None
            data = ctx.fabric.layouts[s.model_name].ports_of("data")
            ups = data[s.plan.leaf.down : s.plan.leaf.down + s.plan.leaf.up]
            _wire_up(ctx, spec.name, s.leaves, ups, spines, spine_data[s.spine_first :], s.plan.p1, chooser, path, "leaf-spine")

    cores: list[int] = []
    spine_up_ports: list[int] = []
    if spec.tiers == 3:
        core_data = ctx.fabric.layouts[core_name].ports_of("data")
        # The longest run of spine uplinks (sets may cable fewer): an uplink's position is its place in it.
        most_up = max(s.plan.spine.up for s in sets if s.plan is not None)
        spine_up_ports = spine_data[plan.spine.down : plan.spine.down + most_up]
        cores = _cores(ctx, spec, plan, core_name, path, plane * plan.cores)
        cpp = plan.cores_per_plane
        for j in range(spp):
            plane_cores = cores[j * cpp : (j + 1) * cpp]
            if not pods_shared:
                plane_spines = spines[j::spp]  # the plane-j spine of every built pod, in pod order
                _wire_up(
                    ctx, spec.name, plane_spines, spine_up_ports, plane_cores, core_data, plan.p2, chooser, path, "spine-core"
                )
                continue
            for s in sets:  # each set's pods on its own run of core down ports
                assert s.plan is not None
                ups = spine_up_ports[: s.plan.spine.up]
                lower = s.spines[j::spp]
                _wire_up(
                    ctx, spec.name, lower, ups, plane_cores, core_data[s.core_first :], s.plan.p2, chooser, path, "spine-core"
                )

    first_set = sets[0]
    k_first = data_radix(f.models[first_set.model_name])
    n_first = len(first_set.compute)
    facts: FatTreeFacts = {
        **_facts(spec, plan, n_first, len(service), service_ports, k_first, k_spine, up_ports, spine_up_ports),
        "leaf_down_ports": list(down_ports),  # position q of a leaf down port: its host-link block offset
        "ceiling_nodes": ceiling_nodes(spec.tiers, first_set.ports, spine_ports, k_core, **first_set.knobs),
        **_sizing(spec, plan, first_set.knobs, n_first, first_set.ports, k_spine, first_set.speed_ratio),
    }
    if len(sets) > 1:
        _merge_sets(ctx, spec, facts, sets, spine_used, core_used)
    all_leaves = [dev for s in sets for dev in s.leaves]
    if spec.ethernet is not None:
        blocks = None
        if len(sets) > 1:
            blocks = _leaf_blocks(sets)
        facts["ethernet"] = assign_ethernet(
            f, spec.ethernet, plan, all_leaves, spines, cores, path + ("ethernet",), leaf_blocks=blocks
        )
    f.facts[spec.name] = facts


def _leaf_blocks(sets: list[_LeafSet]) -> LeafBlocks:
    """Per leaf (in build order) its global leaf index and first point-to-point and host block:
    each set's leaves take a run of the planned coordinates (its planned leaves x its uplinks,
    x its down ports) after the sets before it."""
    rows: list[tuple[int, int, int]] = []
    p2p = host = 0
    for s in sets:
        assert s.plan is not None
        up, down = s.plan.leaf.up, s.plan.leaf.down
        rows.extend((s.first + i, p2p + i * up, host + i * down) for i in range(len(s.leaves)))
        p2p += s.planned_leaves * up
        host += s.planned_leaves * down
    last = sets[-1]
    assert last.plan is not None
    # 3 tiers: a set's spines are the fabric's spines pod_first x S on, their uplink blocks the
    # run after the sets before it (counted from the top of the pool).
    spines: list[tuple[int, int]] = []
    if last.plan.tiers == 3:
        for s in sets:
            assert s.plan is not None
            spp, up = s.plan.spines_per_pod, s.plan.spine.up
            spines.extend((s.pod_first * spp + k, s.spine_p2p_first + (k + 1) * up) for k in range(len(s.spines)))
    return LeafBlocks(
        rows=rows,
        down=[s.plan.leaf.down for s in sets for _ in s.leaves if s.plan is not None],
        up=[s.plan.leaf.up for s in sets for _ in s.leaves if s.plan is not None],
        planned_leaves=last.first + last.planned_leaves,
        planned_p2p=p2p,
        planned_hosts=host,
        spines=spines,
        planned_pods=last.pod_first + last.plan.planned_pods if last.plan.tiers == 3 else 0,
        planned_spine_p2p=last.spine_p2p_first + last.plan.planned_pods * last.plan.spines_per_pod * last.plan.spine.up
        if last.plan.tiers == 3
        else 0,
    )


def _merge_sets(
    ctx: BuildContext, spec: FatTree, facts: FatTreeFacts, sets: list[_LeafSet], spine_used: int, core_used: int
) -> None:
    """Fabric totals over the leaf sets (nodes, leaves, spine ports, growth) and each set's own
    shape under ``leaf_sets``; the per-leaf keys at the top stay the first set's. In 3 tiers also
    each set's pods (their spines' uplinks and core ports) and the fabric's pod and spine totals."""
    f = ctx.fabric
    rows: list[LeafSetFacts] = []
    for s in sets:
        plan = s.plan
        assert plan is not None
        data = f.layouts[s.model_name].ports_of("data")
        d, u = plan.leaf.down, plan.leaf.up
        model = f.models[s.model_name]
        rows.append(
            {
                "group": s.key,
                "switch": s.model_name,
                "path": s.switch_path,
                "nodes": len(s.compute),
                "rails": plan.nics,
                "su_nodes": plan.su_nodes,
                "leaves_per_su": plan.leaves_per_su,
                "built_sus": plan.built_sus,
                "planned_sus": plan.planned_sus,
                "leaves": plan.leaves,
                "first_leaf": s.first,
                "first_su": s.su_first,
                "leaf_radix": data_radix(model),
                "leaf_down": d,
                "leaf_up": u,
                "leaf_down_used": plan.leaf_used,
                "down_gbps": _down_gbps(model) or 0.0,
                "up_gbps": _up_gbps(model),
                "speed_ratio": str(s.speed_ratio),
                "leaf_spine_parallel": plan.p1,
                "spine_first_port": s.spine_first,
                "max_sus": plan.max_sus,
                "max_nodes": plan.max_nodes,
                "leaf_down_ports": data[:d],
                "leaf_up_ports": data[d : d + u],
                "sized": uplinks_for(plan.leaf_used, s.ratio),
            }
        )
        if spec.tiers == 3:
            # A set grows within its planned SUs (the next set's coordinates start after them).
            rows[-1]["max_sus"] = plan.planned_sus
            rows[-1]["max_nodes"] = plan.planned_sus * plan.su_nodes - sum(len(r) for r in plan.reserved.values())
            rows[-1]["pods"] = {
                "leaves_per_pod": plan.leaves_per_pod,
                "built": plan.built_pods,
                "planned": plan.planned_pods,
                "first": s.pod_first,
                "spine_down_used": plan.spine_used,
                "spine_up": plan.spine.up,
                "spine_core_parallel": plan.p2,
                "core_first_port": s.core_first,
                "sized": uplinks_for(plan.spine_used, ratio_value(spec.oversubscription.spine)),
            }
    facts["leaf_sets"] = rows
    facts["nodes"] = sum(r["nodes"] for r in rows)
    facts["leaves"] = sum(r["leaves"] for r in rows)
    facts["spine_down_used"] = spine_used
    facts["max_nodes"] = sum(r["max_nodes"] for r in rows)
    facts["max_leaves"] = sum(r["max_sus"] * r["leaves_per_su"] for r in rows)
    facts["max_endpoint_ports"] = sum(r["max_sus"] * r["leaves_per_su"] * r["leaf_down"] for r in rows)
    facts["ceiling_nodes"] = facts["max_nodes"]  # no one-link-per-pair ceiling is stated for several leaf models
    # The leaf design figure is the set that uses the fewest of its ports (the one a threshold is about).
    leaf_design = min(r["leaf_down_used"] + r["leaf_up"] for r in rows)
    facts["ports_planned"] = {**facts["ports_planned"], "leaf": leaf_design, "spine": spine_used}
    facts["designs"] = []  # the 2- and 3-tier alternatives are for one leaf model
    facts["growth_reservation"] = None
    # The leaf tier's designed ratio: the set that is most oversubscribed (down in use x speed / up).
    worst = max(rows, key=lambda r: Fraction(r["leaf_down_used"], r["leaf_up"]) * Fraction(r["speed_ratio"]))
    leaf: TierSizing = {
        "declared": spec.oversubscription.leaf,
        "down_used": worst["leaf_down_used"],
        "uplinks": worst["leaf_up"],
        "sized": worst["sized"],
        "explicit": spec.uplinks is not None and spec.uplinks.leaf is not None,
    }
    if worst["speed_ratio"] != "1":
        leaf["speed_ratio"] = worst["speed_ratio"]
    facts["sizing"] = {**facts["sizing"], "leaf": leaf}
    if spec.tiers == 3:
        _merge_pods(spec, facts, rows, core_used)


def _merge_pods(spec: FatTree, facts: FatTreeFacts, rows: list[LeafSetFacts], core_used: int) -> None:
    """3-tier totals over the sets' pods; the per-spine keys at the top stay the first set's but
    the spine sizing, the most oversubscribed set's pod."""
    pods = [r["pods"] for r in rows if "pods" in r]
    spp = facts["spines_per_pod"]
    facts["pods"] = sum(p["built"] for p in pods)
    facts["planned_pods"] = sum(p["planned"] for p in pods)
    facts["max_pods"] = facts["planned_pods"]
    facts["spines"] = facts["pods"] * spp
    facts["max_sus"] = sum(r["max_sus"] for r in rows)
    facts["ports_planned"] = {
        **facts["ports_planned"],
        "spine": min(p["spine_down_used"] + p["spine_up"] for p in pods),
        "core": core_used,
    }
    worst = max(pods, key=lambda p: Fraction(p["spine_down_used"], p["spine_up"]))
    facts["sizing"] = {
        **facts["sizing"],
        "spine": {
            "declared": spec.oversubscription.spine,
            "down_used": worst["spine_down_used"],
            "uplinks": worst["spine_up"],
            "sized": worst["sized"],
            "explicit": spec.uplinks is not None and spec.uplinks.spine is not None,
        },
    }


def _sizing(
    spec: FatTree, plan: ClosPlan, knobs: dict, nodes: int, leaf_ports: TierPorts, k_spine: int, speed_ratio: Fraction
) -> ClosSizing:
    """Declared against designed ratios per tier, the growth reservation, and the same endpoints
    in 2 and 3 tiers (built and planned), as plain data for the checks and ``snc explain``.
    ``speed_ratio``: a leaf's down port speed over its up port speed (1 but for a leaf of two speeds)."""
    explicit = spec.uplinks
    n_spine = ratio_value(spec.oversubscription.spine)
    leaf: TierSizing = {
        "declared": spec.oversubscription.leaf,
        "down_used": plan.leaf_used,
        "uplinks": plan.leaf.up,
        "sized": uplinks_for(plan.leaf_used, knobs["leaf_ratio"]),
        "explicit": explicit is not None and explicit.leaf is not None,
    }
    if speed_ratio != 1:
        leaf["speed_ratio"] = str(speed_ratio)
    tiers: dict[str, TierSizing] = {"leaf": leaf}
    if spec.tiers == 3:
        tiers["spine"] = {
            "declared": spec.oversubscription.spine,
            "down_used": plan.spine_used,
            "uplinks": plan.spine.up,
            "sized": uplinks_for(plan.spine_used, n_spine),
            "explicit": explicit is not None and explicit.spine is not None,
        }
    options = designs(
        k_spine=k_spine,
        spine_ratio=n_spine,
        grow_to_sus=spec.grow_to_sus,
        built_sus=plan.built_sus,
        nodes=nodes,
        leaf=leaf_ports,
        **knobs,
    )
    same_built = next((o for o in options if o.tiers == spec.tiers and o.scope == "built"), None)
    reservation: GrowthReservation | None = None
    if same_built is not None and plan.planned_sus > plan.built_sus:
        reservation = {
            "grow_to_sus": plan.planned_sus,
            "built_sus": plan.built_sus,
            "spines": plan.spines - same_built.spines,
            "cores": plan.cores - same_built.cores,
            "switch_links": plan.switch_links - same_built.switch_links,
            "max_nodes": plan.max_nodes,
            "max_nodes_built_only": same_built.max_nodes,
        }
    return {"sizing": tiers, "growth_reservation": reservation, "designs": [o.as_dict() for o in options]}


def _switch(ctx: BuildContext, spec: FatTree, name: str, path: tuple) -> DeviceModel:
    model = ctx.model(name, path, "switch")
    if model.transport not in (spec.transport, "any"):
        fits = sorted(n for n, m in ctx.catalogue.devices.items() if m.kind == "switch" and m.transport == spec.transport)
        raise ctx.fail(
            "transport",
            f"{name!r} is an {model.transport} switch; fabric {spec.name!r} is transport: {spec.transport}",
            path,
            f"{spec.transport} switches: {', '.join(fits) or 'none in the catalogue'}",
        )
    if data_radix(model) < 2:
        raise ctx.fail("port-budget", f"{name!r} has fewer than 2 data ports: it cannot be a Clos switch", path)
    return model


def _endpoints(
    ctx: BuildContext, spec: FatTree, path: tuple
) -> tuple[list[tuple[int, str]], list[tuple[int, int, str]], list[str]]:
    """Compute endpoints as (device, port role) in fill order, service ones as (su, device, port
    role), and the endpoint group of each compute endpoint. The port role is the endpoint's
    ``ports`` (data by default; storage or inband for a storage / in-band fabric on the same nodes)."""
    f = ctx.fabric
    compute: list[tuple[int, str]] = []
    service: list[tuple[int, int, str]] = []
    owners: list[str] = []
    for i, ep in enumerate(spec.endpoints):
        if ep.group not in ctx.groups:
            raise ctx.fail(
                "unknown-reference",
                f"no node group or scale-up domain named {ep.group!r}",
                path + ("endpoints", i, "group"),
                did_you_mean(ep.group, sorted(ctx.groups)),
            )
        # A scale-up domain lists its switch boards too; only devices with ports of the role attach.
        role = ep.ports
        devs = [dev for dev in ctx.groups[ep.group] if f.layouts[f.devices[dev].model].has_role(role)]
        if not devs:
            models = sorted({f.devices[dev].model for dev in ctx.groups[ep.group]})
            raise ctx.fail(
                "no-data-ports",
                f"{ep.group} has no devices with {role} ports for a scale-out fabric (models: {', '.join(models)})",
                path + ("endpoints", i) + (("ports",) if role != "data" else ()),
                "name a port role its model has (catalogue ports: data, storage, inband)",
            )
        if ep.su is None:
            compute.extend((dev, role) for dev in devs)
            owners.extend(ep.group for _ in devs)
        else:
            service.extend((ep.su, dev, role) for dev in devs)
    return compute, service, owners


class _PlanePorts:
    """An endpoint model's ports of a role that one plane takes: all of them (one plane), or
    ports ``plane, plane + P, ...`` (a dual-port NIC lists its two ports one after the other, so
    plane p takes port p of every NIC). The port count must be a multiple of P."""

    def __init__(self, ctx: BuildContext, spec: FatTree, plane: int, path: tuple) -> None:
        self.ctx, self.spec, self.plane, self.path = ctx, spec, plane, path
        self.cache: dict[tuple[str, str], list[int]] = {}

    def __call__(self, model: str, role: str) -> list[int]:
        key = (model, role)
        got = self.cache.get(key)
        if got is None:
            ports = self.ctx.fabric.layouts[model].ports_of(role)
            planes = self.spec.planes
            if len(ports) % planes:
                raise self.ctx.fail(
                    "scaleout-planes",
                    f"{model} has {len(ports)} {role} ports: not a whole number per plane over {planes} planes",
                    self.path + ("planes",),
                    f"planes that divide {len(ports)}, or endpoints with a multiple of {planes} {role} ports",
                )
            got = self.cache[key] = ports[self.plane :: planes]
        return got


def _nics(ctx: BuildContext, spec: FatTree, compute: list[tuple[int, str]], ports_of: _PlanePorts, path: tuple) -> int:
    f = ctx.fabric
    counts: dict[tuple[str, str], int] = {}
    for dev, role in compute:
        key = (f.devices[dev].model, role)
        if key not in counts:
            counts[key] = len(ports_of(*key))
    if len(set(counts.values())) > 1 and spec.rail_optimized:
        raise ctx.fail(
            "rails",
            "rail-optimised endpoints must all have the same number of ports (one per rail): "
            + ", ".join(f"{m} {r}={n}" for (m, r), n in sorted(counts.items())),
            path + ("endpoints",),
            "split them into separate fabrics or set rail_optimized: false",
        )
    return max(counts.values(), default=1)


def _leaves(ctx: BuildContext, spec: FatTree, leaf_set: _LeafSet, path: tuple, plane: int) -> list[int]:
    """All leaves of a set's built SUs (a partly filled SU gets all its leaves), by global index.
    Placement slots go SU by SU, each SU's leaves of every fabric plane together (plane 0's, then
    plane 1's, ...), after the planned leaves of the sets before it: an SU's leaves sit by its
    nodes, and a plane that grows by an SU appends its leaves instead of pushing every later
    plane's along the row (with plane after plane, one SU more moved half the leaves of a 4-plane
    131k fabric). With one plane, the slot is the leaf's global index. SUs count on across the
    sets (the set's first SU is ``su_first``), so an SU number names one SU of the fabric; a
    group's own leaves carry its name (naming field ``group``)."""
    plan = leaf_set.plan
    assert plan is not None
    name, lps, lpr, group = spec.name, plan.leaves_per_su, plan.leaves_per_rail, leaf_set.key
    default = "{fabric}-leaf-su{su:03d}-{leaf:02d}" if group is None else "{fabric}-leaf-{group}-su{su:03d}-{leaf:02d}"
    out: list[int] = []
    for local_su in range(plan.built_sus):
        su = leaf_set.su_first + local_su
        for i in range(lps):
            index = local_su * lps + i
            rail = i // lpr if plan.rail_optimized else None
            coords = (("fabric", name), ("su", su), ("leaf", i)) + ((("rail", rail),) if rail is not None else ())
            lname = ctx.name(
                "leaf",
                default,
                path,
                fabric=name,
                group=group or "",
                su=su + 1,
                leaf=i + 1,
                rail=rail or 0,
                pod=leaf_set.pod_first + index // plan.leaves_per_pod + 1 if plan.leaves_per_pod else 1,
                index=leaf_set.first + index + 1,
            )
            dev = ctx.add_device(
                name=lname,
                role="leaf",
                model=leaf_set.model_name,
                group=name,
                placement=spec.placement.leaf,
                slot=spec.planes * (leaf_set.first + local_su * lps) + plane * lps + i,
                origin=path,
                coords=coords,
                tier=1,
            )
            out.append(dev.index)
    return out


def _spines(
    ctx: BuildContext, spec: FatTree, plan: ClosPlan, model: str, path: tuple, fabric_plane: int, pod_first: int = 0
) -> list[int]:
    """Spines of the built pods, by global index pod * spines_per_pod + plane (a leaf set's pods
    are the fabric's pods ``pod_first`` on). Placement slots go pod by pod, each pod's spines of
    every fabric plane together, as the leaves go SU by SU: a new pod appends its spines."""
    name, spp = spec.name, plan.spines_per_pod
    default = "{fabric}-spine-{spine:03d}" if spec.tiers == 2 else "{fabric}-spine-p{pod:02d}-{spine:02d}"
    out: list[int] = []
    for pod in range(pod_first, pod_first + plan.built_pods):
        for j in range(spp):
            coords = (("fabric", name), ("plane", j)) if spec.tiers == 2 else (("fabric", name), ("pod", pod), ("plane", j))
            dev = ctx.add_device(
                name=ctx.name(
                    "spine", default, path, fabric=name, pod=pod + 1, spine=j + 1, plane=j + 1, index=pod * spp + j + 1
                ),
                role="spine",
                model=model,
                group=name,
                placement=spec.placement.spine,
                slot=(spec.planes * pod + fabric_plane) * spp + j,
                origin=path,
                coords=coords,
                tier=2,
            )
            out.append(dev.index)
    return out


def _cores(ctx: BuildContext, spec: FatTree, plan: ClosPlan, model: str, path: tuple, first_slot: int) -> list[int]:
    """Every core of the plan (sized for grow_to_sus), by global index plane * cores_per_plane + core."""
    name, cpp = spec.name, plan.cores_per_plane
    out: list[int] = []
    for plane in range(plan.spines_per_pod):
        for c in range(cpp):
            dev = ctx.add_device(
                name=ctx.name(
                    "core",
                    "{fabric}-core-{plane:02d}-{core:02d}",
                    path,
                    fabric=name,
                    plane=plane + 1,
                    core=c + 1,
                    index=plane * cpp + c + 1,
                ),
                role="core",
                model=model,
                group=name,
                placement=spec.placement.core,
                slot=first_slot + plane * cpp + c,
                origin=path,
                coords=(("fabric", name), ("plane", plane), ("core", c)),
                tier=3,
            )
            out.append(dev.index)
    return out


def _attach(
    ctx: BuildContext,
    spec: FatTree,
    plan: ClosPlan,
    leaves: list[int],
    compute: list[tuple[int, str]],
    service: list[tuple[int, int, str]],
    down_ports: list[int],
    ports_of: _PlanePorts,
    chooser: MediaChooser,
    path: tuple,
) -> None:
    """Endpoint NICs to leaf down ports: compute endpoints by slot, service ones on top ports."""
    f, name, lps = ctx.fabric, spec.name, plan.leaves_per_su
    ends: list[tuple[int, int, int, int]] = []
    for (dev, role), (su, slot) in zip(compute, plan.node_slots(len(compute)), strict=True):
        ports = ports_of(f.devices[dev].model, role)
        base = su * lps
        for nic, port in enumerate(ports):
            li, lp = plan.leaf_port(slot, nic)
            ends.append((dev, port, leaves[base + li], down_ports[lp]))
    taken: dict[int, int] = {}
    for su, dev, role in service:
        for port in ports_of(f.devices[dev].model, role):
            k = taken.get(su, 0)
            taken[su] = k + 1
            li, lp = plan.service_port(k)
            ends.append((dev, port, leaves[su * lps + li], down_ports[lp]))
    ctx.add_link_rows(name, ends, chooser=chooser, origin=path, tier="node-leaf")


def _wire_up(
    ctx: BuildContext,
    fabric: str,
    lower: list[int],
    lower_up_ports: list[int],
    upper: list[int],
    upper_ports: list[int],
    p: int,
    chooser: MediaChooser,
    path: tuple,
    tier: str,
) -> None:
    """Lower switch at position pos sends up-port m to upper switch m // p, on its port pos * p + m % p."""
    ups = range(len(lower_up_ports))
    ctx.add_links(
        fabric,
        [dev for dev in lower for _ in ups],
        [port for _ in lower for port in lower_up_ports],
        [upper[m // p] for _ in lower for m in ups],
        [upper_ports[pos * p + m % p] for pos in range(len(lower)) for m in ups],
        chooser=chooser,
        origin=path,
        tier=tier,
    )


def _alternatives(ctx: BuildContext, spec: FatTree, exc: TooBig, knobs: dict, leaf: TierPorts, spine_m: DeviceModel) -> str:
    """The nearest valid designs, for the hint of a too-big error."""
    k_spine = data_radix(spine_m)
    spine = TierPorts(k_spine, 0) if spec.tiers == 2 else split_ports(k_spine, ratio_value(spec.oversubscription.spine))
    core = data_radix(ctx.catalogue.devices[spec.core_switch or spec.spine_switch or spec.switch]) if spec.tiers == 3 else 0
    here = ceiling_nodes(spec.tiers, leaf, spine, core, **knobs)
    parts = [f"at most {here:,} nodes in {spec.tiers} tiers with these switches"]
    if spec.grow_to_sus:
        parts.append("or a smaller grow_to_sus")
    if spec.tiers == 2:
        three = ceiling_nodes(3, leaf, split_ports(k_spine, Fraction(1)), k_spine, **knobs)
        if three > here:
            parts.append(f"or tiers: 3 (up to {three:,} nodes, non-blocking)")
    fits = sorted(
        (data_radix(m), n)
        for n, m in ctx.catalogue.devices.items()
        if m.kind == "switch" and m.transport in (spec.transport, "any") and data_radix(m) >= exc.needed_radix
    )
    which = "spine" if exc.upper == "spine_switch" else "core"
    alt = f"or a {which} switch ({exc.upper}) of radix >= {exc.needed_radix}"
    if fits:
        alt += " (catalogue: " + ", ".join(f"{n} {k}" for k, n in fits[:4]) + ")"
    parts.append(alt)
    return "; ".join(parts)


def _facts(
    spec: FatTree,
    plan: ClosPlan,
    nodes: int,
    services: int,
    service_ports: dict[int, int],
    k_leaf: int,
    k_spine: int,
    leaf_up_ports: list[int],
    spine_up_ports: list[int],
) -> ClosShape:
    """Plain data for checks and reports (sizes, parallel links, growth limits)."""
    max_leaves = plan.max_sus * plan.leaves_per_su
    return {
        "kind": "fat-tree",
        "transport": spec.transport,
        "tiers": spec.tiers,
        "rail_optimized": plan.rail_optimized,
        "rails": plan.nics,
        "nodes": nodes,
        "service_endpoints": services,
        "service_ports": {su: n for su, n in sorted(service_ports.items())},
        "su_nodes": plan.su_nodes,
        "leaves_per_su": plan.leaves_per_su,
        "built_sus": plan.built_sus,
        "planned_sus": plan.planned_sus,
        "leaf_radix": k_leaf,
        # Down-port capacity (the layout) and uplinks cabled per switch (what the down ports in
        # use in the planned SU / pod shape need at the declared ratio, or the explicit count).
        "leaf_down": plan.leaf.down,
        "leaf_up": plan.leaf.up,
        "leaf_down_used": plan.leaf_used,
        "spine_radix": k_spine,
        "spine_down": plan.spine.down,
        "spine_up": plan.spine.up,
        "spine_down_used": plan.spine_used if plan.tiers == 3 else plan.planned_sus * plan.leaves_per_su * plan.p1,
        "core_radix": plan.core_radix,
        "leaves": plan.leaves,
        "spines": plan.spines,
        "cores": plan.cores,
        "leaves_per_pod": plan.leaves_per_pod,
        "spines_per_pod": plan.spines_per_pod,
        "pods": plan.built_pods,
        "planned_pods": plan.planned_pods,
        "cores_per_plane": plan.cores_per_plane,
        "leaf_spine_parallel": plan.p1,
        "spine_core_parallel": plan.p2,
        # Growth without re-cabling: what the planned spines (and cores) take.
        "max_pods": plan.max_pods,
        "max_leaves": max_leaves,
        "max_sus": plan.max_sus,
        "max_nodes": plan.max_nodes,
        "max_endpoint_ports": max_leaves * plan.leaf.down,
        "leaf_up_ports": list(leaf_up_ports),
        "spine_up_ports": list(spine_up_ports),
        # Data ports each switch uses at the planned size (grow_to_sus included): the design, not the fill.
        "ports_planned": {
            "leaf": plan.leaf_used + plan.leaf.up,
            "spine": plan.spine_used + plan.spine.up if plan.tiers == 3 else plan.planned_sus * plan.leaves_per_su * plan.p1,
            **({"core": plan.planned_pods * plan.p2} if plan.tiers == 3 else {}),
        },
    }
