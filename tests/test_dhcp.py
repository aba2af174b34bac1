"""Provisioning: Kea's own config test accepts the rendered DHCPv4 config; every management
address the plan gives over a cable has exactly one reservation; every SONiC switch among them is
pointed (option 67) at a ZTP JSON that fetches its rendered config_db; behind a relaying rack
switch each reservation is keyed by the option 82 circuit ID that switch's rendered config makes
its dhcrelay insert for the device's port."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from functools import cache

import pytest
from conftest import BLUEPRINTS

from supernodeiac.facts.switch_facts import FabricFacts
from supernodeiac.pipeline import compile_file, render

NAMES = ["small-ib", "roce-rail-2tier"]


@cache
def _rendered(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    files, _ = render(c, ["dhcp", "sonic"])
    return c, files


def _reservations(files) -> dict[str, list[dict]]:
    kea = json.loads(files["dhcp/kea-dhcp4.json"])
    by_address: dict[str, list[dict]] = {}
    for subnet in kea["Dhcp4"]["subnet4"]:
        net = ipaddress.ip_network(subnet["subnet"])
        for r in subnet["reservations"]:
            assert ipaddress.ip_address(r["ip-address"]) in net
            by_address.setdefault(r["ip-address"], []).append(r)
    return by_address


@pytest.mark.parametrize("name", NAMES)
def test_kea_accepts_the_config(name, tmp_path):
    kea = shutil.which("kea-dhcp4") or (shutil.which("kea-dhcp4", path="/usr/sbin:/sbin"))
    if kea is None:
        pytest.skip("kea-dhcp4 not installed (Debian: apt-get install kea-dhcp4-server)")
    _, files = _rendered(name)
    path = tmp_path / "kea-dhcp4.json"
    path.write_bytes(files["dhcp/kea-dhcp4.json"])
    run = subprocess.run([kea, "-t", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", NAMES)
def test_every_management_address_has_one_reservation(name):
    c, files = _rendered(name)
    f = c.fabric
    facts = FabricFacts(c.blueprint, c.catalogue, f)
    # The plan's addresses from the links: every management port cabled to a rack or OOB switch's access port.
    expected: dict[str, str] = {}
    arr = f.links.arrays()
    for a, ap, b, bp in zip(arr.a.tolist(), arr.a_port.tolist(), arr.b.tolist(), arr.b_port.tolist(), strict=True):
        for sw, swp, dev, devp in ((a, ap, b, bp), (b, bp, a, ap)):
            if f.devices[sw].role in ("mgmt", "mgmt-oob") and f.layouts[f.devices[dev].model].port_roles[devp] == "mgmt":
                address = facts.mgmt_address_of(sw, swp)
                if address is not None:
                    assert address not in expected, f"plan gives {address} twice"
                    expected[address] = f.devices[dev].name
    assert len(expected) > 10
    got = _reservations(files)
    assert {a: [r["hostname"] for r in rs] for a, rs in got.items()} == {a: [n] for a, n in expected.items()}
    # One identifier per reservation, and no two reservations share one (Kea would refuse either).
    keys = [next((k, r[k]) for k in ("hw-address", "circuit-id", "client-id") if k in r) for rs in got.values() for r in rs]
    assert len(keys) == len(set(keys))
    assert all(sum(k in r for k in ("hw-address", "circuit-id", "client-id")) == 1 for rs in got.values() for r in rs)
    # Every switch's eth0 address in its rendered config_db is one of them, under its own name.
    eth0 = 0
    for path, data in files.items():
        if path.startswith("sonic/"):
            for key in json.loads(data).get("MGMT_INTERFACE", {}):
                address = key.split("|")[1].split("/")[0]
                assert [r["hostname"] for r in got[address]] == [path.removeprefix("sonic/").removesuffix(".json")]
                eth0 += 1
    assert eth0 > 0


@pytest.mark.parametrize("name", NAMES)
def test_sonic_switches_get_their_ztp_json(name):
    c, files = _rendered(name)
    got = _reservations(files)
    pointed = 0
    for rs in got.values():
        (r,) = rs
        sonic = f"sonic/{r['hostname']}.json"
        boot = [o["data"] for o in r.get("option-data", []) if o["name"] == "boot-file-name"]
        assert bool(boot) == (sonic in files), r
        if boot:
            path = boot[0].split("/", 3)[3]
            ztp = json.loads(files[path])
            url = ztp["ztp"]["configdb-json"]["url"]
            assert url["source"].split("/", 3)[3] == sonic
            assert url["destination"] == "/etc/sonic/config_db.json"
            pointed += 1
    assert pointed == len([p for p in files if p.startswith("dhcp/ztp/")]) > 0


def test_provisioning_url_is_validated():
    from pydantic import ValidationError

    from supernodeiac.model.management import MgmtAddressing

    assert MgmtAddressing(network="10.0.0.0/16", provisioning_url="http://ztp.example:8080/site/").provisioning_url == (
        "http://ztp.example:8080/site"
    )
    for bad in ['http://x/"; rm -rf /', "ftp://x", "http://x/a b", "http://x?y=1"]:
        with pytest.raises(ValidationError):
            MgmtAddressing(network="10.0.0.0/16", provisioning_url=bad)


def _relay_circuits(files) -> tuple[dict[str, str], dict[str, tuple[str, list[str], str]]]:
    """From the rendered config_dbs alone: 'device:port' -> the circuit ID SONiC's dhcrelay inserts
    for it (``-a %h:%p`` with the port name -> alias map: DEVICE_METADATA hostname, then the PORT
    alias of the VLAN member it is cabled to, as the PORT description names the peer), and per
    relaying switch (its VLAN address, its dhcp_servers, its hostname)."""
    circuits: dict[str, str] = {}
    relays: dict[str, tuple[str, list[str], str]] = {}
    for path, data in files.items():
        if not path.startswith("sonic/"):
            continue
        cfg = json.loads(data)
        for vlan, entry in cfg.get("VLAN", {}).items():
            servers = entry.get("dhcp_servers")
            if not servers:
                continue
            host = cfg["DEVICE_METADATA"]["localhost"]["hostname"]
            (address,) = [k.split("|")[1] for k in cfg["VLAN_INTERFACE"] if k.startswith(f"{vlan}|")]
            relays[host] = (address, servers, host)
            for member in cfg.get("VLAN_MEMBER", {}):
                v, port = member.split("|")
                if v != vlan:
                    continue
                p = cfg["PORT"][port]
                assert p["description"] not in circuits
                circuits[p["description"]] = f"{host}:{p.get('alias', port)}"
    return circuits, relays


def test_relayed_reservations_match_the_circuit_id_the_rack_switch_inserts():
    c, files = _rendered("roce-rail-2tier")
    s = c.blueprint.services
    assert s is not None and s.dhcp
    circuits, relays = _relay_circuits(files)
    # Every routed rack switch relays to the blueprint's DHCP servers, in their order.
    racks = [d.name for d in c.fabric.devices if d.role == "mgmt" and d.rack >= 0]
    assert racks and set(racks) <= set(relays)
    assert all(servers == list(s.dhcp) for _, servers, _ in relays.values())
    kea = json.loads(files["dhcp/kea-dhcp4.json"])
    assert "circuit-id" in kea["Dhcp4"]["host-reservation-identifiers"]
    matched = 0
    for subnet in kea["Dhcp4"]["subnet4"]:
        net = ipaddress.ip_network(subnet["subnet"])
        for r in subnet["reservations"]:
            key = f"{r['hostname']}:{r['user-context']['port']}"
            if key not in circuits:
                continue
            # No inventory MAC in this blueprint: keyed by where it is cabled, as quoted text.
            assert r.get("circuit-id") == f"'{circuits[key]}'", r
            # The relay's giaddr (its VLAN address) selects this subnet in Kea.
            relay = circuits[key].split(":")[0]
            assert ipaddress.ip_interface(relays[relay][0]).ip in net
            matched += 1
    assert matched == len(circuits) > 10


def test_a_mac_from_the_inventory_wins_over_the_circuit_id():
    from conftest import compile_text

    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
    assert "\ninventory:" not in text
    text += "\ninventory:\n  gpu-a-0001: {mac: '02:00:00:00:00:01'}\n"
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings]
    files, _ = render(c, ["dhcp"])
    rs = {r["hostname"]: r for rs in _reservations(files).values() for r in rs}
    assert rs["gpu-a-0001"]["hw-address"] == "02:00:00:00:00:01" and "circuit-id" not in rs["gpu-a-0001"]
    assert rs["gpu-a-0002"]["circuit-id"] == "'mgmt-A01:etp10'"


def test_no_relay_without_a_dhcp_server():
    from conftest import compile_text

    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.startswith("  dhcp:")) + "\n"
    c = compile_text(text)
    assert c.exit_code == 0
    files, _ = render(c, ["dhcp", "sonic"])
    assert _relay_circuits(files) == ({}, {})
    assert all("client-id" in r for rs in _reservations(files).values() for r in rs)


V6 = (
    (BLUEPRINTS / "roce-rail-2tier.yaml")
    .read_text()
    .replace(
        "addressing: {network: 10.200.0.0/16, provisioning_url: http://10.10.0.67}",
        "addressing: {network: 'fd00:200::/48', provisioning_url: 'http://[fd00:10::67]'}",
    )
    .replace("  networks: [10.10.0.0/24]", "  networks: [10.10.0.0/24, 'fd00:10::/64']")
    .replace("  dhcp: [10.10.0.67] ", "  dhcp: ['fd00:10::67'] ")
    .replace("    network: 192.0.2.0/28\n", "    network: 'fd00:ffff::/124'\n")  # the border's sessions: IPv6 too
)


@cache
def _v6():
    from conftest import compile_text

    assert V6.count("fd00:") == 5
    c = compile_text(V6)
    assert c.exit_code == 0, [f.message for f in c.findings]
    files, notices = render(c, ["dhcp", "sonic"])
    assert notices == []
    return c, files


def test_ipv6_management_kea_dhcp6_accepts_its_config(tmp_path):
    """An IPv6 management network: dhcp/kea-dhcp6.json (no DHCPv4 config), which kea-dhcp6 -t
    accepts, one reservation per management address the plan gives over a cable (the same count
    as the IPv4 plan of the shipped blueprint), each in its segment's subnet6; SONiC switches
    pointed at their ZTP JSON by option 59 (bootfile-url)."""
    c, files = _v6()
    assert "dhcp/kea-dhcp6.json" in files and "dhcp/kea-dhcp4.json" not in files
    kea = json.loads(files["dhcp/kea-dhcp6.json"])["Dhcp6"]
    addresses = []
    for subnet in kea["subnet6"]:
        net = ipaddress.ip_network(subnet["subnet"])
        assert net.version == 6 and 1 <= subnet["id"] <= 2**32 - 2 and "option-data" not in subnet
        for r in subnet["reservations"]:
            (address,) = r["ip-addresses"]
            assert ipaddress.ip_address(address) in net
            addresses.append(address)
            assert ("duid" in r) != ("hw-address" in r)
            if r["hostname"] in {n.removeprefix("sonic/").removesuffix(".json") for n in files if n.startswith("sonic/")}:
                assert r["option-data"] == [
                    {"name": "bootfile-url", "data": f"http://[fd00:10::67]/dhcp/ztp/{r['hostname']}.json"}
                ]
    assert len(addresses) == len(set(addresses)) == len(_reservations(_rendered("roce-rail-2tier")[1]))
    assert len({s["id"] for s in kea["subnet6"]}) == len(kea["subnet6"])
    binary = shutil.which("kea-dhcp6") or shutil.which("kea-dhcp6", path="/usr/sbin:/sbin")
    if binary is None:
        pytest.skip("kea-dhcp6 not installed (Debian: apt-get install kea-dhcp6-server)")
    path = tmp_path / "kea-dhcp6.json"
    path.write_bytes(files["dhcp/kea-dhcp6.json"])
    run = subprocess.run([binary, "-t", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def test_ipv6_management_rack_switches_relay_dhcpv6():
    """The routed rack and OOB switches relay DHCPv6 (SONiC DHCP_RELAY dhcpv6_servers on the
    segment's VLAN, which the SONiC models accept) and no DHCPv4."""
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    c, files = _v6()
    relays = 0
    for d in c.fabric.devices:
        if d.role not in ("mgmt", "mgmt-oob"):
            continue
        cfg = json.loads(files[f"sonic/{d.name}.json"])
        assert cfg["DHCP_RELAY"] == {"Vlan10": {"dhcpv6_servers": ["fd00:10::67"]}}
        assert "dhcp_servers" not in cfg["VLAN"]["Vlan10"]
        try:
            validate(cfg)
        except libyang.LibyangError as exc:
            pytest.fail(f"{d.name}: {exc}")
        relays += 1
    assert relays == sum(1 for d in c.fabric.devices if d.role in ("mgmt", "mgmt-oob")) > 5
    broken = json.loads(files["sonic/mgmt-A01.json"])
    broken["DHCP_RELAY"]["Vlan10"]["dhcpv6_servers"] = ["10.10.0.67"]
    with pytest.raises(libyang.LibyangError):
        validate(broken)


def test_a_dhcp_server_of_the_other_family_is_a_located_error():
    from conftest import compile_text

    text = V6.replace("  dhcp: ['fd00:10::67'] ", "  dhcp: [10.10.0.67] ")
    c = compile_text(text)
    (f,) = [f for f in c.findings if f.rule == "service-address"]
    assert "the management network is IPv6" in f.message and "DHCP_RELAY" in f.message
    assert f.location.line == next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("  dhcp: [10.10.0.67]"))


def test_no_provisioning_url_is_a_located_warning_and_no_ztp():
    """Without management.addressing.provisioning_url snc names no provisioning server: a ztp-url
    warning at the addressing line, and Kea's reservations carry no ZTP URL and dhcp/ztp/ is not
    written (the gateway, the old default, is a router and serves no file)."""
    from conftest import compile_text

    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text().replace(", provisioning_url: http://10.10.0.67}", "}", 1)
    c = compile_text(text)
    assert c.exit_code == 0
    (found,) = [f for f in c.findings if f.rule == "ztp-url"]
    assert found.severity.value == "warning" and "provisioning_url" in found.hint
    assert found.location.line == next(n for n, row in enumerate(text.splitlines(), 1) if "addressing: {network" in row)
    files, _ = render(c, ["dhcp"])
    assert not any(p.startswith("dhcp/ztp/") for p in files)
    rs = [r for rs in _reservations(files).values() for r in rs]
    assert len(rs) > 100 and not any("option-data" in r for r in rs)
    # With the URL: every SONiC switch's reservation and ZTP JSON name the provisioning server.
    files, _ = render(compile_text((BLUEPRINTS / "roce-rail-2tier.yaml").read_text()), ["dhcp", "sonic"])
    ztp = {p for p in files if p.startswith("dhcp/ztp/")}
    assert ztp and {p.replace("dhcp/ztp/", "sonic/") for p in ztp} <= set(files)
    for path in ztp:
        switch = path.removeprefix("dhcp/ztp/").removesuffix(".json")
        source = json.loads(files[path])["ztp"]["configdb-json"]["url"]["source"]
        assert source == f"http://10.10.0.67/sonic/{switch}.json"


# roce-rail-2tier: routed management (10.200.0.0/16, blocks of 64, 48 access ports per rack switch);
# rack site index 24 (NS05, the aggregation rack) owns block 25 = 10.200.6.64/26.
@pytest.mark.parametrize(
    "url, why",
    [("http://10.10.0.80:8080/ztp", None),  # on the site network (services.networks) behind the border
     ("http://10.200.6.125", None),  # rack NS05's subnet, above its 48 access addresses, below its switch (.126)
     ("http://ztp.mgmt.example.net", None),  # a name: the switches have the site's resolvers
     ("http://192.0.2.80", "in no network the switches reach"),
     ("'http://[fd00:10::67]'", "in no network the switches reach"),
     ("http://10.200.0.10", "in block 0, which no switch routes"),  # the old default's neighbourhood
     ("http://10.200.6.67", "the address of access port 3 of rack position 24"),  # a device's reservation
     ("http://10.200.6.126", "rack position 24's management switch's own address"),
     ("http://10.200.200.10", "which the site does not have")],  # a rack position past the site's
)  # fmt: skip
def test_a_provisioning_server_the_switches_cannot_reach_is_a_located_error(url, why):
    from conftest import compile_text

    text = (
        (BLUEPRINTS / "roce-rail-2tier.yaml")
        .read_text()
        .replace("provisioning_url: http://10.10.0.67}", f"provisioning_url: {url}}}", 1)
    )
    assert url in text
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "ztp-url"]
    if why is None:
        assert found == [] and c.exit_code == 0
        return
    (f,) = found
    assert f.severity.value == "error" and why in f.message and c.exit_code == 1, f.message
    assert f.location.line == next(n for n, row in enumerate(text.splitlines(), 1) if "provisioning_url: " + url in row)


def test_a_provisioning_server_named_without_resolvers_is_a_located_error():
    from conftest import compile_text

    text = (BLUEPRINTS / "small-ib.yaml").read_text().replace("http://10.200.1.189", "http://ztp.example.net", 1)
    (f,) = [f for f in compile_text(text).findings if f.rule == "ztp-url"]
    assert f.severity.value == "error" and "no DNS resolver" in f.message


def test_the_shipped_provisioning_servers_take_free_addresses_on_a_rack_segment():
    """Each shipped blueprint's provisioning server sits where the plan leaves room (no device,
    switch or gateway has its address, and a routed design routes its segment), counted from the
    plan's own blocks rather than trusted from the check."""
    import ipaddress

    from conftest import shipped

    from supernodeiac.facts.switch_facts import mgmt_plan

    checked = 0
    for path in sorted(BLUEPRINTS.glob("*.yaml")):
        c = shipped(path.stem)
        m = c.blueprint.management
        if m is None or m.addressing is None or m.addressing.provisioning_url is None:
            continue
        host = m.addressing.provisioning_url.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]
        ip = ipaddress.ip_address(host)
        net = ipaddress.ip_network(m.addressing.network)
        taken = set(map(ipaddress.ip_address, _reservations(_rendered(path.stem)[1])))  # every reserved address
        if ip in net:
            plan = mgmt_plan(m.addressing, len(c.fabric.layouts[m.switch].ports_of("data")), c.fabric)
            block, at = divmod(int(ip) - int(net.network_address), plan.per_rack)
            assert 1 <= block <= len(c.fabric.racks), (path.stem, block)
            assert plan.access_ports + 1 <= at <= plan.per_rack - 3, (path.stem, at)
            assert ip not in taken and len(taken) > 10
        checked += 1
    assert checked >= 4
