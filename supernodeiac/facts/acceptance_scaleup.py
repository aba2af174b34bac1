"""The scale-up stage of the acceptance plan as data: per host of every scale-up domain, the
accelerators' link check the catalogue names for their vendor (``link_tool`` in
catalog/data/collectives.yaml: nvidia-smi for NVLink, amd-smi for Infinity Fabric), with what it
must show: ``links`` links per accelerator (devices.yaml ``accelerators.links``), each at
``acceptance.scaleup_link_min_fraction`` of the per-link rate (``link_gbps`` / 8 GB/s) or above.
The domain's bandwidth is the nccl-tests domain stage (facts/acceptance_plan.py); accelerators
whose vendor has no known link check are listed with the model, for the vendor's own tool.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.collectives import model_figures
from ..fabric import Fabric
from ..model.blueprint import Blueprint
from .hosts import cached_host_facts


@dataclass(slots=True)
class ScaleupCheck:
    id: str
    domain: str  # the domain instance (an HGX board: the host itself)
    host: int
    accelerator: str  # the accelerator model
    tool: str  # nvidia-smi, amd-smi; "" where none is known
    library: str  # the vendor's collective library (NCCL, RCCL), "" where unknown
    accelerators: int  # per host
    links: int  # scale-up links per accelerator
    link_gbytes: float  # per link and direction, GB/s


def scaleup_checks(f: Fabric, bp: Blueprint) -> list[ScaleupCheck]:
    hosts = cached_host_facts(f, bp)
    figures = model_figures()
    out: list[ScaleupCheck] = []
    names = f.devices
    for inst, hs in sorted(hosts.domain_hosts.items(), key=lambda x: x[1][0]):
        for h in hs:
            acc = f.models[names[h].model].accelerators
            if acc is None or acc.count == 0 or not acc.links:
                continue
            vendor = figures.vendor_of(acc.model)
            out.append(
                ScaleupCheck(
                    f"scaleup-{names[h].name}",
                    inst,
                    h,
                    acc.model,
                    vendor.link_tool if vendor is not None else "",
                    vendor.library if vendor is not None else "",
                    acc.count,
                    acc.links,
                    acc.link_gbps / 8,
                )
            )
    return out
