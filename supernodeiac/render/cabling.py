"""Cabling list CSV: one row per cable (and connector), both ends by row/rack/U/device/port."""

from __future__ import annotations

import csv
import io

from . import RENDERERS, Artifacts, RenderContext
from .stock import ordered_length

COLUMNS = [
    "cable_id",
    "label",
    "fabric",
    "kind",
    "a_row",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_row",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "medium",
    "fibre",
    "length_m",
    "routed_m",
    "lane_gbps",
    "lanes",
    "gbps",
]


def _fmt(x: float) -> str:
    return f"{x:g}"


@RENDERERS.register("cabling")
def render_cabling(ctx: RenderContext) -> Artifacts:
    f, bp, media = ctx.fabric, ctx.blueprint, ctx.catalogue.media
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    racks, devices = f.racks, f.devices
    label = bp.naming.cable_label
    for link in sorted(f.links, key=lambda k: k.id):
        a, b = devices[link.a], devices[link.b]
        ra = racks[a.rack] if a.rack >= 0 else None
        rb = racks[b.rack] if b.rack >= 0 else None
        a_port, b_port = f.port_name(link.a, link.a_port), f.port_name(link.b, link.b_port)
        medium = media.get(link.medium)
        w.writerow(
            [
                link.id,
                label.format(fabric=link.fabric, a=a.name, a_port=a_port, b=b.name, b_port=b_port),
                link.fabric,
                link.kind,
                ra.row if ra else "",
                ra.name if ra else "",
                a.u or "",
                a.name,
                a_port,
                rb.row if rb else "",
                rb.name if rb else "",
                b.u or "",
                b.name,
                b_port,
                link.medium,
                medium.fibre if medium else "",
                _fmt(ordered_length(ctx.catalogue, link)),
                f"{link.length_m:.2f}",
                _fmt(link.lane_gbps),
                link.lanes,
                _fmt(link.gbps),
            ]
        )
    return {"cabling/cables.csv": buf.getvalue().encode()}
