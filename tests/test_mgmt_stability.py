"""Growing a fabric moves no management cable: rack-switch access ports follow rack units, console
ports follow units on the console server, and aggregation ports follow a block of planned rack
positions per row (builders/management.py, docs/blueprint.md "management").

Each case compiles a blueprint, grows it the way an operator does, and checks that every management
cable of the smaller build is still there with both ends on the same device and port.
"""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest
from conftest import BLUEPRINTS, cable_ends, compile_text
from ruamel.yaml import YAML

from supernodeiac.load.source import load_file
from supernodeiac.pipeline import Compiled

Data = dict[str, Any]


def _data(name: str) -> Data:
    return load_file(BLUEPRINTS / f"{name}.yaml").data


def _compile(data: Data) -> Compiled:
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, buf)
    c = compile_text(buf.getvalue())
    assert c.exit_code == 0 and c.fabric is not None, [
        f"{f.location}: {f.message}" for f in c.findings if f.severity.value == "error"
    ]
    return c


def _row(data: Data, name: str) -> Data:
    return next(r for r in data["site"]["rows"] if r["name"] == name)


def _moved(old: Compiled, new: Compiled) -> list[str]:
    """Management cables of ``old`` that ``new`` does not keep end for end (empty: none moved)."""
    before, after = cable_ends(old.fabric, "mgmt"), cable_ends(new.fabric, "mgmt")
    return [f"{cid}: {ends} -> {after.get(cid)}" for cid, ends in sorted(before.items()) if after.get(cid) != ends]


def _spines_apart(data: Data) -> None:
    """small-ib planned for 3 SUs: spines in a row of their own, room for the new leaves in row N."""
    fabric = data["scaleout"][0]
    fabric["grow_to_sus"] = 3
    data["site"]["rows"].append({"name": "SP", "racks": 4})
    fabric["placement"]["spine"] = {"row": "SP", "per_rack": 4, "first_u": 2}
    _row(data, "N")["racks"] = 4


def test_leaves_added_below_existing_devices_move_no_bmc_cable():
    """A second SU's leaves land at U2-U9 of rack N02, below the UFM pair (U20) and the aggregation
    switches (U40-U43): by unit order they would shift every port above them; by unit, none moves."""
    base = _data("small-ib")
    _spines_apart(base)
    grown = copy.deepcopy(base)
    grown["nodes"][0]["count"] = 32
    _row(grown, "A")["racks"] = 8
    old, new = _compile(base), _compile(grown)
    n02 = {d.name for d in new.fabric.devices if new.fabric.racks[d.rack].name == "N02" and d.role == "leaf"}
    assert len(n02) == 8 and not any(d.name in n02 for d in old.fabric.devices)
    assert _moved(old, new) == []
    # every access port is the device's unit
    f = new.fabric
    for link in f.links_of("mgmt"):
        a, b = f.devices[link.a], f.devices[link.b]
        if b.role == "mgmt" and a.chassis < 0 and a.u > 0 and link.kind == "cable":
            assert f.layouts[b.model].ports_of("data").index(link.b_port) == a.u - 1, (a.name, a.u)


def test_racks_added_to_an_earlier_row_move_no_uplink():
    """Row A (listed first) grows by two racks within its planned positions: the rack switches of
    row N keep their aggregation ports."""
    base = _data("small-ib")
    assert _row(base, "A")["planned_racks"] > _row(base, "A")["racks"]
    grown = copy.deepcopy(base)
    grown["nodes"][0]["count"] = 24
    _row(grown, "A")["racks"] = 6
    old, new = _compile(base), _compile(grown)
    assert len(new.fabric.devices) > len(old.fabric.devices)
    assert _moved(old, new) == []


def test_without_a_plan_an_earlier_row_that_grows_moves_later_uplinks():
    """The rule is what the plan buys: without planned_racks, row A's block is its racks, and growing
    it moves row N's uplinks (the diff shows it)."""
    base = _data("small-ib")
    del _row(base, "A")["planned_racks"]
    grown = copy.deepcopy(base)
    grown["nodes"][0]["count"] = 20
    _row(grown, "A")["racks"] = 5
    moved = _moved(_compile(base), _compile(grown))
    assert moved and all("mgmt-N0" in m for m in moved)


def test_uplink_slots_follow_the_row_blocks(small_ib):
    """Rack k of a row with block b sends uplink m to slot (b + k - 1) x uplinks + m: port
    slot // switches of aggregation switch slot % switches."""
    f, bp = small_ib.fabric, small_ib.blueprint
    spec = bp.management
    aggs = sorted((d for d in f.devices if d.role == "mgmt-agg"), key=lambda d: d.index)
    agg_ports = f.layouts[aggs[0].model].ports_of("data")
    block, blocks = 0, {}
    for row in bp.site.rows:
        blocks[row.name] = block
        block += row.capacity
    seen = 0
    for link in f.links_of("mgmt"):
        a, b = f.devices[link.a], f.devices[link.b]
        if a.role != "mgmt" or b.role != "mgmt-agg":
            continue
        rack = f.racks[a.rack]
        m = f.layouts[a.model].ports_of("uplink").index(link.a_port)
        n, k = divmod((blocks[rack.row] + rack.position - 1) * spec.uplinks + m, len(aggs))
        assert (b.index, link.b_port) == (aggs[k].index, agg_ports[n])
        seen += 1
    assert seen == spec.uplinks * sum(1 for d in f.devices if d.role == "mgmt")


def test_pdus_take_the_top_ports_and_the_console_server_sits_below_them(small_ib):
    f = small_ib.fabric
    pdus = small_ib.blueprint.management.pdus.per_rack
    for link in f.links_of("mgmt"):
        a, b = f.devices[link.a], f.devices[link.b]
        if b.role != "mgmt":
            continue
        access = f.layouts[b.model].ports_of("data")
        k = access.index(link.b_port)
        if a.role == "pdu":
            j = int(a.name.rsplit("-", 1)[1]) - 1  # pdu-A01-1 is PDU 1
            assert k == len(access) - 1 - j
        else:
            assert k < len(access) - pdus, (a.name, k)
    consoles = [d for d in f.devices if d.role == "console"]
    assert consoles and {d.u for d in consoles} == {len(access) - pdus}  # U45 under PDU ports 46-48


def test_console_ports_follow_units(small_ib):
    f = small_ib.fabric
    n = 0
    for link in f.links_of("mgmt"):
        a, b = f.devices[link.a], f.devices[link.b]
        if b.role == "console" and link.b_port in f.layouts[b.model].ports_of("console"):
            assert f.layouts[b.model].ports_of("console").index(link.b_port) == a.u - 1
            n += 1
    assert n > 8


def test_a_device_past_the_switch_ports_is_a_located_error():
    """A device whose unit has no access port (a rack switch with a port per unit, PDUs on the top
    ports) is refused where the switch is chosen, naming the device, its unit and the rule."""
    data = _data("small-ib")
    data["nodes"][1]["placement"]["first_u"] = 46  # the UFM pair at U46-U47: the PDUs' ports
    c = compile_text_data(data)
    [e] = [f for f in c.findings if f.rule == "port-budget"]
    assert "ufm-0001 at U46 needs port 46" in e.message and "PDU" in e.message
    assert e.path[:2] == ("management", "switch") and e.location is not None


def compile_text_data(data: Data) -> Compiled:
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, buf)
    return compile_text(buf.getvalue())


@pytest.mark.parametrize("name", ["nebula-x128-ib", "nvl72-pod"])
def test_chassis_boards_and_rack_trays_each_have_their_own_port(name):
    c = compile_text_data(_data(name))
    assert c.exit_code == 0
    f = c.fabric
    used: dict[tuple[int, int], str] = {}
    for link in f.links_of("mgmt"):
        b = f.devices[link.b]
        if b.role == "mgmt":
            assert (link.b, link.b_port) not in used, (used.get((link.b, link.b_port)), f.devices[link.a].name)
            used[(link.b, link.b_port)] = f.devices[link.a].name
    boards = [d for d in f.devices if d.chassis >= 0]
    assert not boards or all(any(v == d.name for v in used.values()) for d in boards)
