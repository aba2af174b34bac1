"""NetBox bulk-import CSVs: ``dcim/netbox/NN-<object>.csv``, numbered in the order NetBox must
import them (each refers to objects of the earlier files by name):

1. ``01-sites.csv``, 2. ``02-manufacturers.csv``, 3. ``03-device-roles.csv``, 4. ``04-device-types.csv``,
5. ``05-racks.csv``, 6. ``06-devices.csv`` (rack, position, face; boards of a chassis name it as
their ``parent``), 7. ``07-interfaces.csv`` (every cabled port, with NetBox's interface type),
8. ``08-cables.csv`` (one per link: NetBox terminates a cable on one interface per side, so a
twin-port assembly is two NetBox cables; board connectors and cable cartridges are not cables
and are left out).

The headers are the field names of NetBox's import forms (``dcim/forms/bulk_import.py``:
SiteImportForm, ManufacturerImportForm, DeviceRoleImportForm, DeviceTypeImportForm,
RackImportForm, DeviceImportForm, InterfaceImportForm, CableImportForm), the fields snc knows;
choice values are NetBox's (``dcim/choices.py``). Cells pass through the CSV writer that
neutralises formulas.

Written at every size, each file a ``Stream`` made when it is written: the interface and cable
rows come one at a time in their sorted order (device then port names; cable ID), ordered by
numpy over the link table's columns instead of sorting the rows themselves, so 10^6 rows are
never held (131k RoCE: docs/performance.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ..fabric import Fabric
from ..fabric.fabric_facts import transport_of
from .base import RENDERERS, SUBSETS, RenderContext, RowSelection, Stream
from .csv_safe import CsvWriter

SITE_COLUMNS = ["name", "slug", "status"]
MANUFACTURER_COLUMNS = ["name", "slug"]
ROLE_COLUMNS = ["name", "slug", "color"]
DEVICE_TYPE_COLUMNS = ["manufacturer", "model", "slug", "part_number", "u_height", "is_full_depth", "subdevice_role"]
RACK_COLUMNS = ["site", "name", "status", "width", "u_height"]
DEVICE_COLUMNS = ["name", "role", "manufacturer", "device_type", "status", "site", "rack", "position", "face", "parent"]
INTERFACE_COLUMNS = ["device", "name", "label", "type", "speed", "mgmt_only"]
CABLE_COLUMNS = [
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "color",
    "length",
    "length_unit",
]

# NetBox's CableTypeChoices by catalogue medium kind (sr runs on multimode fibre, the other
# optics on single-mode).
CABLE_TYPE = {
    "dac": "dac-passive",
    "acc": "dac-active",
    "aec": "dac-active",
    "aoc": "aoc",
    "sr": "mmf",
    "dr": "smf",
    "fr": "smf",
    "lpo": "smf",
    "npo": "smf",
    "cpo": "smf",
    "copper-utp": "cat6a",
}
# NetBox's InterfaceTypeChoices: InfiniBand by lane rate, Ethernet by speed and cage.
IB_TYPE = {50.0: "infiniband-hdr", 100.0: "infiniband-ndr", 200.0: "infiniband-xdr"}
ETH_TYPE = {
    (1, "rj45"): "1000base-t",
    (10, "rj45"): "10gbase-t",
    (25, "sfp28"): "25gbase-x-sfp28",
    (100, "qsfp28"): "100gbase-x-qsfp28",
    (200, "qsfp56"): "200gbase-x-qsfp56",
    (400, "qsfp112"): "400gbase-x-qsfp112",
    (400, "qsfp-dd"): "400gbase-x-qsfpdd",
    (400, "osfp"): "400gbase-x-osfp",
    (800, "osfp"): "800gbase-x-osfp",
}
# Cable colours (RGB hex, as NetBox stores them) per fabric-local tier: the workbook's idea of a
# colour per tier, for the crew's eye; presentation, not a standard.
TIER_COLOR = {"node-leaf": "2f6db5", "leaf-spine": "e08a1e", "spine-core": "3a9a4a", "local": "8e44ad", "global": "c0392b"}


def slug(text: str) -> str:
    """NetBox's slug alphabet: lower-case letters, digits, hyphens and underscores."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "x"


def interface_type(transport: str | None, lane_gbps: float, gbps: float, cage: str) -> str:
    if transport == "infiniband":
        return IB_TYPE.get(lane_gbps, "other")
    return ETH_TYPE.get((int(gbps), cage), "other")


def _manufacturer(vendor: str) -> str:
    return vendor or "Generic"


def netbox_tables(ctx: RenderContext, rows: RowSelection | None = None) -> dict[str, tuple[list[str], Iterator[list[str]]]]:
    """File name -> (header, rows), in import order; with ``rows`` (``snc diff``), the
    interfaces and cables of the links it selects only."""
    f: Fabric = ctx.fabric
    cat = ctx.catalogue
    site = ctx.blueprint.site.name or ctx.blueprint.metadata.name
    used = sorted({d.model for d in f.devices})
    vendors = sorted({_manufacturer(cat.devices[m].vendor) for m in used})
    roles = sorted({d.role for d in f.devices})
    children = {d.model for d in f.devices if d.chassis >= 0}
    parents = {f.devices[d.chassis].model for d in f.devices if d.chassis >= 0}

    def device_types() -> Iterator[list[str]]:
        for m in used:
            model = cat.devices[m]
            part = model.part.number if model.part is not None and getattr(model.part, "number", None) else ""
            sub = "child" if m in children else "parent" if m in parents else ""
            height = 0 if m in children else model.height_u
            yield [_manufacturer(model.vendor), m, slug(m), part, str(height), "true", sub]

    def racks() -> Iterator[list[str]]:
        units = ctx.blueprint.site.rack_units
        for r in sorted(f.racks, key=lambda r: r.name):
            yield [site, r.name, "planned", "19", str(units)]

    def devices() -> Iterator[list[str]]:
        for d in sorted(f.devices, key=lambda d: d.name):
            model = cat.devices[d.model]
            rack = f.racks[d.rack].name if d.rack >= 0 else ""
            child = d.chassis >= 0
            # A 0U device (a vertical PDU) and a board in a chassis have no position; a rear-mounted
            # 0U device faces the rear.
            position = str(d.u) if d.u > 0 and not child and d.height_u > 0 else ""
            face = "" if child else ("front" if position else "rear") if rack else ""
            parent = f.devices[d.chassis].name if child else ""
            yield [
                d.name,
                d.role,
                _manufacturer(model.vendor),
                d.model,
                "planned",
                site,
                "" if child else rack,
                position,
                face,
                parent,
            ]

    def interfaces() -> Iterator[list[str]]:
        yield from _interface_rows(ctx, rows.ports if rows is not None else None)

    def cables() -> Iterator[list[str]]:
        yield from _cable_rows(ctx, rows.links if rows is not None else None)

    return {
        "01-sites.csv": (SITE_COLUMNS, iter([[site, slug(site), "planned"]])),
        "02-manufacturers.csv": (MANUFACTURER_COLUMNS, ([v, slug(v)] for v in vendors)),
        "03-device-roles.csv": (ROLE_COLUMNS, ([r, slug(r), "9e9e9e"] for r in roles)),
        "04-device-types.csv": (DEVICE_TYPE_COLUMNS, device_types()),
        "05-racks.csv": (RACK_COLUMNS, racks()),
        "06-devices.csv": (DEVICE_COLUMNS, devices()),
        "07-interfaces.csv": (INTERFACE_COLUMNS, interfaces()),
        "08-cables.csv": (CABLE_COLUMNS, cables()),
    }


@RENDERERS.register("netbox")
def render_netbox(ctx: RenderContext) -> dict[str, Stream | bytes]:
    return _netbox(ctx)


@SUBSETS.register("netbox")
def render_netbox_rows(ctx: RenderContext, selection: RowSelection) -> dict[str, Stream | bytes]:
    """``snc diff``: the interfaces of the ports the selection names (``selection.ports``) and
    the cables of the links it selects, the other files whole."""
    return _netbox(ctx, selection)


def _netbox(ctx: RenderContext, selection: RowSelection | None = None) -> dict[str, Stream | bytes]:
    out: dict[str, Stream | bytes] = {}
    for name in netbox_tables(ctx):

        def produce(name: str = name) -> Iterator[bytes | str]:
            header, rows = netbox_tables(ctx, selection)[name]
            return CsvWriter(header).stream(rows)

        out[f"dcim/netbox/{name}"] = Stream(produce)
    return out


def _cabled(f: Fabric) -> np.ndarray:
    """Link-table positions of the cable links (not connectors or cartridges), in table order."""
    t = f.links
    is_cable = np.fromiter((x.kind == "cable" for x in t.specs), dtype=bool, count=len(t.specs))
    if not len(t):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(is_cable[t.arrays().spec])


def _interface_rows(ctx: RenderContext, ports: frozenset[tuple[str, int]] | None = None) -> Iterator[list[str]]:
    """Every cabled port once, device by device in name order, each device's ports in name order
    (what sorting every row by (device, port) gives, without holding them: 10^6 ports at 131k).
    A port's rate is its first cable link's, its transport its last's. With ``ports`` ((device
    name, port) pairs), those ports' rows and those of ports with more than one cable link (which
    of them is first may differ between two Fabrics) only."""
    f = ctx.fabric
    t = f.links
    cabled = _cabled(f)
    if not len(cabled):
        return
    arr = t.arrays()
    n = len(cabled)
    # Ends in the order the links name them: link 0's A, link 0's B, link 1's A, ...
    dev = np.empty(2 * n, dtype=np.int64)
    port = np.empty(2 * n, dtype=np.int64)
    dev[0::2], dev[1::2] = arr.a[cabled], arr.b[cabled]
    port[0::2], port[1::2] = arr.a_port[cabled], arr.b_port[cabled]
    link = np.repeat(cabled, 2)
    width = int(port.max()) + 1
    key = dev * width + port
    keys, first, count = np.unique(key, return_index=True, return_counts=True)
    last = len(key) - 1 - np.unique(key[::-1], return_index=True)[1]
    spec_of = arr.spec
    s_first, s_last = spec_of[link[first]], spec_of[link[last]]
    d_ends, p_ends = keys // width, keys % width
    models = sorted(f.layouts)
    model_id = {m: k for k, m in enumerate(models)}
    dev_model = np.fromiter((model_id[d.model] for d in f.devices), dtype=np.int64, count=len(f.devices))
    # Device name order, and each model's port-name order: the rows sorted by (device, port) names.
    names = [d.name for d in f.devices]
    dev_rank = np.empty(len(names), dtype=np.int64)
    dev_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    port_rank = np.full((len(models), width), -1, dtype=np.int64)
    for m, layout in f.layouts.items():
        pn = layout.names[:width]
        port_rank[model_id[m], sorted(range(len(pn)), key=pn.__getitem__)] = np.arange(len(pn))
    m_ends = dev_model[d_ends]
    order = np.lexsort((port_rank[m_ends, p_ends], dev_rank[d_ends]))
    if ports is not None:
        index = {name: k for k, name in enumerate(names)}
        wanted = [index[d] * width + p for d, p in ports if d in index and p < width]
        order = order[(np.isin(keys, np.array(wanted, dtype=np.int64)) | (count > 1))[order]]
    # The type, speed and management columns depend on (model, port, first link's spec, last
    # link's transport) only: a few hundred combinations for 10^6 ports, made once each.
    specs = t.specs
    transports = {name: transport_of(f.facts.get(name)) for name in f.fabrics()}
    combo = ((m_ends * width + p_ends) * len(specs) + s_first) * len(specs) + s_last
    combos, which = np.unique(combo[order], return_inverse=True)
    tails = []
    for x in combos.tolist():
        rest, last_s = divmod(x, len(specs))
        rest, first_s = divmod(rest, len(specs))
        m, p = divmod(rest, width)
        group = f.layouts[models[m]].port_groups[p]
        rate = specs[first_s]
        kind = interface_type(transports.get(specs[last_s].fabric), rate.lane_gbps, rate.gbps, group.cage)
        tails.append((kind, str(int(rate.gbps * 1_000_000)), "true" if group.role == "mgmt" else "false"))
    port_names = [f.layouts[d.model].names for d in f.devices]
    dev_of, port_of = d_ends[order].tolist(), p_ends[order].tolist()
    for d, p, k in zip(dev_of, port_of, which.tolist(), strict=True):
        tail = tails[k]
        yield [names[d], port_names[d][p], "", tail[0], tail[1], tail[2]]


def _cable_rows(ctx: RenderContext, links: np.ndarray | None = None) -> Iterator[list[str]]:
    """One NetBox cable per cable link (of those ``links`` selects, a bool per link table
    position; all without it), in cable-ID order, made one at a time."""
    f, cat = ctx.fabric, ctx.catalogue
    t = f.links
    cabled = np.zeros(len(t), dtype=bool)
    cabled[_cabled(f)] = True
    if links is not None:
        cabled &= links
    ids = t.ids()
    dev_names = [d.name for d in f.devices]
    port_names = [f.layouts[d.model].names for d in f.devices]
    per_spec = []
    for x in t.specs:
        medium = cat.media.get(x.medium)
        per_spec.append((CABLE_TYPE.get(medium.kind, "") if medium is not None else "", TIER_COLOR.get(x.tier, "")))
    col_a, col_ap, col_b, col_bp, col_spec, col_len = t.a, t.a_port, t.b, t.b_port, t.spec, t.length_m
    keep = cabled.tolist()
    for i in t.id_order():
        if not keep[i]:
            continue
        a, b = col_a[i], col_b[i]
        ctype, color = per_spec[col_spec[i]]
        yield [
            dev_names[a],
            "dcim.interface",
            port_names[a][col_ap[i]],
            dev_names[b],
            "dcim.interface",
            port_names[b][col_bp[i]],
            ctype,
            "planned",
            ids[i],
            color,
            f"{col_len[i]:g}",
            "m",
        ]
