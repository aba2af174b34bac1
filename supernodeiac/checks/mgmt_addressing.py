"""Management addressing: the out-of-band network holds a block for every rack of the site."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator

from ..fabric.fabric_facts import oob_switches
from ..facts.mgmt_addresses import MgmtPlan
from ..findings import Finding, error
from .base import CHECKS, CheckContext


@CHECKS.register("mgmt-addressing")
def check_mgmt_addressing(ctx: CheckContext) -> Iterator[Finding]:
    m = ctx.blueprint.management
    if m is None or m.addressing is None or m.switch not in ctx.fabric.layouts:
        return
    path = ("management", "addressing")
    access = len(ctx.fabric.layouts[m.switch].ports_of("data"))
    oobs = oob_switches(ctx.fabric.facts)
    plan = MgmtPlan(m.addressing, access, len(oobs))
    if plan.per_rack < access + 2:
        yield error(
            "mgmt-addressing",
            f"per_rack {plan.per_rack} leaves no room for {m.switch}'s {access} access ports, its own address and a spare",
            path + ("per_rack",),
            f"at least {access + 2} (or leave it out: the next power of two)",
        )
        return
    # Blocks are keyed by the rack's site index, so every rack position of the site needs one (and
    # each out-of-band switch of the aggregation layer one at the top of the network).
    racks = len(ctx.fabric.racks)
    if racks > plan.rack_capacity:
        needed = (racks + 1 + len(oobs)) * plan.per_rack
        prefix = plan.network.max_prefixlen - math.ceil(math.log2(needed))
        oob_text = f" beside {len(oobs)} for the out-of-band switches" if oobs else ""
        yield error(
            "mgmt-addressing",
            f"{m.addressing.network} holds {plan.rack_capacity} racks of {plan.per_rack} addresses{oob_text}; "
            f"the site has {racks} rack positions",
            path + ("network",),
            f"a /{prefix} or larger, or a smaller per_rack",
        )
    f = ctx.fabric
    for name in oobs:
        oob_access = len(f.layouts[f.device(name).model].ports_of("data"))
        if oob_access > plan.per_rack:
            yield error(
                "mgmt-addressing",
                f"per_rack {plan.per_rack} leaves no room for the {oob_access} access ports of {name}",
                path + ("per_rack",),
                f"at least {oob_access}",
            )
            break
    gateway = ipaddress.ip_address(plan.gateway)
    offset = int(gateway) - int(plan.network.network_address)
    if offset >= plan.per_rack:
        yield error(
            "mgmt-addressing",
            f"gateway {plan.gateway} lies in a rack's block (block 0, the first {plan.per_rack} addresses, is kept for it)",
            path + ("gateway",),
            f"an address between {plan.network.network_address + 1} and {plan.network.network_address + plan.per_rack - 1}",
        )
