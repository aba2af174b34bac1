"""The subnet manager's routing engine against the traffic NCCL sends: one static SL, one VL."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.ib_fabric import infiniband_fabrics
from ..facts.ib_routing import NCCL_DEFAULT_SL, default_engine, routing_plan
from ..findings import Finding, error, info, warning
from ..model.blueprint import built_fabrics
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
