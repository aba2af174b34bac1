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
    assert rows[0] == ["A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port"]
    assert len(rows) - 1 == len(c.fabric.links.indices_of("ib")) == 386
    # HCA numbers on hosts (1 = mlx5_0, as the mapping file says), cage/port on the twin-port switches.
    assert ["gpu-0003", "Host", "3", "ib-leaf-su001-03", "Switch", "2/1"] in rows
    assert {r[1] for r in rows[1:]} | {r[4] for r in rows[1:]} == {"Host", "Switch"}
    mapping = files["p2p/ib-hca-mapping.csv"].decode().splitlines()
    assert mapping[:2] == ["port,hca-name", "1,mlx5_0"] and len(mapping) == 9
    mgmt = list(csv.reader(io.StringIO(files["p2p/mgmt.csv"].decode())))
    assert ["gpu-0001", "Host", "bmc", "mgmt-A01", "Switch", "Ethernet0"] in mgmt


def test_ethernet_ports_are_os_names():
    c, files = _sheets("roce-rail-2tier")
    rows = list(csv.reader(io.StringIO(files["p2p/roce.csv"].decode())))
    assert len(rows) - 1 == len(c.fabric.links.indices_of("roce"))
    assert ["gpu-a-0001", "Host", "eth0", "roce-leaf-su001-01", "Switch", "Ethernet0"] in rows
