"""`snc explain`: the sizing report's numbers against textbook formulas and the Fabric."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, compile_text
from test_render import fat_tree

from supernodeiac import compile_file
from supernodeiac.cli import main
from supernodeiac.explain import explain, min_cut_bisection, to_text


def _report(c) -> dict:
    return explain(c.blueprint, c.catalogue, c.fabric)


def _fabric(report: dict, name: str) -> dict:
    return next(f for f in report["fabrics"] if f["name"] == name)


def _data_radix(c, model: str) -> int:
    return sum(g.count for g in c.catalogue.devices[model].ports if g.role == "data")


def _largest_parallel(up: int, lower: int, radix: int) -> int:
    return max(p for p in range(1, up + 1) if up % p == 0 and lower * p <= radix)


def test_small_ib_switches_per_tier(small_ib):
    """Rail-optimised, 1:1: one leaf per rail per SU; spines = leaf uplinks / parallel links."""
    k = _data_radix(small_ib, "qm9700")
    rails = _data_radix(small_ib, "hgx-h100")
    down = up = k // 2
    leaves = rails * math.ceil(16 / down)  # 16 nodes fit in one SU of `down` nodes
    p = _largest_parallel(up, leaves, k)
    ib = _fabric(_report(small_ib), "ib")
    tiers = {t["tier"]: t for t in ib["switches"]["tiers"]}
    assert (tiers[1]["role"], tiers[1]["count"], tiers[1]["models"]) == ("leaf", leaves, {"qm9700": leaves})
    assert (tiers[2]["role"], tiers[2]["count"]) == ("spine", up // p)
    assert ib["switches"]["total"] == leaves + up // p


def test_small_ib_cables_and_endpoints(small_ib):
    f = small_ib.fabric
    ib = _fabric(_report(small_ib), "ib")
    links = [k for k in f.links if k.fabric == "ib"]
    to_leaf = [k for k in links if f.devices[k.a].tier == 0 or f.devices[k.b].tier == 0]
    tiers = {tuple(t["tiers"]): t for t in ib["cables"]["tiers"]}
    assert tiers[(0, 1)]["count"] == len(to_leaf) == 16 * 8 + 2 * 2  # 8 NICs per node, 2 UFMs of 2 ports
    assert tiers[(1, 2)]["count"] == len(links) - len(to_leaf)
    assert tiers[(1, 2)]["between"] == "leaf - spine"
    for t in tiers.values():
        assert sum(t["media"].values()) == t["count"]
    assert ib["cables"]["total"] == len(links)
    assert ib["endpoints"]["devices"] == 18 and ib["endpoints"]["ports"] == len(to_leaf)
    assert ib["endpoints"]["accelerators"] == 16 * small_ib.catalogue.devices["hgx-h100"].accelerators.count


def test_small_ib_bisection_is_the_clos_formula(small_ib):
    f = small_ib.fabric
    w = {0: 0.0, 1: 0.0}
    for k in f.links:
        if k.fabric == "ib":
            w[min(f.devices[k.a].tier, f.devices[k.b].tier)] += k.gbps
    ib = _fabric(_report(small_ib), "ib")
    assert ib["bisection"]["method"] == "clos-formula"
    assert ib["bisection"]["gbps"] == pytest.approx(min(w.values()) / 2)


@pytest.mark.parametrize(("ratio", "nodes"), [("1:1", 16), ("1:3", 12)])
def test_clos_formula_agrees_with_min_cut(ratio, nodes):
    """Nodes filling leaves one after another: the halves meet only through the spines."""
    c = compile_text(fat_tree(nodes, ratio=ratio, rail_optimized=False))
    assert c.fabric is not None
    report = _fabric(_report(c), "ib")
    from supernodeiac.explain import fabric_stats

    cut = min_cut_bisection(c.fabric, fabric_stats(c.fabric)["ib"])
    assert cut is not None and cut.parts == 1
    assert report["bisection"]["gbps"] == pytest.approx(cut.gbps)


def test_small_ib_growth_ceiling(small_ib):
    """As cabled: (k / p) leaves of `down` ports; re-cabled to p = 1: k x k/2 = k^2/2."""
    k = _data_radix(small_ib, "qm9700")
    down = up = k // 2
    p = _largest_parallel(up, 8, k)
    growth = _fabric(_report(small_ib), "ib")["growth"]
    assert growth["endpoint_ports"]["ceiling"] == k * k // 2
    assert growth["endpoint_ports"]["without_recabling"] == (k // p) * down
    assert growth["endpoint_ports"]["built"] == 16 * 8 + 2 * 2
    # the UFM pair's four ports take the top port of four rails' leaves: one node slot of the SU
    assert growth["nodes"]["without_recabling"] == (k // p) * down // 8 - 1
    assert growth["limits"]["max_endpoint_ports"] == (k // p) * down


def test_oversubscription_measured_and_declared():
    c = compile_text(fat_tree(12, ratio="1:3", rail_optimized=False))
    over = _fabric(_report(c), "ib")["oversubscription"]
    assert over["tiers"] == [{"tier": 1, "role": "leaf", "measured": "3:1", "declared": "3:1"}]
    assert over["end_to_end"] == "3:1"


def _media_figures(f, cat, fabric: str | None = None) -> tuple[float, float]:
    """(power W, relative cost) of the media, recounted from the links: one module per occupied
    optical cage, one fibre cord per 400G link, one assembly per straight cable's cage pair."""
    modules: dict[tuple[int, int], str] = {}
    assemblies: dict[tuple, str] = {}
    cords = 0.0
    for k in f.links:
        if fabric is not None and k.fabric != fabric:
            continue
        m = cat.media[k.medium]
        ca = (k.a, f.layouts[f.devices[k.a].model].port_cages[k.a_port])
        cb = (k.b, f.layouts[f.devices[k.b].model].port_cages[k.b_port])
        if m.shape == "transceiver":
            modules[ca], modules[cb] = k.a_module, k.b_module
            cords += cat.cords[m.cord].relative_cost * max(1, k.lanes // 4)
        else:
            assemblies[min(ca, cb)] = k.medium
    power = sum(cat.transceivers[x].power_w for x in modules.values())
    power += sum(2 * cat.media[x].power_w_per_end for x in assemblies.values())
    cost = sum(cat.transceivers[x].relative_cost for x in modules.values()) + cords
    cost += sum(cat.media[x].relative_cost for x in assemblies.values())
    return power, cost


def test_power_and_cost_per_fabric(small_ib):
    f, cat = small_ib.fabric, small_ib.catalogue
    ib = _fabric(_report(small_ib), "ib")
    switches = [d for d in f.devices if d.group == "ib"]
    media_w, media_cost = _media_figures(f, cat, "ib")
    assert media_w > 0
    assert ib["power_w"]["switches"] == pytest.approx(sum(cat.devices[d.model].power_max_w for d in switches))
    assert ib["power_w"]["total"] == ib["power_w"]["switches"]  # the modules are in the QM9700's maximum
    assert ib["power_w"]["media"] == pytest.approx(media_w)
    assert ib["relative_cost"]["total"] == pytest.approx(sum(cat.devices[d.model].relative_cost for d in switches) + media_cost)


def test_deployment_totals_from_the_fabric(small_ib):
    """The totals count every device and link once, across all fabrics, priced from the catalogue."""
    f, cat = small_ib.fabric, small_ib.catalogue
    totals = _report(small_ib)["totals"]
    assert (totals["devices"], totals["links"], totals["racks"]) == (len(f.devices), len(f.links), len(f.racks))
    assert totals["accelerators"] == 16 * cat.devices["hgx-h100"].accelerators.count  # the UFM has none
    # Power: each device's maximum, once (the optics in its cages are inside it: no plug counted twice).
    device_w = sum(cat.devices[d.model].power_max_w for d in f.devices)
    media_w, media_cost = _media_figures(f, cat)
    assert totals["power_w"]["devices"] == pytest.approx(device_w)
    assert totals["power_w"]["plugs_apart"] == 0  # small-ib's devices all quote maxima with modules
    assert totals["power_w"]["total"] == pytest.approx(device_w)
    assert totals["power_w"]["media"] == pytest.approx(media_w)
    device_cost = sum(cat.devices[d.model].relative_cost for d in f.devices)
    assert totals["relative_cost"]["total"] == pytest.approx(device_cost + media_cost)


@pytest.mark.parametrize("name", ["ib-3tier", "nvl72-pod"])
def test_power_headline_equals_the_rack_sums(name):
    """One power figure: the headline is what the racks add up to. ib-3tier has switches whose
    maximum leaves their modules out (the plugs are added once, per occupied cage) and optics
    inside the QM9700's maximum (not added again); nvl72-pod's 8 racks are 18 trays + 9 switch trays."""
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    report = _report(c)
    power, racks = report["totals"]["power_w"], report["racks"]
    assert power["total"] / 1000 == pytest.approx(racks["power_kw_max"], abs=0.05)
    assert power["total"] == pytest.approx(power["devices"] + power["plugs_apart"], abs=1)
    placed = [d for d in c.fabric.devices if d.rack >= 0]
    assert len(placed) == len(c.fabric.devices)
    assert power["media"] > 0 and power["total"] < power["devices"] + power["plugs_apart"] + power["media"]
    if name == "ib-3tier":
        assert power["plugs_apart"] > 0
        text = to_text(report)
        assert f"{racks['power_kw_max']:,.1f} kW at maximum, as the racks sum it" in text
    else:
        cat = c.catalogue
        tray, switch_tray = cat.devices["gb200-tray"].power_max_w, cat.devices["nvl5-switch-tray"].power_max_w
        compute = {x["rack"]: x["power_kw"] for x in racks["hottest"]}
        for kw in compute.values():
            # (120 kW - 9 x 0.8) / 18 per tray: the rack is the GB200 nameplate, not 15.5 kW short of it.
            assert kw * 1000 >= 18 * tray + 9 * switch_tray == pytest.approx(120_000, abs=18)


def test_management_is_reported_with_local_tiers(small_ib):
    mgmt = _fabric(_report(small_ib), "mgmt")
    # leaves and spines are endpoints of the management network, not its switches
    # rack switches and console servers, the aggregation, and the OOB switch that manages the aggregation
    assert [t["role"] for t in mgmt["switches"]["tiers"]] == ["console/mgmt", "mgmt-agg", "mgmt-oob"]
    switches = ("mgmt", "console", "mgmt-agg", "mgmt-oob")
    assert mgmt["endpoints"]["devices"] == sum(1 for d in small_ib.fabric.devices if d.role not in switches)
    assert mgmt["bisection"]["method"] == "not-applicable"
    assert mgmt["oversubscription"] is None


def test_unknown_kind_gets_the_generic_report(small_ib):
    """A builder nobody wrote a section for: facts pass through, bisection by min cut or by its fact."""
    facts = dict(small_ib.fabric.facts)
    facts["ib"] = {"kind": "mystery", "max_groups": 7}
    f = dataclasses.replace(small_ib.fabric, facts=facts)
    ib = _fabric(explain(small_ib.blueprint, small_ib.catalogue, f), "ib")
    assert (ib["kind"], ib["section"]) == ("mystery", None)
    assert ib["growth"]["limits"] == {"max_groups": 7}
    assert ib["bisection"]["method"] == "min-cut" and ib["bisection"]["gbps"] > 0
    facts["ib"] = {"kind": "mystery", "bisection_gbps": 1234.5}
    ib = _fabric(explain(small_ib.blueprint, small_ib.catalogue, f), "ib")
    assert ib["bisection"] == {"gbps": 1234.5, "method": "builder", "detail": "stated by the mystery builder"}
    assert "mystery" in to_text(explain(small_ib.blueprint, small_ib.catalogue, f))


def test_large_fabric_without_formula_is_not_computed(small_ib, monkeypatch):
    """No formula and too big for max-flow: say so rather than stall."""
    import supernodeiac.explain.report as ex

    monkeypatch.setattr(ex, "MINCUT_MAX_LINKS", 10)
    facts = dict(small_ib.fabric.facts)
    facts["ib"] = {"kind": "mystery"}
    f = dataclasses.replace(small_ib.fabric, facts=facts)
    ib = _fabric(explain(small_ib.blueprint, small_ib.catalogue, f), "ib")
    assert ib["bisection"]["gbps"] is None and ib["bisection"]["method"] == "not-computed"
    assert "too many for a min cut" in ib["bisection"]["detail"]


def test_cli_json_is_stable_and_complete():
    path = str(BLUEPRINTS / "small-ib.yaml")
    runner = CliRunner()
    first = runner.invoke(main, ["explain", path, "--format", "json"])
    second = runner.invoke(main, ["explain", path, "--format", "json"])
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    doc = json.loads(first.output)
    assert set(doc) == {"file", "stage", "exit_code", "findings", "report"}
    report = doc["report"]
    assert set(report) == {"blueprint", "totals", "fabrics", "placement", "racks", "collectives", "meshes"}
    assert [f["name"] for f in report["fabrics"]] == ["ib", "mgmt"]
    keys = {"name", "kind", "endpoints", "switches", "cables", "bisection", "oversubscription", "growth"}
    keys |= {"power_w", "relative_cost", "optics", "notes", "facts", "section", "port_use"}
    sections = {"ib": {"sizing", "rails"}, "mgmt": set()}
    for fabric in report["fabrics"]:
        assert set(fabric) == keys | sections[fabric["name"]]
        assert set(fabric["bisection"]) == {"gbps", "method", "detail"}


def test_cli_text_and_exit_codes(tmp_path: Path):
    runner = CliRunner()
    ok = runner.invoke(main, ["explain", str(BLUEPRINTS / "small-ib.yaml")])
    assert ok.exit_code == 0
    assert "fabric ib (fat-tree)" in ok.output and "bisection          26.4 Tb/s per direction [clos-formula" in ok.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: supernodeiac/v1\nkind: Blueprint\nmetadata: {name: x}\nsite: {rows: [{name: A, racks: 1}]}\nbogus: 1\n"
    )
    result = runner.invoke(main, ["explain", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:5:1" in result.output and "Traceback" not in result.output
    result = runner.invoke(main, ["explain", str(bad), "--format", "json"])
    assert result.exit_code == 2 and json.loads(result.output)["report"] is None


def test_cost_names_its_unit_and_takes_prices():
    """Without prices the cost is in the catalogue's relative units, and says so; with bom.prices
    (in bom.cost_unit) the priced items cost their price, and the unpriced ones are named."""
    plain = _report(compile_text(fat_tree(16)))
    assert plain["totals"]["cost_unit"] == "relative units"
    assert "relative units" in to_text(plain)
    priced_bp = fat_tree(16, extra="bom: {cost_unit: USD, prices: {qm9700: 25000, hgx-h100: 300000}}\n")
    c = compile_text(priced_bp)
    assert c.exit_code == 0
    report = _report(c)
    totals = report["totals"]
    assert totals["cost_unit"] == "USD"
    devices = [d.model for d in c.fabric.devices]
    price = {"qm9700": 25000, "hgx-h100": 300000}
    expected = sum(price.get(m, c.catalogue.devices[m].relative_cost) for m in devices)
    assert totals["relative_cost"]["devices"] == pytest.approx(expected)
    assert "qm9700" not in totals["unpriced"] and "sn2201" in totals["unpriced"]
    ib = _fabric(report, "ib")
    assert ib["relative_cost"]["switches"] == 25000 * sum(1 for m in devices if m == "qm9700")
    text = to_text(report)
    assert f"{totals['relative_cost']['total']:,.0f} USD" in text and "without a price" in text
    # Prices without a unit would add money to relative units: an error at its line.
    bad = compile_text(fat_tree(16, extra="bom: {prices: {qm9700: 25000}}\n"))
    assert bad.exit_code == 2 and any("cost_unit" in f.message for f in bad.findings)


def test_optics_per_part_are_the_bom_modules(small_ib):
    """explain lists the fabric's modules by part and side, the BOM's count (one per occupied cage)."""
    from supernodeiac.facts.bom import bill_of_materials

    ib = _fabric(_report(small_ib), "ib")
    bom = bill_of_materials(small_ib.catalogue, small_ib.fabric, small_ib.blueprint)
    modules = [x for x in bom.media_lines("ib") if x.section == "transceiver"]
    assert modules and [(o["part"], o["count"]) for o in ib["optics"]] == [(x.part.number, x.count) for x in modules]
    # Twin-port OSFPs on the nodes: 16 nodes x 8 NICs in 64 cages; the UFM pair's 2 x 2 single ports.
    host = sum(o["count"] for o in ib["optics"] if o["detail"].startswith("host side"))
    assert host == 16 * 8 // 2 + 2 * 2
    assert f"{ib['optics'][0]['count']:,} x {ib['optics'][0]['part']}" in to_text(_report(small_ib))
