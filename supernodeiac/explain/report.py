"""The sizing report behind ``snc explain``: what a design is, per fabric, in a planner's numbers.

Pure: (blueprint, catalogue, Fabric) -> plain data (the JSON form), and that data -> text
(through ``templates/explain.txt.j2``). It reads the Fabric and the builders' ``Fabric.facts``;
the blueprint only for declared intent (a declared oversubscription).

Every fabric (a scale-out fabric, a scale-up domain, the management network: every distinct
``Link.fabric``) gets the generic part, measured on its links:

* endpoints, switches per tier, cables per tier pair and medium, power and relative cost of its
  switches and media (the endpoints' own figures go into the deployment totals);
* oversubscription per tier: ``checks.oversubscription.measure`` where the fabric built all of
  its switches (its tiers then mean what they say);
* bisection bandwidth (per direction), by the first method that applies, named in the output:
  ``builder`` (a ``bisection_gbps`` fact), a section of the fabric's kind (``clos-formula``),
  ``min-cut`` (networkx, small fabrics only), else ``not-computed``;
* growth limits: every ``max_*`` fact, as the builder states it.

A fabric kind adds what only it knows through *sections* registered as ``kind`` or
``kind/topic`` (``SECTIONS``; ``*/topic`` runs for every fabric); a kind without one still gets
the generic part and its facts, so a new builder shows up in the report before anyone writes its
section. Builders that can state their bisection or growth limits in facts (``bisection_gbps``,
``bisection_method``, ``max_*``, ``growth_note``) need no section at all. The sections of
``explain/`` (``clos``, ``dragonfly``, ``ports``, ``rails``, ``racks``) add sizing against intent,
growth reservation and the cheapest design (fat trees), group-to-group ratios (Dragonfly), port
use per switch role and rail alignment.

The deployment as a whole gets *deployment sections* (``DEPLOYMENT``: name -> function of the
inputs), each a top-level key of the report and a template ``templates/explain/<name>.txt.j2``:
the racks (power, units, weight against the budgets) are one; a new section is one module that
registers itself (``explain/base.py`` holds the registries) and one import line in
``explain/__init__.py``.

Tiers are fabric-local: a device is a switch of the fabric that built it (``Device.group`` is
the fabric's name) and an endpoint of every other fabric it is cabled to (a leaf's management
port makes it an endpoint of the management network).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..fabric.views import links_by_fabric, local_tiers
from ..facts.bom import bill_of_materials, cost_unit, totals, unit_cost, unpriced
from ..facts.oversubscription import measure, ratio_text
from ..facts.placement import placement_report, placement_text
from ..facts.racks import power_totals
from ..model.blueprint import Blueprint, built_fabrics
from ..util.number_format import gbps_text, plural, rounded
from .base import DEPLOYMENT, SECTIONS, FabricStats, Inputs, sections_for

# networkx max-flow is exact but dear: above this many merged device pairs in a connected part
# (or ten times as many links in the fabric) a fabric without a formula or a builder figure
# reports its bisection as not computed rather than stall the command.
MINCUT_MAX_LINKS = 20_000


def fabric_stats(f: Fabric) -> dict[str, FabricStats]:
    out: dict[str, FabricStats] = {}
    for name, links in sorted(links_by_fabric(f).items()):
        tiers = local_tiers(f, name, links)
        # One Counter pass over the links; the few distinct keys fold into tier-pair bundles.
        raw = links.count_by(tiers.__getitem__)
        bundles: dict[tuple[int, int, str], list] = {}
        for (ta, tb, medium, gbps), count in sorted(raw.items()):
            acc = bundles.setdefault((min(ta, tb), max(ta, tb), medium or "(none)"), [0, 0.0])
            acc[0] += count
            acc[1] += count * gbps
        facts: Mapping[str, Any] = f.facts.get(name) or {}
        out[name] = FabricStats(name, str(facts.get("kind", "")), facts, tiers, len(links), bundles)
    return out


def _role_label(f: Fabric, s: FabricStats, tier: int) -> str:
    roles = sorted({f.devices[i].role for i in s.members_at(tier)})
    if tier == 0 and len(roles) != 1:
        return "endpoint"
    return "/".join(roles) or f"tier{tier}"


def _pair_label(f: Fabric, s: FabricStats, lo: int, hi: int) -> str:
    return f"{_role_label(f, s, lo)} - {_role_label(f, s, hi)}"


def _endpoints(f: Fabric, s: FabricStats) -> dict[str, Any]:
    groups: Counter[tuple[str, str]] = Counter()
    accelerators = 0
    for i in s.members_at(0):
        d = f.devices[i]
        groups[(d.group, d.model)] += 1
        acc = f.models[d.model].accelerators
        accelerators += acc.count if acc is not None else 0
    ports = sum(v[0] for (lo, _hi, _m), v in s.bundles.items() if lo == 0)
    by_model: dict[str, dict[str, Any]] = {}
    for (g, m), n in sorted(groups.items()):
        entry = by_model.setdefault(m, {"model": m, "count": 0, "groups": []})
        entry["count"] += n
        entry["groups"].append(g)
    return {
        "devices": sum(groups.values()),
        "ports": ports,
        "accelerators": accelerators,
        "groups": [{"group": g, "model": m, "count": n} for (g, m), n in sorted(groups.items())],
        "models": [by_model[m] for m in sorted(by_model)],
    }


def _switches(f: Fabric, s: FabricStats) -> dict[str, Any]:
    tiers = []
    for tier in sorted({t for t in s.tiers.values() if t > 0}):
        models = Counter(f.devices[i].model for i in s.members_at(tier))
        tiers.append(
            {"tier": tier, "role": _role_label(f, s, tier), "count": sum(models.values()), "models": dict(sorted(models.items()))}
        )
    return {"total": sum(t["count"] for t in tiers), "tiers": tiers}


def _cables(f: Fabric, s: FabricStats) -> dict[str, Any]:
    per_pair: dict[tuple[int, int], dict[str, Any]] = {}
    media: Counter[str] = Counter()
    for (lo, hi, medium), (count, gbps) in sorted(s.bundles.items()):
        entry = per_pair.setdefault(
            (lo, hi),
            {
                "between": _pair_label(f, s, lo, hi),
                "tiers": [lo, hi],
                "count": 0,
                "gbps": 0.0,
                "media": {},
            },
        )
        entry["count"] += count
        entry["gbps"] += gbps
        entry["media"][medium] = count
        media[medium] += count
    tiers = [{**e, "gbps": rounded(e["gbps"])} for _, e in sorted(per_pair.items())]
    return {"total": s.links, "tiers": tiers, "media": dict(sorted(media.items()))}


def _figures(inp: Inputs, s: FabricStats) -> tuple[dict[str, Any], dict[str, Any]]:
    """Power as the racks sum it (the switches' maxima, plugs added only where a maximum leaves
    them out; the media's own power, mostly inside those maxima, beside it) and relative cost."""
    models = inp.fabric.models
    switches = [i for i, t in sorted(s.tiers.items()) if t > 0]
    power = power_totals(inp.fabric, inp.catalogue, switches)
    sw_cost = sum(
        unit_cost(inp.blueprint, d.model, models[d.model].relative_cost) for d in (inp.fabric.devices[i] for i in switches)
    )
    # Media by orderable part (cable assemblies, modules per occupied cage, fibre cords).
    bom = inp.bom if inp.bom is not None else bill_of_materials(inp.catalogue, inp.fabric)
    media_power, media_cost = bom.media_power_w(s.name), bom.media_cost(s.name)
    return (
        {
            "switches": rounded(power.devices_max_w),
            "plugs_apart": rounded(power.plugs_apart_w),
            "total": rounded(power.max_w),
            "media": rounded(media_power),
        },
        {"switches": rounded(sw_cost), "media": rounded(media_cost), "total": rounded(sw_cost + media_cost)},
    )


def _optics(inp: Inputs, s: FabricStats) -> list[dict[str, Any]]:
    """Pluggable modules of the fabric by orderable part and side, as the BOM counts them (one per
    occupied optical cage)."""
    bom = inp.bom if inp.bom is not None else bill_of_materials(inp.catalogue, inp.fabric)
    return [
        {"part": x.part.number, "item": x.item, "detail": x.detail, "count": x.count, "power_w": rounded(x.power_w)}
        for x in bom.media_lines(s.name)
        if x.section == "transceiver"
    ]


def _consistent_tiers(f: Fabric, s: FabricStats) -> bool:
    """True when every member keeps its own tier here (the fabric built all its switches)."""
    return any(t > 0 for t in s.tiers.values()) and all(f.devices[i].tier == t for i, t in s.tiers.items())


def _oversubscription(inp: Inputs, s: FabricStats) -> dict[str, Any] | None:
    if not _consistent_tiers(inp.fabric, s):
        return None
    worst = measure(inp.fabric, s.name)
    if not worst:
        return None
    end_to_end = Fraction(1)
    tiers = []
    for tier in sorted(worst):
        r = worst[tier]
        end_to_end *= max(r, Fraction(1))
        tiers.append({"tier": tier, "role": _role_label(inp.fabric, s, tier), "measured": ratio_text(r), "declared": None})
    return {"tiers": tiers, "end_to_end": ratio_text(end_to_end)}


@dataclass(frozen=True)
class MinCut:
    gbps: float
    splits: int  # balanced endpoint splits tried
    parts: int  # connected parts of the fabric (the cut is of the largest)
    part_devices: int


def _parts(pairs: dict[tuple[int, int], float]) -> list[list[int]]:
    """Connected parts of a graph given as merged device pairs (union-find, linear)."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = parent.setdefault(x, x)
        while root != parent[root]:
            parent[root] = parent[parent[root]]
            root = parent[root]
        return root

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    parts: dict[int, list[int]] = {}
    for x in sorted(parent):
        parts.setdefault(find(x), []).append(x)
    return list(parts.values())


def min_cut_bisection(f: Fabric, s: FabricStats) -> MinCut | None:
    """Min over two balanced endpoint splits of the min cut between the halves, on the largest
    connected part of the fabric (a fabric of several disjoint scale-up domains is cut per domain).

    The splits are the endpoints in device order cut in the middle, and taken alternately.
    The true bisection is the minimum over every balanced split, so this is an upper bound;
    on the regular topologies the tool builds, the first split is the worst. None when the
    fabric is too large for max-flow or has fewer than two endpoints.
    """
    import networkx as nx

    if s.links > MINCUT_MAX_LINKS * 10:
        return None
    pairs: dict[tuple[int, int], float] = {}
    for link in f.links_of(s.name):
        key = (link.a, link.b) if link.a < link.b else (link.b, link.a)
        pairs[key] = pairs.get(key, 0.0) + link.gbps
    parts = _parts(pairs)
    largest: list[int] = max(parts, key=len)  # the first of the largest: parts come in device order
    part = set(largest)
    endpoints = [i for i in sorted(part) if s.tiers[i] == 0]
    edges = [(a, b, c) for (a, b), c in pairs.items() if a in part]
    if len(endpoints) < 2 or len(edges) > MINCUT_MAX_LINKS:
        return None
    g = nx.DiGraph()
    for a, b, c in edges:
        g.add_edge(a, b, capacity=c)
        g.add_edge(b, a, capacity=c)
    half = len(endpoints) // 2
    splits = [(endpoints[:half], endpoints[half:]), (endpoints[0::2], endpoints[1::2])]
    best: float | None = None
    for side_a, side_b in splits:
        h = g.copy()
        # Edges without a capacity are unbounded in networkx: the cut only ever counts links.
        h.add_edges_from(("S", a) for a in side_a)
        h.add_edges_from((b, "T") for b in side_b)
        value = nx.minimum_cut_value(h, "S", "T", capacity="capacity")
        best = value if best is None else min(best, value)
    assert best is not None
    return MinCut(best, len(splits), len(parts), len(part))


def _bisection(inp: Inputs, s: FabricStats, section_bisection: dict[str, Any] | None) -> dict[str, Any]:
    facts = s.facts
    if "bisection_gbps" in facts:
        return {
            "gbps": rounded(float(facts["bisection_gbps"])),
            "method": "builder",
            "detail": str(facts.get("bisection_method", f"stated by the {s.kind or 'fabric'} builder")),
        }
    if section_bisection is not None:
        return section_bisection
    found = min_cut_bisection(inp.fabric, s)
    if found is None:
        why = (
            f"its {s.links:,} links are too many for a min cut"
            if s.links > MINCUT_MAX_LINKS * 10
            else "its largest connected part is too large for a min cut or has fewer than two endpoints"
        )
        return {"gbps": None, "method": "not-computed", "detail": f"no formula for kind {s.kind or '(none)'} and {why}"}
    detail = f"networkx minimum cut, least of {found.splits} balanced endpoint splits (an upper bound)"
    if found.parts > 1:
        detail += f"; per connected part: {found.parts} disjoint parts, cut the largest ({found.part_devices} devices)"
    return {"gbps": rounded(found.gbps), "method": "min-cut", "detail": detail}


def _fabric_report(inp: Inputs, s: FabricStats) -> dict[str, Any]:
    f = inp.fabric
    power, cost = _figures(inp, s)
    limits = {k: v for k, v in sorted(s.facts.items()) if k.startswith("max_")}
    growth: dict[str, Any] = {"limits": limits, "detail": []}
    if "growth_note" in s.facts:
        growth["detail"].append(str(s.facts["growth_note"]))
    report: dict[str, Any] = {
        "name": s.name,
        "kind": s.kind or "unknown",
        "endpoints": _endpoints(f, s),
        "switches": _switches(f, s),
        "cables": _cables(f, s),
        "bisection": None,  # a section may fill it; else _bisection picks a method
        "oversubscription": _oversubscription(inp, s),
        "growth": growth,
        "power_w": power,
        "relative_cost": cost,
        "optics": _optics(inp, s),
        "notes": [],
        "facts": dict(sorted(s.facts.items())),
        "section": s.kind if any(name.split("/")[0] == s.kind for name in SECTIONS.names()) else None,  # None: generic only
    }
    for section in sections_for(s.kind):
        section(inp, s, report)
    report["bisection"] = _bisection(inp, s, report["bisection"])
    return report


def _power(inp: Inputs, bom_totals: dict[str, Any]) -> dict[str, Any]:
    """The deployment's power as its racks sum it: one figure, no plug counted twice (the
    media's power is shown beside it, inside the device maxima but for the plugs counted apart)."""
    power = power_totals(inp.fabric, inp.catalogue)
    return {
        "total": rounded(power.max_w),
        "typical": rounded(power.typical_w),
        "devices": rounded(power.devices_max_w),
        "plugs_apart": rounded(power.plugs_apart_w),
        "media": bom_totals["power_w"]["media"],
    }


def explain(blueprint: Blueprint, catalogue: Catalogue, fabric: Fabric) -> dict[str, Any]:
    """The sizing report as plain, JSON-ready data (sorted, no floats left unrounded)."""
    bom = bill_of_materials(catalogue, fabric, blueprint)
    inp = Inputs(blueprint, catalogue, fabric, bom)
    bom_totals = totals(bom)
    accelerators = 0
    for line in bom.devices:
        acc = fabric.models[line.model].accelerators
        accelerators += acc.count * line.count if acc is not None else 0
    stats = fabric_stats(fabric)
    report = {
        "blueprint": blueprint.metadata.name,
        "totals": {
            "devices": len(fabric.devices),
            "links": len(fabric.links),
            "racks": len(fabric.racks),
            "accelerators": accelerators,
            "power_w": _power(inp, bom_totals),
            "relative_cost": bom_totals["relative_cost"],
            "cost_unit": cost_unit(blueprint),
            "unpriced": unpriced(bom, blueprint),
        },
        "fabrics": [_fabric_report(inp, stats[name]) for name in sorted(stats)],
        "placement": placement_report(blueprint, fabric),
    }
    for name, deployment_section in DEPLOYMENT.items():
        report[name] = deployment_section(inp)
    return report


# -- sections by fabric kind ------------------------------------------------------------------


@SECTIONS.register("fat-tree")
def _fat_tree(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    """Clos bisection by formula, declared ratios, growth with and without re-cabling."""
    facts, f = s.facts, inp.fabric
    top = max(s.tiers.values(), default=0)
    crossings = [(t, s.tier_gbps(t, t + 1)) for t in range(top)]
    if crossings:
        # In a Clos every switch spreads its uplinks evenly over the tier above (the builder
        # guarantees it), so a cut through the middle of the fabric crosses half of every tier
        # boundary's links, and the narrowest boundary bounds it:
        #     B = 1/2 x min over t of W(t, t+1),  W = total bandwidth of the links between tiers.
        # W(0, 1) is the endpoints' injection bandwidth: a non-blocking tree reaches it.
        narrowest = min(w for _, w in crossings)
        parts = ", ".join(f"{_pair_label(f, s, t, t + 1)} {gbps_text(w)}" for t, w in crossings)
        report["bisection"] = {
            "gbps": rounded(narrowest / 2),
            "method": "clos-formula",
            "detail": f"1/2 x min tier-boundary bandwidth ({parts})",
        }
        if facts.get("rail_optimized"):
            report["notes"].append(
                "rail-optimised: traffic between NICs of one rail turns at its leaf, so it is not bound by the upper tiers"
            )
    # Declared intent beside the measured ratios (the blueprint says down:up, N:1, per tier).
    spec = next((x for _, x, n in built_fabrics(inp.blueprint) if n == s.name), None)
    declared = getattr(spec, "oversubscription", None)
    if declared is not None and report["oversubscription"] is not None:
        for tier in report["oversubscription"]["tiers"]:
            tier["declared"] = {1: declared.leaf, 2: declared.spine}.get(tier["tier"])

    if "max_endpoint_ports" not in facts:
        return
    growth = report["growth"]
    leaf_down = int(facts.get("leaf_down", 0))
    built = report["endpoints"]["ports"]
    rails = int(facts.get("rails", 1)) or 1
    cabled = int(facts["max_endpoint_ports"])
    tiers = int(facts.get("tiers", 2))
    # The ceiling: the same switches with one link per switch pair above the leaves (p = 1),
    # which re-cables the upper tiers. 2 tiers: k_spine x leaf_down (k^2/2 for a non-blocking
    # tree of radix k); 3 tiers: k_core x leaves_per_pod x leaf_down (k^3/4).
    ceiling = None
    upper = s.members_at(tiers)
    if upper and leaf_down and not facts.get("leaf_sets"):  # one leaf model: its down ports under every spine port
        k_top = f.models[f.devices[upper[0]].model].port_count("data")
        ceiling = k_top * leaf_down * (1 if tiers == 2 else int(facts.get("leaves_per_pod", 0)))
    growth["endpoint_ports"] = {"built": built, "without_recabling": cabled, "ceiling": ceiling}
    # Node counts: the builder's when it states them (it knows the ports service endpoints take),
    # else endpoint ports / NICs per node.
    nodes_cabled = int(facts.get("max_nodes", cabled // rails))
    nodes_ceiling = facts.get("ceiling_nodes", ceiling // rails if ceiling is not None else None)
    growth["nodes"] = {"built": int(facts.get("nodes", 0)), "without_recabling": nodes_cabled, "ceiling": nodes_ceiling}
    growth["detail"].append(f"{cabled:,} endpoint ports ({nodes_cabled:,} nodes of {rails} NICs) as cabled; {built:,} in use")
    if ceiling is not None:
        p = int(facts.get("leaf_spine_parallel" if tiers == 2 else "spine_core_parallel", 1))
        what = "leaf-spine" if tiers == 2 else "spine-core"
        nodes = f" ({int(nodes_ceiling):,} nodes)" if nodes_ceiling else ""
        growth["detail"].append(
            f"{ceiling:,} endpoint ports{nodes} at these radices, "
            f"re-cabling the {what} tier to one link per switch pair (now {p})"
        )


@SECTIONS.register("management")
def _management(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    """Out-of-band: a tree of access switches, where bisection means nothing."""
    report["bisection"] = {"gbps": None, "method": "not-applicable", "detail": "out-of-band management network"}
    # Every device with a BMC is an endpoint here; counting its accelerators would mislead.
    report["endpoints"]["accelerators"] = None
    if not int(s.facts.get("aggregation", 0)):
        report["notes"].append("no aggregation switches: each rack's management network stands alone until uplinked")


# -- text -------------------------------------------------------------------------------------


def _count_text(x: float | None) -> str:
    """1,234 for counts; relative costs keep one decimal below 100 (17.8) and none above."""
    if x is None:
        return "-"
    if isinstance(x, int) or x == int(x):
        return f"{int(x):,}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def to_text(report: dict[str, Any]) -> str:
    """The report for people, through templates/explain.txt.j2."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("supernodeiac", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["gbps"] = lambda x: "-" if x is None else gbps_text(float(x), " ", "b/s")
    env.filters["n"] = _count_text
    env.filters["plural"] = plural  # {{ "spine"|plural(n) }}: 1 spine, 8 spines
    env.filters["fact"] = lambda v: json.dumps(v, sort_keys=True) if isinstance(v, dict | list) else str(v)
    env.filters["kw"] = lambda w: f"{float(w) / 1000:,.1f} kW"
    env.filters["pct"] = lambda x: "-" if x is None else f"{float(x):.0%}"
    text = env.get_template("explain.txt.j2").render(r=report, deployment=DEPLOYMENT.names())
    return text + placement_text(report.get("placement"))
