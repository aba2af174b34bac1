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
