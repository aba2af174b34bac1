"""Kubernetes: node labels and the scheduler objects that read them (snc render: kubernetes/).

* ``kubernetes/node-labels.yaml``: one ``v1/Node`` per host carrying only its topology labels,
  for server-side apply (``kubectl apply --server-side --field-manager=snc-topology -f ...``):
  the field manager owns these labels and nothing else of the Node;
* ``kubernetes/kueue.yaml``: a Kueue ``Topology`` (kueue.x-k8s.io/v1alpha1: at most 8 levels, a
  strict tree, widest first, ``kubernetes.io/hostname`` last) and a ``ResourceFlavor`` per host
  model pointing at it;
* ``kubernetes/volcano-hypernodes.yaml``: Volcano ``HyperNode`` objects per tier (tier 1 holds
  nodes, each higher tier the HyperNodes of the tier below).

Labels and levels come from ``node_labels`` (facts read from the Fabric); the label syntax is
checked beforehand by the ``kubernetes-labels`` check, so nothing here writes an invalid key.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from ..facts.hosts import cached_host_facts
from ..facts.node_labels import HOSTNAME, Labels, cached_node_labels
from .base import RENDERERS, Artifacts, RenderContext

FIELD_MANAGER = "snc-topology"
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return _quoted(str(v))


# Label keys and values repeat across 10^4 Nodes (a rack, a leaf, a group): each is quoted once.
@lru_cache(maxsize=1 << 16)
def _quoted(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML double-quoted scalar


@lru_cache(maxsize=1 << 12)
def _key(k: str) -> str:
    return k if _PLAIN.match(k) and k.lower() not in _RESERVED else json.dumps(k)


def to_yaml(obj: Any, indent: int = 0) -> str:
    """Block-style YAML of dicts, lists and scalars (keys in the order given)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, dict | list) and v:
                lines.append(f"{pad}{_key(k)}:")
                lines.append(to_yaml(v, indent + 2).rstrip("\n"))
            elif isinstance(v, dict):
                lines.append(f"{pad}{_key(k)}: {{}}")
            elif isinstance(v, list):
                lines.append(f"{pad}{_key(k)}: []")
            else:
                lines.append(f"{pad}{_key(k)}: {_scalar(v)}")
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, dict | list) and v:
                inner = to_yaml(v, indent + 2).rstrip("\n")
                lines.append(f"{pad}- {inner.lstrip()}")
            else:
                lines.append(f"{pad}- {_scalar(v)}")
    else:
        lines.append(pad + _scalar(obj))
    return "\n".join(lines) + "\n"


def documents(objs: list[dict[str, Any]], header: str) -> bytes:
    return (header + "".join("---\n" + to_yaml(o) for o in objs)).encode()


def node_object(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _nodes(ctx: RenderContext, labels: Labels) -> list[tuple[str, dict[str, str]]]:
    """(node name, labels) per host, by name."""
    f = ctx.fabric
    return sorted(((f.devices[h].name, values) for h, values in labels.by_host.items()), key=lambda n: n[0])


# The Node documents' fixed lines, as to_yaml writes them: what comes before the name, and the
# labels' opening line (or an empty mapping).
_NODE_HEAD = "---\n" + to_yaml(node_object("", {})).partition("\n  name:")[0] + "\n  name: "
_LABELS_OPEN = "\n  labels:\n"
_NO_LABELS = "\n  labels: {}\n"


def node_documents(nodes: list[tuple[str, dict[str, str]]], header: str) -> bytes:
    """``documents`` of the Node objects of ``nodes`` ((name, labels) pairs), the same bytes: 10^4
    Nodes of one shape differ only in their name and label values, so the fixed lines are made
    once and each label line once per distinct key and value (a rack, a leaf, a group)."""
    lines: dict[str, dict[str, str]] = {}
    parts = [header]
    for name, labels in nodes:
        parts += (_NODE_HEAD, _scalar(name), _LABELS_OPEN if labels else _NO_LABELS)
        for key, value in labels.items():
            of_key = lines.get(key)
            if of_key is None:
                of_key = lines[key] = {}
            line = of_key.get(value)
            if line is None:
                line = of_key[value] = f"    {_key(key)}: {_scalar(value)}\n"
            parts.append(line)
    return "".join(parts).encode()


def topology_name(ctx: RenderContext) -> str:
    return ctx.blueprint.kubernetes.topology_name or ctx.blueprint.metadata.name


def kueue_objects(ctx: RenderContext, labels: Labels) -> list[dict[str, Any]]:
    name = topology_name(ctx)
    p = ctx.blueprint.kubernetes.label_prefix
    objs: list[dict[str, Any]] = [
        {
            "apiVersion": "kueue.x-k8s.io/v1alpha1",
            "kind": "Topology",
            "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": key} for _n, key in labels.level_keys]},
        }
    ]
    models = sorted({ctx.fabric.devices[h].model for h in labels.by_host})
    for model in models:
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "ResourceFlavor",
                "metadata": {"name": f"{name}-{model}" if len(models) > 1 else name},
                "spec": {
                    "nodeLabels": {f"{p}/blueprint": ctx.blueprint.metadata.name, f"{p}/node-model": model},
                    "topologyName": name,
                },
            }
        )
    return objs


def _object_name(level: str, value: str) -> str:
    """A DNS-1123 subdomain for a HyperNode: the level and the value, lower-cased, '_' -> '-'."""
    text = f"{level}-{value}".lower().replace("_", "-")
    return re.sub(r"[^a-z0-9.-]", "-", text).strip("-.")[:253]


def volcano_objects(ctx: RenderContext, labels: Labels) -> list[dict[str, Any]]:
    f = ctx.fabric
    tiers = [(n, k) for n, k in reversed(labels.level_keys) if k != HOSTNAME]  # narrowest first
    objs: list[dict[str, Any]] = []
    below: dict[int, str] | None = None  # host -> name of its HyperNode one tier down
    for tier, (level, key) in enumerate(tiers, start=1):
        members: dict[str, set[str]] = {}
        names: dict[int, str] = {}
        made: dict[str, str] = {}  # label value -> its HyperNode's name, made once per value
        for h, values in labels.by_host.items():
            value = values[key]
            node = made.get(value)
            if node is None:
                node = made[value] = _object_name(level, value)
            names[h] = node
            members.setdefault(node, set()).add(f.devices[h].name if below is None else below[h])
        kind = "Node" if below is None else "HyperNode"
        for node in sorted(members):
            objs.append(
                {
                    "apiVersion": "topology.volcano.sh/v1alpha1",
                    "kind": "HyperNode",
                    "metadata": {"name": node},
                    "spec": {
                        "tier": tier,
                        "tierName": level,
                        "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}} for m in sorted(members[node])],
                    },
                }
            )
        below = names
    return objs


@RENDERERS.register("kubernetes")
def render_kubernetes(ctx: RenderContext) -> Artifacts:
    hosts = cached_host_facts(ctx.fabric, ctx.blueprint)
    if not hosts.scheduled:
        return {}
    labels = cached_node_labels(hosts, ctx.blueprint)
    bp = ctx.blueprint.metadata.name
    levels = ", ".join(k for _n, k in labels.level_keys)
    return {
        "kubernetes/node-labels.yaml": node_documents(
            _nodes(ctx, labels),
            f"# Topology labels of the {len(labels.by_host)} hosts of {bp}, written by snc from the design.\n"
            "# Apply once the nodes have joined:\n"
            f"#   kubectl apply --server-side --field-manager={FIELD_MANAGER} -f node-labels.yaml\n",
        ),
        "kubernetes/kueue.yaml": documents(
            kueue_objects(ctx, labels),
            f"# Kueue topology-aware scheduling for {bp}: levels {levels}.\n",
        ),
        "kubernetes/volcano-hypernodes.yaml": documents(
            volcano_objects(ctx, labels),
            f"# Volcano network topology of {bp}: HyperNodes per tier, tier 1 narrowest.\n",
        ),
    }
