"""Kubernetes node labels and the scheduler levels built on them, from the hosts' facts.

Label keys (``P`` = ``kubernetes.label_prefix``, ``F`` = a scale-out fabric's name):

* ``P/blueprint``, ``P/node-model``, ``P/row``, ``P/rack``, ``P/system-class``;
* ``P/scaleup-domain`` (the domain instance: a supernode, an NVL72 rack, the host itself for an
  HGX board) and ``P/scaleup-accelerators``;
* per fabric: ``P/F.fabric`` (the fabric's name: the scheduler trees' root), ``P/F.leaf-group``,
  ``P/F.spine-group``, ``P/F.su``, ``P/F.pod`` (when the fabric has them) and, per NIC,
  ``P/F.railR.leaf`` (rail-optimised) or ``P/F.nicJ.leaf``: the leaf that NIC is cabled to;
* ``topology.kubernetes.io/zone`` from the coordinate ``kubernetes.zone`` names;
* optionally the keys NVIDIA Topograph writes, so designed and discovered topology can be
  compared: v1 ``accelerator.topograph.run/domain`` and ``fabric.topograph.run/tier-0`` (leaf),
  ``tier-1``, ``tier-2``; or the pre-1.0 ``network.topology.nvidia.com/accelerator``, ``/leaf``,
  ``/spine``, ``/core`` (``kubernetes.topograph_keys: v0``).

Scheduler levels (Kueue Topology, Volcano HyperNode tiers) must form a strict tree: every value
of a narrower level inside one value of the wider one. :func:`levels` keeps the candidate levels
that nest, in priority order (scale-up domain first: it is why the machine exists), and says
which it left out and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..fabric.device_arrays import device_column
from ..model.blueprint import Blueprint
from .hosts import FabricHosts, Hosts
from .nic_table import row_ids
from .system_class import system_class_of

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
NVIDIA = "network.topology.nvidia.com"
# Topograph's keys for (accelerator domain, leaf, spine, core): v1.0.0 moved to a variable-depth
# fabric family, tier 0 the switch closest to the node (docs.nvidia.com/topograph/v1.0.0,
# reference/node-labels-and-annotations); v0 the pre-1.0 fixed keys.
TOPOGRAPH_KEYS = {
    "v1": (
        "accelerator.topograph.run/domain",
        "fabric.topograph.run/tier-0",
        "fabric.topograph.run/tier-1",
        "fabric.topograph.run/tier-2",
    ),
    "v0": (f"{NVIDIA}/accelerator", f"{NVIDIA}/leaf", f"{NVIDIA}/spine", f"{NVIDIA}/core"),
}
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def key_problem(key: str) -> str | None:
    """Why a label key is invalid (None when valid)."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return f"prefix {prefix!r} is not a DNS subdomain of at most 253 characters"
    if len(name) > 63 or not LABEL_NAME.match(name):
        return f"name {name!r} is not 1-63 letters, digits, '-', '_' or '.' starting and ending alphanumeric"
    return None


def value_problem(value: str) -> str | None:
    if len(value) > 63 or not LABEL_VALUE.match(value):
        return f"value {value!r} is not at most 63 letters, digits, '-', '_' or '.' starting and ending alphanumeric"
    return None


def node_name_problem(name: str) -> str | None:
    if len(name) > 253 or not DNS_SUBDOMAIN.match(name):
        return f"{name!r} is not a valid Kubernetes node name (a lower-case DNS subdomain)"
    return None


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a label's value comes from in the blueprint, for a located finding."""

    what: str  # rack, leaf, node, domain, fabric
    device: int | None = None  # a device whose name is the value


@dataclass
class Labels:
    """The hosts' labels, held once per distinct label set: 10^6 hosts of a Dragonfly+ carry a
    few 10^4 distinct sets (hosts of one leaf in one rack are labelled alike)."""

    sets: list[dict[str, str]]  # the distinct label sets (key -> value, keys in a stable order), by first host
    hosts: list[int]  # every labelled host, in index order
    which: list[int]  # per host (as ``hosts``): the index of its set in ``sets``
    origins: dict[str, Origin]  # key -> where its values come from
    primary: str | None  # the scale-out fabric the scheduler levels follow
    level_keys: list[tuple[str, str]] = field(default_factory=list)  # (level name, key), widest first
    notes: list[str] = field(default_factory=list)  # the candidate levels left out, and why
    _by_host: dict[int, dict[str, str]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, by_host: dict[int, dict[str, str]], origins: dict[str, Origin], primary: str | None) -> Labels:
        """Labels of a host -> labels mapping, one set per host."""
        return cls(list(by_host.values()), list(by_host), list(range(len(by_host))), origins, primary)

    @property
    def by_host(self) -> dict[int, dict[str, str]]:
        """host -> its labels (hosts of one set share one dict: read it, do not change it); made
        on first use, for the readers that go host by host."""
        if self._by_host is None:
            sets = self.sets
            self._by_host = dict(zip(self.hosts, map(sets.__getitem__, self.which), strict=True))
        return self._by_host


# The kubernetes-labels check and the kubernetes renderer read the same labels of the same Hosts
# (cached_host_facts keeps one per Fabric): made once. Two slots, as for the hosts: snc diff's sides.
SLOTS = 2
_LAST: list[tuple[Hosts, Blueprint, Labels]] = []


def cached_node_labels(hosts: Hosts, bp: Blueprint) -> Labels:
    """:func:`node_labels`, kept for the last Hosts objects asked about (callers do not mutate it)."""
    for h, b, labels in _LAST:
        if h is hosts and b is bp:
            return labels
    labels = node_labels(hosts, bp)
    _LAST[:] = [(hosts, bp, labels), *[e for e in _LAST if e[0] is not hosts]][:SLOTS]
    return labels


def node_labels(hosts: Hosts, bp: Blueprint, grouped: bool = True) -> Labels:
    """Every scheduled host's labels. Hosts placed alike (:func:`placement_groups`) get the same
    set, so one host of each such group is labelled and the rest share its set (``grouped=False``
    labels each host on its own: the plain path the grouped one is tested against)."""
    k8s = bp.kubernetes
    p = k8s.label_prefix
    f = hosts.fabric
    primary = next(iter(hosts.fabrics), None)
    two_level = {h for h, inst in hosts.domain.items() if hosts.domain_kind.get(inst) == "two-level"}
    k_blueprint, k_model, k_row, k_rack = f"{p}/blueprint", f"{p}/node-model", f"{p}/row", f"{p}/rack"
    k_domain, k_acc, k_class = f"{p}/scaleup-domain", f"{p}/scaleup-accelerators", f"{p}/system-class"
    origins: dict[str, Origin] = {
        k_blueprint: Origin("blueprint"),
        k_model: Origin("model"),
        k_row: Origin("row"),
        k_rack: Origin("rack"),
        k_class: Origin("class"),
        k_domain: Origin("domain"),
        k_acc: Origin("class"),
    }
    # 10^4 hosts share a few hundred values (a leaf group's labels, a domain size's class): each
    # key and value is made once, on the first host that has it, and the hosts share the strings.
    group_items = {name: _group_items(fh, name, p) for name, fh in hosts.fabrics.items()}
    nic_keys: dict[tuple[str, int | None], str] = {}
    classes: dict[tuple[int, bool], tuple[str, str]] = {}
    zone_key = _zone_key(k8s.zone, p, primary)
    primary_groups = f"{p}/{primary}.leaf-group" if k8s.nvidia_topology_labels and primary is not None else None
    topo = TOPOGRAPH_KEYS[k8s.topograph_keys]
    primary_spines = f"{p}/{primary}.spine-group"
    core = primary if primary is not None and hosts.fabrics[primary].tiers >= 3 else None  # the tier-2 value
    blueprint_name = bp.metadata.name
    scheduled = hosts.scheduled
    if grouped:
        first, set_of = placement_groups(hosts, scheduled)
    else:
        first, set_of = scheduled, list(range(len(scheduled)))
    for fh in hosts.fabrics.values():
        fh.nics.make_rows(first)  # the rows read below, made in bulk
    sets: list[dict[str, str]] = []
    # CPU servers too (hosts.scheduled): their fabric and Topograph tier labels, no scale-up or
    # accelerator keys (they have no domain). One host per group, in host order, so each key's
    # origin is that of the first host that has it, as host by host.
    for h in first:
        d = f.devices[h]
        labels: dict[str, str] = {k_blueprint: blueprint_name, k_model: d.model}
        where = hosts.rack(h)
        if where is not None:
            labels[k_row], labels[k_rack] = where
        inst = hosts.domain.get(h)
        if inst is not None:
            acc = hosts.domain_accelerators[inst]
            two = h in two_level
            made = classes.get((acc, two))
            if made is None:
                made = classes[acc, two] = (str(acc), system_class_of(acc, 2 if two else 1))
            labels[k_domain] = inst
            labels[k_acc], labels[k_class] = made
        for name, fh in hosts.fabrics.items():
            nics = fh.nics.get(h)
            if not nics:
                continue
            items = group_items[name][fh.group_of[h]]
            labels.update(items)
            for key, _v in items:
                if key not in origins:
                    origins[key] = Origin("fabric")
            for j, nic in enumerate(nics):
                which = nic.rail if fh.rail_optimized else j
                nic_key = nic_keys.get((name, which))
                if nic_key is None:
                    nic_key = nic_keys[name, which] = f"{p}/{name}.{'rail' if fh.rail_optimized else 'nic'}{which}.leaf"
                labels[nic_key] = f.devices[nic.switch].name
                if nic_key not in origins:
                    origins[nic_key] = Origin("leaf", nic.switch)
        zone = labels.get(zone_key) if zone_key else None
        if zone is not None:
            labels[ZONE] = zone
        if primary_groups is not None and primary_groups in labels:
            if inst is not None and len(hosts.domain_hosts[inst]) > 1:
                labels[topo[0]] = inst
            labels[topo[1]] = labels[primary_groups]
            if primary_spines in labels:
                labels[topo[2]] = labels[primary_spines]
            if core is not None:
                labels[topo[3]] = core
        sets.append(labels)
    result = Labels(sets, scheduled, set_of, origins, primary)
    result.level_keys, result.notes = levels(result, hosts, p)
    return result


def placement_groups(hosts: Hosts, scheduled: list[int]) -> tuple[list[int], list[int]]:
    """Hosts that get the same labels, found in bulk: (the first host of each group, in host
    order; per scheduled host, its group). A host's labels follow from its model, its rack, its
    scale-up domain instance and, per fabric, the switches its NICs are cabled to in port order
    (its leaf group is the set of those switches; a NIC's key, its rail or position)."""
    if not scheduled:
        return [], []
    f = hosts.fabric
    at = np.array(scheduled, dtype=np.int64)
    columns = [f.device_arrays().model[at], device_column(f.devices, "rack")[at]]
    if hosts.domain:
        ids: dict[str | None, int] = {}
        columns.append(np.fromiter((ids.setdefault(hosts.domain.get(h), len(ids)) for h in scheduled), np.int64, len(at)))
    for fh in hosts.fabrics.values():
        columns.append(_switches_id(fh, at))
    key = row_ids(np.column_stack(columns))
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # groups numbered by their first host
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return at[first[order]].tolist(), rank[group.reshape(-1)].tolist()


def _switches_id(fh: FabricHosts, at: np.ndarray) -> np.ndarray:
    """Per host of ``at`` (ascending): an id of the switches its NICs on this fabric reach, in
    port order (-1: none)."""
    keys, table = fh.nics.switch_rows()
    ids = row_ids(table)
    i = np.minimum(np.searchsorted(keys, at), len(keys) - 1)
    return np.where(keys[i] == at, ids[i], -1)


def _group_items(fh: FabricHosts, name: str, p: str) -> list[tuple[tuple[str, str], ...]]:
    """Per leaf group of a fabric, the labels every host of it carries, in the hosts' key order."""
    out: list[tuple[tuple[str, str], ...]] = []
    for g in fh.leaf_groups:
        # The whole fabric: the one root the scheduler trees close at (a job wider than an SU
        # still fits under a tier bound).
        items = [(f"{p}/{name}.fabric", name), (f"{p}/{name}.leaf-group", g.name)]
        if g.spine_group is not None:
            sg = fh.spine_groups[g.spine_group]
            items.append((f"{p}/{name}.spine-group", sg.name))
            if sg.pod is not None:
                items.append((f"{p}/{name}.pod", f"{name}-pod{sg.pod + 1:02d}"))
        if g.su is not None:
            items.append((f"{p}/{name}.su", f"{name}-su{g.su + 1:03d}"))
        out.append(tuple(items))
    return out


def _zone_key(which: str, p: str, primary: str | None) -> str | None:
    """The label whose value ``kubernetes.zone`` names as the zone."""
    return {
        "row": f"{p}/row",
        "rack": f"{p}/rack",
        "scaleup-domain": f"{p}/scaleup-domain",
        "su": f"{p}/{primary}.su",
        "pod": f"{p}/{primary}.pod",
    }.get(which)


def levels(labels: Labels, hosts: Hosts, p: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Scheduler levels that nest, widest first and ending at the hostname; and why others were left out.

    Candidates in priority order: the scale-up domain (when it spans hosts), the primary fabric's
    leaf group, its SU, its spine group (pod), and the fabric itself, the root every tree closes
    at. A candidate is kept when its values and those of every level kept before nest one inside
    the other; levels that split the hosts the same way as a kept one add nothing and are skipped.
    The root is kept with its one value when every host is on the fabric (and more than the
    hostname level would be left otherwise).
    """
    sets = labels.sets  # hosts of one set agree on every level: the sets stand for their hosts
    candidates: list[tuple[str, str]] = []
    if any(len(hs) > 1 for hs in hosts.domain_hosts.values()):
        candidates.append(("scaleup-domain", f"{p}/scaleup-domain"))
    fabric = labels.primary
    if fabric is not None:
        candidates += [
            ("leaf-group", f"{p}/{fabric}.leaf-group"),
            ("su", f"{p}/{fabric}.su"),
            ("spine-group", f"{p}/{fabric}.spine-group"),
            ("fabric", f"{p}/{fabric}.fabric"),
        ]
    kept: list[tuple[str, str, dict[int, str]]] = []
    notes: list[str] = []
    for name, key in candidates:
        values = {i: v[key] for i, v in enumerate(sets) if key in v}  # set -> value, sets in first-host order
        if len(values) != len(sets):
            continue  # missing on some hosts: no level to schedule by
        if len(set(values.values())) < 2 and name != "fabric":
            continue  # one value for all: the fabric root says that once
        if len(labels.hosts) < 2:
            continue  # one host: the hostname is the whole tree
        problem = None
        for other_name, _k, other in kept:
            rel = _relation(values, other)
            if rel == "same":
                problem = "same"
                break
            if rel is None:
                problem = f"{name} and {other_name} do not nest ({_example(values, other)})"
                break
        if problem is None:
            kept.append((name, key, values))
        elif problem != "same":
            notes.append(f"left out {name}: {problem}")
    kept.sort(key=lambda x: len(set(x[2].values())))
    return [(n, k) for n, k, _v in kept] + [("hostname", HOSTNAME)], notes


def _relation(a: dict[int, str], b: dict[int, str]) -> str | None:
    """'same' when a and b (label set -> value) split the hosts alike; 'nested' when one refines the other; else None."""
    a_in_b: dict[str, str] = {}
    b_in_a: dict[str, str] = {}
    a_fine = b_fine = True
    for h, va in a.items():
        vb = b[h]
        if a_in_b.setdefault(va, vb) != vb:
            a_fine = False
        if b_in_a.setdefault(vb, va) != va:
            b_fine = False
        if not (a_fine or b_fine):
            return None
    return "same" if a_fine and b_fine else "nested"


def _example(a: dict[int, str], b: dict[int, str]) -> str:
    spans: dict[str, set[str]] = {}
    for h, va in a.items():
        spans.setdefault(va, set()).add(b[h])
    for va, vbs in spans.items():
        if len(vbs) > 1:
            return f"{va} spans {', '.join(sorted(vbs)[:3])}"
    inv: dict[str, set[str]] = {}
    for h, vb in b.items():
        inv.setdefault(vb, set()).add(a[h])
    vb, vas = next((k, v) for k, v in inv.items() if len(v) > 1)
    return f"{vb} spans {', '.join(sorted(vas)[:3])}"
