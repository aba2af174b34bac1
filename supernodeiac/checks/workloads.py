"""Declared workloads against the design (``workloads:``; sizing rule of shared/domain.md).

Per workload and parallel dimension: the bandwidth each accelerator needs (bytes per step over
the communication budget) against what the network carrying that dimension gives per
accelerator (TP/EP: the scale-up domain; PP/DP: the scale-out NICs). Not enough is an error with
both numbers; a TP x EP group larger than the smallest scale-up domain is an error (its traffic
would leave the domain); a workload that fits is an info finding with its numbers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..facts.placement import placement_report
from ..findings import Finding, error, info
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
        if not r["tp_ep_fits"]:
            ok = False
            yield error(
                "workload-bandwidth",
                f"workload {w.name}: TP x EP = {r['tp_x_ep']} does not fit in a scale-up domain of "
                f"{r['largest_tp_x_ep']} accelerators: its every-layer traffic would cross the scale-out network",
                path + ("parallelism",),
                f"TP x EP <= {r['largest_tp_x_ep']}, or a larger scale-up domain",
            )
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
