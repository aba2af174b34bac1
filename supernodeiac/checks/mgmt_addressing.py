"""Management addressing: the out-of-band network holds a block for every rack of the site."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator

from ..fabric.fabric_facts import oob_switches
from ..facts.mgmt_l2 import gateway_owners
from ..facts.switch_facts import mgmt_plan
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
    plan = mgmt_plan(m.addressing, access, ctx.fabric)
    if plan.per_rack < access + plan.reserved:
        room = "the subnet's network, gateway and broadcast addresses" if plan.routed else "its own address and a spare"
        yield error(
            "mgmt-addressing",
            f"per_rack {plan.per_rack} leaves no room for {m.switch}'s {access} access ports and {room}",
            path + ("per_rack",),
            f"at least {access + plan.reserved} (or leave it out: the next power of two)",
        )
        return
    if plan.routed and plan.per_rack & (plan.per_rack - 1):
        yield error(
            "mgmt-addressing",
            f"per_rack {plan.per_rack} is not a power of two: in the routed design each rack's block is its own subnet",
            path + ("per_rack",),
            f"{1 << plan.per_rack.bit_length()} (or leave it out)",
        )
        return
    if plan.routed and m.addressing.gateway is not None:
        yield error(
            "mgmt-addressing",
            f"gateway {m.addressing.gateway} is given, but in the routed design every rack's gateway is its rack switch",
            path + ("gateway",),
            "leave gateway out, or management.design: flat",
        )
    # Blocks are keyed by the rack's site index, so every rack position of the site needs one (and
    # each out-of-band switch of the aggregation layer one at the top of the network).
    racks = len(ctx.fabric.racks)
    if racks > plan.rack_capacity:
        needed = (racks + 1 + len(oobs) + plan.link_blocks) * plan.per_rack
        prefix = plan.network.max_prefixlen - math.ceil(math.log2(needed))
        oob_text = f" beside {len(oobs)} for the out-of-band switches" if oobs else ""
        if plan.link_blocks:
            oob_text += f" and {plan.link_blocks} for the uplinks' {plan.uplink_slots} /31s"
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
        if oob_access + plan.reserved - 2 > plan.per_rack:
            yield error(
                "mgmt-addressing",
                f"per_rack {plan.per_rack} leaves no room for the {oob_access} access ports of {name}",
                path + ("per_rack",),
                f"at least {oob_access}",
            )
            break
    if not plan.routed and not gateway_owners(f, m.design):
        # Flat: the gateway every device is told (DHCP routers, MGMT_INTERFACE gwaddr) is the first
        # aggregation switch's VLAN interface; without one it would be no device's address.
        yield error(
            "mgmt-addressing",
            f"gateway {plan.gateway} is no device's address: in the {m.design} design the gateway is the first "
            "aggregation switch's VLAN interface, and the management network has no aggregation switch",
            path + ("gateway",) if m.addressing.gateway is not None else path,
            "add management.aggregation (its first switch carries the gateway), or design: routed (every rack "
            "switch is its rack's gateway)",
        )
    gateway = ipaddress.ip_address(plan.gateway)
    offset = int(gateway) - int(plan.network.network_address)
    if offset >= plan.per_rack:
        yield error(
            "mgmt-addressing",
            f"gateway {plan.gateway} lies in a rack's block (block 0, the first {plan.per_rack} addresses, is kept for it)",
            path + ("gateway",),
            f"an address between {plan.network.network_address + 1} and {plan.network.network_address + plan.per_rack - 1}",
        )
