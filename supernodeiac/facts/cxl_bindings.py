"""CXL pools in logical devices: what each host and shared region needs, and which LD serves it.

A Type 3 device's capacity binds to hosts in whole logical devices (LDs): a single logical
device (SLD, catalogue ``logical_devices: 1``) goes to one host as a whole, a multi-logical
device (MLD, up to 16 LDs: CXL 2.0 section 2.4) splits into ``memory_gb / logical_devices`` per
LD, each bound to one host by the fabric manager. A host promised P GB takes
``ceil(P / LD size)`` LDs; a shared region (CXL 3.x shared memory) of S GB takes
``ceil(S / LD size)`` LDs once, mapped by every host it names.

The binding, keyed by stable coordinates so that growth moves no binding already made:

* LDs are numbered device by device in the pool's memory device order (the order the builder
  makes them: slot by slot, switch by switch, so adding ``per_switch`` appends devices), then LD 0..
  within a device;
* hosts take LDs from the bottom, in hosts-entry order and host order within an entry;
* shared regions take LDs from the top down, in the order the pool lists them.

Hosts or regions the LDs cannot serve are left unbound and counted (``short``): the
``cxl-granularity`` check reports them; the binding-table output is written only without errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..fabric import Fabric
from ..fabric.fabric_facts import kind_of
from ..model.blueprint import Blueprint
from ..model.cxl import ROLE_MEMORY, ROLE_SWITCH, CxlPool

_EPS = 1e-9  # promises equal to a whole number of LDs stay that number (float GB)


@dataclass(frozen=True, slots=True)
class Ld:
    device: str  # memory device name
    switch: str  # the switch it hangs off
    ld: int  # LD-ID within the device, 0-based
    gb: float


@dataclass(slots=True)
class HostNeed:
    host: str
    entry: int  # index in the pool's hosts list
    promised_gb: float
    lds: int  # LDs it needs
    bound: list[int] = field(default_factory=list)  # indices into PoolPlan.lds


@dataclass(slots=True)
class RegionNeed:
    name: str
    index: int  # index in the pool's shared list
    size_gb: float
    hosts: list[str]  # host devices that map it, in pool host order
    unknown: list[tuple[int, str]]  # (index in region.hosts, name) naming no host of the pool
    lds: int
    bound: list[int] = field(default_factory=list)


@dataclass(slots=True)
class PoolPlan:
    name: str
    index: int  # index in blueprint.cxl
    memory_model: str
    logical_devices: int  # LDs per memory device
    ld_gb: float
    memory_sharing: bool
    devices: int  # memory devices
    lds: list[Ld]
    hosts: list[HostNeed]
    regions: list[RegionNeed]

    @property
    def needed(self) -> int:
        return sum(h.lds for h in self.hosts) + sum(r.lds for r in self.regions)

    @property
    def short(self) -> int:
        """LDs wanted beyond those the pool has."""
        return max(0, self.needed - len(self.lds))

    @property
    def stranded_gb(self) -> float:
        """Capacity bound but not promised: the rounding up to whole LDs."""
        hosts = sum(h.lds * self.ld_gb - h.promised_gb for h in self.hosts if h.lds)
        return hosts + sum(r.lds * self.ld_gb - r.size_gb for r in self.regions)


def lds_for(gb: float, ld_gb: float) -> int:
    """Whole LDs of ``ld_gb`` that hold ``gb``."""
    return math.ceil(gb / ld_gb - _EPS) if gb > 0 and ld_gb > 0 else 0


def pool_plans(blueprint: Blueprint, fabric: Fabric) -> list[PoolPlan]:
    """The LD plan of every built pool, in blueprint order (one pass over the devices)."""
    built = {p.name: i for i, p in enumerate(blueprint.cxl) if kind_of(fabric.facts.get(p.name)) == "cxl-pool"}
    if not built:
        return []
    labels: dict[str, set[str]] = {}  # device group -> pools whose hosts entries name it
    for name in built:
        for entry in blueprint.cxl[built[name]].hosts:
            labels.setdefault(entry.label, set()).add(name)
    memory: dict[str, list] = {n: [] for n in built}
    switches: dict[str, dict[int, str]] = {n: {} for n in built}
    members: dict[tuple[str, str], list[str]] = {}  # (pool, group) -> host device names
    for d in fabric.devices:
        if d.group in memory and d.role == ROLE_MEMORY:
            memory[d.group].append(d)
        elif d.group in switches and d.role == ROLE_SWITCH:
            switches[d.group][d.coord("switch", 0)] = d.name
        for pool in labels.get(d.group, ()):
            if d.role not in (ROLE_MEMORY, ROLE_SWITCH):
                members.setdefault((pool, d.group), []).append(d.name)
    return [_plan(blueprint.cxl[i], i, fabric, memory[n], switches[n], members) for n, i in built.items()]


def _plan(spec: CxlPool, index: int, fabric: Fabric, memory: list, switches: dict[int, str], members: dict) -> PoolPlan:
    model = fabric.models[spec.memory.model]
    per = model.logical_devices
    ld_gb = model.memory_gb / per
    lds = [Ld(d.name, switches.get(d.coord("switch", 0), ""), k, ld_gb) for d in memory for k in range(per)]
    hosts = [
        HostNeed(host, j, entry.promised_gb, lds_for(entry.promised_gb, ld_gb))
        for j, entry in enumerate(spec.hosts)
        for host in members.get((spec.name, entry.label), [])
    ]
    by_label: dict[str, list[str]] = {}
    for h in hosts:
        by_label.setdefault(spec.hosts[h.entry].label, []).append(h.host)
    order = {h.host: k for k, h in enumerate(hosts)}
    regions: list[RegionNeed] = []
    for r, region in enumerate(spec.shared):
        named: dict[str, None] = {}
        unknown: list[tuple[int, str]] = []
        for k, who in enumerate(region.hosts):
            if who in by_label:
                named.update(dict.fromkeys(by_label[who]))
            elif who in order:
                named[who] = None
            else:
                unknown.append((k, who))
        members_in_order = sorted(named, key=order.__getitem__)
        need = lds_for(region.size_gb, ld_gb)
        regions.append(RegionNeed(region.name, r, region.size_gb, members_in_order, unknown, need))
    # hosts from the bottom, regions from the top; what does not fit stays unbound
    low, high = 0, len(lds)
    for h in hosts:
        if low + h.lds <= high:
            h.bound = list(range(low, low + h.lds))
            low += h.lds
    for g in regions:
        if high - g.lds >= low:
            g.bound = list(range(high - 1, high - g.lds - 1, -1))
            high -= g.lds
    return PoolPlan(spec.name, index, spec.memory.model, per, ld_gb, model.memory_sharing, len(memory), lds, hosts, regions)
