"""Published reference designs, rebuilt: the counts NVIDIA's SuperPOD reference architectures
publish are what snc must produce from the same intent (figures and sources in
shared/reference/physical.md 1.5). A design that matches a shipped example but not these is wrong."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import Compiled, compile_file, render

SUPERPOD = BLUEPRINTS / "dgx-h100-superpod-4su.yaml"


def _sheets(c: Compiled) -> tuple[list[dict], list[dict]]:
    assert c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings if f.severity.value == "error"]
    artifacts, _ = render(c, only=["cabling", "bom"])
    cables = list(csv.DictReader(io.StringIO(artifacts["cabling/links.csv"].decode())))
    bom = list(csv.DictReader(io.StringIO(artifacts["bom/bom.csv"].decode())))
    return cables, bom


def _switches(c: Compiled, fabric: str) -> Counter:
    return Counter(d.role for d in c.fabric.devices if d.group == fabric and d.role in ("leaf", "spine", "core"))


def _tiers(cables: list[dict], fabric: str) -> Counter:
    return Counter(r["tier"] for r in cables if r["fabric"] == fabric)


def _modules(bom: list[dict], fabric: str) -> Counter:
    """Transceivers ordered per side ('switch side, OSFP, sr4' -> 'switch')."""
    out: Counter = Counter()
    for r in bom:
        if r["section"] == "transceiver" and r["fabric"] == fabric:
            out[r["detail"].split(" side")[0]] += int(r["count"])
    return out


def test_dgx_h100_superpod_4_su_counts_are_the_reference_architectures():
    """H100 SuperPOD RA, 4 SUs: 127 DGX, 32 leaves + 16 spines, 1,020 node+UFM and 1,024
    leaf-spine cables; 1,536 switch-side and 508 DGX-side twin-port transceivers."""
    c = compile_file(str(SUPERPOD))
    cables, bom = _sheets(c)
    assert sum(1 for d in c.fabric.devices if d.model == "hgx-h100") == 127
    assert _switches(c, "ib") == {"leaf": 32, "spine": 16}
    assert _tiers(cables, "ib") == {"node-leaf": 1_020, "leaf-spine": 1_024}
    modules = _modules(bom, "ib")
    assert modules["switch"] == 1_536
    # the DGX side: one twin-port flat-top module per OSFP cage (the UFM's single-port ones apart)
    dgx = [r for r in bom if r["section"] == "transceiver" and r["item"] == "mma4z00-ns-flt"]
    assert sum(int(r["count"]) for r in dgx) == 127 * 4 == 508
    # node-to-leaf is transceiver + fibre everywhere (no copper on the compute fabric's node links)
    assert {r["medium"] for r in cables if r["fabric"] == "ib" and r["tier"] == "node-leaf"} == {"sr4-400g"}
    assert not [f for f in c.findings if f.severity.value in ("error", "warning")]


def test_dgx_h100_superpod_1_su_counts_are_the_reference_architectures():
    """One SU: 31 DGX (the 32nd slot's ports on four leaves carry the UFM pair), 8 leaves, 4 spines,
    252 node+UFM cables and 256 leaf-spine cables."""
    text = SUPERPOD.read_text()
    text = text.replace("count: 63,", "count: 31,").replace(
        "  - {name: dgx-b, model: hgx-h100, count: 64, placement: {row: B, per_rack: 4, first_u: 2}}\n", ""
    )
    text = text.replace("      - group: dgx-b\n", "")
    c = compile_text(text, "superpod-1su.yaml")
    cables, _ = _sheets(c)
    assert _switches(c, "ib") == {"leaf": 8, "spine": 4}
    assert _tiers(cables, "ib") == {"node-leaf": 252, "leaf-spine": 256}


B300_SU = """
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: dgx-b300-xdr-su}
site:
  rack_pitch_m: 0.6
  row_pitch_m: 3.0
  budget: {power_kw: 30, cooling: air}
  rows:
    - {name: A, racks: 18, budget: {power_kw: 60}}
    - {name: N, racks: 2}
nodes:
  - {name: dgx, model: hgx-b300, count: 72, placement: {row: A, per_rack: 4, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    transport: infiniband
    tiers: 2
    switch: q3400
    rail_optimized: true
    oversubscription: {leaf: "1:1"}
    endpoints: [{group: dgx}]
    placement:
      leaf: {row: N, per_rack: 6, first_u: 2}
      spine: {row: N, first_rack: 2, per_rack: 6, first_u: 26}
management: {switch: sn2201}
"""


def test_dgx_b300_xdr_su_counts_are_the_reference_architectures():
    """B300 XDR RA, one SU: 72 nodes, 8 leaves, 4 spines, 576 node-leaf and 576 leaf-spine cables
    (72 node ports + 72 uplinks: exactly one 144-port Q3400 per rail); XDR has no multimode optics
    and no DAC, so every link is single-mode optics or linear active copper."""
    c = compile_text(B300_SU, "b300-su.yaml")
    cables, _ = _sheets(c)
    assert _switches(c, "ib") == {"leaf": 8, "spine": 4}
    assert _tiers(cables, "ib") == {"node-leaf": 576, "leaf-spine": 576}
    ib = [r for r in cables if r["fabric"] == "ib"]
    assert {r["fibre"] for r in ib} <= {"os2", "none"}
    copper = {r["medium"] for r in ib if r["fibre"] == "none"}
    assert all("dac" not in m for m in copper), copper


@pytest.mark.parametrize("nodes", [32, 64])
def test_b300_xdr_growth_within_the_su_adds_node_cables_only(nodes: int):
    """The SU is provisioned whole: fewer nodes change the node-leaf count, never the uplinks."""
    c = compile_text(B300_SU.replace("count: 72,", f"count: {nodes},"), "b300-part.yaml")
    cables, _ = _sheets(c)
    assert _tiers(cables, "ib") == {"node-leaf": nodes * 8, "leaf-spine": 576}
