"""Predicted nccl-tests bus bandwidth in `snc explain`: per natural scale of the deployment (each
shape of scale-up domain, one rail per fabric, each fabric whole) and per collective, the
algorithm NCCL runs at large sizes, the plateau busbw, what bounds it and the knee
(``facts/collectives.py``; its error against published measurements: docs/acceptance.md)."""

from __future__ import annotations

from typing import Any

from ..facts.collectives import COLLECTIVES, natural_scales, predict
from ..util.number_format import rounded
from .base import DEPLOYMENT, Inputs


@DEPLOYMENT.register("collectives")
def collectives_section(inp: Inputs) -> list[dict[str, Any]] | None:
    scales = natural_scales(inp.fabric, inp.blueprint)
    if not scales:
        return None
    out = []
    for s in scales:
        rows = []
        for coll in COLLECTIVES:
            p = predict(coll, s.scale)
            rows.append(
                {
                    "collective": coll,
                    "algorithm": p.algorithm,
                    "busbw_gbytes": rounded(p.busbw),
                    "algbw_gbytes": rounded(p.algbw),
                    "bound": p.bound,
                    "knee_bytes": p.knee_bytes,
                    "latency_us": rounded(p.latency_us),
                }
            )
        out.append(
            {
                "stage": s.stage,
                "group": s.group,
                "instances": s.count,
                "accelerator": s.accelerator,
                "tool": s.tool or None,
                "ranks": s.scale.ranks,
                "domains": s.scale.domains,
                "scaleup_gbytes": rounded(s.scale.scaleup_gbytes),
                "nic_gbytes_per_rank": rounded(s.scale.nic_gbytes),
                "nvls": s.scale.nvls,
                # the domain's shape, which picks the NVLS figure (board, switched)
                "domain_kind": s.scale.domain_kind or None,
                "collectives": rows,
            }
        )
    return out
