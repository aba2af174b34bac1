"""The hosts' side of the Ethernet fabrics: netplan's own parser (`netplan generate` on a scratch
root) accepts the rendered host documents, whose addresses and source routing are the host
sheet's; the NIC QoS script's priorities and DSCPs equal the leaves' lossless class as their
rendered config_db states it; the script parses (bash -n, shellcheck where installed)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml
from conftest import BLUEPRINTS

from supernodeiac.outputs.host_network import NETPLAN_FILE
from supernodeiac.pipeline import compile_file, render

ROCE = ["roce-rail-2tier", "roce-3tier-oversub"]
MARK = re.compile(r"^--- # node: (\S+)$", re.M)
SAMPLE = 4  # hosts per blueprint run through netplan by default (all of them in the slow test)


@cache
def _rendered(name: str) -> dict[str, bytes]:
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    files, _ = render(c, ["hosts", "host-addresses", "sonic"])
    return files


def _documents(files: dict[str, bytes]) -> dict[str, str]:
    """node -> its document, split at the marker lines as the module doc's awk line does."""
    text = files["hosts/netplan.yaml"].decode()
    marks = list(MARK.finditer(text))
    assert marks and marks[0].start() == 0
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return {m.group(1): text[m.start() : end] for m, end in zip(marks, ends, strict=True)}


def _netplan() -> str:
    found = shutil.which("netplan") or shutil.which("netplan", path="/usr/sbin:/sbin")
    if found is None:
        pytest.skip("netplan not installed (Debian: apt-get install netplan.io)")
    return found


def _generate(netplan: str, root: Path, document: str) -> subprocess.CompletedProcess[str]:
    etc = root / "etc" / "netplan"
    etc.mkdir(parents=True)
    path = etc / NETPLAN_FILE
    path.write_text(document)
    path.chmod(0o600)  # netplan warns about world-readable configs
    return subprocess.run([netplan, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)


def _accepts(name: str, tmp_path: Path, every: bool) -> None:
    netplan = _netplan()
    docs = _documents(_rendered(name))
    nodes = sorted(docs)
    if not every:
        step = max(1, len(nodes) // (SAMPLE - 1))
        nodes = sorted(set(nodes[::step][: SAMPLE - 1] + [nodes[-1]]))
    for k, node in enumerate(nodes):
        root = tmp_path / str(k)
        run = _generate(netplan, root, docs[node])
        assert run.returncode == 0, (node, run.stdout + run.stderr)
        networks = sorted(p.name for p in (root / "run" / "systemd" / "network").glob("*.network"))
        assert len(networks) == docs[node].count("addresses:"), (node, networks)


@pytest.mark.parametrize("name", ROCE)
def test_netplan_accepts_sampled_hosts(name, tmp_path):
    _accepts(name, tmp_path, every=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", ROCE)
def test_netplan_accepts_every_host(name, tmp_path):
    _accepts(name, tmp_path, every=True)


def test_netplan_rejects_a_broken_document(tmp_path):
    """The consumer is a real test: a bad address in a rendered document fails it."""
    netplan = _netplan()
    node, doc = next(iter(_documents(_rendered("roce-rail-2tier")).items()))
    broken = re.sub(r'addresses: \["[^"]+"\]', 'addresses: ["10.128.0.999/31"]', doc, count=1)
    assert broken != doc
    assert _generate(netplan, tmp_path, broken).returncode != 0


@pytest.mark.parametrize("name", ROCE)
def test_netplan_is_the_host_sheet(name):
    """Every NIC of the host sheet, and nothing else, with its address, its table's route via its
    gateway and its source rule; the MTU is the leaf port's (both IP MTUs: SONiC's orchagent adds the
    Ethernet header and FCS to PORT mtu, sonic-swss orchagent/port.h)."""
    files = _rendered(name)
    sheet = list(csv.DictReader(files["host-addresses/roce.csv"].decode().splitlines()))
    docs = _documents(files)
    assert sorted(docs) == sorted({r["node"] for r in sheet})
    # libyaml's safe loader where PyYAML was built with it: the same documents, a tenth of the time
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parsed = {node: yaml.load(doc, Loader=loader)["network"]["ethernets"] for node, doc in docs.items()}
    assert sum(len(e) for e in parsed.values()) == len(sheet)
    leaves = {leaf: json.loads(files[f"sonic/{leaf}.json"]) for leaf in {r["leaf"] for r in sheet}}
    for row in sheet:
        nic = parsed[row["node"]][row["nic"]]
        table = int(row["table"])
        assert nic["addresses"] == [row["address"]]
        assert nic["routes"] == [{"to": row["route"], "via": row["gateway"], "table": table}]
        assert nic["routing-policy"] == [{"from": row["address"].split("/")[0], "table": table, "priority": table}]
        assert nic["mtu"] == int(leaves[row["leaf"]]["PORT"][row["leaf_port"]]["mtu"]) == 9100  # the default


ROCE_TEXT = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()


def _with_mtu(settings: str):
    from conftest import compile_text

    text = ROCE_TEXT.replace("    ethernet:\n", f"    ethernet:\n      {settings}\n", 1)
    assert text != ROCE_TEXT
    return text, compile_text(text)


def test_mtu_from_the_blueprint_reaches_ports_and_nics():
    """ethernet.mtu sets every fabric switch port, host_mtu (below it) the NICs; the management
    network keeps SONiC's default (the shipped blueprints: NICs equal to the ports, above)."""
    from supernodeiac.facts.switch_facts import FabricFacts
    from supernodeiac.outputs.sonic_config import config_db

    _, c = _with_mtu("mtu: 4200\n      host_mtu: 4000")
    assert c.exit_code == 0, [f.message for f in c.findings]
    facts = FabricFacts(c.blueprint, c.catalogue, c.fabric)
    leaf = next(d.index for d in c.fabric.devices if d.role == "leaf")
    mgmt = next(d.index for d in c.fabric.devices if d.role == "mgmt")
    assert {p["mtu"] for p in config_db(facts.switch(leaf))["PORT"].values()} == {"4200"}
    assert {p["mtu"] for p in config_db(facts.switch(mgmt))["PORT"].values()} == {"9100"}
    files, _ = render(c, ["hosts"])
    nics = [e for doc in _documents(files).values() for e in yaml.safe_load(doc)["network"]["ethernets"].values()]
    assert len(nics) == 96 * 8 and {n["mtu"] for n in nics} == {4000}  # every NIC of the 96 hosts


def test_host_mtu_above_the_ports_is_a_located_error():
    text, c = _with_mtu("host_mtu: 9200")
    errors = [f for f in c.findings if f.severity.value == "error"]
    assert c.exit_code != 0 and len(errors) == 1 and "above the switch ports' mtu 9100" in errors[0].message
    assert errors[0].location.line == text.splitlines().index("      host_mtu: 9200") + 1


def _script_values(text: str) -> dict[str, object]:
    pfc = re.search(r"^PFC=([0-9,]+)$", text, re.M)
    pairs = re.search(r"^DSCP2PRIO=\(([^)]*)\)$", text, re.M)
    cnp = re.search(r'^\s*echo (\d+) > "/sys/class/net/\$nic/ecn/roce_np/cnp_dscp"$', text, re.M)
    cnp_prio = re.search(r'^\s*echo (\d+) > "/sys/class/net/\$nic/ecn/roce_np/cnp_802p_prio"$', text, re.M)
    assert pfc and pairs
    return {
        "pfc": {p for p, on in enumerate(pfc.group(1).split(",")) if on == "1"},
        "dscp2prio": dict(tuple(map(int, w.strip('"').split(","))) for w in pairs.group(1).split()),
        "np": {int(p) for p in re.findall(r"ecn/roce_np/enable/(\d)", text)},
        "rp": {int(p) for p in re.findall(r"ecn/roce_rp/enable/(\d)", text)},
        "tos": int(re.search(r"^ROCE_TOS=(\d+)$", text, re.M).group(1)),  # type: ignore[union-attr]
        "cnp": None if cnp is None else (int(cnp.group(1)), int(cnp_prio.group(1))),  # type: ignore[union-attr]
    }


@pytest.mark.parametrize("name", ROCE)
def test_nic_qos_matches_the_leaves(name):
    """From the leaves' rendered config_db alone: the host-facing ports' pfc_enable, the DSCP map
    they trust; the script's PFC priorities, DSCP -> priority, DCQCN priorities and the CNP's
    DSCP and priority are the same."""
    files = _rendered(name)
    sheet = list(csv.DictReader(files["host-addresses/roce.csv"].decode().splitlines()))
    models = {}
    for d in compile_file(str(BLUEPRINTS / f"{name}.yaml")).fabric.devices:
        models[d.name] = d.model
    scripts = {p: v.decode() for p, v in files.items() if p.startswith("hosts/nic-qos/roce/")}
    assert sorted(scripts) == sorted({f"hosts/nic-qos/roce/{models[r['node']]}.sh" for r in sheet})
    pfc: set[frozenset[int]] = set()
    dscp_maps: set[tuple[tuple[int, int], ...]] = set()
    leaves = {name: json.loads(files[f"sonic/{name}.json"]) for name in {row["leaf"] for row in sheet}}  # each parsed once
    for row in sheet:
        leaf = leaves[row["leaf"]]
        port = leaf["PORT_QOS_MAP"][row["leaf_port"]]
        pfc.add(frozenset(int(p) for p in port["pfc_enable"].split(",")))
        dscp_maps.add(tuple(sorted((int(k), int(v)) for k, v in leaf["DSCP_TO_TC_MAP"][port["dscp_to_tc_map"]].items())))
    assert len(pfc) == 1 and len(dscp_maps) == 1  # one lossless class on every host port
    (lossless,), (dscp_map,) = pfc, dscp_maps
    tc_of = dict(dscp_map)
    default_tc = max(set(tc_of.values()), key=list(tc_of.values()).count)
    for path, text in scripts.items():
        v = _script_values(text)
        assert v["pfc"] == lossless, path
        assert v["np"] == v["rp"] == lossless, path
        mapped = v["dscp2prio"]
        assert isinstance(mapped, dict)
        # Every DSCP the leaves single out (not their default class) is set to the leaves' class.
        assert {d for d, tc in tc_of.items() if tc != default_tc} <= set(mapped), path
        assert all(tc_of[d] == p for d, p in mapped.items()), path
        roce = int(v["tos"]) >> 2  # type: ignore[call-overload]
        assert tc_of[roce] in lossless, path
        nccl = [b.decode() for p, b in files.items() if p.startswith("nccl/") and p.endswith(".env")]
        assert all(f"NCCL_IB_TC={v['tos']}" in e for e in nccl if "NCCL_IB_TC" in e)
        if v["cnp"] is not None:
            cnp_dscp, cnp_prio = v["cnp"]  # type: ignore[misc]
            assert tc_of[cnp_dscp] == cnp_prio and cnp_prio not in lossless, path


@pytest.mark.parametrize("name", ROCE)
def test_nic_qos_scripts_parse(name, tmp_path):
    files = _rendered(name)
    for path, data in files.items():
        if not path.startswith("hosts/nic-qos/"):
            continue
        script = tmp_path / Path(path).name
        script.write_bytes(data)
        run = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        if shutil.which("shellcheck"):
            run = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
            assert run.returncode == 0, run.stdout


@pytest.mark.parametrize("batch", [1, 3, 10_000])
def test_netplan_batches_join_to_the_whole_render(batch, monkeypatch):
    """The template renders whole host documents, batch by batch: any batch size gives the same file."""
    import supernodeiac.outputs.host_network as host_network

    whole = _rendered("roce-3tier-oversub")["hosts/netplan.yaml"]
    monkeypatch.setattr(host_network, "_BATCH", batch)
    c = compile_file(str(BLUEPRINTS / "roce-3tier-oversub.yaml"))
    files, _ = render(c, ["hosts"])
    assert files["hosts/netplan.yaml"] == whole and len(_documents(files)) > 3
