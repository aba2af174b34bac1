"""Fat-tree sizing against intent: declared, designed and measured ratios per tier; the ratio a
pod (3 tiers) or a leaf (2 tiers) sees to the rest under minimal routing; what the growth
reservation costs; and the cheapest design of the same switches that meets the same intent.

Costs are the catalogue's: switch power (``power_max_w``) and relative cost of the fabric's
switch models (the blueprint's intent names them), and for links the fabric's own switch-to-switch
links averaged: modules per occupied cage as the BOM counts them, power only for the plugs a switch's
maximum leaves out (as the racks sum it).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..facts.bom import link_figures, switch_link_plugs, unit_cost
from ..facts.oversubscription import designed_ratios, measure_tiers, ratio_text
from ..model.blueprint import built_fabrics
from ..util.number_format import rounded
from .base import SECTIONS, FabricStats, Inputs

TIER_ROLES = {1: "leaf", 2: "spine", 3: "core"}


def _rate(s: FabricStats, lo: int, hi: int) -> float | None:
    """Gb/s of one link between two tiers (the tier pair's bandwidth over its links)."""
    count = sum(v[0] for (a, b, _m), v in s.bundles.items() if (a, b) == (lo, hi))
    return s.tier_gbps(lo, hi) / count if count else None


def _switch_link_costs(inp: Inputs, s: FabricStats) -> dict[str, float]:
    """Average power, relative cost and transceivers of one switch-to-switch link of this fabric:
    modules one per occupied optical cage (as the BOM), power only for the plugs a switch's
    maximum leaves out (as the racks), cost of the cable assembly or the modules."""
    links, modules, watts = switch_link_plugs(inp.catalogue, inp.fabric, s.name)
    if not links:
        return {"power_w": 0.0, "relative_cost": 0.0, "transceivers": 0.0}
    cost = 0.0
    for (lo, _hi, medium), (count, _gbps) in s.bundles.items():
        if lo > 0:
            cost += count * unit_cost(inp.blueprint, medium, link_figures(inp.catalogue, medium)[1])
    lines = inp.bom.media_lines(s.name) if inp.bom is not None else []
    switch_side = [x for x in lines if x.section == "transceiver" and x.detail.startswith("switch side")]
    if switch_side:
        # The fabric's average switch-side module (the BOM does not split modules by tier).
        cost += modules * sum(x.cost for x in switch_side) / sum(x.count for x in switch_side)
    return {"power_w": watts / links, "relative_cost": cost / links, "transceivers": modules / links}


def _cost(inp: Inputs, spec: Any, leaves: int, uppers: int, links: int, per_link: dict[str, float]) -> dict[str, Any]:
    """Switches, links, transceivers, power and relative cost of a design's switches and switch links."""
    models = inp.fabric.models
    leaf = models[spec.switch]
    upper_name = spec.spine_switch or spec.switch
    upper = models[upper_name]
    leaf_cost = unit_cost(inp.blueprint, spec.switch, leaf.relative_cost)
    upper_cost = unit_cost(inp.blueprint, upper_name, upper.relative_cost)
    return {
        "switches": leaves + uppers,
        "switch_links": links,
        "transceivers": round(links * per_link["transceivers"]),
        "power_w": rounded(leaves * leaf.power_max_w + uppers * upper.power_max_w + links * per_link["power_w"]),
        "relative_cost": rounded(leaves * leaf_cost + uppers * upper_cost + links * per_link["relative_cost"]),
    }


@SECTIONS.register("fat-tree/sizing")
def sizing_section(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    facts = s.facts
    spec = next((x for _, x, n in built_fabrics(inp.blueprint) if n == s.name), None)
    if spec is None or "sizing" not in facts:
        return
    measured = measure_tiers(inp.fabric, s.name)
    tiers = []
    for role, d in designed_ratios(facts, measured).items():
        tier = next(t for t, r in TIER_ROLES.items() if r == role)
        worst = measured.worst.get(tier)
        tiers.append(
            {
                "role": role,
                "declared": d["declared"],
                "designed": ratio_text(d["designed"]) if d["designed"] is not None else None,
                "measured": ratio_text(worst) if worst is not None else None,
                "down_used": d["down_used"],
                "uplinks": d["uplinks"],
                "sized": d["sized"],
                "explicit": d["explicit"],
            }
        )
    per_link = _switch_link_costs(inp, s)
    sizing: dict[str, Any] = {"tiers": tiers, "minimal_routing": _minimal(s, facts)}
    reservation = facts.get("growth_reservation")
    if reservation:
        uppers = reservation["spines"] + reservation["cores"]
        sizing["reservation"] = {
            "grow_to_sus": reservation["grow_to_sus"],
            "built_sus": reservation["built_sus"],
            "spines": reservation["spines"],
            "cores": reservation["cores"],
            "max_nodes": reservation["max_nodes"],
            "max_nodes_built_only": reservation["max_nodes_built_only"],
            **_cost(inp, spec, 0, uppers, reservation["switch_links"], per_link),
        }
    sizing["designs"] = [
        {**d, **_cost(inp, spec, d["leaves"], d["spines"] + d["cores"], d["switch_links"], per_link)}
        for d in facts.get("designs", [])
    ]
    sizing["cheapest"] = _cheapest(facts, sizing["designs"])
    report["sizing"] = sizing
    for line in sizing["cheapest"]:
        report["notes"].append(line)


def _minimal(s: FabricStats, facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a unit sees towards the rest of the fabric under minimal routing: a leaf's down ports
    in use against its uplinks (2 tiers: every leaf reaches every other through the spines); a
    pod's (3 tiers: a pod reaches every other pod only through its spines' uplinks to the cores)."""
    sets = facts.get("leaf_sets")
    if sets and int(facts["tiers"]) == 3:  # pods of several leaf models: the most oversubscribed set's pod
        r2 = _rate(s, 2, 3)
        if r2 is None:
            return None
        spp = int(facts["spines_per_pod"])
        worst = max(
            Fraction(x["pods"]["leaves_per_pod"] * x["leaf_down_used"] * x["down_gbps"] / (spp * x["pods"]["spine_up"] * r2))
            for x in sets
            if "pods" in x
        )
        return {"unit": "pod", "to": "any other pod", "ratio": ratio_text(worst.limit_denominator(1000))}
    if sets:  # leaves of several models (2 tiers): the most oversubscribed set, at its own port speeds
        worst = max(Fraction(x["leaf_down_used"] * x["down_gbps"] / (x["leaf_up"] * x["up_gbps"])) for x in sets)
        return {"unit": "leaf", "to": "any other leaf", "ratio": ratio_text(worst.limit_denominator(1000))}
    r0, r1 = _rate(s, 0, 1), _rate(s, 1, 2)
    if r0 is None or r1 is None:
        return None
    leaf_in, leaf_up = int(facts["leaf_down_used"]) * r0, int(facts["leaf_up"]) * r1
    if int(facts["tiers"]) == 2:
        return {"unit": "leaf", "to": "any other leaf", "ratio": ratio_text(Fraction(leaf_in / leaf_up).limit_denominator(1000))}
    r2 = _rate(s, 2, 3)
    if r2 is None:
        return None
    pod_in = int(facts["leaves_per_pod"]) * leaf_in
    pod_up = int(facts["spines_per_pod"]) * int(facts["spine_up"]) * r2
    return {"unit": "pod", "to": "any other pod", "ratio": ratio_text(Fraction(pod_in / pod_up).limit_denominator(1000))}


def _cheapest(facts: Mapping[str, Any], designs: list[dict]) -> list[str]:
    """Statements of the cheapest design (fewest switches, then lowest cost) for the nodes built and
    for the declared growth, where it is not this one."""
    tiers = int(facts["tiers"])
    own_scope = "planned" if facts.get("growth_reservation") else "built"
    own = next((d for d in designs if d["tiers"] == tiers and d["scope"] == own_scope), None)
    if own is None:
        return []
    out = []
    nodes = int(facts.get("nodes", 0))
    for scope in ("built", "planned"):
        candidates = [d for d in designs if d["scope"] == scope]
        if not candidates:
            continue
        best = min(candidates, key=lambda d: (d["switches"], d["relative_cost"], d["tiers"]))
        if best["switches"] >= own["switches"] or (best["tiers"] == tiers and best["scope"] == own_scope):
            continue
        what = f"the {nodes:,} nodes built" if scope == "built" else f"growth to {facts['planned_sus']} SUs"
        saved = [f"{own['switches'] - best['switches']:,} fewer switches"]
        if own["switch_links"] > best["switch_links"]:
            saved.append(f"{own['switch_links'] - best['switch_links']:,} fewer switch links")
        if own["transceivers"] > best["transceivers"]:
            saved.append(f"{own['transceivers'] - best['transceivers']:,} fewer transceivers")
        saved.append(f"{(own['power_w'] - best['power_w']) / 1000:,.1f} kW less")
        line = (
            f"cheapest design for {what}: {best['tiers']} tiers, {best['switches']:,} switches instead of "
            f"{own['switches']:,} ({', '.join(saved)})"
        )
        if scope == "built" and own_scope == "planned":
            grows = [d for d in designs if d["scope"] == "planned"]
            holds = sorted({d["tiers"] for d in grows})
            line += f"; the declared growth (grow_to_sus {facts['planned_sus']}) needs " + (
                " or ".join(f"{t} tiers" for t in holds) if holds else "this design"
            )
        out.append(line)
    return out
