"""Cabling list CSV: one row per cable (and connector), both ends by row/rack/U/device/port.

Beside the OS port names each end carries its cage as printed (``OSFP 3``) and its physical port
(``OSFP 3 port 2``), and each row the orderable part (the cable assembly at its ordered length, or
the fibre cord of a transceiver link with the module at each end), and one label text per end
(``naming.end_label``, TIA-606 practice: the local end, then the far end). The first 21 columns
are what they have always been; the rest follow them.

Fast: rows that need no quoting are joined and written as text, only the others go through
``csv.writer`` (10^6 rows); per-device and per-model columns are looked up, not recomputed.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..catalog.parts import link_part, module_number, ordered_length
from ..fabric.cable_naming import cable_id_format
from ..fabric.end_labels import EndLabels
from ..facts.bom import fibres_per_link
from ..facts.cage_plan import assemblies
from .base import RENDERERS, Artifacts, RenderContext, Stream
from .csv_safe import CsvWriter

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
    "tier",
    "a_cage",
    "a_physical",
    "b_cage",
    "b_physical",
    "part",
    "a_transceiver",
    "b_transceiver",
    "fibres",
    "a_label",
    "b_label",
]


def _fmt(x: float) -> str:
    return f"{x:g}"


@RENDERERS.register("cabling")
def stream_cabling(ctx: RenderContext) -> dict[str, Stream]:
    """The registered renderer: streamed, so the 200 MB list of a 131,072-GPU design is written (or
    compared) as it is made. Rows are joined by commas where nothing needs quoting or neutralising."""
    return {"cabling/cables.csv": Stream(lambda: CsvWriter(COLUMNS).stream(_rows(ctx)))}


def render_cabling(ctx: RenderContext) -> Artifacts:
    """The cabling list as bytes, for library callers (the pipeline streams it)."""
    return {path: bytes(data) for path, data in stream_cabling(ctx).items()}


def _rows(ctx: RenderContext) -> Iterator[list[str]]:
    """The CSV rows (text fields only) in cable-ID order."""
    f, cat = ctx.fabric, ctx.catalogue
    media = cat.media
    bp = ctx.blueprint
    # Per-device columns (row, rack, U, name) and per-model port columns, built once: a device
    # ends many cables. Lengths, rates and parts repeat across thousands of links: memoised.
    racks = f.racks
    ends: list[tuple[str, str, str, str, int]] = []
    for d in f.devices:
        r = racks[d.rack] if d.rack >= 0 else None
        u = str(d.u) if d.u else ""
        ends.append((r.row, r.name, u, d.name, d.u) if r else ("", "", u, d.name, d.u))
    ports: dict[str, tuple[list[str], list[str], list[str]]] = {}
    for model, layout in f.layouts.items():
        cage_label = [layout.cage_label(c) for c in range(len(layout.cages))]
        ports[model] = (layout.names, layout.physical_names, [cage_label[c] for c in layout.port_cages])
    port_cols = [ports[d.model] for d in f.devices]
    fibres = {name: m.fibre for name, m in media.items()}
    lengths: dict[tuple[str, float, float], tuple[str, str, str]] = {}
    parts: dict[tuple[str, float], str] = {}
    per_spec: dict[int, tuple[str, str, str, str, str, str]] = {}
    label = cable_id_format(bp.naming.cable_label)  # same fields as the cable ID, formatted positionally
    end_labels = EndLabels(bp, f).pair  # naming.end_label, formatted per device once
    t = f.links
    ids, specs = t.ids(), t.specs
    asm_length = assemblies(f, media).length_m.tolist()
    col_a, col_ap, col_b, col_bp, col_len, col_spec = t.a, t.a_port, t.b, t.b_port, t.length_m, t.spec
    for i in t.id_order():
        a, b, s = col_a[i], col_b[i], col_spec[i]
        spec = specs[s]
        medium, length_m = spec.medium, col_len[i]
        a_row, a_rack, a_u, a_name, a_uint = ends[a]
        b_row, b_rack, b_u, b_name, b_uint = ends[b]
        a_names, a_phys, a_cages = port_cols[a]
        b_names, b_phys, b_cages = port_cols[b]
        ap, bp_ = col_ap[i], col_bp[i]
        a_port, b_port = a_names[ap], b_names[bp_]
        ordered_for = asm_length[i]
        length = lengths.get((medium, length_m, ordered_for))
        if length is None:
            stock = ordered_length(cat, medium, ordered_for)
            part = parts.get((medium, stock))
            if part is None:
                part = parts[(medium, stock)] = _part(ctx, medium, stock)
            length = lengths[(medium, length_m, ordered_for)] = (_fmt(stock), f"{length_m:.2f}", part)
        fixed = per_spec.get(s)
        if fixed is None:
            fixed = per_spec[s] = _spec_columns(ctx, s)
        cid = ids[i]
        row = [
            cid,
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
            fixed[0],
            fixed[1],
            fixed[2],
            spec.tier,
            a_cages[ap],
            a_phys[ap],
            b_cages[bp_],
            b_phys[bp_],
            length[2],
            fixed[3],
            fixed[4],
            fixed[5],
        ]
        row.extend(end_labels(a, a_port, a_phys[ap], b, b_port, b_phys[bp_], cid))
        yield row


def _part(ctx: RenderContext, medium: str, stock: float) -> str:
    """The orderable part of a row: the cable assembly at its length, or a transceiver link's fibre cord."""
    return link_part(ctx.catalogue, medium, stock)


def _spec_columns(ctx: RenderContext, s: int) -> tuple[str, str, str, str, str, str]:
    """(lane Gb/s, lanes, Gb/s, A module part, B module part, fibres) of a spec's links."""
    f, cat = ctx.fabric, ctx.catalogue
    spec = f.links.specs[s]
    a_mod = b_mod = fibres = ""
    m = cat.media.get(spec.medium)
    if m is not None and m.shape == "transceiver":
        a_mod, b_mod = _module(ctx, spec.a_module), _module(ctx, spec.b_module)
        fibres = str(fibres_per_link(cat, spec))
    return _fmt(spec.lane_gbps), str(spec.lanes), _fmt(spec.gbps), a_mod, b_mod, fibres


def _module(ctx: RenderContext, key: str) -> str:
    return module_number(ctx.catalogue, key)
