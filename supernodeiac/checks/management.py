"""Management: every port of role 'mgmt' is cabled, and only into the management network."""

from __future__ import annotations

from collections.abc import Iterator

from ..fabric import Link
from ..findings import Finding, error, warning
from . import CHECKS, CheckContext


@CHECKS.register("management")
def check_management(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    if not any(f.layouts[m].has_role("mgmt") for m in {d.model for d in f.devices}):
        return  # no device has a management port: nothing to cable, nothing misplaced
    cabled: set[int] = set()
    roles = [f.layouts[d.model].port_roles for d in f.devices]
    # The cable ends on management ports, in link order (the one pass over every link).
    # An out-of-range port is the port-budget check's finding, not a crash here.
    mgmt_ends: list[tuple[Link, int]] = []
    for link in f.links:
        ra, rb = roles[link.a], roles[link.b]
        if 0 <= link.a_port < len(ra) and ra[link.a_port] == "mgmt":
            mgmt_ends.append((link, link.a))
        if 0 <= link.b_port < len(rb) and rb[link.b_port] == "mgmt":
            mgmt_ends.append((link, link.b))
    for link, dev in mgmt_ends:
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
