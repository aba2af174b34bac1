"""CPU servers on the accelerators' fabric (issue 21): Slurm, Kubernetes and acceptance outputs for
hosts without accelerators, counted against the Fabric.

tests/data/mixed-cpu-gpu-ib.yaml puts 16 HGX H100 nodes and 16 2-socket EPYC servers on one NDR fat
tree; a CPU-only variant of small-ib (its node model swapped for the CPU server) is the audit's case
that used to render no slurm/ and no kubernetes/ at all.
"""

from __future__ import annotations

import csv
import getpass
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import kubernetes_validate
import pytest
from conftest import BLUEPRINTS, compile_text
from ruamel.yaml import YAML
from test_slurm import check_blocks, check_tree, expand, parse_conf

from supernodeiac.facts.collectives import natural_scales
from supernodeiac.outputs.slurm import MEMORY_MARGIN
from supernodeiac.outputs.slurm import hostlist as hostlist_of
from supernodeiac.pipeline import compile_file, render

DATA = BLUEPRINTS.parent / "tests" / "data"
V1 = ("accelerator.topograph.run/domain", "fabric.topograph.run/tier-0", "fabric.topograph.run/tier-1")
P = "topology.supernodeiac.io"


@pytest.fixture(scope="module")
def mixed():
    c = compile_file(str(DATA / "mixed-cpu-gpu-ib.yaml"))
    assert c.errors == 0
    artifacts, _ = render(c, ["slurm", "kubernetes", "acceptance"])
    return c, artifacts


@pytest.fixture(scope="module")
def cpu_only():
    text = (BLUEPRINTS / "small-ib.yaml").read_text().replace("model: hgx-h100", "model: cpu-2s-epyc9654")
    # 2 NICs, 2 rails, 2 leaves: the UFM pair cannot sit on 4 leaves as an HA pair.
    text = text.replace("        ha: true\n", "")
    c = compile_text(text, "cpu-only.yaml")
    assert c.errors == 0
    artifacts, _ = render(c, ["slurm", "kubernetes", "acceptance"])
    return c, artifacts


def by_model(c) -> dict[str, list[str]]:
    """Host names per node model (kind node), from the Fabric."""
    out: dict[str, list[str]] = {}
    for d in c.fabric.devices:
        if c.fabric.models[d.model].kind == "node":
            out.setdefault(d.model, []).append(d.name)
    return out


def leaves_of(c, fabric: str = "ib") -> dict[str, set[str]]:
    """Host name -> the switches its data ports are cabled to on a fabric, read from the links."""
    f = c.fabric
    t = f.links
    out: dict[str, set[str]] = {}
    for a, ap, b, bp, s in zip(t.a, t.a_port, t.b, t.b_port, t.spec, strict=True):
        if t.specs[s].fabric != fabric:
            continue
        for host, port, other in ((a, ap, b), (b, bp, a)):
            d = f.devices[host]
            if f.models[d.model].kind == "node" and port in f.layouts[d.model].ports_of("data"):
                out.setdefault(d.name, set()).add(f.devices[other].name)
    return out


def node_records(data: bytes) -> tuple[dict[str, dict[str, str]], list[dict[str, str]], list[dict[str, str]]]:
    """nodes.conf: host -> its NodeName record (each host once), the partitions, other records."""
    nodes: dict[str, dict[str, str]] = {}
    partitions, other = [], []
    for r in parse_conf(data.decode()):
        if "nodename" in r:
            for name in expand(r["nodename"]):
                assert name not in nodes, f"{name} on two NodeName lines"
                nodes[name] = r
        elif "partitionname" in r:
            partitions.append(r)
        else:
            other.append(r)
    return nodes, partitions, other


def test_the_fabric_has_both_kinds_of_host(mixed):
    c, _ = mixed
    hosts = by_model(c)
    assert len(hosts["hgx-h100"]) == 16 and len(hosts["cpu-2s-epyc9654"]) == 16
    # Every CPU server is cabled to the fabric on both its NICs.
    cabled = leaves_of(c)
    assert all(len(cabled[h]) == 2 for h in hosts["cpu-2s-epyc9654"])


def test_nodes_conf_lists_every_host_once_with_gres_only_on_accelerator_hosts(mixed):
    c, artifacts = mixed
    nodes, partitions, other = node_records(artifacts["slurm/nodes.conf"])
    hosts = by_model(c)
    assert sorted(nodes) == sorted(hosts["hgx-h100"] + hosts["cpu-2s-epyc9654"])
    gpu = c.fabric.models["hgx-h100"].accelerators
    cpu = c.fabric.models["cpu-2s-epyc9654"].cpu
    assert gpu is not None and cpu is not None
    for name in hosts["hgx-h100"]:
        assert nodes[name]["gres"] == f"gpu:{gpu.count}"
        assert "sockets" not in nodes[name]  # the catalogue has no CPU figures for a generic HGX
    for name in hosts["cpu-2s-epyc9654"]:
        r = nodes[name]
        assert "gres" not in r
        assert int(r["sockets"]) * int(r["corespersocket"]) * int(r["threadspercore"]) == 2 * 96 * 2
        assert int(r["realmemory"]) == int(768 * 1024 * MEMORY_MARGIN) < 768 * 1024
    assert {"grestypes": "gpu"} in other
    # A partition per node group, holding exactly that group's hosts; one default.
    parts = {p["partitionname"]: expand(p["nodes"]) for p in partitions}
    assert parts == {"gpu": hosts["hgx-h100"], "cpu": hosts["cpu-2s-epyc9654"]}
    assert [p["partitionname"] for p in partitions if p.get("default") == "YES"] == ["gpu"]


def test_topology_tree_puts_each_host_under_its_leaves_once(mixed):
    c, artifacts = mixed
    nodes, root = check_tree(parse_conf(artifacts["slurm/topology.conf"].decode()))
    cabled = leaves_of(c)
    assert sorted(nodes) == sorted(cabled)
    assert all(len(switches) == 1 for switches in nodes.values())  # each host listed once
    # Hosts under one Slurm switch are those cabled to the same leaves: GPU and CPU apart.
    groups: dict[str, set[frozenset[str]]] = {}
    for host, (switch,) in nodes.items():
        groups.setdefault(switch, set()).add(frozenset(cabled[host]))
    assert all(len(v) == 1 for v in groups.values())
    assert len(groups) == 2 and root == "ib-spines"
    blocks, _sizes = check_blocks(parse_conf(artifacts["slurm/topology-block.conf"].decode()))
    assert sorted(n for b in blocks.values() for n in b) == sorted(cabled)


def test_topology_yaml_covers_the_cpu_hosts(mixed):
    _c, artifacts = mixed
    doc = YAML(typ="safe").load(artifacts["slurm/topology.yaml"].decode())
    tree = next(t for t in doc if t["topology"] == "tree")
    listed = [n for s in tree["tree"]["switches"] if "nodes" in s for n in expand(s["nodes"])]
    assert sum(1 for n in listed if n.startswith("cpu-")) == 16 and len(listed) == len(set(listed)) == 32


def test_kubernetes_labels_per_host_with_topograph_tiers_and_no_accelerator_keys(mixed):
    c, artifacts = mixed
    nodes = {
        d["metadata"]["name"]: d["metadata"]["labels"]
        for d in YAML(typ="safe").load_all(artifacts["kubernetes/node-labels.yaml"].decode())
        if d
    }
    hosts = by_model(c)
    assert sorted(nodes) == sorted(hosts["hgx-h100"] + hosts["cpu-2s-epyc9654"])
    tree, _root = check_tree(parse_conf(artifacts["slurm/topology.conf"].decode()))
    cabled = leaves_of(c)
    for name, labels in nodes.items():
        cpu = name in hosts["cpu-2s-epyc9654"]
        assert labels[f"{P}/node-model"] == ("cpu-2s-epyc9654" if cpu else "hgx-h100")
        assert labels[V1[1]] == tree[name][0] and labels[V1[2]] == "ib-spines"
        assert {v for k, v in labels.items() if re.fullmatch(rf"{P}/ib\.rail\d+\.leaf", k)} == cabled[name]
        assert V1[0] not in labels  # single-host domains (HGX) and CPU servers: no accelerator domain key
        if cpu:
            assert not any("scaleup" in k or "system-class" in k for k in labels)
        else:
            assert labels[f"{P}/scaleup-accelerators"] == "8"
    docs = [d for d in YAML(typ="safe").load_all(artifacts["kubernetes/node-labels.yaml"].decode()) if d]
    version = kubernetes_validate.latest_version()
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)
    flavors = [
        d for d in YAML(typ="safe").load_all(artifacts["kubernetes/kueue.yaml"].decode()) if d and d["kind"] == "ResourceFlavor"
    ]
    assert sorted(f["spec"]["nodeLabels"][f"{P}/node-model"] for f in flavors) == ["cpu-2s-epyc9654", "hgx-h100"]


def _tsv(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode()), delimiter="\t"))


def test_cpu_hosts_stay_in_the_link_tests_and_out_of_the_collectives(mixed):
    c, artifacts = mixed
    cpu = set(by_model(c)["cpu-2s-epyc9654"])
    tests = _tsv(artifacts["acceptance/ib/perftest.tsv"])
    ends = [r["server"] for r in tests if r["server"] in cpu] + [r["client"] for r in tests if r["client"] in cpu]
    assert set(ends) == cpu  # every CPU server loads its links in some pair
    for path, data in artifacts.items():
        if path.startswith("acceptance/hosts/"):
            assert not cpu & set(data.decode().split()), path
    runs = _tsv(artifacts["acceptance/nccl-tests.tsv"])
    assert runs and not any(r["hosts"].removeprefix("host:") in cpu for r in runs)
    checklist = artifacts["acceptance/checklist.md"].decode()
    assert "16 hosts without accelerators (cpu-0001, cpu-0002, cpu-0003, ...)" in checklist
    assert "no collective rank" in checklist


def test_cpu_only_fabric_gets_scheduler_outputs(cpu_only):
    """The audit's blueprint: before, 0 errors but no slurm/ and no kubernetes/."""
    c, artifacts = cpu_only
    hosts = by_model(c)["cpu-2s-epyc9654"]
    nodes, partitions, other = node_records(artifacts["slurm/nodes.conf"])
    assert sorted(nodes) == sorted(hosts) and all("gres" not in r for r in nodes.values())
    assert other == [] and [p["partitionname"] for p in partitions] == ["gpu"]  # small-ib's group name
    tree, _root = check_tree(parse_conf(artifacts["slurm/topology.conf"].decode()))
    assert sorted(tree) == sorted(hosts)
    labels = [d for d in YAML(typ="safe").load_all(artifacts["kubernetes/node-labels.yaml"].decode()) if d]
    assert len(labels) == len(hosts)
    assert "acceptance/nccl-tests.tsv" not in artifacts
    checklist = artifacts["acceptance/checklist.md"].decode()
    assert "The design has no accelerators to run collectives on." in checklist
    assert f"{len(hosts)} hosts without accelerators" in checklist
    assert artifacts["acceptance/ib/perftest.tsv"].count(b"\n") > 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not (shutil.which("slurmctld") and shutil.which("scontrol")), reason="Slurm (slurm-wlm) not installed")
def test_slurmctld_reads_the_nodes_partitions_and_tree(mixed, tmp_path):
    """The real consumer: slurmctld loads nodes.conf and topology.conf (Include, TopologyPlugin=
    topology/tree) and scontrol reports every host, its CPUs, memory, Gres and partition, and the
    switches. The harness adds a NodeAddr per host (the test machine resolves no host names)."""
    c, artifacts = mixed
    hosts = by_model(c)
    text = artifacts["slurm/nodes.conf"].decode()
    for k, names in enumerate((hosts[m] for m in sorted(hosts)), start=1):
        first = f"NodeName={hostlist_of(names)} "
        assert text.count(first) == 1
        text = text.replace(first, f"{first}NodeAddr=127.0.{k}.[1-{len(names)}] ")
    (tmp_path / "nodes.conf").write_text(text)
    (tmp_path / "topology.conf").write_bytes(artifacts["slurm/topology.conf"])
    (tmp_path / "state").mkdir()
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "\n".join(
            [
                "ClusterName=snc",
                "SlurmctldHost=localhost",
                f"SlurmUser={getpass.getuser()}",
                "AuthType=auth/none",
                "CredType=cred/none",
                f"StateSaveLocation={tmp_path / 'state'}",
                f"SlurmctldPidFile={tmp_path / 'slurmctld.pid'}",
                f"SlurmctldPort={_free_port()}",
                "MpiDefault=none",
                "MailProg=/bin/true",
                "TopologyPlugin=topology/tree",
                "SelectType=select/cons_tres",
                "ProctrackType=proctrack/linuxproc",
                f"Include {tmp_path / 'nodes.conf'}",
                "",
            ]
        )
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    log = (tmp_path / "slurmctld.log").open("wb")
    proc = subprocess.Popen(["slurmctld", "-D", "-c", "-f", str(conf)], stdout=log, stderr=log, env=env, start_new_session=True)
    try:

        def scontrol(*args: str) -> str:
            return subprocess.run(["scontrol", *args], env=env, capture_output=True, text=True, timeout=20).stdout

        deadline = time.monotonic() + 30
        nodes = ""
        while time.monotonic() < deadline and proc.poll() is None:
            nodes = scontrol("show", "nodes", "-o")
            if nodes:
                break
            time.sleep(0.5)
        assert nodes, (tmp_path / "slurmctld.log").read_text(errors="replace")[-2000:]
        seen = {}
        for line in nodes.splitlines():
            fields = dict(t.split("=", 1) for t in line.split() if "=" in t)
            seen[fields["NodeName"]] = fields
        assert sorted(seen) == sorted(hosts["hgx-h100"] + hosts["cpu-2s-epyc9654"])
        for name in hosts["cpu-2s-epyc9654"]:
            assert seen[name]["CPUTot"] == "384" and seen[name]["Gres"] == "(null)" and seen[name]["Partitions"] == "cpu"
            assert seen[name]["RealMemory"] == str(int(768 * 1024 * MEMORY_MARGIN))
        for name in hosts["hgx-h100"]:
            assert seen[name]["Gres"] == "gpu:8" and seen[name]["Partitions"] == "gpu"
        topo = {}
        for line in scontrol("show", "topology").splitlines():
            fields = dict(t.split("=", 1) for t in line.split() if "=" in t)
            topo[fields["SwitchName"]] = fields
        assert expand(topo["ib-su002"]["Nodes"]) == hosts["cpu-2s-epyc9654"] and topo["ib-su002"]["Level"] == "0"
        assert sorted(expand(topo["ib-spines"]["Nodes"])) == sorted(seen) and topo["ib-spines"]["Level"] == "1"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: slurmctld and its slurmscriptd
        proc.wait(timeout=10)
        log.close()


def test_collective_scales_count_accelerator_hosts_only(mixed, cpu_only):
    """explain's and the acceptance plan's collective scales: no CPU server is a rank."""
    c, _ = mixed
    scales = {s.stage: s for s in natural_scales(c.fabric, c.blueprint)}
    assert scales["rail"].group == "ib-su001-rail0" and scales["rail"].scale.ranks == 16
    assert scales["fabric"].scale.ranks == 16 * 8
    c, _ = cpu_only
    assert natural_scales(c.fabric, c.blueprint) == []
