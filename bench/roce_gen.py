"""Generated Ethernet (RoCEv2) benchmark blueprints: the switch configurations at scale (issue 10).

``roce131k``: 131,072 GPUs, 16,384 HGX H100 nodes with one 400GbE SuperNIC per GPU
(hgx-h100-bf3), on a 3-tier rail-optimised non-blocking Clos of SN5600 switches run as
128 x 400GbE (sn5600-128x400g: 64 ports down, 64 up), on 400GbE LinkX parts (issue 8's
Ethernet 100G-lane product line) that every cable can be ordered in: the hall is laid out so
that no node is further from its leaves than a NIC's optics reach (see ``roce_blueprint``).
A scalable unit is 64 nodes on 8 leaves
(one per rail); a pod 8 SUs (64 leaves under 64 spines, one link per leaf-spine pair); 32 pods;
each plane's 32 spines send 4 links to each of its 16 cores (128 ports): 2,048 leaves, 2,048
spines, 1,024 cores, 5,120 config_db.json files plus the management network's. The IP plan: /32
loopbacks from a /19, /31 links from a /13 (262,144 blocks, exactly the 2,048 x 64 + 2,048 x 64
links), host /31s from a /14 (131,072 blocks: 2,048 leaves x 64 down ports), RFC 7938 ASNs
from the 32-bit private range; the lossless class of roce-rail-2tier.

``clos512``: a 2-tier eBGP Clos of 512 leaves x 64 spines (576 switch configs), the size peer
tools quote for their config generators: 4,096 nodes on sn5600-128x400g leaves (64 down, one
link up to each spine) and 64 spines of 512 x 400G. No catalogue switch has 512 ports, so the
blueprint declares one (``bench-spine-512``, ILLUSTRATIVE: a Spectrum-X Photonics-class
512-port switch) with its own SONiC port map. No management network: the figure is the fabric's.

Usage: python bench/roce_gen.py [roce131k|clos512] [--out FILE]   (prints the path)
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import tempfile
from pathlib import Path

NODES_PER_RACK = 4  # 4 x 8U HGX
RACKS_PER_ROW = 32
# Rack budgets the RoCE design declares and keeps (issue 9): compute racks of 4 HGX H100 at 45 kW,
# network racks 30 kW air-cooled, i.e. 6 SN5600 (11.4 kW, with optics under 20 kW); aggregation
# 10 x 2U SN4600C (640 cable ends). A leaf rack holds one SU's 8 leaves: 1,024 fibres and its
# management cables, so the leaf row declares cable management for 1,100 ends (the catalogue's
# default is 1,024).
COMPUTE_RACK_KW, NETWORK_RACK_KW = 45, 30
SWITCHES_PER_RACK = 6
AGG_PER_RACK = 10
LEAF_RACK_CABLES = 1_100

LOSSLESS = """\
      lossless:
        pfc_priorities: [3]
        dscp_to_tc: {26: 3, 48: 6}
        default_tc: 0
        roce_dscp: 26
        cnp_dscp: 48
        ecn: {min_threshold_bytes: 150000, max_threshold_bytes: 1500000, max_probability_pct: 5}"""


ROWS_EACH_SIDE = 8  # compute rows on each side of the leaf row
SU_NODES, RAILS = 64, 8


def _hall(nodes: int, model: str) -> tuple[list[str], list[str], list[str], int]:
    """(row lines, node group lines, endpoint lines, next free row position) of a hall where
    every node is within its NIC optics' reach of its leaves.

    A node's 400GbE NIC (QSFP112, host side) reaches its leaf with SR4 multimode (50 m) or DR4
    single-mode (100 m to a NIC); leaf-spine and spine-core links are switch to switch (DR4
    500 m, FR4 2 km). So the leaves sit in one row in the middle of 16 compute rows, one SU's 8
    leaves per rack, and the SUs are laid out column by column: SU s in compute row s % 16,
    racks 16 (s // 16) + 1 .. (one node group each), under leaf rack s + 1 (the leaf row is as
    long as a compute row). No node is more than 8 rows and one SU's width from its leaves
    (about 40 m). Spines, cores and the rest take the rows beyond.
    """
    sus = nodes // SU_NODES
    compute_rows = 2 * ROWS_EACH_SIDE
    su_racks = SU_NODES // NODES_PER_RACK  # 16
    row_racks = math.ceil(sus / compute_rows) * su_racks
    rows, groups, endpoints = [], [], []
    for r in range(compute_rows):
        position = r if r < ROWS_EACH_SIDE else r + 1  # the leaf row in the middle
        rows.append(
            f"    - {{name: R{r + 1:02d}, racks: {row_racks}, position: {position}, budget: {{power_kw: {COMPUTE_RACK_KW}}}}}"
        )
    for s in range(sus):
        r, c = s % compute_rows, s // compute_rows
        groups.append(
            f"  - {{name: su{s + 1:03d}, model: {model}, count: {SU_NODES}, "
            f"placement: {{row: R{r + 1:02d}, first_rack: {c * su_racks + 1}, per_rack: {NODES_PER_RACK}, first_u: 2}}}}"
        )
        endpoints.append(f"      - group: su{s + 1:03d}")
    rows.append(
        f"    - {{name: L, racks: {sus}, position: {ROWS_EACH_SIDE}, budget: {{cables_max: {LEAF_RACK_CABLES}}}}}"
        "  # leaves, one SU's 8 x 2U per rack"
    )
    return rows, groups, endpoints, compute_rows + 1


def roce_blueprint(nodes: int = 16_384) -> str:
    rows, groups, endpoints, position = _hall(nodes, "hgx-h100-bf3")
    sus = nodes // SU_NODES
    leaves = sus * RAILS
    spines, cores = leaves, leaves // 2
    per = SWITCHES_PER_RACK
    rows.append(f"    - {{name: S, racks: {math.ceil(spines / per)}, position: {position}}}  # spines")
    rows.append(f"    - {{name: C, racks: {math.ceil(cores / per)}, position: {position + 1}}}  # cores")
    racks = sum(int(line.split("racks: ")[1].split(",")[0]) for line in rows)
    agg = math.ceil((racks + 8) * 2 / 64) + 1  # two uplinks per rack position, 64 ports per sn4600c
    rows.append(
        f"    - {{name: M, racks: {math.ceil(agg / AGG_PER_RACK) + 1}, position: {position + 2}}}  # management aggregation"
    )
    # The ZTP server on rack M01's management segment (rack site index `racks`, block racks + 1 of
    # 64 addresses in the routed design), above the sn2201's 48 access ports and below its switch.
    ztp = ipaddress.ip_address("10.192.0.0") + (racks + 1) * 64 + 61
    return f"""# Generated by bench/roce_gen.py: {nodes * 8:,} GPUs on a 3-tier RoCEv2 Clos of SN5600 (128 x 400GbE).
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: bench-roce-{nodes * 8}
  description: benchmark, {nodes * 8} GPUs on RoCEv2
site:
  budget: {{power_kw: {NETWORK_RACK_KW}, cooling: air}}   # network racks; compute rows {COMPUTE_RACK_KW} kW
  rows:
{chr(10).join(rows)}
nodes:
{chr(10).join(groups)}
scaleout:
  - name: roce
    kind: fat-tree
    transport: ethernet
    tiers: 3
    switch: sn5600-128x400g
    rail_optimized: true
    su_nodes: {SU_NODES}
    leaves_per_pod: 64
    oversubscription: {{leaf: "1:1", spine: "1:1"}}
    endpoints:
{chr(10).join(endpoints)}
    placement:
      leaf: {{row: L, per_rack: {RAILS}, first_u: 2}}
      spine: {{row: S, per_rack: {SWITCHES_PER_RACK}, first_u: 2}}
      core: {{row: C, per_rack: {SWITCHES_PER_RACK}, first_u: 2}}
    ethernet:
      addressing: {{loopbacks: 10.0.0.0/19, p2p: 10.64.0.0/13, hosts: 10.128.0.0/14}}
      bgp: {{asn_first: 4200000000, asn_last: 4200099999}}
{LOSSLESS}
management:
  switch: sn2201
  uplinks: 2
  addressing: {{network: 10.192.0.0/12, provisioning_url: http://{ztp}}}
  aggregation: {{switch: sn4600c, count: {agg}, placement: {{row: M, per_rack: {AGG_PER_RACK}, first_u: 2}}}}
  media: {{margin_m: 0.5}}  # no copper ordered at its rated limit: those uplinks get optics
"""


def clos_blueprint(leaves: int = 512, spines: int = 64) -> str:
    nodes = leaves // RAILS * SU_NODES
    rows, groups, endpoints, position = _hall(nodes, "bench-host")
    rows.append(f"    - {{name: S, racks: {math.ceil(spines / 8)}, position: {position}}}  # spines, 8 x 4U per rack")
    return f"""# Generated by bench/roce_gen.py: a 2-tier eBGP Clos of {leaves} leaves x {spines} spines.
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: bench-clos-{leaves}x{spines}
catalogue:
  devices:
    bench-spine-512:
      kind: switch
      transport: ethernet
      description: 512 x 400GbE spine (Spectrum-X Photonics class), benchmark only
      height_u: 4
      ports: [{{role: data, count: 512, speed_gbps: 400, lanes: 4, cage: osfp, ports_per_cage: 2, name: "Ethernet{{lane0}}"}}]
      sources: [{{ref: "a 512-port class switch for the benchmark", grade: ILLUSTRATIVE}}]
    bench-host:
      kind: node
      description: hgx-h100-bf3 without its BMC (the benchmark has no management network)
      height_u: 8
      ports: [{{role: data, count: 8, speed_gbps: 400, lanes: 4, cage: qsfp112, name: "eth{{i}}"}}]
      sources: [{{ref: "as hgx-h100-bf3", grade: ILLUSTRATIVE}}]
  port_maps:
    bench-spine-512:
      hwsku: bench-512x400g
      platform: x86_64-bench-r0
      groups: [{{role: data, name_step: 4, lane_step: 4, lanes: 4, speed_mbps: 400000, fec: rs}}]
      buffers: {{egress_lossless_pool_bytes: 158229504}}
      sources: [{{ref: "benchmark", grade: ILLUSTRATIVE}}]
site:
  rows:
{chr(10).join(rows)}
nodes:
{chr(10).join(groups)}
scaleout:
  - name: roce
    kind: fat-tree
    transport: ethernet
    tiers: 2
    switch: sn5600-128x400g
    spine_switch: bench-spine-512
    rail_optimized: true
    su_nodes: {SU_NODES}
    endpoints:
{chr(10).join(endpoints)}
    placement:
      leaf: {{row: L, per_rack: {RAILS}, first_u: 2}}
      spine: {{row: S, per_rack: 8, first_u: 2}}
    ethernet:
      addressing: {{loopbacks: 10.0.0.0/22, p2p: 10.64.0.0/16, hosts: 10.128.0.0/16}}
      bgp: {{asn_first: 4200000000, asn_last: 4200099999}}
{LOSSLESS}
"""


GENERATORS = {"roce131k": roce_blueprint, "clos512": clos_blueprint}


def write(size: str, folder: Path) -> Path:
    path = folder / f"bench-{size}.yaml"
    path.write_text(GENERATORS[size]())
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", choices=sorted(GENERATORS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="snc-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(write(args.size, folder))


if __name__ == "__main__":
    main()
