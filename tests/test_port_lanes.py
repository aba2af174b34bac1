"""Port maps that list each port's lanes (`ports:`), for boards whose SerDes lanes follow no
first_lane/lane_step rule: the Arista 7060X6-64PE as 128 x 400G (hwsku Arista-7060X6-64PE-O128S2)
against its sonic-buildimage port_config.ini and platform.json (tests/data/sonic-buildimage, each
with its path and commit), its config_db through the SONiC YANG models, and a listed map that is
wrong in each way a located error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.catalog import merged
from supernodeiac.catalog.types import Catalogue
from supernodeiac.fabric import PortLayout
from supernodeiac.facts.sonic_ports import port_map_clashes, port_map_problems, sonic_ports
from supernodeiac.pipeline import render

DATA = Path(__file__).parent / "data" / "sonic-buildimage"
MODEL = "arista-7060x6-o128"
CATALOGUE = Catalogue.model_validate(merged(None))
ROCE = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()


def _rows(name: str) -> list[list[str]]:
    return [line.split() for line in (DATA / name).read_text().splitlines() if line and not line.startswith("#")]


PORT_CONFIG = _rows("Arista-7060X6-64PE-O128S2.port_config.ini")  # name lanes alias index speed fec
PLATFORM = {index: lanes.split(",") for _, index, lanes in _rows("x86_64-arista_7060x6_64pe.platform-lanes.txt")}
# The two lines of that port_config.ini that give one lane twice (platform.json gives the cage's lanes).
TYPOS = {"Ethernet468": "453,454,453,454", "Ethernet496": "481,482,483,483"}


def _ports():
    layout = PortLayout(CATALOGUE.devices[MODEL])
    return layout, [sp for sp in sonic_ports(layout, CATALOGUE.port_maps[MODEL]).ports if sp is not None]


def test_every_port_is_its_port_config_ini_line():
    layout, ports = _ports()
    assert port_map_problems(layout, CATALOGUE.port_maps[MODEL]) == []
    assert port_map_clashes(layout, CATALOGUE.port_maps[MODEL]) == []
    by_name = {row[0]: row for row in PORT_CONFIG}
    assert len(PORT_CONFIG) == 130 and len(ports) == 128
    unlike = []
    for sp in ports:
        name, lanes, alias, index, speed, fec = by_name.pop(sp.name)
        assert (sp.name, sp.alias, sp.index, str(sp.speed_mbps), sp.fec) == (name, alias, index, speed, fec)
        if sp.lanes != lanes:
            unlike.append((name, lanes))
        # Each port is one half of its cage's eight lanes in platform.json: a, then b.
        half = PLATFORM[index][:4] if alias.endswith("/1") else PLATFORM[index][4:]
        assert sp.lanes == ",".join(half), sp.name
    # Only the file's two lines with a lane twice differ, and there the cage's lanes are taken.
    assert dict(unlike) == TYPOS
    for lanes in TYPOS.values():
        assert len(set(lanes.split(","))) < 4
    # The two lines left: the SFP ports the catalogue model leaves out (10G, beyond lane 512).
    assert sorted(by_name) == ["Ethernet512", "Ethernet513"]
    assert {row[4] for row in by_name.values()} == {"10000"}
    lanes = [int(lane) for sp in ports for lane in sp.lanes.split(",")]
    assert sorted(lanes) == list(range(1, 513))  # every one of the chip's 512 lanes, once


def test_no_lane_rule_writes_this_board():
    """The reason for the list: 96 of the 128 ports are off the linear rule that starts at the
    first lane, and no first_lane/lane_step places more than a few dozen ports."""
    _, ports = _ports()
    actual = [sp.lanes for sp in ports]

    def rule(first: int, step: int) -> list[str]:
        return [",".join(str(first + i * step + k) for k in range(4)) for i in range(128)]

    assert sum(a != b for a, b in zip(actual, rule(1, 4), strict=True)) == 96
    best = max(sum(a == b for a, b in zip(actual, rule(first, 4), strict=True)) for first in range(0, 512))
    assert best == 32


def test_a_7060x6_leaf_config_passes_the_yang_models():
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    c = compile_text(ROCE.replace("switch: sn5600-128x400g", f"switch: {MODEL}"))
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    artifacts, notices = render(c, ["sonic"])
    assert notices == []
    switches = {d.name for d in c.fabric.devices if d.model == MODEL}
    configs = {k.split("/")[1].removesuffix(".json"): json.loads(v) for k, v in artifacts.items() if k.startswith("sonic/")}
    assert switches and switches <= set(configs)
    expected = {row[0]: row for row in PORT_CONFIG}
    for name in sorted(switches):
        cfg = configs[name]
        try:
            validate(cfg)
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")
        meta = cfg["DEVICE_METADATA"]["localhost"]
        assert (meta["hwsku"], meta["platform"]) == ("Arista-7060X6-64PE-O128S2", "x86_64-arista_7060x6_64pe")
        assert len(cfg["PORT"]) == 128
        for port, entry in cfg["PORT"].items():
            _, lanes, alias, index, speed, fec = expected[port]
            assert (entry["alias"], entry["index"], entry["speed"], entry["fec"]) == (alias, index, speed, fec)
            assert entry["lanes"] == lanes or TYPOS.get(port) == lanes
        assert cfg["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "2x400G"} and len(cfg["BREAKOUT_CFG"]) == 64


def _listed(entries: list[str], **group: str) -> str:
    """The ROCE blueprint on 7060X6 leaves, its port map overridden with these port entries, one a line."""
    keys = {"name_step": "4", "alias": "'Ethernet{cage}/{lane}'", **group}
    return (
        ROCE.replace("switch: sn5600-128x400g", f"switch: {MODEL}")
        + f"\ncatalogue:\n  port_maps:\n    {MODEL}:\n      groups:\n        - role: data\n"
        + "".join(f"          {k}: {v}\n" for k, v in keys.items())
        + "          ports:\n"
        + "".join(f"            - {e}\n" for e in entries)
    )


def _entries(lanes_of=None) -> list[str]:
    _, ports = _ports()
    return [f"{{name: {sp.name}, lanes: '{(lanes_of or {}).get(sp.name, sp.lanes)}'}}" for sp in ports]


def _first_entry_line(text: str) -> int:
    return text.splitlines().index("          ports:") + 2


def test_the_built_in_list_written_in_a_blueprint_compiles():
    text = _listed(_entries())
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    layout = c.fabric.layouts[MODEL]
    ports = sonic_ports(layout, c.catalogue.port_maps[MODEL]).ports
    assert ports[117] is not None and (ports[117].name, ports[117].lanes) == ("Ethernet468", "453,454,455,456")


def test_the_file_copied_as_it_is_is_an_error_at_the_repeated_lane():
    """port_config.ini's line for Ethernet468 gives lanes 453 and 454 twice: written so, the entry is
    refused at its line."""
    text = _listed(_entries(TYPOS))
    c = compile_text(text, "leaf.yaml")
    assert c.exit_code != 0
    found = [f for f in c.findings if "given twice in one port's lanes" in f.message]
    assert [f.location.line for f in found] == [_first_entry_line(text) + 117, _first_entry_line(text) + 124]
    assert "lane 453" in found[0].message and "lane 483" in found[1].message
    assert found[0].path[:8] == ("catalogue", "port_maps", MODEL, "groups", 0, "ports", 117, "lanes")


@pytest.mark.parametrize(
    "change, at, words",
    [
        # Ethernet8 given Ethernet0's lanes: the later port repeats them.
        (lambda e: e.__setitem__(2, "{name: Ethernet8, lanes: '17,18,19,20'}"), 2, "lane 17 is both Ethernet0's and Ethernet8's"),
        (
            lambda e: e.__setitem__(5, "{name: Ethernet20, lanes: [13, 14, 15, 16, 455, 456, 484, 1]}"),
            5,
            "Ethernet20 has 8 lanes",
        ),
        (lambda e: e.__setitem__(9, "{name: Ethernet32, lanes: '57,58,59,60'}"), 9, "entry 10 is named Ethernet32"),
        (lambda e: e.__setitem__(0, "{name: Ethernet0, lanes: '17,18,19,20', index: 2}"), 0, "index 2, its catalogue cage is 1"),
        (lambda e: e.__setitem__(3, "{name: Ethernet12, lanes: '5,6,7,8', alias: Ethernet1/1}"), 3, "'Ethernet1/1' is both"),
        (lambda e: e.pop(), None, "127 listed, the catalogue group has 128"),
    ],
)
def test_a_wrong_entry_is_a_located_port_map_error(change, at, words):
    entries = _entries()
    change(entries)
    text = _listed(entries)
    c = compile_text(text, "leaf.yaml")
    found = [f for f in c.findings if f.rule == "port-map"]
    assert c.exit_code == 1 and found, [f.message for f in c.findings]
    [f] = [f for f in found if words in f.message]
    base = ("catalogue", "port_maps", MODEL, "groups", 0, "ports")
    if at is None:
        assert f.path == base and f.location.line == _first_entry_line(text) - 1  # the ports: line
    else:
        assert f.path[:7] == (*base, at) and f.location.line == _first_entry_line(text) + at


def test_a_rule_and_a_list_together_are_refused():
    text = _listed(_entries(), lane_step="4")
    c = compile_text(text, "leaf.yaml")
    assert c.exit_code != 0
    assert any("either first_lane/lane_step or ports" in f.message for f in c.findings), [f.message for f in c.findings]


def test_lanes_as_a_list_or_as_port_config_writes_them_are_the_same():
    group = CATALOGUE.port_maps[MODEL].groups[0]
    same = group.model_validate({**group.model_dump(exclude_unset=True), "ports": [{"lanes": [17, 18, 19, 20]}]})
    written = group.model_validate({**group.model_dump(exclude_unset=True), "ports": [{"lanes": "17, 18,19,20"}]})
    assert same.ports == written.ports and same.ports is not None and same.ports[0].lanes == [17, 18, 19, 20]
    with pytest.raises(ValueError, match="comma-separated lane numbers"):
        group.model_validate({**group.model_dump(exclude_unset=True), "ports": [{"lanes": "17-20"}]})


@pytest.mark.parametrize("bad", ["a;id", "$(id)", "a b", "Ethernet1/1\\u2028x"])
def test_a_listed_alias_is_a_port_name_held_at_its_line(bad):
    entries = _entries()
    entries[3] = f'{{name: Ethernet12, lanes: "5,6,7,8", alias: "{bad}"}}'
    text = _listed(entries)
    c = compile_text(text, "leaf.yaml")
    assert c.exit_code == 2, [f.message for f in c.findings]
    [f] = [f for f in c.findings if f.path[:8] == ("catalogue", "port_maps", MODEL, "groups", 0, "ports", 3, "alias")]
    assert f.location.line == _first_entry_line(text) + 3


def test_a_listed_alias_replaces_the_template():
    entries = _entries()
    entries[3] = "{name: Ethernet12, lanes: '5,6,7,8', alias: etp2b}"
    c = compile_text(_listed(entries))
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    ports = sonic_ports(c.fabric.layouts[MODEL], c.catalogue.port_maps[MODEL]).ports
    assert [p.alias for p in ports[2:5]] == ["Ethernet2/1", "etp2b", "Ethernet3/1"]  # type: ignore[union-attr]
