"""The published-design blueprints of tests/data (issue 21: shared out-of-band switches, a dual-plane
RoCE pod, a GPU + NPU fabric with two leaf models, a switchless HCCS mesh, a Nebula Matrix, a CXL
pool with a shared region) through the same real consumers as the shipped blueprints: Kea's own
config test on the DHCP config, shellcheck on every acceptance script, netplan's parser on sampled
host files and the SONiC YANG models on sampled switch configs. Each consumer skips where it is
not installed; a design without that output has nothing for it to read."""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
from test_host_network import _documents, _generate

from supernodeiac.pipeline import compile_file, render

DATA = Path(__file__).parent / "data"
DESIGNS = sorted(p.stem for p in DATA.glob("*.yaml"))
SAMPLE = 4  # hosts and switches per design and consumer


@cache
def _files(name: str) -> dict[str, bytes]:
    c = compile_file(str(DATA / f"{name}.yaml"))  # from its file: some include a shipped blueprint
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["dhcp", "acceptance", "hosts", "sonic"])
    return files


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        pytest.skip(f"{name} not installed")
    return found


def _sample(items: list[str]) -> list[str]:
    step = max(1, len(items) // SAMPLE)
    return sorted(set(items[::step][:SAMPLE] + items[-1:]))


def test_every_design_is_here():
    assert {"dgx-h100-4su-shared-oob", "roce-dual-plane", "gpu-npu-roce", "ascend-hccs-mesh", "nebula-matrix-2048"} <= set(
        DESIGNS
    )


@pytest.mark.parametrize("name", DESIGNS)
def test_kea_accepts_the_dhcp_config(name, tmp_path):
    files = _files(name)
    configs = [p for p in files if p.startswith("dhcp/kea-dhcp") and p.endswith(".json")]
    if not configs:
        pytest.skip(f"{name}: no management addressing, no DHCP config")
    for path in configs:
        kea = _tool("kea-dhcp6" if "dhcp6" in path else "kea-dhcp4")
        target = tmp_path / Path(path).name
        target.write_bytes(files[path])
        run = subprocess.run([kea, "-t", str(target)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, (path, run.stdout + run.stderr)


@pytest.mark.parametrize("name", DESIGNS)
def test_shellcheck_passes_every_acceptance_script(name, tmp_path):
    shellcheck = _tool("shellcheck")
    files = _files(name)
    scripts = sorted(p for p in files if p.endswith(".sh"))
    assert scripts, f"{name}: no acceptance script"
    for path in scripts:
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[path])
        subprocess.run(["bash", "-n", str(target)], check=True)
        run = subprocess.run([shellcheck, str(target)], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (path, run.stdout)


@pytest.mark.parametrize("name", DESIGNS)
def test_netplan_accepts_sampled_hosts(name, tmp_path):
    files = _files(name)
    if "hosts/netplan.yaml" not in files:
        pytest.skip(f"{name}: no Ethernet host pool, no netplan files")
    netplan = _tool("netplan")
    docs = _documents(files)
    for k, node in enumerate(_sample(sorted(docs))):
        run = _generate(netplan, tmp_path / str(k), docs[node])
        assert run.returncode == 0, (node, run.stdout + run.stderr)


@pytest.mark.parametrize("name", DESIGNS)
def test_sonic_models_accept_sampled_switches(name):
    files = _files(name)
    configs = sorted(p for p in files if p.startswith("sonic/") and p.endswith(".json") and p != "sonic/secrets.json")
    if not configs:
        pytest.skip(f"{name}: no SONiC switch")
    libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    # Every switch model of the design at least once, then a sample of the rest.
    by_model: dict[str, str] = {}
    for path in configs:
        by_model.setdefault(json.loads(files[path])["DEVICE_METADATA"]["localhost"].get("hwsku", path), path)
    for path in sorted(set(by_model.values()) | set(_sample(configs))):
        try:
            validate(json.loads(files[path]))
        except libyang.LibyangError as exc:
            pytest.fail(f"{path}: {exc}")
