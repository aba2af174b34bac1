"""SONiC port maps against the catalogue: the catalogue model (port groups, cages, faceplate
numbering) is the source of truth for everything physical, and a map that disagrees with it is a
located error, so that a config, the cabling list and `snc verify` never place a port differently."""

from __future__ import annotations

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.catalog import merged
from supernodeiac.catalog.types import Catalogue
from supernodeiac.fabric import PortLayout
from supernodeiac.facts.sonic_ports import port_map_problems, sonic_ports

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
CATALOGUE = Catalogue.model_validate(merged(None))


@pytest.mark.parametrize("model", sorted(CATALOGUE.port_maps))
def test_built_in_maps_agree_with_their_catalogue_models(model):
    layout = PortLayout(CATALOGUE.devices[model])
    port_map = CATALOGUE.port_maps[model]
    assert port_map_problems(layout, port_map) == []
    for p, sp in enumerate(sonic_ports(layout, port_map).ports):
        if sp is None:
            continue
        cage = layout.cage_of(p)
        # SONiC's index is the faceplate cage; the alias carries it and the position in a split cage.
        assert sp.index == str(cage.number) and str(cage.number) in sp.alias
        assert sp.lanes.count(",") + 1 == layout.port_groups[p].lanes
        assert sp.speed_mbps == round(layout.port_groups[p].speed_gbps * 1000)
        assert sp.cage_master == layout.names[cage.ports[0]]


def test_uplink_cages_are_numbered_on_from_the_access_ports():
    layout = PortLayout(CATALOGUE.devices["sn2201"])
    ports = sonic_ports(layout, CATALOGUE.port_maps["sn2201"]).ports
    assert [(p.name, p.alias, p.index) for p in ports[48:52]] == [  # type: ignore[union-attr]
        ("Ethernet48", "etp49", "49"),
        ("Ethernet52", "etp50", "50"),
        ("Ethernet56", "etp51", "51"),
        ("Ethernet60", "etp52", "52"),
    ]


def test_cages_follow_the_catalogue_when_it_changes():
    """Renumber the sn2201 uplink cages in the catalogue: the configs' index and alias follow."""
    text = SMALL + (
        "\ncatalogue:\n  devices:\n    sn2201:\n      ports:\n"
        "        - {role: data, count: 48, speed_gbps: 1, lanes: 1, cage: rj45, name: 'Ethernet{i}'}\n"
        "        - {role: uplink, count: 4, speed_gbps: 100, lanes: 4, cage: qsfp28, name: 'Ethernet{lane0}',"
        " first_index: 12, first_cage: 61}\n"
    )
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    ports = sonic_ports(c.fabric.layouts["sn2201"], c.catalogue.port_maps["sn2201"]).ports
    assert (ports[48].alias, ports[48].index) == ("etp61", "61")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "group, words",
    [
        ("{role: data, name_step: 4, lane_step: 4, breakout_mode: '1x800G[400G]'}", "splits a cage into 1 x 800G"),
        ("{role: data, name_step: 4, lane_step: 4, lanes: 8}", "8 lanes here and 4 in the catalogue"),
        ("{role: data, name_step: 4, lane_step: 4, speed_mbps: 200000}", "200000 Mb/s here and 400000 Mb/s"),
        ("{role: data, name_step: 8, lane_step: 4}", "names 127 ports unlike the catalogue"),
        ("{role: storage, name_step: 4, lane_step: 4}", "roles the model lacks: storage"),
    ],
)
def test_a_map_that_disagrees_with_the_catalogue_is_a_located_error(group, words):
    roce = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
    text = roce + (f"\ncatalogue:\n  port_maps:\n    sn5600-128x400g:\n      groups: [{group}]\n")
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "port-map"]
    assert c.exit_code == 1 and found, [f.message for f in c.findings]
    assert any(words in f.message for f in found), [f.message for f in found]
    # at the model, or (a lane or alias two ports share) at the group's key
    assert all(f.path[:3] == ("catalogue", "port_maps", "sn5600-128x400g") and f.location is not None for f in found)


def test_a_breakout_mode_the_catalogue_does_not_list_is_an_error():
    port_map = CATALOGUE.port_maps["sn5600"].model_copy(
        update={"groups": [CATALOGUE.port_maps["sn5600"].groups[0].model_copy(update={"breakout_mode": "1x800G"})]}
    )
    device = CATALOGUE.devices["sn5600"]
    data = device.ports[0].model_copy(update={"breakout": ["2x400G", "4x200G"]})
    layout = PortLayout(device.model_copy(update={"ports": [data, *device.ports[1:]]}))
    [(at, problem, _)] = port_map_problems(layout, port_map)
    assert at == ()  # at the model
    assert "not one the catalogue lists" in problem
