"""Port utilisation per switch role of every scale-out fabric: a design that leaves most of its
switches' ports dark (a Dragonfly router using 15 of 64) is a warning.

The figure held to ``planning.port_utilisation_min`` is the design's: the ports each switch uses
at the planned size (``ports_planned`` in the builder's facts, growth reservations included) over
its data ports. A partly filled SU or a group not yet built is growth room, not waste, so the
ports cabled now are reported (info) but not held to the threshold.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..fabric.fabric_facts import ScaleOutFacts, is_scale_out
from ..fabric.views import port_use
from ..findings import Finding, info, warning
from ..model.blueprint import built_fabrics
from ..util.number_format import plural
from .base import CHECKS, CheckContext


@CHECKS.register("port-utilisation")
def check_utilisation(ctx: CheckContext) -> Iterator[Finding]:
    least = ctx.blueprint.planning.port_utilisation_min
    for i, _spec, name in built_fabrics(ctx.blueprint):
        facts = ctx.fabric.facts.get(name)
        if not is_scale_out(facts):
            continue
        parts = []
        for use in port_use(ctx.fabric, name):
            design = use.design_fraction
            parts.append(
                f"{use.role} {use.used:,}/{use.total:,} ({use.used_fraction:.0%})"
                + (f", design {use.planned}/{use.radix}" if use.planned is not None else "")
            )
            if design is not None and design < least:
                yield warning(
                    "port-utilisation",
                    f"{name}: each {use.role} uses {use.planned} of its {use.radix} data ports ({design:.0%}) even at "
                    f"the planned size, below planning.port_utilisation_min {least:.0%}",
                    ("scaleout", i),
                    _hint(facts, use.role),
                )
        if parts:
            yield info("port-utilisation", f"{name}: data ports in use per role: " + "; ".join(parts), ("scaleout", i))


def _hint(facts: ScaleOutFacts, role: str) -> str:
    if facts["kind"] == "dragonfly":
        k = facts["radix"]
        base = (k + 1) // 4
        return (
            f"a router of lower radix, or the balanced design for radix {k} (terminals {base}, routers_per_group "
            f"{2 * base}, global_links {base}) with fewer groups"
        )
    if facts["kind"] == "dragonfly-plus":
        return "more leaves per group or more global links per spine, or a switch of lower radix"
    return f"a {role} switch of lower radix, fewer {plural(role)} with more parallel links, or a larger grow_to_sus"
