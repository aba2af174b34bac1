"""The switchless scale-up meshes in `snc explain`: per host model whose accelerators are wired
point to point on the board (facts/mesh.py), the hosts, the pairs and board links (traces, not
cables: no cabling row, BOM line or label) and the scale-up bandwidth per pair and per
accelerator."""

from __future__ import annotations

from typing import Any

from ..facts.mesh import mesh_facts
from ..util.number_format import rounded
from .base import DEPLOYMENT, Inputs


@DEPLOYMENT.register("meshes")
def meshes_section(inp: Inputs) -> dict[str, Any] | None:
    facts = mesh_facts(inp.fabric)
    if not facts.hosts:
        return None
    boards = []
    for model, hosts in sorted(facts.hosts.items()):
        b = facts.boards[model]
        boards.append(
            {
                "model": model,
                "accelerator": b.accelerator,
                "hosts": len(hosts),
                "accelerators": b.accelerators,
                "pairs": b.pairs,
                "links_per_pair": b.links_per_pair,
                "links": b.links,
                "pair_gbytes": rounded(b.pair_gbytes),
                "accelerator_gbytes": rounded(b.accelerator_gbytes),
                "accelerator_bidir_gbytes": rounded(b.accelerator_bidir_gbytes),
            }
        )
    return {"hosts": facts.host_count, "pairs": facts.pairs, "links": facts.links, "boards": boards}
