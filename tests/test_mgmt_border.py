"""The management network's border toward the site (management.border), its gateways and DHCP
relays, read from the rendered SONiC configs and Kea's config: every border link has both ends
(the switch's routed port and the site router's address in one /31, the router named in the
port's description), a BGP session per link whose neighbour is the router (its ASN) and whose
local address is the switch's end, the management network announced as one aggregate; in the
MCLAG design both peers carry the gateway and relay DHCP to the server beyond the border, and
Kea's subnets name the relay address the switches send from; the flat design's two aggregation
switches are one VLAN (a tree) through their inter-aggregation link. Bad border input is a
located error."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from functools import cache

import pytest
from conftest import BLUEPRINTS, compile_text
from test_mgmt_l2 import _find, l2_cycles

from supernodeiac.pipeline import render

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
ROUTERS = [("site-r1", 65100), ("site-r2", 65200)]
BORDER = "  border:\n    routers: [{name: site-r1, asn: 65100}, {name: site-r2, asn: 65200}]\n    network: 192.0.2.0/29\n"
SERVICES = "services:\n  networks: [10.10.0.0/24]\n  dhcp: [10.10.0.67]\n"
MGMT_NET = ipaddress.ip_network("10.200.0.0/16")


def _text(design: str | None = None, border: str = BORDER, uplinks: int = 2, services: str = SERVICES) -> str:
    text = SMALL.replace("  pdus: {model: pdu-3ph, per_rack: 3}\n", "  pdus: {model: pdu-3ph, per_rack: 3}\n" + border, 1)
    if design is not None:
        text = text.replace("management:\n", f"management:\n  design: {design}\n", 1)
    if uplinks != 2:
        text = text.replace("  uplinks: 2 ", f"  uplinks: {uplinks} ", 1)
    text = text.replace("management:\n", services + "management:\n", 1)
    assert border in text and services in text
    return text


@cache
def _compiled(design: str | None = None, uplinks: int = 2):
    c = compile_text(_text(design, uplinks=uplinks))
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["sonic", "dhcp"])
    configs = {p.split("/")[1].removesuffix(".json"): json.loads(d) for p, d in files.items() if p.startswith("sonic/")}
    return c, configs, files


def _aggs(c) -> list[str]:
    return [d.name for d in c.fabric.devices if d.role == "mgmt-agg"]


def _border_ends(cfg: dict) -> dict[str, tuple[str, ipaddress.IPv4Interface]]:
    """Port -> (site router it faces, its address), from PORT descriptions and INTERFACE alone."""
    routers = {name for name, _ in ROUTERS}
    out = {}
    for key in cfg.get("INTERFACE", {}):
        if "|" not in key:
            continue
        port, address = key.split("|")
        far = cfg["PORT"][port]["description"].split(":")[0]
        if far in routers:
            out[port] = (far, ipaddress.ip_interface(address))
    return out


def _check_border(c, configs: dict, switches: list[str]) -> None:
    """Both ends of every border link and its session, for the switches that uplink."""
    asn = str(c.blueprint.management.addressing.asn)
    seen_links = set()
    for name in switches:
        cfg = configs[name]
        ends = _border_ends(cfg)
        assert sorted(r for r, _ in ends.values()) == sorted(r for r, _ in ROUTERS), name  # one link to each router
        assert cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"] == asn  # the local ASN of the sessions
        site = {a: n for a, n in cfg["BGP_NEIGHBOR"].items() if n["name"].startswith("site-")}
        assert len(site) == len(ROUTERS)
        for port, (router, own) in ends.items():
            assert cfg["PORT"][port]["admin_status"] == "up"
            assert own.network.prefixlen == 31 and own.network.subnet_of(ipaddress.ip_network("192.0.2.0/29"))
            (peer,) = [a for a, n in site.items() if n["name"] == router]
            # The far end: the other address of the /31, the router's ASN, from our end.
            assert ipaddress.ip_address(peer) in own.network and ipaddress.ip_address(peer) != own.ip
            assert site[peer]["asn"] == str(dict(ROUTERS)[router])
            assert site[peer]["local_addr"] == str(own.ip) and site[peer]["admin_status"] == "up"
            seen_links.add(own.network)
        ports = {i for i in ends}
        cabled = {cfg["PORT"][p]["description"] for p in cfg["PORT"] if p not in ports and cfg["PORT"][p]["admin_status"] == "up"}
        assert not any(d.startswith("site-") for d in cabled)
    assert len(seen_links) == len(switches) * len(ROUTERS)  # every link its own /31
    records = c.fabric.facts["mgmt"]["border"]
    assert len(records) == len(switches) * len(ROUTERS)
    assert {r["switch"] for r in records} == set(switches)


def _fabric_ports(c, name: str) -> set[int]:
    t = c.fabric.links
    index = c.fabric.device(name).index
    return {p for a, p in zip(t.a, t.a_port) if a == index} | {p for b, p in zip(t.b, t.b_port) if b == index}


def test_routed_border_links_sessions_and_the_aggregate():
    """Routed design: both aggregation switches uplink to both routers (2 x 2 links of
    192.0.2.0/29), peer from the aggregation ASN, and announce 10.200.0.0/16 as a discard
    route with advertise (the rack /26s are learned over BGP); the border ports are none of the
    Fabric's cabled ports and the rack switches' sessions are unchanged."""
    c, configs, _ = _compiled()
    aggs = _aggs(c)
    _check_border(c, configs, aggs)
    for name in aggs:
        cfg = configs[name]
        assert cfg["STATIC_ROUTE"] == {"default|10.200.0.0/16": {"advertise": "true", "blackhole": "true"}}
        ports = {r["port"] for r in c.fabric.facts["mgmt"]["border"] if r["switch"] == name}
        assert ports and not ports & _fabric_ports(c, name)
        # Still one session per rack uplink besides the border's.
        racks = [n for n in cfg["BGP_NEIGHBOR"].values() if n["name"].startswith("mgmt-")]
        assert len(racks) == sum(1 for d in c.fabric.devices if d.role == "mgmt")
    # The border moves no rack uplink address: the same configs as without it, but for the border.
    plain = compile_text(SMALL.replace("management:\n", SERVICES + "management:\n", 1))
    files, _ = render(plain, ["sonic"])
    for name in aggs:
        before = json.loads(files[f"sonic/{name}.json"])
        after = configs[name]
        assert set(before["INTERFACE"]) < set(after["INTERFACE"])
        assert {k: v for k, v in after["BGP_NEIGHBOR"].items() if not v["name"].startswith("site-")} == before["BGP_NEIGHBOR"]
    rack = next(d.name for d in c.fabric.devices if d.role == "mgmt")
    assert configs[rack] == json.loads(files[f"sonic/{rack}.json"])


def test_mclag_both_peers_gateway_relay_and_border():
    """MCLAG design: both peers carry the gateway 10.200.0.1/16 on Vlan10 and relay its DHCP to
    the server beyond the border (10.10.0.67, in services.networks); the rack switches only bridge
    and relay nothing; both peers uplink to both routers; the aggregate is the VLAN's own prefix
    (no discard route); Kea's one subnet names the gateway as its relay."""
    c, configs, files = _compiled("mclag")
    aggs = _aggs(c)
    assert len(aggs) == 2
    _check_border(c, configs, aggs)
    for name in aggs:
        cfg = configs[name]
        assert "Vlan10|10.200.0.1/16" in cfg["VLAN_INTERFACE"]
        assert cfg["VLAN"]["Vlan10"]["dhcp_servers"] == ["10.10.0.67"]
        assert cfg["FEATURE"] == {"dhcp_relay": {"state": "enabled"}}  # off by default on a MgmtLeafRouter
        assert "STATIC_ROUTE" not in cfg
    assert configs[aggs[0]]["VLAN"]["Vlan10"] == configs[aggs[1]]["VLAN"]["Vlan10"]  # consistently
    _check_ibgp(configs, aggs)
    for d in c.fabric.devices:
        if d.role == "mgmt":
            assert "dhcp_servers" not in configs[d.name]["VLAN"]["Vlan10"], d.name
            assert "FEATURE" not in configs[d.name]
    assert l2_cycles(configs) == {}  # the border ports are routed: no VLAN member among them
    (subnet,) = json.loads(files["dhcp/kea-dhcp4.json"])["Dhcp4"]["subnet4"]
    assert subnet["subnet"] == "10.200.0.0/16" and subnet["relay"] == {"ip-addresses": ["10.200.0.1"]}
    assert subnet["option-data"] == [{"name": "routers", "data": "10.200.0.1"}]


def _check_ibgp(configs: dict, aggs: list[str]) -> None:
    """The MCLAG peers' iBGP session over the keepalive VLAN: each the other's neighbour at the
    other's keepalive address, one ASN, next hop self (routes learned from the site pass on)."""
    a, b = (configs[n] for n in aggs)
    asn = a["DEVICE_METADATA"]["localhost"]["bgp_asn"]
    assert b["DEVICE_METADATA"]["localhost"]["bgp_asn"] == asn
    (da,), (db,) = a["MCLAG_DOMAIN"].values(), b["MCLAG_DOMAIN"].values()
    for cfg, domain, other in ((a, da, aggs[1]), (b, db, aggs[0])):
        n = cfg["BGP_NEIGHBOR"][domain["peer_ip"]]
        assert n["name"] == other and n["asn"] == asn and n["local_addr"] == domain["source_ip"] and n["nhopself"] == "1"
        assert f"Vlan4094|{domain['source_ip']}/31" in cfg["VLAN_INTERFACE"]


def test_mclag_one_border_peer_still_routes_both():
    """border.switches naming one MCLAG peer: only it uplinks, and the other learns the site's
    routes from it over their iBGP session (a host's PortChannel may hash to either)."""
    border = "  border:\n    routers: [{name: site-r1, asn: 65100}]\n    switches: [mgmt-agg-01]\n    network: 192.0.2.0/31\n"
    c = compile_text(_text("mclag", border=border))
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["sonic"])
    aggs = _aggs(c)
    configs = {n: json.loads(files[f"sonic/{n}.json"]) for n in aggs}
    _check_ibgp(configs, aggs)
    assert [n["name"] for n in configs[aggs[0]]["BGP_NEIGHBOR"].values()] == ["site-r1", aggs[1]]
    assert [n["name"] for n in configs[aggs[1]]["BGP_NEIGHBOR"].values()] == [aggs[0]]


def test_routed_kea_subnets_name_the_rack_switch_that_relays_them():
    """Routed design: every Kea subnet's relay address is the VLAN interface of the one switch
    that relays it, and that switch's VLAN carries the DHCP server."""
    c, configs, files = _compiled()
    relays = {}
    for cfg in configs.values():
        vlan = cfg.get("VLAN", {}).get("Vlan10", {})
        if "dhcp_servers" in vlan:
            assert vlan["dhcp_servers"] == ["10.10.0.67"]
            (key,) = [k for k in cfg["VLAN_INTERFACE"] if "|" in k]
            iface = ipaddress.ip_interface(key.split("|")[1])
            relays[str(iface.network)] = str(iface.ip)
    subnets = json.loads(files["dhcp/kea-dhcp4.json"])["Dhcp4"]["subnet4"]
    assert len(subnets) == len(relays) > 4
    for s in subnets:
        assert s["relay"] == {"ip-addresses": [relays[s["subnet"]]]}, s["subnet"]


def test_flat_two_aggregation_switches_are_one_tree():
    """Flat design, one uplink per rack over two aggregation switches: the second is cabled to
    the first (the gateway) and bridges the VLAN over that link, so every rack switch reaches the
    gateway in one L2 tree (no cycle); only the first, the gateway, uplinks to the site and relays."""
    c, configs, files = _compiled("flat", uplinks=1)
    aggs = _aggs(c)
    assert l2_cycles(configs) == {}
    # One component from config_db alone: the bridged links (a VLAN member at both ends).
    parent: dict[str, str] = {}
    members = {(sw, k.split("|")[1]) for sw, cfg in configs.items() for k in cfg.get("VLAN_MEMBER", {})}
    for sw, cfg in configs.items():
        for port, entry in cfg.get("PORT", {}).items():
            peer, _, peer_port = entry.get("description", "").partition(":")
            if peer in configs and (sw, port) in members and (peer, peer_port) in members:
                parent[_find(parent, sw)] = _find(parent, peer)
    bridges = [n for n in configs if n.startswith("mgmt-") and not n.startswith("mgmt-oob")]
    assert len({_find(parent, n) for n in bridges}) == 1
    inter = [p for p, e in configs[aggs[1]]["PORT"].items() if e.get("description", "").startswith(aggs[0] + ":")]
    assert len(inter) == 1 and configs[aggs[1]]["VLAN_MEMBER"][f"Vlan10|{inter[0]}"] == {"tagging_mode": "tagged"}
    _check_border(c, configs, aggs[:1])
    assert configs[aggs[0]]["VLAN"]["Vlan10"]["dhcp_servers"] == ["10.10.0.67"]
    assert "dhcp_servers" not in configs[aggs[1]]["VLAN"]["Vlan10"] and "BGP_NEIGHBOR" not in configs[aggs[1]]


@pytest.mark.parametrize("design", [None, "mclag", "flat"])
def test_border_configs_pass_the_sonic_models(design):
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    c, configs, _ = _compiled(design, uplinks=1 if design == "flat" else 2)
    names = [d.name for d in c.fabric.devices if d.role in ("mgmt-agg", "mgmt")][:4]
    for name in sorted(set(names) | set(_aggs(c))):
        try:
            validate(configs[name])
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")


@pytest.mark.parametrize("design", [None, "mclag", "flat"])
def test_kea_accepts_the_relayed_config(design, tmp_path):
    kea = shutil.which("kea-dhcp4") or shutil.which("kea-dhcp4", path="/usr/sbin:/sbin")
    if kea is None:
        pytest.skip("kea-dhcp4 not installed (Debian: apt-get install kea-dhcp4-server)")
    _, _, files = _compiled(design, uplinks=1 if design == "flat" else 2)
    assert all("relay" in s for s in json.loads(files["dhcp/kea-dhcp4.json"])["Dhcp4"]["subnet4"])
    path = tmp_path / "kea-dhcp4.json"
    path.write_bytes(files["dhcp/kea-dhcp4.json"])
    run = subprocess.run([kea, "-t", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_server_inside_the_management_network_is_not_relayed_on_the_one_vlan():
    """MCLAG (as flat): the one VLAN reaches a DHCP server inside it by broadcast, so no relay (it
    would answer twice) and no relay address in Kea."""
    text = _text("mclag", services="services:\n  dhcp: [10.200.0.10]\n")  # in block 0, beside the gateway
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["sonic", "dhcp"])
    for name in _aggs(c):
        assert "dhcp_servers" not in json.loads(files[f"sonic/{name}.json"])["VLAN"]["Vlan10"]
    assert all("relay" not in s for s in json.loads(files["dhcp/kea-dhcp4.json"])["Dhcp4"]["subnet4"])


def test_given_links_keep_the_sites_addresses_and_ports():
    border = (
        "  border:\n"
        "    routers: [{name: site-r1, asn: 65100}]\n"
        "    switches: [mgmt-agg-02]\n"
        "    links:\n"
        "      - {switch: mgmt-agg-02, router: site-r1, address: 198.51.100.7/31, peer: 198.51.100.6, peer_port: Ethernet1/49}\n"
        "    announce: [10.200.0.0/16, 10.201.0.0/24]\n"
    )
    c = compile_text(_text(border=border))
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["sonic"])
    one, two = (json.loads(files[f"sonic/mgmt-agg-0{k}.json"]) for k in (1, 2))
    assert "site-r1" not in json.dumps(one)
    (port,) = [p for p, e in two["PORT"].items() if e.get("description") == "site-r1:Ethernet1/49"]
    assert f"{port}|198.51.100.7/31" in two["INTERFACE"]
    assert two["BGP_NEIGHBOR"]["198.51.100.6"]["local_addr"] == "198.51.100.7"
    assert set(two["STATIC_ROUTE"]) == {"default|10.200.0.0/16", "default|10.201.0.0/24"}


BAD = [
    # (border text, the line's marker, words of the message)
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    switches: [mgmt-agg-09]\n    network: 192.0.2.0/29\n",
     "switches:", "not an aggregation switch"),
    ("  border:\n    routers: [{name: r1, asn: 65100}, {name: r2, asn: 65100}]\n    network: 192.0.2.0/30\n",
     "network:", "point-to-point links"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    network: 10.200.255.0/29\n", "network:", "overlaps"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    network: 2001:db8::/125\n", "network:", "IPv6"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n", "border:", "one of them"),
    ("  border:\n    routers: [{name: r1, asn: 65100}, {name: r1, asn: 65101}]\n    network: 192.0.2.0/29\n",
     "border:", "repeat"),
    ("  border:\n    routers: [{name: r1, asn: 0}]\n    network: 192.0.2.0/29\n", "routers:", "reserved"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    links:\n"
     "      - {switch: mgmt-agg-01, router: r1, address: 192.0.2.1/31, peer: 192.0.2.9}\n",
     "- {switch", "other address"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    links:\n"
     "      - {switch: mgmt-agg-01, router: r9, address: 192.0.2.1/31, peer: 192.0.2.0}\n",
     "- {switch", "not a site router"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    network: 192.0.2.0/29\n    announce: [2001:db8::/48]\n",
     "announce:", "family"),
]  # fmt: skip


@pytest.mark.parametrize("border, marker, words", BAD)
def test_bad_border_input_is_a_located_error(border, marker, words):
    text = _text(border=border)
    c = compile_text(text)
    errors = [f for f in c.findings if f.severity.value == "error"]
    assert c.exit_code != 0 and errors, [f.message for f in c.findings]
    assert words in errors[0].message, errors[0].message
    rows = text.splitlines()
    start = rows.index("  border:")
    line = next(n for n, row in enumerate(rows[start:], start + 1) if marker in row)
    assert errors[0].location.line == line, (errors[0].location, errors[0].message)


def test_flat_border_on_a_switch_without_the_gateway_is_a_located_error():
    border = "  border:\n    routers: [{name: r1, asn: 65100}]\n    switches: [mgmt-agg-02]\n    network: 192.0.2.0/29\n"
    text = _text("flat", border=border, uplinks=1)
    c = compile_text(text)
    errors = [f for f in c.findings if f.severity.value == "error"]
    assert errors and "does not route the management network" in errors[0].message
    assert errors[0].location.line == next(n for n, row in enumerate(text.splitlines(), 1) if "switches: [mgmt-agg-02]" in row)


def test_a_flat_gateway_on_no_device_is_a_located_error():
    """Flat design without aggregation switches: the gateway the devices would be told belongs to
    no device; the error is at the given gateway's line (or the addressing section's)."""
    text = SMALL.replace("management:\n", "management:\n  design: flat\n", 1)
    start = text.index("  uplinks: 2 ")
    end = text.index("  pdus:")
    text = text[:start] + text[end:]
    given = text.replace("addressing: {network: 10.200.0.0/16,", "addressing: {network: 10.200.0.0/16, gateway: 10.200.0.9,")
    for t in (text, given):
        c = compile_text(t)
        found = [f for f in c.findings if f.rule == "mgmt-addressing" and "no device's address" in f.message]
        assert len(found) == 1, [f.message for f in c.findings]
        line = next(n for n, row in enumerate(t.splitlines(), 1) if "addressing: {" in row)
        assert found[0].location.line == line
        assert ("10.200.0.9" in found[0].message) == (t is given)


def test_an_ipv6_border_carries_ipv6_sessions():
    """An IPv6 management network (roce-rail-2tier's, as test_dhcp makes it) with an IPv6 border:
    /127 links, sessions to the routers' IPv6 addresses, YANG-valid."""
    from test_dhcp import _v6

    c, files = _v6()
    aggs = _aggs(c)
    for name in aggs:
        cfg = json.loads(files[f"sonic/{name}.json"])
        site = {a: n for a, n in cfg["BGP_NEIGHBOR"].items() if n["name"].startswith("site-")}
        assert len(site) == 2
        for address, n in site.items():
            assert ipaddress.ip_address(address).version == 6
            own = next(k.split("|")[1] for k in cfg["INTERFACE"] if k.endswith("/127") and n["local_addr"] in k)
            assert ipaddress.ip_address(address) in ipaddress.ip_interface(own).network
        assert cfg["STATIC_ROUTE"] == {"default|fd00:200::/48": {"advertise": "true", "blackhole": "true"}}
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    for name in aggs:
        try:
            validate(json.loads(files[f"sonic/{name}.json"]))
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")


def test_a_border_over_a_fabric_pool_is_a_located_error():
    """roce-rail-2tier's border moved into its RoCE fabric's point-to-point pool 10.64.0.0/20."""
    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
    bad = text.replace("    network: 192.0.2.0/28\n", "    network: 10.64.0.16/28\n")
    assert bad != text
    c = compile_text(bad)
    (f,) = [f for f in c.findings if f.rule == "address-overlap"]
    assert "border network 10.64.0.16/28" in f.message and "10.64.0.0/20" in f.message
    assert f.location.line == next(n for n, row in enumerate(bad.splitlines(), 1) if "network: 10.64.0.16/28" in row)


def test_a_given_border_link_over_a_fabric_pool_is_a_located_error():
    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
    link = "      - {switch: mgmt-agg-01, router: site-core-1, address: 10.64.0.9/31, peer: 10.64.0.8}\n"
    bad = text.replace("    network: 192.0.2.0/28\n", "    links:\n" + link)
    assert bad != text
    c = compile_text(bad)
    (f,) = [f for f in c.findings if f.rule == "address-overlap"]
    assert "border link mgmt-agg-01-site-core-1 10.64.0.8/31" in f.message and "10.64.0.0/20" in f.message
    assert f.location.line == bad.splitlines().index(link.rstrip("\n")) + 1


# The site routers placed (border.model, border.placement): in N01, above its switches.
PLACED = BORDER + "    model: sn4600c\n    placement: {row: N, first_rack: 1, per_rack: 2, first_u: 30}\n"


@cache
def _placed(design: str | None = None):
    text = _text(design, border=PLACED)
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["sonic", "cabling", "bom", "lldp", "labels"])
    configs = {p.split("/")[1].removesuffix(".json"): json.loads(d) for p, d in files.items() if p.startswith("sonic/")}
    return c, configs, files


def _csv(data: bytes) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(data.decode())))


@pytest.mark.parametrize("design", [None, "mclag"])
def test_placed_site_routers_make_every_border_link_a_cable(design):
    """With the routers placed, each border link is a cable of the plan: a cabling row whose two
    ends are the aggregation switch's border port and a data port of the router (distinct per
    router, in the router's rack and units), its parts in the BOM, a label at each end and an
    LLDP expectation on the switch; the router itself gets no config, no LLDP line and no BOM
    line (the site owns it), and the switch's port names the router's port."""
    c, configs, files = _placed(design)
    f = c.fabric
    routers = {d.name: d for d in f.devices if d.role == "site-router"}
    assert sorted(routers) == [name for name, _ in ROUTERS]
    assert all(f.racks[d.rack].name == "N01" and d.u >= 30 for d in routers.values())
    records = f.facts["mgmt"]["border"]
    aggs = _aggs(c)
    assert len(records) == len(aggs) * len(ROUTERS)
    rows = [r for r in _csv(files["cabling/cables.csv"]) if r["b_device"] in routers or r["a_device"] in routers]
    assert len(rows) == len(records)
    names = {d.name: d for d in f.devices}
    far_ports: dict[str, set[str]] = {}
    for rec in records:
        sw = names[rec["switch"]]
        port = f.layouts[sw.model].physical_name(rec["port"])
        (row,) = [
            r
            for r in rows
            if {r["a_device"], r["b_device"]} == {rec["switch"], rec["router"]} and port in (r["a_ports"], r["b_ports"])
        ]
        router_end = "b" if row["b_device"] == rec["router"] else "a"
        router = routers[rec["router"]]
        assert row[f"{router_end}_rack"] == "N01" and int(row[f"{router_end}_u"]) == router.u
        printed = row[f"{router_end}_ports"]
        assert printed not in far_ports.setdefault(rec["router"], set())  # one cable per router port
        far_ports[rec["router"]].add(printed)
        layout = f.layouts[router.model]
        (rport,) = [p for p in layout.ports_of("data") if layout.name(p) == rec["peer_port"]]
        assert layout.physical_name(rport) == printed  # the facts' peer port is the cabled one
        # The switch's SONiC port names the router's port; it is routed, never bridged.
        cfg = configs[rec["switch"]]
        (own,) = [p for p, e in cfg["PORT"].items() if e.get("description") == f"{rec['router']}:{rec['peer_port']}"]
        assert f"{own}|{rec['address']}" in cfg["INTERFACE"]
        assert not [m for m in cfg.get("VLAN_MEMBER", {}) if m.endswith(f"|{own}")]
    assert not set(routers) & set(configs)
    lldp = [json.loads(line) for line in files["lldp/mgmt.jsonl"].decode().splitlines()]
    assert not [x for x in lldp if x["device"] in routers]
    expected = {(x["device"], n["neighbor"]) for x in lldp for n in x["neighbors"] if n["neighbor"] in routers}
    assert expected == {(r["switch"], r["router"]) for r in records}
    bom = _csv(files["bom/bom.csv"])
    assert not [r for r in bom if "site-router" in r.get("detail", "")]
    plain_c, _, plain_files = _compiled(design)
    cables = {r["cable_id"] for r in rows}
    labels = [r for r in _csv(files["labels/labels.csv"]) if r["cable_id"] in cables]
    assert len(labels) == 2 * len(rows)

    def mgmt_cables(data: bytes) -> int:
        return sum(int(r["count"]) for r in _csv(data) if r["section"] == "cable" and r["fabric"] == "mgmt")

    assert mgmt_cables(files["bom/bom.csv"]) == mgmt_cables(render(plain_c, ["bom"])[0]["bom/bom.csv"]) + len(records)
    # The placed routers change no switch's config but for the port descriptions naming their ports.
    for name in aggs:
        before = json.loads(json.dumps(json.loads(plain_files[f"sonic/{name}.json"])))
        after = json.loads(json.dumps(configs[name]))
        for cfg in (before, after):
            for entry in cfg["PORT"].values():
                entry.pop("description", None)
        assert before == after, name


def test_placed_routers_keep_the_vlan_a_tree_and_pass_the_sonic_models():
    c, configs, _ = _placed("mclag")
    assert not any(l2_cycles(configs).values())
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    for name in _aggs(c):
        try:
            validate(configs[name])
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {exc}")


def test_an_unplaced_border_warns_that_its_cables_are_unplanned():
    text = _text()
    c = compile_text(text)
    (w,) = [x for x in c.findings if x.rule == "management" and "border" in x.message]
    assert w.severity.value == "warning" and "4 cables" in w.message
    assert w.location.line == text.splitlines().index("  border:") + 1
    placed = compile_text(_text(border=PLACED))
    assert not [x for x in placed.findings if x.rule == "management" and "border" in x.message]


PLACED_BAD = [
    (BORDER + "    model: sn4600c\n", "border:", "together"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    model: sn4600c\n"
     "    placement: {row: N, first_rack: 1, per_rack: 2, first_u: 30}\n    links:\n"
     "      - {switch: mgmt-agg-01, router: r1, address: 192.0.2.1/31, peer: 192.0.2.0, peer_port: Ethernet999}\n",
     "- {switch", "no data port"),
    ("  border:\n    routers: [{name: r1, asn: 65100}]\n    model: pdu-3ph\n"
     "    placement: {row: N, first_rack: 1, per_rack: 2, first_u: 30}\n    network: 192.0.2.0/29\n",
     "model:", "switch"),
]  # fmt: skip


@pytest.mark.parametrize("border, marker, words", PLACED_BAD)
def test_bad_router_placement_is_a_located_error(border, marker, words):
    test_bad_border_input_is_a_located_error(border, marker, words)
