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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from html import escape
from typing import TypeVar

import numpy as np

from ..fabric import Device, Fabric
from ..fabric.fabric_facts import kind_of
from ..fabric.views import FabricLinks, links_by_fabric, local_tiers
from ..util import child_process
from ..util.number_format import gbps_text
from . import dot_batch
from .base import COMPARING, RENDERERS, Artifacts, Derived, RenderContext, Stream

# Drawing limits (presentation choices, not hardware figures).
DETAIL_MAX_DEVICES = 64  # above this a per-device drawing is too wide to read: draw groups
DETAIL_MAX_EDGES = 600  # merged device pairs; also bounds `dot`'s layout time
SVG_MAX_EDGES = 1500  # never hand `dot` more than this (the group view is far below it)
DOT_TIMEOUT_S = 60
# Per-part drawings (a pod, SU, Dragonfly group or supernode each) beyond this many per fabric
# are not drawn: at 131k GPUs there are 228 SUs, each the same shape; the first ones show it.
PART_DIAGRAMS_MAX = 16

# Fill colours by fabric-local tier (0 endpoints, 1 leaf/access, 2 spine, 3 core, ...).
TIER_FILL = ["#e8f1fb", "#fdf0d5", "#e3f4e1", "#f6e1ee", "#ececec"]


def quote(text: str) -> str:
    """A DOT double-quoted string (backslash and quote escaped, newlines as DOT line breaks)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass(frozen=True)
class Diagram:
    fabric: str  # the file's stem: the fabric's name, with -devices or -<part> for the detail views
    mode: str  # groups (the overview) | devices | part
    nodes: int
    edges: int
    dot: str
    # A labelled edge between two nodes of one rank: Graphviz 2.43 frees that layout's ranks
    # twice when it lays out another graph after it (dot_batch), so it gets a `dot` of its own.
    flat_labels: bool = False


def _header(name: str, mode: str, title: str, node_font: int = 9, edge_font: int = 8, title_font: int = 14) -> list[str]:
    return [
        f"graph {quote(name)} {{",
        f"  // supernodeiac diagram of fabric {name} ({mode} view)",
        f"  graph [label={quote(title)}, labelloc=t, fontname=Helvetica, fontsize={title_font}, rankdir=BT, "
        "nodesep=0.25, ranksep=1.6, splines=true, outputorder=edgesfirst];",
        f'  node [fontname=Helvetica, fontsize={node_font}, shape=box, style="rounded,filled", color="#555555"];',
        f'  edge [fontname=Helvetica, fontsize={edge_font}, color="#7a8aa0"];',
    ]


def _fill(tier: int) -> str:
    return TIER_FILL[min(tier, len(TIER_FILL) - 1)]


def _width(count: int) -> str:
    """Line width grows with the links an edge stands for, slowly, and stops at 5."""
    return f"{min(5.0, 1 + math.log2(count) / 2):.2f}" if count > 1 else "1"


def _bundle_text(count: int, total: float, rate: float | None) -> str:
    """'8 links x 400G' for a bundle of one rate, '3 links, 1.2T' for a mixed one."""
    links = "1 link" if count == 1 else f"{count:,} links"
    return f"{links} x {gbps_text(rate)}" if rate is not None else f"{links}, {gbps_text(total)}"


def _media_text(media: Counter[str]) -> str:
    """The bundle's medium ('over sr4-400g'), or how its links split, a line per medium ('192 over
    sr4-400g' / '64 over dac': one line of all of them made the 131k overviews too wide to read)."""
    if len(media) == 1:
        return f"over {next(iter(media))}"
    return "\n".join(f"{n:,} over {m}" for m, n in sorted(media.items()))


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
    flat_labels = False
    for an, bn, tp, (count, total, rate) in edges:
        attrs = [f"penwidth={_width(count)}"]
        if count > 1 and tp not in uniform:
            attrs.append(f"label={quote(_bundle_text(count, total, rate))}")
            flat_labels |= tp[0] == tp[1]
        attrs.append(f"tooltip={quote(f'{an} -- {bn}: {count} links, {gbps_text(total)}')}")
        lines.append(f"  {quote(an)} -- {quote(bn)} [{', '.join(attrs)}];")
    lines += _legend(
        {t: _roles(devices, by_tier, t) for t in by_tier},
        ["box: a device (name, model)", "line: the links between two devices, merged; label: links x rate"],
        9,
    )
    lines.append("}")
    return Diagram(f"{name}-devices", "devices", len(tiers), len(edges), "\n".join(lines) + "\n", flat_labels)


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

# The overview's shape: at most RANK_MAX nodes side by side, so that at OVERVIEW_FONT points the
# drawing stays under about 1,600 pt wide and its smallest text (EDGE_FONT) is >= 9 px when the
# SVG is fitted to a 1,600 px screen. Parts beyond that are drawn as ranges ("su 1-29").
RANK_MAX = 6
OVERVIEW_FONT = 14
EDGE_FONT = 12
TITLE_FONT = 18
EDGE_LABELS_MAX = 6  # bundles between two tiers labelled on the line; beyond, once in the legend


def _part(device: Device) -> Part:
    for key in PART_KEYS:
        value = device.coord(key)
        if isinstance(value, int):
            return (key, value)
    return ()


def _node_id(k: GroupKey) -> str:
    part = f":{k[4][0]}{k[4][1]}" if k[4] else ""
    return f"t{k[0]}:{k[1]}:{k[3]}:{k[2]}{part}"


# An overview node: (tier, role, model, group label, part key, first part, last part).
OverKey = tuple[int, str, str, str, str, int, int]


def _buckets(values: list[int], count: int) -> dict[int, tuple[int, int]]:
    """Sorted part numbers -> the (first, last) of the contiguous range of near-equal size each
    falls in, ``count`` ranges at most."""
    n = len(values)
    count = max(1, min(count, n))
    out: dict[int, tuple[int, int]] = {}
    for i in range(count):
        chunk = values[i * n // count : (i + 1) * n // count]
        for v in chunk:
            out[v] = (chunk[0], chunk[-1])
    return out


def _overview_keys(keys: Counter[GroupKey]) -> dict[GroupKey, OverKey]:
    """Fold the fine keys into at most RANK_MAX nodes per tier: blueprint groups merged when a
    tier has more kinds than fit, then each kind's parts drawn as ranges within its share."""
    out: dict[GroupKey, OverKey] = {}
    for tier in sorted({k[0] for k in keys}):
        fine = sorted(k for k in keys if k[0] == tier)
        kinds = sorted({k[1:4] for k in fine})
        merge_groups = len(kinds) > RANK_MAX
        if merge_groups:
            groups: dict[tuple[str, str], set[str]] = {}
            for role, model, group in kinds:
                groups.setdefault((role, model), set()).add(group)
            label = {rm: (next(iter(g)) if len(g) == 1 else f"{len(g)} groups") for rm, g in groups.items()}
            kind_of = {k: (k[1], k[2], label[(k[1], k[2])]) for k in fine}
        else:
            kind_of = {k: k[1:4] for k in fine}
        distinct = sorted(set(kind_of.values()))
        share = max(1, RANK_MAX // max(1, len(distinct)))
        for kind in distinct:
            members = [k for k in fine if kind_of[k] == kind]
            by_key: dict[str, list[int]] = {}
            for k in members:
                if k[4]:
                    by_key.setdefault(k[4][0], []).append(k[4][1])
            ranges = {pk: _buckets(sorted(set(vs)), share // max(1, len(by_key)) or 1) for pk, vs in by_key.items()}
            for k in members:
                if k[4]:
                    first, last = ranges[k[4][0]][k[4][1]]
                    out[k] = (tier, kind[0], kind[1], kind[2], k[4][0], first, last)
                else:
                    out[k] = (tier, kind[0], kind[1], kind[2], "", -1, -1)
    return out


def _over_id(k: OverKey) -> str:
    part = f":{k[4]}{k[5]}-{k[6]}" if k[4] else ""
    return f"t{k[0]}:{k[1]}:{k[3]}:{k[2]}{part}"


def _over_where(k: OverKey) -> str:
    if not k[4]:
        return k[3]
    span = f"{k[5] + 1}" if k[5] == k[6] else f"{k[5] + 1}-{k[6] + 1}"
    return f"{k[3]} {k[4]} {span}"


def _legend(tiers: dict[int, str], notes: list[str], font: int) -> list[str]:
    """A legend node (an HTML-like table): the fill of each tier, then what the lines and labels mean."""
    rows = ['<TR><TD COLSPAN="2"><B>Legend</B></TD></TR>']
    for tier, roles in sorted(tiers.items()):
        rows.append(f'<TR><TD BGCOLOR="{_fill(tier)}" WIDTH="28"> </TD><TD ALIGN="LEFT">tier {tier}: {escape(roles)}</TD></TR>')
    for note in notes:
        rows.append(f'<TR><TD COLSPAN="2" ALIGN="LEFT">{escape(note)}</TD></TR>')
    table = f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">{"".join(rows)}</TABLE>'
    return [f'  "legend" [shape=plaintext, style="", fontsize={font}, label=<{table}>];']


def _group_view(f: Fabric, name: str, links: FabricLinks, tiers: dict[int, int], title: str) -> Diagram:
    """The overview: groups of devices (by tier, role, model, blueprint group and part ranges) as
    nodes, every bundle between two groups drawn once with its link count, rate and media."""
    devices = f.devices
    key_of: dict[int, GroupKey] = {}
    for i in tiers:
        d = devices[i]
        key_of[i] = (tiers[i], d.role, d.model, d.group, _part(d) if d.group == name else ())
    fine: Counter[GroupKey] = Counter(key_of.values())
    over = _overview_keys(fine)
    sizes: Counter[OverKey] = Counter()
    for k, n in fine.items():
        sizes[over[k]] += n
    # Count in one Counter pass over the links, then fold the few distinct keys into edges.
    raw = links.count_by(key_of.__getitem__)
    edges: dict[tuple[OverKey, OverKey], list] = {}
    for (fa, fb, medium, gbps), count in sorted(raw.items()):
        ka, kb = over[fa], over[fb]
        pair = (ka, kb) if ka <= kb else (kb, ka)
        acc = edges.get(pair)
        if acc is None:
            acc = edges[pair] = [0, 0.0, Counter(), gbps]
        acc[0] += count
        acc[1] += count * gbps
        acc[2][medium or "(none)"] += count
        if acc[3] != gbps:
            acc[3] = None
    per_tier_pair: Counter[tuple[int, int]] = Counter(_tier_pair(a[0], b[0]) for a, b in edges)
    roles_of: dict[int, set[str]] = {}
    for ok in sizes:
        roles_of.setdefault(ok[0], set()).add(ok[1])
    notes = [
        "box: a group of devices: role, (blueprint group, parts), count x model",
        "line: a bundle of links; width grows with the count",
    ]
    for tp in sorted(per_tier_pair):
        if per_tier_pair[tp] > EDGE_LABELS_MAX:
            bundles = [acc for (a, b), acc in edges.items() if _tier_pair(a[0], b[0]) == tp]
            counts = sorted({acc[0] for acc in bundles})
            total = sum(acc[0] for acc in bundles)
            each = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
            notes.append(f"tier {tp[0]}-{tp[1]}: {per_tier_pair[tp]} bundles of {each} links, {total:,} in all")

    lines = _header(name, "groups", title, OVERVIEW_FONT, EDGE_FONT, TITLE_FONT)
    for tier in sorted({k[0] for k in sizes}):
        lines.append(f"  subgraph {quote(f'tier{tier}')} {{")
        lines.append("    rank=same;")
        for ok in sorted(k for k in sizes if k[0] == tier):
            label = f"{ok[1]}\n({_over_where(ok)})\n{sizes[ok]:,} x {ok[2]}"
            lines.append(f"    {quote(_over_id(ok))} [label={quote(label)}, fillcolor={quote(_fill(tier))}, shape=box3d];")
        lines.append("  }")
    lines.extend(_legend({t: "/".join(sorted(r)) for t, r in roles_of.items()}, notes, EDGE_FONT))
    flat_labels = False
    for (ka, kb), (count, total, media, rate) in sorted(edges.items()):
        text = f"{_bundle_text(count, total, rate)}\n{_media_text(media)}"
        tip = quote(f"{_over_id(ka)} -- {_over_id(kb)}: {count:,} links, {gbps_text(total)}")
        attrs = f"penwidth={_width(count)}, tooltip={tip}"
        if per_tier_pair[_tier_pair(ka[0], kb[0])] <= EDGE_LABELS_MAX:
            attrs = f"label={quote(text)}, " + attrs
            flat_labels |= ka[0] == kb[0]
        lines.append(f"  {quote(_over_id(ka))} -- {quote(_over_id(kb))} [{attrs}];")
    lines.append("}")
    return Diagram(name, "groups", len(sizes), len(edges), "\n".join(lines) + "\n", flat_labels)


def diagram(f: Fabric, name: str, links: FabricLinks) -> Diagram:
    """The overview of one fabric (its links given): groups, never one node per device."""
    tiers = local_tiers(f, name, links)
    return _group_view(f, name, links, tiers, _title(f, name, tiers, links))


def _title(f: Fabric, name: str, tiers: dict[int, int], links: FabricLinks, what: str = "") -> str:
    return _title_of(f, name, len(tiers), len(links), what)


def _title_of(f: Fabric, name: str, devices: int, links: int, what: str = "") -> str:
    kind = kind_of(f.facts.get(name)) or ""
    return f"{name}{f' ({kind})' if kind else ''}{what}: {devices:,} devices, {links:,} links"


def _merged_pairs(
    names: list[str], node_of: dict[int, str], number: np.ndarray, a: np.ndarray, b: np.ndarray, gbps: np.ndarray
) -> dict[tuple[str, str], tuple[int, float, float | None]]:
    """The links between two nodes (``node_of`` each end device's, ``names`` all of them sorted),
    merged per pair of names (the lesser first): (links, their Gb/s added in link order, the Gb/s
    of each or None where they differ). In numpy: a part's 10^4 links, 16 parts per fabric."""
    numbered = {n: k for k, n in enumerate(names)}
    ends = list(node_of)
    number[ends] = [numbered[node_of[i]] for i in ends]  # numbered in name order: min/max is by name
    na, nb = number[a], number[b]
    pair, at = np.unique(np.minimum(na, nb) * len(names) + np.maximum(na, nb), return_inverse=True)
    counts = np.bincount(at, minlength=len(pair))
    totals = np.bincount(at, weights=gbps, minlength=len(pair))  # one addition per link, in order
    low, high = np.full(len(pair), np.inf), np.full(len(pair), -np.inf)
    np.minimum.at(low, at, gbps)
    np.maximum.at(high, at, gbps)
    out: dict[tuple[str, str], tuple[int, float, float | None]] = {}
    for p, n, total, lo, hi in zip(pair.tolist(), counts.tolist(), totals.tolist(), low.tolist(), high.tolist(), strict=True):
        x, y = divmod(p, len(names))
        out[(names[x], names[y])] = (n, total, lo if lo == hi else None)
    return out


def _part_views(f: Fabric, name: str, links: FabricLinks, tiers: dict[int, int]) -> list[Diagram]:
    """One drawing per part (pod, SU, Dragonfly group, supernode) of a fabric that has several,
    the first PART_DIAGRAMS_MAX of them: the part's own devices one by one, every device
    outside it that they are cabled to folded into a group (tier, role, model, its part)."""
    devices = f.devices
    part_of: dict[int, Part] = {i: _part(devices[i]) for i in tiers if devices[i].group == name}
    parts = sorted({p for p in part_of.values() if p})
    if len(parts) < 2:
        return []
    part_id = {p: n for n, p in enumerate(parts)}
    column = np.full(len(devices), -1, dtype=np.int64)
    for i, p in part_of.items():
        if p:
            column[i] = part_id[p]
    a, b, spec = links.arrays()
    pa, pb = column[a], column[b]
    gbps_of = np.array([s.gbps for s in links.specs], dtype=np.float64)
    node_number = np.zeros(len(devices), dtype=np.int64)  # per part: each end device's node, numbered
    # A device outside a part is drawn as its group whatever the part: named once per device.
    outside: dict[int, str] = {}

    def folded(i: int) -> str:
        d = devices[i]
        where = (part_of[i] if i in part_of else _part(d)) if d.group == name else ()
        text = outside[i] = f"{d.role} ({d.group}{f' {where[0]} {where[1] + 1}' if where else ''})"
        return text

    out: list[Diagram] = []
    for part in parts[:PART_DIAGRAMS_MAX]:
        pid = part_id[part]
        mine = np.flatnonzero((pa == pid) | (pb == pid))
        sa, sb = a[mine], b[mine]
        ends = np.unique(np.concatenate([sa, sb]))
        sub_tiers = {i: tiers[i] for i in ends.tolist()}
        inside = set(ends[column[ends] == pid].tolist())

        def node(i: int, inside: set[int] = inside) -> str:
            if i in inside:
                return devices[i].name
            return outside.get(i) or folded(i)

        members: dict[str, tuple[int, str, int]] = {}  # node -> (tier, model, devices)
        node_of = {i: node(i) for i in sub_tiers}
        for i in sub_tiers:  # in index order
            name_i = node_of[i]
            tier, _, count = members.get(name_i, (sub_tiers[i], devices[i].model, 0))
            members[name_i] = (tier, devices[i].model, count + 1)
        pairs = _merged_pairs(sorted(members), node_of, node_number, sa, sb, gbps_of[spec[mine]])
        if len(pairs) > DETAIL_MAX_EDGES:
            continue
        label = f"{part[0]} {part[1] + 1}"
        stem = f"{name}-{part[0]}{part[1] + 1:02d}"
        title = _title_of(f, name, len(sub_tiers), len(mine), f" {label}")
        lines = _header(stem, f"{label} devices", title)
        by_tier: dict[int, list[str]] = {}
        for member, (tier, _model, _n) in members.items():
            by_tier.setdefault(tier, []).append(member)
        roles = {t: "/".join(sorted({devices[i].role for i in sub_tiers if sub_tiers[i] == t})) for t in by_tier}
        for tier in sorted(by_tier):
            lines.append(f"  subgraph {quote(f'tier{tier}')} {{")
            lines.append("    rank=same;")
            names = sorted(by_tier[tier])
            own = {devices[i].name for i in inside}
            for member in names:
                _t, model, count = members[member]
                text = f"{member}\n{model}" if member in own else f"{member}\n{count:,} x {model}"
                shape = "" if member in own else ", shape=box3d"
                lines.append(f"    {quote(member)} [label={quote(text)}, fillcolor={quote(_fill(tier))}{shape}];")
            lines.extend(_in_order(names))
            lines.append("  }")
        notes = [
            f"box: a device of {label}; 3-D box: the devices outside it, by group",
            "line: its links, merged per pair; label: links x rate",
        ]
        lines.extend(_legend(roles, notes, 9))
        flat_labels = False
        for (x, y), (count, total, rate) in sorted(pairs.items()):
            attrs = [f"penwidth={_width(count)}"]
            if count > 1:
                attrs.append(f"label={quote(_bundle_text(count, total, rate))}")
                flat_labels |= members[x][0] == members[y][0]
            attrs.append(f"tooltip={quote(f'{x} -- {y}: {count} links, {gbps_text(total)}')}")
            lines.append(f"  {quote(x)} -- {quote(y)} [{', '.join(attrs)}];")
        lines.append("}")
        out.append(Diagram(stem, "part", len(members), len(pairs), "\n".join(lines) + "\n", flat_labels))
    return out


# Scale-up domain grids: compute boards (rows) x switch boards (columns), one table per
# supernode (an OEX chassis, an NVL72 rack), the first PART_DIAGRAMS_MAX of a domain.
SCALE_UP_KINDS = ("orthogonal", "switched")
GRID_MAX_CELLS = 4096
GRID_FILL = "#fdf0d5"


def _place(d: Device) -> str:
    return d.slot or (f"U{d.u}" if d.u else "")


def _domain_grids(f: Fabric, name: str, links: FabricLinks) -> list[Diagram]:
    """Per supernode of a scale-up domain: a table whose rows are its compute boards or trays,
    columns its switch boards or trays, each cell the links between the two (an orthogonal
    connector's, a cartridge's), and a last column with each board's links to other fabrics."""
    facts = f.facts.get(name)
    kind = kind_of(facts) or ""
    if kind not in SCALE_UP_KINDS:
        return []
    devices = f.devices
    members: dict[int, tuple[list[Device], list[Device]]] = {}
    for d in devices:
        sn = d.coord("supernode")
        if d.group != name or not isinstance(sn, int):
            continue
        m = f.models[d.model]
        if m.kind in ("switch-board", "switch"):
            members.setdefault(sn, ([], []))[1].append(d)
        elif m.accelerators is not None or m.kind in ("compute-board", "node"):
            members.setdefault(sn, ([], []))[0].append(d)
    if not members:
        return []
    pair: Counter[tuple[int, int]] = Counter(zip(links.a, links.b, strict=True))
    link_kinds = sorted({links.specs[s].kind for s in set(links.spec)})
    # Each board's links in every other fabric (its scale-out NICs, its management port).
    t = f.links
    arr = t.arrays()
    other = np.array([spec.fabric != name for spec in t.specs], dtype=bool)[arr.spec]
    outside = (np.bincount(arr.a[other], minlength=len(devices)) + np.bincount(arr.b[other], minlength=len(devices))).tolist()
    out: list[Diagram] = []
    for sn in sorted(members)[:PART_DIAGRAMS_MAX]:
        rows = sorted(members[sn][0], key=lambda d: (d.slot, d.u, d.name))
        cols = sorted(members[sn][1], key=lambda d: (d.slot, d.u, d.name))
        if not rows or not cols or len(rows) * len(cols) > GRID_MAX_CELLS:
            continue
        stem = f"{name}-sn{sn + 1:02d}-grid"
        total = 0
        head = ["<TD><B>compute \\ switch</B></TD>"]
        for c in cols:
            head.append(f"<TD>{escape(_place(c))}<BR/>{escape(c.name)}<BR/>{escape(c.model)}</TD>")
        head.append("<TD><B>other fabrics</B></TD>")
        table = [f"<TR>{''.join(head)}</TR>"]
        for r in rows:
            cells = [f'<TD ALIGN="LEFT">{escape(_place(r))} {escape(r.name)}<BR/>{escape(r.model)}</TD>']
            for c in cols:
                n = pair[(r.index, c.index)] + pair[(c.index, r.index)]
                total += n
                fill = f' BGCOLOR="{GRID_FILL}"' if n else ""
                cells.append(f"<TD{fill}>{n if n else ''}</TD>")
            cells.append(f"<TD>{outside[r.index]}</TD>")
            table.append(f"<TR>{''.join(cells)}</TR>")
        grid = f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">{"".join(table)}</TABLE>'
        via = "/".join(link_kinds)
        title = f"{name} ({kind}) supernode {sn + 1}: {len(rows)} compute x {len(cols)} switch boards, {total:,} {via} links"
        lines = _header(stem, "domain grid", title, 9, 8)
        lines.append(f'  "grid" [shape=plaintext, style="", label=<{grid}>];')
        notes = [
            "row: a compute board or tray (slot or lowest unit, name, model); column: a switch board or tray",
            f"cell: the {via} links between the two (shaded), blank where none",
            "other fabrics: the row's links to the scale-out and management networks",
        ]
        lines.extend(_legend({}, notes, 9))
        lines.append('  "legend" -- "grid" [style=invis];')
        lines.append("}")
        out.append(Diagram(stem, "domain", 2, 0, "\n".join(lines) + "\n"))
    return out


# Rail views: one drawing per rail of a rail-aligned fabric: each SU's endpoints (by node group
# and model) on that rail to the SU's leaves of that rail, the first RAIL_SUS_MAX SUs.
RAIL_SUS_MAX = 16


def _rail_views(f: Fabric, name: str, links: FabricLinks, tiers: dict[int, int]) -> list[Diagram]:
    from ..fabric.views import rail_alignment

    devices = f.devices
    leaf_at: dict[int, tuple[int, int]] = {}  # leaf -> (rail, su)
    for i, tier in tiers.items():
        d = devices[i]
        rail, su = d.coord("rail"), d.coord("su")
        if tier == 1 and d.group == name and isinstance(rail, int) and isinstance(su, int):
            leaf_at[i] = (rail, su)
    if not leaf_at:
        return []
    found = rail_alignment(f, name)
    if found is None or not found.aligned or found.rails < 2:
        return []
    sus_all = sorted({su for _, su in leaf_at.values()})
    drawn = set(sus_all[:RAIL_SUS_MAX])
    # (rail, su, leaf, endpoint group, model) -> [links, Gb/s of one link or None, endpoints]
    bundles: dict[tuple[int, int, int, str, str], list] = {}
    ends: dict[tuple[int, int, str, str], set[int]] = {}
    gbps_of = [s.gbps for s in links.specs]
    # The links from a drawn SU's leaf to an endpoint, picked in numpy (a 131k fabric has 4 x 10^5
    # links, its first SUs' rails 8,192), then read in their order as one loop over all did.
    la, lb, ls = links.arrays()
    leaf_drawn = np.zeros(len(devices), dtype=bool)
    leaf_drawn[[i for i, (_, su) in leaf_at.items() if su in drawn]] = True
    endpoint = np.zeros(len(devices), dtype=bool)
    endpoint[[i for i, tier in tiers.items() if tier == 0]] = True
    a_leaf = leaf_drawn[la] & endpoint[lb]
    b_leaf = ~a_leaf & leaf_drawn[lb] & endpoint[la]
    picked = np.flatnonzero(a_leaf | b_leaf)
    leaf_end, ep_end = np.where(a_leaf[picked], la[picked], lb[picked]), np.where(a_leaf[picked], lb[picked], la[picked])
    for leaf, ep, s in zip(leaf_end.tolist(), ep_end.tolist(), ls[picked].tolist(), strict=True):
        rail, su = leaf_at[leaf]
        d = devices[ep]
        key = (rail, su, leaf, d.group, d.model)
        acc = bundles.get(key)
        if acc is None:
            acc = bundles[key] = [0, gbps_of[s]]
        acc[0] += 1
        if acc[1] != gbps_of[s]:
            acc[1] = None
        ends.setdefault((rail, su, d.group, d.model), set()).add(ep)
    out: list[Diagram] = []
    for rail in sorted({k[0] for k in bundles}):
        stem = f"{name}-rail{rail + 1}"
        mine = {k: v for k, v in bundles.items() if k[0] == rail}
        sus = sorted({k[1] for k in mine})
        shown = f"SUs {sus[0] + 1}-{sus[-1] + 1} of {len(sus_all)}" if len(sus) > 1 else f"SU {sus[0] + 1}"
        n_links = sum(v[0] for v in mine.values())
        title = f"{name} rail {rail + 1}: NIC {rail + 1} of every node to its rail leaves ({shown}), {n_links:,} links"
        lines = _header(stem, f"rail {rail + 1}", title)
        groups = sorted({(k[1], k[3], k[4]) for k in mine})
        leaves = sorted({(k[1], k[2]) for k in mine})
        lines.append('  subgraph "tier0" {')
        lines.append("    rank=same;")
        ids = []
        for su, group, model in groups:
            node = f"su{su + 1}:{group}:{model}"
            ids.append(node)
            count = len(ends[(rail, su, group, model)])
            label = f"{group} (su {su + 1})\n{count:,} x {model}, NIC {rail + 1}"
            lines.append(f"    {quote(node)} [label={quote(label)}, fillcolor={quote(_fill(0))}, shape=box3d];")
        lines.extend(_in_order(ids))
        lines.append("  }")
        lines.append('  subgraph "tier1" {')
        lines.append("    rank=same;")
        for _su, leaf in leaves:
            d = devices[leaf]
            label = f"{d.name}\n{d.model}, rail {rail + 1}"
            lines.append(f"    {quote(d.name)} [label={quote(label)}, fillcolor={quote(_fill(1))}];")
        lines.extend(_in_order([devices[leaf].name for _, leaf in leaves]))
        lines.append("  }")
        for (_, su, leaf, group, model), (count, rate) in sorted(mine.items()):
            node = f"su{su + 1}:{group}:{model}"
            text = _bundle_text(count, count * (rate or 0.0), rate)
            tip = quote(f"{node} -- {devices[leaf].name}: {count} links")
            attrs = f"label={quote(text)}, penwidth={_width(count)}, tooltip={tip}"
            lines.append(f"  {quote(node)} -- {quote(devices[leaf].name)} [{attrs}];")
        notes = [
            f"3-D box: the nodes of one SU and group, NIC {rail + 1} of each (rail {rail + 1})",
            f"box: a leaf of rail {rail + 1}; line: the links, labelled links x rate",
        ]
        lines.extend(_legend({0: "node", 1: "leaf"}, notes, 9))
        lines.append("}")
        out.append(Diagram(stem, "rail", len(groups) + len(leaves), len(mine), "\n".join(lines) + "\n"))
    return out


def diagrams(f: Fabric) -> list[Diagram]:
    """Per fabric: the overview (``<fabric>``), the device view where the fabric is small
    (``<fabric>-devices``), one view per part (``<fabric>-su01``...), a board grid per
    supernode of a scale-up domain (``<domain>-sn01-grid``) and a view per rail of a
    rail-aligned fabric (``<fabric>-rail1``...)."""
    by_fabric = links_by_fabric(f)
    out: list[Diagram] = []
    for name in sorted(by_fabric):
        links = by_fabric[name]
        tiers = local_tiers(f, name, links)
        title = _title(f, name, tiers, links)
        out.append(_group_view(f, name, links, tiers, title))
        if len(tiers) <= DETAIL_MAX_DEVICES:
            found = _device_view(f, name, links, tiers, title)
            if found is not None:
                out.append(found)
        out.extend(_part_views(f, name, links, tiers))
        out.extend(_domain_grids(f, name, links))
        out.extend(_rail_views(f, name, links, tiers))
    return out


def to_svg(dot_text: str, dot_program: str) -> bytes:
    """Lay out with Graphviz, in a child that dies with snc. Raises subprocess errors (the caller
    turns them into notices)."""
    return child_process.run([dot_program, "-Tsvg"], dot_text.encode(), DOT_TIMEOUT_S)


V = TypeVar("V", bytes, Stream)  # a file's value: bytes, or (the subset form's SVGs) a Stream


@RENDERERS.register("diagram")
def render_diagram(ctx: RenderContext) -> Artifacts:
    program = shutil.which("dot")
    found = diagrams(ctx.fabric)
    made = _svgs([d for d in found if d.edges <= SVG_MAX_EDGES], program) if program is not None else {}
    return dict(_files(found, program, lambda d: {k: made[k] for k in (_svg_path(d), _failed_key(d)) if k in made}))


@COMPARING.register("diagram")
def render_diagram_compared(ctx: RenderContext) -> dict[str, bytes | Stream]:
    """For ``snc diff``: every DOT file, and each SVG deferred (:class:`outputs.base.Derived`: a
    function of its DOT text and of `dot`), so that a diagram whose DOT is the same bytes on both
    sides is never laid out."""
    program = shutil.which("dot")
    found = diagrams(ctx.fabric)
    by_path = {_svg_path(d): d for d in found}

    def make(paths: list[str]) -> Artifacts:
        assert program is not None
        return _svgs([by_path[p] for p in paths], program)

    return dict(_files(found, program, lambda d: {_svg_path(d): Derived(_svg_path(d), _dot_path(d), make)}))


def _dot_path(d: Diagram) -> str:
    return f"diagrams/{d.fabric}.dot"  # d.fabric is the file's stem


def _svg_path(d: Diagram) -> str:
    return f"diagrams/{d.fabric}.svg"


def _failed_key(d: Diagram) -> str:
    return f"notice:transient:diagram:{d.fabric}"  # a timeout may not recur


def _files(
    found: list[Diagram], program: str | None, svg: Callable[[Diagram], Mapping[str, V]]
) -> Iterator[tuple[str, bytes | V]]:
    """The renderer's files and notices in their order: per diagram its DOT, then its SVG (or
    why there is none)."""
    if program is None:
        yield "notice:diagram", b"diagram: Graphviz `dot` not found, wrote DOT files only (install graphviz for SVG)"
    for d in found:
        yield _dot_path(d), d.dot.encode()
        if program is None:
            continue
        if d.edges > SVG_MAX_EDGES:
            yield f"notice:diagram:{d.fabric}", f"diagram: {d.fabric} has {d.edges} edges, SVG skipped (see the DOT)".encode()
            continue
        yield from svg(d).items()


def _svgs(drawn: list[Diagram], program: str) -> Artifacts:
    """Each diagram's SVG, or a transient notice where `dot` failed on it: those without a flat
    label from one `dot` (dot_batch) where that gives the bytes of one process each, the others
    (and all of them, where it does not) from a `dot` of their own."""
    batched = [d for d in drawn if not d.flat_labels]
    # Each diagram's time, as one `dot` each had: a loaded machine never cuts short a batch of fine ones.
    batch = dot_batch.svgs([d.dot for d in batched], program, DOT_TIMEOUT_S * len(batched))
    svg_of = dict(zip((d.fabric for d in batched), batch, strict=True)) if batch is not None else {}
    out: Artifacts = {}
    for d in drawn:
        if d.fabric in svg_of:
            out[_svg_path(d)] = svg_of[d.fabric]
            continue
        try:
            out[_svg_path(d)] = to_svg(d.dot, program)
        except (subprocess.SubprocessError, OSError) as exc:
            out[_failed_key(d)] = f"diagram: dot failed on {d.fabric}, SVG skipped ({type(exc).__name__})".encode()
    return out
