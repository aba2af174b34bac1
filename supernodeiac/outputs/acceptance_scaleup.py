"""The scale-up stage of the acceptance plan, rendered (snc render: ``acceptance/scaleup.tsv``
and ``scaleup.sh``): per host of every scale-up domain, the vendor's link check
(facts/acceptance_scaleup.py) with the links per accelerator and the per-link rate it must show.
``scaleup.sh RESULTS before|after`` records the tool's link status and error counters on every
host; ``snc check-results`` reads them (nvidia-smi's output; other tools' are read by hand).
"""

from __future__ import annotations

from ..facts.acceptance_scaleup import scaleup_checks
from ..util.templating import render_template
from .base import Artifacts, RenderContext
from .csv_safe import tsv_lines

SCALEUP_COLUMNS = [
    "check",
    "domain",
    "host",
    "accelerator",
    "tool",  # nvidia-smi, amd-smi, or none (no link check known: the vendor's own tool)
    "accelerators",
    "links",
    "link_gbytes",
    "min_link_gbytes",
]


def scaleup_artifacts(ctx: RenderContext) -> tuple[Artifacts, dict]:
    checks = scaleup_checks(ctx.fabric, ctx.blueprint)
    if not checks:
        return {}, {}
    frac = ctx.blueprint.acceptance.scaleup_link_min_fraction
    names = ctx.fabric.devices
    columns = [
        [c.id for c in checks],
        [c.domain for c in checks],
        [names[c.host].name for c in checks],
        [c.accelerator for c in checks],
        [c.tool or "none" for c in checks],
        [str(c.accelerators) for c in checks],
        [str(c.links) for c in checks],
        [f"{c.link_gbytes:.6g}" for c in checks],
        [f"{c.link_gbytes * frac:.6g}" for c in checks],
    ]
    tools: dict[str, dict] = {}
    for c in checks:
        t = tools.setdefault(
            c.tool or "none",
            {"tool": c.tool or "none", "hosts": 0, "domains": set(), "models": set(), "libraries": set(), "links": set()},
        )
        t["hosts"] += 1
        t["domains"].add(c.domain)
        t["models"].add(c.accelerator)
        t["links"].add((c.links, round(c.link_gbytes, 3)))
        if c.library:
            t["libraries"].add(c.library)
    summary = {
        "hosts": len(checks),
        "fraction": frac,
        "tools": [
            {
                **t,
                "domains": len(t["domains"]),
                "models": sorted(t["models"]),
                "libraries": sorted(t["libraries"]),
                "links": [f"{n} x {g:g} GB/s" for n, g in sorted(t["links"])],
            }
            for t in sorted(tools.values(), key=lambda t: t["tool"])
        ],
    }
    tsv = ("\t".join(SCALEUP_COLUMNS) + "\n" + tsv_lines(columns)).encode()
    script = render_template(
        "acceptance-scaleup.sh.j2", blueprint=ctx.blueprint.metadata.name, s=summary, columns=len(SCALEUP_COLUMNS)
    ).encode()
    return {"acceptance/scaleup.tsv": tsv, "acceptance/scaleup.sh": script}, summary
