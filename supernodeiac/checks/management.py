"""Management: every port of role 'mgmt' is cabled, and only into the management network."""

from __future__ import annotations

from collections.abc import Iterator

from ..findings import Finding, error, warning
from . import CHECKS, CheckContext


@CHECKS.register("management")
def check_management(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    cabled: set[int] = set()
    roles = [f.layouts[d.model].port_roles for d in f.devices]
    for link in f.links:
        for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
            # An out-of-range port is the port-budget check's finding, not a crash here.
            if 0 <= port < len(roles[dev]) and roles[dev][port] == "mgmt":
                if link.fabric != "mgmt":
                    yield error(
                        "management",
                        f"{f.devices[dev].name} management port is on the data plane ({link.fabric})",
                        link.origin,
                        "the management network never shares the data plane",
                    )
                cabled.add(dev)
    missing = [d for d in f.devices if d.index not in cabled and f.layouts[d.model].has_role("mgmt")]
    if not missing:
        return
    if ctx.blueprint.management is None:
        yield warning(
            "management",
            f"{len(missing)} devices have management ports and no management network is declared (e.g. {missing[0].name})",
            (),
            "add a 'management:' section",
        )
        return
    unplaced = [d for d in missing if d.rack < 0]
    for d in missing[:5]:
        yield error(
            "management",
            f"{d.name} has a management port with no cable" + (" (it is not placed in a rack)" if d in unplaced else ""),
            d.origin,
            "give the device a placement",
        )
