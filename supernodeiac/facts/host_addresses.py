"""A host link's point-to-point addresses (leaf down port <-> NIC), derived from the Fabric alone.

The builder (builders/addressing.py) stores per leaf only its first host block (``host_block``); a
link's pair derives from it and the down port's position among the leaf's down ports, in O(1)
per link, and for many links at once with numpy (:meth:`HostAddresses.bulk`): a 131,072-GPU
RoCE fabric has 131,072 host links. The leaf takes the even address of the /31 (/127), the NIC
the odd one, as the upper end of a switch link does (builders/addressing.py); the leaf's address is
the NIC's gateway.

A leaf's blocks are contiguous (``leaf_down`` blocks from ``host_block``), so its host subnets
summarise to one prefix when ``leaf_down`` is a power of two (64 down ports: a /25 of IPv4):
:meth:`HostAddresses.summary` gives the prefixes a leaf advertises for its hosts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence

import numpy as np

from ..fabric import Fabric
from ..fabric.fabric_facts import as_fat_tree, leaf_down_of, leaf_shapes
from .link_addresses import IPNetwork, ip_text, ip_texts, network


class HostAddresses:
    """Addresses of a fabric's host links, from its leaves' host_block and their down-port positions."""

    def __init__(self, fabric: Fabric, name: str) -> None:
        facts = as_fat_tree(fabric.facts[name])
        plan = facts["ethernet"]["addressing"]
        self.fabric = fabric
        self.pool: str | None = plan.get("hosts")
        self.numbered = self.pool is not None
        self.prefixlen: int | None = plan.get("hosts_prefixlen")
        self.leaf_down: int = plan.get("leaf_down", 0)
        self._net: IPNetwork | None = network(self.pool) if self.pool is not None else None
        shapes = leaf_shapes(facts)
        # Down-port position by port, per leaf model ("" for a fabric of one leaf model).
        self._downs: dict[str, dict[int, int]] = {m: {port: q for q, port in enumerate(down)} for m, (down, _) in shapes.items()}
        self._leaf_downs = leaf_down_of(facts) if "" not in shapes else {"": self.leaf_down}
        self._down: dict[int, int] = self._downs.get("", {})

    def _down_of(self, model: str) -> dict[int, int]:
        return self._downs.get("", None) or self._downs.get(model, {})

    @property
    def net(self) -> IPNetwork | None:
        """The host pool (None without one)."""
        return self._net

    # -- one link ------------------------------------------------------------------------------
    def block(self, a_index: int, a_port: int, b_index: int, b_port: int) -> int | None:
        """The block index of the host link between these ends; None for a switch link, no pool, or
        a pool too small (the address-pool check reports it)."""
        if self._net is None:
            return None
        devices = self.fabric.devices
        a, b = devices[a_index], devices[b_index]
        if a.tier == 1 and b.tier == 0:
            leaf, port = a, a_port
        elif b.tier == 1 and a.tier == 0:
            leaf, port = b, b_port
        else:
            return None
        first = (leaf.attrs or {}).get("host_block")
        q = self._down_of(leaf.model).get(port)
        if first is None or q is None:
            return None
        return first + q

    def leaf_ip(self, block: int) -> str:
        """The leaf's address of a block (the even one; the NIC's gateway), without prefix length."""
        assert self._net is not None
        return ip_text(self._net.version, int(self._net.network_address) + 2 * block)

    def nic_ip(self, block: int) -> str:
        """The NIC's address of a block (the odd one), without prefix length."""
        assert self._net is not None
        return ip_text(self._net.version, int(self._net.network_address) + 2 * block + 1)

    def pair(self, a: int, a_port: int, b: int, b_port: int) -> tuple[str, str] | None:
        """(A-end address, B-end address) with prefix length: the leaf's even, the NIC's odd."""
        block = self.block(a, a_port, b, b_port)
        if block is None:
            return None
        suffix = f"/{self.prefixlen}"
        leaf, host = self.leaf_ip(block) + suffix, self.nic_ip(block) + suffix
        return (leaf, host) if self.fabric.devices[a].tier == 1 else (host, leaf)

    # -- many links ----------------------------------------------------------------------------
    def blocks(self, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Per link of the table at ``positions``: its block (-1 where it has none) and whether the
        leaf is its A end; decided for all links at once."""
        f = self.fabric
        n = len(positions)
        if self._net is None or not n:
            return np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool)
        tier = np.array([d.tier for d in f.devices], dtype=np.int64)
        first = np.array([(d.attrs or {}).get("host_block", -1) for d in f.devices], dtype=np.int64)
        arr = f.links.arrays()
        pos = np.asarray(positions, dtype=np.int64)
        a, b, ap, bp = arr.a[pos], arr.b[pos], arr.a_port[pos], arr.b_port[pos]
        ta, tb = tier[a], tier[b]
        a_leaf = (ta == 1) & (tb == 0)
        leaf, port = np.where(a_leaf, a, b), np.where(a_leaf, ap, bp)
        # Down-port position by (leaf model, port): one row per model of the leaf sets, or the one
        # row "" of a fabric of one leaf model (every leaf reads it); -1 where a port is no down port.
        models = list(self._downs)
        width = int(max([port.max(initial=0), *(max(d, default=0) for d in self._downs.values())])) + 1
        q_tab = np.full((len(models) + 1, width), -1, dtype=np.int64)
        for r, m in enumerate(models):
            for p, q in self._downs[m].items():
                q_tab[r, p] = q
        if "" in self._downs:
            rows = np.zeros(len(leaf), dtype=np.int64)
        else:
            mid = {m: r for r, m in enumerate(models)}
            rows = np.array([mid.get(d.model, len(models)) for d in f.devices], dtype=np.int64)[leaf]
        qs = q_tab[rows, port]
        ok = (a_leaf | ((tb == 1) & (ta == 0))) & (first[leaf] >= 0) & (qs >= 0)
        return np.where(ok, first[leaf] + qs, -1), a_leaf

    def bulk(self, positions: Sequence[int]) -> tuple[list[str | None], list[str | None]]:
        """The A-end and B-end address (with prefix) of the links at ``positions``, None where a link
        has none: :meth:`pair` for all links at once, each address formatted once."""
        n = len(positions)
        out_a: list[str | None] = [None] * n
        out_b: list[str | None] = [None] * n
        if self._net is None or not n:
            return out_a, out_b
        block, a_leaf = self.blocks(positions)
        keep = np.flatnonzero(block >= 0)
        suffix = f"/{self.prefixlen}"
        version, base = self._net.version, int(self._net.network_address)
        evens = [base + 2 * blk for blk in block[keep].tolist()]
        leaves = ip_texts(version, evens, suffix)  # leaf_ip and nic_ip of every block, formatted in bulk
        hosts = ip_texts(version, [even + 1 for even in evens], suffix)
        for k, leaf, host, leaf_a in zip(keep.tolist(), leaves, hosts, a_leaf[keep].tolist(), strict=True):
            out_a[k], out_b[k] = (leaf, host) if leaf_a else (host, leaf)
        return out_a, out_b

    def _block_table(self, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(address block by port row, -1 for none; each device's first port row) over the host
        links at ``positions``: the table both NIC lookups read."""
        f = self.fabric
        total = f.device_arrays().total
        offset = np.concatenate(([0], np.cumsum(total))).astype(np.int64)
        table = np.full(int(offset[-1]), -1, dtype=np.int64)
        if self._net is not None and len(positions):
            block, a_leaf = self.blocks(positions)
            arr = f.links.arrays()
            pos = np.asarray(positions, dtype=np.int64)
            host = np.where(a_leaf, arr.b[pos], arr.a[pos])
            port = np.where(a_leaf, arr.b_port[pos], arr.a_port[pos])
            keep = block >= 0
            table[offset[host[keep]] + port[keep]] = block[keep]
        return table, offset

    def nic_address(self, positions: Sequence[int]) -> Callable[[int, int], str]:
        """A lookup (host device, host port) -> that NIC's address (no prefix; "" for a port with
        none) over the host links at ``positions``: one numpy table of blocks by port row, each
        address formatted when asked for (an acceptance plan asks for 10^5 of them)."""
        table, offset = self._block_table(positions)
        first = offset.tolist()

        def address(host: int, port: int) -> str:
            blk = int(table[first[host] + port])
            return self.nic_ip(blk) if blk >= 0 else ""

        return address

    def nic_addresses(self, positions: Sequence[int]) -> Callable[[Sequence[int], Sequence[int]], list[str]]:
        """:meth:`nic_address` for many (host, port) ends at once: ``lookup(hosts, ports)`` gives
        each end's address ("" for a port with none), the blocks gathered with numpy."""
        table, offset = self._block_table(positions)

        def lookup(hosts: Sequence[int], ports: Sequence[int]) -> list[str]:
            if not len(hosts):
                return []
            blk = table[offset[np.asarray(hosts, dtype=np.int64)] + np.asarray(ports, dtype=np.int64)]
            if self._net is None:
                return [""] * len(blk)
            base = int(self._net.network_address)
            has = blk >= 0
            # Python ints for the sum: an IPv6 address does not fit int64.
            texts = iter(ip_texts(self._net.version, [base + 2 * b + 1 for b in blk[has].tolist()]))
            return [next(texts) if h else "" for h in has.tolist()]

        return lookup

    # -- per leaf ------------------------------------------------------------------------------
    def summary(self, leaf: int) -> list[str]:
        """The prefixes covering exactly the leaf's host blocks (all its down ports, cabled or not):
        what it advertises for its hosts. Empty without a pool or a block."""
        device = self.fabric.devices[leaf]
        first = (device.attrs or {}).get("host_block")
        leaf_down = self._leaf_downs.get("", 0) or self._leaf_downs.get(device.model, 0)
        if self._net is None or first is None or not leaf_down:
            return []
        base = int(self._net.network_address) + 2 * first
        make = ipaddress.ip_address
        low, high = make(base), make(base + 2 * leaf_down - 1)
        return [str(n) for n in ipaddress.summarize_address_range(low, high)]
