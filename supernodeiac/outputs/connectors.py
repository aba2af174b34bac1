"""Connector map (orthogonal domains) and cartridge map (switched domains), one row per board pair.

A row is one orthogonal connector (compute board b mates switch board s) or one cartridge bundle
(compute tray to switch tray): how many accelerator links and lanes it carries, and which
accelerator link lands on which chip port, compactly as ``a0l0>c0p0 a1l0>c0p1 ...`` (port names
of the two ends).

An orthogonal connector sits where a front slot crosses a rear slot of the supernode's chassis:
its row gives the rack, the chassis and the two slots (``F03``, ``R05``), and is named by them
(``F03-R05``); a chassis has no U per board. A cartridge bundle joins trays stacked in the rack:
its row gives both ends by rack and U.
"""

from __future__ import annotations

from collections import defaultdict

from ..fabric import Link
from .base import RENDERERS, Artifacts, RenderContext
from .csv_safe import CsvWriter

CARTRIDGE_COLUMNS = [
    "domain",
    "supernode",
    "connector",
    "compute_board",
    "compute_rack",
    "compute_u",
    "switch_board",
    "switch_rack",
    "switch_u",
    "links",
    "lanes",
    "gbps",
    "medium",
    "length_m",
    "map",
]
CONNECTOR_COLUMNS = [
    "domain",
    "supernode",
    "connector",
    "rack",
    "chassis",
    "compute_slot",
    "compute_board",
    "switch_slot",
    "switch_board",
    *CARTRIDGE_COLUMNS[9:],
]
COLUMNS = {"connector": CONNECTOR_COLUMNS, "cartridge": CARTRIDGE_COLUMNS}

FILES = {"connector": "connectors/connectors.csv", "cartridge": "connectors/cartridges.csv"}


@RENDERERS.register("connectors")
def render_connectors(ctx: RenderContext) -> Artifacts:
    f = ctx.fabric
    devices, models = f.devices, f.models
    bundles: dict[str, dict[tuple[int, int], list[Link]]] = {kind: defaultdict(list) for kind in FILES}
    t = f.links
    wanted = [spec.kind in FILES for spec in t.specs]
    for link in t.links([i for i, s in enumerate(t.spec) if wanted[s]]):
        a, b = link.a, link.b
        if models[devices[a].model].accelerators is None:
            a, b = b, a
        bundles[link.kind][(a, b)].append(link)
    out: Artifacts = {}
    for kind, path in FILES.items():
        if not bundles[kind]:
            continue
        rows = []
        for (cb, sb), links in bundles[kind].items():
            dc, ds = devices[cb], devices[sb]
            board, switch = dc.coord("board", 0), ds.coord("switch_board", 0)
            pairs = []
            for link in links:
                cp, sp = (link.a_port, link.b_port) if link.a == cb else (link.b_port, link.a_port)
                pairs.append((cp, f"{f.port_name(cb, cp)}>{f.port_name(sb, sp)}"))
            pairs.sort()
            media = sorted({link.medium for link in links})
            rack_c = f.racks[dc.rack].name if dc.rack >= 0 else ""
            if kind == "connector" and dc.slot and ds.slot:
                ends = [f"{dc.slot}-{ds.slot}", rack_c, devices[dc.chassis].name, dc.slot, dc.name, ds.slot, ds.name]
            elif kind == "connector":  # boards outside a chassis (a hand-made Fabric): board numbers
                ends = [f"cb{board + 1:02d}-sb{switch + 1:02d}", rack_c, "", "", dc.name, "", ds.name]
            else:
                ends = [f"cb{board + 1:02d}-sb{switch + 1:02d}", dc.name, rack_c, str(dc.u or ""), ds.name]
                ends += [f.racks[ds.rack].name if ds.rack >= 0 else "", str(ds.u or "")]
            rows.append(
                (
                    (dc.coord("domain", dc.group), dc.coord("supernode", 0), board, switch),
                    [
                        dc.coord("domain", dc.group),
                        dc.coord("supernode", 0) + 1,
                        *ends,
                        len(links),
                        sum(link.lanes for link in links),
                        f"{sum(link.gbps for link in links):g}",
                        "+".join(media),
                        f"{max(link.length_m for link in links):.2f}",
                        " ".join(text for _, text in pairs),
                    ],
                )
            )
        rows.sort(key=lambda r: r[0])
        table = CsvWriter(COLUMNS[kind])
        table.writerows(row for _, row in rows)
        out[path] = table.getvalue()
    return out
