"""A link's point-to-point addresses, derived from the Fabric (facts and switch attrs) alone.

The builder (builders/addressing.py) stores per switch only its first point-to-point block; a
link's pair of addresses is derived here, so the Ethernet checks need not import the builder.
See builders/addressing.py for the numbering.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..fabric import Fabric, Link
from ..fabric.fabric_facts import as_fat_tree, leaf_shapes

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=64)
def network(text: str) -> IPNetwork:
    return ipaddress.ip_network(text)


class LinkAddresses:
    """Point-to-point addresses of a fabric's switch-to-switch links, derived in O(1) per link."""

    def __init__(self, fabric: Fabric, name: str) -> None:
        facts = as_fat_tree(fabric.facts[name])
        plan = facts["ethernet"]["addressing"]
        self.fabric = fabric
        self.numbered = plan["p2p"] != "unnumbered"
        self.prefixlen = plan["p2p_prefixlen"]
        self._net = network(plan["p2p"]) if self.numbered else None
        # Up-port position by port, per kind of lower switch: "spine", and "leaf" (one leaf model)
        # or "leaf:<model>" per model of the fabric's leaf sets.
        shapes = leaf_shapes(facts)
        self._by_model = "" not in shapes
        self._up: dict[str, dict[int, int]] = {
            **{("leaf:" + m if m else "leaf"): {port: k for k, port in enumerate(up)} for m, (_, up) in shapes.items()},
            "spine": {port: m for m, port in enumerate(facts["spine_up_ports"])},
        }

    def _kind(self, role: str, model: str) -> str:
        return f"leaf:{model}" if role == "leaf" and self._by_model else role

    def block(self, a_index: int, a_port: int, b_index: int, b_port: int) -> int | None:
        """The /31 (/127) block index of the link between these ends; None for endpoint links or unnumbered."""
        devices = self.fabric.devices
        a, b = devices[a_index], devices[b_index]
        if not self.numbered or a.tier == 0 or b.tier == 0 or a.tier == b.tier:
            return None
        low, port = (a, a_port) if a.tier < b.tier else (b, b_port)
        if low.attrs is None or "p2p_block" not in low.attrs:
            return None  # the pool was too small: the addressing check reports it
        return low.attrs["p2p_block"] + self._up[self._kind(low.role, low.model)][port]

    def __call__(self, link: Link) -> tuple[str, str] | None:
        """(A-end address, B-end address) with prefix length, e.g. ('10.64.0.1/31', '10.64.0.0/31')."""
        return self.pair(link.a, link.a_port, link.b, link.b_port)

    def pair(self, a: int, a_port: int, b: int, b_port: int) -> tuple[str, str] | None:
        """The same as a call, from the link's ends (the config renderers read columns, not Links)."""
        block = self.block(a, a_port, b, b_port)
        if block is None or self._net is None:
            return None
        even = int(self._net.network_address) + 2 * block
        version = self._net.version
        upper, lower = f"{ip_text(version, even)}/{self.prefixlen}", f"{ip_text(version, even + 1)}/{self.prefixlen}"
        a_lower = self.fabric.devices[a].tier < self.fabric.devices[b].tier
        return (lower, upper) if a_lower else (upper, lower)

    def bulk(self, positions: Sequence[int]) -> tuple[list[str | None], list[str | None]]:
        """The A-end and B-end address (with prefix) of the links at ``positions`` of the link table,
        None where a link has none: what :meth:`pair` gives link by link, decided for all links at
        once with numpy and formatted once per address (a 131,072-GPU RoCE fabric has 5 x 10^5)."""
        f = self.fabric
        n = len(positions)
        if self._net is None or not n:
            return [None] * n, [None] * n
        devices = f.devices
        tier = np.array([d.tier for d in devices], dtype=np.int64)
        first = np.array([(d.attrs or {}).get("p2p_block", -1) for d in devices], dtype=np.int64)
        kinds = list(self._up)
        kind_id = {k: r for r, k in enumerate(kinds)}
        other = len(kinds)
        role = np.array([kind_id.get(self._kind(d.role, d.model), other) for d in devices], dtype=np.int64)
        arr = f.links.arrays()
        pos = np.asarray(positions, dtype=np.int64)
        a, b, ap, bp = arr.a[pos], arr.b[pos], arr.a_port[pos], arr.b_port[pos]
        ta, tb = tier[a], tier[b]
        a_lower = ta < tb
        low, low_port = np.where(a_lower, a, b), np.where(a_lower, ap, bp)
        # Up-port position of the lower end's port, per role (-1: not an up port).
        width = int(max(low_port.max(initial=0), *(max(u, default=0) for u in self._up.values()))) + 1
        up = np.full((other + 1, width), -1, dtype=np.int64)
        for r, name in enumerate(kinds):
            for port, m in self._up[name].items():
                up[r, port] = m
        index = up[role[low], low_port]
        ok = (ta > 0) & (tb > 0) & (ta != tb) & (first[low] >= 0) & (index >= 0)
        base = int(self._net.network_address)  # Python ints: an IPv6 address does not fit int64
        suffix = f"/{self.prefixlen}"
        version = self._net.version
        out_a: list[str | None] = [None] * n
        out_b: list[str | None] = [None] * n
        keep = np.flatnonzero(ok)
        blocks, lowers = (first[low] + index)[keep].tolist(), a_lower[keep].tolist()
        evens = [base + 2 * block for block in blocks]
        uppers = ip_texts(version, evens, suffix)
        odds = ip_texts(version, [even + 1 for even in evens], suffix)  # the lower tier takes the odd one
        for k, upper, odd, lower in zip(keep.tolist(), uppers, odds, lowers, strict=True):
            out_a[k], out_b[k] = (odd, upper) if lower else (upper, odd)
        return out_a, out_b


def ip_text(version: int, value: int) -> str:
    """An address as text; IPv4 by arithmetic (4x faster than ipaddress, and the renderers format 10^5)."""
    if version == 4:
        return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"
    return str(ipaddress.IPv6Address(value))


_OCTETS = [str(i) for i in range(256)]


def ip_texts(version: int, values: Sequence[int], suffix: str = "") -> list[str]:
    """:func:`ip_text` of many addresses, each followed by ``suffix`` (a prefix length): IPv4 by the
    first three octets' text, made once per /24 (addresses of one plan share a few thousand), and
    the last octet's (with the suffix) from a table."""
    if version != 4:
        return [str(ipaddress.IPv6Address(v)) + suffix for v in values]
    prefixes: dict[int, str] = {}
    out = []
    octet = [o + suffix for o in _OCTETS] if suffix else _OCTETS
    for v in values:
        hi = v >> 8
        head = prefixes.get(hi)
        if head is None:
            head = prefixes[hi] = f"{hi >> 16}.{hi >> 8 & 255}.{hi & 255}."
        out.append(head + octet[v & 255])
    return out
