"""Host-link addressing of Ethernet fat trees: the pool, the numbering, the leaves' configs and the
host sheet agree with each other and with the formula, growth renumbers nothing, libyang accepts
the leaves, and a fabric without a pool is told so at its addressing."""

from __future__ import annotations

import csv
import importlib.util
import ipaddress
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, compile_text
from test_clos import fat_tree
from test_growth import _data, _text, more_nodes

from supernodeiac.facts.host_addresses import HostAddresses
from supernodeiac.facts.switch_facts import FabricFacts
from supernodeiac.findings import Severity
from supernodeiac.pipeline import Compiled, compile_file, render

ROCE = ["roce-rail-2tier", "roce-3tier-oversub"]


def _compiled(name: str) -> Compiled:
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity is Severity.ERROR]
    return c


def _sheet(c: Compiled, fabric: str = "roce") -> list[dict[str, str]]:
    artifacts, _ = render(c, ["host-addresses"])
    return list(csv.DictReader(artifacts[f"host-addresses/{fabric}.csv"].decode().splitlines()))


@pytest.mark.parametrize("name", ROCE)
def test_every_host_link_gets_its_block_of_the_pool(name):
    """Both ends of every host link in one /31 (/127) of the pool, at block leaf x leaf_down + position,
    the leaf on the even address, the NIC on the odd one."""
    c = _compiled(name)
    f = c.fabric
    facts = f.facts["roce"]
    plan = facts["ethernet"]["addressing"]
    pool = ipaddress.ip_network(plan["hosts"])
    down = facts["leaf_down_ports"]
    leaves = [d for d in f.devices if d.role == "leaf" and d.group == "roce"]
    index = {d.index: k for k, d in enumerate(leaves)}  # global leaf index: the builder's order
    hosts = HostAddresses(f, "roce")
    t = f.links
    seen: set[ipaddress.IPv4Network | ipaddress.IPv6Network] = set()
    checked = 0
    for i in t.indices_of("roce"):
        a, b = f.devices[t.a[i]], f.devices[t.b[i]]
        if (a.tier == 0) == (b.tier == 0):
            continue
        (leaf, leaf_port), (host, _) = ((a, t.a_port[i]), (b, t.b_port[i])) if a.tier else ((b, t.b_port[i]), (a, t.a_port[i]))
        assert leaf.coord("su") * facts["leaves_per_su"] + leaf.coord("leaf") == index[leaf.index]
        block = index[leaf.index] * facts["leaf_down"] + down.index(leaf_port)
        pair = hosts.pair(t.a[i], t.a_port[i], t.b[i], t.b_port[i])
        assert pair is not None
        leaf_addr, host_addr = (ipaddress.ip_interface(x) for x in (pair if a is leaf else pair[::-1]))
        assert leaf_addr.network == host_addr.network and leaf_addr.network.num_addresses == 2
        assert leaf_addr.network.subnet_of(pool)  # type: ignore[arg-type]
        assert int(leaf_addr.ip) == int(pool.network_address) + 2 * block and int(host_addr.ip) == int(leaf_addr.ip) + 1
        assert leaf_addr.network not in seen
        seen.add(leaf_addr.network)
        checked += 1
    assert checked == facts["nodes"] * facts["rails"] + sum(facts["service_ports"].values())
    assert plan["hosts_needed"] == facts["leaves"] * facts["leaf_down"] <= plan["hosts_capacity"]


@pytest.mark.parametrize("name", ROCE)
def test_leaf_interfaces_are_the_host_sheet_gateways(name):
    """Every row of the host sheet: its gateway is the leaf's INTERFACE address on that port, in the
    same /31 as the NIC's; every leaf advertises the summary of exactly its host blocks; libyang
    accepts every leaf (where the libyang bindings are installed: the `yang` extra)."""
    validate = None
    if importlib.util.find_spec("libyang") is not None:
        from helpers.sonic_yang import validate

    c = _compiled(name)
    rows = _sheet(c)
    artifacts, _ = render(c, ["sonic"])
    configs = {p.split("/")[1].removesuffix(".json"): json.loads(artifacts[p]) for p in artifacts if p.startswith("sonic/")}
    f = c.fabric
    facts = f.facts["roce"]
    assert len(rows) == facts["nodes"] * facts["rails"] + sum(facts["service_ports"].values())
    for r in rows:
        cfg = configs[r["leaf"]]
        [address] = [k.split("|")[1] for k in cfg["INTERFACE"] if k.startswith(r["leaf_port"] + "|")]
        leaf_if, nic_if = ipaddress.ip_interface(address), ipaddress.ip_interface(r["address"])
        assert str(leaf_if.ip) == r["gateway"] and leaf_if.network == nic_if.network and leaf_if.ip != nic_if.ip
        summaries = [ipaddress.ip_network(k.split("|")[1]) for k in cfg["STATIC_ROUTE"]]
        assert sum(nic_if.ip in s for s in summaries) == 1 and r["route"] == f.facts["roce"]["ethernet"]["addressing"]["hosts"]
        assert int(r["table"]) == 100 + f.layouts[f.device(r["node"]).model].names.index(r["nic"])
    for leaf in (d for d in f.devices if d.role == "leaf" and d.group == "roce"):
        cfg = configs[leaf.name]
        routes = cfg["STATIC_ROUTE"]
        assert all(v == {"advertise": "true", "blackhole": "true"} for v in routes.values())
        # The summary covers the leaf's leaf_down blocks, no more and no less.
        assert sum(ipaddress.ip_network(k.split("|")[1]).num_addresses for k in routes) == 2 * facts["leaf_down"]
        if validate is not None:
            validate(cfg)
    # Only the leaves summarise host blocks (an aggregation switch's discard route toward the site
    # border announces the management network, not the hosts).
    pool = ipaddress.ip_network(f.facts["roce"]["ethernet"]["addressing"]["hosts"])
    summarising = [
        name
        for name, cfg in configs.items()
        if any(ipaddress.ip_network(k.split("|")[-1]).subnet_of(pool) for k in cfg.get("STATIC_ROUTE", {}))
    ]
    assert len(summarising) == facts["leaves"], summarising


def test_the_sheet_names_each_nic_once_with_its_rail():
    c = _compiled("roce-rail-2tier")
    rows = _sheet(c)
    f = c.fabric
    assert len(rows) == 96 * 8 == len({(r["node"], r["nic"]) for r in rows})
    for r in rows:
        node = f.device(r["node"])
        port = f.layouts[node.model].names.index(r["nic"])
        assert r["port"] == f.layouts[node.model].physical_names[port]
        assert r["rail"] == str(f.device(r["leaf"]).coord("rail")) == str(f.layouts[node.model].ports_of("data").index(port))
    assert [(r["node"], r["nic"]) for r in rows] == sorted(
        ((r["node"], r["nic"]) for r in rows), key=lambda x: (f.device(x[0]).index, x[1])
    )
    artifacts, _ = render(c, ["host-addresses"])
    lines = artifacts["host-addresses/roce.jsonl"].decode().splitlines()
    objects = [json.loads(line) for line in lines]
    assert [o["address"] for o in objects] == [r["address"] for r in rows]
    assert all(isinstance(o["rail"], int) and isinstance(o["table"], int) for o in objects)


def test_growth_by_a_scalable_unit_keeps_every_host_address():
    """roce-rail-2tier grown by one SU (64 nodes, within grow_to_sus 4): every NIC of the smaller
    build keeps its address and gateway, and the new NICs take blocks no old NIC had."""
    data = _data("roce-rail-2tier")
    before = compile_text(_text(data), "before.yaml")
    more_nodes("gpu-b", "B")(data, 64)
    after = compile_text(_text(data), "after.yaml")
    assert before.exit_code == after.exit_code == 0
    old, new = _sheet(before), _sheet(after)
    assert len(new) == len(old) + 64 * 8
    by_nic = {(r["node"], r["nic"]): r for r in new}
    for r in old:
        assert by_nic[(r["node"], r["nic"])] == r
    old_addresses = {r["address"] for r in old}
    assert len({r["address"] for r in new} - old_addresses) == 64 * 8


def test_without_a_host_pool_a_located_warning_and_todays_output():
    text = fat_tree(hosts=16, radix=8, transport="ethernet", ethernet={"hosts": ""})
    c = compile_text(text)
    [w] = [x for x in c.findings if x.severity is Severity.WARNING]
    assert w.rule == "host-addressing" and w.path[-1] == "addressing" and w.location and w.location.line > 0
    # 16 hosts on radix-8 leaves: 4 leaves x 4 down ports, 16 /31s = 32 addresses = a /27.
    assert "the 16 leaf down ports" in w.message and "'hosts: 10.128.0.0/27'" in w.hint
    artifacts, _ = render(c, ["host-addresses"])
    assert not [p for p in artifacts if p.startswith("host-addresses/")]
    f = c.fabric
    facts = FabricFacts(c.blueprint, c.catalogue, f)
    for leaf in (d for d in f.devices if d.role == "leaf"):
        sw = facts.switch(leaf.index)
        # Only the uplinks are addressed, as before host pools existed; nothing to advertise.
        assert [i.role for i in sw.interfaces if i.address] == ["data"] * f.facts["f"]["leaf_up"]
        assert all(f.devices[i.peer].tier == 2 for i in sw.interfaces if i.address) and sw.host_routes == []
    with_pool = compile_text(fat_tree(hosts=16, radix=8, transport="ethernet"))
    assert not [x for x in with_pool.findings if x.rule == "host-addressing"]


@pytest.mark.parametrize(
    ("hosts", "rule", "expect"),
    [
        ("10.128.0.0/30", "address-pool", "host pool 10.128.0.0/30 holds 2 /31 host links"),
        ("10.64.0.0/20", None, "overlaps the host pool"),
        ("unnumbered", None, "a NIC needs an address"),
    ],
)
def test_a_bad_host_pool_is_a_located_error(hosts, rule, expect):
    c = compile_text(fat_tree(hosts=16, radix=8, transport="ethernet", ethernet={"hosts": f", hosts: {hosts}"}))
    found = [x for x in c.findings if x.severity is Severity.ERROR and expect in x.message]
    assert found, [x.message for x in c.findings]
    assert found[0].location is not None and found[0].location.line > 0
    if rule is not None:
        assert found[0].rule == rule and found[0].path[-1] == "hosts" and "/" in found[0].hint


def test_the_perftest_script_reads_its_plan_and_can_target_the_nic_addresses(tmp_path: Path):
    """perftest.sh with a logging SSH: each client is given the server by name, or with RDMA_CM=1 by
    the server NIC's own address from perftest.tsv (which holds both ends' addresses)."""
    c = _compiled("roce-rail-2tier")
    artifacts, _ = render(c, ["acceptance"])
    folder = tmp_path / "acceptance" / "roce"
    folder.mkdir(parents=True)
    (folder / "perftest.tsv").write_bytes(artifacts["acceptance/roce/perftest.tsv"])
    (folder / "perftest.sh").write_text(artifacts["acceptance/roce/perftest.sh"].decode().replace("sleep 2", "true"))
    ssh = tmp_path / "ssh"
    ssh.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/log\n')
    ssh.chmod(ssh.stat().st_mode | stat.S_IEXEC)
    rows = list(csv.DictReader(artifacts["acceptance/roce/perftest.tsv"].decode().splitlines(), delimiter="\t"))
    sheet = {(r["node"], r["rdma_device"]): r["address"].split("/")[0] for r in _sheet(c)}
    for r in rows:
        assert r["server_address"] == sheet[(r["server"], r["server_dev"])]
        assert r["client_address"] == sheet[(r["client"], r["client_dev"])]
    wanted = [r for r in rows if r["stage"] == "tier1-2" and r["rail"] == "3"]
    for rdma_cm, target in (("0", "server"), ("1", "server_address")):
        (tmp_path / "log").write_text("")
        env = {**os.environ, "SSH": str(ssh), "RDMA_CM": rdma_cm, "PARALLEL": "1000"}
        run = subprocess.run(["bash", str(folder / "perftest.sh"), str(tmp_path / "res"), "tier1-2", "3"], env=env, timeout=60)
        assert run.returncode == 0
        log = (tmp_path / "log").read_text().splitlines()
        # A client's command ends with its target; a server's with its own options (-x 3, -R).
        clients = [line for line in log if "ib_write_bw" in line and line.split()[-1] not in ("3", "-R")]
        assert len(clients) == len(wanted)
        expected = {f"{r['client']} -d {r['client_dev']} {r[target]}" for r in wanted}
        got = {f"{line.split()[0]} -d {line.split()[3]} {line.split()[-1]}" for line in clients}
        assert got == expected


def test_two_host_links_on_one_block_are_reported_by_their_cable_ids():
    from supernodeiac.checks import CheckContext
    from supernodeiac.checks.clos import check_duplicates

    c = compile_text(fat_tree(hosts=8, radix=8, transport="ethernet"))
    assert c.exit_code == 0, [x.message for x in c.findings]
    f = c.fabric
    leaves = [d for d in f.devices if d.role == "leaf"]
    # The second leaf takes the first's host blocks: its first host link lands on the first's.
    leaves[1].attrs = {**leaves[1].attrs, "host_block": leaves[0].attrs["host_block"]}
    found = [x for x in check_duplicates(CheckContext(c.blueprint, c.catalogue, f)) if "host block" in x.message]
    first = {
        d.index: min((k for k in f.links_of("f") if d.index in (k.a, k.b) and f.devices[k.a].tier == 0), key=lambda k: k.b_port)
        for d in leaves[:2]
    }
    assert [x.message for x in found] == [
        f"f: host links {first[leaves[0].index].id} and {first[leaves[1].index].id} share a host block"
    ]
    assert found[0].path == ("scaleout", 0)  # the link's origin: the pipeline makes it file:line:col


def test_two_fabrics_on_one_host_pool_are_duplicates():
    from test_clos import fabric_entry

    text = fat_tree(hosts=8, radix=8, transport="ethernet") + fabric_entry(
        "g",
        2,
        "sw",
        "ethernet",
        "",
        {"loopbacks": "10.1.0.0/22", "p2p": "10.65.0.0/16", "asn_first": 4200010000, "asn_last": 4200019999},
    ).replace("[{group: h}]", "[{group: h2}]")
    text = text.replace(
        "scaleout:\n", "  - {name: h2, model: host, count: 8, placement: {row: A, first_rack: 2, per_rack: 40}}\nscaleout:\n"
    )
    c = compile_text(text)
    errors = [x for x in c.findings if x.rule == "address-duplicate"]  # (the two trees share racks too)
    assert [x.message for x in errors] == ["g hosts pool 10.128.0.0/16 overlaps f hosts pool 10.128.0.0/16"]
    assert errors[0].path[-1] == "hosts" and errors[0].location is not None and errors[0].location.line > 0
