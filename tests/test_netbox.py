"""NetBox bulk-import CSVs: they parse, their headers are NetBox's import-form field names (from
dcim/forms/bulk_import.py, each a subset in the form's order), their references resolve to rows
of the files before them, and their counts are the Fabric's."""

from __future__ import annotations

import csv
import io

import pytest
from conftest import shipped

from supernodeiac.outputs.base import RenderContext
from supernodeiac.outputs.netbox import render_netbox

# Meta.fields of NetBox's import forms (netbox/dcim/forms/bulk_import.py).
FORM_FIELDS = {
    "01-sites.csv": ["name", "slug", "status", "region", "group", "tenant", "facility", "time_zone", "description"],
    "02-manufacturers.csv": ["name", "slug", "description", "tags"],
    "03-device-roles.csv": ["name", "slug", "color", "vm_role", "config_template", "description", "tags"],
    "04-device-types.csv": [
        "manufacturer",
        "default_platform",
        "model",
        "slug",
        "part_number",
        "u_height",
        "exclude_from_utilization",
        "is_full_depth",
        "subdevice_role",
        "airflow",
        "description",
        "weight",
        "weight_unit",
        "comments",
        "tags",
    ],  # fmt: skip
    "05-racks.csv": [
        "site",
        "location",
        "name",
        "facility_id",
        "tenant",
        "status",
        "role",
        "form_factor",
        "serial",
        "asset_tag",
        "width",
        "u_height",
    ],  # fmt: skip
    "06-devices.csv": [
        "name",
        "role",
        "tenant",
        "manufacturer",
        "device_type",
        "platform",
        "serial",
        "asset_tag",
        "status",
        "site",
        "location",
        "rack",
        "position",
        "face",
        "latitude",
        "longitude",
        "parent",
        "device_bay",
    ],  # fmt: skip
    "07-interfaces.csv": [
        "device",
        "name",
        "label",
        "parent",
        "bridge",
        "lag",
        "type",
        "speed",
        "duplex",
        "enabled",
        "mark_connected",
        "wwn",
        "vdcs",
        "mtu",
        "mgmt_only",
    ],  # fmt: skip
    "08-cables.csv": [
        "side_a_device",
        "side_a_type",
        "side_a_name",
        "side_b_device",
        "side_b_type",
        "side_b_name",
        "type",
        "status",
        "tenant",
        "label",
        "color",
        "length",
        "length_unit",
    ],  # fmt: skip
}
CABLE_TYPES = {"dac-passive", "dac-active", "aoc", "mmf", "smf", "cat6a", ""}
INTERFACE_TYPES_PREFIX = ("infiniband-", "1000base-t", "10gbase-t", "25gbase-x-", "100gbase-x-", "200gbase-x-", "400gbase-x-",
                          "800gbase-x-", "other")  # fmt: skip


def _tables(name: str) -> tuple[object, dict[str, list[dict[str, str]]], dict[str, list[str]]]:
    c = shipped(name)
    out = render_netbox(RenderContext(c.blueprint, c.catalogue, c.fabric))
    rows, headers = {}, {}
    for path, stream in out.items():
        text = bytes(stream).decode()
        reader = csv.DictReader(io.StringIO(text))
        rows[path.rsplit("/", 1)[1]] = list(reader)
        headers[path.rsplit("/", 1)[1]] = list(reader.fieldnames or [])
    return c, rows, headers


@pytest.mark.parametrize("name", ["small-ib", "nebula-x128-ib", "nvl72-pod"])
def test_netbox_csvs_follow_the_import_forms_and_count_the_fabric(name):
    c, rows, headers = _tables(name)
    f = c.fabric
    assert sorted(headers) == sorted(FORM_FIELDS)  # and the numbers give NetBox's import order
    for file, header in headers.items():
        form = FORM_FIELDS[file]
        assert set(header) <= set(form), (file, set(header) - set(form))
        assert header == [h for h in form if h in header], f"{file}: columns out of the form's order"
    # Counts: every device, every cable (not the board connectors or cartridges), both ends' interfaces.
    cables = [k for k in f.links if k.kind == "cable"]
    assert len(rows["06-devices.csv"]) == len(f.devices)
    assert len(rows["08-cables.csv"]) == len(cables)
    ends = {(f.devices[k.a].name, f.port_name(k.a, k.a_port)) for k in cables} | {
        (f.devices[k.b].name, f.port_name(k.b, k.b_port)) for k in cables
    }
    assert {(r["device"], r["name"]) for r in rows["07-interfaces.csv"]} == ends
    assert len(rows["05-racks.csv"]) == len(f.racks)
    # References resolve to earlier files, as NetBox's import needs them to.
    sites = {r["name"] for r in rows["01-sites.csv"]}
    makers = {r["name"] for r in rows["02-manufacturers.csv"]}
    roles = {r["name"] for r in rows["03-device-roles.csv"]}
    types = {r["model"]: r for r in rows["04-device-types.csv"]}
    racks = {r["name"] for r in rows["05-racks.csv"]}
    devices = {r["name"]: r for r in rows["06-devices.csv"]}
    assert {r["manufacturer"] for r in types.values()} <= makers
    for d in devices.values():
        assert d["site"] in sites and d["role"] in roles and d["device_type"] in types
        assert d["manufacturer"] == types[d["device_type"]]["manufacturer"]
        if d["parent"]:
            assert d["parent"] in devices and not d["rack"] and not d["position"]
            assert types[d["device_type"]]["subdevice_role"] == "child"
            assert types[devices[d["parent"]]["device_type"]]["subdevice_role"] == "parent"
        else:
            assert d["rack"] in racks and d["face"] in {"front", "rear"}
    for r in rows["07-interfaces.csv"]:
        assert r["device"] in devices and r["type"].startswith(INTERFACE_TYPES_PREFIX)
    for r in rows["08-cables.csv"]:
        assert r["side_a_device"] in devices and r["side_b_device"] in devices
        assert r["side_a_type"] == r["side_b_type"] == "dcim.interface"
        assert r["type"] in CABLE_TYPES and r["length_unit"] == "m" and float(r["length"]) > 0
    assert len({r["label"] for r in rows["08-cables.csv"]}) == len(cables)


def test_small_ib_types_are_netbox_values():
    _, rows, _ = _tables("small-ib")
    types = {r["type"] for r in rows["07-interfaces.csv"]}
    assert "infiniband-ndr" in types and "1000base-t" in types
    assert {r["type"] for r in rows["08-cables.csv"]} - {""}


def _sorted_in_memory(c) -> tuple[list[list[str]], list[list[str]]]:
    """The interface and cable rows the way they were made before they were streamed: every row
    built from the Fabric's links, then sorted (by device and port names; by cable ID)."""
    from supernodeiac.fabric.fabric_facts import transport_of
    from supernodeiac.outputs.netbox import CABLE_TYPE, TIER_COLOR, interface_type

    f, cat = c.fabric, c.catalogue
    transports = {name: transport_of(f.facts.get(name)) for name in f.fabrics()}
    cables = [k for k in f.links.links() if k.kind == "cable"]
    first: dict[tuple[int, int], object] = {}
    last: dict[tuple[int, int], object] = {}
    for k in cables:
        for end in ((k.a, k.a_port), (k.b, k.b_port)):
            first.setdefault(end, k)
            last[end] = k
    interfaces = []
    for (dev, port), k in first.items():
        group = f.port_group(dev, port)
        kind = interface_type(transports.get(last[(dev, port)].fabric), k.lane_gbps, k.gbps, group.cage)
        mgmt = "true" if group.role == "mgmt" else "false"
        interfaces.append([f.devices[dev].name, f.port_name(dev, port), "", kind, str(int(k.gbps * 1_000_000)), mgmt])
    interfaces.sort(key=lambda r: (r[0], r[1]))
    rows = []
    for k in cables:
        medium = cat.media.get(k.medium)
        rows.append(
            [
                f.devices[k.a].name,
                "dcim.interface",
                f.port_name(k.a, k.a_port),
                f.devices[k.b].name,
                "dcim.interface",
                f.port_name(k.b, k.b_port),
                CABLE_TYPE.get(medium.kind, "") if medium is not None else "",
                "planned",
                k.id,
                TIER_COLOR.get(k.tier, ""),
                f"{k.length_m:g}",
                "m",
            ]
        )
    rows.sort(key=lambda r: r[8])
    return interfaces, rows


@pytest.mark.parametrize("name", ["small-ib", "nebula-x128-ib", "supercluster-2level"])
def test_streamed_interface_and_cable_rows_are_the_rows_sorted_in_memory(name):
    """The rows made one at a time in their order (numpy ranks) are the rows built and sorted."""
    from supernodeiac.outputs.netbox import netbox_tables

    c = shipped(name)
    tables = netbox_tables(RenderContext(c.blueprint, c.catalogue, c.fabric))
    interfaces, cables = _sorted_in_memory(c)
    assert list(tables["07-interfaces.csv"][1]) == interfaces
    assert list(tables["08-cables.csv"][1]) == cables


def test_a_design_past_the_size_limits_still_gets_the_netbox_csvs(monkeypatch):
    """NetBox's CSVs have no size limit (they were not written past 250,000 links): with the
    limits that remain (cables.csv and the workbooks' large-design form) set below the design's
    size, the render still has all eight files, the same bytes as alone, no notice."""
    from supernodeiac.outputs import cabling, workbook
    from supernodeiac.pipeline import render

    c = shipped("nebula-x128-ib")
    monkeypatch.setattr(cabling, "ROW_LIMIT", 10)
    monkeypatch.setattr(workbook, "ROW_LIMIT", 10)
    artifacts, notices = render(c, ["cabling", "workbook", "netbox"])
    assert any(p.startswith("cabling/rows/") for p in artifacts)  # the large-design path was taken
    alone = render_netbox(RenderContext(c.blueprint, c.catalogue, c.fabric))
    names = sorted(p for p in artifacts if p.startswith("dcim/netbox/"))
    assert [p.rsplit("/", 1)[1] for p in names] == sorted(FORM_FIELDS)
    assert all(bytes(artifacts[p]) == bytes(alone[p]) for p in names)
    assert not [n for n in notices if "netbox" in str(n).lower()]
    cables = [k for k in c.fabric.links if k.kind == "cable"]
    assert bytes(artifacts["dcim/netbox/08-cables.csv"]).count(b"\n") == len(cables) + 1
