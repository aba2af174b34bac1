"""The blueprint's ``inventory:``: a MAC address names one port, so two entries with one MAC would
give two devices one reservation's key (Kea refuses the config; a switch would boot with another's
address); an entry for a device the design does not have is a typo that leaves a placeholder key."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error
from .base import CHECKS, CheckContext


@CHECKS.register("inventory-mac-duplicate")
def check_mac_duplicate(ctx: CheckContext) -> Iterator[Finding]:
    first: dict[str, str] = {}
    for key, entry in ctx.blueprint.inventory.items():
        if entry.mac is None:
            continue
        seen = first.setdefault(entry.mac, key)
        if seen != key:
            yield error(
                "inventory-mac-duplicate",
                f"inventory: {key} has MAC {entry.mac}, which {seen} already has",
                ("inventory", key, "mac"),
                "a MAC names one port: correct one of the two entries from the device's label",
            )


@CHECKS.register("inventory-device")
def check_inventory_device(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    if not ctx.blueprint.inventory:
        return  # no entry to look up: no name index of 10^6 devices
    names = {d.name: d for d in f.devices}
    for key in ctx.blueprint.inventory:
        device, _, port = key.partition(":")
        d = names.get(device)
        if d is None:
            yield error(
                "inventory-device",
                f"inventory: no device {device} in the design",
                ("inventory", key),
                "use a planned device name (cabling/ lists them)",
            )
        elif port and port not in f.layouts[d.model].names and port not in f.layouts[d.model].physical_names:
            yield error(
                "inventory-device",
                f"inventory: {device} has no port {port}",
                ("inventory", key),
                "name the management port as the cabling plan does",
            )
