"""The subnet manager's routing engine against the traffic NCCL sends: one static SL, one VL."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..facts.ib_fabric import infiniband_fabrics, node_counts
from ..facts.ib_routes import MAX_ENTRIES, route_gap
from ..facts.ib_routing import NCCL_DEFAULT_SL, NO_LMC_ENGINES, UNICAST_LIDS, default_engine, lids_needed, routing_plan
from ..findings import Finding, error, info, warning
from ..model.blueprint import built_fabrics
from ..model.clos import FatTree
from .base import CHECKS, CheckContext


@CHECKS.register("ib-routing")
def check_ib_routing(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    index = {name: i for i, _, name in built_fabrics(ctx.blueprint)}
    for name in infiniband_fabrics(f):
        kind = f.facts[name]["kind"]
        plan = routing_plan(ctx.blueprint, name, f.facts[name])
        i = index.get(name)
        path: tuple = ("scaleout", i, "routing_engine" if plan.pinned else "kind") if i is not None else ()
        chosen = "the blueprint's routing_engine" if plan.pinned else "the plan's choice"
        if plan.roots == "one":
            chosen += ", rooted at one router"
        message = (
            f"{name}: OpenSM routes with {plan.engine} ({chosen}); NCCL puts all its queue pairs on one static SL "
            f"(NCCL_IB_SL, default {NCCL_DEFAULT_SL}), so its traffic shares one virtual lane"
        )
        if plan.severity == "ok":
            yield info("ib-routing", f"{message}: deadlock-free, {plan.why}", path)
            continue
        default = default_engine(f.facts[name])
        make = error if plan.severity == "error" else warning
        if plan.engine == "nue":  # deadlock-free, only slow to compute at this size
            hint = f"leave routing_engine out: the plan then uses {default}, deadlock-free on one VL and quick to compute here"
            yield make("ib-routing", f"{message}: {plan.why}", path, hint)
            continue
        if kind in ("fat-tree", "dragonfly", "dragonfly-plus"):
            also = "" if (kind, default) == ("dragonfly", "updn") else " or set it to nue"  # nue: too slow there
            hint = f"leave routing_engine out (the plan then uses {default}, deadlock-free on one VL here){also}"
        else:
            hint = "set routing_engine to nue (deadlock-free on one VL on any topology)"
        yield make("ib-routing", f"{message}: it can deadlock, {plan.why}", path, hint)


@CHECKS.register("acceptance-routes")
def check_acceptance_routes(ctx: CheckContext) -> Iterator[Finding]:
    """Where snc cannot compute the subnet manager's routes (facts/ib_routes.route_gap), the
    acceptance plan's tier tests are chosen from the topology alone: said at the fabric, so nobody
    reads the plan's coverage as proof that each named cable carried its test."""
    f = ctx.fabric
    index = {name: i for i, _, name in built_fabrics(ctx.blueprint)}
    for name in infiniband_fabrics(f):
        engine = routing_plan(ctx.blueprint, name, f.facts[name]).engine
        gap = route_gap(f, name, engine)
        if not gap or not _switch_links(ctx, name):
            continue
        i = index.get(name)
        yield info(
            "acceptance-routes",
            f"{name}: the acceptance plan's tier tests follow no modelled route ({gap}): a test may not cross "
            "the cables it names; snc check-results attributes a failure to the cables on the path perftest.sh "
            "records for it (ibtracert)",
            ("scaleout", i) if i is not None else (),
            f"acceptance/{name}/perftest.sh and checklist.md say so; the routes are modelled for OpenSM's ftree "
            f"on a fat tree of at most {MAX_ENTRIES:,} switch x HCA-port entries",
        )


def _switch_links(ctx: CheckContext, name: str) -> bool:
    """Whether fabric ``name`` has a switch-to-switch link (tier tests to plan)."""
    f = ctx.fabric
    idx = np.asarray(f.links.indices_of(name), dtype=np.int64)
    arr, dv = f.links.arrays(), f.device_arrays()
    switch_model = np.array([f.models[m].kind == "switch" for m in dv.models], dtype=bool)
    return bool(np.any(switch_model[dv.model[arr.a[idx]]] & switch_model[dv.model[arr.b[idx]]]))


def _lid_demand(ctx: CheckContext, name: str, lmc: int) -> tuple[int, int, int]:
    """(switches, HCA ports, LIDs): one LID per switch (port 0, base LMC), 2^lmc per HCA port."""
    switches, hca_ports = node_counts(ctx.fabric, name)
    return switches, hca_ports, lids_needed(switches, hca_ports, lmc)


@CHECKS.register("ib-subnet-manager")
def check_subnet_manager(ctx: CheckContext) -> Iterator[Finding]:
    """The blueprint's subnet_manager section against the engine and the LID space."""
    ib = set(infiniband_fabrics(ctx.fabric))
    for i, spec, name in built_fabrics(ctx.blueprint):
        sm = getattr(spec, "subnet_manager", None)
        if sm is None:
            if name in ib:  # the LID space binds every subnet, declared subnet manager or not
                yield from _lid_space(ctx, spec, name, 0, ("scaleout", i))
            continue
        path: tuple = ("scaleout", i, "subnet_manager")
        if name not in ib:
            yield error(
                "ib-subnet-manager",
                f"{name}: subnet_manager is for InfiniBand fabrics; this one is Ethernet",
                path,
                "remove subnet_manager (an Ethernet fabric has no subnet manager)",
            )
            continue
        plan = routing_plan(ctx.blueprint, name, ctx.fabric.facts[name])
        if sm.lmc and plan.engine in NO_LMC_ENGINES:
            yield error(
                "ib-subnet-manager",
                f"{name}: lmc {sm.lmc} with {plan.engine} routing: OpenSM's {plan.engine} engine does not support "
                "LMC > 0 and routes with its default engine instead",
                (*path, "lmc"),
                f"set lmc 0 with {plan.engine} (it balances over the fabric's paths with one LID per port)",
            )
        yield from _lid_space(ctx, spec, name, sm.lmc, (*path, "lmc"))


def _lid_space(ctx: CheckContext, spec: object, name: str, lmc: int, path: tuple) -> Iterator[Finding]:
    """One subnet's LIDs against the unicast LID space: over it, the subnet manager cannot bring it up."""
    switches, ports, lids = _lid_demand(ctx, name, lmc)
    if lids <= UNICAST_LIDS:
        return
    split = (
        "split the fabric into planes (planes: N, each plane its own subnet with its own subnet manager)"
        if isinstance(spec, FatTree)
        else "split it into several fabrics (each its own subnet with its own subnet manager)"
    )
    yield error(
        "ib-subnet-manager",
        f"{name}: {ports:,} HCA ports x 2^{lmc} LIDs + {switches:,} switches = {lids:,} LIDs, over the "
        f"{UNICAST_LIDS:,} unicast LIDs of one subnet: the subnet manager cannot address every port",
        path,
        ("lower lmc, or " if lmc else "") + split,
    )
