"""Address pools across networks: a management network overlapping a fabric's pool gave 24
duplicate addresses in the switch configs and exit 0; now it is an error at the pool's line
naming both ranges."""

from __future__ import annotations

import pytest
from conftest import BLUEPRINTS, compile_file, compile_text

from supernodeiac.checks.address_pools import check_address_overlap
from supernodeiac.checks.base import CheckContext

ROCE = BLUEPRINTS / "roce-rail-2tier.yaml"
MGMT = "  addressing: {network: 10.200.0.0/16,"  # the provisioning URL follows


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("network", "other"),
    [
        ("10.128.0.0/16", "fabric roce's host pool 10.128.0.0/20"),  # the reproducer: the host /31s inside
        ("10.0.0.0/8", "fabric roce's loopback pool 10.0.0.0/24"),  # every pool of the fabric inside
        ("10.64.8.0/22", "fabric roce's point-to-point pool 10.64.0.0/20"),  # inside a pool
    ],
)
def test_a_management_network_overlapping_a_fabric_pool_is_an_error_at_its_line(network, other):
    text = ROCE.read_text()
    assert MGMT in text
    text = text.replace(MGMT, f"  addressing: {{network: {network},")
    c = compile_text(text, "roce.yaml")
    found = [f for f in c.findings if f.rule == "address-overlap"]
    assert found and c.exit_code == 1
    line = _line(text, "  addressing: {network: ")
    for f in found:
        assert (f.location.file, f.location.line) == ("roce.yaml", line), f
    assert any(f.message.startswith(f"the management network {network} overlaps {other}: ") for f in found), [
        f.message for f in found
    ]


def test_disjoint_pools_are_clean():
    c = compile_file(str(ROCE))
    assert not [f for f in c.findings if f.rule == "address-overlap"]


def test_two_fabrics_sharing_a_pool_and_the_management_network():
    c = compile_file(str(ROCE))
    bp = c.blueprint
    assert bp is not None and c.fabric is not None and c.catalogue is not None
    first = bp.scaleout[0]
    addressing = first.ethernet.addressing.model_copy(update={"loopbacks": "10.128.4.0/24", "hosts": "10.200.0.0/20"})
    second = first.model_copy(
        update={"name": "backend", "ethernet": first.ethernet.model_copy(update={"addressing": addressing})}
    )
    both = bp.model_copy(update={"scaleout": [first, second]})
    found = list(check_address_overlap(CheckContext(both, c.catalogue, c.fabric)))
    messages = sorted((f.path, f.message) for f in found)
    assert messages == sorted(
        [
            (
                ("scaleout", 1, "ethernet", "addressing", "p2p"),
                "fabric backend's point-to-point pool 10.64.0.0/20 overlaps fabric roce's point-to-point pool 10.64.0.0/20: "
                "switch configs and host addresses would hold the same address twice",
            ),
            (
                ("scaleout", 1, "ethernet", "addressing", "loopbacks"),
                "fabric backend's loopback pool 10.128.4.0/24 overlaps fabric roce's host pool 10.128.0.0/20: "
                "switch configs and host addresses would hold the same address twice",
            ),
            (
                ("management", "addressing", "network"),
                "the management network 10.200.0.0/16 overlaps fabric backend's host pool 10.200.0.0/20: "
                "switch configs and host addresses would hold the same address twice",
            ),
        ]
    ), messages


NVL72 = BLUEPRINTS / "nvl72-pod.yaml"


@pytest.mark.parametrize(
    ("network", "clash"),
    [("10.150.0.0/16", True), ("10.150.4.0/24", True), ("10.0.0.0/8", True), ("10.200.0.0/16", False)],
)
def test_a_management_network_overlapping_a_scale_up_in_band_pool_is_an_error(network, clash):
    """The compute trays' in-band addresses (IMEX's nodes_config.cfg) against the management
    network: duplicate host addresses before, with exit 0."""
    text = NVL72.read_text()
    anchor = "management:\n  switch: sn2201\n"
    assert anchor in text and "inband: {network: 10.150.0.0/16}" in text
    text = text.replace(anchor, anchor + f"  addressing: {{network: {network}}}\n")
    c = compile_text(text, "nvl.yaml")
    found = [f for f in c.findings if f.rule == "address-overlap"]
    if not clash:
        assert found == [] and c.exit_code == 0, [f.message for f in c.findings if f.severity == "error"]
        return
    [f] = found
    assert c.exit_code == 1
    assert f.message.startswith(f"the management network {network} overlaps scale-up domain nvl's in-band pool 10.150.0.0/16: ")
    assert (f.location.file, f.location.line) == ("nvl.yaml", _line(text, "  addressing: {network: "))


def test_a_loopback_pool_inside_the_management_network_is_an_error_at_the_management_network():
    text = ROCE.read_text()
    assert "loopbacks: 10.0.0.0/24 " in text
    text = text.replace("loopbacks: 10.0.0.0/24 ", "loopbacks: 10.200.7.0/24 ")
    c = compile_text(text, "roce.yaml")
    [f] = [f for f in c.findings if f.rule == "address-overlap"]
    assert f.message.startswith("the management network 10.200.0.0/16 overlaps fabric roce's loopback pool 10.200.7.0/24: ")
    assert (f.location.file, f.location.line) == ("roce.yaml", _line(text, MGMT)) and c.exit_code == 1
