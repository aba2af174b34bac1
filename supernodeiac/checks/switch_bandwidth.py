"""Switch chips carry no more than their ASIC switches: per chip, the ports it drives (count x
speed per direction, and lanes where the ASIC lists its SerDes) against the catalogue ASIC's
capacity (``catalog/data/asics.yaml``).

A switch names its chip with ``asic:``; a switch board or tray with ``switch_chips.model`` (its
ports are spread evenly over its chips). A switch that names no chip of the catalogue is held to
the largest chip there: a 256 x 800G chip (204.8 Tb/s) is four 51.2 Tb/s chips' worth and no
single chip the catalogue knows, so it is an error, not a design.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..catalog.types import Asic, DeviceModel
from ..findings import Finding, error
from .base import CHECKS, CheckContext

# Ports a switch chip does not switch: the out-of-band management port and the serial console
# belong to the switch's CPU complex, not its ASIC.
_NOT_SWITCHED = ("mgmt", "console")


def chip_load(model: DeviceModel) -> tuple[float, int, int]:
    """(Gb/s per direction, lanes, chips): what one chip of ``model`` drives."""
    chips = model.switch_chips.count if model.switch_chips is not None else 1
    gbps = sum(g.count * g.speed_gbps for g in model.ports if g.role not in _NOT_SWITCHED)
    lanes = sum(g.count * g.lanes for g in model.ports if g.role not in _NOT_SWITCHED)
    return gbps / chips, lanes // chips, chips


def _tbps(gbps: float) -> str:
    return f"{gbps / 1000:g} Tb/s"


@CHECKS.register("switch-bandwidth")
def check_switch_bandwidth(ctx: CheckContext) -> Iterator[Finding]:
    f, asics = ctx.fabric, ctx.catalogue.asics
    first: dict[str, tuple] = {}
    for d in f.devices:
        first.setdefault(d.model, d.origin)
    largest = max(asics.items(), key=lambda kv: (kv[1].capacity_gbps, kv[0]), default=None)
    overridden = ctx.blueprint.catalogue.devices
    for name in sorted(first):
        model = f.models[name]
        if model.kind not in ("switch", "switch-board"):
            continue
        chip_name = model.asic or (model.switch_chips.model if model.switch_chips is not None else None)
        asic: Asic | None = asics.get(chip_name) if chip_name else None
        gbps, lanes, chips = chip_load(model)
        per = "per chip" if chips > 1 else "on its chip"
        path = ("catalogue", "devices", name) if name in overridden else first[name]
        if asic is not None:
            assert chip_name is not None
            if gbps > asic.capacity_gbps:
                yield error(
                    "switch-bandwidth",
                    f"{name} drives {_tbps(gbps)} {per} (its ports x speed, per direction); its ASIC {chip_name} "
                    f"switches {_tbps(asic.capacity_gbps)}",
                    path,
                    f"at most {asic.capacity_gbps:,.0f} Gb/s of ports per chip: fewer or slower ports, more chips "
                    "(switch_chips.count), or the ASIC the switch is really built on",
                )
            elif asic.serdes_lanes is not None and lanes > asic.serdes_lanes:
                yield error(
                    "switch-bandwidth",
                    f"{name} uses {lanes} lanes {per}; its ASIC {chip_name} has {asic.serdes_lanes} SerDes lanes",
                    path,
                    "fewer lanes per port, or fewer ports",
                )
            continue
        if largest is not None and gbps > largest[1].capacity_gbps:
            named = f"its chip {chip_name!r} is not in the catalogue's asics" if chip_name else "it names no asic"
            yield error(
                "switch-bandwidth",
                f"{name} drives {_tbps(gbps)} {per} (its ports x speed, per direction) and {named}: the largest switch "
                f"chip in the catalogue, {largest[0]}, switches {_tbps(largest[1].capacity_gbps)}",
                path,
                "spread the ports over more chips (switch_chips.count) or switches, or add the chip it is built on under "
                "catalogue: asics: (with its source) and name it",
            )
