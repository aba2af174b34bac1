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

from typing import Any

from ..facts.dragonfly_ratios import group_ratios
from .base import SECTIONS, FabricStats, Inputs


def _rates(s: FabricStats) -> tuple[float, float]:
    """Gb/s of a terminal link and of a global link, from the fabric's tier bundles (local and
    global links share one port group, so one rate)."""
    top = 1 if s.kind == "dragonfly" else 2  # Dragonfly routers are tier 1; Dragonfly+ globals join spines
    terminal = [v for (lo, _hi, _m), v in s.bundles.items() if lo == 0]
    same = [v for (lo, hi, _m), v in s.bundles.items() if lo == hi == top]
    t_count, s_count = sum(v[0] for v in terminal), sum(v[0] for v in same)
    return (
        sum(v[1] for v in terminal) / t_count if t_count else 0.0,
        sum(v[1] for v in same) / s_count if s_count else 0.0,
    )


def _section(inp: Inputs, s: FabricStats, report: dict[str, Any]) -> None:
    found = group_ratios(s.facts, *_rates(s))
    if found is None:
        return
    report["group_to_group"] = found
    report["notes"].append(
        f"group to group under minimal routing: {found['to_one_group']} towards any one other group "
        f"({found['links_per_pair']} direct links), {found['uniform']} for uniform traffic over all {found['groups'] - 1} others"
    )


SECTIONS.register("dragonfly/groups")(_section)
SECTIONS.register("dragonfly-plus/groups")(_section)
