"""NCCL topology files and environment, per node type (snc render: nccl/).

NCCL discovers PCIe and NVLink inside a host but not the network, and cannot see an NVLink
switch in another tray. For every host model with a PCI/NUMA layout in the catalogue
(``catalog/data/host_topology.yaml``) this writes:

* ``nccl/<model>.xml``: the topology file (``NCCL_TOPO_FILE``) in the dialect NCCL's own parser
  accepts (src/graph/xml.cc: no prolog, spaces only, one tag per line, at most 16 attributes per
  element and 256 elements): CPUs with NUMA id, affinity and CPU ids; PCIe switches; GPUs with
  their NVLinks (to each on-board NVSwitch by bus id, or to NCCL's remote-switch sentinel when
  the switches sit in other trays); NICs with their ``net`` (name, dev, speed, port, gdr).
  NIC ``dev`` numbers follow the rails the NICs are cabled to, read from the Fabric. Written only
  for layouts whose bus ids are a bare-metal host's (``busids: bare-metal``): NCCL keeps a file's
  GPUs and PCI tree only where the running host has those bus ids, so a VM's ids or placeholders
  would be trimmed and mix with what it probes; the other layouts get the env file alone, with a
  notice. ``<net>`` carries what NCCL's loader reads from a file and does not take from the
  network plugin (src/graph/topo.cc ncclTopoPopulateNics / ncclTopoAddNet): name (how NCCL finds
  the entry), dev, speed, port, gdr. Not rail/plane: NCCL derives them itself and refuses a file
  whose values differ from its own ("Inconsistent rail/plane"); not guid: NCCL overwrites it.
* ``nccl/<model>.env``: the environment the design implies (``NCCL_TOPO_FILE`` where there is a
  file, ``NCCL_IB_HCA`` in rail order with the host's RDMA device names and NCCL's ``=`` exact-match
  prefix, ``NCCL_CROSS_NIC``, the RoCE traffic class, the multi-node NVLink settings).

Hosts whose accelerators are not NVIDIA's get no NCCL files; a notice names the collective
library their vendor's entry in ``catalog/data/collectives.yaml`` gives (RCCL for AMD: their
environment is ``rccl/<model>.env``, outputs/rccl.py), or says that the catalogue knows none.

Hosts of one model whose NICs are cabled to the rails in a different order (or with different
NICs cabled) get a file of their own, ``nccl/<model>-<k>.xml``; ``nccl/hosts.tsv`` names the
files of every host. GUIDs are left out: they belong to each NIC and NCCL reads them itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..catalog.collectives import model_figures
from ..catalog.host_topology import HostTopology, host_topologies, layout_problems
from ..facts.hosts import Hosts, cached_host_facts
from ..facts.imex import imex_domains
from ..model.blueprint import built_fabrics
from ..util.shell import assignment, comment_text
from ..util.templating import render_template
from .base import RENDERERS, Artifacts, RenderContext
from .csv_safe import tsv_line

# nccl/hosts.tsv: which files a host takes, and its NICs in NCCL dev order as RDMA name=printed port.
HOSTS_COLUMNS = ("host", "model", "topology_file", "env_file", "nics")

# Where the env files point NCCL_TOPO_FILE; operators copy nccl/*.xml there.
TOPO_DIR = "/etc/nccl/topo"
# NCCL's target for an NVLink whose switch is not visible from the host (xml.cc, real dumps).
REMOTE_NVSWITCH = "fffffff:ff:ff.0"
NVSWITCH_CLASS = "0x068000"
PCI_BRIDGE_CLASS = "0x060400"
# Parser limits (src/graph/xml.h, topo.h): a generated file must stay within them.
MAX_ATTRS = 16
MAX_NODES = 256


@dataclass(frozen=True, slots=True)
class El:
    """An element of NCCL's XML: name, attributes in order, children."""

    name: str
    attrs: tuple[tuple[str, str], ...] = ()
    children: tuple[El, ...] = ()

    def count(self) -> int:
        return 1 + sum(c.count() for c in self.children)


def _attr(value: object) -> str:
    text = str(value)
    # NCCL's tokenizer knows no entities and no escapes: a quote or angle bracket would end or break the tag.
    if any(ch in text for ch in "\"'<>&\n\r\t") or len(text) > 255:
        raise ValueError(f"value {text!r} cannot be written in NCCL's XML dialect")
    return text


def dump(root: El) -> str:
    """NCCL's dialect: 2-space indent, one tag per line, single spaces, no prolog."""
    lines: list[str] = []

    def walk(el: El, depth: int) -> None:
        if len(el.attrs) > MAX_ATTRS:
            raise ValueError(f"<{el.name}> has {len(el.attrs)} attributes; NCCL reads {MAX_ATTRS}")
        attrs = "".join(f' {k}="{_attr(v)}"' for k, v in el.attrs)
        pad = "  " * depth
        if el.children:
            lines.append(f"{pad}<{el.name}{attrs}>")
            for c in el.children:
                walk(c, depth + 1)
            lines.append(f"{pad}</{el.name}>")
        else:
            lines.append(f"{pad}<{el.name}{attrs}/>")

    if root.count() > MAX_NODES:
        raise ValueError(f"{root.count()} elements; NCCL's parser takes {MAX_NODES}")
    walk(root, 0)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class NicPlan:
    """The cabled NICs of a host in NCCL order: (data port index in role order, OS name, rail, Gb/s)."""

    nics: tuple[tuple[int, str, int | None, float], ...]

    def dev_of(self) -> dict[int, int]:
        return {j: dev for dev, (j, _n, _r, _g) in enumerate(self.nics)}


def nic_plan(hosts: Hosts, host: int, topo: HostTopology | None = None) -> NicPlan:
    """The host's cabled data ports on every scale-out fabric, ordered by rail (then port); names
    are the RDMA device names (the layout's ``rdma_device`` when the port is named after its netdev)."""
    f = hosts.fabric
    model = f.devices[host].model
    layout = f.layouts[model]
    data = layout.ports_of("data")
    index = {p: j for j, p in enumerate(data)}
    rdma = topo.rdma_names([layout.names[p] for p in data]) if topo is not None else None
    found: dict[int, tuple[int, str, int | None, float]] = {}
    for fh in hosts.fabrics.values():
        for n in fh.nics.get(host, ()):
            j = index[n.port]
            found.setdefault(n.port, (j, rdma[j] if rdma is not None else n.name, n.rail, n.gbps))
    order = sorted(found.values(), key=lambda x: (x[2] is None, x[2] if x[2] is not None else 0, x[0]))
    return NicPlan(tuple(order))


def _pci(busid: str, pci_class: str, ids: list[tuple[str, str | None]], speed: str, width: int, children: tuple) -> El:
    attrs = [("busid", busid), ("class", pci_class)]
    attrs += [(k, v) for k, v in ids if v is not None]
    attrs += [("link_speed", speed), ("link_width", str(width))]
    return El("pci", tuple(attrs), children)


def topology_xml(topo: HostTopology, internal_links: list[int], gpu_links: int, plan: NicPlan) -> str:
    """The topology file of one host layout and NIC order."""
    g, n = topo.gpu, topo.nic
    dev_of = plan.dev_of()
    speeds = {j: gbps for j, _name, _rail, gbps in plan.nics}
    names = {j: name for j, name, _rail, _gbps in plan.nics}

    def gpu_el(i: int, busid: str) -> El:
        if g.nvlink == "switches":
            links = tuple(
                El("nvlink", (("target", b), ("count", str(c)), ("tclass", NVSWITCH_CLASS)))
                for b, c in zip(g.nvswitch_busids, internal_links, strict=True)
            )
        elif g.nvlink == "remote":
            links = (El("nvlink", (("target", REMOTE_NVSWITCH), ("count", str(gpu_links)), ("tclass", NVSWITCH_CLASS))),)
        else:
            links = ()
        if g.c2c is not None:
            links += (El("c2c", (("bw", str(g.c2c.bw)), ("count", str(g.c2c.count)))),)
        gpu = El("gpu", (("dev", str(i)), ("sm", str(g.sm)), ("rank", str(i)), ("gdr", "1")), links)
        ids = [("vendor", g.vendor), ("device", g.device), ("subsystem_vendor", g.subsystem_vendor)]
        ids.append(("subsystem_device", g.subsystem_device))
        return _pci(busid, g.pci_class, ids, g.link_speed, g.link_width, (gpu,))

    def nic_el(j: int, busid: str) -> El:
        net = El(
            "net",
            (
                ("name", names[j]),
                ("dev", str(dev_of[j])),
                ("speed", str(round(speeds[j] * 1000))),  # Mb/s
                ("port", str(n.port)),
                ("gdr", "1"),
            ),
        )
        ids = [("vendor", n.vendor), ("device", n.device)]
        return _pci(busid, n.pci_class, ids, n.link_speed, n.link_width, (El("nic", (), (net,)),))

    def ends(devices: list) -> tuple[El, ...]:
        out = []
        # NICs before GPUs under a switch, as NCCL's own dumps list them.
        for d in sorted(devices, key=lambda d: (d.gpu is not None, d.nic if d.nic is not None else d.gpu)):
            if d.gpu is not None:
                out.append(gpu_el(d.gpu, d.busid))
            elif d.nic in dev_of:  # NICs not cabled to a fabric are left out (NCCL_IB_HCA leaves them out too)
                out.append(nic_el(d.nic, d.busid))
        return tuple(out)

    cpus = []
    for cpu in topo.cpus:
        attrs = [("numaid", str(cpu.numaid)), ("affinity", cpu.affinity), ("arch", cpu.arch)]
        if cpu.vendor is not None:
            attrs.append(("vendor", cpu.vendor))
        if cpu.familyid is not None:
            attrs.append(("familyid", str(cpu.familyid)))
        if cpu.modelid is not None:
            attrs.append(("modelid", str(cpu.modelid)))
        children = []
        for sw in cpu.switches:
            below = ends(sw.devices)
            if below:
                ids = [("vendor", sw.vendor), ("device", sw.device)]
                children.append(_pci(sw.busid, PCI_BRIDGE_CLASS, ids, sw.link_speed, sw.link_width, below))
        children.extend(ends(cpu.direct))
        cpus.append(El("cpu", tuple(attrs), tuple(children)))
    return dump(El("system", (("version", "1"),), tuple(cpus)))


@dataclass
class Variant:
    model: str
    plan: NicPlan
    hosts: list[int]
    stem: str = ""


def variants(hosts: Hosts, topologies: dict[str, HostTopology]) -> list[Variant]:
    """Hosts grouped by model and NIC plan; the largest group of a model takes the plain name."""
    groups: dict[tuple[str, NicPlan], list[int]] = {}
    models = set()
    for h in hosts.hosts:
        model = hosts.fabric.devices[h].model
        if model in topologies:
            models.add(model)
            groups.setdefault((model, nic_plan(hosts, h, topologies[model])), []).append(h)
    out: list[Variant] = []
    for model in sorted(models):
        mine = sorted(((p, hs) for (m, p), hs in groups.items() if m == model), key=lambda x: (-len(x[1]), x[1][0]))
        for k, (plan, hs) in enumerate(mine):
            out.append(Variant(model, plan, hs, model if k == 0 else f"{model}-{k + 1}"))
    return out


def _imex_names(ctx: RenderContext) -> set[str]:
    """The NVLink domain instances whose imex/<domain>/nodes_config.cfg is written (made once)."""
    found = ctx.memo.get("imex_names")
    if found is None:
        found = ctx.memo["imex_names"] = {d.name for d in imex_domains(ctx.blueprint, ctx.fabric) if d.trays}
    return found


def roce_dscps(ctx: RenderContext, fabrics: list) -> list[tuple[str, int]]:
    """(fabric, RoCE DSCP) of each fabric with a lossless class, for the env files' NCCL_IB_TC
    (NCCL's and RCCL's alike). Plain Ethernet (no lossless class, as the docs allow) sets none."""
    out = []
    for fh in fabrics:
        spec = next((s for _, s, n in built_fabrics(ctx.blueprint) if n == fh.name), None)
        eth = getattr(spec, "ethernet", None)
        if eth is not None and eth.lossless is not None:
            out.append((fh.name, eth.lossless.roce_dscp))
    return out


def _env(ctx: RenderContext, hosts: Hosts, v: Variant, topo: HostTopology, with_file: bool) -> str:
    f = ctx.fabric
    first = v.hosts[0]
    fabrics = [fh for fh in hosts.fabrics.values() if first in fh.nics]
    rail_optimized = bool(fabrics) and all(fh.rail_optimized for fh in fabrics)
    tcs = roce_dscps(ctx, fabrics)
    domain = hosts.domain.get(first)
    multi_node = domain is not None and len(hosts.domain_hosts.get(domain, ())) > 1 and topo.gpu.nvlink == "remote"
    return render_template(
        "nccl.env.j2",
        blueprint=ctx.blueprint.metadata.name,
        model=v.model,
        stem=v.stem,
        hosts=len(v.hosts),
        topo_file=f"{TOPO_DIR}/{v.stem}.xml" if with_file else "",
        busids=topo.busids,
        hca=",".join(f"{name}:{topo.nic.port}" for _j, name, _r, _g in v.plan.nics),
        nics=[(n[1], n[2], port, gpu) for n, (port, gpu) in zip(v.plan.nics, _placed(ctx, v, topo), strict=True)],
        fabrics=[fh.name for fh in fabrics],
        rail_optimized=rail_optimized,
        roce=tcs,
        multi_node=multi_node,
        domain_gpus=hosts.domain_accelerators.get(domain, 0) if domain else 0,
        domain_kind=hosts.domain_kind.get(domain, "") if domain else "",
        imex=multi_node and domain is not None and domain in _imex_names(ctx),
        transport=sorted({fh.transport for fh in fabrics}),
        gpus=accelerators.count if (accelerators := f.models[v.model].accelerators) else 0,
        # Every variable through assign (checked key, quoted value), every value in a comment through c.
        assign=assignment,
        c=comment_text,
    )


def _placed(ctx: RenderContext, v: Variant, topo: HostTopology) -> list[tuple[str, int | None]]:
    """Each NIC of a variant in NCCL order: its printed port (cage and position on the
    faceplate, issue 8's physical model) and the GPU beside it in the host layout."""
    layout = ctx.fabric.layouts[v.model]
    data = layout.ports_of("data")
    gpu_of = topo.gpu_of_nic()
    return [(layout.physical_name(data[j]), gpu_of.get(j)) for j, _n, _r, _g in v.plan.nics]


def _gpu_links(ctx: RenderContext, model: str) -> tuple[list[int], int]:
    m = ctx.fabric.models[model]
    internal = list(m.internal_scaleup.links_per_chip) if m.internal_scaleup else []
    return internal, m.accelerators.links if m.accelerators else 0


def usable(ctx: RenderContext, topologies: dict[str, HostTopology]) -> dict[str, HostTopology]:
    """Layouts that fit their device model (the host-topology check reports the others)."""
    return {
        name: topo
        for name, topo in topologies.items()
        if name in ctx.fabric.models and not layout_problems(ctx.fabric.models[name], topo)
    }


@RENDERERS.register("nccl")
def render_nccl(ctx: RenderContext) -> Artifacts:
    hosts = cached_host_facts(ctx.fabric, ctx.blueprint)
    topologies, _ = host_topologies(ctx.blueprint.catalogue.host_topology)
    figures = model_figures()
    libraries: dict[str, str] = {}  # host model -> its accelerators' collective library, where not NCCL
    for model in sorted({ctx.fabric.devices[h].model for h in hosts.hosts}):
        acc = ctx.fabric.models[model].accelerators
        vendor = figures.vendor_of(acc.model) if acc is not None else None
        if vendor is None or vendor.library != "NCCL":
            libraries[model] = vendor.library if vendor is not None else ""
    fits = {m: t for m, t in usable(ctx, topologies).items() if m not in libraries}
    used = {ctx.fabric.devices[h].model for h in hosts.hosts} - libraries.keys()
    out: Artifacts = {}
    rows: list[str] = []
    envs_only: set[str] = set()
    for v in variants(hosts, fits):
        topo = fits[v.model]
        with_file = topo.busids == "bare-metal"
        if with_file:
            internal, links = _gpu_links(ctx, v.model)
            out[f"nccl/{v.stem}.xml"] = topology_xml(topo, internal, links, v.plan).encode()
        else:
            envs_only.add(v.model)
        out[f"nccl/{v.stem}.env"] = _env(ctx, hosts, v, topo, with_file).encode()
        # The NICs in NCCL dev order with their printed ports: the same for every host of a variant.
        placed = _placed(ctx, v, topo)
        nics = ";".join(f"{n[1]}={port}" for n, (port, _gpu) in zip(v.plan.nics, placed, strict=True))
        tail = tsv_line((v.model, f"{v.stem}.xml" if with_file else "", f"{v.stem}.env", nics))
        rows.extend(tsv_line((ctx.fabric.devices[h].name,)) + "\t" + tail for h in v.hosts)
    if rows:
        rows.sort()
        out["nccl/hosts.tsv"] = ("\n".join([tsv_line(HOSTS_COLUMNS), *rows]) + "\n").encode()
    notes = []
    missing = sorted(used - fits.keys())
    if missing:
        notes.append(
            f"no NCCL files for {', '.join(missing)}: no host layout in catalog/data/host_topology.yaml "
            "(add one under catalogue: host_topology:)"
        )
    for model in sorted(envs_only):
        notes.append(
            f"no NCCL topology file for {model}: the catalogue's layout has {fits[model].busids} PCI bus ids, which "
            f"match no bare-metal host (NCCL would trim them); nccl/{model}.env alone (NCCL probes the PCI tree). "
            f"Give your hosts' ids under catalogue: host_topology: {model}: with busids: bare-metal for a file"
        )
    for model, library in sorted(libraries.items()):
        acc = ctx.fabric.models[model].accelerators
        what = acc.model if acc is not None else model
        notes.append(
            (
                f"no NCCL files for {model}: its accelerators ({what}) use {library}, not NCCL"
                + ("; its environment is rccl/ (snc render --only rccl)" if library == "RCCL" else "")
            )
            if library
            else f"no NCCL files for {model}: its accelerators ({what}) are not NVIDIA's and the catalogue names no "
            "collective library for them (catalog/data/collectives.yaml vendors); set up the vendor's own collective library"
        )
    if notes:
        out["notice:nccl"] = "; ".join(notes).encode()
    return out


def iter_files(artifacts: Artifacts) -> Iterator[tuple[str, str]]:
    """(path, text) of the topology files among rendered artifacts (for tests and tools)."""
    for path, data in sorted(artifacts.items()):
        if path.startswith("nccl/") and path.endswith(".xml"):
            yield path, data.decode()
