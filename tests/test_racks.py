"""Rack budgets: power, cooling, weight, feed, cable density and what shares a rack, each against a
hand computation, located where the fix goes; and the catalogue's physical figures."""

from __future__ import annotations

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.catalog import builtin_data, merged
from supernodeiac.catalog.types import Catalogue
from supernodeiac.facts.racks import rack_loads
from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file


def hgx_site(per_rack: int, budget: str, *, racks: int = 2, extra: str = "") -> str:
    return f"""apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: racks}}
site:
  rack_units: 64           # room for up to 7 x 8U nodes
  budget: {budget}
  rows: [{{name: A, racks: {racks}}}]
nodes:
  - name: gpu
    model: hgx-h100
    count: {per_rack}
    placement: {{row: A, per_rack: {per_rack}, first_u: 2, gap_u: 0}}
{extra}"""


def found(c, rule: str) -> list:
    return [f for f in c.findings if f.rule == rule and f.severity is not Severity.INFO]


def test_an_over_budget_rack_is_a_located_error_with_the_rack_the_sum_and_the_limit():
    # 5 HGX H100 at 10.2 kW maximum (catalogue physical.power_max_w) = 51.0 kW against 45 kW
    text = hgx_site(5, "{power_kw: 45, cooling: air}")
    c = compile_text(text)
    [e] = found(c, "rack-power")
    assert e.severity is Severity.ERROR and c.exit_code == 1
    assert "rack A01 draws 51.0 kW at maximum power; its budget is 45 kW" in e.message
    assert "5 x hgx-h100 (gpu) 51.0 kW" in e.message
    # located at the placement of the largest contributor: the key to change
    assert e.path == ("nodes", 0, "placement")
    assert text.splitlines()[e.location.line - 1].strip().startswith("placement:")
    ok = compile_text(hgx_site(4, "{power_kw: 45, cooling: air}"))  # 40.8 kW
    assert not found(ok, "rack-power")


def test_air_cooling_has_a_limit_and_liquid_devices_need_a_liquid_rack():
    # 7 x 10.2 = 71.4 kW in an air-cooled rack budgeted 80 kW: above the catalogue's 60 kW air limit
    c = compile_text(hgx_site(7, "{power_kw: 80}"))
    [e] = found(c, "rack-cooling")
    limit = Catalogue.model_validate(merged(None)).facility.air_cooled_limit_kw
    assert f"draws 71.4 kW on air cooling; an air-cooled rack takes at most {limit:g} kW" in e.message
    assert not found(compile_text(hgx_site(7, "{power_kw: 80, cooling: liquid}")), "rack-cooling")
    # a declared air limit of the site's own wins over the catalogue's
    assert found(compile_text(hgx_site(4, "{power_kw: 45, air_cooled_limit_kw: 40}")), "rack-cooling")
    # OEX boards are liquid-cooled: an air row cannot hold them
    oex = """apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: oex}
site:
  budget: {power_kw: 150}
  rows: [{name: S, racks: 1}]
scaleup:
  - {name: sn, kind: orthogonal, compute_board: oex-cb8, switch_board: oex-sb2, compute_boards: 4, switch_boards: 8,
     placement: {row: S, first_u: 2}}
"""
    [e] = [x for x in found(compile_text(oex), "rack-cooling") if "need liquid cooling" in x.message]
    assert "rack S01 is air-cooled" in e.message and "4 x oex-cb8" in e.message and "8 x oex-sb2" in e.message


def test_row_budget_overrides_the_site_key_by_key():
    text = hgx_site(4, "{power_kw: 30, cooling: air}").replace(
        "rows: [{name: A, racks: 2}]", "rows: [{name: A, racks: 2, budget: {power_kw: 45}}]"
    )
    c = compile_text(text)
    assert not found(c, "rack-power") and not found(c, "rack-cooling")
    [e] = found(compile_text(hgx_site(4, "{power_kw: 30, cooling: air}")), "rack-power")
    assert "40.8 kW" in e.message and "30 kW" in e.message


def test_weight_budget():
    # 4 x 130 kg (catalogue, UNCONFIRMED) = 520 kg against 500 kg
    [e] = found(compile_text(hgx_site(4, "{power_kw: 45, weight_kg: 500}")), "rack-weight")
    assert "rack A01 weighs 520 kg; its budget is 500 kg" in e.message


def test_power_shelves_must_supply_the_rack():
    """An NVL72 rack: 8 shelves x 33 kW = 264 kW. Trays overridden to 15 kW: 18 x 15 + 9 x 0.8 = 277.2 kW."""
    c = compile_file(str(BLUEPRINTS / "nvl72-pod.yaml"))
    shelves = [d for d in c.fabric.devices if d.role == "power-shelf"]
    assert len(shelves) == 8 * 8  # 8 per NVL72 rack, from the tray's catalogue power_shelves
    assert {c.fabric.racks[d.rack].name for d in shelves} == {f"A{i:02d}" for i in range(1, 9)}
    text = (
        (BLUEPRINTS / "nvl72-pod.yaml").read_text()
        + """
catalogue:
  devices:
    gb200-tray:
      physical: {power_max_w: 15000, cooling: hybrid, power_shelves: {model: nvl-power-shelf, count: 8}}
"""
    )
    over = compile_text(text)
    feed = found(over, "rack-feed")
    assert len(feed) == 8 and "draws 277.3 kW; its power shelves and PDUs supply 264.0 kW" in feed[0].message


def test_cable_density_is_a_warning():
    """16 leaves with 64 cabled ports each in one rack: 1,024 ends, plus the rack switch's 2 uplinks."""
    text = """apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: dense}
site:
  budget: {power_kw: 30}
  rows: [{name: A, racks: 16}, {name: N, racks: 2}]
nodes:
  - {name: h, model: hgx-h100, count: 64, placement: {row: A, per_rack: 4, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints: [{group: h}]
    placement:
      leaf: {row: N, per_rack: 16, first_u: 2}
      spine: {row: N, first_rack: 2, per_rack: 16, first_u: 2}
management:
  switch: sn2201
  uplinks: 2
  aggregation: {switch: sn4600c, count: 2, placement: {row: N, first_rack: 2, per_rack: 2, first_u: 30}}
"""
    c = compile_text(text.replace("budget: {power_kw: 30}", "budget: {power_kw: 30, cables_max: 2000}"))
    assert not found(c, "rack-cables")
    c = compile_text(text)
    warned = {w.message.split()[1]: w for w in found(c, "rack-cables")}
    # N01: 16 leaves x (32 down + 32 up) = 1,024, + 2 rack-switch uplinks = 1,026 > 1,024
    assert "N01" in warned and "1,026 cable ends leaving it, above the 1,024" in warned["N01"].message
    assert warned["N01"].severity is Severity.WARNING


def test_compute_mixed_with_a_fabrics_core_is_a_warning():
    text = """apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: mix}
site:
  rows: [{name: A, racks: 4}, {name: N, racks: 1}]
nodes:
  - {name: h, model: hgx-h100, count: 16, placement: {row: A, per_rack: 4, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints: [{group: h}]
    placement:
      leaf: {row: N, per_rack: 8, first_u: 2}
      spine: {row: A, per_rack: 1, first_u: 40}
"""
    c = compile_text(text)
    mixed = found(c, "rack-mix")
    spines = sum(1 for d in c.fabric.devices if d.role == "spine")
    assert len(mixed) == spines == 4  # one spine in each compute rack
    assert "rack A01 holds 40.8 kW of compute and the core of a fabric (spines/cores: 1 of ib)" in mixed[0].message
    assert mixed[0].path == ("scaleout", 0, "placement")


def test_without_a_budget_only_the_heaviest_rack_is_reported():
    c = compile_text(hgx_site(7, "{power_kw: 80}").replace("  budget: {power_kw: 80}\n", ""))
    assert not [f for f in c.findings if f.rule.startswith("rack-") and f.severity is not Severity.INFO]
    [i] = [f for f in c.findings if f.rule == "rack-budget"]
    assert "the heaviest, A01, draws 71.4 kW" in i.message and "no rack budget is declared" in i.message


def test_rack_loads_are_sums_over_the_catalogue():
    c = compile_file(str(BLUEPRINTS / "nebula-x128-ib.yaml"))
    f = c.fabric
    loads = {load.name: load for load in rack_loads(f, c.catalogue).values()}
    cb, sb = f.models["oex-cb8"], f.models["oex-sb2"]
    s01 = loads["S01"]
    # one chassis: 16 compute boards, 8 switch boards, 6 power shelves (0 W), the rack switch
    assert s01.power_max_w == pytest.approx(16 * cb.power_max_w + 8 * sb.power_max_w + f.models["sn2201"].power_max_w)
    chassis = f.models["oex-x128-chassis"]
    shelf = f.models[chassis.physical.power_shelves.model]
    assert s01.units == chassis.height_u + chassis.physical.power_shelves.count * shelf.height_u + 1
    assert s01.power_kw <= c.blueprint.site.rows[0].budget.power_kw


@pytest.mark.parametrize("path", sorted(BLUEPRINTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_blueprint_declares_a_budget_and_keeps_it(path):
    c = compile_file(str(path))
    bp = c.blueprint
    assert bp.site.budget is not None or all(r.budget is not None for r in bp.site.rows)
    assert not [f for f in c.findings if f.rule.startswith("rack-") and f.severity is not Severity.INFO]
    assert not [f for f in c.findings if f.rule.startswith("management-")]


def test_physical_figures_carry_sources():
    """One physical.yaml entry per built-in device (devices.yaml and facility.yaml alike) holds
    its part and its rack figures, each with a source and a grade."""
    data = builtin_data()
    assert set(data["physical"]) == set(data["devices"])
    cat = Catalogue.model_validate(merged(None))
    for name, m in cat.devices.items():
        assert m.part is not None and m.part.grade, name
        assert m.physical is not None and m.physical.sources, name
        assert all(s.grade for s in m.physical.sources), name
    assert cat.devices["qm9700"].power_typical_w == 747 and cat.devices["qm9700"].power_max_w == 1720
    assert cat.devices["nvl-power-shelf"].physical.supply_w == 6 * 5500


def test_explain_reports_each_rows_racks_against_the_budget(small_ib):
    """small-ib row A: 4 racks of 4 HGX (10.2 kW, 130 kg, 8U) + the rack switch (0.1 kW, 1U) + 3 PDUs:
    40.9 kW of 45, 33U, 520 kg (the switch and PDUs have no catalogue weight)."""
    from supernodeiac.explain import explain, to_text

    report = explain(small_ib.blueprint, small_ib.catalogue, small_ib.fabric)
    racks = report["racks"]
    rows = {r["row"]: r for r in racks["rows"]}
    a = rows["A"]
    assert (a["racks"], a["power_kw_max"], a["budget_kw"], a["cooling"], a["units_max"]) == (4, 40.9, 45, "air", 33)
    assert (a["weight_kg_max"], a["weight_complete"]) == (520, False)
    assert racks["racks"] == 6 and racks["declared"]
    loads = rack_loads(small_ib.fabric, small_ib.catalogue).values()
    assert racks["power_kw_max"] == pytest.approx(sum(x.power_max_w for x in loads) / 1000)
    assert "row A: 4 racks, heaviest 40.9 of 45 kW air, up to 33 of 48U" in to_text(report)


def test_optics_count_in_a_rack_only_where_the_maximum_leaves_them_out():
    """supercluster-2level: the oex-sb2-up's 1.7 kW is the board alone (modules_in_max false), so its
    rack carries one module per occupied uplink cage; a QM9700's 1.72 kW already includes its
    modules ("with active modules"), so the leaves' racks carry none on top."""
    c = compile_file(str(BLUEPRINTS / "supercluster-2level.yaml"))
    f, cat = c.fabric, c.catalogue
    assert not cat.devices["oex-sb2-up"].physical.modules_in_max and cat.devices["qm9700"].physical.modules_in_max
    loads = {load.name: load for load in rack_loads(f, cat).values()}
    # by hand: the distinct (board, cage) of every transceiver link end on the S01 switch boards
    plugs: dict[tuple[int, int], float] = {}
    for link in f.links:
        for dev, port, module in ((link.a, link.a_port, link.a_module), (link.b, link.b_port, link.b_module)):
            d = f.devices[dev]
            if d.model == "oex-sb2-up" and f.racks[d.rack].name == "S01" and module:
                plugs[(dev, f.layouts[d.model].cage_of(port).index)] = cat.transceivers[module].power_w
    assert len(plugs) == 8 * 64
    s01 = loads["S01"]
    boards = sum(f.models[f.devices[i].model].power_max_w for i in s01.devices)
    assert s01.power_max_w == pytest.approx(boards + sum(plugs.values()))
    assert sum(plugs.values()) == pytest.approx(8 * 64 * 8.5)
    n01 = loads["N01"]
    assert n01.power_max_w == pytest.approx(sum(f.models[f.devices[i].model].power_max_w for i in n01.devices))
    assert any(f.devices[i].model == "qm9700" for i in n01.devices)
