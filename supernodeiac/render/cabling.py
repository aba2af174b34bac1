"""Cabling list CSV: one row per cable (and connector), both ends by row/rack/U/device/port."""

from __future__ import annotations

from collections.abc import Iterator

from ..cable_naming import cable_id_format
from . import RENDERERS, Artifacts, RenderContext
from .csv_safe import CsvWriter
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
    out = CsvWriter(COLUMNS)
    out.text_rows(_rows(ctx))  # joined by commas where nothing needs quoting or neutralising
    return {"cabling/cables.csv": out.getvalue()}


def _rows(ctx: RenderContext) -> Iterator[list[str]]:
    """The CSV rows (text fields only) in cable-ID order."""
    f, media = ctx.fabric, ctx.catalogue.media
    # Per-device columns (row, rack, U, name) and port layouts, built once: a device ends
    # many cables. Lengths and rates repeat across thousands of links, so their text is memoised.
    racks = f.racks
    ends: list[tuple[str, str, str, str]] = []
    for d in f.devices:
        r = racks[d.rack] if d.rack >= 0 else None
        u = str(d.u) if d.u else ""
        ends.append((r.row, r.name, u, d.name) if r else ("", "", u, d.name))
    layouts = [f.layouts[d.model] for d in f.devices]
    fibres = {name: m.fibre for name, m in media.items()}
    lengths: dict[tuple[str, float], tuple[str, str]] = {}
    rates: dict[tuple[float, int], tuple[str, str, str]] = {}
    label = cable_id_format(ctx.blueprint.naming.cable_label)  # same fields as the cable ID, formatted positionally
    t = f.links
    ids, specs = t.ids(), t.specs
    col_a, col_ap, col_b, col_bp, col_len, col_spec = t.a, t.a_port, t.b, t.b_port, t.length_m, t.spec
    for i in t.id_order():
        a, b, spec = col_a[i], col_b[i], specs[col_spec[i]]
        medium, length_m = spec.medium, col_len[i]
        a_row, a_rack, a_u, a_name = ends[a]
        b_row, b_rack, b_u, b_name = ends[b]
        a_port, b_port = layouts[a].name(col_ap[i]), layouts[b].name(col_bp[i])
        length = lengths.get((medium, length_m))
        if length is None:
            length = lengths[(medium, length_m)] = (
                _fmt(ordered_length(ctx.catalogue, medium, length_m)),
                f"{length_m:.2f}",
            )
        rate = rates.get((spec.lane_gbps, spec.lanes))
        if rate is None:
            rate = rates[(spec.lane_gbps, spec.lanes)] = (_fmt(spec.lane_gbps), str(spec.lanes), _fmt(spec.gbps))
        yield [
            ids[i],
            label(spec.fabric, a_name, a_port, b_name, b_port),
            spec.fabric,
            spec.kind,
            a_row,
            a_rack,
            a_u,
            a_name,
            a_port,
            b_row,
            b_rack,
            b_u,
            b_name,
            b_port,
            medium,
            fibres.get(medium, ""),
            length[0],
            length[1],
            rate[0],
            rate[1],
            rate[2],
        ]
