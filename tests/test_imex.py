"""NVIDIA IMEX node lists: one imex/<domain>/nodes_config.cfg per NVLink domain instance of the
shipped NVL72 pod, each the in-band address of every compute tray of that rack and nothing else,
one per line (the IMEX guide's nodes_config.cfg), in the tray's rack's own block of the pool;
the trays' in-band ports are their BlueField-3s; the NCCL env's MNNVL note points to the files;
a pool too small is a located error."""

from __future__ import annotations

import ipaddress
import re

from conftest import BLUEPRINTS, compile_text, shipped, shipped_outputs

from supernodeiac.facts.imex import imex_domains

NVL = "nvl72-pod"


def test_one_nodes_config_per_domain_with_every_tray():
    c = shipped(NVL)
    files = shipped_outputs(NVL, "imex")
    spec = next(s for s in c.blueprint.scaleup if s.name == "nvl")
    assert spec.inband is not None
    pool = ipaddress.ip_network(spec.inband.network)
    assert sorted(files) == [f"imex/nvl-{s:02d}/nodes_config.cfg" for s in range(1, spec.count + 1)]
    seen: set[ipaddress.IPv4Address] = set()
    for s in range(spec.count):
        text = files[f"imex/nvl-{s + 1:02d}/nodes_config.cfg"].decode()
        assert text.endswith("\n") and re.fullmatch(r"([0-9.]+\n)+", text), text  # IPs only, one per line
        ips = [ipaddress.ip_address(line) for line in text.splitlines()]
        trays = [d for d in c.fabric.devices if d.role == "compute-board" and d.coord("supernode") == s]
        assert len(ips) == len(trays) == spec.compute_trays == 18
        # The rack's block: a /27 (18 trays + network, gateway, broadcast -> 32) at 32 x s; tray b at b + 1.
        block = ipaddress.ip_network(f"{pool.network_address + 32 * s}/27")
        assert all(ip in block and ip in pool for ip in ips)
        assert ips == [block.network_address + b + 1 for b in range(18)]
        # Every tray is in its own rack's file: the trays of a domain share the rack.
        assert len({d.rack for d in trays}) == 1
        assert not seen & set(ips)
        seen |= set(ips)


def test_trays_carry_the_address_on_their_bluefield_ports():
    c = shipped(NVL)
    domains = imex_domains(c.blueprint, c.fabric)
    assert len(domains) == 8
    ports = {port for d in domains for _tray, port, _address in d.trays}
    assert ports == {"mlx5_2"}  # the first BlueField-3's first port (catalogue role inband)
    tray = c.fabric.models["gb200-tray"]
    inband = [g for g in tray.ports if g.role == "inband"]
    assert sum(g.count for g in inband) == 4  # two dual-port BlueField-3 DPUs


def test_nccl_env_points_to_the_imex_files():
    env = shipped_outputs(NVL, "nccl")["nccl/gb200-tray.env"].decode()
    assert "imex/<domain>/nodes_config.cfg" in env and "/etc/nvidia-imex/nodes_config.cfg" in env
    assert "NCCL_MNNVL_ENABLE=1" in env


TEXT = (BLUEPRINTS / f"{NVL}.yaml").read_text()


def test_a_pool_too_small_is_a_located_error():
    text = TEXT.replace("inband: {network: 10.150.0.0/16}", "inband: {network: 10.150.0.0/25}")
    assert text != TEXT
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "imex-addressing"]
    assert c.exit_code != 0 and len(found) == 1
    assert "holds 4 domain instances" in found[0].message and "/24" in found[0].hint
    assert found[0].location.line == text.splitlines().index("    inband: {network: 10.150.0.0/25}") + 1
    small = compile_text(TEXT.replace("inband: {network: 10.150.0.0/16}", "inband: {network: 10.150.0.0/16, per_domain: 20}"))
    (f,) = [f for f in small.findings if f.rule == "imex-addressing"]
    assert "per_domain 20" in f.message and "at least 21" in f.hint
