"""Dragonfly and Dragonfly+ group to group, under minimal routing (one global hop, over the
direct links between the two groups only):

* to one other group: a group's terminal bandwidth against the bandwidth of its direct links to
  that group (``m`` global links per pair): the ratio all-to-one traffic sees;
* uniform: the share (g - 1)/g of a group's terminal bandwidth that leaves the group, against all
  of its global links ``m x (g - 1)``: the ratio all-to-all traffic sees.

Every switch of a Dragonfly+ can be 1:1 while the group-to-group ratio is far worse; this is
the figure that says so (the Dragonfly check and ``snc explain`` both report it). Valiant
(non-minimal) routing spreads all-to-one traffic over every
group's links, at twice the global hops.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..util.number_format import rounded
from .oversubscription import ratio_text


def group_ratios(facts: Mapping[str, Any], terminal_gbps: float, global_gbps: float) -> dict[str, Any] | None:
    """The two ratios from the builder's facts and the rates of a terminal and a global link."""
    g, m = int(facts.get("g", 0)), int(facts.get("global_parallel", 0))
    if g < 2 or not m or not terminal_gbps or not global_gbps:
        return None
    if facts["kind"] == "dragonfly":
        per_group_ports = int(facts["a"]) * int(facts["p"])
    else:
        per_group_ports = int(facts["leaves_per_group"]) * int(facts["leaf_down"])
    injection = per_group_ports * terminal_gbps
    pair = m * global_gbps
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
