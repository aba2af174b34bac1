"""Connector map (orthogonal domains) and cartridge map (switched domains), one row per board pair.

A row is one orthogonal connector (compute board b mates switch board s) or one cartridge bundle
(compute tray to switch tray): both ends by rack and U, how many accelerator links and lanes it
carries, and which accelerator link lands on which chip port, compactly as
``a0l0>c0p0 a1l0>c0p1 ...`` (port names of the two ends).
"""

from __future__ import annotations

from collections import defaultdict

from ..fabric import Link
from . import RENDERERS, Artifacts, RenderContext
from .csv_safe import CsvWriter

COLUMNS = [
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
            rows.append(
                (
                    (dc.coord("domain", dc.group), dc.coord("supernode", 0), board, switch),
                    [
                        dc.coord("domain", dc.group),
                        dc.coord("supernode", 0) + 1,
                        f"cb{board + 1:02d}-sb{switch + 1:02d}",
                        dc.name,
                        f.racks[dc.rack].name if dc.rack >= 0 else "",
                        dc.u or "",
                        ds.name,
                        f.racks[ds.rack].name if ds.rack >= 0 else "",
                        ds.u or "",
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
        table = CsvWriter(COLUMNS)
        table.writerows(row for _, row in rows)
        out[path] = table.getvalue()
    return out
