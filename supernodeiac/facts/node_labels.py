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

from ..model.blueprint import Blueprint
from .hosts import Hosts
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
    by_host: dict[int, dict[str, str]]  # host -> key -> value, keys in a stable order
    origins: dict[str, Origin]  # key -> where its values come from
    primary: str | None  # the scale-out fabric the scheduler levels follow
    level_keys: list[tuple[str, str]] = field(default_factory=list)  # (level name, key), widest first


def node_labels(hosts: Hosts, bp: Blueprint) -> Labels:
    k8s = bp.kubernetes
    p = k8s.label_prefix
    f = hosts.fabric
    primary = next(iter(hosts.fabrics), None)
    two_level = {h for h, inst in hosts.domain.items() if hosts.domain_kind.get(inst) == "two-level"}
    origins: dict[str, Origin] = {
        f"{p}/blueprint": Origin("blueprint"),
        f"{p}/node-model": Origin("model"),
        f"{p}/row": Origin("row"),
        f"{p}/rack": Origin("rack"),
        f"{p}/system-class": Origin("class"),
        f"{p}/scaleup-domain": Origin("domain"),
        f"{p}/scaleup-accelerators": Origin("class"),
    }
    out: dict[int, dict[str, str]] = {}
    # Per fabric its label keys, made once rather than per host (10^4 hosts at 131k); the leaf
    # keys per rail (rail-optimised) or NIC.
    fabric_keys = {
        name: (f"{p}/{name}.fabric", f"{p}/{name}.leaf-group", f"{p}/{name}.spine-group", f"{p}/{name}.pod", f"{p}/{name}.su")
        for name in hosts.fabrics
    }
    leaf_keys: dict[tuple[str, int | None], str] = {}
    # CPU servers too (hosts.scheduled): their fabric and Topograph tier labels, no scale-up or
    # accelerator keys (they have no domain).
    for h in hosts.scheduled:
        d = f.devices[h]
        labels: dict[str, str] = {f"{p}/blueprint": bp.metadata.name, f"{p}/node-model": d.model}
        where = hosts.rack(h)
        if where is not None:
            labels[f"{p}/row"], labels[f"{p}/rack"] = where
        inst = hosts.domain.get(h)
        if inst is not None:
            acc = hosts.domain_accelerators[inst]
            labels[f"{p}/scaleup-domain"] = inst
            labels[f"{p}/scaleup-accelerators"] = str(acc)
            labels[f"{p}/system-class"] = system_class_of(acc, 2 if h in two_level else 1)
        for name, fh in hosts.fabrics.items():
            nics = fh.nics.get(h)
            if not nics:
                continue
            g = fh.leaf_groups[fh.group_of[h]]
            k_fabric, k_leaf_group, k_spine_group, k_pod, k_su = fabric_keys[name]
            # The whole fabric: the one root the scheduler trees close at (a job wider than an SU
            # still fits under a tier bound).
            labels[k_fabric] = name
            if k_fabric not in origins:
                origins[k_fabric] = Origin("fabric")
            labels[k_leaf_group] = g.name
            if k_leaf_group not in origins:
                origins[k_leaf_group] = Origin("fabric")
            if g.spine_group is not None:
                sg = fh.spine_groups[g.spine_group]
                labels[k_spine_group] = sg.name
                origins.setdefault(k_spine_group, Origin("fabric"))
                if sg.pod is not None:
                    labels[k_pod] = f"{name}-pod{sg.pod + 1:02d}"
                    origins.setdefault(k_pod, Origin("fabric"))
            if g.su is not None:
                labels[k_su] = f"{name}-su{g.su + 1:03d}"
                origins.setdefault(k_su, Origin("fabric"))
            for j, nic in enumerate(nics):
                at = (name, nic.rail if fh.rail_optimized else j)
                key = leaf_keys.get(at)
                if key is None:
                    key = leaf_keys[at] = f"{p}/{name}.rail{at[1]}.leaf" if fh.rail_optimized else f"{p}/{name}.nic{j}.leaf"
                labels[key] = f.devices[nic.switch].name
                if key not in origins:
                    origins[key] = Origin("leaf", nic.switch)
        zone = _zone(k8s.zone, labels, p, primary)
        if zone is not None:
            labels[ZONE] = zone
        if k8s.nvidia_topology_labels and primary is not None and f"{p}/{primary}.leaf-group" in labels:
            keys = TOPOGRAPH_KEYS[k8s.topograph_keys]
            if inst is not None and len(hosts.domain_hosts[inst]) > 1:
                labels[keys[0]] = inst
            labels[keys[1]] = labels[f"{p}/{primary}.leaf-group"]
            if f"{p}/{primary}.spine-group" in labels:
                labels[keys[2]] = labels[f"{p}/{primary}.spine-group"]
            if hosts.fabrics[primary].tiers >= 3:
                labels[keys[3]] = primary
        out[h] = labels
    result = Labels(out, origins, primary)
    result.level_keys = levels(result, hosts, p)[0]
    return result


def _zone(which: str, labels: dict[str, str], p: str, primary: str | None) -> str | None:
    key = {
        "row": f"{p}/row",
        "rack": f"{p}/rack",
        "scaleup-domain": f"{p}/scaleup-domain",
        "su": f"{p}/{primary}.su",
        "pod": f"{p}/{primary}.pod",
    }.get(which)
    return labels.get(key) if key else None


def levels(labels: Labels, hosts: Hosts, p: str) -> tuple[list[tuple[str, str]], list[str]]:
    """Scheduler levels that nest, widest first and ending at the hostname; and why others were left out.

    Candidates in priority order: the scale-up domain (when it spans hosts), the primary fabric's
    leaf group, its SU, its spine group (pod), and the fabric itself, the root every tree closes
    at. A candidate is kept when its values and those of every level kept before nest one inside
    the other; levels that split the hosts the same way as a kept one add nothing and are skipped.
    The root is kept with its one value when every host is on the fabric (and more than the
    hostname level would be left otherwise).
    """
    by_host = labels.by_host
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
        values = {h: v[key] for h, v in by_host.items() if key in v}
        if len(values) != len(by_host):
            continue  # missing on some hosts: no level to schedule by
        if len(set(values.values())) < 2 and name != "fabric":
            continue  # one value for all: the fabric root says that once
        if len(by_host) < 2:
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
    """'same' when a and b split the hosts alike; 'nested' when one refines the other; else None."""
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


def level_notes(labels: Labels, hosts: Hosts, p: str) -> list[str]:
    return levels(labels, hosts, p)[1]
