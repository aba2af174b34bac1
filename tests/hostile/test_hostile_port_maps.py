"""SONiC port maps: a port-map override whose ports share SerDes lanes, or that gives one alias
to several ports, was accepted (configs with one lane on two ports, LLDP unable to tell the
ports apart); now each is an error at its group's key."""

from __future__ import annotations

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.catalog import merged
from supernodeiac.catalog.types import Catalogue
from supernodeiac.fabric import PortLayout
from supernodeiac.facts.sonic_ports import port_map_clashes

ROCE = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
CATALOGUE = Catalogue.model_validate(merged(None))


def _override(groups: str):  # -> (blueprint text, Compiled)
    text = ROCE + f"\ncatalogue:\n  port_maps:\n    sn5600-128x400g:\n      groups: {groups}\n"
    c = compile_text(text, "roce.yaml")
    return text, c


@pytest.mark.parametrize(
    ("groups", "key", "words"),
    [
        (
            "[{role: data, name_step: 4, lane_step: 2}]",  # 4-lane ports two lanes apart
            "lane_step",
            "data ports share SerDes lanes: lane 2 is both Ethernet0's and Ethernet4's (254 lanes given twice)",
        ),
        (
            "[{role: data, name_step: 4, lane_step: 4, alias: 'etp{sub}'}]",  # no {cage}: a, b on every cage
            "alias",
            "data ports share aliases: 'etpa' is both Ethernet0's and Ethernet8's (126 ports repeat an alias)",
        ),
    ],
)
def test_a_shared_lane_or_alias_is_an_error_at_its_line(groups, key, words):
    text, c = _override(groups)
    found = [f for f in c.findings if f.rule == "port-map"]
    assert c.exit_code == 1 and found, [f.message for f in c.findings]
    [f] = [f for f in found if words in f.message]
    assert f.path == ("catalogue", "port_maps", "sn5600-128x400g", "groups", 0, key)
    assert (f.location.file, f.location.line) == ("roce.yaml", text.count("\n"))  # the groups line


def test_one_alias_on_every_uplink_is_named():
    """The campaign's case: one fixed alias given to every port of a group."""
    device = CATALOGUE.devices["sn2201"]
    port_map = CATALOGUE.port_maps["sn2201"]
    uplink = port_map.groups[1].model_copy(update={"alias": "uplink"})
    clashes = port_map_clashes(PortLayout(device), port_map.model_copy(update={"groups": [port_map.groups[0], uplink]}))
    assert clashes == [
        (
            ("groups", 1, "alias"),
            "uplink ports share aliases: 'uplink' is both Ethernet48's and Ethernet52's (3 ports repeat an alias)",
            "an alias template with {cage} (and {sub} on split cages), so every port has its own",
        )
    ]


@pytest.mark.parametrize("model", sorted(CATALOGUE.port_maps))
def test_the_built_in_maps_have_no_clash(model):
    assert port_map_clashes(PortLayout(CATALOGUE.devices[model]), CATALOGUE.port_maps[model]) == []
