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

from ..cable_naming import cable_id_format, end_label_affixes, positional_format
from ..cage_plan import assemblies
from ..model.common import END_LABEL_FIELDS
from . import RENDERERS, Artifacts, RenderContext
from .bom import fibres_per_link
from .csv_safe import CsvWriter
from .parts import link_part, module_number, ordered_length

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

# naming.end_label fields: the local end's, then the far end's (far_ + name).
LABEL_FIELDS = END_LABEL_FIELDS + tuple("far_" + x for x in END_LABEL_FIELDS)


def _fmt(x: float) -> str:
    return f"{x:g}"


@RENDERERS.register("cabling")
def render_cabling(ctx: RenderContext) -> Artifacts:
    out = CsvWriter(COLUMNS)
    out.text_rows(_rows(ctx))  # joined by commas where nothing needs quoting or neutralising
    return {"cabling/cables.csv": out.getvalue()}


def _rows(ctx: RenderContext) -> Iterator[list[str]]:
    """The CSV rows (text fields only) in cable-ID order."""
    f, cat = ctx.fabric, ctx.catalogue
    media = cat.media
    bp = ctx.blueprint
    site = bp.site.name or bp.metadata.name
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
    per_spec: dict[int, tuple[str, str, str, str, str]] = {}
    label = cable_id_format(bp.naming.cable_label)  # same fields as the cable ID, formatted positionally
    end_label = positional_format(bp.naming.end_label, LABEL_FIELDS)
    # The default label (and any like it) is near[device] + port + far[device] + port + suffix:
    # formatted once per device, joined per link.
    affixes = end_label_affixes(bp.naming.end_label)
    if affixes is not None:
        near_tpl, near_port, far_tpl, far_port, suffix = affixes
        fields = [dict(site=site, row=e[0], rack=e[1], u=e[4], device=e[3]) for e in ends]
        near = [near_tpl.format(**x) for x in fields]
        far = [far_tpl.format(**x) for x in fields]
        pick_near, pick_far = (1 if near_port == "port" else 0), (1 if far_port == "port" else 0)
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
        a_phys_name, b_phys_name = a_phys[ap], b_phys[bp_]
        if affixes is not None:
            a_ends, b_ends = (a_port, a_phys_name), (b_port, b_phys_name)
            row.append(near[a] + a_ends[pick_near] + far[b] + b_ends[pick_far] + suffix)
            row.append(near[b] + b_ends[pick_near] + far[a] + a_ends[pick_far] + suffix)
        else:
            a_fields = (site, a_row, a_rack, a_uint, a_name, a_phys_name, a_port, cid)
            b_fields = (site, b_row, b_rack, b_uint, b_name, b_phys_name, b_port, cid)
            row.append(end_label(*a_fields, *b_fields))
            row.append(end_label(*b_fields, *a_fields))
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
