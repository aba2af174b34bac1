"""Shared out-of-band management switches: the DGX H100 SuperPOD reference architecture's pattern
(docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100, "Out-of-Band
Management Network" and the 4-SU component table: 8 SN2201 for the 38 racks of 4 SUs, each with
2 x 100G uplinks into the SN4600C pair, so 16 uplinks) written with ``management.shared``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import Compiled, compile_file, render

SHARED = Path(__file__).parent / "data" / "dgx-h100-4su-shared-oob.yaml"
BASE = yaml.safe_load((BLUEPRINTS / "dgx-h100-superpod-4su.yaml").read_text())
SUS = 4
# The RA: two SN2201 per SU, each with 2 uplinks.
OOB_PER_SU, UPLINKS_PER_OOB = 2, 2


@pytest.fixture(scope="module")
def shared() -> Compiled:
    c = compile_file(str(SHARED))
    assert c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings if f.severity.value == "error"]
    return c


def _variant(**shared: object) -> Compiled:
    doc = json.loads(json.dumps(BASE))
    doc["management"]["shared"] = shared
    return compile_text(yaml.safe_dump(doc, sort_keys=False))


def _mgmt_links(c: Compiled) -> list[tuple[int, int, float]]:
    t = c.fabric.links
    lengths = t.arrays().length_m
    return [(t.a[i], t.b[i], float(lengths[i])) for i in range(len(t)) if t.specs[t.spec[i]].fabric == "mgmt"]


def test_switch_and_uplink_counts_follow_the_ra(shared: Compiled) -> None:
    f = shared.fabric
    switches = [d for d in f.devices if d.role == "mgmt"]
    assert len(switches) == OOB_PER_SU * SUS == 8
    assert {d.model for d in switches} == {"sn2201"}
    ends = Counter()
    for a, b, _ in _mgmt_links(shared):
        ends[(f.devices[a].role, f.devices[b].role)] += 1
    assert ends[("mgmt", "mgmt-agg")] == UPLINKS_PER_OOB * len(switches) == 16
    # Every management port of the 127 DGX, the 2 UFM appliances and the 48 QM9700 on a shared switch.
    access = sum(n for (x, y), n in ends.items() if "mgmt" in (x, y) and not {x, y} & {"mgmt-agg", "mgmt-oob"})
    assert access == 127 + 2 + 32 + 16
    # The per-rack design of the same site needs a switch in each of its 38 racks, 76 uplinks.
    assert shared.fabric.facts["mgmt"]["rack_switches"] == 8


def test_each_switch_serves_its_group_with_lengths_from_the_geometry(shared: Compiled) -> None:
    f = shared.fabric
    groups = yaml.safe_load(SHARED.read_text())["management"]["shared"]["groups"]
    by_switch: dict[str, set[str]] = {}
    for a, b, length in _mgmt_links(shared):
        da, db = f.devices[a], f.devices[b]
        sw, dev = (db, da) if db.role == "mgmt" else (da, db)
        if sw.role != "mgmt" or dev.role in ("mgmt-agg", "mgmt-oob"):
            continue
        by_switch.setdefault(sw.name, set()).add(f.racks[dev.rack].name)
        ra, rb = f.racks[sw.rack], f.racks[dev.rack]
        # At least the straight-line floor distance between the two racks (the route adds the climbs).
        assert length >= abs(ra.x_m - rb.x_m) + abs(ra.y_m - rb.y_m) - 1e-6
    assert by_switch == {f"mgmt-{g[0]}": set(g) for g in groups}
    row = [f.racks[d.rack].row for d in f.devices]
    cross_row = [length for a, b, length in _mgmt_links(shared) if row[a] != row[b]]
    assert cross_row and min(cross_row) > BASE["site"]["row_pitch_m"]  # N-row devices reach switches in rows A and B


def test_configs_and_leases_are_per_shared_switch(shared: Compiled) -> None:
    files, _ = render(shared, only=["sonic", "dhcp"])
    configs = {p: json.loads(bytes(v)) for p, v in files.items() if p.startswith("sonic/mgmt-")}
    assert len(configs) == 8 + 2 + 1  # the shared switches, the aggregation pair and its OOB switch
    kea = json.loads(bytes(files["dhcp/kea-dhcp4.json"]))
    leases = [r["ip-address"] for s in kea["Dhcp4"]["subnet4"] for r in s.get("reservations", [])]
    assert len(leases) == len(set(leases)) >= 127 + 48
    asns = {cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"] for p, cfg in configs.items() if "oob" not in p and "agg" not in p}
    assert len(asns) == 8  # each shared switch routes its group's own subnet


def test_shared_switch_configs_pass_the_sonic_models(shared: Compiled) -> None:
    pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
    from helpers.sonic_yang import validate

    files, _ = render(shared, only=["sonic"])
    configs = [json.loads(bytes(v)) for p, v in files.items() if p.startswith("sonic/mgmt-")]
    assert len(configs) == 8 + 2 + 1
    for cfg in configs:
        validate(cfg)  # libyang, SONiC's YANG models


def test_racks_per_switch_shorthand() -> None:
    c = _variant(racks=4, rows=["A", "B"])
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    names = sorted(d.name for d in c.fabric.devices if d.role == "mgmt")
    # Rows A and B in groups of 4 racks; the network row keeps a switch per rack.
    assert names == sorted([f"mgmt-{r}{k:02d}" for r in "AB" for k in (1, 5, 9, 13)] + [f"mgmt-N{k:02d}" for k in range(1, 7)])


def test_port_budget_still_applies() -> None:
    c = _variant(racks="row", rows=["A"])  # 63 BMCs of row A on one 48-port switch
    errors = [f for f in c.findings if f.severity.value == "error"]
    assert [f.rule for f in errors] == ["port-budget"]
    assert "one more port" in errors[0].message and errors[0].path == ("management", "shared")
    c = _variant(groups=[["A01", "A02"]], ports_per_rack=30)
    assert [f.rule for f in c.findings if f.severity.value == "error"] == ["port-budget"]


def test_ports_per_rack_keeps_each_rack_its_block() -> None:
    c = _variant(groups=[["A01", "A02", "A03", "A04"]], ports_per_rack=12)
    f = c.fabric
    sw = f.device("mgmt-A01")
    access = f.layouts[sw.model].ports_of("data")
    for a, b, _ in _mgmt_links(c):
        if b == sw.index and f.devices[a].role == "node":
            k = access.index(f.links.b_port[[i for i in range(len(f.links)) if f.links.a[i] == a and f.links.b[i] == b][0]])
            assert k // 12 == f.racks[f.devices[a].rack].position - 1


def test_unknown_and_repeated_racks_are_located() -> None:
    c = _variant(groups=[["A01", "Z99"]])
    assert [(f.rule, f.path) for f in c.findings if f.severity.value == "error"] == [
        ("unknown-reference", ("management", "shared", "groups", 0, 1))
    ]
    c = _variant(groups=[["A01", "A02"], ["A02"]])
    assert [f.rule for f in c.findings if f.severity.value == "error"] == ["management"]
