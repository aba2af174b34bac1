"""Tenants: unique names and P_Keys, groups that exist and reach an InfiniBand fabric."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error, warning
from .base import CHECKS, CheckContext


@CHECKS.register("tenants")
def check_tenants(ctx: CheckContext) -> Iterator[Finding]:
    tenants = ctx.blueprint.tenants
    if not tenants:
        return
    f = ctx.fabric
    groups = {d.group for d in f.devices}
    ib_fabrics = {name for name, facts in f.facts.items() if facts.get("transport") == "infiniband"}
    # Groups with a data port on an InfiniBand fabric (a device's group is its node group or domain).
    on_ib: set[str] = set()
    if ib_fabrics:
        specs = f.links.specs
        ib_specs = {i for i, s in enumerate(specs) if s.fabric in ib_fabrics}
        devices = f.devices
        for a, b, s in zip(f.links.a, f.links.b, f.links.spec):
            if s in ib_specs:
                on_ib.add(devices[a].group)
                on_ib.add(devices[b].group)
    names: dict[str, int] = {}
    pkeys: dict[int, int] = {}
    for i, t in enumerate(tenants):
        first = names.setdefault(t.name, i)
        if first != i:
            yield error(
                "tenants", f"tenant {t.name!r} is declared twice", ("tenants", i, "name"), "give each tenant its own name"
            )
        first = pkeys.setdefault(t.pkey, i)
        if first != i:
            yield error(
                "tenants",
                f"tenants {tenants[first].name!r} and {t.name!r} share the P_Key {t.pkey:#06x}",
                ("tenants", i, "pkey"),
                "each partition needs its own P_Key (OpenSM merges repeated keys into one partition)",
            )
        for j, g in enumerate(t.groups):
            if g not in groups:
                yield error(
                    "tenants",
                    f"tenant {t.name!r} names {g!r}, which is no node group or scale-up domain",
                    ("tenants", i, "groups", j),
                    "known: " + ", ".join(sorted(groups)[:12]),
                )
            elif g not in on_ib:
                yield warning(
                    "tenants",
                    f"tenant {t.name!r}: {g!r} has no port on an InfiniBand fabric, so no partition takes it",
                    ("tenants", i, "groups", j),
                    "partitions are InfiniBand's; Ethernet tenants are not planned yet",
                )
