"""Ethernet (RoCEv2) Clos plans measured on the Fabric: address pools and ASN ranges large enough,
no address or ASN used twice (across fabrics too), every lossless priority reachable by a DSCP.

The builder (builders/addressing.py) leaves a pool that is too small unassigned and records what was
needed in Fabric.facts; these checks turn that into findings, and re-measure uniqueness on the
devices and links themselves rather than trusting the layout.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..fabric import Device
from ..fabric.fabric_facts import FatTreeFacts, is_ethernet_fat_tree
from ..facts.host_addresses import HostAddresses
from ..facts.link_addresses import LinkAddresses, network
from ..findings import Finding, error, warning
from ..model.clos import PRIVATE_ASN_RANGES
from .base import CHECKS, CheckContext

_PRIVATE_32 = max(PRIVATE_ASN_RANGES)  # RFC 6996's 32-bit private range, the one to point at when ASNs run out


def _ethernet(ctx: CheckContext) -> Iterator[tuple[str, FatTreeFacts]]:
    for name, facts in sorted(ctx.fabric.facts.items()):
        if is_ethernet_fat_tree(facts):
            yield name, facts


def _prefix_for(count: int, version: int, per: int, spare: int) -> int:
    """The longest prefix whose pool holds ``count`` allocations of ``per`` addresses plus ``spare``."""
    bits = 32 if version == 4 else 128
    need = count * per + spare
    return bits - max(need - 1, 0).bit_length()


@dataclass(frozen=True)
class _Pool:
    """One address pool of a fabric and what it must hold, now and once grown."""

    label: str  # "loopback", "point-to-point"
    key: str  # its field under addressing
    text: str  # the pool as written
    version: int
    per: int  # addresses per allocation
    spare: int  # addresses a pool of that prefix cannot hand out
    unit: str  # what one allocation is, as counted in messages
    capacity: int
    need: int
    planned: int
    need_text: str  # what the fabric needs, for the error
    alternative: str = ""  # another way out, for the error's hint


def _pool_findings(name: str, path: tuple, pool: _Pool) -> Iterator[Finding]:
    holds = f"{name}: {pool.label} pool {pool.text} holds {pool.capacity} {pool.unit}"
    if pool.need > pool.capacity:
        hint = f"a /{_prefix_for(pool.need, pool.version, pool.per, pool.spare)} or larger{pool.alternative}"
        yield error("address-pool", f"{holds}; {pool.need_text}", path + (pool.key,), hint)
    elif pool.planned > pool.capacity:
        hint = f"a /{_prefix_for(pool.planned, pool.version, pool.per, pool.spare)} or larger, before the fabric grows"
        yield warning("address-pool", f"{holds}; growing to grow_to_sus needs {pool.planned}", path + (pool.key,), hint)


@CHECKS.register("address-pool")
def check_pools(ctx: CheckContext) -> Iterator[Finding]:
    for name, facts in _ethernet(ctx):
        plan = facts["ethernet"]["addressing"]
        path = plan["path"]
        need = plan["loopbacks_needed"]
        sizes = f"{facts['leaves']} leaves, {facts['spines']} spines, {facts['cores']} cores"
        pools = [
            _Pool(
                label="loopback",
                key="loopbacks",
                text=plan["loopbacks"],
                version=plan["family"],
                per=1,
                spare=2,
                unit="switch addresses",
                capacity=plan["loopbacks_capacity"],
                need=need,
                planned=plan["loopbacks_needed_planned"],
                need_text=f"the fabric needs {need} ({sizes})",
            )
        ]
        if plan["p2p"] != "unnumbered":
            need = plan["p2p_needed"]
            pools.append(
                _Pool(
                    label="point-to-point",
                    key="p2p",
                    text=plan["p2p"],
                    version=network(plan["p2p"]).version,
                    per=2,
                    spare=0,
                    unit=f"/{plan['p2p_prefixlen']} links",
                    capacity=plan["p2p_capacity"],
                    need=need,
                    planned=plan["p2p_needed_planned"],
                    need_text=f"the fabric has {need} switch-to-switch links ({2 * need} addresses)",
                    alternative=", or p2p: unnumbered",
                )
            )
        hosts = plan["hosts"]
        if hosts is not None:
            need = plan["hosts_needed"]
            pools.append(
                _Pool(
                    label="host",
                    key="hosts",
                    text=hosts,
                    version=network(hosts).version,
                    per=2,
                    spare=0,
                    unit=f"/{plan['hosts_prefixlen']} host links",
                    capacity=plan["hosts_capacity"],
                    need=need,
                    planned=plan["hosts_needed_planned"],
                    need_text=(
                        f"the fabric needs {need} ({_leaf_ports_text(facts, plan['leaf_down'])}, "
                        f"{2 * need} addresses; every down port keeps its block, cabled or not)"
                    ),
                )
            )
        for pool in pools:
            yield from _pool_findings(name, path, pool)


def _leaf_ports_text(facts: FatTreeFacts, leaf_down: int) -> str:
    """'16 leaves x 64 down ports', or per leaf set where the fabric has leaves of several models."""
    sets = facts.get("leaf_sets")
    if not sets:
        return f"{facts['leaves']} leaves x {leaf_down} down ports"
    return " + ".join(f"{s['leaves']} {s['switch']} leaves x {s['leaf_down']} down ports" for s in sets)


@CHECKS.register("host-addressing")
def check_host_pool(ctx: CheckContext) -> Iterator[Finding]:
    """An Ethernet fat tree without a host pool: its leaves' host ports get no address, so no NIC
    reaches another over the routed fabric."""
    for name, facts in _ethernet(ctx):
        plan = facts["ethernet"]["addressing"]
        if plan.get("hosts") is not None:
            continue
        sets = facts.get("leaf_sets")
        if sets:  # leaves of several models: each set's own down ports
            need = sum(s["leaves"] * s["leaf_down"] for s in sets)
            planned = sum(s["planned_sus"] * s["leaves_per_su"] * s["leaf_down"] for s in sets)
        else:
            need = facts["leaves"] * facts["leaf_down"]
            planned = facts["planned_sus"] * facts["leaves_per_su"] * facts["leaf_down"]
        family = plan["family"]
        blocks = max(need, planned)
        start = "10.128.0.0" if family == 4 else "fd00:128::"
        example = ipaddress.ip_network(f"{start}/{_prefix_for(blocks, family, 2, 0)}", strict=False)
        yield warning(
            "host-addressing",
            f"{name}: no host pool: the {need:,} leaf down ports facing hosts get no address (no NIC has a "
            "point-to-point address or a gateway on the routed fabric)",
            plan["path"],
            f"add 'hosts: {example}' (a pool apart from the others) under addressing: one "
            f"/{31 if family == 4 else 127} per leaf down port, {blocks:,} at grow_to_sus",
        )


@CHECKS.register("asn-range")
def check_asn_range(ctx: CheckContext) -> Iterator[Finding]:
    for name, facts in _ethernet(ctx):
        bgp = facts["ethernet"]["bgp"]
        tiers = (
            "one per leaf, one per pod's spines, one for the cores" if facts["tiers"] == 3 else "one per leaf, one for the spines"
        )
        if bgp["needed"] > bgp["capacity"]:
            yield error(
                "asn-range",
                f"{name}: ASN range {bgp['asn_first']}-{bgp['asn_last']} holds {bgp['capacity']} ASNs; "
                f"the fabric needs {bgp['needed']} ({tiers})",
                bgp["path"],
                f"asn_last: {bgp['asn_first'] + bgp['needed'] - 1} or higher "
                f"(the 32-bit private range {_PRIVATE_32[0]}-{_PRIVATE_32[1]} holds {_PRIVATE_32[1] - _PRIVATE_32[0] + 1:,})",
            )
        elif bgp["needed_planned"] > bgp["capacity"]:
            yield warning(
                "asn-range",
                f"{name}: ASN range {bgp['asn_first']}-{bgp['asn_last']} holds {bgp['capacity']}; "
                f"growing to grow_to_sus needs {bgp['needed_planned']}",
                bgp["path"],
                f"asn_last: {bgp['asn_first'] + bgp['needed_planned'] - 1} or higher",
            )


def _asn_scope(d: Device) -> tuple:
    """Devices that may share an ASN by design (RFC 7938): a pod's spines, a tier of cores."""
    fabric = d.coord("fabric")
    if d.role == "leaf":
        return ("leaf", d.index)
    if d.role == "spine":
        return (fabric, "spine", d.coord("pod", 0))
    return (fabric, d.role)


@CHECKS.register("address-duplicate")
def check_duplicates(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    fabrics = dict(_ethernet(ctx))
    if not fabrics:
        return
    loopbacks: dict[str, Device] = {}
    asns: dict[int, tuple[tuple, Device]] = {}
    for d in f.devices:
        attrs = d.attrs
        if attrs is None:
            continue
        lo = attrs.get("loopback")
        if lo is not None:
            owner = loopbacks.setdefault(lo, d)
            if owner is not d:
                yield error(
                    "address-duplicate",
                    f"loopback {lo} is on {owner.name} and {d.name}",
                    d.origin,
                    "give each fabric its own loopback pool",
                )
        asn = attrs.get("asn")
        if asn is not None:
            scope = _asn_scope(d)
            holder = asns.setdefault(asn, (scope, d))
            if holder[0] != scope:
                yield error(
                    "asn-duplicate",
                    f"ASN {asn} is on {holder[1].name} and {d.name}, which RFC 7938 keeps apart",
                    d.origin,
                    "give each fabric its own ASN range",
                )
    # Pools of different fabrics must not overlap (within a fabric the model keeps them apart).
    pools: list[tuple[str, str, ipaddress.IPv4Network | ipaddress.IPv6Network, tuple]] = []
    for name, facts in fabrics.items():
        plan = facts["ethernet"]["addressing"]
        pools.append((name, "loopbacks", network(plan["loopbacks"]), plan["path"] + ("loopbacks",)))
        if plan["p2p"] != "unnumbered":
            pools.append((name, "p2p", network(plan["p2p"]), plan["path"] + ("p2p",)))
        if plan.get("hosts") is not None:
            pools.append((name, "hosts", network(plan["hosts"]), plan["path"] + ("hosts",)))
    for i, (name_a, kind_a, net_a, _) in enumerate(pools):
        for name_b, kind_b, net_b, path_b in pools[i + 1 :]:  # a handful of pools: pairs are cheap
            if name_a != name_b and net_a.version == net_b.version and net_a.overlaps(net_b):
                yield error(
                    "address-duplicate",
                    f"{name_b} {kind_b} pool {net_b} overlaps {name_a} {kind_a} pool {net_a}",
                    path_b,
                    "carve each fabric's pools from disjoint ranges",
                )
    # Point-to-point blocks measured on the links: every switch-to-switch link its own /31.
    for name in fabrics:
        addresses = LinkAddresses(f, name)
        if not addresses.numbered:
            continue
        t = f.links
        seen: dict[int, int] = {}  # block -> the first link (position) that has it
        for i in t.indices_of(name):
            block = addresses.block(t.a[i], t.a_port[i], t.b[i], t.b_port[i])
            if block is None:
                continue
            first = seen.setdefault(block, i)
            if first != i:
                other, link = t.id_of(first), t.link(i)
                yield error("address-duplicate", f"{name}: links {other} and {link.id} share a point-to-point block", link.origin)
                break
    # Host-link blocks, measured on the links at once (10^5 of them at scale).
    for name in fabrics:
        hosts = HostAddresses(f, name)
        if not hosts.numbered:
            continue
        positions = f.links.indices_of(name)
        blocks, _ = hosts.blocks(positions)
        used = blocks[blocks >= 0]
        values, counts = np.unique(used, return_counts=True)
        if (counts > 1).any():
            twice = int(values[counts > 1][0])
            at = [positions[k] for k in np.flatnonzero(blocks == twice)[:2].tolist()]
            link = f.links.link(at[1])
            yield error(
                "address-duplicate", f"{name}: host links {f.links.id_of(at[0])} and {link.id} share a host block", link.origin
            )


@CHECKS.register("lossless")
def check_lossless(ctx: CheckContext) -> Iterator[Finding]:
    for name, facts in _ethernet(ctx):
        lossless = facts["ethernet"]["lossless"]
        if lossless is None:  # plain Ethernet: no lossless class declared, nothing to check
            continue
        used = set(lossless["dscp_to_tc"].values()) | {lossless["default_tc"]}
        for prio in lossless["pfc_priorities"]:
            if prio not in used:
                yield warning(
                    "lossless",
                    f"{name}: PFC is enabled on priority {prio} but no DSCP maps to traffic class {prio}",
                    lossless["path"] + ("pfc_priorities",),
                    "map a DSCP to it in dscp_to_tc, or drop it from pfc_priorities (each lossless class costs headroom buffer)",
                )
