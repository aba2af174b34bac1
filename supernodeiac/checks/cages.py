"""One plug per cage: every cage holds one cable end or one module, whatever the policy pinned.

The media policy never puts two plugs into one cage (``build.cages`` settles that); a pin, a
per-tier pin or a catalogue override can. This check reports such cages (rule ``one-plug``),
in bulk (``cage_plan.plug_problems``), once per kind of problem, medium and origin, naming the
cage as printed and where its ports go.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..facts.cage_plan import FANOUT, MIXED, REASONS, SPLIT, LinkCages, link_cages, link_plug_problems
from ..findings import Finding, error
from .base import CHECKS, CheckContext

_HINT = {
    MIXED: "a cage takes one plug: give all its ports one medium (drop the pin, or pin the same medium on both tiers)",
    FANOUT: "a straight cable joins two cages port for port; ports going to several devices need a module per cage "
    "(optics: pin sr/dr or let the policy choose) or a splitter",
    SPLIT: "each splitter leg needs a single-port cage of its own: let the policy choose, or use optics",
}


@CHECKS.register("one-plug")
def check_one_plug(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    t = f.links
    if not len(t):
        return
    problems = link_plug_problems(f, ctx.catalogue.media)  # made by the build's settling when nothing moved since
    if not problems.any():
        return
    cages = link_cages(f)
    reported: set[tuple] = set()
    specs = t.specs
    for i in np.flatnonzero(problems).tolist():
        reason = int(problems[i])
        spec = specs[t.spec[i]]
        key = (reason, spec.medium, spec.origin)
        if key in reported:
            continue
        reported.add(key)
        yield _finding(ctx, cages, problems, i, reason)


def _finding(ctx: CheckContext, cages: LinkCages, problems: np.ndarray, i: int, reason: int) -> Finding:
    f = ctx.fabric
    t = f.links
    spec = t.specs[t.spec[i]]
    # The cage to name: the A end's, unless only the B end's is at fault.
    cage = int(cages.a[i])
    same = np.flatnonzero((cages.a == cage) | (cages.b == cage))
    device, port = t.a[i], t.a_port[i]
    layout = f.layouts[f.devices[device].model]
    label = layout.cage_label(layout.port_cages[port])
    parts = []
    for j in same.tolist()[:4]:
        far, far_port = (t.b[j], t.b_port[j]) if cages.a[j] == cage else (t.a[j], t.a_port[j])
        near_port = t.a_port[j] if cages.a[j] == cage else t.b_port[j]
        medium = t.specs[t.spec[j]].medium
        parts.append(f"{layout.physical_name(near_port)} -> {f.devices[far].name} {f.port_name(far, far_port)} ({medium})")
    more = f", and {len(same) - 4} more" if len(same) > 4 else ""
    return error(
        "one-plug",
        f"{f.devices[device].name} {label}: {REASONS[reason]}: " + "; ".join(parts) + more + f" ({t.id_of(i)})",
        spec.origin,
        _HINT[reason],
    )
