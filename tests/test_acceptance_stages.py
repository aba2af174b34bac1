"""The acceptance plan covers every network of every shipped blueprint: storage and in-band
fabrics with their own threshold, every management uplink, every host of every scale-up domain
with its vendor's link check (or a notice), RoCE runs in the lossless class; and the new scripts
run under a fake ssh with each plan value as one argument."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, shipped, shipped_outputs

from supernodeiac.catalog.collectives import model_figures
from supernodeiac.fabric.fabric_facts import management_of
from supernodeiac.facts.hosts import cached_host_facts

SHIPPED = sorted(p.stem for p in BLUEPRINTS.glob("*.yaml"))


def _tsv(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(data.decode().splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_network_of_the_blueprint_is_in_the_plan(name):
    c = shipped(name)
    f, bp = c.fabric, c.blueprint
    files = shipped_outputs(name, "acceptance")
    # Scale-out fabrics: data and storage alike, every cabled link under test once (or listed untestable).
    for spec in bp.scaleout:
        links = f.links.indices_of(spec.name)
        rows = _tsv(files[f"acceptance/{spec.name}/perftest.tsv"])
        untestable = files.get(f"acceptance/{spec.name}/untestable.tsv", b"cable\n").decode().splitlines()[1:]
        # (routed InfiniBand tests name a switch cable once per direction: test_acceptance.py counts those)
        under = {c for r in rows for c in r["cables"].split(";")}
        ids = f.links.ids()
        assert under | {u.split("\t")[0] for u in untestable if u.split("\t")[2] == "both"} == {ids[i] for i in links}
        storage = any(getattr(ep, "ports", "data") in ("storage", "inband") for ep in spec.endpoints)
        frac = bp.acceptance.storage_min_fraction if storage else bp.acceptance.perftest_min_fraction
        assert {round(float(r["min_gbps"]) / float(r["line_gbps"]), 6) for r in rows} == {frac}
    # Management: every rack switch's uplinks to the aggregation layer (the builder's count).
    m = management_of(f.facts)
    uplinks = _tsv(files["acceptance/management/uplinks.tsv"]) if m and m["uplinks_per_rack"] else []
    expected = m["rack_switches"] * m["uplinks_per_rack"] if m else 0
    assert len(uplinks) == expected and len({r["cable"] for r in uplinks}) == expected
    position = {cable: i for i, cable in enumerate(f.links.ids())}
    for r in uplinks:
        sw, agg = f.device(r["switch"]), f.device(r["peer"])
        i = position[r["cable"]]
        assert sw.role == "mgmt" and agg.role == "mgmt-agg" and {f.links.a[i], f.links.b[i]} == {sw.index, agg.index}
    # Scale-up: one check per host of a domain, links and rate from the catalogue, the vendor's tool.
    scaleup = _tsv(files["acceptance/scaleup.tsv"]) if "acceptance/scaleup.tsv" in files else []
    in_domains = cached_host_facts(f, bp).domain
    with_links = {f.devices[h].name for h in in_domains if (a := f.models[f.devices[h].model].accelerators) and a.links}
    assert len(scaleup) == len(with_links) and {r["host"] for r in scaleup} == with_links
    if name != "cxl-pool":
        assert scaleup  # every shipped blueprint with accelerators has its domains in the plan
    for r in scaleup:
        acc = f.models[f.device(r["host"]).model].accelerators
        vendor = model_figures().vendor_of(acc.model)
        assert (int(r["links"]), float(r["link_gbytes"]), r["accelerator"]) == (acc.links, acc.link_gbps / 8, acc.model)
        assert r["tool"] == (vendor.link_tool if vendor else "none")
    if any(r["tool"] == "none" for r in scaleup):
        assert "No link check is known for" in files["acceptance/checklist.md"].decode()


def test_ib_3tier_storage_fabric_has_its_1102_links_and_own_threshold():
    files = shipped_outputs("ib-3tier", "acceptance")
    rows = _tsv(files["acceptance/storage/perftest.tsv"])
    assert sum(len(r["cables"].split(";")) for r in rows) == 1102  # 17 planned leaves; 8 SUs built
    assert {r["line_gbps"] for r in rows} == {"400"} and {r["min_gbps"] for r in rows} == {"240"}
    # Storage servers and nodes' storage ports (the DGX H100's mlx5_1 and mlx5_7), by the address
    # of each NIC's host link.
    assert {r["client_dev"] for r in rows} >= {"mlx5_1", "mlx5_7"} and all(r["server_address"] for r in rows)
    assert "### Fabric storage (ethernet, storage fabric)" in files["acceptance/checklist.md"].decode()
    # RoCE: no ibtracert port table; the SONiC ports behind each cable for the counter reads instead.
    assert "acceptance/storage/ports.tsv" not in files and "acceptance/storage/switch_ports.tsv" in files


@pytest.mark.parametrize("name", ["roce-rail-2tier", "roce-3tier-oversub"])
def test_roce_runs_carry_the_lossless_class(name):
    bp = shipped(name).blueprint
    files = shipped_outputs(name, "acceptance", "nccl")
    for spec in bp.scaleout:
        tc = spec.ethernet.lossless.roce_dscp << 2
        assert f'EXTRA=("--tclass={tc}"' in files[f"acceptance/{spec.name}/perftest.sh"].decode()
        runs = [r for r in _tsv(files["acceptance/nccl-tests.tsv"]) if r["stage"] in ("rail", "fabric")]
        assert runs and all(f"NCCL_IB_TC={tc}" in r["env"].split(";") for r in runs)
        # The same class as the hosts' NCCL env files set.
        envs = [data.decode() for path, data in files.items() if path.startswith("nccl/") and path.endswith(".env")]
        assert envs and all(re.search(rf"^NCCL_IB_TC={tc}$", e, re.M) for e in envs)
    domain = [r for r in _tsv(files["acceptance/nccl-tests.tsv"]) if r["stage"] == "domain"]
    assert domain and not any("NCCL_IB_TC" in r["env"] for r in domain)  # NVLink only


def _fake(tmp_path: Path) -> dict[str, str]:
    """ssh runs the remote line in bash in a scratch folder; ping and nvidia-smi record their argv."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir(parents=True)
    calls.mkdir()
    (bin_dir / "fake-ssh").write_text('#!/bin/bash\nhost=$1; shift\ncd "$SCRATCH" && exec bash -c "$*"\n')
    (bin_dir / "record").write_text(
        '#!/bin/bash\nf=$(mktemp "$CALLS/call.XXXXXX")\nprintf "%s\\0" "$(basename "$0")" "$@" >"$f"\necho "GPU 0: fake"\n'
    )
    for tool in ("ping", "nvidia-smi", "amd-smi"):
        (bin_dir / tool).symlink_to("record")
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    (tmp_path / "scratch").mkdir()
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "SSH": str(bin_dir / "fake-ssh"),
        "CALLS": str(calls),
        "SCRATCH": str(tmp_path / "scratch"),
        "COUNT": "3",
    }


def _run(script: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True)


def _calls(env: dict[str, str]) -> list[tuple[str, ...]]:
    return [tuple(a.decode() for a in p.read_bytes().split(b"\0")[:-1]) for p in sorted(Path(env["CALLS"]).iterdir())]


def _write(tmp_path: Path, files: dict[str, bytes], prefix: str) -> Path:
    root = tmp_path / "acceptance"
    for path, data in files.items():
        if path.startswith(prefix):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_bytes(data)
    return root


def test_uplink_and_scaleup_scripts_pass_shellcheck_and_run_each_value_as_one_argument(tmp_path):
    files = shipped_outputs("small-ib", "acceptance")
    root = _write(tmp_path, files, "acceptance/")
    for script in ("management/uplinks.sh", "scaleup.sh"):
        subprocess.run(["bash", "-n", str(root / script)], check=True)
        if shutil.which("shellcheck"):
            r = subprocess.run(["shellcheck", str(root / script)], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout
    env = _fake(tmp_path)
    r = _run(root / "management/uplinks.sh", str(tmp_path / "res"), env=env)
    assert r.returncode == 0, r.stderr
    uplinks = _tsv(files["acceptance/management/uplinks.tsv"])
    pings = Counter(c for c in _calls(env) if c[0] == "ping")
    assert set(pings) == {("ping", "-c", "3", "-i", "0.2", "-W", "1", "-I", u["bind"], u["target"]) for u in uplinks}
    record = (tmp_path / "res" / "management" / f"{uplinks[0]['test']}.txt").read_text()
    assert [line for line in record.splitlines() if line.startswith("== ")] == [
        "== a before",
        "== b before",
        "== ping",
        "== a after",
        "== b after",
    ]
    env = _fake(tmp_path / "2")
    r = _run(root / "scaleup.sh", str(tmp_path / "res"), "after", env=env)
    assert r.returncode == 0, r.stderr
    hosts = len(_tsv(files["acceptance/scaleup.tsv"]))
    assert sorted(_calls(env)) == sorted([("nvidia-smi", "nvlink", "-s"), ("nvidia-smi", "nvlink", "-e")] * hosts)
    assert len(list((tmp_path / "res" / "scaleup").glob("*.after.txt"))) == hosts


@pytest.mark.parametrize("column, value", [(2, "Ethernet48;touch CANARY"), (8, "$(touch CANARY)"), (1, "-oProxyCommand=x")])
def test_uplinks_refuse_a_plan_line_that_is_not_plain(tmp_path, column, value):
    files = shipped_outputs("small-ib", "acceptance")
    root = _write(tmp_path, files, "acceptance/management/")
    plan = root / "management" / "uplinks.tsv"
    lines = plan.read_text().splitlines()
    cells = lines[1].split("\t")
    cells[column] = value
    plan.write_text("\n".join([lines[0], "\t".join(cells)]) + "\n")
    env = _fake(tmp_path)
    r = _run(root / "management/uplinks.sh", str(tmp_path / "res"), env=env)
    assert r.returncode == 0 and "uplinks.tsv:2:" in r.stderr and "line skipped" in r.stderr
    assert _calls(env) == [] and not list(tmp_path.rglob("CANARY"))


@pytest.mark.parametrize("name", ["small-ib", "nvl72-pod"])
def test_ports_table_names_each_port_as_the_subnet_manager_sees_it(name):
    """ports.tsv's (description, IB port) of both ends of every cable are IbFabric's, the model
    the OpenSM files and snc verify share (and ibtracert prints on ibsim: test_check_results_paths.py)."""
    from supernodeiac.facts.ib_fabric import IbFabric, infiniband_fabrics

    f = shipped(name).fabric
    files = shipped_outputs(name, "acceptance")
    ids = f.links.ids()
    for fabric in infiniband_fabrics(f):
        ib = IbFabric(f, fabric)
        expected = {
            (ids[link], node.description, port) for node in ib.nodes.values() for port, (_p, _q, link) in node.links.items()
        }
        rows = _tsv(files[f"acceptance/{fabric}/ports.tsv"])
        got = {(r["cable"], r[f"{e}_node"], int(r[f"{e}_port"])) for r in rows for e in ("a", "b")}
        assert got == expected and len(rows) == len(f.links.indices_of(fabric))
