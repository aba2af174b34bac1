"""Out-of-band management: one switch per rack that has management ports, every BMC and switch
management port cabled to it, and each rack switch's ``uplinks`` spread round-robin over the
aggregation switches (consecutive uplinks of a rack reach different ones).

Around it, as declared:

* **the aggregation switches' own management ports** go to out-of-band switches of their own
  (``mgmt-oob-01``.., as many as their ports need, stacked just above the last aggregation switch
  or at ``aggregation.oob_placement``), never to a rack switch that uplinks through them: a switch
  is never managed through itself;
* **console servers** (``console:``): one in every rack that has console ports, just below the rack
  switch; every console port of the rack is cabled to it, bottom up, and its management port to the
  rack switch;
* **rack PDUs** (``pdus:``): ``per_rack`` 0U PDUs in every rack that holds devices and no power
  shelves (a busbar rack is fed by its shelves), each cabled to the rack switch.

Rack-switch ports are given in order of the devices' rack units (bottom up; 0U PDUs first), so
adding racks or devices in new racks leaves existing management cables unchanged.
"""

from __future__ import annotations

from collections import defaultdict

from ..model.management import Management
from . import BUILDERS
from .context import BuildContext


@BUILDERS.register("management")
def build_management(ctx: BuildContext, spec: Management, path: tuple) -> None:
    f = ctx.fabric
    site = ctx.blueprint.site
    sw_model = ctx.model(spec.switch, path + ("switch",), "switch")
    policy_path = path + ("media",) if spec.media else ("media",)
    chooser = ctx.chooser(spec.media, policy_path)
    u = spec.u or site.rack_units - sw_model.height_u + 1

    aggs, oobs = _aggregation(ctx, spec, path)
    occupied = sorted({d.rack for d in f.devices if d.rack >= 0})
    _pdus(ctx, spec, path, occupied)
    consoles = _console_servers(ctx, spec, path, u)

    by_rack: dict[int, list[int]] = defaultdict(list)
    for dev in f.devices:
        if dev.rack >= 0 and f.layouts[dev.model].has_role("mgmt") and dev.role != "mgmt-agg":
            by_rack[dev.rack].append(dev.index)
    sw_ports = f.layouts[spec.switch]
    access, uplinks = sw_ports.ports_of("data"), sw_ports.ports_of("uplink")
    agg_ports = f.layouts[spec.aggregation.switch].ports_of("data") if spec.aggregation is not None else []
    switches: dict[int, int] = {}
    for rack_index in sorted(by_rack):
        rack = f.racks[rack_index]
        sw = ctx.add_device(
            name=ctx.name("mgmt", "mgmt-{rack}", path, rack=rack.name),
            role="mgmt",
            model=spec.switch,
            group="mgmt",
            placement=None,
            slot=0,
            origin=path,
            coords=(("rack", rack.name),),
            tier=1,
            at=(rack_index, u),
        )
        switches[rack_index] = sw.index
        members = sorted(by_rack[rack_index], key=lambda i: (f.devices[i].u, i))
        ends = [(dev, port) for dev in members for port in f.layouts[f.devices[dev].model].ports_of("mgmt")]
        if len(ends) > len(access):
            raise ctx.fail(
                "port-budget",
                f"rack {rack.name} has {len(ends)} management ports, more than {spec.switch}'s {len(access)}",
                path + ("switch",),
                "use a larger management switch or fewer devices per rack",
            )
        rows = [(dev, port, sw.index, access[k]) for k, (dev, port) in enumerate(ends)]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path)
        if aggs:
            _uplink(ctx, spec, path, sw.index, rack_index, uplinks, aggs, agg_ports, chooser)
    if oobs:
        # The aggregation switches' management ports: to the OOB switches, whose forwarding does not
        # depend on them (their own management ports are cabled in their racks like any device's).
        ends = [(agg, port) for agg in aggs for port in f.layouts[f.devices[agg].model].ports_of("mgmt")]
        rows = []
        for j, oob in enumerate(oobs):
            oob_ports = f.layouts[f.devices[oob].model].ports_of("data")
            chunk = ends[j * len(oob_ports) : (j + 1) * len(oob_ports)]
            rows += [(dev, port, oob, oob_ports[k]) for k, (dev, port) in enumerate(chunk)]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path + ("aggregation",))
    _cable_consoles(ctx, spec, path, consoles, chooser)
    f.facts["mgmt"] = {
        "kind": "management",
        "rack_switches": len(by_rack),
        "aggregation": len(aggs),
        "oob_switches": [f.devices[o].name for o in oobs],
        "uplinks_per_rack": spec.uplinks if aggs else 0,
    }


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
        spots = [(rack, u + j * oob_h) for j in range(count)]
    else:
        spots = [None] * count
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
    rack_index: int,
    uplinks: list[int],
    aggs: list[int],
    agg_ports: list[int],
    chooser,
) -> None:
    f = ctx.fabric
    if spec.uplinks > len(uplinks):
        raise ctx.fail(
            "port-budget", f"{spec.switch} has {len(uplinks)} uplink ports; {spec.uplinks} asked", path + ("uplinks",),
            f"at most {len(uplinks)}",
        )  # fmt: skip
    up_ends: list[tuple[int, int, int, int]] = []
    for m in range(spec.uplinks):
        # Spread round-robin so consecutive uplinks of a rack reach different switches.
        n, a = divmod(rack_index * spec.uplinks + m, len(aggs))  # port n of aggregation switch a
        if n >= len(agg_ports):
            # Ports are keyed by the rack's site index (stable as racks fill), so the
            # aggregation layer is sized for every rack of the site, occupied or not.
            slots = len(f.racks) * spec.uplinks
            raise ctx.fail(
                "port-budget",
                f"{len(aggs)} aggregation switches of {len(agg_ports)} ports cannot take the uplinks of "
                f"{len(f.racks)} rack positions x {spec.uplinks}",
                path + ("aggregation", "count"),
                f"at least {-(-slots // len(agg_ports))} aggregation switches",
            )
        up_ends.append((sw, uplinks[m], aggs[a], agg_ports[n]))
    ctx.add_link_rows("mgmt", up_ends, chooser=chooser, origin=path + ("aggregation",))


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


def _console_servers(ctx: BuildContext, spec: Management, path: tuple, switch_u: int) -> dict[int, int]:
    """Rack -> its console server, in every rack with console ports (the rack switch, made later,
    has one too when the rack has any other)."""
    if spec.console is None:
        return {}
    f = ctx.fabric
    model = ctx.model(spec.console.model, path + ("console", "model"), "console-server")
    racks = sorted({d.rack for d in f.devices if d.rack >= 0 and f.layouts[d.model].has_role("console")})
    u = spec.console.u or switch_u - model.height_u
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


def _cable_consoles(ctx: BuildContext, spec: Management, path: tuple, consoles: dict[int, int], chooser) -> None:
    """Every console port of a rack to its console server, bottom up."""
    if not consoles:
        return
    f = ctx.fabric
    by_rack: dict[int, list[int]] = defaultdict(list)
    for d in f.devices:
        if d.rack in consoles and d.role != "console" and f.layouts[d.model].has_role("console"):
            by_rack[d.rack].append(d.index)
    for rack_index, server in sorted(consoles.items()):
        members = sorted(by_rack[rack_index], key=lambda i: (f.devices[i].u, i))
        ends = [(dev, port) for dev in members for port in f.layouts[f.devices[dev].model].ports_of("console")]
        serial = f.layouts[f.devices[server].model].ports_of("console")
        if len(ends) > len(serial):
            raise ctx.fail(
                "port-budget",
                f"rack {f.racks[rack_index].name} has {len(ends)} console ports, more than the console server's {len(serial)}",
                path + ("console", "model"),
                "a console server with more ports, or fewer switches per rack",
            )
        rows = [(dev, port, server, serial[k]) for k, (dev, port) in enumerate(ends)]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path + ("console",))
