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
    for sw, cfg in configs.items():
        for domain in cfg.get("MCLAG_DOMAIN", {}).values():
            pair = sorted({sw, domain.get("peer_name", sw)})
            node[sw] = "+".join(pair)
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
                # One logical link per (LAG or port) pair, counted once from its lower end.
                (x, xp), (y, yp) = sorted(ends)
                edges.setdefault(vlan, set()).add((f"{node.get(x, x)}", f"{node.get(y, y)}", f"{x}|{xp}|{y}|{yp}"))
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
    # 6 rack switches x 2 uplinks over 2 aggregation switches: 8 switches, 12 links, 12 - 8 + 1 = 5 cycles.
    assert "mgmt-agg-0" in loops[0].message and "4 more independent loops" in loops[0].message
    # The same loops are in what the configs say, independently of the check (the renderer does
    # not refuse a compiled blueprint with errors; the CLI does).
    assert sum(len(v) for v in l2_cycles(_configs_of(c)).values()) == 5
    # A flat tree (one uplink per rack) is loop-free in both.
    tree = compile_text(FLAT.replace("  uplinks: 2 ", "  uplinks: 1 "))
    assert not [f for f in tree.findings if f.rule == "management-loop"], [f.message for f in tree.findings]
    assert l2_cycles(_configs_of(tree)) == {}


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
        .replace("addressing: {network: 10.200.0.0/16}", "addressing: {network: 10.200.0.0/16, per_rack: 60}")
    )
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "mgmt-addressing"]
    assert found and "power of two" in found[0].message and found[0].location.line == 55
