"""The scale shortcuts (issue 2) give the answers of the plain definitions they replace.

Per-port arrays vs walking the port groups, the exact-length media memo vs a fresh choice,
the cabling CSV's joined rows vs the csv module, and the port check's bulk pass vs a
fabric that breaks it. Small fabrics only: timing is bench/run.py's business, not a test's.
"""

from __future__ import annotations

import copy
import csv
import io

import pytest
from conftest import compile_text

from supernodeiac.builders.media import MediaChooser
from supernodeiac.catalog import Catalogue, merged
from supernodeiac.checks import CheckContext
from supernodeiac.checks.management import check_management
from supernodeiac.checks.ports import check_ports
from supernodeiac.fabric import PortLayout
from supernodeiac.model.common import MediaPolicy
from supernodeiac.outputs import RenderContext
from supernodeiac.outputs.cabling import COLUMNS, render_cabling

SMALL = """
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: fast}
site:
  rows: [{name: A, racks: 2}, {name: N, racks: 1}]
naming:
  cable_label: '{a},{a_port} "to" {b}'
nodes:
  - {name: gpu, model: hgx-h100, count: 4, placement: {row: A, per_rack: 2, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    tiers: 2
    switch: qm9700
    su_nodes: 4
    endpoints: [{group: gpu}]
    placement:
      leaf: {row: N, per_rack: 8, first_u: 2}
      spine: {row: N, per_rack: 8, first_u: 12}
management: {switch: sn2201}
"""


def _walk(layout: PortLayout, port: int) -> tuple[object, int]:
    """(group, offset) by walking the groups, as the layout did before its arrays."""
    for g, start in zip(layout.groups, layout.starts, strict=True):
        if start <= port < start + g.count:
            return g, port - start
    raise IndexError(port)


def test_port_arrays_match_a_walk_of_the_groups_for_every_catalogue_model():
    catalogue = Catalogue.model_validate(merged(None))
    for name, model in catalogue.devices.items():
        layout = PortLayout(model)
        assert layout.total == sum(g.count for g in model.ports), name
        for port in range(layout.total):
            group, offset = _walk(layout, port)
            slot = layout.slot(port)
            assert layout.group(port) is group and slot.group is group and slot.offset == offset
        for role in {g.role for g in model.ports} | {"absent"}:
            walked = [p for p in range(layout.total) if _walk(layout, p)[0].role == role]
            assert layout.ports_of(role) == walked and layout.has_role(role) == bool(walked)
        # ports_of hands out a fresh list: a caller that edits it cannot corrupt the cache
        layout.ports_of(model.ports[0].role).clear()
        assert len(layout.ports_of(model.ports[0].role)) == sum(g.count for g in model.ports if g.role == model.ports[0].role)
        for bad in (-1, layout.total):
            for lookup in (layout.group, layout.slot):
                try:
                    lookup(bad)
                except IndexError:
                    continue
                raise AssertionError(f"{name}: port {bad} accepted")


def test_exact_length_memo_answers_as_the_rounded_memo_alone():
    catalogue = Catalogue.model_validate(merged(None))
    fast = MediaChooser(catalogue, MediaPolicy(), ("media",))
    plain = MediaChooser(catalogue, MediaPolicy(), ("media",))  # its exact memo is emptied before every call
    # lengths around the DAC (2 m at 100G + margin) and AOC limits; the second round hits the exact memo
    lengths = [0.5, 1.49, 1.5, 1.501, 1.504, 1.505, 2.5, 2.51, 49.5, 49.51, 120.0] * 2
    answers = set()
    for rate in (25.0, 50.0, 100.0, 200.0):
        for cages in (("osfp", "osfp"), ("qsfp28", "osfp"), ("rj45", "rj45")):
            for length in lengths:
                plain._exact.clear()
                got = fast.choose(rate, *cages, length)
                assert got == plain.choose(rate, *cages, length)
                answers.add(got[0])
    assert {"dac", ""} <= answers and len(answers) >= 4  # the lengths do cross media boundaries


def test_cabling_rows_that_need_quoting_round_trip():
    c = compile_text(SMALL)
    assert c.exit_code == 0, [f.message for f in c.findings]
    data = render_cabling(RenderContext(c.blueprint, c.catalogue, c.fabric))["cabling/links.csv"].decode()
    rows = list(csv.reader(io.StringIO(data)))
    assert rows[0] == COLUMNS and len(rows) == len(c.fabric.links) + 1
    f = c.fabric
    for row, link in zip(rows[1:], f.sorted_links(), strict=True):
        a, b = f.devices[link.a], f.devices[link.b]
        assert row[0] == link.id
        assert row[1] == f'{a.name},{f.physical_name(link.a, link.a_port)} "to" {b.name}'  # quoted by csv, read back whole
    # the whole file is what the csv module writes for the same rows
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    assert buf.getvalue() == data


def test_sorted_links_follow_additions():
    c = compile_text(SMALL)
    f = c.fabric
    first = f.sorted_links()
    assert [link.id for link in first] == sorted(link.id for link in f.links)
    # A second cable from the A end of the first link in ID order sorts right beside it.
    extra = copy.copy(first[0])
    f.add_link(extra)
    again = f.sorted_links()
    assert len(again) == len(first) + 1 and again[0] == again[1] == first[0]
    assert [link.id for link in again] == sorted(link.id for link in f.links)


def test_port_check_falls_back_to_per_link_findings():
    c = compile_text(SMALL)
    f = c.fabric
    ctx = CheckContext(c.blueprint, c.catalogue, f)
    assert list(check_ports(ctx)) == []
    # a second cable on both ports of an existing one, and a port a leaf does not have
    twice = copy.copy(f.links[0])  # the same ends: so the same cable ID
    leaf = next(d for d in f.devices if d.role == "leaf" and d.index not in (twice.a, twice.b))
    beyond = copy.copy(next(link for link in f.links if link.b == leaf.index))
    total = f.layouts[leaf.model].total
    beyond.b_port = total
    f.links.extend([twice, beyond])
    expected = [
        f"{f.devices[dev].name} port {f.port_name(dev, port)} carries two links (second: {twice.id})"
        for dev, port in ((twice.a, twice.a_port), (twice.b, twice.b_port))
    ]
    expected.append(f"{leaf.name} ({leaf.model}) has {total} ports; a link uses port {total + 1}")
    assert sorted(x.message for x in check_ports(ctx)) == sorted(expected)


def test_management_check_finds_ports_on_the_data_plane_and_uncabled():
    c = compile_text(SMALL)
    f = c.fabric
    ctx = CheckContext(c.blueprint, c.catalogue, f)
    assert list(check_management(ctx)) == []
    links = list(f.links)
    mgmt = [link for link in links if link.fabric == "mgmt" and f.devices[link.b].role == "mgmt"]
    bmc = next(link for link in mgmt if f.devices[link.a].role == "node")
    bmc.fabric = "ib"  # a BMC cable counted on the data plane (edited as a value, stored below)
    dropped = next(link for link in mgmt if f.devices[link.a].role == "leaf")
    f.links[:] = [link for link in links if link is not dropped]  # a leaf's management port left without a cable
    found = sorted((x.severity.value, x.message) for x in check_management(ctx))
    assert found == [
        ("error", f"{f.devices[bmc.a].name} management port is on the data plane (ib)"),
        ("error", f"{f.devices[dropped.a].name} has a management port with no cable"),
    ]


def test_bulk_lengths_are_the_plain_definition_bit_for_bit():
    """Geometry.lengths (numpy, used by the builders) equals Geometry.cable_length for every
    link of every shipped blueprint (in-rack and across rows), and with some devices unplaced
    (length 0); and it is what the Fabric holds for every cable."""
    from conftest import BLUEPRINTS

    from supernodeiac.builders.geometry import Geometry
    from supernodeiac.pipeline import compile_file

    for path in sorted(BLUEPRINTS.glob("*.yaml")):
        c = compile_file(str(path))
        f, t = c.fabric, c.fabric.links
        cables = [t.specs[s].kind != "connector" for s in t.spec]  # mated connectors have no length
        for unplace in (False, True):
            devices = [copy.copy(d) for d in f.devices]
            for d in devices[::7] if unplace else ():
                d.rack = -1
            # A second geometry over the same racks, reading these devices.
            geo = Geometry(c.blueprint.site, type(f)(f.name, f.models, [], devices, [], f.layouts))
            bulk = geo.lengths(t.a, t.b)
            assert bulk == [geo.cable_length(devices[a], devices[b]) for a, b in zip(t.a, t.b, strict=True)], path.name
            if unplace:
                assert 0.0 in bulk
            else:
                assert [x for x, k in zip(bulk, cables, strict=True) if k] == [
                    x for x, k in zip(t.length_m, cables, strict=True) if k
                ], path.name


def test_cable_ids_are_called_distinct_only_when_they_are():
    """Fabric.cable_ids_distinct (names-unique's shortcut at 10^6 links) says True only for IDs
    that are distinct when formatted: every shipped blueprint under templates whose joint text
    does and does not occur in port names; and False where a port name could move the joint."""
    from conftest import BLUEPRINTS

    from supernodeiac.pipeline import compile_file

    said = {}
    for path in sorted(BLUEPRINTS.glob("*.yaml")):
        f = compile_file(str(path)).fabric
        for template in ("{a}-{a_port}", "{a}/{a_port}", "{a}{a_port}", "x{a}:{a_port}-y", "{a}_{a_port}", "{a}-{b}"):
            f.cable_id, f.links._ids = template, None  # the cached IDs were of another template
            ids = f.links.ids()
            said[(path.stem, template)] = distinct = f.cable_ids_distinct()
            assert not distinct or len(set(ids)) == len(ids), (path.name, template)
    assert said[("dragonfly-plus", "{a}-{a_port}")] and said[("small-ib", "{a}-{a_port}")]
    assert not any(v for (_, template), v in said.items() if template in ("{a}{a_port}", "{a}-{b}"))
    # A port name that starts like the joint: "x" + "--" + "-1" is "x-" + "--" + "1".
    f = compile_text(SMALL).fabric
    f.cable_id = "{a}--{a_port}"
    assert f.cable_ids_distinct()
    layout = f.layouts[f.devices[0].model]
    layout._names = ["-" + name for name in layout.names]
    assert not f.cable_ids_distinct()
    # Two links from one port (a hand edit): the same ID twice.
    f = compile_text(SMALL).fabric
    t = f.links
    t.add(t.a[0], t.a_port[0], t.b[1], t.b_port[1], 1.0, t.spec[0])
    assert not f.cable_ids_distinct() and len(set(t.ids())) == len(t) - 1


def test_the_name_index_made_on_first_read_keeps_the_first_device_of_a_name():
    """Fabric.device(name) after devices added one by one and in bulk, before and after the index
    is first read: the first device with a name keeps it, as the names check expects."""
    from supernodeiac.fabric import Device, Fabric

    c = compile_text(SMALL)
    f = Fabric("t", c.fabric.models)
    model = c.fabric.devices[0].model

    def make(index: int, name: str) -> Device:
        return Device(index, name, "node", model, "g", -1, 0, 1)

    f.add_device(make(0, "a"))
    f.add_devices([make(1, "b"), make(2, "a"), make(3, "c")])
    assert [f.device(n).index for n in "abc"] == [0, 1, 3]
    assert not f.has_unique_names()
    f.add_device(make(4, "d"))
    f.add_devices([make(5, "c"), make(6, "e")])  # added after the first read
    assert [f.device(n).index for n in "abcde"] == [0, 1, 3, 4, 6]
    g = Fabric("u", c.fabric.models)
    g.add_devices([make(0, "x"), make(1, "X")])
    assert g.has_unique_names() and not g.has_unique_names(fold_case=True)


def test_the_one_plug_problems_kept_from_the_build_are_those_of_the_settled_links():
    """link_plug_problems reads what the build's last settling round left on the Fabric: the same
    answer as computing the rule afresh on the settled links, for every shipped blueprint."""
    from conftest import BLUEPRINTS

    from supernodeiac.facts.cage_plan import link_cages, link_plug_problems, plug_problems, spec_columns
    from supernodeiac.pipeline import compile_file

    for path in sorted(BLUEPRINTS.glob("*.yaml")):
        c = compile_file(str(path))
        f, media = c.fabric, c.catalogue.media
        kept = link_plug_problems(f, media)
        cages, spec = link_cages(f), f.links.arrays().spec
        shape, head_b, medium, cable = spec_columns(f, media)
        fresh = plug_problems(cages, shape[spec], head_b[spec], medium[spec], cable[spec] & cages.valid & (medium[spec] >= 0))
        assert kept.tolist() == fresh.tolist(), path.name
        assert spec.tolist() == f.links.spec  # the arrays kept through the settling are the column


def test_numbered_names_are_the_template_formatted_name_by_name():
    # The group's field formatted once, then one map: the names (and errors) of the node
    # builder's name-by-name positional format, which is str.format for plain templates.
    from supernodeiac.fabric.cable_naming import numbered_names, positional_format

    templates = [
        "{group}-{index:04d}",
        "{index}{group}",
        "x{{{group!r:>8}}}-{index:x}-{index}",
        "fixed",
        "{group}{group}-{index:03}",
    ]
    for template in templates:
        for group, count in (("gpu", 12), ("a{b}", 3), ("n", 0)):
            plain = [template.format(group=group, index=i) for i in range(1, count + 1)]
            name = positional_format(template, ("group", "index"))
            assert [name(group, i) for i in range(1, count + 1)] == plain
            assert numbered_names(template, group, count) == plain, template
    for template in ("{group:d}-{index}", "{index:s}", "{group.x}", "{group:{index}}"):
        with pytest.raises((ValueError, AttributeError, KeyError)) as plain_error:
            positional_format(template, ("group", "index"))("g", 1)
        with pytest.raises(type(plain_error.value)) as fast_error:
            numbered_names(template, "g", 2)
        assert str(fast_error.value) == str(plain_error.value)


def test_placement_columns_are_place_slot_by_slot():
    # place_columns' repeated racks and units against place() of every slot, row and follow.
    from supernodeiac.builders.geometry import Geometry
    from supernodeiac.fabric import Device, Fabric
    from supernodeiac.model.site import Placement, Site

    site = Site.model_validate({"rows": [{"name": "A", "racks": 9}, {"name": "B", "racks": 7}], "rack_units": 48})
    geometry = Geometry(site, Fabric("t", {}))
    fabric = geometry.fabric
    for k in range(5):  # a followed group over racks 9, 7, 5, ...
        fabric.devices.append(Device(k, f"n{k}", "node", "m", "g", 8 - 2 * k, 1, 1))
    geometry.groups["g"] = list(range(5))
    placements = [
        Placement(row="B", per_rack=3, first_rack=2, first_u=5, gap_u=1),
        Placement(row="A", per_rack=1),
        Placement(follow=["g"], per_rack=4, first_rack=2, first_u=40),
    ]
    for placement in placements:
        for count in (0, 1, 4, 5, 12):
            try:
                plain = [geometry.place(placement, slot, 2, ()) for slot in range(count)]
            except Exception as exc:  # the columns fail alike when a slot does not fit
                with pytest.raises(type(exc)):
                    geometry.place_columns(placement, count, 2, ())
                continue
            racks, units = geometry.place_columns(placement, count, 2, ())
            assert list(zip(racks, units)) == plain


def test_shared_lengths_are_the_floats_of_tolist():
    # One object per distinct length: the same values (bit for bit), a -0.0 and NaN kept apart.
    import math

    import numpy as np

    from supernodeiac.builders.geometry import _shared_floats

    for values in ([2.5, 1.0, 2.5, 0.0, 1.0], [0.0, -0.0, 3.0], [math.nan, 1.0, math.nan], []):
        arr = np.array(values, dtype=np.float64)
        shared = _shared_floats(arr)
        assert [x.hex() for x in shared] == [x.hex() for x in arr.tolist()]
    shared = _shared_floats(np.array([2.5, 1.0, 2.5]))
    assert shared[0] is shared[2]


@pytest.mark.parametrize("name", ["dragonfly-balanced", "roce-3tier-oversub", "nvl72-pod"])
def test_link_ends_share_the_devices_index_ints(name):
    # add_links hands the devices' own index objects to the link table: the values the builder
    # passed (positions), and one int object per device named, not one per link end.
    from conftest import shipped

    fabric = shipped(name).fabric
    t = fabric.links
    ends = list(t.a) + list(t.b)
    assert [fabric.devices[x].index for x in ends] == ends
    bulk = [x for x in ends if x >= 256]  # CPython caches the small ints anyway
    assert bulk
    assert len({id(x) for x in bulk}) == len(set(bulk))


def _plug_problems_concatenated(cages, shape, head_b, medium, sel):
    """plug_problems as written before the two-pass reduction: every reduction over the A ends
    and B ends concatenated (the reference the two-pass version must match)."""
    import numpy as np

    from supernodeiac.facts.cage_plan import FANOUT, MIXED, SPLIT, SPLITTER, STRAIGHT

    big = np.iinfo(np.int64).max

    def reduce(keys, values, n):
        lo, hi = np.full(n, big, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        np.minimum.at(lo, keys, values)
        np.maximum.at(hi, keys, values)
        return lo, hi

    idx = np.flatnonzero(sel)
    n = max(cages.count, 1)
    out = np.zeros(len(sel), dtype=np.int64)
    if not len(idx):
        return out
    a, b = cages.a[idx], cages.b[idx]
    ends, far = np.concatenate((a, b)), np.concatenate((b, a))
    count = np.bincount(ends, minlength=n)
    fmin, fmax = reduce(ends, far, n)
    paired = (fmin[a] == fmax[a]) & (fmin[b] == fmax[b]) & (cages.pos_a[idx] == cages.pos_b[idx])
    single = (count == 1).astype(np.int64)
    far_single, _ = reduce(ends, single[far], n)
    med = medium[idx]
    mmin, mmax = reduce(ends, np.concatenate((med, med)), n)
    uniform = mmin == mmax
    mixed = ~(uniform[a] & uniform[b])
    sh, hb = shape[idx], head_b[idx]
    head, leg = np.where(hb, b, a), np.where(hb, a, b)
    split_ok = (single[leg] == 1) & (far_single[head] == 1)
    reason = np.zeros(len(idx), dtype=np.int64)
    reason[~mixed & (sh == SPLITTER) & ~split_ok] = SPLIT
    reason[~mixed & (sh == STRAIGHT) & ~paired] = FANOUT
    reason[mixed] = MIXED
    out[idx] = reason
    return out


def test_plug_problems_two_pass_matches_the_concatenated_reduction():
    # Random cage wirings, dense enough that every reason occurs: the same reason per link.
    import numpy as np

    from supernodeiac.facts.cage_plan import FANOUT, MIXED, SPLIT, LinkCages, plug_problems

    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(60):
        links, cages_n = int(rng.integers(1, 80)), int(rng.integers(2, 40))
        a, b = rng.integers(0, cages_n, links), rng.integers(0, cages_n, links)
        cages = LinkCages(a, b, rng.integers(0, 2, links), rng.integers(0, 2, links), np.ones(links, dtype=bool), cages_n)
        shape = rng.integers(0, 6, links)
        head_b = rng.integers(0, 2, links).astype(bool)
        medium = rng.integers(0, 1 + trial % 3, links)
        sel = rng.random(links) < 0.9
        got = plug_problems(cages, shape, head_b, medium, sel)
        assert got.tolist() == _plug_problems_concatenated(cages, shape, head_b, medium, sel).tolist()
        seen.update(got.tolist())
    assert {FANOUT, MIXED, SPLIT} <= seen
