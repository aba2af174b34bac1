"""The collective-bandwidth model: expected nccl-tests bus bandwidth (busbw) per collective,
algorithm family and scale, from the Fabric's figures; figures in catalog/data/collectives.yaml,
checked against published measurements (catalog/data/collective_calibration.yaml,
tests/test_collectives.py; the error is recorded in docs/acceptance.md).

A *scale* is what bounds a collective: ``ranks`` accelerators in ``domains`` scale-up domains
(``ranks / domains`` per domain), each with ``scaleup_gbytes`` of NVLink per direction and
``nic_gbytes`` of scale-out NIC line rate per direction (already over the fabric's taper where the
traffic crosses it).

* **ring** (all_reduce, all_gather, reduce_scatter, broadcast): busbw is the rate of the ring's
  slowest edge: inside a domain ``scaleup_ring x scaleup_gbytes``; across domains each ring
  leaves a domain once per channel, so the domain's NICs together bound it:
  ``nic x nic_gbytes x ranks_per_domain``. For HGX H100 with a 400G NIC per GPU:
  min(0.82 x 450, 0.96 x 50 x 8) = 369 GB/s.
* **nvls** (all_reduce inside one domain whose switches reduce: NVLink SHARP): each rank sends
  and receives the buffer once, algbw = ``nvls x scaleup_gbytes``, busbw = algbw x 2(n-1)/n;
  ``nvls`` per NVLink generation and domain shape (an HGX baseboard's NVSwitch chips reach more
  than an NVL72 rack's switch trays: collectives.yaml).
* **tree** (all_reduce across exactly two domains: NCCL's (NVLS)Tree there): algbw is the lower
  of the domain's own all_reduce rate and its NICs together; busbw = algbw x 2(n-1)/n, above the
  network's rate (nccl-tests#196).
* **alltoall** across domains cannot aggregate NICs (nccl-tests#267): the network share
  (n - g)/n of each rank's data leaves through its own NIC: busbw = nic x nic_gbytes x (n-1)/(n-g).

Message size: busbw(S) = peak x S / (S + h(n)), h(n) = half_bytes x max(1, log2(n / 4)); the
knee (90 % of the plateau) is at 9 h(n); the latency term is h(n) / peak algbw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..catalog.collectives import ModelFigures, model_figures
from ..fabric import Fabric
from ..fabric.fabric_facts import fat_tree_of
from ..model.blueprint import Blueprint
from .hosts import Hosts, cached_host_facts

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")
ALGORITHMS = ("ring", "nvls", "tree")


@dataclass(frozen=True)
class Scale:
    ranks: int
    domains: int
    scaleup_gbytes: float  # per accelerator, per direction (0: one accelerator per domain)
    nic_gbytes: float  # per rank, per direction, over the taper (0: inside one domain)
    nvls: str | None = None  # NVLS generation of the domain's switches (collectives.yaml), None without
    domain_kind: str = ""  # the domain's shape (Hosts.domain_kind: board, switched): picks the NVLS figure

    @property
    def per_domain(self) -> int:
        return max(1, self.ranks // max(1, self.domains))


@dataclass(frozen=True)
class Prediction:
    collective: str
    algorithm: str
    busbw: float  # GB/s at the plateau
    algbw: float
    knee_bytes: int  # where busbw reaches 90 % of the plateau
    latency_us: float
    bound: str  # what sets the plateau: scale-up, NVLS, NICs

    def at(self, size: float, scale: Scale, figures: ModelFigures | None = None) -> float:
        """busbw at one message size."""
        h = half_bytes(scale, figures)
        return self.busbw * size / (size + h)


def half_bytes(scale: Scale, figures: ModelFigures | None = None) -> float:
    f = figures or model_figures()
    return f.half_bytes * max(1.0, math.log2(max(scale.ranks, 1) / 4))


def _bus_factor(collective: str, n: int) -> float:
    """busbw / algbw (nccl-tests doc/PERFORMANCE.md)."""
    if n < 2:
        return 1.0
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def natural_algorithm(collective: str, scale: Scale) -> str:
    """The algorithm NCCL runs at large sizes for this shape (its tuner's choice)."""
    if collective == "all_reduce" and scale.per_domain > 1:
        if scale.domains == 1 and scale.nvls:
            return "nvls"
        if scale.domains == 2:
            return "tree"
    return "ring"


def predict(collective: str, scale: Scale, algorithm: str | None = None, figures: ModelFigures | None = None) -> Prediction:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}")
    f = figures or model_figures()
    algo = algorithm or natural_algorithm(collective, scale)
    n, g = scale.ranks, scale.per_domain
    up = f.scaleup_ring * scale.scaleup_gbytes if g > 1 else math.inf
    net = f.nic * scale.nic_gbytes * g if scale.domains > 1 else math.inf
    nvls = f.nvls_fraction(scale.nvls, scale.domain_kind) * scale.scaleup_gbytes
    factor = _bus_factor(collective, n)
    if algo == "nvls" and nvls:
        busbw, bound = nvls * factor, "NVLS"
    elif algo == "tree" and collective == "all_reduce" and scale.domains == 2 and g > 1:
        # The domain's own all_reduce rate: NVLS where its switches reduce, else its ring's.
        inner = nvls if nvls else up / _bus_factor("all_reduce", g)
        algbw = min(inner, net)
        busbw, bound = algbw * factor, "NICs" if net < inner else ("NVLS" if nvls else "scale-up")
    elif collective == "alltoall" and scale.domains > 1:
        network = f.nic * scale.nic_gbytes * (n - 1) / max(n - g, 1)
        busbw, bound = min(up, network), "NICs" if network <= up else "scale-up"
        algo = "p2p"
    else:
        algo = "p2p" if collective == "alltoall" else "ring"
        busbw = min(up, net)
        bound = "NICs" if net < up else "scale-up"
    if not math.isfinite(busbw):
        busbw, bound = 0.0, "none"
    algbw = busbw / factor if factor else busbw
    h = half_bytes(scale, f)
    latency = h / (algbw * 1e9) * 1e6 if algbw else 0.0
    return Prediction(collective, algo, busbw, algbw, int(9 * h), latency, bound)


# --- The Fabric's natural scales -------------------------------------------------------------


@dataclass(frozen=True)
class NamedScale:
    stage: str  # domain, rail, fabric
    group: str  # the domain shape, leaf group + rail, or fabric
    scale: Scale
    accelerator: str  # the accelerators' model (devices.yaml accelerators.model)
    tool: str  # nccl-tests, rccl-tests, or "" where no collective test is known
    count: int = 1  # instances of this shape (domains of one shape)


def taper(f: Fabric, fabric: str) -> float:
    """End-to-end oversubscription of a fat tree from its builder's facts (1 for other kinds), in
    bandwidth: a leaf of two speeds counts its down ports at their speed over its uplinks' (64 x
    400G over 32 x 800G is 1:1), and of a fabric with leaves per group the most oversubscribed set
    (its down ports in use in the planned SU over its uplinks)."""
    facts = fat_tree_of(f.facts.get(fabric))
    ratio = 1.0
    if facts is None:
        return ratio
    sets = facts.get("leaf_sets")
    if sets:
        # each set's planned SU shape: its down ports in use over its uplinks
        leaf = [(s["leaf_down_used"] * s["down_gbps"], s["leaf_up"] * s["up_gbps"]) for s in sets]
    else:
        sizing = facts["sizing"].get("leaf")
        speed = float(Fraction(str(sizing.get("speed_ratio", "1")))) if sizing is not None else 1.0
        leaf = [(facts["leaf_down"] * speed, float(facts["leaf_up"]))]
    worst_leaf = max((max(1.0, d / u) for d, u in leaf if d and u), default=1.0)
    ratio *= worst_leaf
    pods = [s["pods"] for s in sets or () if "pods" in s]
    if pods:  # 3-tier leaf sets: each set's pods, their spines' down ports in use over their uplinks
        ratio *= max(max(1.0, p["spine_down_used"] / p["spine_up"]) for p in pods)
        return ratio
    d, u = facts["spine_down"], facts["spine_up"]
    if d and u:
        ratio *= max(1.0, d / u)
    return ratio


def scaleup_gbytes(f: Fabric, host: int) -> float:
    """One accelerator's scale-up rate per direction (GB/s), 0 without accelerators."""
    acc = f.models[f.devices[host].model].accelerators
    return acc.links * acc.link_gbps / 8 if acc else 0.0


def accelerator_of(f: Fabric, host: int) -> tuple[str, str, str | None]:
    """(accelerator model, its collective test or "", its NVLS generation or None)."""
    acc = f.models[f.devices[host].model].accelerators
    if acc is None:
        return "", "", None
    vendor = model_figures().vendor_of(acc.model)
    if vendor is None:
        return acc.model, "", None
    return acc.model, vendor.tool, vendor.nvls.get(acc.model)


def domain_kind_of(hosts: Hosts, host: int) -> str:
    """The shape of a host's scale-up domain (board, switched, ...), "" outside one."""
    return hosts.domain_kind.get(hosts.domain.get(host, ""), "")


def domain_scale(f: Fabric, hosts: Hosts, hs: list[int]) -> Scale:
    _m, _t, nvls = accelerator_of(f, hs[0])
    acc = hosts.accelerators(hs[0]) * len(hs)
    return Scale(acc, 1, scaleup_gbytes(f, hs[0]), 0.0, nvls, domain_kind_of(hosts, hs[0]))


def rail_scale(nic_gbps: float, n_hosts: int) -> Scale:
    """One accelerator per host, each beside its NIC of the rail: the rail's leaves carry it."""
    return Scale(n_hosts, n_hosts, 0.0, nic_gbps / 8)


def fabric_scale(f: Fabric, hosts: Hosts, fabric: str, hs: list[int]) -> Scale:
    """Every accelerator of hosts ``hs`` across fabric ``fabric`` (over its taper)."""
    fh = hosts.fabrics[fabric]
    acc = hosts.accelerators(hs[0]) or 1
    nic = min(sum(n.gbps for n in fh.nics.get(h, ())) / 8 / (hosts.accelerators(h) or 1) for h in hs)
    domains = len({hosts.domain.get(h, str(h)) for h in hs})
    ranks = acc * len(hs)
    _m, _t, nvls = accelerator_of(f, hs[0])
    up = min(scaleup_gbytes(f, h) for h in hs)
    return Scale(ranks, domains, up, nic / taper(f, fabric), nvls, domain_kind_of(hosts, hs[0]))


def natural_scales(f: Fabric, bp: Blueprint) -> list[NamedScale]:
    """The scales the Fabric's collectives run at: each shape of scale-up domain, one rail of each
    fabric (its first leaf group, first NIC) and each fabric whole."""
    hosts = cached_host_facts(f, bp)
    out: list[NamedScale] = []
    shapes: dict[tuple, list] = {}
    for inst, hs in sorted(hosts.domain_hosts.items(), key=lambda x: x[1][0]):
        if hosts.accelerators(hs[0]) * len(hs) < 2:
            continue
        s = domain_scale(f, hosts, hs)
        key = (f.devices[hs[0]].model, s)
        if key in shapes:
            shapes[key][1] += 1
        else:
            shapes[key] = [inst, 1, hs[0], s]
    for inst, count, h, s in shapes.values():
        model, tool, _ = accelerator_of(f, h)
        out.append(NamedScale("domain", inst, s, model, tool, count))
    for name, fh in hosts.fabrics.items():
        # The first leaf group with two accelerator hosts (CPU servers share leaf groups, not rails).
        ranked = ((g, [h for h in g.hosts if hosts.accelerators(h)]) for g in fh.leaf_groups)
        group, ranks = next(((g, r) for g, r in ranked if len(r) > 1), (None, []))
        if group is not None and fh.nics.get(ranks[0]):
            nic = fh.nics[ranks[0]][0]
            model, tool, _ = accelerator_of(f, ranks[0])
            label = f"rail{nic.rail}" if nic.rail is not None else "nic0"
            out.append(NamedScale("rail", f"{group.name}-{label}", rail_scale(nic.gbps, len(ranks)), model, tool))
        hs = sorted(h for h in fh.nics if hosts.accelerators(h))
        if len(hs) > 1:
            model, tool, _ = accelerator_of(f, hs[0])
            out.append(NamedScale("fabric", name, fabric_scale(f, hosts, name, hs), model, tool))
    return out
