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

from collections import Counter
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


@dataclass(slots=True)
class PhysicalPlan:
    """One fabric's link ends, column by column (index-aligned; two rows per link, end a first)."""

    fabric: str
    transport: str
    cable: list[str] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    end: list[str] = field(default_factory=list)  # a | b
    device: list[str] = field(default_factory=list)
    tool: list[str] = field(default_factory=list)  # mlxlink | ibdiagnet | sonic
    port: list[str] = field(default_factory=list)  # OS name: the RDMA device, the SONiC interface
    # InfiniBand only: the IB port number (a switch's data ports in catalogue order, from 1; an HCA's: 1)
    ib_port: list[str] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)  # the port as printed at the cage
    peer: list[str] = field(default_factory=list)
    peer_printed: list[str] = field(default_factory=list)
    part: list[str] = field(default_factory=list)  # expected vendor part number; "" = any
    # module | cable (exact part numbers) | family (a part-number prefix) | generic | integrated | none
    part_kind: list[str] = field(default_factory=list)
    pmd: list[str] = field(default_factory=list)
    lane_gbps: list[float] = field(default_factory=list)
    lanes: list[int] = field(default_factory=list)
    # The module lanes of this port ("5-8": the second port of a twin-port module), 1-based: a DOM
    # read reports every lane of the module, the port's own are these.
    module_lanes: list[str] = field(default_factory=list)
    fec: list[str] = field(default_factory=list)
    pre_fec_ber_max: list[float | None] = field(default_factory=list)
    post_fec_ber_max: list[float | None] = field(default_factory=list)
    rx_dbm_min: list[float | None] = field(default_factory=list)
    rx_dbm_max: list[float | None] = field(default_factory=list)
    temp_c_max: list[float | None] = field(default_factory=list)
    symbol_errors_max: int = 0
    link_down_max: int = 0
    # A plan of some links only (``keep``): (ends, ends per tool, ends with an exact part) of all
    # the fabric's links, which the summaries report; None when the rows are every link's.
    whole: tuple[int, dict[str, int], int] | None = None

    def __len__(self) -> int:
        return len(self.cable)

    def ends(self) -> int:
        """The fabric's link ends (those of a plan of some links only too)."""
        return self.whole[0] if self.whole is not None else len(self)

    def counts(self) -> dict[str, int]:
        """Ends per tool (for the checklist and the script's summary)."""
        if self.whole is not None:
            return dict(self.whole[1])
        out = dict.fromkeys(TOOLS, 0)
        out.update(Counter(self.tool))
        return out

    def exact_parts(self) -> int:
        """Ends whose expected part is an exact part number (a module's or a cable's)."""
        if self.whole is not None:
            return self.whole[2]
        return sum(1 for k in self.part_kind if k in EXACT)


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
    # The ends' device and port columns (end a of every link, then end b).
    A = [t.a[i] for i in positions]
    AP = [t.a_port[i] for i in positions]
    B = [t.b[i] for i in positions]
    BP = [t.b_port[i] for i in positions]
    S = [t.spec[i] for i in positions]
    L = [t.length_m[i] for i in positions]
    # Per model: its tool, its OS port names (SONiC names where a port map says so), its IB port
    # numbers as text (data ports in catalogue order, from 1; an HCA's: 1), its printed names.
    tool_of: dict[str, str] = {}
    os_names: dict[str, list[str]] = {}
    ib_text: dict[str, list[str]] = {}
    for model in {devices[x].model for x in (*A, *B)}:
        layout = layouts[model]
        switch = models[model].kind == "switch"
        tool_of[model] = switch_tool if switch else "mlxlink"
        names = list(layout.names)
        port_map = catalogue.port_maps.get(model)
        if switch and transport == "ethernet" and port_map is not None:
            sonic = sonic_ports(layout, port_map)
            names = [p.name if p is not None else names[k] for k, p in enumerate(sonic.ports)]
        elif not switch:
            names = rdma[model]
        os_names[model] = names
        if not infiniband:
            ib_text[model] = [""] * layout.total
        elif switch:
            number = {p: k + 1 for k, p in enumerate(layout.ports_of("data"))}
            ib_text[model] = [str(number.get(p, "")) for p in range(layout.total)]
        else:
            ib_text[model] = ["1"] * layout.total
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

    # Per (spec, length) and end: the expected part with its limits, decided once.
    Limits = tuple[str, str, str, float | None, float | None, float | None]
    found: dict[tuple[int, float, str], Limits] = {}

    def limits(s: int, length: float, end: str) -> Limits:
        number, kind, pmd = expected(s, length, end)
        optical = kind in ("module", "generic")
        rx = health.rx_power.get(pmd) if optical else None
        got = found[(s, length, end)] = (
            number,
            kind,
            pmd,
            rx.min_dbm if rx is not None else None,
            rx.max_dbm if rx is not None else None,
            health.temperature_c_max if optical else None,
        )
        return got

    get = found.get
    per_a = [get((s, x, "a")) or limits(s, x, "a") for s, x in zip(S, L, strict=True)]
    per_b = [get((s, x, "b")) or limits(s, x, "b") for s, x in zip(S, L, strict=True)]
    # Per spec: lane rate, lanes, FEC and pre-FEC limit by lane rate.
    lane_of = [spec.lane_gbps for spec in specs]
    lanes_of = [spec.lanes for spec in specs]
    fec_of: dict[int, str] = {}
    pre_of: dict[int, float | None] = {}
    for s in set(S):
        sig = health.signalling_at(lane_of[s])
        fec_of[s], pre_of[s] = (sig.fec, sig.pre_fec_ber) if sig is not None else ("", None)
    name_of = [d.name for d in devices]
    model_of = [d.model for d in devices]
    printed_of = {m: layouts[m].physical_names for m in os_names}
    spans: dict[tuple[int, int], str] = {}

    def module_lanes(x: int, p: int, s: int) -> str:
        lanes = lanes_of[s]
        first = layouts[model_of[x]].port_positions[p] * lanes + 1
        key = (first, lanes)
        text = spans.get(key)
        if text is None:
            text = spans[key] = f"{first}-{first + lanes - 1}"
        return text

    def both(a: list, b: list) -> list:
        """End a's and end b's values interleaved: two rows per link, end a first."""
        merged = [None] * (2 * len(a))
        merged[0::2] = a
        merged[1::2] = b
        return merged

    models_a = [model_of[x] for x in A]
    models_b = [model_of[x] for x in B]
    names_a = [name_of[x] for x in A]
    names_b = [name_of[x] for x in B]
    printed_a = [printed_of[m][p] for m, p in zip(models_a, AP, strict=True)]
    printed_b = [printed_of[m][p] for m, p in zip(models_b, BP, strict=True)]
    cables = [ids[i] for i in positions]
    out.cable = both(cables, cables)
    out.label = both(labels, labels)
    out.end = ["a", "b"] * len(positions)
    out.device = both(names_a, names_b)
    out.tool = both([tool_of[m] for m in models_a], [tool_of[m] for m in models_b])
    out.port = both(
        [os_names[m][p] for m, p in zip(models_a, AP, strict=True)],
        [os_names[m][p] for m, p in zip(models_b, BP, strict=True)],
    )
    out.ib_port = both(
        [ib_text[m][p] for m, p in zip(models_a, AP, strict=True)],
        [ib_text[m][p] for m, p in zip(models_b, BP, strict=True)],
    )
    out.printed = both(printed_a, printed_b)
    out.peer = both(names_b, names_a)
    out.peer_printed = both(printed_b, printed_a)
    per_end = both(per_a, per_b)
    out.part = [e[0] for e in per_end]
    out.part_kind = [e[1] for e in per_end]
    out.pmd = [e[2] for e in per_end]
    lane = [lane_of[s] for s in S]
    out.lane_gbps = both(lane, lane)
    lanes = [lanes_of[s] for s in S]
    out.lanes = both(lanes, lanes)
    out.module_lanes = both(
        [module_lanes(x, p, s) for x, p, s in zip(A, AP, S, strict=True)],
        [module_lanes(x, p, s) for x, p, s in zip(B, BP, S, strict=True)],
    )
    fec = [fec_of[s] for s in S]
    out.fec = both(fec, fec)
    pre = [pre_of[s] for s in S]
    out.pre_fec_ber_max = both(pre, pre)
    out.post_fec_ber_max = [post] * len(per_end)
    out.rx_dbm_min = [e[3] for e in per_end]
    out.rx_dbm_max = [e[4] for e in per_end]
    out.temp_c_max = [e[5] for e in per_end]
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
