"""Address pools across networks: the management network (with its border's links), every Ethernet fabric's loopback,
point-to-point and host pools and every scale-up domain's in-band pool are each a separate
routing domain's addresses, so no two may share an address. (Pools of one fabric are checked
against each other when the blueprint is parsed; this check compares the rest: management
against every fabric and domain, fabric against fabric, domain against fabric and domain.)"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

from ..findings import Finding, error
from ..model.clos import FatTree
from .base import CHECKS, CheckContext

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class _Pool:
    owner: str  # "management", or "fabric NAME": pools of one owner are the parser's to compare
    label: str  # how the message names it
    network: IpNetwork
    path: tuple[str | int, ...]


def _pools(ctx: CheckContext) -> list[_Pool]:
    """Every address pool in the blueprint: the fabrics' in blueprint order, then management's."""
    pools: list[_Pool] = []
    for i, fabric in enumerate(ctx.blueprint.scaleout):
        if not isinstance(fabric, FatTree) or fabric.ethernet is None:
            continue
        a = fabric.ethernet.addressing
        named = [
            ("loopbacks", "loopback pool", a.loopbacks),
            ("p2p", "point-to-point pool", a.p2p),
            ("hosts", "host pool", a.hosts),
        ]
        for key, label, value in named:
            if value is not None and value != "unnumbered":
                path = ("scaleout", i, "ethernet", "addressing", key)
                pools.append(_Pool(f"fabric {fabric.name}", f"fabric {fabric.name}'s {label}", ipaddress.ip_network(value), path))
    # Scale-up domains' in-band (front-end) pools: the compute trays' addresses (IMEX's peers).
    for i, domain in enumerate(ctx.blueprint.scaleup):
        inband = getattr(domain, "inband", None)
        if inband is not None:
            label = f"scale-up domain {domain.name}'s in-band pool"
            at_inband = ("scaleup", i, "inband", "network")
            pools.append(_Pool(f"domain {domain.name}", label, ipaddress.ip_network(inband.network), at_inband))
    # Last: an overlap with a fabric's pool is reported at the management network (the later pool).
    m = ctx.blueprint.management
    if m is not None and m.addressing is not None:
        at = ("management", "addressing", "network")
        pools.append(_Pool("management", "the management network", ipaddress.ip_network(m.addressing.network), at))
    if m is not None and m.border is not None:
        # The border's links: compared with the fabrics' pools here (with the management network
        # by the builder, which reports that overlap at the border's own line).
        b = m.border
        if b.network is not None:
            where = ("management", "border", "network")
            pools.append(_Pool("management", "the border network", ipaddress.ip_network(b.network), where))
        for k, link in enumerate(b.links or []):
            net = ipaddress.ip_interface(link.address).network
            given = ("management", "border", "links", k, "address")
            pools.append(_Pool("management", f"border link {link.switch}-{link.router}", net, given))
    return pools


@CHECKS.register("address-overlap")
def check_address_overlap(ctx: CheckContext) -> Iterator[Finding]:
    pools = _pools(ctx)
    # Sorted by first address, a pool can overlap only those after it that start inside it
    # (CIDR blocks nest or are disjoint): a sweep, not every pair.
    order = sorted(range(len(pools)), key=lambda k: (pools[k].network.version, int(pools[k].network.network_address)))
    pairs: list[tuple[int, int]] = []
    for n, k in enumerate(order):
        net = pools[k].network
        for j in order[n + 1 :]:
            other = pools[j].network
            if other.version != net.version or int(other.network_address) > int(net.broadcast_address):
                break
            if pools[j].owner != pools[k].owner:
                pairs.append((min(k, j), max(k, j)))
    for first, later in sorted(pairs):
        a, b = pools[first], pools[later]
        yield error(
            "address-overlap",
            f"{b.label} {b.network} overlaps {a.label} {a.network}: switch configs and host addresses would hold "
            "the same address twice",
            b.path,
            f"give {b.label.removeprefix('the ')} a range outside {a.network}",
        )
