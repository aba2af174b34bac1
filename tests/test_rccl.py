"""AMD hosts (issues 19/21): the RCCL environment per host model, read back by bash and held
against the Fabric, and the xGMI copy stage of the acceptance plan (TransferBench p2p per GPU
pair of a switchless mesh) run with a stand-in TransferBench and graded by check-results,
healthy, degraded and malformed."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from supernodeiac.catalog.collectives import model_figures
from supernodeiac.facts.hosts import cached_host_facts
from supernodeiac.pipeline import compile_text, render
from supernodeiac.verify.check_results import check
from supernodeiac.verify.check_xgmi import XgmiError, read_matrix

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data" / "acceptance"
MODEL = "mi300x-8gpu"
# roce-rail-2tier with 2 x 4 MI300X platforms in place of its 2 x 48 HGX H100s (as tests/test_scaleup.py).
MESH = (
    (ROOT / "blueprints" / "roce-rail-2tier.yaml")
    .read_text()
    .replace("model: hgx-h100-bf3\n    count: 48", f"model: {MODEL}\n    count: 4")
)
HEALTHY = (DATA / "mi300x-transferbench-p2p.txt").read_text()
DEGRADED = (DATA / "mi300x-transferbench-p2p-degraded.txt").read_text()


@pytest.fixture(scope="module")
def mesh():
    c = compile_text(MESH)
    assert not [f for f in c.findings if f.severity == "error"]
    files, notices = render(c, only=["rccl", "nccl", "acceptance"])
    assert any(f"no NCCL files for {MODEL}: its accelerators (MI300X) use RCCL" in n and "rccl/" in n for n in notices)
    return c, files


def _tsv(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(data.decode().splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def _sourced(path: Path) -> dict[str, str]:
    """The variables an env file sets, as bash reads it (nothing else in the environment)."""
    out = subprocess.run(
        ["env", "-i", "/bin/bash", "-c", 'set -a; . "$1"; set +a; declare -p $(compgen -e)', "_", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = dict(re.findall(r'^declare -x ([A-Z_][A-Z0-9_]*)="([^"]*)"$', out, re.M))
    return {k: v for k, v in found.items() if k.startswith("NCCL_")}


def test_rccl_env_read_by_bash_holds_the_fabrics_values(mesh, tmp_path):
    c, files = mesh
    assert [p for p in files if p.startswith("rccl/")] == [f"rccl/{MODEL}.env", "rccl/hosts.tsv"]
    assert not [p for p in files if p.startswith("nccl/")]  # RCCL hosts get no NCCL files
    env = tmp_path / "x.env"
    env.write_bytes(files[f"rccl/{MODEL}.env"])
    got = _sourced(env)
    # Independently from the Fabric: each host's cabled NICs on the RoCE fabric, by rail.
    hosts = cached_host_facts(c.fabric, c.blueprint)
    (fh,) = hosts.fabrics.values()
    orders = {tuple(n.name for n in sorted(fh.nics[h], key=lambda n: n.rail)) for h in hosts.hosts}
    (order,) = orders
    assert len(order) == 8 and {n.rail for h in hosts.hosts for n in fh.nics[h]} == set(range(8))
    (spec,) = [s for s in c.blueprint.scaleout if s.name == fh.name]
    assert got == {
        "NCCL_IB_HCA": "=" + ",".join(f"{n}:1" for n in order),
        "NCCL_SOCKET_IFNAME": "=" + ",".join(order),
        "NCCL_CROSS_NIC": "0",  # rail-optimised
        "NCCL_IB_TC": str(spec.ethernet.lossless.roce_dscp * 4),
    }
    text = files[f"rccl/{MODEL}.env"].decode()
    for cuda_only in ("NVLS", "MNNVL", "CUMEM", "TOPO_FILE"):
        assert f"NCCL_{cuda_only}" not in text.replace("# No NCCL_TOPO_FILE", "")
    rows = _tsv(files["rccl/hosts.tsv"])
    mi300 = sorted(d.name for d in c.fabric.devices if d.model == MODEL)
    assert [r["host"] for r in rows] == mi300 and len(mi300) == 8
    assert {r["env_file"] for r in rows} == {f"{MODEL}.env"}
    layout = c.fabric.layouts[MODEL]
    data = layout.ports_of("data")
    printed = {layout.names[p]: layout.physical_name(p) for p in data}
    assert {r["nics"] for r in rows} == {";".join(f"{n}={printed[n]}" for n in order)}


def test_rccl_env_lines_are_what_the_collective_script_accepts(mesh, tmp_path):
    """nccl-tests.sh reads NCCL_ENV_FILE line by line: every line of the RCCL env is a comment or
    one KEY=value word, so the same file serves rccl-tests runs."""
    _c, files = mesh
    for line in files[f"rccl/{MODEL}.env"].decode().splitlines():
        assert line.startswith("#") or re.fullmatch(r"[A-Z_][A-Z0-9_]*=[A-Za-z0-9_@%+=:,./-]+", line), line


def test_plain_ethernet_without_a_lossless_class_sets_no_traffic_class():
    plain = compile_text(re.sub(r"\n      lossless:\n(        .*\n)+", "\n", MESH, count=1))
    files = render(plain, only=["rccl"])[0]
    text = files[f"rccl/{MODEL}.env"].decode()
    assert "NCCL_IB_TC=" not in text and "NCCL_IB_GID_INDEX" not in text
    assert "NCCL_IB_HCA==" in text and "NCCL_SOCKET_IFNAME==" in text


def test_infiniband_hosts_take_the_layouts_rdma_names_and_no_socket_interface(tmp_path):
    """small-ib's hosts given MI300X accelerators (a catalogue override) and a host layout naming
    their RDMA devices rdma{j}: the HCA list follows the layout's names in rail order; InfiniBand
    sets no socket interface and no traffic class."""
    text = (ROOT / "blueprints" / "small-ib.yaml").read_text() + (
        "\ncatalogue:\n  devices:\n    hgx-h100:\n"
        "      accelerators: {count: 8, model: MI300X, links: 18, link_gbps: 200, hbm_gb: 192}\n"
        "  host_topology:\n    hgx-h100:\n      nic: {rdma_device: 'rdma{j}', port: 1}\n"
    )
    c = compile_text(text)
    assert not [f for f in c.findings if f.severity == "error"]
    files = render(c, only=["rccl", "nccl"])[0]
    assert sorted(files) == ["rccl/hgx-h100.env", "rccl/hosts.tsv"]
    hosts = cached_host_facts(c.fabric, c.blueprint)
    (fh,) = hosts.fabrics.values()
    data = c.fabric.layouts["hgx-h100"].ports_of("data")
    orders = {tuple(f"rdma{data.index(n.port)}" for n in sorted(fh.nics[h], key=lambda n: n.rail)) for h in hosts.hosts}
    (order,) = orders
    env = tmp_path / "x.env"
    env.write_bytes(files["rccl/hgx-h100.env"])
    assert _sourced(env) == {"NCCL_IB_HCA": "=" + ",".join(f"{n}:1" for n in order), "NCCL_CROSS_NIC": "0"}
    assert "(mlx5_0)" in env.read_text()  # the netdev beside its RDMA name, where they differ


def test_nvidia_designs_get_no_rccl_files():
    c = compile_text((ROOT / "blueprints" / "roce-rail-2tier.yaml").read_text())
    assert render(c, only=["rccl"])[0] == {}


# -- the xGMI copy stage -------------------------------------------------------------------------


def test_xgmi_plan_holds_each_pair_at_the_catalogues_link_rate(mesh):
    c, files = mesh
    rows = _tsv(files["acceptance/xgmi.tsv"])
    m = c.catalogue.devices[MODEL]
    frac = c.blueprint.acceptance.scaleup_copy_min_fraction
    pair = m.internal_mesh.links_per_pair * m.accelerators.link_gbps / 8  # 1 link x 512 Gb/s / 8 = 64 GB/s
    assert pair == 64
    assert len(rows) == sum(1 for d in c.fabric.devices if d.model == MODEL) == 8
    tool = model_figures().vendor_of("MI300X").copy_tool
    for r in rows:
        assert (r["tool"], int(r["accelerators"]), int(r["links_per_pair"])) == (tool, 8, 1)
        assert float(r["pair_gbytes"]) == pair and float(r["min_pair_gbytes"]) == pytest.approx(pair * frac)
    lowered = compile_text(MESH.replace("acceptance:\n", "acceptance:\n  scaleup_copy_min_fraction: 0.5\n", 1))
    if "acceptance:\n" not in MESH:
        lowered = compile_text(MESH + "acceptance:\n  scaleup_copy_min_fraction: 0.5\n")
    rows = _tsv(render(lowered, only=["acceptance"])[0]["acceptance/xgmi.tsv"])
    assert {float(r["min_pair_gbytes"]) for r in rows} == {pair * 0.5}
    checklist = files["acceptance/checklist.md"].decode()
    assert f"({8 * 8 * 7} pairs)" in checklist and "xgmi.sh RESULTS" in checklist


def test_hgx_designs_have_no_xgmi_stage():
    c = compile_text((ROOT / "blueprints" / "roce-rail-2tier.yaml").read_text())
    files = render(c, only=["acceptance"])[0]
    assert "acceptance/xgmi.tsv" not in files and "xgmi" not in files["acceptance/checklist.md"].decode()


def _plan(tmp_path: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        if path.startswith("acceptance/"):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_bytes(data)
    return tmp_path / "acceptance"


def test_xgmi_script_runs_transferbench_p2p_on_every_host(mesh, tmp_path):
    _c, files = mesh
    root = _plan(tmp_path, files)
    script = root / "xgmi.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    if shutil.which("shellcheck"):
        r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fake-ssh").write_text('#!/bin/bash\nhost=$1; shift\nexport HOST=$host\nexec bash -c "$*"\n')
    (bin_dir / "TransferBench").write_text('#!/bin/bash\necho "$HOST $NUM_CPU_DEVICES $P2P_MODE $*" >>"$CALLS"\ncat "$SAMPLE"\n')
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    calls = tmp_path / "calls"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SSH": str(bin_dir / "fake-ssh"), "CALLS": str(calls)}
    env["SAMPLE"] = str(DATA / "mi300x-transferbench-p2p.txt")
    r = subprocess.run(["bash", str(script), str(tmp_path / "res")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    hosts = [row["host"] for row in _tsv(files["acceptance/xgmi.tsv"])]
    assert sorted(calls.read_text().splitlines()) == sorted(f"{h} 0 1 p2p" for h in hosts)
    report = check(root, tmp_path / "res")
    pairs = [o for o in report.outcomes if o.kind == "xgmi"]
    assert len(pairs) == 8 * 8 * 7 and all(o.status == "pass" for o in pairs)
    assert not report.failed


def _results(tmp_path: Path, files: dict[str, bytes], texts: dict[str, str]) -> tuple[Path, Path]:
    root = _plan(tmp_path, {p: d for p, d in files.items() if p in ("acceptance/xgmi.tsv",)})
    res = tmp_path / "res"
    (res / "xgmi").mkdir(parents=True)
    for check_id, text in texts.items():
        (res / "xgmi" / f"{check_id}.txt").write_text(text)
    return root, res


def test_a_slow_pair_and_a_pair_not_run_fail_by_name(mesh, tmp_path):
    _c, files = mesh
    rows = _tsv(files["acceptance/xgmi.tsv"])
    first, second = rows[0]["check"], rows[1]["check"]
    root, res = _results(tmp_path, files, {first: DEGRADED, second: HEALTHY})
    report = check(root, res)
    failed = sorted(report.failed, key=lambda o: o.id)
    assert [o.id for o in failed] == [f"{first}.gpu3-gpu6", f"{first}.gpu6-gpu3"]
    slow, absent = failed
    assert slow.measured == 21.4 and slow.status == "fail" and "33% of 64 GB/s" in slow.detail
    assert f"{rows[0]['host']} GPU 3 -> GPU 6" in slow.what
    assert absent.measured is None and "N/A" in absent.detail
    assert sum(o.status == "pass" for o in report.outcomes) == 2 * 56 - 2
    assert report.count("missing") == len(rows) - 2  # the other hosts' files, one outcome each


def _cut(text: str, keep_rows: int) -> str:
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "SRC+EXE" in line)
    return "\n".join(lines[: at + 1 + keep_rows]) + "\n"


HEADER_LINE = next(i for i, line in enumerate(HEALTHY.splitlines(), 1) if "SRC+EXE" in line)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_cut(HEALTHY, 5), "rows for GPU 5, 6, 7 missing"),
        (HEALTHY.replace("GPU 02  ->     50.85", "GPU 02  ->     5O.85"), f":{HEADER_LINE + 3}: GPU 2 -> GPU 0: '5O.85'"),
        (HEALTHY.replace("   51.96   1906.00", "   1906.00"), f":{HEADER_LINE + 3}: GPU 2 has 7 cells, the header 8 GPUs"),
        (HEALTHY.replace("SRC+EXE\\DST", "SRC+EXE\\DST    CPU 00"), f":{HEADER_LINE}: the header names 9 devices"),
        (HEALTHY.replace("Unidirectional copy", "Bidirectional copy"), "no 'Unidirectional copy peak bandwidth GB/s' table"),
        ("", "no 'Unidirectional copy peak bandwidth GB/s' table"),
        (HEALTHY.replace("GPU 03  ->", "GPU 02  ->"), f":{HEADER_LINE + 4}: GPU 2 listed twice"),
    ],
)
def test_malformed_transferbench_output_is_a_located_error(mesh, tmp_path, text, message):
    _c, files = mesh
    check_id = _tsv(files["acceptance/xgmi.tsv"])[0]["check"]
    root, res = _results(tmp_path, files, {check_id: text})
    (bad,) = [o for o in check(root, res).outcomes if o.status == "unreadable"]
    assert bad.id == check_id and f"xgmi/{check_id}.txt" in bad.detail and message in bad.detail, bad.detail
    with pytest.raises(XgmiError, match=re.escape(message)):
        read_matrix(text, "f.txt")


def test_a_figure_above_the_links_rate_is_unreadable_not_a_pass(mesh, tmp_path):
    _c, files = mesh
    check_id = _tsv(files["acceptance/xgmi.tsv"])[0]["check"]
    fast = HEALTHY.replace("GPU 00  ->   1890.00     50.11", "GPU 00  ->   1890.00    250.11")
    root, res = _results(tmp_path, files, {check_id: fast})
    (bad,) = [o for o in check(root, res).outcomes if o.status == "unreadable"]
    assert bad.id == f"{check_id}.gpu0-gpu1" and "250.11 GB/s is above the links' 64 GB/s" in bad.detail


def test_a_four_gpu_table_for_an_eight_gpu_host_is_unreadable(mesh, tmp_path):
    _c, files = mesh
    lines = HEALTHY.splitlines()
    at = next(i for i, line in enumerate(lines) if "SRC+EXE" in line)
    four = [lines[at][: 12 + 4 * 10]] + [row[: 12 + 4 * 10] for row in lines[at + 1 : at + 5]]
    text = "\n".join([*lines[:at], *four]) + "\n"
    check_id = _tsv(files["acceptance/xgmi.tsv"])[0]["check"]
    root, res = _results(tmp_path, files, {check_id: text})
    (bad,) = [o for o in check(root, res).outcomes if o.status == "unreadable"]
    assert "4 GPUs in the table, the host has 8" in bad.detail


@pytest.mark.parametrize(("column", "value"), [("accelerators", "eight"), ("links_per_pair", "0"), ("accelerators", "")])
def test_a_plan_line_snc_did_not_write_is_a_located_error(mesh, tmp_path, column, value):
    from supernodeiac.verify.check_results import ResultsError

    _c, files = mesh
    root, res = _results(tmp_path, files, {})
    plan = root / "xgmi.tsv"
    lines = plan.read_text().splitlines()
    header = lines[0].split("\t")
    cells = lines[2].split("\t")
    cells[header.index(column)] = value
    lines[2] = "\t".join(cells)
    plan.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultsError, match=rf"xgmi.tsv:3: {column} must be a whole number"):
        check(root, res)


def test_check_results_command_exits_1_naming_the_slow_pair(mesh, tmp_path):
    from click.testing import CliRunner

    from supernodeiac.cli import main

    _c, files = mesh
    rows = _tsv(files["acceptance/xgmi.tsv"])
    root, res = _results(tmp_path, files, {r["check"]: HEALTHY for r in rows} | {rows[0]["check"]: DEGRADED})
    result = CliRunner().invoke(main, ["check-results", str(root), str(res), "--require-all"])
    assert result.exit_code == 1, result.output
    assert f"FAIL xgmi {rows[0]['check']}.gpu3-gpu6: xgmi/{rows[0]['check']}.txt: 21.4 GB/s" in result.output
    assert f"{8 * 56 - 2} passed, 2 failed" in result.output
    for r in rows:
        (res / "xgmi" / f"{r['check']}.txt").write_text(HEALTHY)
    result = CliRunner().invoke(main, ["check-results", str(root), str(res), "--require-all", "--format", "json"])
    assert result.exit_code == 0, result.output
