"""Slurm nodes, partitions and topology (snc render: slurm/), from the hosts' facts.

* ``slurm/nodes.conf``: for slurm.conf's ``Include``: a ``NodeName`` line per node group and
  model (accelerator hosts with ``Gres=gpu:N``, CPU servers without; ``Sockets``,
  ``CoresPerSocket``, ``ThreadsPerCore`` and ``RealMemory`` where the catalogue has the model's
  ``cpu`` figures, else left to slurmd's defaults) and a ``PartitionName`` per node group;
* ``slurm/topology.conf``: ``TopologyPlugin=topology/tree``. The lowest switches are the leaf
  groups of the first scale-out fabric (hosts cabled to the same leaves: on a rail-optimised fat
  tree every rail leaf of the group has the same hosts, so Slurm sees one switch), above them the
  spine groups (a 3-tier pod, a Dragonfly group), and one root when there are several.
* ``slurm/topology-block.conf``: ``TopologyPlugin=topology/block``. One block per scale-up domain
  instance that spans hosts (an NVL72 rack), else per leaf group; ``BlockSizes`` the smallest
  block's size then doubling while that many blocks exist (topology.conf(5): successive sizes a
  power of two larger than the base).
* ``slurm/topology.yaml``: both, for Slurm 25.05+ (topology.yaml(5)); the tree is the cluster default.

Node and switch lists are hostlist expressions (``gpu-[0001-0016]``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..facts.hosts import FabricHosts, Hosts, cached_host_facts
from .base import RENDERERS, Artifacts, RenderContext
from .kubernetes import to_yaml

_SUFFIX = re.compile(r"^(.*?)(\d+)$")
# RealMemory below the installed memory: slurmd drains a node whose RealMemory exceeds the
# MemTotal it finds, and the firmware and kernel keep a few per cent of the DIMMs. A margin, not
# a measurement: `slurmd -C` on one node gives the figure to use.
MEMORY_MARGIN = 0.97


def hostlist(names: Iterable[str]) -> str:
    """Slurm hostlist expression of names: runs of one prefix and equal-width numbers in brackets."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        m = _SUFFIX.match(name)
        if m is None or "[" in name or "," in name:
            plain.append(name)
            continue
        groups.setdefault((m.group(1), len(m.group(2))), []).append(int(m.group(2)))
    parts: list[tuple[str, str]] = []
    for (prefix, width), numbers in groups.items():
        numbers = sorted(set(numbers))
        if len(numbers) == 1:
            parts.append((prefix, f"{prefix}{numbers[0]:0{width}d}"))
            continue
        ranges: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        parts.append((prefix, f"{prefix}[{','.join(ranges)}]"))
    parts.extend((p, p) for p in plain)
    return ",".join(text for _k, text in sorted(parts))


def tree(hosts: Hosts, fh: FabricHosts) -> list[tuple[str, str, str]]:
    """(switch, 'Nodes' or 'Switches', hostlist) lines, leaves first."""
    names = hosts.fabric.devices
    lines = [(g.name, "Nodes", hostlist(names[h].name for h in g.hosts)) for g in fh.leaf_groups]
    tops: list[str] = []
    loose = [g.name for g in fh.leaf_groups if g.spine_group is None]
    for sg in fh.spine_groups:
        lines.append((sg.name, "Switches", hostlist(fh.leaf_groups[k].name for k in sg.leaf_groups)))
        tops.append(sg.name)
    tops += loose
    if len(tops) > 1:
        lines.append((fh.name, "Switches", hostlist(tops)))
    return lines


def blocks(hosts: Hosts, fh: FabricHosts | None) -> tuple[list[tuple[str, list[int]]], str]:
    """(block name, hosts) per block, and what a block is."""
    multi = {d: hs for d, hs in hosts.domain_hosts.items() if len(hs) > 1}
    if multi:
        return sorted(multi.items(), key=lambda x: x[1][0]), "scale-up domain"
    if fh is None:
        return [], ""
    return [(g.name, g.hosts) for g in fh.leaf_groups], f"leaf group of {fh.name}"


def block_sizes(sizes: list[int]) -> list[int]:
    """Base = the smallest block; then base x 2^k while 2^k blocks exist (Topograph's rule)."""
    if not sizes:
        return []
    base, out, k = min(sizes), [], 1
    while k <= len(sizes):
        out.append(base * k)
        k *= 2
    return out


def node_lines(hosts: Hosts) -> tuple[list[str], list[tuple[str, list[int]]]]:
    """NodeName lines (one per node group and model, hosts in index order) and the partitions:
    (node group, its hosts), in the order the groups' first hosts come."""
    f = hosts.fabric
    by_group: dict[tuple[str, str], list[int]] = {}
    for h in hosts.scheduled:
        d = f.devices[h]
        by_group.setdefault((d.group, d.model), []).append(h)
    lines: list[str] = []
    partitions: dict[str, list[int]] = {}
    for (group, model), hs in by_group.items():
        m = f.models[model]
        fields = [f"NodeName={hostlist(f.devices[h].name for h in hs)}"]
        if m.cpu is not None:
            fields += [
                f"Sockets={m.cpu.sockets}",
                f"CoresPerSocket={m.cpu.cores_per_socket}",
                f"ThreadsPerCore={m.cpu.threads_per_core}",
                f"RealMemory={int(m.cpu.memory_gb * 1024 * MEMORY_MARGIN)}",
            ]
        if m.accelerators is not None:
            fields.append(f"Gres=gpu:{m.accelerators.count}")
        fields.append("State=UNKNOWN")
        lines.append(" ".join(fields))
        partitions.setdefault(group, []).extend(hs)
    return lines, list(partitions.items())


def nodes_conf(hosts: Hosts, bp: str) -> bytes:
    f = hosts.fabric
    lines, partitions = node_lines(hosts)
    text = [
        f"# Slurm nodes and partitions for {bp} (written by snc from the design).",
        "# slurm.conf: Include nodes.conf (and TopologyPlugin as topology.conf or topology-block.conf says).",
    ]
    unknown = sorted({f.devices[h].model for h in hosts.scheduled if f.models[f.devices[h].model].cpu is None})
    if unknown:
        text.append(f"# No catalogue CPU figures for {', '.join(unknown)}: add `slurmd -C`'s Sockets/CoresPerSocket/")
        text.append("# ThreadsPerCore/RealMemory from one node to its line (else Slurm counts 1 CPU).")
    if hosts.hosts:
        text.append("# Gres=gpu: each accelerator host needs a gres.conf (AutoDetect=nvml on NVIDIA, rsmi on AMD).")
        text.append("GresTypes=gpu")
    text += lines
    for k, (group, hs) in enumerate(partitions):
        nodes = hostlist(f.devices[h].name for h in hs)
        text.append(f"PartitionName={group} Nodes={nodes}{' Default=YES' if k == 0 else ''} MaxTime=INFINITE State=UP")
    return ("\n".join(text) + "\n").encode()


@RENDERERS.register("slurm")
def render_slurm(ctx: RenderContext) -> Artifacts:
    hosts = cached_host_facts(ctx.fabric, ctx.blueprint)
    if not hosts.scheduled:
        return {}
    bp = ctx.blueprint.metadata.name
    names = ctx.fabric.devices
    fh = next(iter(hosts.fabrics.values()), None)
    out: Artifacts = {"slurm/nodes.conf": nodes_conf(hosts, bp)}
    yaml_doc: list[dict] = []
    if fh is not None:
        lines = tree(hosts, fh)
        text = [
            f"# Slurm topology/tree for {bp}, from scale-out fabric {fh.name} (written by snc from the design).",
            "# slurm.conf: TopologyPlugin=topology/tree",
        ]
        text += [f"SwitchName={s} {kind}={members}" for s, kind, members in lines]
        out["slurm/topology.conf"] = ("\n".join(text) + "\n").encode()
        yaml_doc.append(
            {
                "topology": "tree",
                "cluster_default": True,
                "tree": {
                    "switches": [{"switch": s, "nodes" if kind == "Nodes" else "children": members} for s, kind, members in lines]
                },
            }
        )
    found, what = blocks(hosts, fh)
    if found:
        sizes = block_sizes([len(hs) for _b, hs in found])
        text = [
            f"# Slurm topology/block for {bp}: one block per {what} (written by snc from the design).",
            "# slurm.conf: TopologyPlugin=topology/block",
        ]
        text += [f"BlockName={b} Nodes={hostlist(names[h].name for h in hs)}" for b, hs in found]
        text.append("BlockSizes=" + ",".join(map(str, sizes)))
        out["slurm/topology-block.conf"] = ("\n".join(text) + "\n").encode()
        yaml_doc.append(
            {
                "topology": "block",
                "cluster_default": fh is None,
                "block": {
                    "block_sizes": sizes,
                    "blocks": [{"block": b, "nodes": hostlist(names[h].name for h in hs)} for b, hs in found],
                },
            }
        )
    if yaml_doc:
        header = f"# Slurm topology.yaml (Slurm 25.05+) for {bp}; when present, Slurm ignores topology.conf.\n"
        out["slurm/topology.yaml"] = (header + to_yaml(yaml_doc)).encode()
    return out
