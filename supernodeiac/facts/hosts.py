"""Where every compute host sits, read from the Fabric once: the facts hosts and schedulers need.

NCCL topology files, Kubernetes labels, Slurm topology, the placement report and the acceptance
plan all ask the same questions about a host (a device with accelerators: an HGX node, an NVL72
compute tray, an OEX compute board; and CPU servers cabled to a scale-out fabric, for the
schedulers and link tests): which rack, which scale-up domain instance, and per
scale-out fabric which switch each NIC is cabled to, on which rail, and which group of leaves
and spines that puts it in. :func:`host_facts` answers them in one pass over the links; the
renderers read the answers and never re-derive topology.

Groups are found from the cables, not from the builders' formulas:

* a host's **leaf group** is the set of switches its NICs are cabled to on one fabric (on a
  rail-optimised fat tree the rail leaves of one SU block: hosts of a leaf group reach each other
  in one switch hop on every rail);
* a leaf group's **spine group** is the set of switches one tier above its leaves (a 3-tier fat
  tree's pod; all spines of a 2-tier tree), or, when the leaves have no upper tier (Dragonfly),
  the Dragonfly group of the leaves;
* a host's **scale-up domain** is its domain instance (a supernode, an NVL72 rack; joined by a
  second level: the joined domain) or, for a board with its own switch chips (HGX), the host itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..catalog.host_topology import HostTopology
from ..fabric import Device, Fabric
from ..fabric.device_arrays import device_column, unique_ints
from ..fabric.fabric_facts import fat_tree_of, kind_of
from ..model.blueprint import Blueprint, built_fabrics
from .nic_table import GroupOf, NicTable, padded_rows, row_ids


@dataclass(slots=True)
class LeafGroup:
    name: str
    leaves: tuple[int, ...]  # switch device indices, sorted
    hosts: list[int] = field(default_factory=list)  # device indices, in index order
    spine_group: int | None = None  # index into FabricHosts.spine_groups
    su: int | None = None  # the leaves' SU coordinate (0-based) when they share one


@dataclass(slots=True)
class SpineGroup:
    name: str
    switches: tuple[int, ...]
    leaf_groups: list[int] = field(default_factory=list)
    pod: int | None = None  # the spines' pod coordinate (0-based, 3-tier fat trees)


@dataclass(slots=True)
class FabricHosts:
    """One scale-out fabric seen from its hosts."""

    name: str
    kind: str
    transport: str
    rail_optimized: bool
    tiers: int  # switching tiers (2 or 3 for a fat tree; 1 or 2 for Dragonfly/Dragonfly+)
    nics: NicTable  # host -> its NICs on this fabric, in port order
    leaf_groups: list[LeafGroup]
    spine_groups: list[SpineGroup]
    group_of: GroupOf  # host -> leaf group index

    def rail_order(self, host: int) -> tuple[int | None, ...]:
        return tuple(n.rail for n in self.nics[host])


@dataclass(slots=True)
class Hosts:
    """Every compute host of a Fabric and where it sits.

    ``hosts`` are the accelerator hosts (the collective ranks); ``cpu_hosts`` the servers without
    accelerators (catalogue kind ``node``) cabled to a scale-out fabric: schedulers place jobs on
    them too, so the fabrics' leaf groups hold both (``scheduled``), and the readers that mean
    ranks filter by :meth:`accelerators`.
    """

    fabric: Fabric
    hosts: list[int]  # device indices, in index order
    domain: dict[int, str]  # host -> scale-up domain instance
    domain_hosts: dict[str, list[int]]  # domain instance -> hosts, in index order
    domain_accelerators: dict[str, int]
    domain_kind: dict[str, str]  # instance -> "board" (HGX, or a switchless mesh board), "orthogonal", "switched", "two-level"
    fabrics: dict[str, FabricHosts]
    cpu_hosts: list[int] = field(default_factory=list)  # device indices, in index order

    @property
    def scheduled(self) -> list[int]:
        """Every host a scheduler places work on: accelerator and CPU hosts, in index order."""
        return sorted(self.hosts + self.cpu_hosts) if self.cpu_hosts else self.hosts

    def device(self, host: int) -> Device:
        return self.fabric.devices[host]

    def rack(self, host: int) -> tuple[str, str] | None:
        """(row, rack name) of a host, None when unplaced."""
        d = self.fabric.devices[host]
        if d.rack < 0:
            return None
        r = self.fabric.racks[d.rack]
        return r.row, r.name

    def accelerators(self, host: int) -> int:
        acc = self.fabric.models[self.fabric.devices[host].model].accelerators
        return acc.count if acc is not None else 0


def scaleout_fabrics(blueprint: Blueprint) -> list[tuple[str, str, str]]:
    """(name, kind, transport) of the blueprint's scale-out fabrics (intent: which networks carry data)."""
    return [(n, s.kind, getattr(s, "transport", "infiniband")) for _, s, n in built_fabrics(blueprint)]


def _domains(f: Fabric, hosts: list[int]) -> tuple[dict[int, str], dict[str, str]]:
    """Each host's scale-up domain instance, and each instance's kind."""
    joined = {d: name for name, facts in f.facts.items() if facts["kind"] == "two-level" for d in facts["domains"]}
    domain: dict[int, str] = {}
    kinds: dict[str, str] = {}
    for h in hosts:
        d = f.devices[h]
        name = d.coord("domain")
        if name is not None and d.coord("supernode") is not None:
            if name in joined:
                instance, kind = joined[name], "two-level"
            else:
                instance, kind = f"{name}-{d.coord('supernode') + 1:02d}", kind_of(f.facts.get(name)) or "domain"
        elif f.models[d.model].internal_scaleup is not None or f.models[d.model].internal_mesh is not None:
            instance, kind = d.name, "board"
        else:
            continue
        domain[h] = instance
        kinds.setdefault(instance, kind)
    return domain, kinds


_DATA_PORT = ("hosts", "data port")  # DeviceArrays column key: 1 on a data port's row


def _flags(total: int, ports: Iterable[int]) -> list[int]:
    out = [0] * total
    for p in ports:
        out[p] = 1
    return out


def _fabric_hosts(f: Fabric, name: str, kind: str, transport: str, is_host: np.ndarray) -> FabricHosts | None:
    """One scale-out fabric's NICs and groups; ``is_host[d]``: whether device ``d`` is a host."""
    t = f.links
    devices, layouts = f.devices, f.layouts
    arr = t.arrays()
    # The fabric's links split in bulk (10^5-10^6 of them): host-switch ones, host end first,
    # become NICs one by one below; switch-switch ones only say which switches sit above which.
    wanted = np.fromiter((s.fabric == name for s in t.specs), dtype=bool, count=len(t.specs))[arr.spec]
    flip = is_host[arr.b]
    at_host = wanted & (is_host[arr.a] | flip)
    gbps_of = [s.gbps for s in t.specs]
    positions = np.flatnonzero(at_host)
    fl = flip[positions]
    host, port = np.where(fl, arr.b[positions], arr.a[positions]), np.where(fl, arr.b_port[positions], arr.a_port[positions])
    switch = np.where(fl, arr.a[positions], arr.b[positions])
    switch_port = np.where(fl, arr.a_port[positions], arr.b_port[positions])
    # A host's data ports only (not its management or scale-up ports), looked up by port row.
    dv = f.device_arrays()
    rows = dv.rows(host, port)
    data = dv.port_column(_DATA_PORT, lambda layout: _flags(layout.total, layout.ports_of("data"))).astype(bool)[rows]
    positions, host, port, switch, switch_port, rows = (x[data] for x in (positions, host, port, switch, switch_port, rows))
    # Each host's NICs in port order (stable: a port cabled twice keeps link order).
    order = np.lexsort((port, host))
    positions, host, port, switch, switch_port, rows = (x[order] for x in (positions, host, port, switch, switch_port, rows))
    names = [n for m in dv.models for n in layouts[m].names]  # by port row
    rails = {sw: devices[sw].coord("rail") for sw in unique_ints(switch).tolist()}
    nics = NicTable(host, port, rows, switch, switch_port, positions, arr.spec[positions], names, rails, gbps_of)
    between = np.flatnonzero(wanted & ~at_host)
    tier = device_column(devices, "tier")
    lo, hi = arr.a[between], arr.b[between]
    ta, tb = tier[lo], tier[hi]
    up = ta < tb
    lower, upper = np.where(up, lo, hi)[ta != tb], np.where(up, hi, lo)[ta != tb]
    uppers: dict[int, set[int]] = {}  # switch -> switches one tier above it on this fabric
    if len(lower):
        order = np.lexsort((upper, lower))
        lower, upper = lower[order], upper[order]
        starts = np.flatnonzero(np.concatenate(([True], lower[1:] != lower[:-1])))
        for sw, ups in zip(lower[starts].tolist(), np.split(upper, starts[1:]), strict=True):
            uppers[sw] = set(ups.tolist())
    if not nics:
        return None

    # Leaf groups: hosts cabled to the same set of switches, numbered by their lowest switch.
    in_group, leaf_sets = _leaf_sets(host, switch)
    leaf_groups: list[LeafGroup] = []
    per_su: dict[int | None, int] = {}
    for leaves, group_hosts in zip(leaf_sets, in_group, strict=True):
        sus = [devices[x].coord("su") for x in leaves]
        su = sus[0] if sus[0] is not None and all(s == sus[0] for s in sus) else None
        per_su[su] = per_su.get(su, 0) + 1
        leaf_groups.append(LeafGroup("", leaves, group_hosts.tolist(), su=su))
    seen_su: dict[int | None, int] = {}
    for k, g in enumerate(leaf_groups):
        if g.su is not None and per_su[g.su] == 1:
            g.name = f"{name}-su{g.su + 1:03d}"
        elif g.su is not None:
            seen_su[g.su] = seen_su.get(g.su, 0) + 1
            g.name = f"{name}-su{g.su + 1:03d}-{seen_su[g.su]:02d}"
        else:
            g.name = f"{name}-lg{k + 1:04d}"
    group_of = GroupOf(in_group)

    # Spine groups: the switches above a leaf group's leaves (or the leaves' Dragonfly group).
    by_upper: dict[tuple, list[int]] = {}
    for k, g in enumerate(leaf_groups):
        above = sorted(set().union(*(uppers.get(x, set()) for x in g.leaves)))
        key: tuple = ("up", *above) if above else ("group", *sorted({devices[x].coord("group") for x in g.leaves}, key=str))
        if key == ("group", None):
            continue
        by_upper.setdefault(key, []).append(k)
    spine_groups: list[SpineGroup] = []
    for n, key in enumerate(sorted(by_upper, key=lambda k: by_upper[k][0])):
        members = by_upper[key]
        switches = tuple(key[1:]) if key[0] == "up" else ()
        pods = [devices[x].coord("pod") for x in switches]
        pod = pods[0] if pods and pods[0] is not None and all(p == pods[0] for p in pods) else None
        groups = list(key[1:]) if key[0] == "group" else [devices[x].coord("group") for x in switches]
        if pod is not None:
            label = f"{name}-pod{pod + 1:02d}"
        elif groups and groups[0] is not None and all(g == groups[0] for g in groups):
            label = f"{name}-g{groups[0] + 1:03d}"
        else:
            label = f"{name}-sg{n + 1:02d}"
        for k in members:
            leaf_groups[k].spine_group = len(spine_groups)
        spine_groups.append(SpineGroup(label, switches, members, pod))
    if len(spine_groups) == 1 and spine_groups[0].pod is None and spine_groups[0].switches:
        spine_groups[0].name = f"{name}-spines"

    tree = fat_tree_of(f.facts.get(name))
    rail_opt = tree is not None and tree["rail_optimized"] and nics.rails_known()
    tiers = tree["tiers"] if tree is not None else 2 if kind == "dragonfly-plus" else 1
    return FabricHosts(name, kind, transport, rail_opt, tiers, nics, leaf_groups, spine_groups, group_of)


def _leaf_sets(host: np.ndarray, switch: np.ndarray) -> tuple[list[np.ndarray], list[tuple[int, ...]]]:
    """Hosts (NIC rows ``host`` -> ``switch``, sorted by host) grouped by the set of switches they
    reach: (each group's hosts, ascending; its switches, ascending), groups by lowest switch,
    then by first host. In bulk: a padded row of switches per host, an id per distinct row."""
    span = int(switch.max()) + 1
    pair = unique_ints(host * span + switch)  # distinct (host, switch), by host then switch
    h, sw = pair // span, pair % span
    starts = np.flatnonzero(np.concatenate(([True], h[1:] != h[:-1])))
    counts = np.diff(np.append(starts, len(h)))
    hosts = h[starts]
    table = padded_rows(counts, sw)
    _, first, group = np.unique(row_ids(table), return_index=True, return_inverse=True)
    rows, group = table[first], group.reshape(-1)
    order = np.lexsort((first, rows[:, 0]))  # by lowest switch, then by first host
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    by_group = np.argsort(rank[group], kind="stable")  # hosts by group, ascending within one
    cuts = np.cumsum(np.bincount(rank[group], minlength=len(order)))[:-1]
    members = np.split(hosts[by_group], cuts)
    sets = [tuple(x for x in row if x >= 0) for row in rows[order].tolist()]
    return members, sets


def host_facts(fabric: Fabric, blueprint: Blueprint) -> Hosts:
    """Every compute host and where it sits (one pass over the links per scale-out fabric)."""
    models = fabric.models
    # Which devices are hosts, by model id (a device's index is its position in the Fabric).
    dv = fabric.device_arrays()
    model_of = dv.model
    with_acc = np.array([models[m].accelerators is not None for m in dv.models], dtype=bool)
    # CPU servers: a node model without accelerators (appliances such as UFM or storage servers
    # are service endpoints, not scheduler hosts); kept where a scale-out fabric reaches them.
    cpu = np.array([models[m].kind == "node" and models[m].accelerators is None for m in dv.models], dtype=bool)
    is_acc, is_cpu = with_acc[model_of], cpu[model_of]
    hosts = np.flatnonzero(is_acc).tolist()
    domain, kinds = _domains(fabric, hosts)
    domain_hosts: dict[str, list[int]] = {}
    domain_acc: dict[str, int] = {}
    for h in hosts:
        inst = domain.get(h)
        if inst is None:
            continue
        domain_hosts.setdefault(inst, []).append(h)
        acc = models[fabric.devices[h].model].accelerators
        domain_acc[inst] = domain_acc.get(inst, 0) + (acc.count if acc else 0)
    is_host = is_acc | is_cpu
    fabrics: dict[str, FabricHosts] = {}
    # No compute hosts (a Dragonfly of plain endpoints): nothing to read from the links.
    for name, kind, transport in scaleout_fabrics(blueprint) if is_host.any() else ():
        fh = _fabric_hosts(fabric, name, kind, transport, is_host)
        if fh is not None:
            fabrics[name] = fh
    on_fabric = np.zeros(len(fabric.devices), dtype=bool)
    for fh in fabrics.values():
        on_fabric[fh.nics.host] = True
    cabled = np.flatnonzero(is_cpu & on_fabric).tolist()
    return Hosts(fabric, hosts, domain, domain_hosts, domain_acc, kinds, fabrics, cabled)


# Renderers and reports each ask for the same facts: computed once per Fabric and blueprint (and
# remade when the devices or links change). Two slots: a render reads one Fabric at a time, and
# `snc diff` renders two in turn, one output family at a time; the slots keep those alive only.
_LAST: list[tuple[Fabric, Blueprint, tuple, Hosts]] = []
SLOTS = 2


def cached_host_facts(fabric: Fabric, blueprint: Blueprint) -> Hosts:
    stamp = (len(fabric.devices), fabric.links.stamp())
    for i, (f, bp, st, hosts) in enumerate(_LAST):
        if f is fabric and bp is blueprint and st == stamp:
            if i:
                _LAST.insert(0, _LAST.pop(i))
            return hosts
    hosts = host_facts(fabric, blueprint)
    _LAST[:] = [(fabric, blueprint, stamp, hosts), *[e for e in _LAST if e[0] is not fabric]][:SLOTS]
    return hosts


def rdma_names(f: Fabric, topologies: dict[str, HostTopology]) -> dict[str, list[str]]:
    """Per model: each port's RDMA device name (the host topology's for data ports, else the port's
    own name): what perftest, mlxlink and the host sheet call a NIC."""
    out: dict[str, list[str]] = {}
    for d in f.devices:
        if d.model in out:
            continue
        layout = f.layouts[d.model]
        names = list(layout.names)
        topo = topologies.get(d.model)
        if topo is not None:
            data = layout.ports_of("data")
            for p, name in zip(data, topo.rdma_names([names[p] for p in data]), strict=True):
                names[p] = name
        out[d.model] = names
    return out
