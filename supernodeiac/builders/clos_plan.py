"""Fat-tree arithmetic: sizes, parallel links, uplinks, growth limits and design alternatives.

Pure functions of numbers (radices, ratios, node counts), shared by the Clos builder, the
benchmark generator and the tests. Every impossible design fails here (``PlanError``), before a
device is made.

Uplinks follow the down ports in use, not the radix
---------------------------------------------------
A switch's data ports are first split by the declared down:up ratio N (``split_ports``): the
down side is the *capacity* the layout numbers (a leaf's node slots, a spine's leaf ports).
The uplinks actually cabled are ``ceil(used_down / N)``, where ``used_down`` is the down ports
the switch uses in the **planned shape** of its unit, never in the current fill:

* a leaf: the positions its SU's node slots (``su_nodes``) and the SU's declared service ports
  take. A partly filled SU is provisioned as if full, so adding a node never adds an uplink;
* a 3-tier spine: ``leaves_per_pod x p1``, the ports of a whole pod (a partly built pod's spines
  are cabled for the whole pod, like SUs).

So growing a fabric by SUs or pods (up to ``grow_to_sus``) changes no existing cable, port or
address, while a pod that uses only part of its spines' down ports (48 leaves on 128-port spines
at 3:1 use 48 of 96) gets the uplinks its ratio asks for (16), not the 32 the radix allows.
An explicit ``uplinks`` count replaces ``ceil(used_down / N)``; the checks then compare the ratio
it gives with the declared one.

Upper tiers are sized for the SUs built plus the declared growth (``grow_to_sus``): the spines of
a 2-tier tree and the cores of a 3-tier tree are the fewest that let every lower switch reach every
upper switch of its pod or plane with the same number of links (``largest_parallel``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from ..catalog.types import DeviceModel
from ..fabric.fabric_facts import DesignFacts


@dataclass(frozen=True, slots=True)
class TierPorts:
    down: int
    up: int


def split_ports(radix: int, ratio: Fraction) -> TierPorts:
    """Down/up ports of a switch for a down:up ratio N: the most up ports that keep down >= N x up."""
    up = math.floor(radix / (1 + ratio))
    down = math.floor(up * ratio)
    return TierPorts(down, up)


def capacity(radix: int, ratio: Fraction, uplinks: int | None) -> TierPorts:
    """The port split a switch is laid out with: by the ratio, or, with an explicit uplink count,
    the ratio's down ports as far as the radix leaves room beside those uplinks."""
    split = split_ports(radix, ratio)
    if uplinks is None:
        return split
    return TierPorts(max(0, min(split.down, radix - uplinks)), uplinks)


def uplinks_for(used_down: int, ratio: Fraction) -> int:
    """Uplinks that keep ``used_down`` down ports at the ratio N: ceil(used_down / N)."""
    return math.ceil(Fraction(used_down) / ratio)


def largest_parallel(up: int, lower_count: int, upper_ports: int) -> int | None:
    """Largest p dividing ``up`` with ``lower_count * p <= upper_ports`` (None if even p = 1 fails)."""
    for p in range(up, 0, -1):
        if up % p == 0 and lower_count * p <= upper_ports:
            return p
    return None


def data_radix(model: DeviceModel) -> int:
    return model.port_count("data")


def speed_split(model: DeviceModel) -> tuple[TierPorts, float, float] | None:
    """A switch whose cages run two speeds (2 x 400G down, 1 x 800G up): its leading data ports of
    the first speed are its down ports, the faster rest its up ports, as the cages are split; with
    (down speed, up speed). None for a switch of one data speed (its ports split by the ratio)."""
    groups = [g for g in model.ports if g.role == "data"]
    speeds = [g.speed_gbps for g in groups]
    if len(set(speeds)) <= 1:
        return None
    k = next(i for i, v in enumerate(speeds) if v != speeds[0])
    rest = {g.speed_gbps for g in groups[k:]}
    if len(rest) != 1 or min(rest) <= speeds[0]:
        raise PlanError(
            "port-budget",
            f"{model.description}: data ports at {', '.join(f'{v:g}G' for v in speeds)}: a switch of two speeds lists its "
            "slower (down) ports first and its faster (up) ports after them",
            ("switch",),
            "order the catalogue data groups down speed first, up speed last",
        )
    down = sum(g.count for g in groups[:k])
    return TierPorts(down, sum(g.count for g in groups[k:])), speeds[0], rest.pop()


class PlanError(Exception):
    """An impossible design; ``field`` is the FatTree key it is about."""

    def __init__(self, rule: str, message: str, field: tuple, hint: str = "") -> None:
        super().__init__(message)
        self.rule, self.message, self.field, self.hint = rule, message, field, hint


class TooBig(PlanError):
    """More endpoints than the tiers and switches give; the builder adds the alternatives."""

    def __init__(self, message: str, needed_radix: int, upper: str) -> None:
        super().__init__("topology-too-big", message, ("endpoints",))
        self.needed_radix = needed_radix  # radix the limiting (top) switch would need
        self.upper = upper  # which blueprint key names that switch


@dataclass(frozen=True, slots=True)
class ClosPlan:
    """Every number of the fabric. A 2-tier tree is one pod whose spines are the top tier.

    ``leaf.down`` is the leaf's down-port capacity (node slots are laid out on it), ``leaf.up`` the
    uplinks cabled per leaf; likewise ``spine`` in 3 tiers (a 2-tier spine is all down ports).
    """

    tiers: int
    rail_optimized: bool
    nics: int  # data ports per endpoint (the rails, when rail-optimised)
    leaf: TierPorts
    spine: TierPorts  # 2 tiers: all ports down
    core_radix: int  # 3 tiers
    su_nodes: int  # node slots per SU
    leaves_per_rail: int  # per SU; rail-optimised only (0 otherwise)
    leaves_per_su: int
    built_sus: int
    planned_sus: int
    leaves_per_pod: int  # 2 tiers: the most leaves the spines take
    p1: int
    spines_per_pod: int
    built_pods: int
    planned_pods: int
    p2: int  # 0 for 2 tiers
    cores_per_plane: int  # 0 for 2 tiers
    reserved: dict[int, frozenset[int]] = field(default_factory=dict)  # SU -> node slots taken by service ports
    leaf_used: int = 0  # down ports a leaf uses in the planned SU shape (its uplinks follow these)
    spine_used: int = 0  # 3 tiers: down ports a spine uses in the planned pod shape

    @property
    def sus_per_pod(self) -> int:
        return self.leaves_per_pod // self.leaves_per_su

    @property
    def leaves(self) -> int:
        return self.built_sus * self.leaves_per_su

    @property
    def spines(self) -> int:
        return self.built_pods * self.spines_per_pod

    @property
    def cores(self) -> int:
        return self.cores_per_plane * self.spines_per_pod

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    @property
    def switch_links(self) -> int:
        """Switch-to-switch links: every leaf's uplinks, and every 3-tier spine's."""
        return self.leaves * self.leaf.up + (self.spines * self.spine.up if self.tiers == 3 else 0)

    @property
    def max_pods(self) -> int:
        """Pods the cores take without re-cabling (3 tiers)."""
        return self.core_radix // self.p2 if self.tiers == 3 else 1

    @property
    def max_sus(self) -> int:
        """SUs this build grows to by adding leaves (and pods) only, never re-cabling."""
        return self.max_pods * self.sus_per_pod

    @property
    def max_nodes(self) -> int:
        return self.max_sus * self.su_nodes - sum(len(r) for r in self.reserved.values())

    def leaf_port(self, slot: int, nic: int) -> tuple[int, int]:
        """(leaf within the SU, down port) of NIC ``nic`` of the node in ``slot``."""
        d = self.leaf.down
        if self.rail_optimized:
            return nic * self.leaves_per_rail + slot // d, slot % d
        return divmod(slot * self.nics + nic, d)

    def slot_of(self, leaf_in_su: int, port: int) -> int:
        """The node slot a leaf down port belongs to (the inverse of leaf_port)."""
        d = self.leaf.down
        if self.rail_optimized:
            return (leaf_in_su % self.leaves_per_rail) * d + port
        return (leaf_in_su * d + port) // self.nics

    def service_port(self, k: int) -> tuple[int, int]:
        """(leaf within the SU, down port) of the k-th service port of an SU: top ports, leaves first."""
        lps = self.leaves_per_su
        return k % lps, self.leaf.down - 1 - k // lps

    def node_slots(self, count: int) -> Iterator[tuple[int, int]]:
        """(su, slot) of the first ``count`` compute endpoints: free slots, SU by SU."""
        produced, su = 0, 0
        while produced < count:
            taken = self.reserved.get(su, frozenset())
            for slot in range(self.su_nodes):
                if slot in taken:
                    continue
                yield su, slot
                produced += 1
                if produced == count:
                    return
            su += 1


def _layout(rail_optimized: bool, nics: int, leaf: TierPorts, su_nodes: int | None) -> tuple[int, int, int]:
    """(su_nodes, leaves_per_rail, leaves_per_su)."""
    d = leaf.down
    if rail_optimized:
        su_nodes = su_nodes or d
        lpr = math.ceil(su_nodes / d)
        return su_nodes, lpr, nics * lpr
    su_nodes = su_nodes or max(1, d // nics)
    return su_nodes, 0, math.ceil(su_nodes * nics / d)


def leaf_ports_used(proto: ClosPlan, service_ports: dict[int, int]) -> int:
    """Down ports the busiest leaf of an SU uses in the planned SU shape: the positions of all
    ``su_nodes`` node slots, and the top ports of the SU's service endpoints (the SU that has
    the most of them)."""
    per_leaf: list[set[int]] = [set() for _ in range(proto.leaves_per_su)]
    for slot in range(proto.su_nodes):
        for nic in range(proto.nics):
            li, port = proto.leaf_port(slot, nic)
            per_leaf[li].add(port)
    used = max(len(ports) for ports in per_leaf)
    for count in set(service_ports.values()):
        with_service = [set(ports) for ports in per_leaf]
        for k in range(count):
            li, port = proto.service_port(k)
            with_service[li].add(port)
        used = max(used, max(len(ports) for ports in with_service))
    return used


def plan_clos(
    *,
    tiers: int,
    rail_optimized: bool,
    nics: int,
    leaf: TierPorts,
    spine: TierPorts,
    core_radix: int,
    nodes: int,
    service_ports: dict[int, int] | None = None,
    su_nodes: int | None = None,
    leaves_per_pod: int | None = None,
    grow_to_sus: int | None = None,
    leaf_ratio: Fraction | None = None,
    spine_ratio: Fraction | None = None,
    leaf_uplinks: int | None = None,
    spine_uplinks: int | None = None,
) -> ClosPlan:
    """Plan a fat tree; raises PlanError (or TooBig) for a design that cannot be built.

    ``leaf`` and ``spine`` are the port capacities (``capacity``); the ratios default to theirs
    (down / up), so a capacity split exactly by its ratio and fully used keeps all its uplinks.
    """
    if leaf.down < 1 or leaf.up < 1 or (tiers == 3 and (spine.down < 1 or spine.up < 1)):
        which, ports = ("leaf", leaf) if leaf.down < 1 or leaf.up < 1 else ("spine", spine)
        raise PlanError(
            "oversubscription",
            f"the declared ratio or uplink count leaves a {which} with {ports.down} down and {ports.up} up ports",
            ("uplinks",) if (leaf_uplinks if which == "leaf" else spine_uplinks) else ("oversubscription",),
            "a lower ratio, fewer uplinks, or a switch of higher radix",
        )
    d = leaf.down
    su_nodes, lpr, lps = _layout(rail_optimized, nics, leaf, su_nodes)
    proto = ClosPlan(tiers, rail_optimized, nics, leaf, spine, core_radix, su_nodes, lpr, lps, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    services = service_ports or {}
    reserved: dict[int, frozenset[int]] = {}
    for su, count in sorted(services.items()):
        if count > lps * d:
            raise PlanError(
                "port-budget",
                f"SU {su} has {lps} leaves of {d} down ports; its service endpoints need {count}",
                ("endpoints",),
                "attach some service endpoints to another SU",
            )
        slots = {proto.slot_of(*proto.service_port(k)) for k in range(count)}
        reserved[su] = frozenset(s for s in slots if s < su_nodes)

    leaf_used = leaf_ports_used(proto, services)
    up = leaf_uplinks or uplinks_for(leaf_used, leaf_ratio or Fraction(leaf.down, leaf.up))
    leaf = TierPorts(d, min(up, leaf.up))

    sus, left = 0, nodes
    while left > 0:  # ends: an SU without service ports has su_nodes >= 1 free slots
        left -= su_nodes - len(reserved.get(sus, ()))
        sus += 1
    built = max([sus] + [su + 1 for su in reserved])
    planned = grow_to_sus or built
    if planned < built:
        raise PlanError(
            "grow-to",
            f"grow_to_sus is {planned} but the endpoints already fill {built} SUs",
            ("grow_to_sus",),
            f"set grow_to_sus to {built} or more",
        )
    base = dict(
        tiers=tiers, rail_optimized=rail_optimized, nics=nics, leaf=leaf, spine=spine, core_radix=core_radix,
        su_nodes=su_nodes, leaves_per_rail=lpr, leaves_per_su=lps, built_sus=built, planned_sus=planned,
        reserved=reserved, leaf_used=leaf_used,
    )  # fmt: skip

    if tiers == 2:
        planned_leaves = planned * lps
        p1 = largest_parallel(leaf.up, planned_leaves, spine.down)
        if p1 is None:
            raise TooBig(
                f"a 2-tier fat tree takes at most {spine.down} leaves ({spine.down // lps} SUs) on {spine.down}-port spines; "
                f"this design needs {planned_leaves} leaves ({planned} SUs)",
                planned_leaves,
                "spine_switch",
            )
        return ClosPlan(
            **base,  # type: ignore[arg-type]
            leaves_per_pod=(spine.down // p1 // lps) * lps, p1=p1, spines_per_pod=leaf.up // p1,
            built_pods=1, planned_pods=1, p2=0, cores_per_plane=0,
        )  # fmt: skip

    if leaves_per_pod is not None:
        per_pod = leaves_per_pod
        if per_pod % lps:
            raise PlanError(
                "pod-size",
                f"leaves_per_pod {per_pod} is not a whole number of SUs ({lps} leaves each)",
                ("leaves_per_pod",),
                f"use a multiple of {lps}",
            )
    else:
        per_pod = (spine.down // lps) * lps
    if per_pod == 0 or per_pod > spine.down:
        raise PlanError(
            "pod-size",
            f"a pod of {max(per_pod, lps)} leaves does not fit a spine's {spine.down} down ports",
            ("leaves_per_pod",) if leaves_per_pod else ("su_nodes",),
            f"at most {spine.down} leaves per pod; fewer nodes per SU, or a spine switch of higher radix",
        )
    p1 = largest_parallel(leaf.up, per_pod, spine.down)
    assert p1 is not None  # per_pod <= spine.down, so p1 = 1 always fits
    spine_used = per_pod * p1
    spine_up = spine_uplinks or uplinks_for(spine_used, spine_ratio or Fraction(spine.down, spine.up))
    spine = TierPorts(spine.down, min(spine_up, spine.up))
    sus_per_pod = per_pod // lps
    built_pods = math.ceil(built / sus_per_pod)
    planned_pods = math.ceil(planned / sus_per_pod)
    p2 = largest_parallel(spine.up, planned_pods, core_radix)
    if p2 is None:
        raise TooBig(
            f"a 3-tier fat tree takes at most {core_radix} pods of {per_pod} leaves on {core_radix}-port cores; "
            f"this design needs {planned_pods} pods ({planned} SUs)",
            planned_pods,
            "core_switch",
        )
    return ClosPlan(
        **{**base, "spine": spine},  # type: ignore[arg-type]
        leaves_per_pod=per_pod, p1=p1, spines_per_pod=leaf.up // p1, built_pods=built_pods,
        planned_pods=planned_pods, p2=p2, cores_per_plane=spine.up // p2, spine_used=spine_used,
    )  # fmt: skip


def ceiling_nodes(tiers: int, leaf: TierPorts, spine: TierPorts, core_radix: int, **kw: object) -> int:
    """The most nodes a design of these switches and tiers reaches (one link per switch pair)."""
    try:
        p = plan_clos(tiers=tiers, leaf=leaf, spine=spine, core_radix=core_radix, nodes=0, **kw)  # type: ignore[arg-type]
    except PlanError:
        return 0
    top = spine.down if tiers == 2 else core_radix
    sus = (top // p.leaves_per_su) if tiers == 2 else top * p.sus_per_pod
    return sus * p.su_nodes - sum(len(r) for r in p.reserved.values())


@dataclass(frozen=True, slots=True)
class Design:
    """Switch and link counts of one candidate design (for the cheapest-design statement)."""

    tiers: int
    scope: str  # "built" (the SUs built) or "planned" (built plus grow_to_sus)
    leaves: int
    spines: int
    cores: int
    switch_links: int
    max_nodes: int

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    def as_dict(self) -> DesignFacts:
        return {
            "tiers": self.tiers,
            "scope": self.scope,
            "leaves": self.leaves,
            "spines": self.spines,
            "cores": self.cores,
            "switches": self.switches,
            "switch_links": self.switch_links,
            "max_nodes": self.max_nodes,
        }


def designs(
    *,
    k_spine: int,
    spine_ratio: Fraction,
    grow_to_sus: int | None,
    built_sus: int,
    **kw: object,
) -> list[Design]:
    """The same endpoints, leaves and ratios in 2 and in 3 tiers (the spine switch at every upper
    tier), for the SUs built and for the declared growth: what a planner compares. A design that
    cannot hold the endpoints is left out."""
    out: list[Design] = []
    scopes = [("built", None)] + ([("planned", grow_to_sus)] if grow_to_sus and grow_to_sus > built_sus else [])
    for tiers in (2, 3):
        spine = TierPorts(k_spine, 0) if tiers == 2 else split_ports(k_spine, spine_ratio)
        ratio = None if tiers == 2 else spine_ratio
        for scope, grow in scopes:
            try:
                p = plan_clos(
                    tiers=tiers, spine=spine, core_radix=k_spine if tiers == 3 else 0, grow_to_sus=grow,
                    spine_ratio=ratio, **kw,  # type: ignore[arg-type]
                )  # fmt: skip
            except PlanError:
                continue
            out.append(Design(tiers, scope, p.leaves, p.spines, p.cores, p.switch_links, p.max_nodes))
    return out


__all__ = [
    "ClosPlan",
    "Design",
    "PlanError",
    "TierPorts",
    "TooBig",
    "capacity",
    "ceiling_nodes",
    "data_radix",
    "designs",
    "largest_parallel",
    "leaf_ports_used",
    "plan_clos",
    "speed_split",
    "split_ports",
    "uplinks_for",
]
