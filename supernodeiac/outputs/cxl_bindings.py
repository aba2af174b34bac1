"""CXL binding tables for a fabric manager (snc render: cxl/), from ``facts/cxl_bindings.py``.

Per pool:

* ``cxl/<pool>/bindings.csv``: one row per (logical device, host that maps it): the memory
  device, the switch it hangs off, its LD-ID, the LD's GB, the host, and the shared region for an
  LD of one (a shared LD has a row per host); an LD bound to nobody has a row with no host, so the
  table lists every LD of the pool once or more;
* ``cxl/<pool>/bindings.json``: the same as data: the pool's LD size and count, every memory
  device with its LDs (bound to a host, to a shared region and its hosts, or free), every host
  with its promise and its LDs, every shared region with its hosts and LDs.

A fabric manager binds each LD to the host's virtual switch (CXL 2.0 FM API: Bind vPPB) in the
order the table lists them; the LD numbering and the binding are keyed by stable coordinates
(see the facts module), so adding hosts or memory devices leaves existing rows as they are.
"""

from __future__ import annotations

import json

from ..facts.cxl_bindings import PoolPlan, pool_plans
from .base import RENDERERS, Artifacts, RenderContext
from .csv_safe import CsvWriter

COLUMNS = ["pool", "memory_device", "switch", "ld", "gb", "host", "shared_region"]


@RENDERERS.register("cxl")
def render_cxl(ctx: RenderContext) -> Artifacts:
    out: Artifacts = {}
    for plan in pool_plans(ctx.blueprint, ctx.fabric):
        out[f"cxl/{plan.name}/bindings.csv"] = _csv(plan)
        out[f"cxl/{plan.name}/bindings.json"] = (json.dumps(_doc(plan), indent=2, sort_keys=True) + "\n").encode()
    return out


def _owners(plan: PoolPlan) -> list[tuple[list[str], str]]:
    """Per LD (index into plan.lds): the hosts that map it and its shared region ('' for a private LD)."""
    owners: list[tuple[list[str], str]] = [([], "") for _ in plan.lds]
    for h in plan.hosts:
        for k in h.bound:
            owners[k] = ([h.host], "")
    for r in plan.regions:
        for k in r.bound:
            owners[k] = (list(r.hosts), r.name)
    return owners


def _csv(plan: PoolPlan) -> bytes:
    w = CsvWriter(COLUMNS)
    for ld, (hosts, region) in zip(plan.lds, _owners(plan)):
        for host in hosts or [""]:
            w.writerow([plan.name, ld.device, ld.switch, ld.ld, f"{ld.gb:g}", host, region])
    return w.getvalue()


def _doc(plan: PoolPlan) -> dict:
    owners = _owners(plan)
    devices: dict[str, dict] = {}
    for ld, (hosts, region) in zip(plan.lds, owners):
        dev = devices.setdefault(ld.device, {"name": ld.device, "switch": ld.switch, "lds": []})
        entry: dict = {"ld": ld.ld}
        if region:
            entry.update(region=region, hosts=hosts)
        elif hosts:
            entry["host"] = hosts[0]
        else:
            entry["free"] = True
        dev["lds"].append(entry)

    def refs(bound: list[int]) -> list[dict]:
        return [{"memory_device": plan.lds[k].device, "ld": plan.lds[k].ld} for k in bound]

    return {
        "pool": plan.name,
        "memory_model": plan.memory_model,
        "logical_devices_per_device": plan.logical_devices,
        "ld_gb": plan.ld_gb,
        "lds": len(plan.lds),
        "lds_bound": sum(len(h.bound) for h in plan.hosts) + sum(len(r.bound) for r in plan.regions),
        "memory_devices": list(devices.values()),
        "hosts": [{"name": h.host, "promised_gb": h.promised_gb, "lds": refs(h.bound)} for h in plan.hosts],
        "shared_regions": [{"name": r.name, "size_gb": r.size_gb, "hosts": r.hosts, "lds": refs(r.bound)} for r in plan.regions],
    }
