"""The management network is loop-free by construction, read from the rendered SONiC configs: per
VLAN, the graph of bridged links (a port in VLAN_MEMBER on both ends, the far end named by the
port's description; PortChannel members folded into their PortChannel, an MCLAG pair into one
node) has no cycle in any shipped blueprint. A planted loop (the flat design with two uplinks per
rack) is a cycle in the rendered configs too, and the check reports it at its blueprint line. The
routed design's addresses, ASNs and BGP sessions agree end to end."""

from __future__ import annotations

import ipaddress
import json
from functools import cache

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import compile_file, render

SHIPPED = sorted(p.stem for p in BLUEPRINTS.glob("*.yaml"))


def _configs_of(compiled) -> dict[str, dict]:
    artifacts, _ = render(compiled, ["sonic"])
    return {
        path.split("/")[1].removesuffix(".json"): json.loads(data)
        for path, data in artifacts.items()
        if path.startswith("sonic/")
    }


@cache
def _shipped(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    return c, _configs_of(c)


def l2_cycles(configs: dict[str, dict]) -> dict[str, list[tuple[str, str]]]:
    """VLAN -> the bridged links that close a cycle, from config_db alone."""
    node: dict[str, str] = {}  # switch -> its L2 node (an MCLAG pair is one)
    by_source = {
        (key, domain["source_ip"]): sw for sw, cfg in configs.items() for key, domain in cfg.get("MCLAG_DOMAIN", {}).items()
    }
    for sw, cfg in configs.items():
        for key, domain in cfg.get("MCLAG_DOMAIN", {}).items():
            peer = by_source[(key, domain["peer_ip"])]  # the peer is the switch whose source is our peer_ip
            assert configs[peer]["MCLAG_DOMAIN"][key]["peer_ip"] == domain["source_ip"]
            node[sw] = "+".join(sorted({sw, peer}))
    lag_of: dict[tuple[str, str], str] = {}
    for sw, cfg in configs.items():
        for key in cfg.get("PORTCHANNEL_MEMBER", {}):
            lag, port = key.split("|")
            lag_of[(sw, port)] = lag
    members: dict[tuple[str, str], set[str]] = {}  # (switch, port) -> VLANs it bridges
    for sw, cfg in configs.items():
        for key in cfg.get("VLAN_MEMBER", {}):
            vlan, port = key.split("|")
            members.setdefault((sw, port), set()).add(vlan)
    edges: dict[str, set[tuple[str, str, str]]] = {}
    for sw, cfg in configs.items():
        for port, entry in cfg.get("PORT", {}).items():
            peer, _, peer_port = entry.get("description", "").partition(":")
            if peer not in configs:
                continue  # an end device (BMC, host): it does not bridge
            ends = ((sw, lag_of.get((sw, port), port)), (peer, lag_of.get((peer, peer_port), peer_port)))
            for vlan in members.get(ends[0], set()) & members.get(ends[1], set()):
                # One logical link per (LAG or port) pair of L2 nodes, counted once from its lower end:
                # an MCLAG interface's members on the two peers are one link.
                (x, xp), (y, yp) = sorted((node.get(n, n), p) for n, p in ends)
                edges.setdefault(vlan, set()).add((x, y, f"{x}|{xp}|{y}|{yp}"))
    cycles: dict[str, list[tuple[str, str]]] = {}
    for vlan, links in sorted(edges.items()):
        parent: dict[str, str] = {}
        for a, b, _ in sorted(links):
            if a == b:
                continue  # inside an MCLAG pair: its peer link
            ra, rb = _find(parent, a), _find(parent, b)
            if ra == rb:
                cycles.setdefault(vlan, []).append((a, b))
            else:
                parent[ra] = rb
    return cycles


def _find(parent: dict[str, str], v: str) -> str:
    while parent.get(v, v) != v:
        v = parent[v]
    return v


@pytest.mark.parametrize("name", SHIPPED)
def test_no_l2_loop_in_any_vlan_of_the_rendered_configs(name):
    c, configs = _shipped(name)
    if c.blueprint.management is None:
        pytest.skip("no management network")
    assert any("VLAN_MEMBER" in cfg for cfg in configs.values())  # there is a bridged network to look at
    assert l2_cycles(configs) == {}


FLAT = (BLUEPRINTS / "small-ib.yaml").read_text().replace("management:\n", "management:\n  design: flat\n", 1)


def test_a_planted_loop_is_in_the_configs_and_reported_at_its_line():
    c = compile_text(FLAT)
    loops = [f for f in c.findings if f.rule == "management-loop" and f.severity.value == "error"]
    assert len(loops) == 1, [f.message for f in c.findings]
    line = FLAT.splitlines().index("  design: flat") + 1
    assert loops[0].location.line == line
    # 6 rack switches x 2 uplinks over 2 aggregation switches joined by their inter-aggregation
    # link: 8 switches, 13 links, 13 - 8 + 1 = 6 cycles.
    assert "mgmt-agg-0" in loops[0].message and "5 more independent loops" in loops[0].message
    # The same loops are in what the configs say, independently of the check (the renderer does
    # not refuse a compiled blueprint with errors; the CLI does).
    assert sum(len(v) for v in l2_cycles(_configs_of(c)).values()) == 6
    # A flat tree (one uplink per rack) is loop-free in both.
    tree = compile_text(FLAT.replace("  uplinks: 2 ", "  uplinks: 1 "))
    assert not [f for f in tree.findings if f.rule == "management-loop"], [f.message for f in tree.findings]
    configs = _configs_of(tree)
    assert l2_cycles(configs) == {}
    # The gateway every device is told is a real interface: the first aggregation switch's, on the VLAN.
    assert "Vlan10|10.200.0.1/16" in configs["mgmt-agg-01"]["VLAN_INTERFACE"]
    assert "VLAN_INTERFACE" not in configs["mgmt-agg-02"]
    assert {v["gwaddr"] for cfg in configs.values() for v in cfg.get("MGMT_INTERFACE", {}).values()} == {"10.200.0.1"}


def test_routed_management_addresses_sessions_and_gateways_agree():
    c, configs = _shipped("small-ib")
    plan_net = ipaddress.ip_network(c.blueprint.management.addressing.network)
    racks = {d.name: d for d in c.fabric.devices if d.role == "mgmt"}
    aggs = [d.name for d in c.fabric.devices if d.role == "mgmt-agg"]
    assert len(racks) == 6 and len(aggs) == 2
    subnet_of: dict[str, ipaddress.IPv4Interface] = {}
    asns = set()
    for name, dev in racks.items():
        cfg = configs[name]
        (key,) = [k for k in cfg["VLAN_INTERFACE"] if "|" in k]
        gw = ipaddress.ip_interface(key.split("|")[1])
        # The rack's block: /26 (64 addresses) at site index r + 1, the switch its last-but-one address.
        assert gw.network.prefixlen == 26 and gw.network.subnet_of(plan_net)
        assert gw.ip == gw.network.broadcast_address - 1
        assert gw.network.network_address == plan_net.network_address + 64 * (dev.rack + 1)
        subnet_of[name] = gw
        assert all(v == {"tagging_mode": "untagged"} for v in cfg["VLAN_MEMBER"].values())  # uplinks are routed
        asns.add(cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"])
        # Two uplinks, two eBGP sessions, one to each aggregation switch, both ends in one /31.
        assert sorted(n["name"] for n in cfg["BGP_NEIGHBOR"].values()) == aggs
        for address, n in cfg["BGP_NEIGHBOR"].items():
            peer = configs[n["name"]]
            back = peer["BGP_NEIGHBOR"][n["local_addr"]]
            assert back["name"] == name and back["local_addr"] == address
            assert back["asn"] == cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"]
            assert n["asn"] == peer["DEVICE_METADATA"]["localhost"]["bgp_asn"]
            assert ipaddress.ip_interface(f"{address}/31").network == ipaddress.ip_interface(f"{n['local_addr']}/31").network
    assert len(asns) == len(racks)  # one ASN per rack, the aggregation layer another
    assert all("VLAN_MEMBER" not in configs[a] and "VLAN" not in configs[a] for a in aggs)
    # Every /31 is outside every rack's subnet.
    for a in aggs:
        for key in configs[a]["INTERFACE"]:
            if "|" in key:
                p31 = ipaddress.ip_interface(key.split("|")[1]).network
                assert not any(p31.overlaps(g.network) for g in subnet_of.values())


def test_routed_devices_take_their_rack_switch_as_gateway():
    c, configs = _shipped("roce-rail-2tier")
    seen = 0
    for name, cfg in configs.items():
        for key, value in cfg.get("MGMT_INTERFACE", {}).items():
            peer = cfg["MGMT_PORT"]["eth0"]["description"].split(":")[0]
            address = ipaddress.ip_interface(key.split("|")[1])
            (gw_key,) = [k for k in configs[peer]["VLAN_INTERFACE"] if "|" in k]
            gateway = ipaddress.ip_interface(gw_key.split("|")[1])
            assert value == {"gwaddr": str(gateway.ip)} and address.network == gateway.network, name
            assert address.ip != gateway.network.network_address
            seen += 1
    assert seen > 10


def test_routed_per_rack_must_be_a_subnet():
    text = (
        (BLUEPRINTS / "small-ib.yaml")
        .read_text()
        .replace("addressing: {network: 10.200.0.0/16,", "addressing: {network: 10.200.0.0/16, per_rack: 60,")
    )
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "mgmt-addressing"]
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "per_rack: 60," in row)
    assert found and "power of two" in found[0].message and found[0].location.line == line


MCLAG = (BLUEPRINTS / "small-ib.yaml").read_text().replace("management:\n", "management:\n  design: mclag\n", 1)


@cache
def _mclag():
    c = compile_text(MCLAG)
    assert c.exit_code == 0, [f.message for f in c.findings]
    return c, _configs_of(c)


def test_mclag_pair_one_portchannel_per_rack_and_no_loop():
    """design: mclag: the aggregation pair is one MCLAG domain joined by a 2-cable peer link, each
    rack switch's two uplinks are one PortChannel (one member on each peer) that is an MCLAG
    interface on both peers, and the gateway is the pair's VLAN interface. As bridged links the
    6 rack switches x 2 uplinks + 2 peer cables (14 cables, 8 switches) would close 14 - 8 + 1 = 7
    loops; as logical links (6 PortChannels to one node) they close none, in the check and in the
    configs."""
    c, configs = _mclag()
    assert not [f for f in c.findings if f.rule == "management-loop"]
    assert l2_cycles(configs) == {}
    aggs = sorted(d.name for d in c.fabric.devices if d.role == "mgmt-agg")
    racks = sorted(d.name for d in c.fabric.devices if d.role == "mgmt")
    a, b = (configs[n] for n in aggs)
    (da,), (db,) = a["MCLAG_DOMAIN"].values(), b["MCLAG_DOMAIN"].values()
    assert da["peer_link"] == db["peer_link"] and da["source_ip"] == db["peer_ip"] and db["source_ip"] == da["peer_ip"]
    peer_link = da["peer_link"]
    for cfg, other in ((a, aggs[1]), (b, aggs[0])):
        peer_members = [k.split("|")[1] for k in cfg["PORTCHANNEL_MEMBER"] if k.startswith(peer_link + "|")]
        assert len(peer_members) == 2  # mclag.peer_links default
        assert all(cfg["PORT"][p]["description"].startswith(other + ":") for p in peer_members)
        assert {"Vlan4094|" + peer_link, "Vlan10|" + peer_link} <= set(cfg["VLAN_MEMBER"])
    # Every rack switch: one PortChannel of its two uplinks, one member on each peer, the same
    # PortChannel name at all three ends and an MCLAG interface on both peers.
    for name in racks:
        cfg = configs[name]
        (lag,) = cfg["PORTCHANNEL"]
        members = [k.split("|")[1] for k in cfg["PORTCHANNEL_MEMBER"]]
        assert len(members) == 2
        far = sorted(cfg["PORT"][p]["description"].split(":")[0] for p in members)
        assert far == aggs
        for peer_cfg in (a, b):
            assert f"1|{lag}" in peer_cfg["MCLAG_INTERFACE"]
            far_members = [k for k in peer_cfg["PORTCHANNEL_MEMBER"] if k.startswith(lag + "|")]
            assert len(far_members) == 1
            port = far_members[0].split("|")[1]
            assert peer_cfg["PORT"][port]["description"].split(":")[0] == name
        assert cfg["VLAN_MEMBER"][f"Vlan10|{lag}"] == {"tagging_mode": "tagged"}
        assert not any(f"Vlan10|{p}" in cfg["VLAN_MEMBER"] for p in members)  # members do not bridge
    assert len(a["MCLAG_INTERFACE"]) == len(racks)
    # The gateway every device is told is a real interface: both peers carry it on the VLAN.
    gateway = ipaddress.ip_address("10.200.0.1")
    for cfg in (a, b):
        assert "Vlan10|10.200.0.1/16" in cfg["VLAN_INTERFACE"]
    gwaddrs = {v["gwaddr"] for cfg in configs.values() for v in cfg.get("MGMT_INTERFACE", {}).values()}
    assert gwaddrs == {str(gateway)}


def test_mclag_configs_pass_the_sonic_models():
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    _, configs = _mclag()
    for name in sorted(n for n in configs if n.startswith("mgmt-")):
        try:
            validate(configs[name])
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")


def test_a_portchannel_taken_apart_is_a_loop_in_the_configs():
    """The L2 graph still sees a loop when a rack switch's uplinks bridge as two ports (its
    PortChannel taken apart in the rendered config): the two members reach the pair twice."""
    _, configs = _mclag()
    broken = json.loads(json.dumps(configs))
    cfg = broken["mgmt-A01"]
    (lag,) = cfg["PORTCHANNEL"]
    members = [k.split("|")[1] for k in cfg.pop("PORTCHANNEL_MEMBER")]
    del cfg["VLAN_MEMBER"][f"Vlan10|{lag}"]
    for port in members:
        cfg["VLAN_MEMBER"][f"Vlan10|{port}"] = {"tagging_mode": "tagged"}
    assert l2_cycles(broken) == {"Vlan10": [("mgmt-A01", "mgmt-agg-01+mgmt-agg-02")]}


@pytest.mark.parametrize(
    "edit, marker, words",
    [
        (("    switch: sn4600c\n    count: 2\n", "    switch: sn4600c\n    count: 3\n"), "count: 3", "pair"),
        (("  uplinks: 2 ", "  uplinks: 1 "), "uplinks: 1", "as many members"),
        (("  design: mclag\n", "  design: mclag\n  mclag: {keepalive: 10.200.9.0/31}\n"), "mclag: {", "overlaps"),
        (("  design: mclag\n", "  design: mclag\n  mclag: {keepalive: 169.254.1.0/30}\n"), "mclag: {", "/31"),
        (("  design: mclag\n", "  design: mclag\n  mclag: {peer_links: 64}\n"), "mclag: {", "peer link"),
    ],
)
def test_mclag_bad_values_are_located_errors(edit, marker, words):
    text = MCLAG.replace(*edit, 1)
    assert text != MCLAG
    c = compile_text(text)
    errors = [f for f in c.findings if f.severity.value == "error"]
    assert c.exit_code != 0 and errors, [f.message for f in c.findings]
    assert words in errors[0].message
    line = next(n for n, row in enumerate(text.splitlines(), 1) if marker in row)
    assert errors[0].location.line == line, (errors[0].location, errors[0].message)


def test_mclag_settings_need_the_mclag_design():
    c = compile_text(FLAT.replace("  design: flat\n", "  design: flat\n  mclag: {domain_id: 3}\n", 1))
    assert c.exit_code != 0 and any("design: mclag" in f.message for f in c.findings)
