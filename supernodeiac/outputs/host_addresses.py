"""Host NIC addressing for provisioning tools: ``host-addresses/<fabric>.csv`` and ``.jsonl``.

One row (CSV) or object (JSON lines) per host NIC cabled to a leaf of an Ethernet fat tree that
declares a host pool (``ethernet.addressing.hosts``): the node, the NIC's OS name (the
catalogue's port name, e.g. eth0) and RDMA device (mlx5_0, from the host topology), its printed
port, its address with prefix (the odd address of the link's /31 or /127), its gateway (the
leaf's address on that link, the even one), the leaf and leaf port, the rail, and the policy
routing the host needs (``table``, ``route``).

Policy routing. A node has one NIC per rail on the fabric, each on its own /31 with its own
gateway: with one main routing table the kernel would send every NIC's traffic to the fabric out
of whichever NIC holds the route, so RoCE and TCP traffic sourced from NIC 3's address would
leave through NIC 0. The published multi-rail designs (NVIDIA's DGX / Spectrum-X RoCE host
configuration, Meta's RoCE hosts) route by source: per NIC a routing table holding the route to
the fabric's host pool (``route``) via the NIC's gateway, and a rule "from <the NIC's address>
lookup <table>". ``table`` is 100 + the NIC's port index on the node, so it is stable (the port
layout of the model) and distinct across the node's NICs on every fabric. The rows carry the
figures; the host's own tooling (netplan ``routing-policy`` / ``routes: table``, NetworkManager,
ifupdown ``ip rule``) writes them.

Rows stream in (node, port) order; every cell goes through the shared CSV writer (``csv_safe``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial

import numpy as np

from ..catalog.host_topology import host_topologies
from ..fabric import Fabric
from ..facts.host_addresses import HostAddresses
from ..facts.hosts import rdma_names
from ..facts.link_addresses import ip_texts
from ..facts.switch_facts import facts_for
from .base import RENDERERS, RenderContext, Stream
from .csv_safe import CsvWriter

COLUMNS = ["node", "nic", "rdma_device", "port", "address", "gateway", "leaf", "leaf_port", "rail", "table", "route"]
_json_string = json.encoder.encode_basestring_ascii
TABLE_BASE = 100  # policy routing table of a NIC: TABLE_BASE + its port index (Linux user tables 1-252)


def host_columns(ctx: RenderContext, name: str, hosts: HostAddresses) -> list[list[str]]:
    """The fabric's host NICs as columns of text cells (COLUMNS), rows in (node, port) order:
    gathered with numpy and one comprehension per column, the addresses formatted in bulk."""
    f: Fabric = ctx.fabric
    t = f.links
    positions = np.asarray(t.indices_of(name), dtype=np.int64)
    block, a_leaf = hosts.blocks(positions.tolist())
    keep = block >= 0
    positions, block, a_leaf = positions[keep], block[keep], a_leaf[keep]
    arr = t.arrays()
    a, b, ap, bp = arr.a[positions], arr.b[positions], arr.a_port[positions], arr.b_port[positions]
    host, host_port = np.where(a_leaf, b, a), np.where(a_leaf, bp, ap)
    leaf, leaf_port = np.where(a_leaf, a, b), np.where(a_leaf, ap, bp)
    order = np.lexsort((host_port, host))
    names = [d.name for d in f.devices]
    layouts = {m: f.layouts[m] for m in {d.model for d in f.devices}}
    port_names = [layouts[d.model].names for d in f.devices]
    printed = [layouts[d.model].physical_names for d in f.devices]
    rdma_of = rdma_names(f, host_topologies(ctx.blueprint.catalogue.host_topology)[0])
    rdma = [rdma_of[d.model] for d in f.devices]
    rails = ["" if d.coord("rail") is None else str(d.coord("rail")) for d in f.devices]
    net = hosts.net
    assert net is not None
    suffix, route = f"/{hosts.prefixlen}", str(net)
    tables = [str(TABLE_BASE + p) for p in range(max((layouts[m].total for m in layouts), default=0))]
    h, hp, lf, lp = (x[order].tolist() for x in (host, host_port, leaf, leaf_port))
    # The block's even address is the leaf's (the NIC's gateway), the odd one the NIC's
    # (HostAddresses.leaf_ip / nic_ip); Python ints for the sums: an IPv6 address does not fit int64.
    base = int(net.network_address)
    evens = [base + 2 * blk for blk in block[order].tolist()]
    return [
        [names[x] for x in h],
        [port_names[x][p] for x, p in zip(h, hp, strict=True)],
        [rdma[x][p] for x, p in zip(h, hp, strict=True)],
        [printed[x][p] for x, p in zip(h, hp, strict=True)],
        ip_texts(net.version, [e + 1 for e in evens], suffix),
        ip_texts(net.version, evens),
        [names[x] for x in lf],
        [port_names[x][p] for x, p in zip(lf, lp, strict=True)],
        [rails[x] for x in lf],
        [tables[p] for p in hp],
        [route] * len(h),
    ]


def host_rows(ctx: RenderContext, name: str, hosts: HostAddresses) -> Iterator[list[str]]:
    """The fabric's host NICs as rows of text cells (COLUMNS), in (node, port) order."""
    return map(list, zip(*host_columns(ctx, name, hosts), strict=True))


_BLOCK = 65_536  # rows per CSV block


def _csv(ctx: RenderContext, name: str, hosts: HostAddresses) -> Iterator[bytes]:
    columns = host_columns(ctx, name, hosts)
    n = len(columns[0])
    blocks = ([c[k : k + _BLOCK] for c in columns] for k in range(0, n, _BLOCK))
    return CsvWriter(COLUMNS).stream_columns((b, (), ()) for b in blocks)


def _jsonl(ctx: RenderContext, name: str, hosts: HostAddresses) -> Iterator[str]:
    """The rows as JSON objects, one a line (rail and table as numbers): built as text from each
    cell's JSON string, encoded once per distinct value (names repeat; 131,072 rows at scale);
    addresses are digits, dots and colons, nothing to escape."""
    encoded: dict[str, str] = {}

    def q(value: str) -> str:
        found = encoded.get(value)
        if found is None:
            found = encoded[value] = _json_string(value)
        return found

    lines: list[str] = []
    for node, nic, rdma, port, address, gateway, leaf, leaf_port, rail, table, route in host_rows(ctx, name, hosts):
        lines.append(
            f'{{"node":{q(node)},"nic":{q(nic)},"rdma_device":{q(rdma)},"port":{q(port)},"address":"{address}",'
            f'"gateway":"{gateway}","leaf":{q(leaf)},"leaf_port":{q(leaf_port)},"rail":{rail or "null"},'
            f'"table":{table},"route":{q(route)}}}'
        )
        if len(lines) == 8192:
            yield "\n".join(lines) + "\n"
            lines.clear()
    if lines:
        yield "\n".join(lines) + "\n"


@RENDERERS.register("host-addresses")
def render_host_addresses(ctx: RenderContext) -> dict[str, bytes | Stream]:
    facts = facts_for(ctx)
    out: dict[str, bytes | Stream] = {}
    for name in sorted(n for n, x in ctx.fabric.facts.items() if x.get("kind") == "fat-tree" and "ethernet" in x):
        hosts = facts.host_addresses(name)
        if hosts is None or not hosts.numbered:
            continue
        out[f"host-addresses/{name}.csv"] = Stream(partial(_csv, ctx, name, hosts))
        out[f"host-addresses/{name}.jsonl"] = Stream(partial(_jsonl, ctx, name, hosts))
    return out
