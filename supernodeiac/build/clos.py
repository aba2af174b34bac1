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
number of links, and the fewest upper switches do it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from ..catalog.types import DeviceModel
from ..findings import BuildError, error
from ..model.base import ratio_value
from ..model.clos import FatTree
from . import BUILDERS
from .addressing import assign_ethernet
from .context import BuildContext, did_you_mean
from .media import MediaChooser


@dataclass(frozen=True, slots=True)
class TierPorts:
    down: int
    up: int


def split_ports(radix: int, ratio: Fraction) -> TierPorts:
    """Down/up ports of a switch for a down:up ratio N: the most up ports that keep down >= N x up."""
    up = math.floor(radix / (1 + ratio))
    down = math.floor(up * ratio)
    return TierPorts(down, up)


def largest_parallel(up: int, lower_count: int, upper_ports: int) -> int | None:
    """Largest p dividing ``up`` with ``lower_count * p <= upper_ports`` (None if even p = 1 fails)."""
    for p in range(up, 0, -1):
        if up % p == 0 and lower_count * p <= upper_ports:
            return p
    return None


def data_radix(model: DeviceModel) -> int:
    return model.port_count("data")


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
    """Every number of the fabric. A 2-tier tree is one pod whose spines are the top tier."""

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


def _layout(tiers: int, rail_optimized: bool, nics: int, leaf: TierPorts, su_nodes: int | None) -> tuple[int, int, int]:
    """(su_nodes, leaves_per_rail, leaves_per_su)."""
    d = leaf.down
    if rail_optimized:
        su_nodes = su_nodes or d
        lpr = math.ceil(su_nodes / d)
        return su_nodes, lpr, nics * lpr
    su_nodes = su_nodes or max(1, d // nics)
    return su_nodes, 0, math.ceil(su_nodes * nics / d)


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
) -> ClosPlan:
    """Plan a fat tree; raises PlanError (or TooBig) for a design that cannot be built."""
    if leaf.down < 1 or leaf.up < 1 or (tiers == 3 and (spine.down < 1 or spine.up < 1)):
        raise PlanError(
            "oversubscription",
            f"the declared ratio leaves a switch with {leaf.down} down and {leaf.up} up ports",
            ("oversubscription",),
            "a lower ratio or a switch of higher radix",
        )
    d = leaf.down
    su_nodes, lpr, lps = _layout(tiers, rail_optimized, nics, leaf, su_nodes)
    proto = ClosPlan(tiers, rail_optimized, nics, leaf, spine, core_radix, su_nodes, lpr, lps, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    reserved: dict[int, frozenset[int]] = {}
    for su, count in sorted((service_ports or {}).items()):
        if count > lps * d:
            raise PlanError(
                "port-budget",
                f"SU {su} has {lps} leaves of {d} down ports; its service endpoints need {count}",
                ("endpoints",),
                "attach some service endpoints to another SU",
            )
        slots = {proto.slot_of(*proto.service_port(k)) for k in range(count)}
        reserved[su] = frozenset(s for s in slots if s < su_nodes)

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
            tiers, rail_optimized, nics, leaf, spine, core_radix, su_nodes, lpr, lps, built, planned,
            (spine.down // p1 // lps) * lps, p1, leaf.up // p1, 1, 1, 0, 0, reserved,
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
        tiers, rail_optimized, nics, leaf, spine, core_radix, su_nodes, lpr, lps, built, planned,
        per_pod, p1, leaf.up // p1, built_pods, planned_pods, p2, spine.up // p2, reserved,
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


# -- the builder ---------------------------------------------------------------------------------


@BUILDERS.register("fat-tree")
def build_fat_tree(ctx: BuildContext, spec: FatTree, path: tuple) -> None:
    f = ctx.fabric
    spine_key = "spine_switch" if spec.spine_switch else "switch"
    core_key = "core_switch" if spec.core_switch else spine_key
    leaf_name = spec.switch
    spine_name = spec.spine_switch or spec.switch
    core_name = spec.core_switch or spine_name
    leaf_m = _switch(ctx, spec, leaf_name, path + ("switch",))
    spine_m = _switch(ctx, spec, spine_name, path + (spine_key,))
    core_m = _switch(ctx, spec, core_name, path + (core_key,))
    n_leaf = ratio_value(spec.oversubscription.leaf)
    n_spine = ratio_value(spec.oversubscription.spine)
    leaf_ports = split_ports(data_radix(leaf_m), n_leaf)
    # The top tier has no uplinks: all its ports face down.
    k_spine = data_radix(spine_m)
    spine_ports = split_ports(k_spine, n_spine) if spec.tiers == 3 else TierPorts(k_spine, 0)
    k_core = data_radix(core_m) if spec.tiers == 3 else 0

    compute, service = _endpoints(ctx, spec, path)
    nics = _nics(ctx, spec, compute, path)
    service_ports: dict[int, int] = {}
    for su, dev in service:
        service_ports[su] = service_ports.get(su, 0) + len(f.layouts[f.devices[dev].model].ports_of("data"))
    knobs = {
        "rail_optimized": spec.rail_optimized,
        "nics": nics,
        "service_ports": service_ports,
        "su_nodes": spec.su_nodes,
        "leaves_per_pod": spec.leaves_per_pod,
    }
    try:
        plan = plan_clos(
            tiers=spec.tiers,
            leaf=leaf_ports,
            spine=spine_ports,
            core_radix=k_core,
            nodes=len(compute),
            grow_to_sus=spec.grow_to_sus,
            **knobs,  # type: ignore[arg-type]
        )
    except TooBig as exc:
        raise BuildError(
            [error(exc.rule, exc.message, path + exc.field, _alternatives(ctx, spec, exc, knobs, leaf_ports, spine_m))]
        ) from None
    except PlanError as exc:
        raise ctx.fail(exc.rule, exc.message, path + exc.field, exc.hint) from None

    chooser = ctx.chooser(spec.media, path + ("media",) if spec.media else ("media",))
    leaves = _leaves(ctx, spec, plan, leaf_name, path)
    leaf_data = ctx.fabric.layouts[leaf_name].ports_of("data")
    d = plan.leaf.down
    down_ports, up_ports = leaf_data[:d], leaf_data[d : d + plan.leaf.up]
    _attach(ctx, spec, plan, leaves, compute, service, down_ports, chooser, path)

    spine_data = ctx.fabric.layouts[spine_name].ports_of("data")
    spines = _spines(ctx, spec, plan, spine_name, path)
    spp, per_pod, p1 = plan.spines_per_pod, plan.leaves_per_pod, plan.p1
    for pod in range(plan.built_pods):
        pod_spines = spines[pod * spp : (pod + 1) * spp]
        first = pod * per_pod
        _wire_up(
            ctx, spec.name, leaves[first : first + per_pod], up_ports, pod_spines, spine_data, p1, chooser, path, "leaf-spine"
        )

    cores: list[int] = []
    spine_up: list[int] = []
    if spec.tiers == 3:
        core_data = ctx.fabric.layouts[core_name].ports_of("data")
        spine_up = spine_data[plan.spine.down : plan.spine.down + plan.spine.up]
        cores = _cores(ctx, spec, plan, core_name, path)
        cpp = plan.cores_per_plane
        for plane in range(spp):
            plane_spines = spines[plane::spp]  # the plane-j spine of every built pod, in pod order
            _wire_up(
                ctx,
                spec.name,
                plane_spines,
                spine_up,
                cores[plane * cpp : (plane + 1) * cpp],
                core_data,
                plan.p2,
                chooser,
                path,
                "spine-core",
            )

    facts = _facts(
        spec,
        plan,
        len(compute),
        len(service),
        service_ports,
        leaf_ports,
        spine_ports,
        data_radix(leaf_m),
        k_spine,
        up_ports,
        spine_up,
    )
    facts["ceiling_nodes"] = ceiling_nodes(spec.tiers, leaf_ports, spine_ports, k_core, **knobs)  # type: ignore[arg-type]
    if spec.ethernet is not None:
        facts["ethernet"] = assign_ethernet(f, spec.ethernet, plan, leaves, spines, cores, path + ("ethernet",))
    f.facts[spec.name] = facts


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


def _endpoints(ctx: BuildContext, spec: FatTree, path: tuple) -> tuple[list[int], list[tuple[int, int]]]:
    """Compute endpoint devices (in fill order) and service ones as (su, device)."""
    f = ctx.fabric
    compute: list[int] = []
    service: list[tuple[int, int]] = []
    for i, ep in enumerate(spec.endpoints):
        if ep.group not in ctx.groups:
            raise ctx.fail(
                "unknown-reference",
                f"no node group or scale-up domain named {ep.group!r}",
                path + ("endpoints", i, "group"),
                did_you_mean(ep.group, sorted(ctx.groups)),
            )
        # A scale-up domain lists its switch boards too; only devices with data ports attach.
        devs = [dev for dev in ctx.groups[ep.group] if f.layouts[f.devices[dev].model].ports_of("data")]
        if not devs:
            raise ctx.fail(
                "no-data-ports", f"{ep.group} has no devices with data ports for a scale-out fabric", path + ("endpoints", i)
            )
        if ep.su is None:
            compute.extend(devs)
        else:
            service.extend((ep.su, dev) for dev in devs)
    return compute, service


def _nics(ctx: BuildContext, spec: FatTree, compute: list[int], path: tuple) -> int:
    f = ctx.fabric
    counts: dict[str, int] = {}
    for dev in compute:
        model = f.devices[dev].model
        if model not in counts:
            counts[model] = len(f.layouts[model].ports_of("data"))
    if len(set(counts.values())) > 1 and spec.rail_optimized:
        raise ctx.fail(
            "rails",
            "rail-optimised endpoints must all have the same number of data ports (one per rail): "
            + ", ".join(f"{m}={n}" for m, n in sorted(counts.items())),
            path + ("endpoints",),
            "split them into separate fabrics or set rail_optimized: false",
        )
    return max(counts.values(), default=1)


def _leaves(ctx: BuildContext, spec: FatTree, plan: ClosPlan, model: str, path: tuple) -> list[int]:
    """All leaves of the built SUs (a partly filled SU gets all its leaves), by global index."""
    name, lps, lpr = spec.name, plan.leaves_per_su, plan.leaves_per_rail
    out: list[int] = []
    for su in range(plan.built_sus):
        for i in range(lps):
            index = su * lps + i
            rail = i // lpr if plan.rail_optimized else None
            coords = (("fabric", name), ("su", su), ("leaf", i)) + ((("rail", rail),) if rail is not None else ())
            lname = ctx.name(
                "leaf",
                "{fabric}-leaf-su{su:03d}-{leaf:02d}",
                path,
                fabric=name,
                su=su + 1,
                leaf=i + 1,
                rail=rail or 0,
                pod=index // plan.leaves_per_pod + 1,
                index=index + 1,
            )
            dev = ctx.add_device(
                name=lname,
                role="leaf",
                model=model,
                group=name,
                placement=spec.placement.leaf,
                slot=index,
                origin=path,
                coords=coords,
                tier=1,
            )
            out.append(dev.index)
    return out


def _spines(ctx: BuildContext, spec: FatTree, plan: ClosPlan, model: str, path: tuple) -> list[int]:
    """Spines of the built pods, by global index pod * spines_per_pod + plane."""
    name, spp = spec.name, plan.spines_per_pod
    default = "{fabric}-spine-{spine:03d}" if spec.tiers == 2 else "{fabric}-spine-p{pod:02d}-{spine:02d}"
    out: list[int] = []
    for pod in range(plan.built_pods):
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
                slot=pod * spp + j,
                origin=path,
                coords=coords,
                tier=2,
            )
            out.append(dev.index)
    return out


def _cores(ctx: BuildContext, spec: FatTree, plan: ClosPlan, model: str, path: tuple) -> list[int]:
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
                slot=plane * cpp + c,
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
    compute: list[int],
    service: list[tuple[int, int]],
    down_ports: list[int],
    chooser: MediaChooser,
    path: tuple,
) -> None:
    """Endpoint NICs to leaf down ports: compute endpoints by slot, service ones on top ports."""
    f, name, lps = ctx.fabric, spec.name, plan.leaves_per_su
    ends: list[tuple[int, int, int, int]] = []
    data_of: dict[str, list[int]] = {}
    for dev, (su, slot) in zip(compute, plan.node_slots(len(compute)), strict=True):
        model = f.devices[dev].model
        ports = data_of.get(model)
        if ports is None:
            ports = data_of[model] = f.layouts[model].ports_of("data")
        base = su * lps
        for nic, port in enumerate(ports):
            li, lp = plan.leaf_port(slot, nic)
            ends.append((dev, port, leaves[base + li], down_ports[lp]))
    taken: dict[int, int] = {}
    for su, dev in service:
        for port in f.layouts[f.devices[dev].model].ports_of("data"):
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
    leaf_ports: TierPorts,
    spine_ports: TierPorts,
    k_leaf: int,
    k_spine: int,
    leaf_up_ports: list[int],
    spine_up_ports: list[int],
) -> dict:
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
        "leaf_down": leaf_ports.down,
        "leaf_up": leaf_ports.up,
        "spine_radix": k_spine,
        "spine_down": spine_ports.down,
        "spine_up": spine_ports.up,
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
    }
