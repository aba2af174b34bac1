"""The physical stage of the acceptance plan (stage 0, before perftest): per cabled data link of a
scale-out fabric, both of its ends, each with the part that belongs in that cage and the limits its
readings must meet.

What each end is read with:

* a host NIC port (InfiniBand or RoCE): ``mlxlink -d <rdma device> -p 1 -m -c -e --json`` on the
  host (module part number and DOM, pre- and post-FEC BER, symbol errors, link-down count);
* an InfiniBand switch port: one ``ibdiagnet`` run per fabric (its ``ibdiagnet2.db_csv``: cable
  part numbers, PM counters), the port by its IB port number;
* a SONiC switch port: ``show interfaces transceiver eeprom --dom`` (part number, Rx power,
  temperature) and ``show interfaces counters fec-stats`` (pre/post-FEC BER, symbol errors) on the
  switch, the port by its SONiC name.

The expected part is what the bill of materials orders for that cage (``facts/bom.py``): the
optical module at each end of a transceiver link (``a_module`` / ``b_module``), the cable's own part
at both ends of a DAC / ACC / AOC (its EEPROM reports the assembly's part number), "" where the BOM
orders a generic part (nothing exact to compare). Limits come from ``catalog/data/link_health.yaml``:
pre-FEC BER by lane rate, post-FEC BER by transport, symbol errors and link-downs, and for optical
modules the Rx power range of their optical interface and the case temperature.

Columns, not objects: a fabric of 10^6 links has 2 x 10^6 ends, built in one pass over its links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..catalog.host_topology import host_topologies
from ..catalog.link_health import link_health
from ..catalog.parts import medium_part, module_part, ordered_length
from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..model.blueprint import Blueprint
from .acceptance_plan import label_maker
from .hosts import rdma_names
from .sonic_ports import sonic_ports

TOOLS = ("mlxlink", "ibdiagnet", "sonic")
EXACT = ("module", "cable")  # part kinds with an exact part number


# One (device model, port)'s cells: the tool, the OS name (the RDMA device, the SONiC interface),
# the IB port number (InfiniBand: a switch's data ports in catalogue order, from 1; an HCA's: 1;
# else ""), the port as printed at the cage.
PortCells = tuple[str, str, str, str]
# One (link spec, length, end)'s cells: the expected vendor part number ("" = any), its kind
# (module | cable: exact part numbers; family: a part-number prefix; generic | integrated | none),
# the pmd, the FEC, and the figures: lane rate, lanes, pre- and post-FEC BER limits, Rx power
# range, case temperature (None: no limit).
PartCells = tuple[str, str, str, str, float, int, "float | None", "float | None", "float | None", "float | None", "float | None"]


@dataclass(slots=True)
class PhysicalPlan:
    """One fabric's link ends, column by column: two rows per link (in cable-ID order), end a
    first. What repeats across thousands of ends (a model's port, a spec's part and limits, a
    port's module lanes) is a code into a small table, each entry decided once."""

    fabric: str
    transport: str
    cable: list[str] = field(default_factory=list)  # per link
    label: list[str] = field(default_factory=list)  # per link
    device: list[int] = field(default_factory=list)  # per end, as every column below: into ``names``
    peer: list[int] = field(default_factory=list)  # into ``names``
    names: list[str] = field(default_factory=list)  # every device's name, by index
    port: list[int] = field(default_factory=list)  # into ``ports``: the end's (model, port)
    peer_port: list[int] = field(default_factory=list)  # into ``ports``: the peer end's
    part: list[int] = field(default_factory=list)  # into ``parts``
    # into ``module_lanes``: the module lanes of this port ("5-8": the second port of a twin-port
    # module), 1-based: a DOM read reports every lane of the module, the port's own are these.
    lanes: list[int] = field(default_factory=list)
    ports: list[PortCells] = field(default_factory=list)
    parts: list[PartCells] = field(default_factory=list)
    module_lanes: list[str] = field(default_factory=list)
    symbol_errors_max: int = 0
    link_down_max: int = 0
    # A plan of some links only (``keep``): (ends, ends per tool, ends with an exact part) of all
    # the fabric's links, which the summaries report; None when the rows are every link's.
    whole: tuple[int, dict[str, int], int] | None = None

    def __len__(self) -> int:
        return len(self.device)

    def ends(self) -> int:
        """The fabric's link ends (those of a plan of some links only too)."""
        return self.whole[0] if self.whole is not None else len(self)

    def counts(self) -> dict[str, int]:
        """Ends per tool (for the checklist and the script's summary)."""
        if self.whole is not None:
            return dict(self.whole[1])
        out = dict.fromkeys(TOOLS, 0)
        for code, n in enumerate(np.bincount(np.asarray(self.port, dtype=np.int64), minlength=len(self.ports)).tolist()):
            if n:
                tool = self.ports[code][0]
                out[tool] = out.get(tool, 0) + n
        return out

    def exact_parts(self) -> int:
        """Ends whose expected part is an exact part number (a module's or a cable's)."""
        if self.whole is not None:
            return self.whole[2]
        counts = np.bincount(np.asarray(self.part, dtype=np.int64), minlength=len(self.parts)).tolist()
        return sum(n for code, n in enumerate(counts) if self.parts[code][1] in EXACT)


def physical_fabrics(f: Fabric) -> list[str]:
    """The scale-out fabrics (InfiniBand or Ethernet) whose links the physical stage reads."""
    return [n for n, facts in f.facts.items() if "kind" in facts and facts.get("transport") in ("infiniband", "ethernet")]


def physical_plan(
    f: Fabric,
    bp: Blueprint,
    catalogue: Catalogue,
    fabric: str,
    keep: Any = None,
    label_of: Callable[[Iterable[int]], list[str]] | None = None,
) -> PhysicalPlan:
    """The fabric's link ends; with ``keep`` (a bool per link position: ``snc diff``'s rows that
    may differ), the rows of those links only, and the counts of all in ``whole``; ``label_of``:
    the labels of links by position (acceptance_plan.label_maker's, or ones it kept)."""
    transport = str(f.facts[fabric].get("transport", ""))
    health = link_health()
    out = PhysicalPlan(fabric, transport, symbol_errors_max=health.symbol_errors_max, link_down_max=health.link_down_max)
    t = f.links
    ids = t.ids()
    positions = sorted(t.indices_of(fabric), key=ids.__getitem__)  # in cable-ID order, as cables.csv
    if not positions:
        return out
    every = positions
    if keep is not None:
        positions = [i for i, k in zip(positions, keep[positions].tolist(), strict=True) if k]
    labels = (label_of or label_maker(f, bp))(positions)
    devices, layouts, models = f.devices, f.layouts, f.models
    topologies, _ = host_topologies(bp.catalogue.host_topology)
    rdma = rdma_names(f, topologies)
    post = health.post_fec_ber.get(transport)
    infiniband = transport == "infiniband"
    switch_tool = "ibdiagnet" if infiniband else "sonic"
    specs = t.specs
    media, modules = catalogue.media, catalogue.transceivers

    def expected(s: int, length: float, end: str) -> tuple[str, str, str]:
        """(part number or "", its kind, the module's pmd) for one end of a link of spec ``s``."""
        spec = specs[s]
        m = media.get(spec.medium)
        if m is None:
            return ("", "none", "")
        if m.shape == "transceiver":
            module = modules.get(spec.a_module if end == "a" else spec.b_module)
            if module is None:
                return ("", "none", "")
            if module.integrated:
                return ("", "integrated", module.pmd)
            ref = module_part(module)
            exact = ref.status == "exact"
            return (ref.number if exact else "", "module" if exact else "generic", module.pmd)
        if m.shape in ("straight", "splitter"):
            ref = medium_part(catalogue, spec.medium, ordered_length(catalogue, spec.medium, length))
            if ref.status == "exact":
                return (ref.number, "cable", "")
            if ref.status == "family":  # "MCP4Y10-N 2 m": the EEPROM's part number starts with the family's
                return (ref.number.rsplit(" ", 2)[0], "family", "")
            return ("", "generic", "")
        return ("", "none", "")

    if keep is not None:
        out.whole = _whole(f, every, transport, expected)
        if not positions:
            return out

    arr = t.arrays()
    pos = np.asarray(positions, dtype=np.int64)
    n = len(pos)
    A, AP, B, BP, S, L = arr.a[pos], arr.a_port[pos], arr.b[pos], arr.b_port[pos], arr.spec[pos], arr.length_m[pos]

    def both(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """End a's and end b's values interleaved: two rows per link, end a first."""
        merged = np.empty(2 * n, dtype=a.dtype)
        merged[0::2] = a
        merged[1::2] = b
        return merged

    # Per model: its tool, its OS port names (SONiC names where a port map says so), its IB port
    # numbers as text (data ports in catalogue order, from 1; an HCA's: 1), its printed names: one
    # table of every (model, port), each model's ports from its offset.
    ports: list[PortCells] = []
    position: list[int] = []  # each (model, port)'s cage position (module lanes)
    offset_of: dict[str, int] = {}
    for model in sorted({devices[x].model for x in np.unique(np.concatenate((A, B))).tolist()}):
        layout = layouts[model]
        switch = models[model].kind == "switch"
        names = list(layout.names)
        port_map = catalogue.port_maps.get(model)
        if switch and transport == "ethernet" and port_map is not None:
            sonic = sonic_ports(layout, port_map)
            names = [p.name if p is not None else names[k] for k, p in enumerate(sonic.ports)]
        elif not switch:
            names = rdma[model]
        if not infiniband:
            ib_text = [""] * layout.total
        elif switch:
            ib_number = {p: k + 1 for k, p in enumerate(layout.ports_of("data"))}
            ib_text = [str(ib_number.get(p, "")) for p in range(layout.total)]
        else:
            ib_text = ["1"] * layout.total
        tool = switch_tool if switch else "mlxlink"
        offset_of[model] = len(ports)
        ports += [(tool, names[p], ib_text[p], layout.physical_names[p]) for p in range(layout.total)]
        position += [layout.port_positions[p] for p in range(layout.total)]
    offset = np.array([offset_of.get(d.model, -1) for d in devices], dtype=np.int64)
    dev, peer = both(A, B), both(B, A)
    port = offset[dev] + both(AP, BP)
    peer_port = offset[peer] + both(BP, AP)
    # Per (spec, length) and end: the expected part with its limits, decided once.
    lengths, length_at = np.unique(L, return_inverse=True)
    pairs, which = np.unique(S * len(lengths) + length_at.reshape(-1), return_inverse=True)
    distinct = zip(pairs // len(lengths), lengths[pairs % len(lengths)].tolist(), strict=True)
    lane_of = [spec.lane_gbps for spec in specs]
    lanes_of = [spec.lanes for spec in specs]
    parts: list[PartCells] = []
    code_of: dict[PartCells, int] = {}  # a handful of distinct parts and limits: lengths differ, they mostly do not
    codes: list[int] = []  # per (spec, length) of ``pairs`` and end
    for s, length in distinct:
        s = int(s)
        sig = health.signalling_at(lane_of[s])
        fec, pre = (sig.fec, sig.pre_fec_ber) if sig is not None else ("", None)
        for end in ("a", "b"):
            number, kind, pmd = expected(s, length, end)
            optical = kind in ("module", "generic")
            rx = health.rx_power.get(pmd) if optical else None
            cells: PartCells = (
                number,
                kind,
                pmd,
                fec,
                lane_of[s],
                lanes_of[s],
                pre,
                post,
                rx.min_dbm if rx is not None else None,
                rx.max_dbm if rx is not None else None,
                health.temperature_c_max if optical else None,
            )
            code = code_of.get(cells)
            if code is None:
                code = code_of[cells] = len(parts)
                parts.append(cells)
            codes.append(code)
    table = np.asarray(codes, dtype=np.int64)
    part = both(table[2 * which.reshape(-1)], table[2 * which.reshape(-1) + 1])
    # Module lanes: the port's cage position times the spec's lanes, from 1 ("5-8").
    lanes = np.asarray(lanes_of, dtype=np.int64)[both(S, S)]
    first = np.asarray(position, dtype=np.int64)[port] * lanes + 1
    wide = int(lanes.max()) + 1
    spans, span = np.unique(first * wide + lanes, return_inverse=True)
    cables = [ids[i] for i in positions]
    devs, peers = dev.tolist(), peer.tolist()
    out.cable, out.label = cables, labels
    out.device, out.peer, out.names = devs, peers, [d.name for d in devices]
    out.port, out.peer_port, out.part = port.tolist(), peer_port.tolist(), part.tolist()
    out.lanes = span.reshape(-1).tolist()
    out.ports, out.parts = ports, parts
    out.module_lanes = [f"{a}-{a + k - 1}" for a, k in zip((spans // wide).tolist(), (spans % wide).tolist(), strict=True)]
    return out


def _whole(
    f: Fabric, positions: list[int], transport: str, expected: Callable[[int, float, str], tuple[str, str, str]]
) -> tuple[int, dict[str, int], int]:
    """(ends, ends per tool, ends with an exact part) of the links at ``positions``, by arrays:
    the counts a plan of every link gives, without its rows."""
    arr = f.links.arrays()
    pos = np.asarray(positions, dtype=np.int64)
    switch = np.array([f.models[d.model].kind == "switch" for d in f.devices], dtype=bool)
    on_switch = int(switch[arr.a[pos]].sum() + switch[arr.b[pos]].sum())
    tools = dict.fromkeys(TOOLS, 0)
    tools["mlxlink"] = 2 * len(pos) - on_switch
    tools["ibdiagnet" if transport == "infiniband" else "sonic"] = on_switch
    # The expected part is one per (spec, length, end): count the links of each (spec, length).
    spec, length = arr.spec[pos], arr.length_m[pos]
    order = np.lexsort((length, spec))
    spec, length = spec[order], length[order]
    starts = np.flatnonzero(np.concatenate(([True], (spec[1:] != spec[:-1]) | (length[1:] != length[:-1]))))
    sizes = np.diff(np.concatenate((starts, [len(spec)])))
    exact = 0
    for s, m, n in zip(spec[starts].tolist(), length[starts].tolist(), sizes.tolist()):
        exact += n * sum(1 for end in ("a", "b") if expected(s, m, end)[1] in EXACT)
    return 2 * len(pos), tools, exact
