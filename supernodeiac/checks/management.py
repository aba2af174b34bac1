"""Management: every port of role 'mgmt' is cabled, and only into the management network."""

from __future__ import annotations

from collections.abc import Iterator

from ..fabric import SITE_ROLES
from ..fabric.fabric_facts import management_of
from ..facts.mgmt_l2 import l2_loops
from ..findings import Finding, error, warning
from ..model.management import MgmtAddressing
from .base import CHECKS, CheckContext


@CHECKS.register("management")
def check_management(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    if not any(f.layouts[m].has_role("mgmt") for m in {d.model for d in f.devices}):
        return  # no device has a management port: nothing to cable, nothing misplaced
    cabled: set[int] = set()
    roles = [f.layouts[d.model].port_roles for d in f.devices]
    t = f.links
    # The cable ends on management ports, in link order (the one pass over every link's columns),
    # as (link position, device). An out-of-range port is the port-budget check's finding, not a crash here.
    mgmt_ends: list[tuple[int, int]] = []
    for i, a, a_port, b, b_port in zip(range(len(t)), t.a, t.a_port, t.b, t.b_port):
        ra, rb = roles[a], roles[b]
        if 0 <= a_port < len(ra) and ra[a_port] == "mgmt":
            mgmt_ends.append((i, a))
        if 0 <= b_port < len(rb) and rb[b_port] == "mgmt":
            mgmt_ends.append((i, b))
    for i, dev in mgmt_ends:
        spec = t.specs[t.spec[i]]
        if spec.fabric != "mgmt":
            yield error(
                "management",
                f"{f.devices[dev].name} management port is on the data plane ({spec.fabric})",
                spec.origin,
                "the management network never shares the data plane",
            )
        cabled.add(dev)
    # A site router's management port is the site's network's, not ours.
    missing = [d for d in f.devices if d.index not in cabled and f.layouts[d.model].has_role("mgmt") and d.role not in SITE_ROLES]
    if not missing:
        return
    if ctx.blueprint.management is None:
        yield warning(
            "management",
            f"{len(missing)} devices have management ports and no management network is declared (e.g. {missing[0].name})",
            (),
            "add a 'management:' section",
        )
        return
    unplaced = [d for d in missing if d.rack < 0]
    for d in missing[:5]:
        yield error(
            "management",
            f"{d.name} has a management port with no cable" + (" (it is not placed in a rack)" if d in unplaced else ""),
            d.origin,
            "give the device a placement",
        )


@CHECKS.register("management-reach")
def check_reach(ctx: CheckContext) -> Iterator[Finding]:
    """Every rack switch reaches the aggregation layer (else a warning names the island racks), and
    no aggregation switch is managed through itself (its management port on a switch that uplinks
    through it)."""
    f = ctx.fabric
    rack_switches = [d for d in f.devices if d.role == "mgmt"]
    if not rack_switches:
        return
    aggs = {d.index for d in f.devices if d.role == "mgmt-agg"}
    roles = [f.layouts[d.model].port_roles for d in f.devices]
    uplinked: dict[int, set[int]] = {d.index: set() for d in rack_switches}  # rack switch -> aggregation switches
    managed_by: dict[int, int] = {}  # aggregation switch -> the switch its management port is cabled to
    t = f.links
    mgmt_specs = {i for i, spec in enumerate(t.specs) if spec.fabric == "mgmt"}
    for a, a_port, b, b_port, s in zip(t.a, t.a_port, t.b, t.b_port, t.spec):
        if s not in mgmt_specs:
            continue
        for x, y in ((a, b), (b, a)):
            if x in uplinked and y in aggs:
                uplinked[x].add(y)
        for x, port, y in ((a, a_port, b), (b, b_port, a)):
            if x in aggs and 0 <= port < len(roles[x]) and roles[x][port] == "mgmt":
                managed_by[x] = y
    islands = [d for d in rack_switches if not uplinked[d.index]]
    if islands:
        names = ", ".join(f.racks[d.rack].name for d in islands[:8]) + (
            f" and {len(islands) - 8} more" if len(islands) > 8 else ""
        )
        yield warning(
            "management-islands",
            f"{len(islands)} of {len(rack_switches)} racks' management switches reach no aggregation switch (islands: {names})",
            ("management",) + (("aggregation",) if aggs else ()),
            "add management.aggregation (uplinks from every rack switch), or more aggregation ports"
            if not aggs
            else "check management.uplinks and the aggregation switches' ports",
        )
    for agg in sorted(aggs):
        peer = managed_by.get(agg)
        if peer is not None and agg in uplinked.get(peer, set()):
            yield warning(
                "management-loop",
                f"{f.devices[agg].name} is managed through itself: its management port is on {f.devices[peer].name}, "
                "which uplinks through it",
                ("management", "aggregation"),
                "cable the aggregation switches' management ports to an out-of-band switch of their own",
            )


@CHECKS.register("management-l2")
def check_l2_loops(ctx: CheckContext) -> Iterator[Finding]:
    """No cycle of bridged links in any VLAN (``facts/mgmt_l2.py``: the rule the SONiC configs'
    VLAN_MEMBER tables follow): with no STP, a loop is a broadcast storm on first power-up."""
    m = ctx.blueprint.management
    if m is None:
        return
    f = ctx.fabric
    vlan = m.addressing.vlan if m.addressing is not None else MgmtAddressing.model_fields["vlan"].default
    path = ("management", "design") if "design" in m.model_fields_set else ("management",)
    loops, count = l2_loops(f, m.design, vlan, limit=1)
    for loop in loops:
        ring = [f.devices[d].name for d in loop.devices]
        ring_text = " -> ".join(ring[:8]) + (" -> ..." if len(ring) > 8 else "") + f" -> {ring[0]}"
        more = f"; {count - 1} more independent loops" if count > 1 else ""
        yield error(
            "management-loop",
            f"layer-2 loop in VLAN {loop.vlan} of the management network ({m.design} design): {ring_text} "
            f"({len(loop.links)} bridged links, no STP or LAG between them){more}",
            path,
            "design: routed (each rack switch routes its rack's subnet, eBGP to the aggregation), design: mclag (the "
            "aggregation pair one MCLAG domain, each rack switch's uplinks one PortChannel), or one uplink per rack switch",
        )


@CHECKS.register("management-border")
def check_border_cables(ctx: CheckContext) -> Iterator[Finding]:
    """A border whose site routers have no model and placement: its cables are in the switch
    configs only, so the crew gets no cabling row, part or label for them."""
    m = ctx.blueprint.management
    if m is None or m.border is None or m.border.placement is not None:
        return
    facts = management_of(ctx.fabric.facts)
    links = len(facts.get("border", [])) if facts is not None else 0
    if links:
        yield warning(
            "management",
            f"the border's {links} cables (aggregation switch to site router) are in no cabling row, BOM line or "
            "label: the site routers have no place in the Fabric",
            ("management", "border"),
            "give border.model (the routers' catalogue switch) and border.placement (their racks and units)",
        )
