"""The subnet manager's files for every InfiniBand fabric: ``opensm/<fabric>/``.

* ``opensm.conf``: the routing engine that fits the topology and stays deadlock-free on the one
  virtual lane NCCL's traffic uses (facts/ib_routing.py: ftree for fat trees, updn from the spines
  for Dragonfly+, nue on one VL for Dragonfly, updn from one router for a Dragonfly too big for
  nue), the GUID files, the partitions file, the blueprint's lmc (templates/opensm.conf.j2);
* ``opensm.<name>.conf`` per machine the blueprint's ``subnet_manager.instances`` names: the same
  settings with that machine's ``sm_priority`` (an HA pair: master and standby);
* ``root_guids.conf`` (the top tier's node GUIDs, or a Dragonfly's one root router), ``cn_guids.conf`` (compute HCA port
  GUIDs), ``io_guids.conf`` (service endpoints: fabric managers, storage);
* ``partitions.conf`` from the blueprint's tenants, the Default partition always defined
  (templates/partitions.conf.j2);
* ``ibnetdiscover.topo``: the expected fabric in ibnetdiscover's topology-file format, which
  ibdiagnet compares a live fabric with and ibsim simulates; GUIDs from the plan (facts/guid_plan.py);
* ``guids.csv``: the GUID plan (device, port, node and port GUID, description).

Paths inside opensm.conf point at ``/etc/opensm`` (OpenSM's default configuration folder).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter

import numpy as np

from ..fabric import Fabric
from ..facts.guid_plan import GuidPlan
from ..facts.ib_fabric import IbFabric, IbNode, infiniband_fabrics
from ..facts.ib_routing import NCCL_DEFAULT_SL, UNICAST_LIDS, WINDOW_ENGINE, routing_plan, window_lmc
from ..model.blueprint import built_fabrics
from ..model.clos import FatTree
from ..util.templating import render_template
from .base import RENDERERS, SAME_PREFIX, SUBSETS, RenderContext, RowSelection, Sized, Stream
from .csv_safe import CsvWriter

ETC = "/etc/opensm"
CHUNK = 2000  # node records per chunk of the topology stream


def service_groups(ctx: RenderContext, fabric: str) -> set[str]:
    """Endpoint groups the blueprint attaches as service endpoints (``su:`` set) on a fat tree."""
    for _, spec, name in built_fabrics(ctx.blueprint):
        if name == fabric and isinstance(spec, FatTree):
            return {ep.group for ep in spec.endpoints if ep.su is not None}
    return set()


def _hex(guid: int) -> str:
    return f"0x{guid:016x}"


def guid_plan(ctx: RenderContext) -> GuidPlan:
    """The Fabric's GUID plan, made once per render context (``snc diff`` compares both sides')."""
    found = ctx.memo.get("guid_plan")
    if found is None:
        found = ctx.memo["guid_plan"] = GuidPlan(ctx.fabric)
    return found


def _nodes(ib: IbFabric, keep: Callable[[IbNode], bool] | None) -> list[IbNode]:
    """The fabric's nodes in Fabric order (switches, then HCAs), or those ``keep`` keeps."""
    nodes = ib.switches + ib.cas
    return nodes if keep is None else [n for n in nodes if keep(n)]


def _topology_header(ib: IbFabric) -> str:
    return f"#\n# Topology file: expected fabric {ib.name} of blueprint {ib.fabric.name}, rendered by snc\n#\n\n"


def _peer_refs(ib: IbFabric) -> dict[tuple[int, int], tuple[str, str, str]]:
    """What a port line says of its peer, made once per node rather than once per link end (10^6
    at 131k): its quoted node ID, its port GUID (an HCA's), its description."""
    ref: dict[tuple[int, int], tuple[str, str, str]] = {}
    for key, peer in ib.nodes.items():
        port_guid = "" if peer.is_switch else f"({ib.port_guid(peer):x}) "
        ref[key] = (f'"{peer.node_id}"[', f"]{port_guid}\t\t# ", f'"{peer.description}" lid 0 ')
    return ref


def _node_head(ib: IbFabric, node: IbNode) -> str:
    """A node record's lines before its ports (no line end after the last)."""
    guid = node.guid
    if node.is_switch:
        return (
            f"sysimgguid=0x{guid:x}\nswitchguid=0x{guid:x}({guid:x})\n"
            f'Switch\t{node.nports} "{node.node_id}"\t\t# "{node.description}" enhanced port 0 lid 0 lmc 0'
        )
    return f'sysimgguid=0x{guid:x}\ncaguid=0x{guid:x}\nCa\t{node.nports} "{node.node_id}"\t\t# "{node.description}"'


def _topology(ib: IbFabric) -> Iterator[str]:
    """ibnetdiscover's topology file (infiniband-diags sec_topology-file.rst): a record per node,
    every link on both ends; ``lid 0`` where a live dump shows the assigned LID."""
    yield _topology_header(ib)
    ref = _peer_refs(ib)
    t = ib.fabric.links
    rates = [ib.spec_rate(s) for s in t.specs]
    spec = t.spec
    out: list[str] = []
    for node in ib.switches + ib.cas:
        lines = [_node_head(ib, node)]
        links = node.links
        if node.is_switch:
            for port in sorted(links):
                peer_key, peer_port, link = links[port]
                at, guid_text, about = ref[peer_key]
                lines.append(f"[{port}]\t{at}{peer_port}{guid_text}{about}{rates[spec[link]]}")
        else:
            own = f"({ib.port_guid(node):x}) \t"
            for port in sorted(links):
                peer_key, peer_port, link = links[port]
                at, guid_text, about = ref[peer_key]
                lines.append(f"[{port}]{own}{at}{peer_port}{guid_text}lid 0 lmc 0 {about}{rates[spec[link]]}")
        out.append("\n".join(lines) + "\n\n")
        if len(out) >= CHUNK:
            yield "".join(out)
            out = []
    yield "".join(out)


# The fixed text of _topology's lines (the words, brackets, quotes, tabs and line ends), beside
# which _topology_size counts what varies: GUIDs in hex, node IDs, descriptions, port numbers, rates.
SWITCH_HEAD = len('sysimgguid=0x\nswitchguid=0x()\nSwitch\t ""\t\t# "" enhanced port 0 lid 0 lmc 0\n')
CA_HEAD = len('sysimgguid=0x\ncaguid=0x\nCa\t ""\t\t# ""\n')
SWITCH_PORT_LINE = len("[]\t\n")
CA_PORT_LINE = len("[]lid 0 lmc 0 \n") + len("() \t")  # and the HCA's own port GUID
PEER = len('""[') + len('"" lid 0 ')  # around the peer's node ID and its description
SWITCH_PEER = len("]\t\t# ")
CA_PEER = len("]() \t\t# ")  # and the HCA's port GUID


def _hex_digits(values: np.ndarray) -> np.ndarray:
    """The number of digits of each (64-bit) value in hex, as ``f"{v:x}"`` writes it."""
    out = np.ones(len(values), dtype=np.int64)
    for k in range(1, 16):
        out += values >= np.uint64(16**k)
    return out


def _topology_size(ib: IbFabric) -> int | None:
    """The length in bytes of ``_topology(ib)``'s text, counted in bulk without making it
    (``snc diff`` tells two topologies of other lengths apart by it). Every link is a line on
    each of its two ends that names the other end: so each end's peer text counts once, and its
    port number twice (its own line, its peer's). None where a port holds two links (the last
    one's line stands, so the ends would not all be lines) or a GUID is past 64 bits."""
    nodes = ib.switches + ib.cas
    positions = ib.link_positions
    links = list(map(attrgetter("links"), nodes))
    ends = np.fromiter(map(len, links), dtype=np.int64, count=len(nodes))
    guids = list(map(attrgetter("guid"), nodes))
    port_guids = list(map(ib.port_guid, ib.cas))
    if int(ends.sum()) != 2 * len(positions) or max(guids + port_guids, default=0) >> 64:
        return None
    t = ib.fabric.links
    rates = np.array([len(ib.spec_rate(s).encode()) for s in t.specs] + [0], dtype=np.int64)
    total = len(_topology_header(ib).encode())
    total += 2 * int(rates[t.arrays().spec[np.asarray(positions, dtype=np.int64)]].sum())
    switch = np.zeros(len(nodes), dtype=bool)
    switch[: len(ib.switches)] = True
    guid = _hex_digits(np.array(guids, dtype=np.uint64))
    node_id = 2 + np.maximum(guid, 16)  # S-/H- and the GUID in at least 16 digits
    texts = list(map(attrgetter("description"), nodes))
    if not all(map(str.isascii, texts)):
        texts = [x.encode() for x in texts]  # their lengths in bytes
    about = np.fromiter(map(len, texts), dtype=np.int64, count=len(nodes))
    nports = np.fromiter((len(str(n.nports)) for n in nodes), dtype=np.int64, count=len(nodes))
    # An HCA's one IB port is port 1 (facts/ib_fabric): a digit per end; a switch's, counted.
    digits = ends.copy()
    digits[: len(ib.switches)] = [len("".join(map(str, n))) for n in links[: len(ib.switches)]]
    port_guid = np.zeros(len(nodes), dtype=np.int64)
    port_guid[~switch] = _hex_digits(np.array(port_guids, dtype=np.uint64))
    head = np.where(switch, SWITCH_HEAD + 3 * guid, CA_HEAD + 2 * guid) + nports + node_id + about
    line = np.where(switch, SWITCH_PORT_LINE, CA_PORT_LINE + port_guid)
    peer = PEER + node_id + about + np.where(switch, SWITCH_PEER, CA_PEER + port_guid)
    # Per record: its head, each port line with its peer's text, the blank line after it.
    total += int((head + ends * (line + peer) + 2 * digits + 1).sum())
    return total


def _guid_lines(guids: list[int]) -> Iterator[str]:
    for start in range(0, len(guids), 10000):
        yield "".join(_hex(g) + "\n" for g in guids[start : start + 10000])


GUID_COLUMNS = ["device", "port", "kind", "node_guid", "port_guid", "description"]


def _guid_table(ib: IbFabric, keep: Callable[[IbNode], bool] | None = None) -> Iterator[bytes]:
    """The GUID plan as CSV (through the shared writer: names and descriptions are cells); with
    ``keep``, the rows of the nodes it keeps only."""
    f = ib.fabric

    def rows() -> Iterator[list[str]]:
        for node in _nodes(ib, keep):
            d = f.devices[node.device]
            port = "" if node.is_switch else f.layouts[d.model].name(node.port)
            kind = "switch" if node.is_switch else "hca"
            yield [d.name, port, kind, _hex(node.guid), _hex(ib.port_guid(node)), node.description]

    return CsvWriter(GUID_COLUMNS).stream(rows())


def _partitions(ctx: RenderContext, ib: IbFabric, port_guid: Callable[[IbNode], int]) -> list[dict]:
    by_group: dict[str, list[IbNode]] = {}
    for node in ib.cas:
        by_group.setdefault(ib.fabric.devices[node.device].group, []).append(node)
    out = []
    for t in ctx.blueprint.tenants:
        members = [n for g in t.groups for n in by_group.get(g, [])]
        if not members:
            continue  # the tenant has no port on this fabric (the tenants check says so)
        # IPoIB multicast MTU as partitions.conf codes it (IBTA: 4 = 2048, 5 = 4096 bytes).
        mtu = {2048: 4, 4096: 5}.get(t.mtu) if t.mtu is not None else None
        out.append(
            {
                "name": t.name,
                "pkey": t.pkey,
                "ipoib": t.ipoib,
                "mtu": mtu,
                "sl": t.sl,
                "groups": t.groups,
                "guids": [_hex(port_guid(n)) for n in members],
            }
        )
    return out


def _joined(chunks: Iterator[str] | Iterator[bytes]) -> bytes:
    return b"".join(c.encode() if isinstance(c, str) else c for c in chunks)


def guid_files(
    ctx: RenderContext,
    ib: IbFabric,
    node_guid: Callable[[IbNode], int],
    port_guid: Callable[[IbNode], int],
    bound: bool,
) -> dict[str, bytes]:
    """The subnet manager's GUID-bearing files of one fabric (``opensm.conf``, ``root_guids.conf``,
    ``cn_guids.conf``, ``io_guids.conf``, ``partitions.conf``), relative to its folder, with the GUIDs
    ``node_guid``/``port_guid`` give: the plan's (``snc render``, ``bound`` False) or those a
    discovered fabric carries (``snc bind``, ``bound`` True)."""
    f = ctx.fabric
    plan = routing_plan(ctx.blueprint, ib.name, ib.facts)
    service = service_groups(ctx, ib.name)
    cn = [port_guid(n) for n in ib.cas if f.devices[n.device].group not in service]
    io = [port_guid(n) for n in ib.cas if f.devices[n.device].group in service]
    uses_roots = plan.uses_roots
    settings = dict(
        fabric=ib.name,
        blueprint=f.name,
        kind=ib.kind,
        switches=len(ib.switches),
        cas=len(ib.cas),
        etc=ETC,
        bound=bound,
        engine=plan.engine,
        engine_reason=plan.how,
        engine_why=plan.why,
        engine_safe=plan.severity == "ok",
        engine_options=sorted(plan.options.items()),
        nccl_sl=NCCL_DEFAULT_SL,
        root_guid_file=f"{ETC}/root_guids.conf" if uses_roots else None,
        one_root=plan.roots == "one",
        cn_guid_file=f"{ETC}/cn_guids.conf",
        io_guid_file=f"{ETC}/io_guids.conf" if io else None,
        max_reverse_hops=0,
        partition_config_file=f"{ETC}/partitions.conf",
        lmc=plan.lmc,
        window=False,
        unicast_lids=UNICAST_LIDS,
    )
    out = {"opensm.conf": render_template("opensm.conf.j2", sm_name=None, **settings).encode()}
    if ib.kind == "fat-tree":  # the acceptance window's routes (snc routed-tests), beside production's
        window = {**settings, "engine": WINDOW_ENGINE, "engine_options": [], "window": True}
        window["lmc"] = window_lmc(len(ib.switches), len(ib.cas))
        out["opensm-window.conf"] = render_template("opensm.conf.j2", sm_name=None, **window).encode()
    # An HA pair (or more): the same file per subnet-manager machine, each with its own priority.
    for sm_name, priority in plan.managers:
        peers = ", ".join(f"{n} {p}" for n, p in plan.managers if n != sm_name) or "none"
        conf = render_template("opensm.conf.j2", sm_name=sm_name, sm_priority=priority, peers=peers, **settings)
        out[f"opensm.{sm_name}.conf"] = conf.encode()
    if uses_roots:
        roots = ib.switches[:1] if plan.roots == "one" else ib.top_switches()
        out["root_guids.conf"] = "".join(_hex(node_guid(n)) + "\n" for n in roots).encode()
    # Made here rather than streamed: the files hold a third of what the IbFabric does (67 MB of
    # topology against 180 MB of nodes at 131,072 HCAs), which can then go before the write.
    out["cn_guids.conf"] = _joined(_guid_lines(cn))
    if io:
        out["io_guids.conf"] = "".join(_hex(g) + "\n" for g in io).encode()
    partitions = _partitions(ctx, ib, port_guid)
    out["partitions.conf"] = render_template(
        "partitions.conf.j2", fabric=ib.name, blueprint=f.name, partitions=partitions, bound=bound
    ).encode()
    return out


@RENDERERS.register("opensm")
def render_opensm(ctx: RenderContext) -> dict[str, bytes | Stream]:
    return _opensm(ctx)


@SUBSETS.register("opensm")
def render_opensm_rows(ctx: RenderContext, rows: RowSelection) -> dict[str, bytes | Stream]:
    """The files with guids.csv's rows of the nodes that may differ only (``_changed_nodes``),
    where the selection knows whose GUIDs may differ; the others whole (the GUID lists and the
    configuration are small) but ibnetdiscover.topo: it is compared as bytes (no text suffix),
    the report giving its sizes, so it is left out where it is the same on both sides
    (``_same_topology``) and otherwise a stream that knows its size (``_topology_size``)."""
    return _opensm(ctx, rows)


def _changed_nodes(ctx: RenderContext, rows: RowSelection) -> Callable[[IbNode], bool] | None:
    """Whether a node's GUID row may differ between the sides of ``snc diff``: its device's GUIDs
    may (``rows.guids``), or a link that may differ ends on its device (a switch) or its port (an
    HCA: a node per port; a device renamed or of another model has every link kept). Otherwise
    the row is the same: the device's name, the port's name, the GUIDs. None: not known."""
    if rows.guids is None:
        return None
    guids, ports = rows.guids, rows.ports
    names = [d.name for d in ctx.fabric.devices]
    at = {name for name, _port in ports}

    def changed(node: IbNode) -> bool:
        name = names[node.device]
        return name in guids or (name in at if node.is_switch else (name, node.port) in ports)

    return changed


def _opensm(ctx: RenderContext, rows: RowSelection | None = None) -> dict[str, bytes | Stream]:
    f = ctx.fabric
    names = infiniband_fabrics(f)
    if not names:
        return {}
    guids = guid_plan(ctx)
    keep = _changed_nodes(ctx, rows) if rows is not None else None
    out: dict[str, bytes | Stream] = {}
    for name in names:
        ib = IbFabric(f, name, guids)
        base = f"opensm/{name}/"
        for path, data in guid_files(ctx, ib, lambda n: n.guid, ib.port_guid, bound=False).items():
            out[base + path] = data
        topo = base + "ibnetdiscover.topo"
        if rows is None:
            out[topo] = _joined(_topology(ib))
        elif _same_topology(ctx, ib, rows):
            out[SAME_PREFIX + topo] = b""
        else:
            out[topo] = _sized_topology(f, name, guids, ib)
        out[base + "guids.csv"] = _joined(_guid_table(ib, keep))
    return out


def _same_topology(ctx: RenderContext, ib: IbFabric, rows: RowSelection) -> bool:
    """Whether ``snc diff``'s two sides' ibnetdiscover topologies of this fabric are the same bytes
    (where the sides do not agree, the comparison renders the file whole on both). They are when
    no link of the fabric may differ on either side (``rows.fabrics``: each of one side's links is
    one of the other's, the same ends by device name, model and port, the same spec: the same
    nodes, port numbers, descriptions and rates), no GUID of its devices may (``rows.guids``, which
    also says the devices both sides have are in one order: that of the records), and the header
    is the same (the old side leaves its own in ``rows.shared`` for the new one)."""
    if rows.guids is None or ib.name in rows.fabrics:
        return False
    devices = ctx.fabric.devices
    if any(devices[n.device].name in rows.guids for n in ib.switches):
        return False
    if any(devices[n.device].name in rows.guids for n in ib.cas):
        return False
    headers = rows.shared.setdefault("opensm.topology", {})
    if rows.side == 0:
        headers[ib.name] = _topology_header(ib)
        return True
    return headers.get(ib.name) == _topology_header(ib)


def _sized_topology(f: Fabric, name: str, guids: GuidPlan, ib: IbFabric) -> bytes | Sized:
    """The topology as a stream that knows its length (``snc diff`` needs no more of a changed
    one), made when compared from a new IbFabric (this one, of 10^5 nodes, is not kept for it)."""
    size = _topology_size(ib)
    if size is None:
        return _joined(_topology(ib))
    return Sized(size, lambda: _topology(IbFabric(f, name, guids)))
