"""A NIC's printed port, its place beside a GPU and the rail it is cabled to agree.

Three descriptions of the same NIC meet here. The catalogue's physical model (issue 8) says which
printed cage and port each data port is (``physical_name``: a DGX H100's OSFP 1 port 1 is data
port 7); the host layout (``host_topology``) says which GPU shares a PCIe switch with each NIC
and, where the vendor publishes it, which printed port that NIC is (``port:``); the Fabric says
which rail each data port is cabled to. When they disagree, the cabling sheet sends GPU 7's
fibre to another GPU's cage, or rail r carries another GPU's traffic than the rail-aligned
collectives expect (NCCL then crosses rails inside the host).

* a layout NIC whose ``port`` is not the catalogue's printed name of that data port: an error at
  the override that made them differ (``catalogue: host_topology:`` or ``devices:``);
* on a rail-optimised fabric, a rail cabled to NICs beside different GPU indices on different
  hosts, or (where a host has one NIC per GPU) rail r cabled to a NIC beside a GPU other than
  GPU r: a warning with the first few NICs, their printed ports and GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..catalog.host_topology import HostTopology, host_topologies, layout_problems
from ..fabric import Fabric
from ..facts.hosts import cached_host_facts
from ..findings import Finding, error, warning
from ..model.blueprint import built_fabrics
from ..model.scaleout import fabric_names
from .base import CHECKS, CheckContext

SHOWN = 4  # NICs named in one finding


def _where(ctx: CheckContext, model: str) -> tuple:
    cat = ctx.blueprint.catalogue
    if model in cat.host_topology:
        return ("catalogue", "host_topology", model)
    if model in cat.devices:
        return ("catalogue", "devices", model)
    return ("catalogue",)


def _port_findings(ctx: CheckContext, model: str, topo: HostTopology) -> Iterator[Finding]:
    layout = ctx.fabric.layouts[model]
    data = layout.ports_of("data")
    gpu_of = topo.gpu_of_nic()
    for j, end in sorted(topo.nics().items()):
        if end.port is None:
            continue
        printed = layout.physical_name(data[j])
        if printed == end.port:
            continue
        beside = f", beside GPU {gpu_of[j]}" if j in gpu_of else ""
        owner = next((k for k, p in enumerate(data) if layout.physical_name(p) == end.port), None)
        there = f" (data port {owner}, {layout.names[data[owner]]}, is printed so)" if owner is not None else ""
        yield error(
            "nic-placement",
            f"{model}: the host layout puts NIC {j} ({layout.names[data[j]]}{beside}) at {end.port}, but the "
            f"catalogue prints data port {j} as {printed}{there}: the cabling sheet would send its cable to another cage",
            _where(ctx, model),
            "make host_topology's port: and the device's faceplate (physical.yaml) say the same",
        )


@CHECKS.register("nic-placement")
def check_nic_placement(ctx: CheckContext) -> Iterator[Finding]:
    f, bp = ctx.fabric, ctx.blueprint
    hosts = cached_host_facts(f, bp)
    topologies, _ = host_topologies(bp.catalogue.host_topology)
    used = {f.devices[h].model for h in hosts.hosts} & topologies.keys()  # host models with a layout
    if not used:
        return
    fits = {m: topologies[m] for m in sorted(used) if not layout_problems(f.models[m], topologies[m])}
    for model, topo in fits.items():
        yield from _port_findings(ctx, model, topo)

    gpu_of = {m: t.gpu_of_nic() for m, t in fits.items()}
    for i, spec, name in built_fabrics(bp):
        fh = hosts.fabrics.get(name)
        if fh is None or not fh.rail_optimized:
            continue
        # A planed tree sends endpoint port k to plane k % P as its port k // P there, so rail r of
        # plane p carries the host's port r * P + p: on one NIC per GPU, GPU r * P + p's.
        planes = fabric_names(spec)
        first_gpu, step = planes.index(name), len(planes)
        # rail -> GPU index -> (hosts, an example (model, data index, port))
        seen: dict[int, dict[int, list]] = {}
        index_of: dict[str, dict[int, int]] = {}
        for h, nics in fh.nics.items():
            model = f.devices[h].model
            pairing = gpu_of.get(model)
            if pairing is None:
                continue
            index = index_of.get(model)
            if index is None:
                index = index_of[model] = {p: j for j, p in enumerate(f.layouts[model].ports_of("data"))}
            for n in nics:
                j = index[n.port]
                gpu = pairing.get(j)
                if gpu is None or n.rail is None:
                    continue
                entry = seen.setdefault(n.rail, {}).setdefault(gpu, [0, (model, j, n.port)])
                entry[0] += 1
        problems: list[str] = []
        for rail in sorted(seen):
            gpus = seen[rail]
            one_per_gpu = all(f.models[m].port_count("data") == _accelerators(f, m) for _n, (m, _j, _p) in gpus.values())
            if len(gpus) == 1 and (not one_per_gpu or next(iter(gpus)) == rail * step + first_gpu):
                continue
            for gpu, (count, (model, _j, port)) in sorted(gpus.items()):
                layout = f.layouts[model]
                problems.append(
                    f"rail {rail} reaches GPU {gpu}'s NIC {layout.names[port]} ({layout.physical_name(port)}) "
                    f"on {count} {model} host{'s' if count != 1 else ''}"
                )
        if problems:
            shown = "; ".join(problems[:SHOWN]) + (f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else "")
            yield warning(
                "nic-placement",
                f"fabric {name} is rail-optimised but its rails do not follow the GPUs: {shown}. Rail-aligned "
                "collectives expect GPU r of every host on rail r; NCCL will cross rails inside the hosts",
                ("scaleout", i),
                "cable NIC j of every host to rail j, and make the host layout put NIC j beside GPU j",
            )


def _accelerators(f: Fabric, model: str) -> int:
    acc = f.models[model].accelerators
    return acc.count if acc is not None else 0
