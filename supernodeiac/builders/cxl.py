"""CXL memory pool: switches, Type 3 memory devices behind them, and the hosts that share them.

Wiring, keyed by stable coordinates so that growing a pool leaves existing cables in place:

* host link r of a host goes to switch ``r % switches`` (every host reaches every switch the
  same number of times, so every host reaches the whole pool);
* hosts take a switch's CXL ports from the bottom, in the order the hosts entries list them;
  memory device (switch s, slot j) takes that switch's CXL ports from the top, so adding memory
  devices or hosts never moves the other kind;
* memory device (s, j) takes placement slot ``j * switches + s``: raising ``per_switch`` appends.

Host ports come first in the switch's port list, so a switch whose catalogue entry lists wide
ports before narrow ones gives hosts the wide ones. Lane width and rate of every link come from
the two ports' groups (the narrower and slower end wins); the checks in ``checks/cxl.py`` report
what that costs. A host device used by two pools would reuse its first CXL ports: the port-budget
check reports the clash.

Facts (``fabric.facts[pool]``, plain data for the sizing report): kind, switch and memory models,
switches, memory_devices, capacity_gb, promised_gb, hosts, host_links, switch_ports (CXL ports
per switch) and switch_ports_used (the most any switch uses), per_host_gbytes (the least any host
gets, GB/s per direction) and per_host_gbytes_max, per_host_gbytes_target, memory_gbytes (the
memory side's total link bandwidth), host_groups (one row per hosts entry), logical_devices (per
memory device), ld_gb, lds (in the pool) and shared_gb (the shared regions, counted once); which LD
serves whom is ``facts/cxl_bindings.py``.
"""

from __future__ import annotations

from ..fabric.fabric_facts import CxlHostGroup
from ..model.cxl import ROLE_MEMORY, ROLE_SWITCH, CxlHosts, CxlPool
from ..model.nodes import NODE_NAMING
from .base import BUILDERS
from .context import BuildContext, did_you_mean


def _with_cxl(ctx: BuildContext, kinds: tuple[str, ...]) -> list[str]:
    return sorted(n for n, m in ctx.catalogue.devices.items() if m.kind in kinds and m.ports_of("cxl"))


@BUILDERS.register("cxl-pool")
def build_cxl_pool(ctx: BuildContext, spec: CxlPool, path: tuple) -> None:
    f = ctx.fabric
    name, n_sw = spec.name, spec.switches  # unique among groups and networks: parse.name_findings

    ctx.model(spec.switch, path + ("switch",), "switch")
    sw_ports = f.layouts[spec.switch].ports_of("cxl")
    if not sw_ports:
        raise ctx.fail(
            "wrong-catalogue-kind",
            f"{spec.switch!r} has no CXL ports",
            path + ("switch",),
            "CXL switches: " + ", ".join(_with_cxl(ctx, ("switch",))),
        )
    mem_model = ctx.model(spec.memory.model, path + ("memory", "model"), "memory")
    mem_ports = f.layouts[spec.memory.model].ports_of("cxl")
    if not mem_ports or mem_model.memory_gb <= 0:
        raise ctx.fail(
            "wrong-catalogue-kind",
            f"{spec.memory.model!r} is not a CXL Type 3 device (it needs CXL ports and memory_gb)",
            path + ("memory", "model"),
            "CXL memory devices: " + ", ".join(_with_cxl(ctx, ("memory",))),
        )

    hosts = [_hosts(ctx, spec, j, entry, path + ("hosts", j)) for j, entry in enumerate(spec.hosts)]

    # -- port budget per switch ---------------------------------------------------------------
    host_links_per_switch = sum(len(devs) * links // n_sw for devs, links in hosts)
    mem_links_per_switch = spec.memory.per_switch * len(mem_ports)
    used = host_links_per_switch + mem_links_per_switch
    if used > len(sw_ports):
        free = len(sw_ports) - host_links_per_switch
        options = [f"a switch with at least {used} CXL ports"]
        if free >= len(mem_ports):
            options.insert(0, f"per_switch: {free // len(mem_ports)} (what is left beside the hosts)")
        raise ctx.fail(
            "port-budget",
            f"each {spec.switch} has {len(sw_ports)} CXL ports; pool {name} needs {used} per switch "
            f"({host_links_per_switch} host links + {spec.memory.per_switch} memory devices x {len(mem_ports)})",
            path + ("memory", "per_switch"),
            "use " + ", or ".join(options),
        )

    policy_path = path + ("media",) if spec.media else ("media",)
    chooser = ctx.chooser(spec.media, policy_path)

    # -- switches and memory devices -----------------------------------------------------------
    switches = [
        ctx.add_device(
            name=ctx.name(ROLE_SWITCH, "{pool}-sw{switch:02d}", path, pool=name, switch=s + 1),
            role=ROLE_SWITCH,
            model=spec.switch,
            group=name,
            placement=spec.placement.switch,
            slot=s,
            origin=path,
            coords=(("pool", name), ("switch", s)),
            tier=1,
        ).index
        for s in range(n_sw)
    ]
    memory_gbps = 0.0
    for j in range(spec.memory.per_switch):
        for s in range(n_sw):
            mem = ctx.add_device(
                name=ctx.name(ROLE_MEMORY, "{pool}-mem{switch:02d}-{slot:02d}", path, pool=name, switch=s + 1, slot=j + 1),
                role=ROLE_MEMORY,
                model=spec.memory.model,
                group=name,
                placement=spec.placement.memory,
                slot=j * n_sw + s,
                origin=path + ("memory",),
                coords=(("pool", name), ("switch", s), ("slot", j)),
            ).index
            for q, port in enumerate(mem_ports):
                sw_port = sw_ports[len(sw_ports) - 1 - (j * len(mem_ports) + q)]
                link = ctx.connect(name, switches[s], sw_port, mem, port, chooser=chooser, origin=path + ("memory",))
                memory_gbps += link.gbps

    # -- hosts ------------------------------------------------------------------------------
    offset = 0  # next free host port index on every switch (hosts spread evenly, so one counter)
    per_host: list[float] = []
    groups: list[CxlHostGroup] = []
    for j, (devs, links) in enumerate(hosts):
        per_switch = links // n_sw
        for dev in devs:
            ports = f.layouts[f.devices[dev].model].ports_of("cxl")
            gbps = 0.0
            for r in range(links):
                s, k = r % n_sw, r // n_sw
                link = ctx.connect(
                    name, dev, ports[r], switches[s], sw_ports[offset + k], chooser=chooser, origin=path + ("hosts", j)
                )
                gbps += link.gbps
            offset += per_switch
            per_host.append(gbps / 8)
        entry = spec.hosts[j]
        groups.append({"group": entry.label, "hosts": len(devs), "promised_gb": entry.promised_gb, "links": links})

    f.facts[name] = {
        "kind": "cxl-pool",
        "switch": spec.switch,
        "switches": n_sw,
        "switch_ports": len(sw_ports),
        "switch_ports_used": used,
        "memory_model": spec.memory.model,
        "memory_devices": n_sw * spec.memory.per_switch,
        "capacity_gb": n_sw * spec.memory.per_switch * mem_model.memory_gb,
        "promised_gb": sum(g["hosts"] * g["promised_gb"] for g in groups),
        "hosts": len(per_host),
        "host_links": sum(g["hosts"] * g["links"] for g in groups),
        "per_host_gbytes": min(per_host) if per_host else 0.0,
        "per_host_gbytes_max": max(per_host) if per_host else 0.0,
        "per_host_gbytes_target": spec.per_host_gbytes,
        "memory_gbytes": memory_gbps / 8,
        "host_groups": groups,
        "logical_devices": mem_model.logical_devices,
        "ld_gb": mem_model.memory_gb / mem_model.logical_devices,
        "lds": n_sw * spec.memory.per_switch * mem_model.logical_devices,
        "shared_gb": sum(region.size_gb for region in spec.shared),
    }


def _hosts(ctx: BuildContext, spec: CxlPool, j: int, entry: CxlHosts, path: tuple) -> tuple[list[int], int]:
    """The devices of one hosts entry (made here or found by group) and the CXL links each gets."""
    f = ctx.fabric
    if entry.group is not None:
        if entry.group not in ctx.groups:
            raise ctx.fail(
                "unknown-reference",
                f"no node group named {entry.group!r}",
                path + ("group",),
                did_you_mean(entry.group, sorted(ctx.groups)),
            )
        devs = list(ctx.groups[entry.group])
    else:
        assert entry.name is not None and entry.model is not None and entry.count is not None
        ctx.model(entry.model, path + ("model",), ("node", "appliance"))
        template = entry.naming or NODE_NAMING  # checked by parse.template_findings
        devs = []
        for i in range(entry.count):
            devs.append(
                ctx.add_device(
                    name=template.format(group=entry.name, index=i + 1),
                    role="node",
                    model=entry.model,
                    group=entry.name,
                    placement=entry.placement,
                    slot=i,
                    origin=path,
                    coords=(("pool", spec.name), ("index", i)),
                ).index
            )
    n_sw = spec.switches
    links = entry.links or n_sw
    if links % n_sw:
        lower, upper = links // n_sw * n_sw, (links // n_sw + 1) * n_sw
        choices = " or ".join(str(x) for x in (lower, upper) if x > 0)
        raise ctx.fail(
            "cxl-links",
            f"{links} CXL links per host do not spread evenly over {n_sw} switches",
            path + ("links",),
            f"use links: {choices}",
        )
    field = "group" if entry.group is not None else "model"
    for model in sorted({f.devices[d].model for d in devs}):
        have = len(f.layouts[model].ports_of("cxl"))
        if have < links:
            raise ctx.fail(
                "cxl-links",
                f"{entry.label} hosts ({model}) have {have} CXL ports; each needs {links} "
                f"({links // n_sw} to each of {n_sw} switches)",
                path + ("links",) if entry.links else path + (field,),
                "fewer switches, fewer links, or hosts with more CXL ports: " + ", ".join(_with_cxl(ctx, ("node", "appliance"))),
            )
    return devs, links
