"""RCCL environment per AMD host model (snc render: rccl/).

Hosts whose accelerators' vendor runs RCCL (``library: RCCL`` in ``catalog/data/collectives.yaml``,
AMD Instinct) get ``rccl/<model>.env`` in place of the NCCL files: the variables of NCCL's
names that RCCL honours (ROCm's RCCL environment-variable reference) and that the Fabric fixes:

* ``NCCL_IB_HCA``: the cabled compute NICs in rail order, with NCCL's ``=`` exact-match prefix and
  the HCA port (the host layout's ``nic.port``, else 1), named as ``perftest -d`` names them
  (``facts.hosts.rdma_names``: the host layout's RDMA names where one is given, else the ports'
  catalogue names);
* ``NCCL_SOCKET_IFNAME``: the same NICs' network interfaces, on Ethernet fabrics (the ports' OS
  names carry the host-link addresses ``host-addresses/`` plans); unset on InfiniBand;
* ``NCCL_CROSS_NIC``: 0 where every fabric of the host is rail-optimised, else 1;
* ``NCCL_IB_TC``: the lossless class's DSCP x 4 on RoCE fabrics with a lossless plan.

No CUDA-only settings (no topology file, NVLS or multi-node NVLink); no ``NCCL_IB_GID_INDEX``
(a row of each NIC's GID table, which the design does not fix: the file says how to read it).
Hosts of one model cabled in a different NIC order get ``rccl/<model>-<k>.env``;
``rccl/hosts.tsv`` names each host's file and NICs (RDMA name=printed port).
"""

from __future__ import annotations

from ..catalog.collectives import model_figures
from ..catalog.host_topology import host_topologies
from ..facts.hosts import Hosts, cached_host_facts
from ..util.shell import assignment, comment_text
from ..util.templating import render_template
from .base import RENDERERS, Artifacts, RenderContext
from .csv_safe import tsv_line
from .nccl import NicPlan, nic_plan, roce_dscps

HOSTS_COLUMNS = ("host", "model", "env_file", "nics")
LIBRARY = "RCCL"


def rccl_models(ctx: RenderContext, hosts: Hosts) -> dict[str, str]:
    """Host model -> its accelerator model, for the host models whose accelerators run RCCL."""
    figures = model_figures()
    out: dict[str, str] = {}
    for model in sorted({ctx.fabric.devices[h].model for h in hosts.hosts}):
        acc = ctx.fabric.models[model].accelerators
        vendor = figures.vendor_of(acc.model) if acc is not None else None
        if acc is not None and vendor is not None and vendor.library == LIBRARY:
            out[model] = acc.model
    return out


def _env(
    ctx: RenderContext, hosts: Hosts, model: str, stem: str, plan: NicPlan, members: list[int], accelerator: str, port: int
) -> str:
    f = ctx.fabric
    first = members[0]
    fabrics = [fh for fh in hosts.fabrics.values() if first in fh.nics]
    layout = f.layouts[model]
    data = layout.ports_of("data")
    printed = [layout.physical_name(data[j]) for j, _n, _r, _g in plan.nics]
    netdevs = [layout.names[data[j]] for j, _n, _r, _g in plan.nics]
    tcs = roce_dscps(ctx, fabrics)
    ethernet = bool(fabrics) and all(fh.transport == "ethernet" for fh in fabrics)
    return render_template(
        "rccl.env.j2",
        blueprint=ctx.blueprint.metadata.name,
        model=model,
        stem=stem,
        hosts=len(members),
        accelerator=accelerator,
        nics=[(n[1], dev, n[2], port) for n, dev, port in zip(plan.nics, netdevs, printed, strict=True)],
        hca=",".join(f"{name}:{port}" for _j, name, _r, _g in plan.nics),
        socket=",".join(netdevs) if ethernet else "",
        fabrics=[fh.name for fh in fabrics],
        rail_optimized=bool(fabrics) and all(fh.rail_optimized for fh in fabrics),
        roce=tcs,
        assign=assignment,
        c=comment_text,
    )


@RENDERERS.register("rccl")
def render_rccl(ctx: RenderContext) -> Artifacts:
    hosts = cached_host_facts(ctx.fabric, ctx.blueprint)
    models = rccl_models(ctx, hosts)
    if not models:
        return {}
    topologies, _ = host_topologies(ctx.blueprint.catalogue.host_topology)
    groups: dict[tuple[str, NicPlan], list[int]] = {}
    for h in hosts.hosts:
        model = ctx.fabric.devices[h].model
        if model in models:
            groups.setdefault((model, nic_plan(hosts, h, topologies.get(model))), []).append(h)
    out: Artifacts = {}
    rows: list[str] = []
    for model in sorted(models):
        mine = sorted(((p, hs) for (m, p), hs in groups.items() if m == model), key=lambda x: (-len(x[1]), x[1][0]))
        for k, (plan, members) in enumerate(mine):
            stem = model if k == 0 else f"{model}-{k + 1}"
            topo = topologies.get(model)
            port = topo.nic.port if topo is not None else 1  # the HCA port: the layout's, else a NIC's first
            out[f"rccl/{stem}.env"] = _env(ctx, hosts, model, stem, plan, members, models[model], port).encode()
            layout = ctx.fabric.layouts[model]
            data = layout.ports_of("data")
            nics = ";".join(f"{name}={layout.physical_name(data[j])}" for j, name, _r, _g in plan.nics)
            tail = tsv_line((model, f"{stem}.env", nics))
            rows.extend(tsv_line((ctx.fabric.devices[h].name,)) + "\t" + tail for h in members)
    rows.sort()
    out["rccl/hosts.tsv"] = ("\n".join([tsv_line(HOSTS_COLUMNS), *rows]) + "\n").encode()
    return out
