"""Out-of-band management: one switch per rack that has management ports (or, with ``shared``,
one per group of racks: per N rack positions of a row, per row, or listed groups), every BMC and
switch management port cabled to it, and each rack switch's ``uplinks`` spread round-robin over the
aggregation switches (consecutive uplinks of a rack reach different ones).

Around it, as declared:

* **the aggregation switches' own management ports** go to out-of-band switches of their own
  (``mgmt-oob-01``.., as many as their ports need, stacked just above the last aggregation switch
  or at ``aggregation.oob_placement``), never to a rack switch that uplinks through them: a switch
  is never managed through itself;
* **console servers** (``console:``): one in every rack that has console ports, just below the rack
  switch (and below the ports the rack's PDUs take); every console port of the rack is cabled to
  it, and its management port to the rack switch;
* **rack PDUs** (``pdus:``): ``per_rack`` 0U PDUs in every rack that holds devices and no power
  shelves (a busbar rack is fed by its shelves), each cabled to the rack switch.

Ports are keyed by stable coordinates, so that growing the fabric moves no management cable:

* **access ports follow rack units**: the device at U u takes rack-switch port u (its k-th
  management port, port u + k, within its own units); a board in a chassis takes a port of the
  chassis's units by its slot (the chassis's own ports, then front slots F01.., then rear slots
  R01..); the rack's 0U PDUs take the top ports (PDU 1 the last port, PDU 2 the one below...).
  A device added below others takes its own unit's port and moves nobody. Console ports follow
  units the same way on the console server.
* **aggregation ports follow row blocks**: the rows, in list order, each hold a block of
  ``planned_racks`` (default ``racks``) rack positions on the aggregation layer; rack k of a row
  sends uplink m to slot ``(block + k - 1) x uplinks + m``, spread round-robin over the
  aggregation switches. Racks added to a row within its plan, or rows appended, move no uplink.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict

from ..fabric import Device, Fabric
from ..fabric.fabric_facts import BorderLinkFacts, ManagementFacts
from ..facts.link_addresses import ip_text
from ..facts.mgmt_l2 import routing_aggregation
from ..model.management import Management
from .base import BUILDERS
from .context import BuildContext
from .media import MediaChooser


@BUILDERS.register("management")
def build_management(ctx: BuildContext, spec: Management, path: tuple) -> None:
    f = ctx.fabric
    site = ctx.blueprint.site
    sw_model = ctx.model(spec.switch, path + ("switch",), "switch")
    policy_path = path + ("media",) if spec.media else ("media",)
    chooser = ctx.chooser(spec.media, policy_path)
    u = spec.u or site.rack_units - sw_model.height_u + 1
    sw_ports = f.layouts[spec.switch]
    access, uplinks = sw_ports.ports_of("data"), sw_ports.ports_of("uplink")

    if spec.design == "mclag":
        _mclag_shape(ctx, spec, path)
    aggs, oobs = _aggregation(ctx, spec, path)
    agg_ports = f.layouts[spec.aggregation.switch].ports_of("data") if spec.aggregation is not None else []
    if spec.design == "mclag":
        agg_ports = _mclag_pair(ctx, spec, path, aggs, agg_ports, chooser)
    if spec.design == "flat" and len(aggs) > 1:
        agg_ports = _inter_aggregation(ctx, spec, path, aggs, agg_ports, chooser)
    border: list[BorderLinkFacts] = []
    if spec.border is not None:
        agg_ports, border = _border(ctx, spec, path, aggs, agg_ports)
    blocks = _row_blocks(ctx, spec, path, len(aggs) * len(agg_ports)) if aggs else {}
    occupied = sorted({d.rack for d in f.devices if d.rack >= 0})
    _pdus(ctx, spec, path, occupied)
    pdus = spec.pdus.per_rack if spec.pdus is not None else 0
    # The console server sits just below the rack switch and the units whose ports the PDUs take,
    # or just above the switch when that leaves no unit (a rack switch at the bottom).
    below = min(u, len(access) - pdus + 1)
    consoles = _console_servers(ctx, spec, path, below, u + sw_model.height_u)

    by_rack: dict[int, list[int]] = defaultdict(list)
    for dev in f.devices:
        if dev.rack >= 0 and f.layouts[dev.model].has_role("mgmt") and dev.role != "mgmt-agg":
            by_rack[dev.rack].append(dev.index)
    blocks_of: dict[str, int] = {}  # a shared switch -> the rack that keys its address block
    for ordinal, (group, shared) in enumerate(_switch_groups(ctx, spec, path, sorted(by_rack))):
        members = [r for r in group if by_rack.get(r)]
        if not members:
            continue
        key = group[0]  # the group's first rack names the switch, keys its address block and uplink slots
        rack = f.racks[key]
        placement = spec.shared.placement if shared and spec.shared is not None else None
        sw = ctx.add_device(
            name=ctx.name("mgmt", "mgmt-{rack}", path, rack=rack.name),
            role="mgmt",
            model=spec.switch,
            group="mgmt",
            placement=placement,
            slot=ordinal,
            origin=path + ("shared",) if shared else path,
            coords=(("rack", rack.name),),
            tier=1,
            at=None if placement is not None else (members[0] if shared else key, u),
        )
        where = f"{spec.switch} {sw.name}"
        if shared:
            blocks_of[sw.name] = key
            slots = _group_ports(ctx, spec, group, by_rack, len(access), where, path + ("shared",))
        else:
            slots = _unit_ports(ctx, by_rack[key], "mgmt", len(access), where, path + ("switch",))
        rows = [(dev, port, sw.index, access[k]) for dev, port, k in slots]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path, tier="node-leaf")
        if aggs:
            _uplink(ctx, spec, path, sw.index, blocks[rack.row] + rack.position - 1, uplinks, aggs, agg_ports, chooser)
    if oobs:
        # The aggregation switches' management ports: to the OOB switches, whose forwarding does not
        # depend on them (their own management ports are cabled in their racks like any device's).
        ends = [(agg, port) for agg in aggs for port in f.layouts[f.devices[agg].model].ports_of("mgmt")]
        rows = []
        for j, oob in enumerate(oobs):
            oob_ports = f.layouts[f.devices[oob].model].ports_of("data")
            chunk = ends[j * len(oob_ports) : (j + 1) * len(oob_ports)]
            rows += [(dev, port, oob, oob_ports[k]) for k, (dev, port) in enumerate(chunk)]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path + ("aggregation",), tier="node-leaf")
    _cable_consoles(ctx, spec, path, consoles, chooser)
    if border and spec.border is not None and spec.border.placement is not None:
        # Last, so that the routers take no management cable and move no device placed before them.
        _site_routers(ctx, spec, path, aggs, border, chooser)
    facts: ManagementFacts = {
        "kind": "management",
        "rack_switches": sum(1 for d in f.devices if d.role == "mgmt"),
        "aggregation": len(aggs),
        "oob_switches": [f.devices[o].name for o in oobs],
        "uplinks_per_rack": spec.uplinks if aggs else 0,
        "design": spec.design,
        # Every planned rack position's uplinks (occupied or not): the routed design's /31 plan.
        "uplink_slots": sum(row.capacity for row in site.rows) * spec.uplinks if aggs else 0,
    }
    if blocks_of:
        facts["blocks"] = blocks_of
    if border:
        facts["border"] = border
    f.facts["mgmt"] = facts


def _mclag_shape(ctx: BuildContext, spec: Management, path: tuple) -> None:
    """The MCLAG design's pair and uplinks, checked before any switch is placed."""
    agg = spec.aggregation
    if agg is None:
        raise ctx.fail("management", "design: mclag needs an aggregation pair", path + ("design",),
                       "add management.aggregation with count: 2")  # fmt: skip
    if agg.count != 2:
        raise ctx.fail(
            "management", f"an MCLAG domain is a pair of switches; aggregation.count is {agg.count}",
            path + ("aggregation", "count"), "count: 2 (or design: routed for more aggregation switches)",
        )  # fmt: skip
    if spec.uplinks % 2:
        raise ctx.fail(
            "management",
            f"uplinks: {spec.uplinks}: a rack switch's PortChannel to the MCLAG pair takes as many members on each peer",
            path + ("uplinks",),
            f"an even number ({spec.uplinks + 1}): each rack switch reaches both peers",
        )


def _mclag_pair(
    ctx: BuildContext, spec: Management, path: tuple, aggs: list[int], ports: list[int], chooser: MediaChooser
) -> list[int]:
    """The MCLAG design's aggregation pair: exactly two switches, their top ``peer_links`` data
    ports cabled to each other (the peer link, port k to port k), every rack switch's uplinks split
    evenly over the two. Returns the data ports left for the rack switches' uplinks."""
    agg = spec.aggregation
    assert agg is not None  # _mclag_shape
    m = spec.mclag
    peer_links = m.peer_links if m is not None else 2
    where = path + ("mclag",) if m is not None else path + ("design",)
    if peer_links >= len(ports):
        raise ctx.fail("port-budget", f"{agg.switch} has {len(ports)} data ports; the peer link asks {peer_links}",
                       where + ("peer_links",) if m is not None else where, f"at most {len(ports) - 1}")  # fmt: skip
    if m is not None and ctx.blueprint.management is not None:
        addressing = ctx.blueprint.management.addressing
        if addressing is not None and ipaddress.ip_network(m.keepalive).overlaps(ipaddress.ip_network(addressing.network)):
            raise ctx.fail(
                "mgmt-addressing",
                f"the MCLAG keepalive {m.keepalive} overlaps the management network {addressing.network}",
                where + ("keepalive",),
                "a /31 outside the management network (the peers route it on a VLAN of its own)",
            )
    peer = ports[len(ports) - peer_links :]
    rows = [(aggs[0], p, aggs[1], p) for p in peer]
    ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=where)  # the peer link: no tier of the tree
    return ports[: len(ports) - peer_links]


def _inter_aggregation(
    ctx: BuildContext, spec: Management, path: tuple, aggs: list[int], ports: list[int], chooser: MediaChooser
) -> list[int]:
    """The flat design's aggregation switches joined into one VLAN: aggregation switch k + 1 (k >=
    1) cabled to the first (the VLAN's gateway) on the top data port k of both, a star, so that the
    racks uplinked to any of them reach the gateway and the layer adds no cycle (with one uplink per
    rack switch the whole VLAN is a tree). Returns the data ports left for the rack switches' uplinks."""
    need = len(aggs) - 1
    if need >= len(ports):
        agg = spec.aggregation
        assert agg is not None
        raise ctx.fail("port-budget", f"{agg.switch} has {len(ports)} data ports; {need} inter-aggregation links asked",
                       path + ("aggregation", "count"), "fewer aggregation switches, or design: routed")  # fmt: skip
    rows = [(aggs[0], ports[len(ports) - k], aggs[k], ports[len(ports) - k]) for k in range(1, len(aggs))]
    ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path + ("aggregation",))  # inside the layer: no tier
    return ports[: len(ports) - need]


def _border(
    ctx: BuildContext, spec: Management, path: tuple, aggs: list[int], ports: list[int]
) -> tuple[list[int], list[BorderLinkFacts]]:
    """The border links (``management.border``): the chosen aggregation switches' top data ports,
    one per site router (or as ``links`` lists them), numbered from ``border.network`` or as given.
    The site routers are not devices of the Fabric (snc configures none of them): each link's far
    end is the router and port the blueprint names. Returns the data ports left for the racks."""
    b = spec.border
    assert b is not None
    where = path + ("border",)
    f = ctx.fabric
    if not aggs:
        raise ctx.fail("management", "a border needs the aggregation switches that uplink to the site",
                       where, "add management.aggregation")  # fmt: skip
    if spec.addressing is None:
        raise ctx.fail("management", "a border needs management.addressing (the network it announces, the ASN it peers from)",
                       where, "add management.addressing")  # fmt: skip
    mgmt_net = ipaddress.ip_network(spec.addressing.network)
    routing = routing_aggregation(spec.design, aggs)
    by_name = {f.devices[a].name: a for a in aggs}
    chosen: list[int] = []
    for k, name in enumerate(b.switches or [f.devices[a].name for a in routing]):
        at = where + ("switches", k)
        if name not in by_name:
            raise ctx.fail("unknown-reference", f"{name!r} is not an aggregation switch", at, f"one of {', '.join(by_name)}")
        if by_name[name] not in routing:
            raise ctx.fail(
                "management",
                f"{name} does not route the management network ({spec.design} design: only "
                f"{', '.join(f.devices[a].name for a in routing)} carries its gateway)",
                at,
                "uplink the switches that carry the gateway, or design: routed / mclag",
            )
        if by_name[name] in chosen:
            raise ctx.fail("management", f"{name} is listed twice", at, "list each aggregation switch once")
        chosen.append(by_name[name])
    routers = {r.name: r for r in b.routers}
    # (switch, router, own address, router's address, router's port, blueprint path)
    planned: list[tuple[int, str, str, str, str | None, tuple]] = []
    if b.network is not None:
        net = ipaddress.ip_network(b.network)
        count = len(chosen) * len(b.routers)
        if net.num_addresses < 2 * count:
            raise ctx.fail("mgmt-addressing", f"{b.network} holds {net.num_addresses // 2} point-to-point links; the border has "
                           f"{len(chosen)} switches x {len(b.routers)} routers = {count}", where + ("network",),
                           f"a /{net.max_prefixlen - (2 * count - 1).bit_length()} or larger")  # fmt: skip
        base, plen = int(net.network_address), net.max_prefixlen - 1
        for j, sw in enumerate(chosen):
            for k, r in enumerate(b.routers):
                low = base + 2 * (j * len(b.routers) + k)
                own, peer = ip_text(net.version, low + 1), ip_text(net.version, low)
                planned.append((sw, r.name, f"{own}/{plen}", peer, None, where + ("network",)))
        families = [(net, where + ("network",))]
    else:
        assert b.links is not None
        families = []
        for i, link in enumerate(b.links):
            at = where + ("links", i)
            if link.switch not in by_name or by_name[link.switch] not in chosen:
                raise ctx.fail("unknown-reference", f"{link.switch!r} is not a border switch", at + ("switch",),
                               f"one of {', '.join(f.devices[a].name for a in chosen)}")  # fmt: skip
            if link.router not in routers:
                raise ctx.fail("unknown-reference", f"{link.router!r} is not a site router of border.routers", at + ("router",),
                               f"one of {', '.join(routers)}")  # fmt: skip
            planned.append((by_name[link.switch], link.router, link.address, link.peer, link.peer_port, at))
            families.append((ipaddress.ip_interface(link.address).network, at + ("address",)))
    for net, at in families:
        if net.version != mgmt_net.version:
            raise ctx.fail(
                "mgmt-addressing",
                f"border link {net} is IPv{net.version}, the management network IPv{mgmt_net.version}: an "
                f"IPv{net.version} session carries IPv{net.version} prefixes (BGP activates the neighbour's own family)",
                at,
                f"IPv{mgmt_net.version} border addresses",
            )
        if net.overlaps(mgmt_net):
            raise ctx.fail("mgmt-addressing", f"border link {net} overlaps the management network {mgmt_net}", at,
                           "addresses outside management.addressing.network")  # fmt: skip
    seen: dict[str, tuple] = {}
    for _, _, own, peer, _, at in planned:
        for address in (own.split("/")[0], peer):
            if address in seen:
                raise ctx.fail("address-overlap", f"border address {address} is given twice", at, "one /31 per link")
            seen[address] = at
    for k, prefix in enumerate(b.announce or []):
        if ipaddress.ip_network(prefix).version != mgmt_net.version:
            raise ctx.fail("mgmt-addressing", f"{prefix} is not of the border sessions' family (IPv{mgmt_net.version})",
                           where + ("announce", k), f"IPv{mgmt_net.version} prefixes")  # fmt: skip
    per_switch: dict[int, int] = defaultdict(int)
    for sw, *_ in planned:
        per_switch[sw] += 1
    need = max(per_switch.values())
    if need >= len(ports):
        agg = spec.aggregation
        assert agg is not None
        raise ctx.fail("port-budget", f"{agg.switch} has {len(ports)} data ports left; the border asks {need} on a switch",
                       where, "fewer border links per switch, or an aggregation switch with more ports")  # fmt: skip
    out: list[BorderLinkFacts] = []
    used: dict[int, int] = defaultdict(int)
    for sw, router, own, peer, peer_port, _ in planned:
        port = ports[len(ports) - 1 - used[sw]]  # the top data ports left, downwards
        used[sw] += 1
        record: BorderLinkFacts = {"switch": f.devices[sw].name, "port": port, "router": router,
                                   "asn": routers[router].asn, "address": own, "peer": peer}  # fmt: skip
        if peer_port is not None:
            record["peer_port"] = peer_port
        out.append(record)
    return ports[: len(ports) - need], out


def _site_routers(
    ctx: BuildContext, spec: Management, path: tuple, aggs: list[int], border: list[BorderLinkFacts], chooser: MediaChooser
) -> None:
    """``border.model`` and ``border.placement``: the site routers as site-owned devices (role
    ``site-router``: placed and cabled, never ordered or configured) and every border link a cable
    of the management network from the aggregation switch's port to the router's port that
    ``links`` names, or else its next data port (a router's links in border order take its data
    ports from the first), so the cabling plan, BOM, labels and LLDP hold the border like any
    cable. Each link's ``peer_port`` becomes the router port's name."""
    b = spec.border
    assert b is not None and b.model is not None and b.placement is not None
    where = path + ("border",)
    f = ctx.fabric
    ctx.model(b.model, where + ("model",), "switch")
    routers: dict[str, Device] = {}
    for k, r in enumerate(b.routers):
        routers[r.name] = ctx.add_device(
            name=r.name,
            role="site-router",
            model=b.model,
            group="mgmt",
            placement=b.placement,
            slot=k,
            origin=where + ("routers", k),
            coords=(("router", r.name),),
            tier=3,
        )
    layout = f.layouts[b.model]
    data = layout.ports_of("data")
    by_name = {layout.name(p): p for p in data}
    switch_of = {f.devices[a].name: a for a in aggs}
    taken: dict[str, set[int]] = defaultdict(set)
    given = [(i, link) for i, link in enumerate(border) if "peer_port" in link]
    for i, link in given:
        port = by_name.get(link["peer_port"])
        at = where + ("links", i, "peer_port")
        if port is None:
            raise ctx.fail("unknown-reference", f"{b.model} has no data port {link['peer_port']!r}", at,
                           f"one of {', '.join(layout.name(p) for p in data[:4])} ... {layout.name(data[-1])}")  # fmt: skip
        if port in taken[link["router"]]:
            raise ctx.fail("port-budget", f"{link['router']} port {link['peer_port']} is given twice", at, "one link per port")
        taken[link["router"]].add(port)
    rows: list[tuple[int, int, int, int]] = []
    for link in border:
        name = link["router"]
        if "peer_port" in link:
            port = by_name[link["peer_port"]]
        else:
            free = [p for p in data if p not in taken[name]]
            if not free:
                raise ctx.fail("port-budget", f"{name} ({b.model}) has {len(data)} data ports; the border asks more",
                               where + ("model",), "a site router model with more ports, or fewer border links")  # fmt: skip
            port = free[0]
            taken[name].add(port)
            link["peer_port"] = layout.name(port)
        rows.append((switch_of[link["switch"]], link["port"], routers[name].index, port))
    ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=where, tier="spine-core")


def _switch_groups(ctx: BuildContext, spec: Management, path: tuple, occupied: list[int]) -> list[tuple[list[int], bool]]:
    """The racks each management switch serves, in order, and whether the group is shared: the
    ``shared`` groups first (listed ``groups``, then ``racks`` per row, in row and position order,
    every planned group counted so that a group's ordinal, and so its placement slot, is stable),
    then one group of its own for every other occupied rack."""
    f = ctx.fabric
    sh = spec.shared
    if sh is None:
        return [([r], False) for r in occupied]
    where = path + ("shared",)
    by_name = {r.name: r.index for r in f.racks}
    out: list[tuple[list[int], bool]] = []
    taken: dict[int, tuple] = {}
    for i, names in enumerate(sh.groups or []):
        group = []
        for j, name in enumerate(names):
            at = where + ("groups", i, j)
            if name not in by_name:
                known = ", ".join(r.name for r in f.racks[:6])
                raise ctx.fail("unknown-reference", f"rack {name!r} is not a rack of the site", at, f"one of {known}, ...")
            r = by_name[name]
            if r in taken:
                raise ctx.fail("management", f"rack {name} is in two groups of shared management switches", at,
                               "list each rack in one group")  # fmt: skip
            taken[r] = at
            group.append(r)
        out.append((group, True))
    if sh.racks is not None:
        rows = [row.name for row in ctx.blueprint.site.rows]
        for k, name in enumerate(sh.rows or []):
            if name not in rows:
                raise ctx.fail("unknown-reference", f"row {name!r} is not a row of the site", where + ("rows", k),
                               f"one of {', '.join(rows)}")  # fmt: skip
        chosen = set(sh.rows or rows)
        for row in ctx.blueprint.site.rows:
            if row.name not in chosen:
                continue
            racks = [r for r in f.racks if r.row == row.name and r.index not in taken]
            n = row.capacity if sh.racks == "row" else sh.racks
            for first in range(0, max(row.capacity, 1), n):
                out.append(([r.index for r in racks if first < r.position <= first + n], True))
    grouped = {r for group, _ in out for r in group}
    out += [([r], False) for r in occupied if r not in grouped]
    return out


def _group_ports(
    ctx: BuildContext,
    spec: Management,
    group: list[int],
    by_rack: dict[int, list[int]],
    ports: int,
    switch: str,
    path: tuple,
) -> list[tuple[int, int, int]]:
    """(device, port, k) for a shared switch: the group's racks in order, each rack's devices by
    rack unit (boards in a chassis by slot, 0U devices last), on consecutive access ports; with
    ``ports_per_rack``, rack k of the group starts at port k x ports_per_rack."""
    f = ctx.fabric
    devices = f.devices
    assert spec.shared is not None
    per = spec.shared.ports_per_rack
    if per is not None and per * len(group) > ports:
        raise ctx.fail(
            "port-budget",
            f"{switch} has {ports} access ports; {len(group)} racks x ports_per_rack {per} asked",
            path + ("ports_per_rack",),
            f"at most {ports // len(group)} per rack for groups of {len(group)}, or smaller groups",
        )

    def order(i: int) -> tuple:
        d = devices[i]
        host = devices[d.chassis] if d.chassis >= 0 else d
        zero = d.chassis < 0 and f.models[d.model].height_u == 0
        return (zero, host.u, _slot_index(f, host, d.slot) + 1 if d.chassis >= 0 else 0, i)

    out: list[tuple[int, int, int]] = []
    k = 0
    for n, rack in enumerate(group):
        start = k if per is None else n * per
        k = start
        for i in sorted(by_rack.get(rack, []), key=order):
            for port in f.layouts[devices[i].model].ports_of("mgmt"):
                if k >= ports or (per is not None and k >= start + per):
                    room = f"{ports} access ports" if per is None else f"{per} ports for rack {f.racks[rack].name}"
                    raise ctx.fail(
                        "port-budget",
                        f"{switch} serves racks {', '.join(f.racks[r].name for r in group)}: "
                        f"{devices[i].name} in {f.racks[rack].name} needs one more port than its {room}",
                        path,
                        "smaller groups of racks (shared.racks or shared.groups), a larger ports_per_rack, "
                        "or a switch with more access ports",
                    )
                out.append((i, port, k))
                k += 1
    return out


def _unit_ports(
    ctx: BuildContext, members: list[int], role: str, ports: int, switch: str, path: tuple
) -> list[tuple[int, int, int]]:
    """(device, port, k): the ``role`` ports of one rack's devices and the 0-based port k of the
    rack's switch (or console server, ``ports`` of them) each takes, keyed by rack unit (module
    docstring). A port past the switch's last, or taken twice, is a located error."""
    f = ctx.fabric
    devices = f.devices
    out: list[tuple[int, int, int]] = []
    taken: dict[int, Device] = {}
    zero_u = 0  # 0U devices so far (index order: PDU 1, 2, ...)
    widths: dict[int, int] = defaultdict(lambda: 1)  # chassis -> role ports per board slot (its widest board)
    for i in members:
        d = devices[i]
        if d.chassis >= 0:
            widths[d.chassis] = max(widths[d.chassis], len(f.layouts[d.model].ports_of(role)))
    # The 0U devices first: their ports are reserved, so a device whose unit needs one is the one named.
    zero = {i for i in members if devices[i].chassis < 0 and f.models[devices[i].model].height_u == 0}
    for i in sorted(members, key=lambda i: i not in zero):  # stable: index order within each part
        d = devices[i]
        own = f.layouts[d.model].ports_of(role)
        if d.chassis >= 0:
            host = devices[d.chassis]
            first = host.u - 1 + len(f.layouts[host.model].ports_of(role)) + _slot_index(f, host, d.slot) * widths[d.chassis]
            room = host.u - 1 + f.models[host.model].height_u
            keys = [first + k for k in range(len(own))]
            where = f"{d.name} in slot {d.slot} of {host.name} (U{host.u})"
        elif f.models[d.model].height_u == 0:
            keys = [ports - 1 - zero_u - k for k in range(len(own))]
            zero_u += len(own)
            room = ports
            where = f"{d.name} (0U)"
        else:
            keys = [d.u - 1 + k for k in range(len(own))]
            room = d.u - 1 + max(f.models[d.model].height_u, 1)
            where = f"{d.name} at U{d.u}"
        for port, k in zip(own, keys, strict=True):
            clash = taken.get(k)
            if k >= ports or k < 0 or k >= room or clash is not None:
                rack = f.racks[d.rack].name
                why = (
                    f"also wanted by {clash.name}"
                    if clash is not None
                    else f"{switch} has {ports}"
                    if k >= ports or k < 0
                    else "more management ports than its units"
                )
                # The PDUs are named only where the rack has some: otherwise they are no part of the cause.
                pdus = ", and the rack's 0U PDUs take the top ports" if zero else ""
                raise ctx.fail(
                    "port-budget",
                    f"rack {rack}: {where} needs port {k + 1} of {switch} ({why}): ports follow rack units{pdus}",
                    path,
                    (
                        "keep devices with management ports below the units whose ports the PDUs take, "
                        "or a switch with a port for every unit"
                    )
                    if zero
                    else "give each device with a management port a rack unit of its own, or a switch with a port for every unit",
                )
            taken[k] = d
            out.append((i, port, k))
    return out


def _slot_index(f: Fabric, host: Device, slot: str) -> int:
    """0-based position of a board slot in its chassis: front slots F01.., then rear slots R01.."""
    slots = f.models[host.model].slots
    front = slots.front if slots is not None else 0
    number = int(slot[1:]) - 1
    return number if slot.startswith("F") else front + number


def _row_blocks(ctx: BuildContext, spec: Management, path: tuple, capacity: int) -> dict[str, int]:
    """Row -> the first rack position of its block on the aggregation layer (rows in list order,
    each ``planned_racks`` long); the layer must take every planned position's uplinks."""
    blocks: dict[str, int] = {}
    total = 0
    for row in ctx.blueprint.site.rows:
        blocks[row.name] = total
        total += row.capacity
    need = total * spec.uplinks
    if need > capacity:
        agg = spec.aggregation
        assert agg is not None
        per = capacity // max(agg.count, 1)
        raise ctx.fail(
            "port-budget",
            f"{agg.count} aggregation switches of {per} ports cannot take the uplinks of {total} planned rack "
            f"positions x {spec.uplinks}",
            path + ("aggregation", "count"),
            f"at least {-(-need // max(per, 1))} aggregation switches (every planned rack position of every row has "
            "its uplink ports, occupied or not)",
        )
    return blocks


def _aggregation(ctx: BuildContext, spec: Management, path: tuple) -> tuple[list[int], list[int]]:
    """The aggregation switches and the OOB switches that manage them (none without aggregation):
    as many as their management ports need, each taking the next aggregation switches in order."""
    agg = spec.aggregation
    if agg is None:
        return [], []
    ctx.model(agg.switch, path + ("aggregation", "switch"), "switch")
    oob_model = agg.oob_switch or spec.switch
    ctx.model(oob_model, path + ("aggregation", "oob_switch") if agg.oob_switch else path + ("switch",), "switch")
    aggs = []
    for j in range(agg.count):
        aggs.append(
            ctx.add_device(
                name=ctx.name("mgmt-agg", "mgmt-agg-{index:02d}", path, index=j + 1),
                role="mgmt-agg",
                model=agg.switch,
                group="mgmt",
                placement=agg.placement,
                slot=j,
                origin=path + ("aggregation",),
                coords=(("index", j),),
                tier=2,
            ).index
        )
    f = ctx.fabric
    mgmt_ports = len(f.layouts[agg.switch].ports_of("mgmt")) * agg.count
    per_oob = len(f.layouts[oob_model].ports_of("data"))
    if not mgmt_ports:
        return aggs, []
    count = -(-mgmt_ports // per_oob) if per_oob else 1
    placement, height = agg.placement, ctx.catalogue.devices[agg.switch].height_u
    where = path + ("aggregation",)
    if agg.oob_placement is None:
        # Stacked just above the last aggregation switch, in its rack.
        rack, u = ctx.geometry.place(placement, agg.count - 1, height, ctx.placement_path(where, placement))
        u += height + placement.gap_u
        oob_h = ctx.catalogue.devices[oob_model].height_u
        spots: list[tuple[int, int] | None] = [(rack, u + j * oob_h) for j in range(count)]
    else:
        spots = [None] * count  # placed by oob_placement
    oobs = []
    for j, at in enumerate(spots):
        oobs.append(
            ctx.add_device(
                name=ctx.name("mgmt-oob", "mgmt-oob-{index:02d}", path, index=j + 1),
                role="mgmt-oob",
                model=oob_model,
                group="mgmt",
                placement=agg.oob_placement,
                slot=j,
                origin=where,
                coords=(("index", j),),
                tier=3,
                at=at,
            ).index
        )
    return aggs, oobs


def _uplink(
    ctx: BuildContext,
    spec: Management,
    path: tuple,
    sw: int,
    position: int,
    uplinks: list[int],
    aggs: list[int],
    agg_ports: list[int],
    chooser: MediaChooser,
) -> None:
    """The rack switch's uplinks from its planned rack position (``_row_blocks``), round-robin so
    consecutive uplinks of a rack reach different aggregation switches."""
    if spec.uplinks > len(uplinks):
        raise ctx.fail(
            "port-budget", f"{spec.switch} has {len(uplinks)} uplink ports; {spec.uplinks} asked", path + ("uplinks",),
            f"at most {len(uplinks)}",
        )  # fmt: skip
    up_ends: list[tuple[int, int, int, int]] = []
    for m in range(spec.uplinks):
        n, a = divmod(position * spec.uplinks + m, len(aggs))  # port n of aggregation switch a
        up_ends.append((sw, uplinks[m], aggs[a], agg_ports[n]))
    ctx.add_link_rows("mgmt", up_ends, chooser=chooser, origin=path + ("aggregation",), tier="leaf-spine")


def _pdus(ctx: BuildContext, spec: Management, path: tuple, occupied: list[int]) -> None:
    """``per_rack`` 0U PDUs in every occupied rack without power shelves."""
    if spec.pdus is None:
        return
    f = ctx.fabric
    model = ctx.model(spec.pdus.model, path + ("pdus", "model"), "pdu")
    shelved = {d.rack for d in f.devices if f.models[d.model].kind == "power-shelf"}
    ctx.reserve(len(occupied) * spec.pdus.per_rack, path + ("pdus", "per_rack"))  # a typo'd count fails here, at once
    for rack_index in occupied:
        if rack_index in shelved:
            continue
        rack = f.racks[rack_index]
        for j in range(spec.pdus.per_rack):
            ctx.add_device(
                name=ctx.name("pdu", "pdu-{rack}-{index}", path, rack=rack.name, index=j + 1),
                role="pdu",
                model=spec.pdus.model,
                group="mgmt",
                placement=None,
                slot=0,
                origin=path + ("pdus",),
                coords=(("rack", rack.name), ("index", j)),
                at=(rack_index, 0 if model.height_u == 0 else 1),
            )


def _console_servers(ctx: BuildContext, spec: Management, path: tuple, below: int, above: int) -> dict[int, int]:
    """Rack -> its console server, in every rack with console ports (the rack switch, made later,
    has one too when the rack has any other)."""
    if spec.console is None:
        return {}
    f = ctx.fabric
    model = ctx.model(spec.console.model, path + ("console", "model"), "console-server")
    racks = sorted({d.rack for d in f.devices if d.rack >= 0 and f.layouts[d.model].has_role("console")})
    u = spec.console.u or (below - model.height_u if below - model.height_u >= 1 else above)
    out = {}
    for rack_index in racks:
        rack = f.racks[rack_index]
        out[rack_index] = ctx.add_device(
            name=ctx.name("console", "console-{rack}", path, rack=rack.name),
            role="console",
            model=spec.console.model,
            group="mgmt",
            placement=None,
            slot=0,
            origin=path + ("console",),
            coords=(("rack", rack.name),),
            tier=1,  # an access device of the management network, beside the rack switch
            at=(rack_index, u),
        ).index
    return out


def _cable_consoles(ctx: BuildContext, spec: Management, path: tuple, consoles: dict[int, int], chooser: MediaChooser) -> None:
    """Every console port of a rack to its console server, the port keyed by the device's unit."""
    if not consoles:
        return
    f = ctx.fabric
    by_rack: dict[int, list[int]] = defaultdict(list)
    for d in f.devices:
        if d.rack in consoles and d.role != "console" and f.layouts[d.model].has_role("console"):
            by_rack[d.rack].append(d.index)
    for rack_index, server in sorted(consoles.items()):
        serial = f.layouts[f.devices[server].model].ports_of("console")
        name = f"{f.devices[server].model} {f.devices[server].name}"
        slots = _unit_ports(ctx, by_rack[rack_index], "console", len(serial), name, path + ("console", "model"))
        rows = [(dev, port, server, serial[k]) for dev, port, k in slots]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path + ("console",), tier="node-leaf")
