"""SONiC config_db.json: accepted by the real SONiC YANG models (libyang), and in agreement with the
Fabric: every link's two addresses in one /31 (/127), every BGP neighbour the far end's address and
ASN, the port map the catalogue's ports, the lossless settings the blueprint's."""

from __future__ import annotations

import copy
import ipaddress
import json
import math
from functools import cache

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.fabric import SITE_ROLES, PortLayout
from supernodeiac.facts.sonic_ports import port_map_problems, sonic_ports
from supernodeiac.facts.switch_facts import FabricFacts
from supernodeiac.outputs.sonic_config import dumps, ranges
from supernodeiac.pipeline import compile_file, render

libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
from helpers.sonic_yang import validate  # noqa: E402

SHIPPED = sorted(p.stem for p in BLUEPRINTS.glob("*.yaml"))
ROCE = ["roce-rail-2tier", "roce-3tier-oversub"]


@cache
def _compiled(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    return c


@cache
def _configs(name: str) -> dict[str, dict]:
    artifacts, notices = render(_compiled(name), ["sonic"])
    assert notices == []
    # services/secrets.json (the plan of the secrets the configs leave out) is no switch's config
    return {
        path.split("/")[1].removesuffix(".json"): json.loads(data)
        for path, data in artifacts.items()
        if path.startswith("sonic/")
    }


@pytest.mark.parametrize("name", SHIPPED)
def test_every_ethernet_switch_has_a_config_libyang_accepts(name):
    c = _compiled(name)
    ethernet = {
        d.name
        for d in c.fabric.devices
        if c.fabric.models[d.model].kind == "switch"
        and c.fabric.models[d.model].transport == "ethernet"
        and d.role not in SITE_ROLES  # the site's routers: snc configures none
    }
    configs = _configs(name)
    assert set(configs) == ethernet and ethernet
    for device, cfg in sorted(configs.items()):
        try:
            validate(cfg)
        except libyang.LibyangError as exc:
            pytest.fail(f"{name}: {device}: {exc}")


@pytest.mark.parametrize(
    "break_it, message",
    [
        (lambda c: c["PORT"][next(iter(c["PORT"]))].pop("speed"), 'Mandatory node "speed"'),
        (lambda c: c["PORT"][next(iter(c["PORT"]))].update(fec="foo"), "Unsatisfied pattern"),
        (lambda c: c["PORT"][next(iter(c["PORT"]))].update(mtu="9500"), "range"),
        (lambda c: c["DEVICE_METADATA"]["localhost"].update(type="Leaf"), "Unsatisfied pattern"),
        (lambda c: c["INTERFACE"].update({"Ethernet9999": {}}), "leafref"),
        (lambda c: c["PFC_WD"]["GLOBAL"].update(POLL_INTERVAL="900"), "POLL_INTERVAL"),
        (lambda c: c["PORT_QOS_MAP"][next(k for k in c["PORT_QOS_MAP"] if k != "global")].update(pfc_enable="3;4"), "pattern"),
        (lambda c: c["BGP_NEIGHBOR"].update({"10.0.0.300": {"asn": "65000"}}), "10.0.0.300"),
    ],
)
def test_a_broken_config_is_rejected(break_it, message):
    good = _configs("roce-rail-2tier")["roce-leaf-su001-01"]
    validate(good)
    bad = copy.deepcopy(good)
    break_it(bad)
    with pytest.raises(libyang.LibyangError) as exc:
        validate(bad)
    assert message in str(exc.value)


@pytest.mark.parametrize("name", ROCE)
def test_addresses_and_neighbours_agree_with_the_fabric(name):
    """Walk every switch-to-switch link of the RoCE fabric: both ends in one point-to-point block,
    each side's BGP neighbour the other's address and ASN, with its own address as local_addr."""
    c = _compiled(name)
    f, configs = c.fabric, _configs(name)
    t = f.links
    checked = 0
    for i in t.indices_of("roce"):
        a, b = f.devices[t.a[i]], f.devices[t.b[i]]
        if a.tier == 0 or b.tier == 0:
            continue
        ends = []
        for dev, port in ((a, t.a_port[i]), (b, t.b_port[i])):
            name_ = f.port_name(dev.index, port)
            [addr] = [k.split("|")[1] for k in configs[dev.name]["INTERFACE"] if k.startswith(name_ + "|")]
            ends.append((dev, addr))
        (da, ia), (db, ib) = ends
        na, nb = ipaddress.ip_interface(ia), ipaddress.ip_interface(ib)
        assert na.network == nb.network and na.network.num_addresses == 2 and na.ip != nb.ip
        for (dev, own), (peer, other) in (((da, na), (db, nb)), ((db, nb), (da, na))):
            neighbour = configs[dev.name]["BGP_NEIGHBOR"][str(other.ip)]
            assert neighbour["asn"] == str(peer.attrs["asn"])
            assert neighbour["name"] == peer.name
            assert neighbour["local_addr"] == str(own.ip)
            assert configs[dev.name]["DEVICE_METADATA"]["localhost"]["bgp_asn"] == str(dev.attrs["asn"])
        checked += 1
    facts = f.facts["roce"]
    assert checked == facts["leaves"] * facts["leaf_up"] + (facts["spines"] * facts["spine_up"] if facts["tiers"] == 3 else 0)
    # No address twice on a switch, every neighbour entry backed by a switch-facing interface (the
    # host-facing ones, from the host pool, have no BGP session).
    hosts = ipaddress.ip_network(facts["ethernet"]["addressing"]["hosts"])
    for cfg in configs.values():
        addrs = [k.split("|")[1] for k in cfg.get("INTERFACE", {}) if "|" in k]
        to_switches = [a for a in addrs if ipaddress.ip_interface(a).ip not in hosts]
        assert len(addrs) == len(set(addrs))
        assert len(to_switches) == len(cfg.get("BGP_NEIGHBOR", {}))


def test_ports_follow_the_catalogue_port_map():
    c = _compiled("roce-rail-2tier")
    cfg = _configs("roce-rail-2tier")["roce-leaf-su001-01"]
    layout = c.fabric.layouts["sn5600-128x400g"]
    data = [layout.name(p) for p in layout.ports_of("data")]
    assert list(cfg["PORT"]) == data  # every front-panel port, in order, named as the cabling list names it
    assert cfg["PORT"]["Ethernet0"] == {
        "admin_status": "up",
        "alias": "etp1a",
        "description": "gpu-a-0001:eth0",
        "fec": "rs",
        "index": "1",
        "lanes": "0,1,2,3",
        "mtu": "9100",
        "speed": "400000",
    }
    assert cfg["PORT"]["Ethernet508"]["lanes"] == "508,509,510,511" and cfg["PORT"]["Ethernet508"]["alias"] == "etp64b"
    lanes = [lane for p in cfg["PORT"].values() for lane in p["lanes"].split(",")]
    assert len(lanes) == len(set(lanes)) == 512
    assert cfg["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "2x400G[200G,100G,50G,40G,25G,10G]"}
    assert "Ethernet4" not in cfg["BREAKOUT_CFG"]  # keyed by the cage's first port
    meta = cfg["DEVICE_METADATA"]["localhost"]
    assert (meta["hwsku"], meta["platform"], meta["type"]) == (
        "Mellanox-SN5600-O128",
        "x86_64-nvidia_sn5600-r0",
        "BackEndToRRouter",
    )


@pytest.mark.parametrize(
    "model, port, expected",
    [
        # Lines of the sources' port_config.ini files (catalog/data/port_maps.yaml cites them).
        ("sn5600-128x400g", 127, ("Ethernet508", "508,509,510,511", "etp64b", "64", 400000)),
        ("sn5600", 63, ("Ethernet504", "504,505,506,507,508,509,510,511", "etp64", "64", 800000)),
        ("sn4600c", 63, ("Ethernet252", "504,505,506,507", "etp64", "64", 100000)),
        ("sn2201", 47, ("Ethernet47", "188", "etp48", "48", 1000)),
        ("sn2201", 51, ("Ethernet60", "204,205,206,207", "etp52", "52", 100000)),
        # A listed map (swapped lanes; tests/test_port_lanes.py checks every line of its file).
        ("arista-7060x6-o128", 1, ("Ethernet4", "21,22,23,24", "Ethernet1/5", "1", 400000)),
    ],
)
def test_port_maps_match_their_sources(model, port, expected):
    c = _compiled("small-ib")
    sp = sonic_ports(PortLayout(c.catalogue.devices[model]), c.catalogue.port_maps[model]).ports[port]
    assert (sp.name, sp.lanes, sp.alias, sp.index, sp.speed_mbps) == expected


def test_every_port_map_names_ports_as_the_catalogue_does():
    """The cabling list, the LLDP expectations and the configs must name a port alike."""
    c = _compiled("small-ib")
    for model, port_map in c.catalogue.port_maps.items():
        layout = PortLayout(c.catalogue.devices[model])
        assert port_map_problems(layout, port_map) == []
        for index, sp in enumerate(sonic_ports(layout, port_map).ports):
            if sp is not None:
                assert sp.name == layout.name(index), (model, index)


@pytest.mark.parametrize("name", ROCE)
def test_lossless_tables_follow_the_blueprint(name):
    c = _compiled(name)
    lossless = next(s for s in c.blueprint.scaleout if s.name == "roce").ethernet.lossless
    facts = FabricFacts(c.blueprint, c.catalogue, c.fabric)
    pfc = ",".join(map(str, sorted(lossless.pfc_priorities)))
    for dev in facts.switches("ethernet"):
        sw = facts.switch(dev)
        cfg = _configs(name)[sw.device.name]
        if sw.kind != "roce":
            assert "PORT_QOS_MAP" not in cfg and "BUFFER_PG" not in cfg
            continue
        assert cfg["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
        dscp = cfg["DSCP_TO_TC_MAP"]["AZURE"]
        assert len(dscp) == 64
        for d in range(64):
            assert dscp[str(d)] == str(lossless.dscp_to_tc.get(d, lossless.default_tc))
        wred = cfg["WRED_PROFILE"]["AZURE_LOSSLESS"]
        assert wred["ecn"] == "ecn_all"
        assert wred["green_min_threshold"] == str(lossless.ecn.min_threshold_bytes)
        assert wred["green_max_threshold"] == str(lossless.ecn.max_threshold_bytes)
        assert wred["green_drop_probability"] == str(lossless.ecn.max_probability_pct)
        data = [i for i in sw.interfaces if i.role == "data"]
        assert len(data) == len(cfg["PORT_QOS_MAP"]) - 1  # and "global"
        for i in data:
            assert cfg["PORT_QOS_MAP"][i.name]["pfc_enable"] == pfc
            for r in ranges(lossless.pfc_priorities):
                assert cfg["BUFFER_PG"][f"{i.name}|{r}"] == {"profile": "NULL"}
            for q in lossless.pfc_priorities:
                assert cfg["QUEUE"][f"{i.name}|{q}"]["wred_profile"] == "AZURE_LOSSLESS"
            # CABLE_LENGTH carries the real routed length, rounded up to whole metres.
            assert cfg["CABLE_LENGTH"]["AZURE"][i.name] == f"{math.ceil(c.fabric.links.length_m[i.link] - 1e-9)}m"
            assert cfg["PFC_WD"][i.name]["action"] == "drop"
        cnp = lossless.dscp_to_tc[lossless.cnp_dscp]
        assert cfg["QUEUE"][f"{data[0].name}|{cnp}"] == {"scheduler": "scheduler.2"}
        assert cfg["SCHEDULER"]["scheduler.2"] == {"type": "STRICT"}


def test_management_addresses_are_unique_and_keyed_by_rack():
    c = _compiled("roce-3tier-oversub")
    configs = _configs("roce-3tier-oversub")
    net = ipaddress.ip_network(c.blueprint.management.addressing.network)
    seen: dict[str, str] = {}
    for device, cfg in configs.items():
        prefixes = [k.split("|")[1] for k in cfg.get("MGMT_INTERFACE", {})] + [
            k.split("|")[1] for k in cfg.get("VLAN_INTERFACE", {}) if "|" in k
        ]
        assert len(prefixes) == 1, device  # every switch is reachable out of band
        iface = ipaddress.ip_interface(prefixes[0])
        # Routed design: the address is in its rack's (or OOB switch's) /26 block of the network.
        assert iface.network.prefixlen == 26 and iface.network.subnet_of(net) and str(iface.ip) not in seen, device
        seen[str(iface.ip)] = device
        for value in cfg.get("MGMT_INTERFACE", {}).values():
            assert value == {"gwaddr": str(iface.network.broadcast_address - 1)}  # the block's switch
    rack_switches = [d for d in c.fabric.devices if d.role == "mgmt"]
    assert len(seen) == len(configs) and rack_switches
    # A rack switch's access ports are untagged members of the management VLAN; its uplinks are routed.
    sw = rack_switches[0]
    cfg = configs[sw.name]
    assert cfg["VLAN"] == {"Vlan10": {"vlanid": "10"}}
    layout = c.fabric.layouts[sw.model]
    roles = {layout.names[p]: layout.port_roles[p] for p in range(layout.total)}
    members = {k.split("|")[1]: v["tagging_mode"] for k, v in cfg["VLAN_MEMBER"].items()}
    assert set(members.values()) == {"untagged"} and all(roles[port] == "data" for port in members)
    uplinks = [k for k in cfg["INTERFACE"] if "|" in k]
    assert uplinks and all(roles[k.split("|")[0]] == "uplink" for k in uplinks)


def test_growing_the_site_keeps_management_addresses():
    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
    row_b = next(line for line in text.splitlines() if "{name: B, racks: 12," in line)
    grown = text.replace(row_b, row_b + "\n    - {name: E, racks: 2, budget: {power_kw: 45}}")
    grown = grown.replace(
        "  - name: gpu-b\n",
        "  - name: gpu-e\n    model: hgx-h100-bf3\n    count: 8\n"
        "    placement: {row: E, per_rack: 4, first_u: 2}\n  - name: gpu-b\n",
    )
    grown = grown.replace("      - group: gpu-b\n", "      - group: gpu-b\n      - group: gpu-e\n")
    assert grown != text
    before = _configs("roce-rail-2tier")
    c = compile_text(grown)
    assert c.exit_code == 0, [f.message for f in c.findings]
    after = {p.split("/")[1].removesuffix(".json"): json.loads(d) for p, d in render(c, ["sonic"])[0].items()}
    assert len(after) > len(before)
    for device, cfg in before.items():
        assert after[device].get("MGMT_INTERFACE") == cfg.get("MGMT_INTERFACE")
        assert after[device].get("VLAN_INTERFACE") == cfg.get("VLAN_INTERFACE")
        if device.startswith("mgmt-agg-"):
            # The routed management aggregation gains the new racks' sessions and keeps every other.
            assert cfg["BGP_NEIGHBOR"].items() <= after[device]["BGP_NEIGHBOR"].items()
            assert len(after[device]["BGP_NEIGHBOR"]) > len(cfg["BGP_NEIGHBOR"])
        else:
            assert after[device].get("BGP_NEIGHBOR") == cfg.get("BGP_NEIGHBOR")
        # Every port cabled before keeps its entry (new racks' uplinks only bring idle ports up).
        for port, entry in cfg["PORT"].items():
            if entry["admin_status"] == "up":
                assert after[device]["PORT"][port] == entry, (device, port)


def test_a_switch_without_a_port_map_gets_a_notice_not_a_guess():
    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text() + (
        "\ncatalogue:\n  devices:\n    my-oob: {kind: switch, transport: ethernet, description: x,\n"
        "      ports: [{role: data, count: 48, speed_gbps: 1, cage: rj45},\n"
        "              {role: uplink, count: 4, speed_gbps: 100, lanes: 4, cage: qsfp28}], sources: [{ref: x}]}\n"
    )
    text = text.replace("management:\n  switch: sn2201", "management:\n  switch: my-oob")
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings]
    artifacts, notices = render(c, ["sonic"])
    assert any("no SONiC port map for my-oob" in n for n in notices)
    unmapped = {d.name for d in c.fabric.devices if d.model == "my-oob"}
    assert unmapped and not any(path.removeprefix("sonic/").removesuffix(".json") in unmapped for path in artifacts)
    assert any(path.startswith("sonic/mgmt-agg-") for path in artifacts)  # the aggregation switches have a map


def test_dumps_is_json_of_the_data():
    c = _compiled("roce-rail-2tier")
    facts = FabricFacts(c.blueprint, c.catalogue, c.fabric)
    from supernodeiac.outputs.sonic_config import config_db

    sw = facts.switch(facts.switches("ethernet")[0])
    cfg = config_db(sw, [facts.cable_length_m(i.link) for i in sw.interfaces])
    text = "".join(dumps(cfg))
    assert json.loads(text) == cfg
    assert list(json.loads(text)) == sorted(cfg)  # tables sorted; entries keep port order


def test_every_config_reads_as_it_is_written():
    """What config_db hands a library caller (tables held as their text, per-port templates, keys
    read back from the lines) iterates entry by entry, in order, as its written file parses: on
    every switch kind of the design (leaves, spines, management and aggregation switches with
    their border ports and services)."""
    c = _compiled("roce-rail-2tier")
    facts = FabricFacts(c.blueprint, c.catalogue, c.fabric)
    from supernodeiac.outputs.sonic_config import config_db

    kinds = set()
    for device in facts.switches("ethernet"):
        sw = facts.switch(device)
        if sw.ports is None:
            continue
        kinds.add((sw.kind, bool(sw.border), bool(sw.bgp)))
        cfg = config_db(sw, [facts.cable_length_m(i.link) for i in sw.interfaces])
        parsed = json.loads("".join(dumps(cfg)))
        assert [(t, list(entries.items())) for t, entries in cfg.items()] == [(t, list(e.items())) for t, e in parsed.items()]
    assert {k for k, _, _ in kinds} >= {"roce", "mgmt", "mgmt-agg"} and any(border for _, border, _ in kinds)


def test_a_port_map_that_names_ports_otherwise_is_a_located_error():
    text = (BLUEPRINTS / "small-ib.yaml").read_text() + (
        "\ncatalogue:\n  port_maps:\n    sn2201: {hwsku: x, platform: y, sources: [{ref: x}],\n"
        "      groups: [{role: uplink, name_step: 1, lane_step: 4, lanes: 4, speed_mbps: 100000}]}\n"
    )
    c = compile_text(text)
    [finding] = [f for f in c.findings if f.rule == "port-map"]
    assert c.exit_code == 1 and "Ethernet48 is Ethernet0" in finding.message and finding.location.line > 50


@pytest.mark.parametrize("name", SHIPPED)
def test_loopbacks_are_announced_in_the_family_their_sessions_carry(name):
    """bgpcfgd's rule (sonic-buildimage bgpcfgd peer templates and bgpd.main.conf.j2): a
    BGP_NEIGHBOR is activated only in its own address's family, and Loopback0's address becomes a
    `network` of its family; so every switch with sessions needs a session of its loopback's
    family, and a 32-bit router ID (DEVICE_METADATA.bgp_router_id, else its IPv4 loopback)."""
    ids: dict[str, str] = {}
    for device, cfg in _configs(name).items():
        sessions = {ipaddress.ip_address(a).version for a in cfg.get("BGP_NEIGHBOR", {})}
        if not sessions:
            continue
        loopbacks = {ipaddress.ip_interface(k.split("|")[1]).version for k in cfg.get("LOOPBACK_INTERFACE", {}) if "|" in k}
        assert loopbacks <= sessions, (device, loopbacks, sessions)
        router_id = cfg["DEVICE_METADATA"]["localhost"].get("bgp_router_id")
        assert router_id is not None and ipaddress.ip_address(router_id).version == 4, device
        assert router_id not in ids, (device, ids.get(router_id))
        ids[router_id] = device
    if name in ROCE:
        assert len(ids) > 60  # leaves, spines (and cores) and the routed management switches


def test_ipv4_loopbacks_over_ipv6_sessions_are_a_located_error():
    text = (BLUEPRINTS / "roce-3tier-oversub.yaml").read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "loopbacks:" in t)
    c = compile_text(text.replace('"fd00:100:1::/119"', "10.1.0.0/23"))
    (found,) = [f for f in c.findings if "loopbacks would not be exchanged" in f.message]
    assert found.severity.value == "error" and found.location.line in (line - 1, line)
