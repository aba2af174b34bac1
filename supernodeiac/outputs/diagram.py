"""Graphviz diagrams, one per fabric: ``diagrams/<fabric>.dot`` and, where ``dot`` exists, ``.svg``.

Two levels of detail, chosen per fabric by size, because a drawing of 400k links is neither
readable nor quick to lay out:

* **devices** (small fabrics): one node per device, ranked by tier; the parallel links between
  a pair of devices are merged into one edge labelled ``<count> x <rate>``.
* **groups** (beyond ``DETAIL_MAX_DEVICES`` devices or ``DETAIL_MAX_EDGES`` merged edges): one
  node per (tier, role, model, blueprint group), labelled with its device count; one edge per
  pair of groups, labelled with the link count, the bandwidth and the media. Its size depends on
  the number of groups, not of devices, so the largest fabric draws in milliseconds.

A device's tier counts only in the fabric that built it (``Device.group`` is the fabric's
name): a leaf is a switch in its InfiniBand fabric and an endpoint of the management network.

Deterministic: nodes and edges are written in sorted order, and ``dot`` is given the same
text, so the SVG is byte-identical across runs with the same Graphviz version.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass

from ..fabric import Device, Fabric
from ..fabric.fabric_facts import kind_of
from ..fabric.views import FabricLinks, links_by_fabric, local_tiers
from ..util import child_process
from ..util.number_format import gbps_text
from .base import RENDERERS, Artifacts, RenderContext

# Drawing limits (presentation choices, not hardware figures).
DETAIL_MAX_DEVICES = 64  # above this a per-device drawing is too wide to read: draw groups
DETAIL_MAX_EDGES = 600  # merged device pairs; also bounds `dot`'s layout time
SVG_MAX_EDGES = 1500  # never hand `dot` more than this (the group view is far below it)
DOT_TIMEOUT_S = 60

# Fill colours by fabric-local tier (0 endpoints, 1 leaf/access, 2 spine, 3 core, ...).
TIER_FILL = ["#e8f1fb", "#fdf0d5", "#e3f4e1", "#f6e1ee", "#ececec"]


def quote(text: str) -> str:
    """A DOT double-quoted string (backslash and quote escaped, newlines as DOT line breaks)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass(frozen=True)
class Diagram:
    fabric: str
    mode: str  # devices | groups
    nodes: int
    edges: int
    dot: str


def _header(name: str, mode: str, title: str) -> list[str]:
    return [
        f"graph {quote(name)} {{",
        f"  // supernodeiac diagram of fabric {name} ({mode} view)",
        f"  graph [label={quote(title)}, labelloc=t, fontname=Helvetica, fontsize=14, rankdir=BT, "
        "nodesep=0.25, ranksep=1.6, splines=true, outputorder=edgesfirst];",
        '  node [fontname=Helvetica, fontsize=9, shape=box, style="rounded,filled", color="#555555"];',
        '  edge [fontname=Helvetica, fontsize=8, color="#7a8aa0"];',
    ]


def _fill(tier: int) -> str:
    return TIER_FILL[min(tier, len(TIER_FILL) - 1)]


def _width(count: int) -> str:
    """Line width grows with the links an edge stands for, slowly, and stops at 5."""
    return f"{min(5.0, 1 + math.log2(count) / 2):.2f}" if count > 1 else "1"


def _bundle_text(count: int, total: float, rate: float | None) -> str:
    """'8 x 400G' for a bundle of one rate, '3 links, 1.2T' for a mixed one."""
    return f"{count} x {gbps_text(rate)}" if rate is not None else f"{count} links, {gbps_text(total)}"


def _device_view(f: Fabric, name: str, links: FabricLinks, tiers: dict[int, int], title: str) -> Diagram | None:
    """One node per device, parallel links merged; None when the merged edges exceed the limit."""
    # (a, b) -> [links, total Gb/s, the rate of every link or None when they differ]
    pairs: dict[tuple[int, int], list] = {}
    gbps_of = [spec.gbps for spec in links.specs]
    for a, b, s in zip(links.a, links.b, links.spec, strict=True):
        key = (a, b) if a <= b else (b, a)
        gbps = gbps_of[s]
        acc = pairs.get(key)
        if acc is None:
            if len(pairs) == DETAIL_MAX_EDGES:
                return None
            acc = pairs[key] = [0, 0.0, gbps]
        acc[0] += 1
        acc[1] += gbps
        if acc[2] != gbps:
            acc[2] = None
    devices = f.devices
    by_tier: dict[int, list[int]] = {}
    for i, tier in tiers.items():
        by_tier.setdefault(tier, []).append(i)

    # Where every pair between two tiers carries the same bundle (a Clos: p links per leaf-spine
    # pair), say it once under the title instead of on every edge.
    bundles: dict[tuple[int, int], set[str]] = {}
    pair_count: Counter[tuple[int, int]] = Counter()
    for (a, b), (count, total, rate) in pairs.items():
        tp = _tier_pair(tiers[a], tiers[b])
        bundles.setdefault(tp, set()).add(_bundle_text(count, total, rate) if count > 1 else "")
        pair_count[tp] += 1
    uniform = {tp for tp, texts in bundles.items() if len(texts) == 1}
    legend = []
    for lo, hi in sorted(uniform):
        text = next(iter(bundles[(lo, hi)]))
        if text:
            roles = f"{_roles(devices, by_tier, lo)}-{_roles(devices, by_tier, hi)}"
            legend.append(f"{roles}: {pair_count[(lo, hi)]} pairs, {text} each")

    lines = _header(name, "devices", "\n".join([title, *legend]))
    for tier in sorted(by_tier):
        ids = sorted(by_tier[tier], key=lambda i: devices[i].name)
        lines.append(f"  subgraph {quote(f'tier{tier}')} {{")
        lines.append("    rank=same;")
        for i in ids:
            d = devices[i]
            label = f"{d.name}\n{d.model}"
            lines.append(f"    {quote(d.name)} [label={quote(label)}, fillcolor={quote(_fill(tier))}];")
        lines.extend(_in_order([devices[i].name for i in ids]))
        lines.append("  }")
    edges = sorted((devices[a].name, devices[b].name, _tier_pair(tiers[a], tiers[b]), acc) for (a, b), acc in pairs.items())
    for an, bn, tp, (count, total, rate) in edges:
        attrs = [f"penwidth={_width(count)}"]
        if count > 1 and tp not in uniform:
            attrs.append(f"label={quote(_bundle_text(count, total, rate))}")
        attrs.append(f"tooltip={quote(f'{an} -- {bn}: {count} links, {gbps_text(total)}')}")
        lines.append(f"  {quote(an)} -- {quote(bn)} [{', '.join(attrs)}];")
    lines.append("}")
    return Diagram(name, "devices", len(tiers), len(edges), "\n".join(lines) + "\n")


def _in_order(names: list[str]) -> list[str]:
    """Invisible edges that keep a rank in name order (dot would otherwise shuffle it)."""
    if len(names) < 2:
        return []
    return ["    " + " -- ".join(quote(n) for n in names) + " [style=invis];"]


def _tier_pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)


def _roles(devices: list[Device], by_tier: dict[int, list[int]], tier: int) -> str:
    return "/".join(sorted({devices[i].role for i in by_tier.get(tier, [])}))


# A group node: (tier, role, model, blueprint group, part). The part is a structural
# coordinate of the device (its supernode, Dragonfly group, pod or SU) so that a domain of
# several supernodes or a Dragonfly+ of a few groups shows its structure; () when not split.
Part = tuple[str, int] | tuple[()]
GroupKey = tuple[int, str, str, str, Part]
PART_KEYS = ("supernode", "group", "pod", "su")  # first one a device has is its part
GROUP_SPLIT_MAX_NODES = 48  # split by part only while the drawing stays this small
GROUP_SPLIT_MAX_EDGES = 120


def _part(device: Device) -> Part:
    for key in PART_KEYS:
        value = device.coord(key)
        if isinstance(value, int):
            return (key, value)
    return ()


def _node_id(k: GroupKey) -> str:
    part = f":{k[4][0]}{k[4][1]}" if k[4] else ""
    return f"t{k[0]}:{k[1]}:{k[3]}:{k[2]}{part}"


def _merge_parts(sizes: Counter[GroupKey], edges: dict[tuple[GroupKey, GroupKey], list]) -> tuple[Counter, dict]:
    """The same counts with every part folded into its (tier, role, model, group)."""

    def whole(k: GroupKey) -> GroupKey:
        return (*k[:4], ())

    merged_sizes: Counter[GroupKey] = Counter()
    for k, n in sizes.items():
        merged_sizes[whole(k)] += n
    merged: dict[tuple[GroupKey, GroupKey], list] = {}
    for (ka, kb), (count, total, media) in edges.items():
        wa, wb = whole(ka), whole(kb)
        pair = (wa, wb) if wa <= wb else (wb, wa)
        acc = merged.setdefault(pair, [0, 0.0, Counter()])
        acc[0] += count
        acc[1] += total
        acc[2].update(media)
    return merged_sizes, merged


def _group_view(f: Fabric, name: str, links: FabricLinks, tiers: dict[int, int], title: str) -> Diagram:
    devices = f.devices
    key_of: dict[int, GroupKey] = {}
    for i in tiers:
        d = devices[i]
        key_of[i] = (tiers[i], d.role, d.model, d.group, _part(d) if d.group == name else ())
    sizes: Counter[GroupKey] = Counter(key_of.values())
    # Count in one Counter pass over the links, then fold the few distinct keys into edges.
    raw = links.count_by(key_of.__getitem__)
    edges: dict[tuple[GroupKey, GroupKey], list] = {}
    for (ka, kb, medium, gbps), count in sorted(raw.items()):
        pair = (ka, kb) if ka <= kb else (kb, ka)
        acc = edges.get(pair)
        if acc is None:
            acc = edges[pair] = [0, 0.0, Counter()]
        acc[0] += count
        acc[1] += count * gbps
        acc[2][medium or "(none)"] += count
    if len(sizes) > GROUP_SPLIT_MAX_NODES or len(edges) > GROUP_SPLIT_MAX_EDGES:
        sizes, edges = _merge_parts(sizes, edges)

    lines = _header(name, "groups", title)
    for tier in sorted({k[0] for k in sizes}):
        lines.append(f"  subgraph {quote(f'tier{tier}')} {{")
        lines.append("    rank=same;")
        for k in sorted(k for k in sizes if k[0] == tier):
            part = f" {k[4][0]} {k[4][1] + 1}" if k[4] else ""
            label = f"{k[1]} ({k[3]}{part})\n{sizes[k]:,} x {k[2]}"
            lines.append(f"    {quote(_node_id(k))} [label={quote(label)}, fillcolor={quote(_fill(tier))}, shape=box3d];")
        lines.append("  }")
    for (ka, kb), (count, total, media) in sorted(edges.items()):
        mix = ", ".join(f"{m} {n:,}" for m, n in sorted(media.items()))
        label = f"{count:,} links, {gbps_text(total)}\n{mix}"
        lines.append(f"  {quote(_node_id(ka))} -- {quote(_node_id(kb))} [label={quote(label)}, penwidth={_width(count)}];")
    lines.append("}")
    return Diagram(name, "groups", len(sizes), len(edges), "\n".join(lines) + "\n")


def diagram(f: Fabric, name: str, links: FabricLinks) -> Diagram:
    """The diagram of one fabric (its links given), at the level of detail its size allows."""
    tiers = local_tiers(f, name, links)
    kind = kind_of(f.facts.get(name)) or ""
    title = f"{name}{f' ({kind})' if kind else ''}: {len(tiers):,} devices, {len(links):,} links"
    if len(tiers) <= DETAIL_MAX_DEVICES:
        found = _device_view(f, name, links, tiers, title)
        if found is not None:
            return found
    return _group_view(f, name, links, tiers, title)


def diagrams(f: Fabric) -> list[Diagram]:
    by_fabric = links_by_fabric(f)
    return [diagram(f, name, by_fabric[name]) for name in sorted(by_fabric)]


def to_svg(dot_text: str, dot_program: str) -> bytes:
    """Lay out with Graphviz, in a child that dies with snc. Raises subprocess errors (the caller
    turns them into notices)."""
    return child_process.run([dot_program, "-Tsvg"], dot_text.encode(), DOT_TIMEOUT_S)


@RENDERERS.register("diagram")
def render_diagram(ctx: RenderContext) -> Artifacts:
    out: Artifacts = {}
    program = shutil.which("dot")
    if program is None:
        out["notice:diagram"] = b"diagram: Graphviz `dot` not found, wrote DOT files only (install graphviz for SVG)"
    for d in diagrams(ctx.fabric):
        out[f"diagrams/{d.fabric}.dot"] = d.dot.encode()
        if program is None:
            continue
        if d.edges > SVG_MAX_EDGES:
            out[f"notice:diagram:{d.fabric}"] = f"diagram: {d.fabric} has {d.edges} edges, SVG skipped (see the DOT)".encode()
            continue
        try:
            out[f"diagrams/{d.fabric}.svg"] = to_svg(d.dot, program)
        except (subprocess.SubprocessError, OSError) as exc:
            out[f"notice:diagram:{d.fabric}"] = f"diagram: dot failed on {d.fabric}, SVG skipped ({type(exc).__name__})".encode()
    return out
