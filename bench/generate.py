"""Generated benchmark blueprints: 8-GPU HGX H100 clusters of 1k to 131k GPUs.

Each blueprint is a 3-tier, rail-optimised, non-blocking InfiniBand fat tree with an
out-of-band management network (a switch in every rack, uplinked twice into an aggregation
layer), on a hall of rows of racks:

* compute: one row per 32 racks of 4 nodes (8U each, U2-U33), one node group per row, so the
  scalable units fill the rows in order;
* network: a leaf row, a spine row, a core row and a management-aggregation row, in the
  middle of the hall so that the longest cable runs are halved;
* media: the default policy (cheapest medium that reaches), so the runs across the hall get
  optics and the short ones copper.

Switches. A radix-64 NDR switch (qm9700) tops out at 64^3/4 = 65,536 endpoint ports in three
non-blocking tiers, i.e. 8,192 nodes of 8 rails. Up to that size every tier is a qm9700 (the
textbook k = 64 tree). Beyond it (the 131,072-GPU size) the leaves stay qm9700 (the NDR ports
match the nodes' 400G CX-7 NICs) and the spine and core tiers use the 144-port XDR q3400:
a pod of 64 leaves (8 SUs of 32 nodes, 256 nodes), 64 pods, and cores of 144 ports with two
parallel links to each of the 64 pods' spines of their plane. The q3400 ports run at the
400G the leaves offer, so the spine and core tiers are not oversubscribed.

Usage: python bench/generate.py [--out DIR] [SIZE ...]   (sizes: 1k 8k 32k 131k; default all)
"""

from __future__ import annotations

import argparse
import math
import tempfile
from fractions import Fraction
from pathlib import Path

from supernodeiac.build.clos import plan_clos, split_ports
from supernodeiac.catalog import builtin_data
from supernodeiac.catalog.types import Catalogue

# Nodes per size (8 GPUs each).
SIZES: dict[str, int] = {"1k": 128, "8k": 1_024, "32k": 4_096, "131k": 16_384}

# Hardware figures come from the catalogue, like everywhere else; only layout choices live here.
_DEVICES = Catalogue.model_validate(builtin_data()).devices
_NODE, _LEAF, _AGG = _DEVICES["hgx-h100"], _DEVICES["qm9700"], _DEVICES["sn4600c"]
assert _NODE.accelerators is not None
GPUS_PER_NODE = _NODE.accelerators.count
RAILS = _NODE.port_count("data")  # one NIC per rail
K_LEAF = _LEAF.port_count("data")
NDR_MAX_NODES = K_LEAF**3 // 4 // RAILS  # endpoint ports of a non-blocking 3-tier tree of radix k, per node
SU_NODES = K_LEAF // 2  # one qm9700 leaf per rail per SU: its k/2 down ports take one NIC of each node
AGG_PORTS = _AGG.port_count("data")  # for sizing the aggregation layer
NODES_PER_RACK = 4  # 4 x 8U HGX = 32U and 40.8 kW: within the 45 kW air-cooled compute budget below
RACKS_PER_ROW = 32
LEAVES_PER_RACK = 8  # 1U qm9700, U2-U9: 13.8 kW and 512 cable ends, within the network budget below
MGMT_UPLINKS = 2
AGG_PER_RACK = 10  # 2U sn4600c, U2-U21: 640 cable ends per rack at most


def _design(nodes: int) -> dict:
    """Switch models and counts of the fat tree, from the Clos builder's own planner."""
    # Upper-tier switches per rack: no more than 1,024 cable ends and 30 kW (the network budget).
    if nodes <= NDR_MAX_NODES:
        per_pod, spine, spines_per_rack = K_LEAF // 2, "qm9700", 8
    else:
        per_pod, spine, spines_per_rack = 64, "q3400", 6
    k_spine = _DEVICES[spine].port_count("data")
    non_blocking = Fraction(1)
    plan = plan_clos(
        tiers=3,
        rail_optimized=True,
        nics=RAILS,
        leaf=split_ports(K_LEAF, non_blocking),
        spine=split_ports(k_spine, non_blocking),
        core_radix=k_spine,
        nodes=nodes,
        su_nodes=SU_NODES,
        leaves_per_pod=per_pod,
    )
    return {
        "sus": plan.built_sus,
        "leaves": plan.leaves,
        "spine_switch": spine,
        "leaves_per_pod": per_pod,
        "pods": plan.built_pods,
        "spines": plan.spines,
        "spines_per_rack": spines_per_rack,
    }


def blueprint(nodes: int) -> str:
    """The YAML text of a benchmark blueprint with ``nodes`` 8-GPU nodes."""
    d = _design(nodes)
    compute_rows = math.ceil(nodes / (NODES_PER_RACK * RACKS_PER_ROW))
    leaf_racks = math.ceil(d["leaves"] / LEAVES_PER_RACK)
    spine_racks = math.ceil(d["spines"] / d["spines_per_rack"])
    # Cores: at most one per spine port of a plane; sized generously, the builder places what it makes.
    core_racks = spine_racks
    compute_racks = math.ceil(nodes / NODES_PER_RACK)
    agg_count = max(2, math.ceil((compute_racks + leaf_racks + 2 * spine_racks + 1) * MGMT_UPLINKS / AGG_PORTS) + 1)
    agg_racks = math.ceil(agg_count / AGG_PER_RACK)

    half = compute_rows // 2
    rows: list[str] = []
    position = 0

    def row(name: str, racks: int, why: str) -> None:
        nonlocal position
        budget = ", budget: {power_kw: 45}" if why == "compute" else ""
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
        count = min(NODES_PER_RACK * RACKS_PER_ROW, nodes - r * NODES_PER_RACK * RACKS_PER_ROW)
        name = f"R{r + 1:03d}"
        row(name, math.ceil(count / NODES_PER_RACK), "compute")
        groups.append(
            f"  - name: gpu{r + 1:03d}\n"
            f"    model: hgx-h100\n"
            f"    count: {count}\n"
            f"    placement: {{row: {name}, per_rack: {NODES_PER_RACK}, first_u: 2}}"
        )
        endpoints.append(f"      - group: gpu{r + 1:03d}")

    gpus = nodes * GPUS_PER_NODE
    xdr = d["spine_switch"] != "qm9700"
    spine_line = f"    spine_switch: {d['spine_switch']}\n    core_switch: {d['spine_switch']}\n" if xdr else ""
    return f"""# Generated by bench/generate.py: {gpus:,} GPUs ({nodes:,} x hgx-h100), 3-tier rail-optimised InfiniBand fat tree.
# {d["sus"]} SUs of {SU_NODES} nodes, {d["leaves"]} leaves, {d["pods"]} pods of {d["leaves_per_pod"]} leaves, \
{d["spines"]} {d["spine_switch"]} spines. Not hand-edited; regenerate instead.
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: bench-{gpus}
  description: benchmark, {gpus} GPUs

site:
  rack_pitch_m: 0.6
  row_pitch_m: 3.0
  tray_height_m: 0.5
  budget: {{power_kw: 30, cooling: air}}   # network racks; compute rows 45 kW
  rows:
{chr(10).join(rows)}

nodes:
{chr(10).join(groups)}

scaleout:
  - name: ib
    kind: fat-tree
    transport: infiniband
    tiers: 3
    switch: qm9700
{spine_line}    rail_optimized: true
    su_nodes: {SU_NODES}
    leaves_per_pod: {d["leaves_per_pod"]}
    oversubscription: {{leaf: "1:1", spine: "1:1"}}
    endpoints:
{chr(10).join(endpoints)}
    placement:
      leaf: {{row: L, per_rack: {LEAVES_PER_RACK}, first_u: 2}}
      spine: {{row: S, per_rack: {d["spines_per_rack"]}, first_u: 2}}
      core: {{row: C, per_rack: {d["spines_per_rack"]}, first_u: 2}}

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
