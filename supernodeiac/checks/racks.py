"""Rack budgets: power, cooling, weight, units and cable density per rack, and what shares a rack.

Each rack is held to its row's budget laid over the site's (``racks.budgets``), summed over the
devices in it (``racks.rack_loads``: maximum power, weight, units, cable ends leaving it):

* ``rack-power`` (error): the devices' maximum power above the rack's ``power_kw``;
* ``rack-cooling`` (error): an air-cooled rack above the air-cooled limit, or holding a device
  that needs liquid cooling;
* ``rack-weight`` (error), ``rack-units`` (error): above the declared weight, above the rack's U;
* ``rack-feed`` (error): a rack with power shelves or PDUs whose supply is below its load;
* ``rack-cables`` (warning): more cable ends leaving the rack than ``cables_max``;
* ``rack-mix`` (warning, budget or not): a rack holding hot compute and the core of a fabric (its
  spines or cores), which share a failure domain, a cooling zone and a maintenance window;
* ``rack-budget`` (info): the heaviest rack, and a note when no budget is declared (the limit
  checks then stay silent).

Every limit finding names the rack, the sum and the limit, and points at the placement of the
rack's largest contributor (the key to change), with the budget in the hint.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from ..fabric import Fabric
from ..facts.racks import Budget, RackLoad, budgets, rack_loads
from ..findings import Finding, error, info, warning
from .base import CHECKS, CheckContext


def _contributors(f: Fabric, load: RackLoad) -> tuple[str, tuple]:
    """'4 x hgx-h100 (gpu) 40.8 kW, ...' by power, and the placement path of the largest."""
    power: dict[tuple[str, str], float] = defaultdict(float)
    count: Counter[tuple[str, str]] = Counter()
    origin: dict[tuple[str, str], tuple] = {}
    for i in load.devices:
        d = f.devices[i]
        key = (d.group, d.model)
        power[key] += f.models[d.model].power_max_w
        count[key] += 1
        origin.setdefault(key, d.origin)
    ranked = sorted(power, key=lambda k: (-power[k], k))
    text = ", ".join(f"{count[k]} x {k[1]} ({k[0]}) {power[k] / 1000:.1f} kW" for k in ranked[:3])
    if len(ranked) > 3:
        text += f", and {len(ranked) - 3} more"
    top = origin[ranked[0]]
    return text, top + ("placement",)


def _budget_text(b: Budget) -> str:
    parts = [f"{b.power_kw:g} kW" if b.power_kw is not None else "no power limit", b.cooling]
    if b.weight_kg is not None:
        parts.append(f"{b.weight_kg:g} kg")
    return ", ".join(parts)


@CHECKS.register("rack-budget")
def check_racks(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    loads = rack_loads(f, ctx.catalogue)
    if not loads:
        return
    rows = budgets(ctx.blueprint, ctx.catalogue)
    units = ctx.blueprint.site.rack_units
    for load in loads.values():
        b = rows[load.row]
        yield from _limits(f, load, b, units)
        if load.compute_w and load.core:
            fabrics = Counter(f.devices[i].group for i in load.core)
            which = ", ".join(f"{n} of {g}" for g, n in sorted(fabrics.items()))
            yield warning(
                "rack-mix",
                f"rack {load.name} holds {load.compute_w / 1000:.1f} kW of compute and the core of a fabric "
                f"(spines/cores: {which}): one failure domain, cooling zone and maintenance window for both",
                f.devices[load.core[0]].origin + ("placement",),
                "place the upper tiers in network racks of their own",
            )
    hottest = max(loads.values(), key=lambda x: (x.power_max_w, -x.rack))
    declared = any(b.declared for b in rows.values())
    text = (
        f"{len(loads)} racks in use; the heaviest, {hottest.name}, draws {hottest.power_kw:.1f} kW at maximum "
        f"({hottest.power_typical_w / 1000:.1f} kW typical) in {hottest.units}U"
    )
    if not declared:
        text += "; no rack budget is declared (site.budget), so power, cooling and weight go unchecked"
    yield info("rack-budget", text, ("site",))


def _limits(f: Fabric, load: RackLoad, b: Budget, units: int) -> Iterator[Finding]:
    if load.units > units:
        text, where = _contributors(f, load)
        yield error(
            "rack-units",
            f"rack {load.name} holds {load.units}U of devices; it has {units}U ({text})",
            where,
            "fewer devices per rack (placement per_rack)",
        )
    supply = load.supply_w
    if supply and load.power_max_w > supply + 1e-9:
        text, where = _contributors(f, load)
        yield error(
            "rack-feed",
            f"rack {load.name} draws {load.power_kw:.1f} kW; its power shelves and PDUs supply {supply / 1000:.1f} kW",
            where,
            "more power shelves or PDUs (catalogue physical.power_shelves), or less load per rack",
        )
    if not b.declared:
        return
    if b.power_kw is not None and load.power_kw > b.power_kw + 1e-9:
        text, where = _contributors(f, load)
        yield error(
            "rack-power",
            f"rack {load.name} draws {load.power_kw:.1f} kW at maximum power; its budget is {b.power_kw:g} kW ({text})",
            where,
            f"fewer devices per rack (placement per_rack), or a row budget that the site can feed ({_budget_text(b)})",
        )
    if b.cooling == "air":
        if load.power_kw > b.air_cooled_limit_kw + 1e-9:
            text, where = _contributors(f, load)
            yield error(
                "rack-cooling",
                f"rack {load.name} draws {load.power_kw:.1f} kW on air cooling; an air-cooled rack takes at most "
                f"{b.air_cooled_limit_kw:g} kW ({text})",
                where,
                "fewer devices per rack, or a liquid-cooled row (budget: {cooling: liquid})",
            )
        if load.liquid:
            models = Counter(f.devices[i].model for i in load.liquid)
            d = f.devices[load.liquid[0]]
            yield error(
                "rack-cooling",
                f"rack {load.name} is air-cooled but holds devices that need liquid cooling: "
                + ", ".join(f"{n} x {m}" for m, n in sorted(models.items())),
                d.origin + ("placement",),
                "place them in a liquid-cooled row (budget: {cooling: liquid})",
            )
    if b.weight_kg is not None and load.weight_kg > b.weight_kg + 1e-9:
        text, where = _contributors(f, load)
        unknown = f"; {load.unweighed} devices without a catalogue weight not counted" if load.unweighed else ""
        yield error(
            "rack-weight",
            f"rack {load.name} weighs {load.weight_kg:,.0f} kg; its budget is {b.weight_kg:g} kg{unknown}",
            where,
            "fewer devices per rack",
        )
    if load.cables > b.cables_max:
        text, where = _contributors(f, load)
        yield warning(
            "rack-cables",
            f"rack {load.name} has {load.cables:,} cable ends leaving it, above the {b.cables_max:,} its cable "
            f"management takes ({text})",
            where,
            "spread the switches over more racks (placement per_rack), or declare budget.cables_max for denser racks",
        )
