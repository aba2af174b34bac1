"""NVIDIA IMEX domains: per NVLink domain instance of a switched (NVL72) scale-up domain with
``inband`` addressing, its compute trays' in-band (front-end) addresses in tray order.

The IMEX service of every tray reads ``nodes_config.cfg`` (``IMEX_NODE_CONFIG_FILE``): the IP
addresses of all compute nodes of the NVLink domain, one per line, the same file on every node
(NVIDIA IMEX guide, Deployment Models, docs.nvidia.com/multi-node-nvlink-systems/imex-guide).
Addresses are keyed by stable coordinates (domain instance s, tray b: block s of ``per_domain``,
address b + 1), so a domain added to the pod, or a tray to a domain within its block, moves no
address; the tray's in-band ports (its BlueField-3s, catalogue role ``inband``) carry it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ..fabric import Fabric
from ..model.blueprint import Blueprint
from ..model.scaleup import InbandAddressing, SwitchedDomain


@dataclass(frozen=True, slots=True)
class ImexDomain:
    name: str  # <scale-up entry>-<instance, 2 digits>: the folder of its nodes_config.cfg
    domain: str  # the scale-up entry
    path: tuple  # its blueprint path (for findings)
    trays: list[tuple[str, str, str]]  # (tray device, its first in-band port, address with prefix), tray order


def per_domain(spec: SwitchedDomain, addressing: InbandAddressing) -> int:
    """Addresses per domain instance: the declared block, or the trays + network, gateway and
    broadcast rounded up to a power of two."""
    if addressing.per_domain is not None:
        return addressing.per_domain
    return 1 << (spec.compute_trays + 2).bit_length()


def imex_domains(blueprint: Blueprint, fabric: Fabric) -> list[ImexDomain]:
    """Every NVLink domain instance with in-band addressing, in blueprint and instance order; trays
    past the network's end, or past their block, are left out (the ``imex-addressing`` check's error)."""
    out: list[ImexDomain] = []
    specs = {
        spec.name: (spec, ("scaleup", i))
        for i, spec in enumerate(blueprint.scaleup)
        if isinstance(spec, SwitchedDomain) and spec.inband is not None
    }
    if not specs:
        return out
    trays: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for d in fabric.devices:
        if d.role == "compute-board" and d.group in specs:
            trays.setdefault((d.group, d.coord("supernode", 0)), []).append((d.coord("board", 0), d.index))
    for name, (spec, path) in specs.items():
        addressing = spec.inband
        assert addressing is not None
        net = ipaddress.ip_network(addressing.network)
        block = per_domain(spec, addressing)
        prefix = net.max_prefixlen - max(block - 1, 0).bit_length()
        base = int(net.network_address)
        for s in range(spec.count):
            rows = []
            for b, index in sorted(trays.get((name, s), [])):
                k = s * block + b + 1
                if b + 1 >= block - 1 or k >= net.num_addresses - 1:
                    continue
                dev = fabric.devices[index]
                inband = fabric.layouts[dev.model].ports_of("inband")
                port = fabric.layouts[dev.model].name(inband[0]) if inband else ""
                rows.append((dev.name, port, f"{ipaddress.ip_address(base + k)}/{prefix}"))
            out.append(ImexDomain(f"{name}-{s + 1:02d}", name, path, rows))
    return out
