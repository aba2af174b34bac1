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
neutralises formulas. Past ``workbook.WORKBOOK_LIMIT`` links none is written (a notice says so).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..fabric import Fabric
from ..fabric.fabric_facts import transport_of
from .base import RENDERERS, RenderContext, Stream
from .csv_safe import CsvWriter
from .workbook import WORKBOOK_LIMIT

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


def netbox_tables(ctx: RenderContext) -> dict[str, tuple[list[str], Iterator[list[str]]]]:
    """File name -> (header, rows), in import order."""
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

    def ports() -> Iterator[tuple[int, int, float, float]]:
        seen: set[tuple[int, int]] = set()
        for link in f.links.links():
            if link.kind != "cable":
                continue
            for dev, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if (dev, port) not in seen:
                    seen.add((dev, port))
                    yield dev, port, link.lane_gbps, link.gbps

    transports = {name: transport_of(f.facts.get(name)) for name in f.fabrics()}
    port_transport: dict[tuple[int, int], str | None] = {}
    for link in f.links.links():
        if link.kind == "cable":
            port_transport[(link.a, link.a_port)] = port_transport[(link.b, link.b_port)] = transports.get(link.fabric)

    def interfaces() -> Iterator[list[str]]:
        rows = []
        for dev, port, lane, gbps in ports():
            d = f.devices[dev]
            group = f.port_group(dev, port)
            kind = interface_type(port_transport.get((dev, port)), lane, gbps, group.cage)
            mgmt = "true" if group.role == "mgmt" else "false"
            rows.append([d.name, f.port_name(dev, port), "", kind, str(int(gbps * 1_000_000)), mgmt])
        rows.sort(key=lambda r: (r[0], r[1]))
        yield from rows

    def cables() -> Iterator[list[str]]:
        rows = []
        for link in f.links.links():
            if link.kind != "cable":
                continue
            medium = cat.media.get(link.medium)
            ctype = CABLE_TYPE.get(medium.kind, "") if medium is not None else ""
            rows.append(
                [
                    f.devices[link.a].name,
                    "dcim.interface",
                    f.port_name(link.a, link.a_port),
                    f.devices[link.b].name,
                    "dcim.interface",
                    f.port_name(link.b, link.b_port),
                    ctype,
                    "planned",
                    link.id,
                    TIER_COLOR.get(link.tier, ""),
                    f"{link.length_m:g}",
                    "m",
                ]
            )
        rows.sort(key=lambda r: r[8])
        yield from rows

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
    count = len(ctx.fabric.links)
    if count > WORKBOOK_LIMIT:  # the interface and cable rows are sorted in memory: keep the 131k render in budget
        return {"notice:netbox": f"no NetBox CSVs: {count:,} links is past {WORKBOOK_LIMIT:,}".encode()}
    out: dict[str, Stream | bytes] = {}
    for name in netbox_tables(ctx):

        def produce(name: str = name) -> Iterator[bytes | str]:
            header, rows = netbox_tables(ctx)[name]
            return CsvWriter(header).stream(rows)

        out[f"dcim/netbox/{name}"] = Stream(produce)
    return out
