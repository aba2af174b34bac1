"""CXL memory pools, measured on the Fabric: capacity vs promises, lane width, per-host bandwidth.

The pool's links are found by fabric name; a link's ends are told apart by device role (the
switch end is ``cxl-switch``, memory devices ``cxl-memory``, anything else is a host), not by
link origin, because a pinned medium moves a link's origin to the media policy. The blueprint
is read only for intent: the capacity each host is promised and the per-host bandwidth target.
Reach is the generic ``reach`` check: the CXL ports' lane rates and cages make it apply.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from itertools import compress

from ..catalog.types import MLD_MAX_LOGICAL_DEVICES
from ..fabric import Fabric, Link
from ..fabric.fabric_facts import kind_of
from ..facts.cxl_bindings import PoolPlan, lds_for, pool_plans
from ..findings import Finding, error, info, warning
from ..model.cxl import ROLE_MEMORY, ROLE_SWITCH, CxlPool
from ..util.suggest import did_you_mean
from .base import CHECKS, CheckContext


@dataclass
class PoolMeasure:
    """What one pool's links say: memory devices, switches, and each host's link bandwidth."""

    memory: dict[int, float] = field(default_factory=dict)  # memory device -> GB
    switches: dict[int, None] = field(default_factory=dict)  # ordered set of switch devices
    host_gbps: dict[int, float] = field(default_factory=dict)  # host device -> Gb/s per direction
    host_links: dict[int, list[Link]] = field(default_factory=dict)
    memory_gbps: float = 0.0
    narrow: list[Link] = field(default_factory=list)  # links narrower or slower than one of their ends


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}es" if noun.endswith("ch") else f"{count} {noun}s"


def _pools(ctx: CheckContext) -> list[tuple[int, CxlPool]]:
    facts = ctx.fabric.facts
    return [(i, p) for i, p in enumerate(ctx.blueprint.cxl) if kind_of(facts.get(p.name)) == "cxl-pool"]


def measure(fabric: Fabric, names: set[str]) -> dict[str, PoolMeasure]:
    """One pass over the pools' links, for every pool at once."""
    out = {n: PoolMeasure() for n in sorted(names)}
    devices = fabric.devices
    t = fabric.links
    # The pools' links, chosen per spec (pools are small: these few become Link values).
    wanted = [spec.fabric in out for spec in t.specs]
    for link in t.links(list(compress(range(len(t)), map(wanted.__getitem__, t.spec)))):
        m = out[link.fabric]
        a, b = devices[link.a], devices[link.b]
        sw, other = (a, b) if a.role == ROLE_SWITCH else (b, a)
        m.switches[sw.index] = None
        if other.role == ROLE_MEMORY:
            m.memory[other.index] = fabric.models[other.model].memory_gb
            m.memory_gbps += link.gbps
        else:
            m.host_gbps[other.index] = m.host_gbps.get(other.index, 0.0) + link.gbps
            m.host_links.setdefault(other.index, []).append(link)
        ga, gb = fabric.port_group(link.a, link.a_port), fabric.port_group(link.b, link.b_port)
        if ga.lanes != gb.lanes or ga.lane_gbps != gb.lane_gbps:
            m.narrow.append(link)
    return out


@CHECKS.register("cxl")
def check_cxl(ctx: CheckContext) -> Iterator[Finding]:
    pools = _pools(ctx)
    if not pools:
        return
    measured = measure(ctx.fabric, {p.name for _, p in pools})
    plans = {plan.name: plan for plan in pool_plans(ctx.blueprint, ctx.fabric)}
    for i, pool in pools:
        m = measured[pool.name]
        path = ("cxl", i)
        yield from _shared(ctx, pool, path, plans[pool.name])
        fits = yield from _capacity(ctx, pool, path, m)
        if fits:
            yield from _granularity(pool, path, plans[pool.name])
        yield from _lanes(ctx, pool, path, m)
        yield from _bandwidth(ctx, pool, path, m)


def _hosts_by_entry(ctx: CheckContext, pool: CxlPool, m: PoolMeasure) -> list[list[int]]:
    """Host devices of each hosts entry, matched by the device's group (the entry's label)."""
    index: dict[str, int] = {}
    for j, entry in enumerate(pool.hosts):
        index.setdefault(entry.label, j)
    out: list[list[int]] = [[] for _ in pool.hosts]
    for dev in sorted(m.host_gbps):
        at = index.get(ctx.fabric.devices[dev].group)
        if at is not None:
            out[at].append(dev)
    return out


def _capacity(ctx: CheckContext, pool: CxlPool, path: tuple, m: PoolMeasure) -> Generator[Finding, None, bool]:
    """Capacity against the hosts' promises plus every shared region once; returns whether it fits."""
    capacity = sum(m.memory[d] for d in sorted(m.memory))
    entries = _hosts_by_entry(ctx, pool, m)
    promised_by_entry = [len(devs) * entry.promised_gb for devs, entry in zip(entries, pool.hosts)]
    shared = sum(region.size_gb for region in pool.shared)
    promised = sum(promised_by_entry) + shared
    n_hosts = sum(len(devs) for devs in entries)
    n_mem = len(m.memory)
    regions = f" + {_n(len(pool.shared), 'shared region')} {shared:g} GB" if pool.shared else ""
    if promised > capacity + 1e-9:
        per_device = capacity / n_mem if n_mem else 0.0
        need = math.ceil(promised / per_device / max(len(m.switches), 1)) if per_device else 0
        detail = ", ".join(
            f"{len(devs)} {entry.label} x {entry.promised_gb:g} GB" for devs, entry in zip(entries, pool.hosts) if devs
        )
        worst = max(range(len(pool.hosts)), key=lambda j: (promised_by_entry[j], -j))
        options = [f"memory.per_switch: {need}" if need else "add memory devices"]
        if n_hosts and capacity > shared:
            options.append(f"promise at most {(capacity - shared) / n_hosts:g} GB per host")
        yield error(
            "cxl-capacity",
            f"{pool.name}: hosts are promised {promised:g} GB ({detail}{regions}) but the pool has {capacity:g} GB "
            f"in {_n(n_mem, 'memory device')}: {promised - capacity:g} GB short",
            path + ("hosts", worst, "promised_gb"),
            " or ".join(options),
        )
        return False
    share = f" ({promised / capacity:.0%})" if capacity else ""
    yield info(
        "cxl-capacity",
        f"{pool.name}: {capacity:g} GB in {_n(n_mem, 'memory device')} behind {_n(len(m.switches), 'switch')}; "
        f"{_n(n_hosts, 'host')} promised {promised - shared:g} GB{regions}{share}",
        path,
    )
    return True


def _granularity(pool: CxlPool, path: tuple, plan: PoolPlan) -> Iterator[Finding]:
    """Every host's promise and every shared region in whole logical devices, against the LDs built."""
    ld, per = plan.ld_gb, plan.logical_devices
    kind = "SLD" if per == 1 else f"MLD of {per}"
    have = f"{_n(len(plan.lds), 'LD')} of {ld:g} GB ({_n(plan.devices, 'memory device')} x {per}, {kind})"
    groups = []  # (label, hosts, promised, LDs each)
    for j, entry in enumerate(pool.hosts):
        count = sum(1 for h in plan.hosts if h.entry == j)
        if count:
            groups.append((entry.label, count, entry.promised_gb, lds_for(entry.promised_gb, ld)))
    wants = [f"{count} {label} x {gb:g} GB take {_n(each, 'LD')} each ({count * each})" for label, count, gb, each in groups]
    wants += [f"shared {r.name} {r.size_gb:g} GB takes {r.lds}" for r in plan.regions]
    if plan.short:
        devices = math.ceil(plan.needed / per)
        switches = max(len({x.switch for x in plan.lds}), 1)
        options = [f"memory.per_switch: {math.ceil(devices / switches)} ({devices} devices, {devices * per} LDs)"]
        # promises rounded down to whole LDs, where that leaves at least one
        down = [(label, math.floor(gb / ld + 1e-9) * ld) for label, _c, gb, each in groups if each * ld > gb + 1e-9]
        whole = [f"{label}: {gb:g} GB" for label, gb in down if gb > 0]
        if whole:
            options.append(f"promises of whole {ld:g} GB LDs ({', '.join(whole)})")
        if per < MLD_MAX_LOGICAL_DEVICES:
            options.append("a multi-logical device with smaller LDs (catalogue logical_devices)")
        yield error(
            "cxl-granularity",
            f"{pool.name}: {'; '.join(wants)}: {plan.needed} LDs, but the pool has {have}: {plan.short} LDs short",
            path,
            "use " + ", or ".join(options),
        )
        return
    bound_hosts = sum(h.lds for h in plan.hosts)
    bound_shared = sum(r.lds for r in plan.regions)
    regions = f", {bound_shared} to {_n(len(plan.regions), 'shared region')}" if plan.regions else ""
    yield info(
        "cxl-granularity",
        f"{pool.name}: {plan.needed} of {have} bound ({bound_hosts} to {_n(len(plan.hosts), 'host')}{regions}); "
        f"{plan.stranded_gb:g} GB bound beyond the promises (whole LDs)",
        path,
    )


def _shared(ctx: CheckContext, pool: CxlPool, path: tuple, plan: PoolPlan) -> Iterator[Finding]:
    """Shared regions: names that resolve to the pool's hosts, on memory devices that can share."""
    known = [entry.label for entry in pool.hosts] + [h.host for h in plan.hosts]
    for region in plan.regions:
        at = path + ("shared", region.index)
        for k, who in region.unknown:
            yield error(
                "cxl-shared",
                f"{pool.name}: shared region {region.name} names {who!r}, which is no hosts entry or host of the pool",
                at + ("hosts", k),
                did_you_mean(who, known, "the pool's hosts entries and hosts"),
            )
        if not plan.memory_sharing:
            sharing = sorted(n for n, md in ctx.catalogue.devices.items() if md.kind == "memory" and md.memory_sharing)
            yield error(
                "cxl-shared",
                f"{pool.name}: shared region {region.name} needs memory sharing (CXL 3.x), which {plan.memory_model} "
                "lacks (catalogue memory_sharing: false)",
                at,
                "a memory device that shares" + (f" ({', '.join(sharing)})" if sharing else "") + ", or drop the region",
            )
        elif not region.unknown and len(region.hosts) < 2:
            yield warning(
                "cxl-shared",
                f"{pool.name}: shared region {region.name} is mapped by {_n(len(region.hosts), 'host')} only: nothing shares it",
                at + ("hosts",),
                "name at least two hosts, or promise the capacity to the one host",
            )


def _lanes(ctx: CheckContext, pool: CxlPool, path: tuple, m: PoolMeasure) -> Iterator[Finding]:
    """One warning per kind of mismatch (port groups of both ends), with a count and an example."""
    f = ctx.fabric
    kinds: dict[tuple, list[Link]] = {}
    for link in m.narrow:
        ga, gb = f.port_group(link.a, link.a_port), f.port_group(link.b, link.b_port)
        key = (f.devices[link.a].model, ga.name, f.devices[link.b].model, gb.name, link.origin)
        kinds.setdefault(key, []).append(link)
    for key in sorted(kinds, key=lambda k: (kinds[k][0].id, k)):
        links = kinds[key]
        link = min(links, key=lambda k: k.id)
        ga, gb = f.port_group(link.a, link.a_port), f.port_group(link.b, link.b_port)
        wide, wide_group = (link.a, ga) if ga.speed_gbps >= gb.speed_gbps else (link.b, gb)
        port = link.a_port if wide == link.a else link.b_port
        lost = (wide_group.speed_gbps - link.gbps) / 8
        count = f"{len(links)} links like " if len(links) > 1 else ""
        if ga.lane_gbps == gb.lane_gbps:
            ends, runs = f"x{ga.lanes} to x{gb.lanes}", f"x{link.lanes}"
        else:
            ends = f"x{ga.lanes} at {ga.lane_gbps:g} GT/s to x{gb.lanes} at {gb.lane_gbps:g} GT/s"
            runs = f"x{link.lanes} at {link.lane_gbps:g} GT/s"
        yield warning(
            "cxl-lanes",
            f"{pool.name}: {count}{link.id} joins {ends} and runs at {runs}: "
            f"{f.devices[wide].name}:{f.port_name(wide, port)} loses {lost:g} of its {wide_group.speed_gbps / 8:g} GB/s "
            f"per direction" + (f" ({lost * len(links):g} GB/s over all {len(links)})" if len(links) > 1 else ""),
            link.origin,
            "match the port widths (a wider switch port, a x16 device, or split the x16 port into 2x8 for two x8 ends)",
        )


def _bandwidth(ctx: CheckContext, pool: CxlPool, path: tuple, m: PoolMeasure) -> Iterator[Finding]:
    f = ctx.fabric
    gbytes = {d: g / 8 for d, g in m.host_gbps.items()}
    if not gbytes:
        return
    low, high = min(gbytes.values()), max(gbytes.values())
    target = pool.per_host_gbytes
    if target is not None:
        for j, devs in enumerate(_hosts_by_entry(ctx, pool, m)):
            short = [d for d in devs if gbytes[d] < target - 1e-9]
            if not short:
                continue
            worst = min(short, key=lambda d: (gbytes[d], d))
            links = sorted(m.host_links[worst], key=lambda k: k.id)
            shape = " + ".join(f"x{k.lanes} at {k.lane_gbps:g} GT/s" for k in links)
            yield error(
                "cxl-bandwidth",
                f"{pool.name}: {len(short)} of {len(devs)} {pool.hosts[j].label} hosts get less than the declared "
                f"{target:g} GB/s per direction into the pool (e.g. {f.devices[worst].name}: {gbytes[worst]:g} GB/s over "
                f"{shape})",
                path + ("per_host_gbytes",),
                f"more CXL links per host (hosts[{j}].links), wider or faster ports, or a target of at most {gbytes[worst]:g}",
            )
    hosts_total = sum(gbytes[d] for d in sorted(gbytes))
    spread = f"{low:g}" if low == high else f"{low:g}-{high:g}"
    yield info(
        "cxl-bandwidth",
        f"{pool.name}: {spread} GB/s per host per direction; hosts' links {hosts_total:g} GB/s in all, "
        f"memory devices' links {m.memory_gbps / 8:g} GB/s",
        path,
    )
