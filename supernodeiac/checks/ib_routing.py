"""The subnet manager's routing engine against the traffic NCCL sends: one static SL, one VL."""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.ib_fabric import infiniband_fabrics
from ..facts.ib_routing import DEFAULT_ENGINE, NCCL_DEFAULT_SL, routing_plan
from ..findings import Finding, error, info, warning
from ..model.blueprint import built_fabrics
from .base import CHECKS, CheckContext


@CHECKS.register("ib-routing")
def check_ib_routing(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    index = {name: i for i, _, name in built_fabrics(ctx.blueprint)}
    for name in infiniband_fabrics(f):
        kind = f.facts[name]["kind"]
        plan = routing_plan(ctx.blueprint, name, kind)
        i = index.get(name)
        path: tuple = ("scaleout", i, "routing_engine" if plan.pinned else "kind") if i is not None else ()
        chosen = "the blueprint's routing_engine" if plan.pinned else "the plan's choice"
        message = (
            f"{name}: OpenSM routes with {plan.engine} ({chosen}); NCCL puts all its queue pairs on one static SL "
            f"(NCCL_IB_SL, default {NCCL_DEFAULT_SL}), so its traffic shares one virtual lane"
        )
        if plan.severity == "ok":
            yield info("ib-routing", f"{message}: deadlock-free, {plan.why}", path)
            continue
        default = DEFAULT_ENGINE.get(kind)
        hint = (
            f"leave routing_engine out (the plan then uses {default}, deadlock-free on one VL here) or set it to nue"
            if default
            else "set routing_engine to nue (deadlock-free on one VL on any topology)"
        )
        make = error if plan.severity == "error" else warning
        yield make("ib-routing", f"{message}: it can deadlock, {plan.why}", path, hint)
