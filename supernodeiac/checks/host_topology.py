"""Host PCI/NUMA layouts (catalogue host_topology) agree with their device models.

The NCCL topology files are made from these layouts, so a layout that names a GPU the model
does not have, misses a NIC, or gives the wrong number of NVSwitch bus ids would give NCCL a
wrong picture of the host: an error located at the blueprint's override (or at ``catalogue``).
Only models some device of the Fabric uses are checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..catalog.host_topology import host_topologies, layout_problems
from ..findings import Finding, error
from .base import CHECKS, CheckContext


@CHECKS.register("host-topology")
def check_host_topology(ctx: CheckContext) -> Iterator[Finding]:
    overrides = ctx.blueprint.catalogue.host_topology
    topologies, findings = host_topologies(overrides)
    yield from findings
    used = set(ctx.fabric.device_arrays().models)
    for name, topo in sorted(topologies.items()):
        if name not in used:
            continue
        where = ("catalogue", "host_topology", name) if name in overrides else ("catalogue",)
        for problem in layout_problems(ctx.fabric.models[name], topo):
            yield error(
                "host-topology",
                f"host_topology {name} {problem}",
                where,
                "make the layout match the device model (its NCCL topology file is not written until it does)",
            )
