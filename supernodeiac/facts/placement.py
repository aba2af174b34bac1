"""Placement and sizing: where each parallel dimension lands, and what bandwidth it gets
(the ``placement`` section of ``snc explain``; the ``workloads`` check reads the same numbers).

The rule snc plans by (docs/blueprint.md, ``workloads``): tensor and expert parallelism (TP, EP: every layer, every step) stay
inside the scale-up domain; pipeline and data parallelism (PP, DP) go over the scale-out
network. From the Fabric this reports, per kind of scale-up domain:

* the largest TP x EP group that fits in one domain (its accelerators);
* per accelerator, the scale-up bandwidth (links x link rate, per direction) and the scale-out
  bandwidth (its host's cabled NICs over its accelerators, per direction) and their ratio;

per scale-out fabric, how far a PP or DP group of one accelerator per domain reaches in one
switch hop per rail (a leaf group), in three (a spine group or pod) and across the fabric; and,
per declared workload, the bandwidth each dimension needs (bytes per step / communication
budget) against what the network carrying it gives.

A TP x EP group wider than a domain spills onto the scale-out network (64-way EP over eight
8-GPU nodes on InfiniBand is a common design): EP first (TP stays inside while it fits), its
all-to-all bytes spread evenly over the other EP - 1 ranks, so the share sent to ranks in other
domains, (EP - EP per domain) / (EP - 1), goes out through the NICs; a TP group wider than the
domain sends all its bytes (and all of EP's) out. That spilled traffic shares the NICs with PP
and DP, so the report gives their sum against the scale-out bandwidth per accelerator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..fabric import Fabric
from ..model.blueprint import Blueprint
from ..model.workloads import DIMENSIONS, SCALEOUT_DIMENSIONS, SCALEUP_DIMENSIONS, Workload
from ..util.number_format import rounded
from .hosts import Hosts, cached_host_facts


@dataclass(frozen=True, slots=True)
class DomainKind:
    kind: str
    model: str
    instances: int
    hosts: int  # per instance
    accelerators: int  # per instance
    scaleup_gbytes: float  # per accelerator, per direction
    scaleout_gbytes: float  # per accelerator, per direction


def _scaleup(f: Fabric, model: str) -> float:
    acc = f.models[model].accelerators
    return acc.links * acc.link_gbps / 8 if acc else 0.0


def _scaleout(hosts: Hosts, h: int) -> float:
    acc = hosts.accelerators(h) or 1
    return sum(n.gbps for fh in hosts.fabrics.values() for n in fh.nics.get(h, ())) / 8 / acc


def domain_kinds(hosts: Hosts) -> list[DomainKind]:
    f = hosts.fabric
    groups: dict[tuple[str, str, int, int], list[str]] = {}
    out_bw: dict[tuple, float] = {}
    for inst, hs in hosts.domain_hosts.items():
        model = f.devices[hs[0]].model
        key = (hosts.domain_kind.get(inst, ""), model, len(hs), hosts.domain_accelerators[inst])
        groups.setdefault(key, []).append(inst)
        bw = min(_scaleout(hosts, h) for h in hs)
        out_bw[key] = min(out_bw.get(key, bw), bw)
    return [
        DomainKind(kind, model, len(insts), n_hosts, acc, _scaleup(f, model), out_bw[(kind, model, n_hosts, acc)])
        for (kind, model, n_hosts, acc), insts in sorted(groups.items())
    ]


def _reach(hosts: Hosts) -> list[dict[str, Any]]:
    """Per fabric: how many whole domains sit in one leaf group, one spine group, the fabric."""
    out = []
    for name, fh in hosts.fabrics.items():

        def whole(members: set[int]) -> int:
            return sum(1 for hs in hosts.domain_hosts.values() if set(hs) <= members)

        leaf = [whole(set(g.hosts)) for g in fh.leaf_groups]
        spine = [whole({h for k in sg.leaf_groups for h in fh.leaf_groups[k].hosts}) for sg in fh.spine_groups]
        total = whole(set(fh.nics))
        out.append(
            {
                "fabric": name,
                "rail_optimized": fh.rail_optimized,
                "leaf_groups": len(fh.leaf_groups),
                "spine_groups": len(fh.spine_groups),
                "domains_per_leaf_group": min(leaf, default=0),
                "domains_per_spine_group": min(spine, default=total),
                "domains": total,
            }
        )
    return out


def _hops(span: int, reach: dict[str, Any]) -> str:
    if span <= reach["domains_per_leaf_group"]:
        return "one leaf group: 1 switch hop" + (" per rail" if reach["rail_optimized"] else "")
    if span <= reach["domains_per_spine_group"] and reach["spine_groups"] > 1:
        return "one spine group (pod): 3 switch hops"
    if span <= reach["domains"]:
        return "across the fabric: through the top tier"
    return f"more domains than the fabric joins ({reach['domains']})"


def workload_report(w: Workload, kinds: list[DomainKind], reach: list[dict[str, Any]]) -> dict[str, Any]:
    """Needed vs available bandwidth per dimension, against the tightest domain kind."""
    smallest = min(kinds, key=lambda k: k.accelerators) if kinds else None
    par = w.parallelism
    tp_ep = par.tp * par.ep
    dims = []
    for dim in DIMENSIONS:
        need = w.needed_gbytes_s(dim)
        if need is None:
            continue
        scaleup = dim in SCALEUP_DIMENSIONS
        have = None
        if smallest is not None:
            have = min(k.scaleup_gbytes if scaleup else k.scaleout_gbytes for k in kinds)
        derived = dim == "dp" and getattr(w.bytes_per_step, dim) is None
        dims.append(
            {
                "dimension": dim,
                "size": getattr(par, dim),
                "bytes_per_step": rounded(w.step_bytes(dim) or 0.0),
                "bytes_from": "2 x parameters x bytes_per_parameter / (tp x pp)" if derived else "declared",
                "network": "scale-up" if scaleup else "scale-out",
                "needed_gbytes_s": rounded(need),
                "available_gbytes_s": None if have is None else rounded(have),
                "enough": None if have is None else have >= need,
            }
        )
    span = par.pp * par.dp
    have_out = min((k.scaleout_gbytes for k in kinds), default=0.0)
    spill = None if smallest is None or tp_ep <= smallest.accelerators else _spill(w, smallest.accelerators, have_out, reach)
    return {
        "name": w.name,
        "step_time_s": w.step_time_s,
        "comm_budget": w.comm_budget,
        "budget_s": rounded(w.budget_s),
        "tp_x_ep": tp_ep,
        "largest_tp_x_ep": smallest.accelerators if smallest else None,
        "tp_ep_fits": None if smallest is None else tp_ep <= smallest.accelerators,
        "pp_x_dp_domains": span,
        "pp_dp_reach": {r["fabric"]: _hops(span, r) for r in reach},
        "dimensions": dims,
        "spill": spill,
    }


def _spill(w: Workload, domain: int, have_out: float, reach: list[dict[str, Any]]) -> dict[str, Any]:
    """What of TP and EP leaves a domain of ``domain`` accelerators, and the scale-out load with it."""
    par = w.parallelism
    # Domains one TP x EP group spans; EP ranks that share a domain (1 once TP alone fills it).
    spans = -(-par.tp * par.ep // domain)
    ep_local = max(1, min(par.ep, domain // par.tp))
    shares = {"tp": 1.0 if par.tp > domain else 0.0, "ep": (par.ep - ep_local) / (par.ep - 1) if par.ep > 1 else 0.0}
    spilled = []
    spill_need = 0.0
    for dim, share in shares.items():
        need = w.needed_gbytes_s(dim)
        if share <= 0:
            continue
        spill_need += (need or 0.0) * share
        spilled.append(
            {
                "dimension": dim,
                "share": rounded(share),
                "needed_gbytes_s": None if need is None else rounded(need * share),
            }
        )
    others = sum(w.needed_gbytes_s(d) or 0.0 for d in SCALEOUT_DIMENSIONS)
    joined = max((r["domains"] for r in reach), default=0)
    return {
        "domains_spanned": spans,
        "ep_per_domain": ep_local,
        "dimensions": spilled,
        "needed_gbytes_s": rounded(spill_need),
        "scaleout_total_gbytes_s": rounded(spill_need + others),
        "available_gbytes_s": rounded(have_out),
        "largest_fabric_domains": joined,
        "carried": have_out > 0 and joined >= spans,
        "enough": have_out >= spill_need + others,
    }


def placement_report(blueprint: Blueprint, fabric: Fabric) -> dict[str, Any]:
    hosts = cached_host_facts(fabric, blueprint)
    kinds = domain_kinds(hosts)
    reach = _reach(hosts)
    return {
        "domains": [
            {
                "kind": k.kind,
                "model": k.model,
                "instances": k.instances,
                "hosts_per_domain": k.hosts,
                "accelerators_per_domain": k.accelerators,
                "largest_tp_x_ep": k.accelerators,
                "scaleup_gbytes_per_accelerator": rounded(k.scaleup_gbytes),
                "scaleout_gbytes_per_accelerator": rounded(k.scaleout_gbytes),
                "scaleup_to_scaleout": rounded(k.scaleup_gbytes / k.scaleout_gbytes) if k.scaleout_gbytes else None,
            }
            for k in kinds
        ],
        "fabrics": reach,
        "workloads": [workload_report(w, kinds, reach) for w in blueprint.workloads],
    }


def placement_text(p: dict[str, Any] | None) -> str:
    """The placement section of ``snc explain`` (plain text, appended to the fabric report)."""
    if not p or not p["domains"]:
        return ""
    from ..util.templating import render_template

    return render_template("placement.txt.j2", p=p)
