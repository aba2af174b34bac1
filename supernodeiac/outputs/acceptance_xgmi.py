"""The xGMI copy stage of the acceptance plan (snc render: ``acceptance/xgmi.tsv`` and
``xgmi.sh``): per host of a switchless accelerator mesh whose vendor has a copy test
(``copy_tool`` in catalog/data/collectives.yaml: TransferBench for AMD), what every GPU pair must
copy one way. A pair of the mesh has ``internal_mesh.links_per_pair`` links, each at the
accelerator's per-direction rate (``link_gbps`` / 8 GB/s; facts/mesh.py), so ``pair_gbytes`` is their sum and
``min_pair_gbytes`` is ``acceptance.scaleup_copy_min_fraction`` of it. ``xgmi.sh RESULTS`` runs
TransferBench's p2p preset (GPU executors only, unidirectional) on each host into
``xgmi/<check>.txt``; ``snc check-results`` grades every pair (verify/check_xgmi.py).
"""

from __future__ import annotations

from ..catalog.collectives import model_figures
from ..facts.mesh import mesh_facts
from ..util.templating import render_template
from .base import Artifacts, RenderContext
from .csv_safe import tsv_lines

XGMI_COLUMNS = [
    "check",
    "host",
    "accelerator",
    "tool",
    "accelerators",
    "links_per_pair",
    "pair_gbytes",
    "min_pair_gbytes",
]


def xgmi_artifacts(ctx: RenderContext) -> tuple[Artifacts, dict]:
    f = ctx.fabric
    mesh = mesh_facts(f)
    figures = model_figures()
    frac = ctx.blueprint.acceptance.scaleup_copy_min_fraction
    # The mesh host models with a copy test, first: most designs have none and stop here.
    tested: dict[str, tuple[str, str, int, int, float]] = {}
    for name, board in mesh.boards.items():
        vendor = figures.vendor_of(board.accelerator)
        if board.accelerators >= 2 and vendor is not None and vendor.copy_tool:
            tested[name] = (board.accelerator, vendor.copy_tool, board.accelerators, board.links_per_pair, board.link_gbytes)
    if not tested:
        return {}, {}
    rows: list[tuple[str, str, str, str, int, int, float]] = []
    for h in sorted(h for name in tested for h in mesh.hosts.get(name, ())):
        d = f.devices[h]
        rows.append((f"xgmi-{d.name}", d.name, *tested[d.model]))
    if not rows:
        return {}, {}
    columns = [
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
        [str(r[4]) for r in rows],
        [str(r[5]) for r in rows],
        [f"{r[5] * r[6]:.6g}" for r in rows],
        [f"{r[5] * r[6] * frac:.6g}" for r in rows],
    ]
    shapes = sorted({(r[2], r[4], r[5], r[5] * r[6]) for r in rows})
    summary = {
        "hosts": len(rows),
        # ordered pairs: the copy runs each pair both ways, one direction at a time
        "pairs": sum(2 * mesh.boards[name].pairs * len(mesh.hosts.get(name, ())) for name in tested),
        "fraction": frac,
        "tools": sorted({r[3] for r in rows}),
        "shapes": [
            {
                "accelerator": a,
                "accelerators": n,
                "links_per_pair": k,
                "pair_gbytes": f"{g:g}",
                "min_pair_gbytes": f"{g * frac:g}",
            }
            for a, n, k, g in shapes
        ],
    }
    tsv = ("\t".join(XGMI_COLUMNS) + "\n" + tsv_lines(columns)).encode()
    script = render_template(
        "acceptance-xgmi.sh.j2", blueprint=ctx.blueprint.metadata.name, s=summary, columns=len(XGMI_COLUMNS)
    ).encode()
    return {"acceptance/xgmi.tsv": tsv, "acceptance/xgmi.sh": script}, summary
