"""Generated benchmark blueprints: 8-GPU HGX H100 clusters of 1k to 131k GPUs.

Each blueprint is a 3-tier, rail-optimised, non-blocking InfiniBand fat tree with an
out-of-band management network (a switch in every rack, uplinked twice into an aggregation
layer), on a hall of rows of racks:

* compute: one row per 32 racks of 4 nodes (8U HGX H100 at U2-U33, 10U HGX B300 at U2-U41), one
  node group per row, so the scalable units fill the rows in order; the rows' rack budget holds
  the four nodes at their maximum power (45 kW, or 60 kW for B300), air-cooled;
* network: a leaf row, a spine row, a core row and a management-aggregation row, in the
  middle of the hall so that the longest cable runs are halved, within a 30 kW network-rack
  budget and the catalogue's 1,024 cable ends per rack;
* media: the default policy (cheapest medium that reaches), so the runs across the hall get
  optics and the short ones copper.

Switches. A radix-64 NDR switch (qm9700) tops out at 64^3/4 = 65,536 endpoint ports in three
non-blocking tiers, i.e. 8,192 nodes of 8 rails. Up to that size the nodes are HGX H100 with
400G NDR ConnectX-7 NICs and every tier is a qm9700 (the textbook k = 64 tree). Beyond it (the
131,072-GPU size) the fabric is XDR end to end, as NVIDIA's B300 XDR reference design builds it:
HGX B300 nodes with 800G ConnectX-8 NICs and the 144-port q3400 at every tier, SUs of 72 nodes
(one leaf per rail), pods of 72 leaves. (An NDR leaf cannot sit under an XDR spine: Quantum-X800
ports run 200G lanes only, without downshift to NDR's 100G, so no cable or module joins them.)

Usage: python bench/generate.py [--out DIR] [SIZE ...]   (sizes: 1k 8k 32k 131k; default all)
"""

from __future__ import annotations

import argparse
import math
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from supernodeiac.builders.clos_plan import plan_clos, split_ports
from supernodeiac.catalog import merged
from supernodeiac.catalog.types import Catalogue
from supernodeiac.checks.ib_routing import UNICAST_LIDS

# Nodes per size (8 GPUs each).
SIZES: dict[str, int] = {"1k": 128, "8k": 1_024, "32k": 4_096, "131k": 16_384}

# Hardware figures come from the catalogue, like everywhere else; only layout choices live here.
_DEVICES = Catalogue.model_validate(merged(None)).devices
_AGG = _DEVICES["sn4600c"]
AGG_PORTS = _AGG.port_count("data")  # for sizing the aggregation layer
RACKS_PER_ROW = 32
RACK_UNITS = 40  # U2-U41 for devices: the management switch sits at the top
MGMT_UPLINKS = 2
AGG_PER_RACK = 10  # 2U sn4600c, U2-U21: 640 cable ends per rack at most
# Rack budgets the blueprints declare (and keep: the benchmark validates clean of warnings).
NETWORK_RACK_KW = 30  # ~16 QM9700 per network rack at their 1.72 kW maximum (physical.md 3)


@dataclass(frozen=True)
class Generation:
    """Node and switch of one generation of the benchmark fabric."""

    node: str
    switch: str
    # Switches per network rack: within NETWORK_RACK_KW and the catalogue's 1,024 cable ends
    # (8 qm9700: 13.8 kW, 512 ends; 6 q3400: 864 ends), with room for the management switch.
    switches_per_rack: int
    compute_rack_kw: int  # the compute rows' budget: 4 nodes at their maximum, air-cooled

    @property
    def rails(self) -> int:
        return _DEVICES[self.node].port_count("data")  # one NIC per rail

    @property
    def radix(self) -> int:
        return _DEVICES[self.switch].port_count("data")

    @property
    def su_nodes(self) -> int:
        return self.radix // 2  # one leaf per rail per SU: its k/2 down ports take one NIC of each node

    @property
    def max_nodes(self) -> int:
        return self.radix**3 // 4 // self.rails  # endpoint ports of a non-blocking 3-tier tree, per node

    @property
    def nodes_per_rack(self) -> int:
        # 4 x 8U HGX H100 = 32U and ~41 kW, 4 x 10U B300 ~57 kW: liquid- or rear-door-cooled racks
        return min(4, RACK_UNITS // _DEVICES[self.node].height_u)


# 4 HGX H100 (10.2 kW max) = 40.8 kW: a 45 kW air-cooled rack, as the H100 SuperPOD's "over 40 kW".
NDR = Generation("hgx-h100", "qm9700", switches_per_rack=8, compute_rack_kw=45)
# 4 HGX B300 (14.3 kW max) = 57.2 kW: the B300 XDR reference design's ~56 kW air-cooled racks of 4,
# within the 60 kW air-cooled limit (physical.md 3).
XDR = Generation("hgx-b300", "q3400", switches_per_rack=6, compute_rack_kw=60)
_gpus = _DEVICES["hgx-h100"].accelerators
assert _gpus is not None
GPUS_PER_NODE = _gpus.count


def generation(nodes: int) -> Generation:
    return NDR if nodes <= NDR.max_nodes else XDR


def _plan(gen: Generation, nodes: int, nics: int):  # noqa: ANN202  (the Clos planner's own type)
    non_blocking = Fraction(1)
    leaf = split_ports(gen.radix, non_blocking)
    return plan_clos(
        tiers=3,
        rail_optimized=True,
        nics=nics,
        leaf=leaf,
        spine=split_ports(gen.radix, non_blocking),
        core_radix=gen.radix,
        nodes=nodes,
        su_nodes=gen.su_nodes,
        leaves_per_pod=leaf.down,  # a spine's down ports take one link from each leaf of its pod
    )


def _design(nodes: int) -> dict:
    """Switch models and counts of the fat tree, from the Clos builder's own planner.

    One InfiniBand subnet addresses at most 49,151 unicast LIDs (one per HCA port and per switch),
    so a size past that is split into planes, each its own subnet: the fewest planes (a divisor
    of the rails, so every plane takes whole rails) whose HCA ports and switches fit one subnet."""
    gen = generation(nodes)
    for planes in (p for p in range(1, gen.rails + 1) if gen.rails % p == 0):
        plan = _plan(gen, nodes, gen.rails // planes)
        switches = plan.switches
        if nodes * gen.rails // planes + switches <= UNICAST_LIDS:
            break
    return {
        "gen": gen,
        "planes": planes,
        "sus": plan.built_sus,
        "leaves": plan.leaves * planes,
        "leaves_per_pod": split_ports(gen.radix, Fraction(1)).down,
        "pods": plan.built_pods,
        "spines": plan.spines * planes,
    }


def blueprint(nodes: int) -> str:
    """The YAML text of a benchmark blueprint with ``nodes`` 8-GPU nodes."""
    d = _design(nodes)
    gen: Generation = d["gen"]
    per_rack, switches_per_rack = gen.nodes_per_rack, gen.switches_per_rack
    compute_rows = math.ceil(nodes / (per_rack * RACKS_PER_ROW))
    leaf_racks = math.ceil(d["leaves"] / switches_per_rack)
    spine_racks = math.ceil(d["spines"] / switches_per_rack)
    # Cores: at most one per spine port of a plane; sized generously, the builder places what it makes.
    core_racks = spine_racks
    compute_racks = math.ceil(nodes / per_rack)
    agg_count = max(2, math.ceil((compute_racks + leaf_racks + 2 * spine_racks + 1) * MGMT_UPLINKS / AGG_PORTS) + 1)
    agg_racks = math.ceil(agg_count / AGG_PER_RACK)

    half = compute_rows // 2
    rows: list[str] = []
    position = 0

    def row(name: str, racks: int, why: str) -> None:
        nonlocal position
        budget = f", budget: {{power_kw: {gen.compute_rack_kw}}}" if why == "compute" else ""
        rows.append(f"    - {{name: {name}, racks: {racks}, position: {position}{budget}}}  # {why}")
        position += 1

    groups: list[str] = []
    endpoints: list[str] = []
    for r in range(compute_rows):
        if r == half:
            row("L", leaf_racks, "leaves")
            row("S", spine_racks, "spines")
            row("C", core_racks, "cores")
            row("M", agg_racks, "management aggregation")
        count = min(per_rack * RACKS_PER_ROW, nodes - r * per_rack * RACKS_PER_ROW)
        name = f"R{r + 1:03d}"
        row(name, math.ceil(count / per_rack), "compute")
        groups.append(
            f"  - name: gpu{r + 1:03d}\n"
            f"    model: {gen.node}\n"
            f"    count: {count}\n"
            f"    placement: {{row: {name}, per_rack: {per_rack}, first_u: 2}}"
        )
        endpoints.append(f"      - group: gpu{r + 1:03d}")

    gpus = nodes * GPUS_PER_NODE
    return f"""# Generated by bench/generate.py: {gpus:,} GPUs ({nodes:,} x {gen.node}), 3-tier rail-optimised IB fat tree.
# {d["planes"]} plane(s) (one InfiniBand subnet each), each {d["sus"]} SUs of {gen.su_nodes} nodes and {d["pods"]} pods of \
{d["leaves_per_pod"]} leaves; {d["leaves"]} leaves, {d["spines"]} {gen.switch} spines in all. Not hand-edited; regenerate instead.
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: bench-{gpus}
  description: benchmark, {gpus} GPUs

site:
  rack_pitch_m: 0.6
  row_pitch_m: 3.0
  tray_height_m: 0.5
  budget: {{power_kw: {NETWORK_RACK_KW}, cooling: air}}   # network racks; compute rows {gen.compute_rack_kw} kW
  rows:
{chr(10).join(rows)}

nodes:
{chr(10).join(groups)}

scaleout:
  - name: ib
    kind: fat-tree
    transport: infiniband
    tiers: 3
    switch: {gen.switch}
    rail_optimized: true
    planes: {d["planes"]}
    su_nodes: {gen.su_nodes}
    leaves_per_pod: {d["leaves_per_pod"]}
    oversubscription: {{leaf: "1:1", spine: "1:1"}}
    endpoints:
{chr(10).join(endpoints)}
    placement:
      leaf: {{row: L, per_rack: {switches_per_rack}, first_u: 2}}
      spine: {{row: S, per_rack: {switches_per_rack}, first_u: 2}}
      core: {{row: C, per_rack: {switches_per_rack}, first_u: 2}}

management:
  switch: sn2201
  uplinks: {MGMT_UPLINKS}
  aggregation:
    switch: sn4600c
    count: {agg_count}
    placement: {{row: M, per_rack: {AGG_PER_RACK}, first_u: 2}}
"""


def write(size: str, folder: Path) -> Path:
    path = folder / f"bench-{size}.yaml"
    path.write_text(blueprint(SIZES[size]))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", help=f"any of {', '.join(SIZES)} (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="folder for the YAML files (default: a new temp folder)")
    args = parser.parse_args()
    unknown = [s for s in args.sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown size(s) {', '.join(unknown)}; known: {', '.join(SIZES)}")
    folder = args.out or Path(tempfile.mkdtemp(prefix="snc-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    for size in args.sizes or list(SIZES):
        print(write(size, folder))


if __name__ == "__main__":
    main()
