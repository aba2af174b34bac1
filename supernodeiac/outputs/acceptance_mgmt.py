"""The management network's stage of the acceptance plan (snc render: ``acceptance/management/``).

Every uplink from a rack (or out-of-band) management switch to the aggregation layer is a test:
``uplinks.tsv`` lists each with both ends (switch, OS interface name), its line rate, its cable,
the address to ping over it (the aggregation end's /31 in the routed design, bound to the uplink;
the aggregation switch's management address in the flat one) and the loss allowed
(``acceptance.uplink_max_loss``). ``uplinks.sh`` reads each end's state, negotiated speed and
error counters, pings, and reads the counters again; ``snc check-results`` fails an uplink that
is down, trained below its line rate, counted errors under the pings, or lost more than allowed.
"""

from __future__ import annotations

from ..facts.acceptance_plan import cable_labels
from ..facts.switch_facts import facts_for
from ..util.templating import render_template
from .base import Artifacts, RenderContext
from .csv_safe import tsv_lines

UPLINK_COLUMNS = [
    "test",
    "switch",
    "switch_port",
    "peer",
    "peer_port",
    "line_gbps",
    "cable",
    "label",
    "target",  # the address pinged over the uplink ("" where the plan has none: state and counters only)
    "bind",  # the interface ping binds to (routed design: the uplink itself), or ""
    "max_loss",
]


def uplink_artifacts(ctx: RenderContext) -> tuple[Artifacts, dict]:
    f, bp = ctx.fabric, ctx.blueprint
    facts = facts_for(ctx)
    rows: list[tuple[str, ...]] = []
    links: list[int] = []
    aggs = {d.index for d in f.devices if d.role == "mgmt-agg"}
    for d in f.devices:
        if d.role not in ("mgmt", "mgmt-oob"):
            continue
        sw = facts.switch(d.index)
        n = 0
        for iface in sw.interfaces:
            if iface.peer not in aggs or iface.role == "mgmt" or iface.network != "mgmt":
                continue
            if f.layouts[f.devices[iface.peer].model].port_roles[iface.peer_port] == "mgmt":
                continue  # the aggregation switch's own management port, not an uplink
            n += 1
            peer = facts.switch(iface.peer)
            if iface.peer_address:
                target, bind = iface.peer_address.split("/")[0], iface.name
            else:
                target, bind = (peer.mgmt_address or "").split("/")[0], ""
            rows.append(
                (
                    f"uplink-{d.name}-{n}",
                    d.name,
                    iface.name,
                    iface.peer_name,
                    iface.peer_port_name,
                    f"{iface.gbps:g}",
                    "",
                    "",
                    target,
                    bind,
                    f"{bp.acceptance.uplink_max_loss:g}",
                )
            )
            links.append(iface.link)
    if not rows:
        return {}, {}
    ids = f.links.ids()
    labels = cable_labels(f, bp, links)
    rows = [(*r[:6], ids[i], label, *r[8:]) for r, i, label in zip(rows, links, labels, strict=True)]
    columns = [list(c) for c in zip(*rows, strict=True)]
    tsv = ("\t".join(UPLINK_COLUMNS) + "\n" + tsv_lines(columns)).encode()
    summary = {
        "uplinks": len(rows),
        "switches": len({r[1] for r in rows}),
        "gbps": sorted({float(r[5]) for r in rows}),
        "pinged": sum(1 for r in rows if r[8]),
        "max_loss": bp.acceptance.uplink_max_loss,
    }
    script = render_template(
        "acceptance-uplinks.sh.j2", blueprint=bp.metadata.name, s=summary, columns=len(UPLINK_COLUMNS)
    ).encode()
    return {"acceptance/management/uplinks.tsv": tsv, "acceptance/management/uplinks.sh": script}, summary
