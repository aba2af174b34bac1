"""The IP and eBGP plan of an Ethernet (RoCEv2) Clos, keyed by stable coordinates.

Everything is a pure function of a switch's coordinates and the declared pools, so growing the
fabric (more SUs, more pods, within the same grow_to_sus) keeps every address and ASN:

* loopbacks (/32 or /128): leaf ``l`` (global leaf index, su x leaves per SU + leaf) takes pool
  index ``1 + l``, counting up; core ``c`` takes ``size - 2 - c`` and spine ``s`` (pod x spines
  per pod + plane) ``size - 2 - cores - s``, counting down. The pool's first and last address
  stay unused (a network/broadcast look-alike on IPv4).
* ASNs, in the style of RFC 7938 (section 5.2.1): leaf ``l`` gets ``asn_first + l``; the core tier
  shares ``asn_last``; the spines of 3-tier pod ``p`` share ``asn_last - 1 - p`` (all spines of
  a 2-tier fabric, its top tier, share ``asn_last``). Sharing an ASN within a tier makes BGP's
  AS-path loop check drop the valley paths that RFC 7938 rules out.
* point-to-point (/31 or /127), one block of two addresses per switch-to-switch link: leaf
  ``l``'s up-port ``m`` takes block ``l x leaf_up + m`` from the bottom; 3-tier spine ``s``'s
  up-port ``m`` takes block ``blocks - (s + 1) x spine_up + m`` from the top. The upper end of a
  link takes the even address, the lower end the odd one (leaf 10.0.0.1/31 -> spine 10.0.0.0).
* host links (``hosts`` pool, optional), one /31 (/127) per leaf down port, cabled or not: leaf
  ``l``'s down port at position ``q`` (its place among the leaf's down ports, the capacity the SU
  layout numbers, not the fill) takes block ``l x leaf_down + q`` from the bottom. The same rule
  as the switch links: the upper end (the leaf) takes the even address, the NIC the odd one, and
  the leaf's address is the NIC's gateway. A leaf's blocks are contiguous, so its host subnets
  summarise to one prefix (or a few when leaf_down is not a power of two), which the leaf
  advertises (sonic_config: STATIC_ROUTE).

Only per-switch data is stored (Device.attrs: asn, loopback, p2p_block, host_block): a link's addresses
derive from its lower end's p2p_block and up-port position (``link_addresses.LinkAddresses``),
a host link's from its leaf's host_block and down-port position (``host_addresses.HostAddresses``),
so a large fabric pays nothing per link.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..fabric import Device, Fabric
from ..fabric.fabric_facts import EthernetFacts, LosslessFacts
from ..facts.link_addresses import network
from ..model.clos import EthernetSettings, Lossless

if TYPE_CHECKING:
    from .clos_plan import ClosPlan

SCHEME = "RFC 7938: one ASN per leaf, one per pod shared by its spines (2 tiers: one for all spines), one for the core tier"


@dataclass(frozen=True, slots=True)
class LeafBlocks:
    """A fabric of several leaf sets (model.clos.LeafSet): per leaf, in the order of the leaves
    list, its (global leaf index, first point-to-point block, first host block), its down and up
    port counts, and the planned totals. Each set takes a run of the planned coordinates after the
    sets before it, so a set growing within its grow_to_sus moves no other set's address. One leaf
    set needs none: leaf l's coordinates are l, l x leaf_up and l x leaf_down."""

    rows: list[tuple[int, int, int]]
    down: list[int]
    up: list[int]
    planned_leaves: int
    planned_p2p: int
    planned_hosts: int
    # 3 tiers: per spine, in the order of the spines list, its (global spine index, point-to-point
    # blocks from the top of the pool to its first block): each set's pods take a run of the
    # planned spines and of their uplink blocks after the sets before it. Empty: spine s's are
    # s and (s + 1) x spine_up.
    spines: list[tuple[int, int]] = field(default_factory=list)
    planned_pods: int = 0
    planned_spine_p2p: int = 0


def _set(device: Device, **values: Any) -> None:
    attrs = device.attrs if device.attrs is not None else {}
    attrs.update(values)
    device.attrs = attrs


def assign_ethernet(
    fabric: Fabric,
    eth: EthernetSettings,
    plan: ClosPlan,
    leaves: list[int],
    spines: list[int],
    cores: list[int],
    path: tuple,
    leaf_blocks: LeafBlocks | None = None,
) -> EthernetFacts:
    """Give every switch its loopback, ASN and first point-to-point block; return the plan's facts.

    A pool or range too small for the built fabric is left unassigned (the addressing check
    reports it with the count needed); one too small only for the planned growth is assigned and
    warned about.
    """
    devices = fabric.devices
    three = plan.tiers == 3
    planned_leaves = plan.planned_sus * plan.leaves_per_su
    planned_pods = plan.planned_pods
    spine_up = plan.spine.up if three else 0
    # (global spine index, its first p2p block counted from the top of the pool)
    spine_rows = [(s, (s + 1) * spine_up) for s in range(len(spines))]
    planned_spine_p2p = planned_pods * plan.spines_per_pod * spine_up
    if leaf_blocks is None:
        up, down = plan.leaf.up, plan.leaf.down
        rows = [(leaf, leaf * up, leaf * down) for leaf in range(len(leaves))]
        leaf_ids = len(leaves)
        leaf_p2p, leaf_hosts = len(leaves) * up, len(leaves) * down
        planned_p2p, planned_hosts = planned_leaves * up, planned_leaves * down
    else:
        rows = leaf_blocks.rows
        last = len(rows) - 1
        leaf_ids = rows[last][0] + 1 if rows else 0
        leaf_p2p = rows[last][1] + leaf_blocks.up[last] if rows else 0
        leaf_hosts = rows[last][2] + leaf_blocks.down[last] if rows else 0
        planned_leaves = leaf_blocks.planned_leaves
        planned_p2p, planned_hosts = leaf_blocks.planned_p2p, leaf_blocks.planned_hosts
        if leaf_blocks.spines:
            spine_rows = leaf_blocks.spines
            planned_pods, planned_spine_p2p = leaf_blocks.planned_pods, leaf_blocks.planned_spine_p2p
    planned_spines = planned_pods * plan.spines_per_pod
    spine_ids = max((s for s, _ in spine_rows), default=-1) + 1
    spine_p2p = max((top for _, top in spine_rows), default=0)
    spp = plan.spines_per_pod
    built_pods = -(-spine_ids // spp) if three and spp else plan.built_pods

    # -- loopbacks --------------------------------------------------------------------------
    lo = network(eth.addressing.loopbacks)
    lo_base, lo_size, lo_len = int(lo.network_address), lo.num_addresses, lo.max_prefixlen
    lo_capacity = max(lo_size - 2, 0)
    lo_needed = leaf_ids + (spine_ids if three else len(spines)) + len(cores)
    if lo_needed <= lo_capacity:
        addr = ipaddress.ip_address
        for (leaf, _, _), dev in zip(rows, leaves, strict=True):
            _set(devices[dev], loopback=f"{addr(lo_base + 1 + leaf)}/{lo_len}")
        top = lo_base + lo_size - 2
        for c, dev in enumerate(cores):
            _set(devices[dev], loopback=f"{addr(top - c)}/{lo_len}")
        for (s, _), dev in zip(spine_rows, spines, strict=True):
            _set(devices[dev], loopback=f"{addr(top - len(cores) - s)}/{lo_len}")

    # -- ASNs -------------------------------------------------------------------------------
    bgp = eth.bgp
    asn_capacity = bgp.asn_last - bgp.asn_first + 1
    asn_needed = leaf_ids + (built_pods + 1 if three else 1)
    if asn_needed <= asn_capacity:
        for (leaf, _, _), dev in zip(rows, leaves, strict=True):
            _set(devices[dev], asn=bgp.asn_first + leaf)
        for dev in cores:
            _set(devices[dev], asn=bgp.asn_last)
        for (s, _), dev in zip(spine_rows, spines, strict=True):
            _set(devices[dev], asn=bgp.asn_last - 1 - s // spp if three else bgp.asn_last)

    # -- point-to-point -----------------------------------------------------------------------
    numbered = eth.addressing.p2p != "unnumbered"
    blocks = network(eth.addressing.p2p).num_addresses // 2 if numbered else 0
    p2p_needed = leaf_p2p + spine_p2p
    if numbered and p2p_needed <= blocks:
        for (_, block, _), dev in zip(rows, leaves, strict=True):
            _set(devices[dev], p2p_block=block)
        for (_, from_top), dev in zip(spine_rows if three else (), spines if three else (), strict=True):
            _set(devices[dev], p2p_block=blocks - from_top)

    # -- host links ---------------------------------------------------------------------------
    hosts = eth.addressing.hosts
    host_blocks = network(hosts).num_addresses // 2 if hosts is not None else 0
    host_needed = leaf_hosts
    if hosts is not None and host_needed <= host_blocks:
        for (_, _, block), dev in zip(rows, leaves, strict=True):
            _set(devices[dev], host_block=block)

    return {
        "addressing": {
            "path": path + ("addressing",),
            "loopbacks": str(lo),
            "family": lo.version,
            "loopbacks_capacity": lo_capacity,
            "loopbacks_needed": lo_needed,
            "loopbacks_needed_planned": planned_leaves + (planned_spines if three else len(spines)) + len(cores),
            "p2p": eth.addressing.p2p,
            "p2p_prefixlen": network(eth.addressing.p2p).max_prefixlen - 1 if numbered else None,
            "p2p_capacity": blocks,
            "p2p_needed": p2p_needed if numbered else 0,
            "p2p_needed_planned": (planned_p2p + planned_spine_p2p) if numbered else 0,
            # None: no host pool declared (the host-addressing check says the host ports stay unaddressed).
            "hosts": hosts,
            "hosts_prefixlen": network(hosts).max_prefixlen - 1 if hosts is not None else None,
            "hosts_capacity": host_blocks,
            "hosts_needed": host_needed if hosts is not None else 0,
            "hosts_needed_planned": planned_hosts if hosts is not None else 0,
            "leaf_down": plan.leaf.down,
        },
        "bgp": {
            "path": path + ("bgp",),
            "scheme": SCHEME,
            "asn_first": bgp.asn_first,
            "asn_last": bgp.asn_last,
            "capacity": asn_capacity,
            "needed": asn_needed,
            "needed_planned": planned_leaves + (planned_pods + 1 if three else 1),
        },
        # None for plain Ethernet (no RoCE class): no PFC, no ECN profile to configure.
        "lossless": _lossless(eth.lossless, path + ("lossless",)) if eth.lossless is not None else None,
        "mtu": eth.mtu,
        "host_mtu": eth.host_mtu if eth.host_mtu is not None else eth.mtu,
    }


def _lossless(lossless: Lossless, path: tuple) -> LosslessFacts:
    """The lossless class as plain data, its keys in model.clos.Lossless's field order (a field
    added there belongs here and in LosslessFacts too)."""
    d = lossless.model_dump()
    return {
        "path": path,
        "pfc_priorities": d["pfc_priorities"],
        "dscp_to_tc": d["dscp_to_tc"],
        "default_tc": d["default_tc"],
        "roce_dscp": d["roce_dscp"],
        "cnp_dscp": d["cnp_dscp"],
        "ecn": d["ecn"],
    }
