"""Rail alignment of every scale-out fabric, measured on its links (info): whether each switch that
endpoints attach to takes one NIC position (rail) of the nodes on it, and when not, what would
make it so. The fat tree's rail_optimized and the Dragonfly's terminal_order decide it; this
says what was built."""

from __future__ import annotations

from collections.abc import Iterator

from ..fabric.fabric_facts import is_scale_out
from ..fabric.views import rail_alignment
from ..facts.rails import rails_text
from ..findings import Finding, info
from ..model.blueprint import built_fabrics
from .base import CHECKS, CheckContext


@CHECKS.register("rail-alignment")
def check_rails(ctx: CheckContext) -> Iterator[Finding]:
    for i, _spec, name in built_fabrics(ctx.blueprint):
        facts = ctx.fabric.facts.get(name)
        if not is_scale_out(facts):
            continue
        found = rail_alignment(ctx.fabric, name)
        if found is not None:
            yield info("rail-alignment", f"{name}: {rails_text(name, facts, found)}", ("scaleout", i))
