"""Out-of-band management: one switch per rack that has management ports, every BMC and switch
management port cabled to it, and each rack switch's ``uplinks`` spread round-robin over the
aggregation switches (consecutive uplinks of a rack reach different ones).

Rack-switch ports are given in order of the devices' rack units (bottom up), so adding racks
or devices in new racks leaves existing management cables unchanged.
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

    aggs: list[int] = []
    if spec.aggregation is not None:
        agg = spec.aggregation
        ctx.model(agg.switch, path + ("aggregation", "switch"), "switch")
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

    by_rack: dict[int, list[int]] = defaultdict(list)
    for dev in f.devices:
        if dev.rack >= 0 and f.layouts[dev.model].ports_of("mgmt"):
            by_rack[dev.rack].append(dev.index)

    u = spec.u or site.rack_units - sw_model.height_u + 1
    sw_ports = f.layouts[spec.switch]
    access, uplinks = sw_ports.ports_of("data"), sw_ports.ports_of("uplink")
    agg_ports = f.layouts[spec.aggregation.switch].ports_of("data") if spec.aggregation is not None else []
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
        members = sorted(by_rack[rack_index], key=lambda i: (f.devices[i].u, i))
        ends = [(dev, port) for dev in members for port in f.layouts[f.devices[dev].model].ports_of("mgmt")]
        if len(ends) > len(access):
            raise ctx.fail(
                "port-budget",
                f"rack {rack.name} has more management ports than {spec.switch}'s {len(access)}",
                path + ("switch",),
                "use a larger management switch or fewer devices per rack",
            )
        rows = [(dev, port, sw.index, access[k]) for k, (dev, port) in enumerate(ends)]
        ctx.add_link_rows("mgmt", rows, chooser=chooser, origin=path, tier="node-leaf")
        if aggs:
            if spec.uplinks > len(uplinks):
                raise ctx.fail(
                    "port-budget",
                    f"{spec.switch} has {len(uplinks)} uplink ports; {spec.uplinks} asked",
                    path + ("uplinks",),
                    f"at most {len(uplinks)}",
                )
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
                up_ends.append((sw.index, uplinks[m], aggs[a], agg_ports[n]))
            ctx.add_link_rows("mgmt", up_ends, chooser=chooser, origin=path + ("aggregation",), tier="leaf-spine")
    f.facts["mgmt"] = {"kind": "management", "rack_switches": len(by_rack), "aggregation": len(aggs)}
