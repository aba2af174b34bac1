"""Dragonfly and Dragonfly+ group to group, under minimal routing (one global hop, over the
direct links between the two groups only):

* to one other group: a group's terminal bandwidth against the bandwidth of its direct links to
  that group (``m`` global links per pair): the ratio all-to-one traffic sees;
* uniform: the share (g - 1)/g of a group's terminal bandwidth that leaves the group, against all
  of its global links ``m x (g - 1)``: the ratio all-to-all traffic sees.

Every switch of a Dragonfly+ can be 1:1 while the group-to-group ratio is far worse; this is
the figure that says so. Valiant (non-minimal) routing spreads all-to-one traffic over every
group's links, at twice the global hops.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..checks.oversubscription import ratio_text
from ..explain import SECTIONS, FabricStats, Inputs
from ..figures import rounded


def group_ratios(s: FabricStats) -> dict[str, Any] | None:
    facts = s.facts
    g, m = int(facts.get("g", 0)), int(facts.get("global_parallel", 0))
    if g < 2 or not m:
        return None
    terminal_links = sum(v[0] for (lo, _hi, _m), v in s.bundles.items() if lo == 0)
    if not terminal_links:
        return None
    terminal_rate = s.tier_gbps(0, 1) / terminal_links
    if facts["kind"] == "dragonfly":
        per_group_ports = int(facts["a"]) * int(facts["p"])
        top = 1  # local and global links both join routers (tier 1)
    else:
        per_group_ports = int(facts["leaves_per_group"]) * int(facts["leaf_down"])
        top = 2  # global links join spines
    same_tier = [(k, v) for k, v in s.bundles.items() if k[0] == k[1] == top]
    count = sum(v[0] for _, v in same_tier)
    if not count:
        return None
    global_rate = sum(v[1] for _, v in same_tier) / count  # one port group: local and global links run at one rate
    injection = per_group_ports * terminal_rate
    pair = m * global_rate
    to_one = Fraction(injection / pair).limit_denominator(1000)
    uniform = Fraction(injection * (g - 1) / g / (pair * (g - 1))).limit_denominator(1000)
    return {
        "groups": g,
        "group_terminal_gbps": rounded(injection),
        "links_per_pair": m,
        "pair_gbps": rounded(pair),
        "to_one_group": ratio_text(to_one),
        "uniform": ratio_text(uniform),
        "routing": "minimal: one global hop over the direct links between the two groups",
    }


def _section(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    found = group_ratios(s)
    if found is None:
        return
    report["group_to_group"] = found
    report["notes"].append(
        f"group to group under minimal routing: {found['to_one_group']} towards any one other group "
        f"({found['links_per_pair']} direct links), {found['uniform']} for uniform traffic over all {found['groups'] - 1} others"
    )


SECTIONS.register("dragonfly/groups")(_section)
SECTIONS.register("dragonfly-plus/groups")(_section)
