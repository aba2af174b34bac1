"""Folded Clos / fat tree, 2 or 3 tiers, InfiniBand or Ethernet (transport is a parameter).

Port and name allocation is keyed by stable coordinates so that adding a scalable unit (SU)
leaves every existing cable where it is:

* compute node n of the fabric sits in SU ``n // su_nodes`` at slot ``n % su_nodes``;
* rail-optimised: NIC r of the node lands on a leaf of rail r of its SU, at down port = slot;
* leaf l (``su * leaves_per_su + i``) sends up-port m to spine ``m // p1`` of its plane/pod, on
  spine port ``(l mod leaves_per_pod) * p1 + m % p1``; spines do the same towards the cores.

``p1``/``p2`` (parallel links per leaf-spine / spine-core pair) are the largest divisors of the
up-port count that still let the planned size (``grow_to_sus``) fit the upper switch's radix,
so every leaf reaches every spine with the same number of links.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..catalog.types import DeviceModel
from ..findings import BuildError, error
from ..model.base import format_fraction, ratio_value
from ..model.clos import FatTree
from . import BUILDERS
from .context import BuildContext


@dataclass(frozen=True, slots=True)
class TierPorts:
    down: int
    up: int


def split_ports(radix: int, ratio: Fraction) -> TierPorts:
    """Down/up ports of a switch for a down:up ratio N (largest up count that fits)."""
    up = math.floor(radix / (1 + ratio))
    down = math.floor(up * ratio)
    return TierPorts(down, up)


def largest_parallel(up: int, lower_count: int, upper_radix: int) -> int | None:
    """Largest p dividing ``up`` with ``lower_count * p <= upper_radix`` (None if even p=1 fails)."""
    for p in range(up, 0, -1):
        if up % p == 0 and lower_count * p <= upper_radix:
            return p
    return None


def data_radix(model: DeviceModel) -> int:
    return sum(g.count for g in model.ports if g.role == "data")


@BUILDERS.register("fat-tree")
def build_fat_tree(ctx: BuildContext, spec: FatTree, path: tuple) -> None:
    f = ctx.fabric
    leaf_name = spec.switch
    spine_name = spec.spine_switch or spec.switch
    core_name = spec.core_switch or spine_name
    leaf_m = ctx.model(leaf_name, path + ("switch",), "switch")
    spine_m = ctx.model(spine_name, path + ("spine_switch" if spec.spine_switch else "switch",), "switch")
    core_m = ctx.model(core_name, path + ("core_switch",) if spec.core_switch else path + ("switch",), "switch")
    k_leaf, k_spine, k_core = data_radix(leaf_m), data_radix(spine_m), data_radix(core_m)
    n_leaf = ratio_value(spec.oversubscription.leaf)
    n_spine = ratio_value(spec.oversubscription.spine)
    leaf_ports = split_ports(k_leaf, n_leaf)
    # The top tier has no uplinks: all its ports face down.
    spine_ports = split_ports(k_spine, n_spine) if spec.tiers == 3 else TierPorts(k_spine, 0)

    compute, service = _endpoints(ctx, spec, path)
    rails = _rails(ctx, spec, compute, path)
    nics = rails
    d = leaf_ports.down
    su_nodes = spec.su_nodes or (d if spec.rail_optimized else max(1, d // nics))
    if spec.rail_optimized:
        leaves_per_rail = math.ceil(su_nodes / d)
        leaves_per_su = rails * leaves_per_rail
    else:
        leaves_per_rail = 0
        leaves_per_su = math.ceil(su_nodes * nics / d)

    total_nodes = sum(len(ctx.groups[g]) for g, _ in compute)
    built_sus = max([math.ceil(total_nodes / su_nodes)] + [ep.su + 1 for _, ep in service if ep.su is not None])
    planned_sus = spec.grow_to_sus or built_sus
    if planned_sus < built_sus:
        raise ctx.fail(
            "grow-to",
            f"grow_to_sus is {planned_sus} but the endpoints need {built_sus} SUs",
            path + ("grow_to_sus",),
            f"set grow_to_sus to {built_sus} or more",
        )

    policy_path = path + ("media",) if spec.media else ("media",)
    chooser = ctx.chooser(spec.media, policy_path)
    name = spec.name

    # -- leaves ----------------------------------------------------------------------------
    leaves: list[int] = []
    for su in range(built_sus):
        for i in range(leaves_per_su):
            rail = i // leaves_per_rail if spec.rail_optimized else None
            lname = ctx.name(
                "leaf",
                "{fabric}-leaf-su{su:03d}-{leaf:02d}",
                path,
                fabric=name,
                su=su + 1,
                leaf=i + 1,
                rail=rail if rail is not None else 0,
            )
            coords = (("fabric", name), ("su", su), ("leaf", i)) + ((("rail", rail),) if rail is not None else ())
            leaves.append(
                ctx.add_device(
                    name=lname,
                    role="leaf",
                    model=leaf_name,
                    group=name,
                    placement=spec.placement.leaf,
                    slot=su * leaves_per_su + i,
                    origin=path,
                    coords=coords,
                    tier=1,
                ).index
            )

    leaf_data = f.layouts[leaf_name].ports_of("data")

    def leaf_of(su: int, i: int) -> int:
        return leaves[su * leaves_per_su + i]

    # -- endpoints to leaves ----------------------------------------------------------------
    node = 0
    for group, _ in compute:
        for dev in ctx.groups[group]:
            su, slot = divmod(node, su_nodes)
            ports = f.layouts[f.devices[dev].model].ports_of("data")
            for r, port in enumerate(ports):
                if spec.rail_optimized:
                    li, lp = r * leaves_per_rail + slot // d, slot % d
                else:
                    li, lp = divmod(slot * nics + r, d)
                ctx.connect(name, dev, port, leaf_of(su, li), leaf_data[lp], chooser=chooser, origin=path)
            node += 1
    taken: dict[int, int] = {}
    for group, ep in service:
        assert ep.su is not None
        for dev in ctx.groups[group]:
            for port in f.layouts[f.devices[dev].model].ports_of("data"):
                k = taken.get(ep.su, 0)
                taken[ep.su] = k + 1
                li, depth = k % leaves_per_su, k // leaves_per_su
                if depth >= d:
                    raise ctx.fail(
                        "port-budget",
                        f"SU {ep.su} has no free leaf down ports for {group}",
                        path + ("endpoints",),
                        "attach the service endpoints to another SU",
                    )
                ctx.connect(name, dev, port, leaf_of(ep.su, li), leaf_data[d - 1 - depth], chooser=chooser, origin=path)

    # -- upper tiers ------------------------------------------------------------------------
    facts = {
        "kind": "fat-tree",
        "transport": spec.transport,
        "tiers": spec.tiers,
        "rail_optimized": spec.rail_optimized,
        "rails": rails,
        "su_nodes": su_nodes,
        "leaves_per_su": leaves_per_su,
        "built_sus": built_sus,
        "planned_sus": planned_sus,
        "leaf_radix": k_leaf,
        "leaf_down": d,
        "leaf_up": leaf_ports.up,
        "nodes": total_nodes,
    }
    if spec.tiers == 2:
        _two_tier(ctx, spec, path, leaves, leaves_per_su * planned_sus, leaf_ports, k_spine, spine_name, chooser, facts)
    else:
        _three_tier(
            ctx,
            spec,
            path,
            leaves,
            leaves_per_su,
            planned_sus,
            leaf_ports,
            spine_ports,
            k_core,
            spine_name,
            core_name,
            chooser,
            facts,
        )
    f.facts[name] = facts


def _two_tier(ctx, spec, path, leaves, planned_leaves, leaf_ports, k_spine, spine_name, chooser, facts) -> None:
    f, name = ctx.fabric, spec.name
    p = largest_parallel(leaf_ports.up, planned_leaves, k_spine)
    if p is None:
        _too_big(ctx, spec, path, planned_leaves, k_spine, leaf_ports, facts)
    spines = []
    for j in range(leaf_ports.up // p):
        sname = ctx.name("spine", "{fabric}-spine-{spine:03d}", path, fabric=name, spine=j + 1, pod=0)
        spines.append(
            ctx.add_device(
                name=sname,
                role="spine",
                model=spine_name,
                group=name,
                placement=spec.placement.spine,
                slot=j,
                origin=path,
                coords=(("fabric", name), ("spine", j)),
                tier=2,
            ).index
        )
    _wire_up(
        ctx,
        name,
        leaves,
        f.layouts[f.devices[leaves[0]].model].ports_of("data")[leaf_ports.down :],
        leaf_ports.up,
        p,
        spines,
        f.layouts[spine_name].ports_of("data"),
        chooser,
        path,
        block=None,
    )
    facts.update(
        spines=len(spines), leaf_spine_parallel=p, max_leaves=k_spine // p, max_endpoint_ports=(k_spine // p) * leaf_ports.down
    )


def _three_tier(
    ctx, spec, path, leaves, leaves_per_su, planned_sus, leaf_ports, spine_ports, k_core, spine_name, core_name, chooser, facts
) -> None:
    f, name = ctx.fabric, spec.name
    if spec.leaves_per_pod:
        per_pod = spec.leaves_per_pod
        if per_pod % leaves_per_su:
            raise ctx.fail(
                "pod-size",
                f"leaves_per_pod {per_pod} is not a whole number of SUs ({leaves_per_su} leaves each)",
                path + ("leaves_per_pod",),
                f"use a multiple of {leaves_per_su}",
            )
    else:
        per_pod = (spine_ports.down // leaves_per_su) * leaves_per_su
    if per_pod == 0 or per_pod > spine_ports.down:
        raise ctx.fail(
            "pod-size",
            f"a pod of {max(per_pod, leaves_per_su)} leaves does not fit a spine's {spine_ports.down} down ports",
            path + ("su_nodes",),
            "use fewer nodes per SU or a larger spine switch",
        )
    p1 = largest_parallel(leaf_ports.up, per_pod, spine_ports.down)
    assert p1 is not None  # per_pod <= spine down ports, so p1 = 1 always fits
    sus_per_pod = per_pod // leaves_per_su
    built_pods = math.ceil(len(leaves) / per_pod)
    planned_pods = math.ceil(planned_sus / sus_per_pod)
    spines_per_pod = leaf_ports.up // p1
    p2 = largest_parallel(spine_ports.up, planned_pods, k_core)
    if p2 is None:
        _too_big(ctx, spec, path, planned_pods, k_core, spine_ports, facts, unit="pods")
    leaf_up_ports = f.layouts[f.devices[leaves[0]].model].ports_of("data")[leaf_ports.down :]
    spine_data = f.layouts[spine_name].ports_of("data")
    spines: list[int] = []
    for pod in range(built_pods):
        pod_spines = []
        for j in range(spines_per_pod):
            sname = ctx.name("spine", "{fabric}-spine-p{pod:02d}-{spine:02d}", path, fabric=name, pod=pod + 1, spine=j + 1)
            pod_spines.append(
                ctx.add_device(
                    name=sname,
                    role="spine",
                    model=spine_name,
                    group=name,
                    placement=spec.placement.spine,
                    slot=pod * spines_per_pod + j,
                    origin=path,
                    coords=(("fabric", name), ("pod", pod), ("plane", j)),
                    tier=2,
                ).index
            )
        spines.extend(pod_spines)
        pod_leaves = leaves[pod * per_pod : (pod + 1) * per_pod]
        _wire_up(ctx, name, pod_leaves, leaf_up_ports, leaf_ports.up, p1, pod_spines, spine_data, chooser, path, block=None)
    cores_per_plane = spine_ports.up // p2
    core_data = f.layouts[core_name].ports_of("data")
    spine_up_ports = spine_data[spine_ports.down : spine_ports.down + spine_ports.up]
    for plane in range(spines_per_pod):
        plane_cores = []
        for c in range(cores_per_plane):
            cname = ctx.name("core", "{fabric}-core-{plane:02d}-{core:02d}", path, fabric=name, plane=plane + 1, core=c + 1)
            plane_cores.append(
                ctx.add_device(
                    name=cname,
                    role="core",
                    model=core_name,
                    group=name,
                    placement=spec.placement.core,
                    slot=plane * cores_per_plane + c,
                    origin=path,
                    coords=(("fabric", name), ("plane", plane), ("core", c)),
                    tier=3,
                ).index
            )
        plane_spines = [spines[pod * spines_per_pod + plane] for pod in range(built_pods)]
        _wire_up(ctx, name, plane_spines, spine_up_ports, spine_ports.up, p2, plane_cores, core_data, chooser, path, block=None)
    facts.update(
        spines=len(spines),
        spines_per_pod=spines_per_pod,
        leaves_per_pod=per_pod,
        pods=built_pods,
        planned_pods=planned_pods,
        leaf_spine_parallel=p1,
        spine_spine_down=spine_ports.down,
        spine_up=spine_ports.up,
        cores=cores_per_plane * spines_per_pod,
        cores_per_plane=cores_per_plane,
        spine_core_parallel=p2,
        max_pods=k_core // p2,
        max_endpoint_ports=(k_core // p2) * per_pod * leaf_ports.down,
    )


def _wire_up(ctx, fabric, lower, lower_up_ports, up, p, upper, upper_ports, chooser, path, block) -> None:
    """Each lower switch's up-port m to upper switch m // p, on upper port (position * p + m % p)."""
    for pos, dev in enumerate(lower):
        for m in range(up):
            ctx.connect(fabric, dev, lower_up_ports[m], upper[m // p], upper_ports[pos * p + m % p], chooser=chooser, origin=path)


def _too_big(ctx, spec, path, wanted, radix, lower_ports, facts, unit="leaves") -> None:
    su_nodes, per_su = facts["su_nodes"], facts["leaves_per_su"]
    if unit == "leaves":
        max_sus = radix // per_su
        limit = f"{radix} leaves ({max_sus} SUs, {max_sus * su_nodes} nodes)"
        alt = f"at most {max_sus * su_nodes} nodes in 2 tiers with this switch; or tiers: 3; or a switch of higher radix"
    else:
        max_sus = radix * (facts.get("leaves_per_pod", 0) // per_su if "leaves_per_pod" in facts else 1)
        limit = f"{radix} pods"
        alt = "fewer nodes, a core switch of higher radix, or oversubscription at the spine"
    raise BuildError(
        [
            error(
                "topology-too-big",
                f"{spec.tiers}-tier fat tree with {radix}-port upper switches reaches at most {limit}; "
                f"this design needs {wanted} {unit}",
                path + ("endpoints",),
                alt,
            )
        ]
    )


def _endpoints(ctx: BuildContext, spec: FatTree, path: tuple):
    compute, service = [], []
    for i, ep in enumerate(spec.endpoints):
        if ep.group not in ctx.groups:
            from .context import did_you_mean

            raise ctx.fail(
                "unknown-reference",
                f"no node group or scale-up domain named {ep.group!r}",
                path + ("endpoints", i, "group"),
                did_you_mean(ep.group, sorted(ctx.groups)),
            )
        (service if ep.su is not None else compute).append((ep.group, ep))
    if not compute and not service:
        raise ctx.fail("no-endpoints", "the fabric has no endpoints", path + ("endpoints",))
    return compute, service


def _rails(ctx: BuildContext, spec: FatTree, compute, path: tuple) -> int:
    f = ctx.fabric
    counts = {}
    for _i, (group, _) in enumerate(compute):
        devs = ctx.groups[group]
        if not devs:
            continue
        n = len(f.layouts[f.devices[devs[0]].model].ports_of("data"))
        if n == 0:
            raise ctx.fail("no-data-ports", f"{group} devices have no data ports for a scale-out fabric", path + ("endpoints",))
        counts[group] = n
    values = set(counts.values())
    if len(values) > 1 and spec.rail_optimized:
        raise ctx.fail(
            "rails",
            "rail-optimised endpoints must all have the same number of NICs: "
            + ", ".join(f"{g}={n}" for g, n in sorted(counts.items())),
            path + ("endpoints",),
            "split them into separate fabrics or set rail_optimized: false",
        )
    return max(values) if values else 1


def describe_ratio(n: Fraction) -> str:
    return f"1:{format_fraction(n)}"
