"""Host PCI/NUMA layouts (catalogue host_topology) agree with their device models.

The NCCL topology files are made from these layouts, so a layout that names a GPU the model
does not have, misses a NIC, or gives the wrong number of NVSwitch bus ids would give NCCL a
wrong picture of the host: an error located at the blueprint's override (or at ``catalogue``).
Only models some device of the Fabric uses are checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..catalog.host_topology import HostTopology, host_topologies
from ..catalog.types import DeviceModel
from ..findings import Finding, error
from . import CHECKS, CheckContext


def layout_problems(model: DeviceModel, topo: HostTopology) -> list[str]:
    """What makes a layout disagree with its device model (empty when it fits)."""
    problems: list[str] = []
    acc = model.accelerators
    gpus = sorted(d.gpu for _c, _s, d in topo.ends() if d.gpu is not None)
    nics = sorted(d.nic for _c, _s, d in topo.ends() if d.nic is not None)
    want_gpus = list(range(acc.count)) if acc else []
    if gpus != want_gpus:
        problems.append(f"lists GPUs {gpus}; the model has {len(want_gpus)} accelerators (0..{len(want_gpus) - 1})")
    data = model.port_count("data")
    if nics != list(range(data)):
        problems.append(f"lists NICs {nics}; the model has {data} data ports (0..{data - 1})")
    numa = [c.numaid for c in topo.cpus]
    if len(set(numa)) != len(numa):
        problems.append(f"repeats a NUMA id ({numa})")
    busids = [d.busid.lower() for _c, _s, d in topo.ends()] + [s.busid.lower() for c in topo.cpus for s in c.switches]
    if len(set(busids)) != len(busids):
        problems.append("repeats a PCI bus id")
    if topo.gpu.nvlink == "switches":
        chips = model.internal_scaleup.switch_chips if model.internal_scaleup else 0
        if len(topo.gpu.nvswitch_busids) != chips:
            problems.append(
                f"gives {len(topo.gpu.nvswitch_busids)} NVSwitch bus ids; the model has {chips} on-board switch chips "
                "(nvlink: remote for switches in other trays)"
            )
    return problems


@CHECKS.register("host-topology")
def check_host_topology(ctx: CheckContext) -> Iterator[Finding]:
    overrides = ctx.blueprint.catalogue.host_topology
    topologies, findings = host_topologies(overrides)
    yield from findings
    used = {d.model for d in ctx.fabric.devices}
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
