"""Point-to-point sheets: every cable of a fabric once, both ends, in the cable-validation tool's
columns and port conventions."""

from __future__ import annotations

import csv
import io

from conftest import BLUEPRINTS

from supernodeiac.pipeline import compile_file, render


def _sheets(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    return c, render(c, ["p2p"])[0]


def test_one_row_per_cable_with_both_ends():
    c, files = _sheets("small-ib")
    assert sorted(files) == ["p2p/ib-hca-mapping.csv", "p2p/ib.csv", "p2p/mgmt.csv"]
    rows = list(csv.reader(io.StringIO(files["p2p/ib.csv"].decode())))
    assert rows[0][:6] == ["A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port"]
    assert len(rows) - 1 == len(c.fabric.links.indices_of("ib")) == 388
    # HCA numbers on hosts (1 = mlx5_0, as the mapping file says), cage/port on the twin-port switches.
    assert ["gpu-0003", "Host", "3", "ib-leaf-su001-03", "Switch", "2/1"] in [r[:6] for r in rows]
    assert {r[1] for r in rows[1:]} | {r[4] for r in rows[1:]} == {"Host", "Switch"}
    mapping = files["p2p/ib-hca-mapping.csv"].decode().splitlines()
    assert mapping[:2] == ["port,hca-name", "1,mlx5_0"] and len(mapping) == 9
    mgmt = list(csv.reader(io.StringIO(files["p2p/mgmt.csv"].decode())))
    bmc = next(r for r in mgmt if r[:3] == ["gpu-0001", "Host", "bmc"])  # rack-switch ports follow units
    assert bmc[3:5] == ["mgmt-A01", "Switch"] and bmc[5] == c.fabric.port_name(*_far_end(c, "gpu-0001", "bmc"))


def _far_end(c, device: str, port: str) -> tuple[int, int]:
    f = c.fabric
    d = f.device(device)
    p = f.layouts[d.model].names.index(port)
    t = f.links
    for i in range(len(t)):
        if (t.a[i], t.a_port[i]) == (d.index, p):
            return t.b[i], t.b_port[i]
        if (t.b[i], t.b_port[i]) == (d.index, p):
            return t.a[i], t.a_port[i]
    raise KeyError(port)


def test_ethernet_ports_are_os_names():
    c, files = _sheets("roce-rail-2tier")
    rows = list(csv.reader(io.StringIO(files["p2p/roce.csv"].decode())))
    assert len(rows) - 1 == len(c.fabric.links.indices_of("roce"))
    assert ["gpu-a-0001", "Host", "eth0", "roce-leaf-su001-01", "Switch", "Ethernet0"] in [r[:6] for r in rows]


def _cables(c) -> dict[str, dict[str, str]]:
    files = render(c, ["cabling"])[0]
    return {r["cable_id"]: r for r in csv.DictReader(io.StringIO(files["cabling/links.csv"].decode()))}


def test_switch_ports_are_the_catalogue_cages_and_rows_agree_with_the_cabling_list():
    """The tool's switch port ("cage/position") is the cage printed on the faceplate, and every
    row's rack, U and physical ports are the cabling list's for the same cable (its key)."""
    c, files = _sheets("small-ib")
    cables = _cables(c)
    rows = list(csv.DictReader(io.StringIO(files["p2p/ib.csv"].decode())))
    assert len(rows) == 388
    for r in rows:
        cable = cables[r["Cable ID"]]
        assert (r["A-Node Name"], r["Z-Node Name"]) == (cable["a_device"], cable["b_device"])
        assert (r["A-Rack"], r["A-U"], r["Z-Rack"], r["Z-U"]) == (cable["a_rack"], cable["a_u"], cable["b_rack"], cable["b_u"])
        assert (r["A-Physical"], r["Z-Physical"]) == (cable["a_physical"], cable["b_physical"])
        for side in "AZ":
            if r[f"{side}-Type"] == "Switch":  # "OSFP 2 port 1" is "2/1"
                cage, position = r[f"{side}-Physical"].removeprefix("OSFP ").split(" port ")
                assert r[f"{side}-Port"] == f"{cage}/{position}"


def test_a_faceplate_numbered_on_from_another_group_is_the_tools_port():
    """sn2201 uplinks sit in cages 49-52 (physical.yaml first_cage): an Ethernet sheet keeps the OS
    name (Ethernet48), the physical column the cage as printed."""
    c, files = _sheets("small-ib")
    rows = list(csv.DictReader(io.StringIO(files["p2p/mgmt.csv"].decode())))
    uplink = next(r for r in rows if r["A-Port"] == "Ethernet48" and r["Z-Node Name"].startswith("mgmt-agg"))
    assert uplink["A-Physical"] == "QSFP28 49"
