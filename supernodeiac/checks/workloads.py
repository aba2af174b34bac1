"""Declared workloads against the design (``workloads:``; sizing rule of docs/blueprint.md).

Per workload and parallel dimension: the bandwidth each accelerator needs (bytes per step over
the communication budget) against what the network carrying that dimension gives per
accelerator (TP/EP: the scale-up domain; PP/DP: the scale-out NICs). Not enough is an error with
both numbers. A TP x EP group larger than the smallest scale-up domain spills onto the scale-out
network (facts/placement.py says which share): a warning with the scale-out GB/s it needs beside
PP and DP against what the NICs give, an error where they cannot carry it (no scale-out fabric
reaches the hosts, no fabric joins the domains the group spans, or too little bandwidth). A
workload that fits is an info finding with its numbers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.placement import placement_report
from ..findings import Finding, error, info, warning
from .base import CHECKS, CheckContext


def _fmt(x: float) -> str:
    return f"{x:,.4g}"


@CHECKS.register("workload-bandwidth")
def check_workloads(ctx: CheckContext) -> Iterator[Finding]:
    bp = ctx.blueprint
    if not bp.workloads:
        return
    report = placement_report(bp, ctx.fabric)
    if not report["domains"]:
        yield error("workload-bandwidth", "workloads are declared but the design has no accelerators", ("workloads",))
        return
    for i, (w, r) in enumerate(zip(bp.workloads, report["workloads"], strict=True)):
        path = ("workloads", i)
        ok = True
        spill = r["spill"]
        if spill is not None:
            ok = False
            yield from _spilled(w.name, r, spill, path + ("parallelism",))
        for d in r["dimensions"]:
            if d["enough"] is not False:
                continue
            ok = False
            dim = d["dimension"]
            where = path + ("bytes_per_step", dim) if d["bytes_from"] == "declared" else path + ("parameters",)
            yield error(
                "workload-bandwidth",
                f"workload {w.name}: {dim.upper()} moves {_fmt(d['bytes_per_step'] / 1e9)} GB per step per accelerator in "
                f"{_fmt(r['budget_s'])} s ({_fmt(w.comm_budget * 100)} % of a {_fmt(w.step_time_s)} s step): it needs "
                f"{_fmt(d['needed_gbytes_s'])} GB/s, the {d['network']} network gives {_fmt(d['available_gbytes_s'])} GB/s "
                "per accelerator per direction",
                where,
                "faster or more NICs per accelerator, a larger communication budget, or keep this traffic in the scale-up domain"
                if d["network"] == "scale-out"
                else "a faster scale-up domain or a larger communication budget",
            )
        if ok:
            parts = ", ".join(
                f"{d['dimension'].upper()} {_fmt(d['needed_gbytes_s'])} of {_fmt(d['available_gbytes_s'])} GB/s"
                for d in r["dimensions"]
            )
            yield info("workload-bandwidth", f"workload {w.name} fits: {parts} (per accelerator)", path)


def _spilled(name: str, r: dict, spill: dict, where: tuple) -> Iterator[Finding]:
    head = (
        f"workload {name}: TP x EP = {r['tp_x_ep']} spans {spill['domains_spanned']} scale-up domains of "
        f"{r['largest_tp_x_ep']} accelerators"
    )
    if spill["available_gbytes_s"] <= 0:
        yield error(
            "workload-bandwidth",
            f"{head}, and no scale-out fabric reaches its hosts: its every-layer traffic has no network between domains",
            where,
            f"TP x EP <= {r['largest_tp_x_ep']}, or a scale-out fabric with the hosts as endpoints",
        )
        return
    if spill["domains_spanned"] > spill["largest_fabric_domains"]:
        yield error(
            "workload-bandwidth",
            f"{head}, more than any scale-out fabric joins ({spill['largest_fabric_domains']} domains)",
            where,
            f"TP x EP <= {r['largest_tp_x_ep'] * spill['largest_fabric_domains']}, or a fabric joining more domains",
        )
        return
    parts = [
        f"{d['dimension'].upper()} sends {_fmt(d['share'] * 100)} % of its bytes to other domains ("
        + (
            f"no bytes_per_step.{d['dimension']}: not sized"
            if d["needed_gbytes_s"] is None
            else f"{_fmt(d['needed_gbytes_s'])} GB/s"
        )
        + ")"
        for d in spill["dimensions"]
    ]
    numbers = (
        f"{'; '.join(parts)}; with PP and DP the scale-out network needs {_fmt(spill['scaleout_total_gbytes_s'])} GB/s "
        f"of the {_fmt(spill['available_gbytes_s'])} GB/s it gives per accelerator per direction"
    )
    if not spill["enough"]:
        yield error(
            "workload-bandwidth",
            f"{head}: {numbers}",
            where,
            "faster or more NICs per accelerator, a larger communication budget, or a TP x EP group that fits a domain",
        )
        return
    yield warning(
        "workload-bandwidth",
        f"{head}: {numbers}",
        where,
        f"it fits the scale-out bandwidth; TP x EP <= {r['largest_tp_x_ep']} keeps it on the scale-up network",
    )
