"""Media policy and reach (issue 8): media chosen per cage from the catalogue's product lines,
reach like the data sheets (ordered stock length within the rated reach), derating only as
explicit policy, a warning for copper at the edge of its reach, per-tier rules."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.builders.media import MediaChooser
from supernodeiac.findings import Severity
from supernodeiac.model.common import MediaPolicy
from supernodeiac.pipeline import compile_file

# Two racks in one row, 0.6 m apart.
TWO_RACKS = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: media-test}}
site:
  rows:
    - {{name: A, racks: {racks}}}
{media}
nodes:
  - name: gpu
    model: hgx-h100
    count: 1
    placement: {{row: A, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints: [{{group: gpu}}]
    placement:
      leaf: {{row: A, first_rack: {leaf_rack}, first_u: 12, per_rack: 8}}
      spine: {{row: A, first_rack: {leaf_rack}, first_u: 40, per_rack: 4}}
"""

# One single-NIC host on one leaf and one spine in one rack: the 32 leaf-spine links run between
# the same two switches (16 twin-port cage pairs), their length set by the spine's U: in one rack
# a cable is the vertical distance between the two devices plus the 0.3 m in-rack service loop.
ONE_RACK = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: reach-test}}
{catalogue}site:
  rows:
    - {{name: A, racks: 1}}
    - {{name: B, racks: 1}}
{media}
nodes:
  - name: h
    model: ufm-appliance
    count: 1
    placement: {{row: B, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    rail_optimized: false
    endpoints: [{{group: h}}]
    placement:
      leaf: {{row: A, first_u: 2}}
      spine: {{row: A, first_u: {spine_u}}}
"""


def _compile(media: str = "", racks: int = 2, leaf_rack: int = 2):
    return compile_text(TWO_RACKS.format(media=media, racks=racks, leaf_rack=leaf_rack))


def _one_rack(spine_u: int, media: str = "", catalogue: str = ""):
    return compile_text(ONE_RACK.format(spine_u=spine_u, media=media, catalogue=catalogue))


def _links(c, tier: str):
    return [link for link in c.fabric.links if link.tier == tier]


def _errors(c, rule: str | None = None):
    return [f for f in c.findings if f.severity is Severity.ERROR and (rule is None or f.rule == rule)]


def test_a_node_cage_feeding_two_rails_gets_optics_even_in_one_rack():
    """The DGX H100 cage holds the NICs of two rails (GPU 7 and 4), which land on two leaves: a
    straight cable cannot serve it, so it gets a twin-port flat-top module whatever the length."""
    c = _compile(racks=2, leaf_rack=1)  # node and leaves in one rack: a 1-2 m run
    links = _links(c, "node-leaf")
    assert links and max(link.length_m for link in links) < 2.5
    assert {link.medium for link in links} == {"sr4-400g"}
    assert {(link.a_module, link.b_module) for link in links} == {("mma4z00-ns-flt", "mma4z00-ns")}
    assert c.exit_code == 0 and not _errors(c)


def test_a_cage_pair_in_one_rack_gets_one_twin_port_dac():
    """Leaf and spine cages joined port for port, 1.9 m apart: one MCP4Y10 2 x 400G DAC per cage
    pair, at a 2 m stock length equal to its rated reach (accepted), with the copper warning."""
    c = _one_rack(spine_u=38)  # 36 U apart: 1.6 m + 0.3 m loop
    links = _links(c, "leaf-spine")
    assert len(links) == 32 and {round(link.length_m, 3) for link in links} == {1.9}
    assert {link.medium for link in links} == {"dac-2x400g"}
    assert not _errors(c), _errors(c)
    [warn] = [f for f in c.findings if f.rule == "reach-margin"]
    assert warn.severity is Severity.WARNING and "ordered at 2 m" in warn.message and "2 m rated reach" in warn.message


def test_near_limit_copper_warning_can_be_tuned_and_turned_off():
    wide = _one_rack(spine_u=28, media="media:\n  copper_warning_m: 1\n")  # 1.46 m run: a 1.5 m DAC
    narrow = _one_rack(spine_u=28)
    off = _one_rack(spine_u=38, media="media:\n  copper_warning_m: 0\n")
    assert {link.medium for link in _links(wide, "leaf-spine")} == {"dac-2x400g"}
    assert [f.rule for f in wide.findings if f.severity is Severity.WARNING and f.rule != "management"] == ["reach-margin"]
    assert not [f for f in narrow.findings if f.rule == "reach-margin"]
    assert not [f for f in off.findings if f.rule == "reach-margin"]


def test_one_stock_step_past_the_dac_reach_is_a_located_error_naming_the_part():
    pin = "media:\n  tiers:\n    leaf-spine: {pin: dac-2x400g}\n"
    at = _one_rack(spine_u=38, media=pin)
    assert not _errors(at)
    past = _one_rack(spine_u=45, media=pin)  # 43 U: 2.2 m, past the longest (2 m) MCP4Y10
    [e] = _errors(past)
    assert e.rule == "reach" and "MCP4Y10" in e.message and "rated reach 2 m" in e.message
    # located at the per-tier pin: line 8 'media:', 'pin' on line 10 at column 18
    assert (e.location.line, e.location.col) == (10, 18)
    # and one stock step past the rated reach, for a part that is stocked longer than it is rated:
    catalogue = (
        "catalogue:\n  media:\n    my-dac:\n      kind: dac\n      description: third-party twin-port DAC\n"
        "      ends: [{form: osfp, top: finned, lanes: 8}]\n      cages: [osfp]\n      reach_m: {100: 2}\n"
        "      stock_lengths_m: [1, 1.5, 2, 2.5, 3]\n      relative_cost: 1\n"
        "      part: {number: MY-DAC-Nxxx, grade: ILLUSTRATIVE}\n      sources: [{ref: test, grade: ILLUSTRATIVE}]\n"
    )
    mine = _one_rack(spine_u=45, catalogue=catalogue, media="media:\n  tiers:\n    leaf-spine: {pin: my-dac}\n")
    [e] = _errors(mine)
    assert e.rule == "reach" and "needs a 2.5 m my-dac (MY-DAC-Nxxx)" in e.message and "rated reach of 2 m" in e.message


def test_the_policy_moves_on_to_active_copper_then_optics_as_runs_grow():
    assert {link.medium for link in _links(_one_rack(spine_u=45), "leaf-spine")} == {"lacc-2x400g"}  # 2.2 m: LACC 3 m
    c = _compile(racks=12, leaf_rack=12)  # node 11 racks from its leaves: ~10 m
    assert {link.medium for link in _links(c, "node-leaf")} == {"sr4-400g"}
    far = _compile(racks=100, leaf_rack=100)  # ~65 m: past multimode, single-mode (the 100 m class)
    assert {link.medium for link in _links(far, "node-leaf")} == {"dr4-400g-100m"}
    assert {(link.a_module, link.b_module) for link in _links(far, "node-leaf")} == {("mms4x00-ns-flt", "mms4x00-ns")}
    assert far.exit_code == 0


def test_multimode_past_its_reach_is_an_error_and_single_mode_passes():
    sr = _compile(media="media:\n  pin: sr\n", racks=100, leaf_rack=100)
    errors = _errors(sr, "reach")
    assert errors and "sr4-400g (MMA4Z00-NS-FLT + MMA4Z00-NS)" in errors[0].message
    assert "rated reach 50 m" in errors[0].message and (errors[0].location.line, errors[0].location.col) == (8, 3)
    dr = _compile(media="media:\n  pin: dr\n", racks=100, leaf_rack=100)
    assert not _errors(dr) and {link.medium for link in _links(dr, "node-leaf")} <= {"dr4-400g-100m", "dr4-400g"}


def test_derating_is_explicit_policy_and_off_by_default():
    plain = _one_rack(spine_u=38)
    margin = _one_rack(spine_u=38, media="media:\n  margin_m: 0.5\n")
    percent = _one_rack(spine_u=38, media="media:\n  derate_pct: 10\n")
    assert {link.medium for link in _links(plain, "leaf-spine")} == {"dac-2x400g"}
    # 2 m + 0.5 m margin, or 2 m > 90 % of 2 m: the DAC is out, active copper takes the run
    assert {link.medium for link in _links(margin, "leaf-spine")} == {"lacc-2x400g"}
    assert {link.medium for link in _links(percent, "leaf-spine")} == {"lacc-2x400g"}
    for c in (margin, percent):
        assert not _errors(c) and not [f for f in c.findings if f.rule == "reach-margin"]


def test_per_tier_policy_forbids_and_pins_one_tier_only():
    media = "media:\n  tiers:\n    leaf-spine: {forbid: [dac, acc]}\n"
    c = _one_rack(spine_u=38, media=media)
    assert {link.medium for link in _links(c, "leaf-spine")} == {"sr4-400g"}
    assert {link.medium for link in _links(c, "node-leaf")} == {link.medium for link in _links(_one_rack(38), "node-leaf")}
    pinned = _one_rack(spine_u=38, media="media:\n  tiers:\n    node-leaf: {pin: dr}\n")
    assert {link.medium for link in _links(pinned, "node-leaf")} == {"dr4-400g-100m"}
    assert all(link.pinned and link.origin[-3:] == ("tiers", "node-leaf", "pin") for link in _links(pinned, "node-leaf"))
    assert {link.medium for link in _links(pinned, "leaf-spine")} == {"dac-2x400g"}


def test_a_pinned_straight_cable_on_a_fanned_out_cage_is_reported_as_two_plugs():
    pin = "media:\n  tiers:\n    node-leaf: {pin: lacc-2x400g-ftf}\n"
    c = _compile(media=pin, racks=2, leaf_rack=1)
    [e] = _errors(c, "one-plug")
    assert "gpu-0001 OSFP" in e.message and "straight cable" in e.message and "ib-leaf-su001-" in e.message
    assert e.path[-3:] == ("tiers", "node-leaf", "pin")


def test_catalogue_override_adds_a_users_own_part():
    catalogue = (
        "catalogue:\n  media:\n    my-aoc:\n      kind: aoc\n      description: third-party 2 x 400G AOC\n"
        "      ends: [{form: osfp, top: finned, lanes: 8}]\n      cages: [osfp]\n      reach_m: {100: 30}\n"
        "      stock_lengths_m: [3, 5, 10, 20, 30]\n      relative_cost: 3\n"
        "      parts: {3: MY-AOC-3M, 5: MY-AOC-5M, 10: MY-AOC-10M, 20: MY-AOC-20M, 30: MY-AOC-30M}\n"
        "      part: {number: MY-AOC, grade: ILLUSTRATIVE}\n      sources: [{ref: test, grade: ILLUSTRATIVE}]\n"
    )
    media = "media:\n  tiers:\n    leaf-spine: {allow: [my-aoc]}\n"
    c = _one_rack(spine_u=38, catalogue=catalogue, media=media)
    assert {link.medium for link in _links(c, "leaf-spine")} == {"my-aoc"} and c.exit_code == 0


def test_an_optic_with_the_wrong_fibre_cannot_be_described():
    bad = "catalogue:\n  media:\n    sr4-400g: {cord: mfp7e30}\n"  # multimode modules, single-mode cord
    c = _one_rack(spine_u=38, catalogue=bad)
    assert c.exit_code == 2
    errors = [f for f in c.findings if f.rule == "media-fit"]
    assert len(errors) == 4  # each of its four modules against the single-mode cord
    assert all("sr4-400g" in e.message and "om4" in e.message and "os2" in e.message for e in errors)
    assert {e.path for e in errors} == {("catalogue", "media", "sr4-400g")}


def test_the_default_policy_on_shipped_fabrics_uses_only_their_product_line():
    """Every shipped InfiniBand or Ethernet fabric takes media from its transport's line for its
    lane rate (lines.yaml): no part that does not exist for that fabric (no AOC or AEC at NDR)."""
    for path in sorted(BLUEPRINTS.glob("*.yaml")):
        c = compile_file(str(path))
        chooser = MediaChooser(c.catalogue, MediaPolicy(), ("media",))
        transports = {f.name: f.transport for f in c.blueprint.scaleout}
        for link in c.fabric.links:
            transport = transports.get(link.fabric)
            if transport is None or link.pinned:
                continue
            line = chooser.line(transport, link.lane_gbps)
            assert link.medium in line, (path.name, link.id, link.medium, transport, link.lane_gbps)
            assert c.catalogue.media[link.medium].kind not in ("aoc", "aec"), (path.name, link.id)


def test_a_port_that_does_not_downshift_gets_no_medium():
    """Quantum-X800 ports run 200G lanes only: an NDR leaf cannot be cabled to an XDR spine."""
    c = compile_text(
        TWO_RACKS.format(media="", racks=2, leaf_rack=2).replace("switch: qm9700", "switch: qm9700\n    spine_switch: q3400")
    )
    [e] = _errors(c, "reach")
    assert "no medium reaches" in e.message and "200G lanes only" in e.hint


def test_chooser_decides_each_exact_length_on_its_own():
    """Lengths a hair apart on both sides of a reach limit get different media, in either order."""
    c = _compile(racks=2, leaf_rack=1)
    dac = c.catalogue.media["dac"]
    limit = dac.reach_at(200)  # the generic DAC's reach at 200G/lane: the boundary under test
    for order in ((limit - 0.004, limit + 0.004), (limit + 0.004, limit - 0.004)):
        chooser = MediaChooser(c.catalogue, MediaPolicy(), ("media",))
        picked = {length: chooser.choose(200, "osfp", "osfp", length)[0] for length in order}
        assert picked[limit - 0.004] == "dac"
        chosen = picked[limit + 0.004]
        assert chosen not in ("", "dac")


def test_choose_many_agrees_with_choose_length_by_length():
    """The sorted sweep of pick_many makes the same choice as pick, on both sides of every limit."""
    import random

    from supernodeiac.catalog.fit import CageShape

    c = _compile(racks=2, leaf_rack=1)
    rng = random.Random(7)
    edges = [s for m in c.catalogue.media.values() for s in m.stock_lengths_m]
    edges += [s for cord in c.catalogue.cords.values() for s in cord.stock_lengths_m]
    lengths = {rng.uniform(0, 2500) for _ in range(2000)} | {e + d for e in edges for d in (-0.5, -1e-9, 0, 1e-9, 0.5)}
    switch = CageShape("osfp", "finned", 8, 2, "switch", 100.0)
    node = CageShape("osfp", "flat", 8, 2, "host", 100.0)
    for policy in (MediaPolicy(), MediaPolicy(margin_m=0.5), MediaPolicy(derate_pct=20)):
        for a, b in ((switch, switch), (node, switch)):
            sweep = MediaChooser(c.catalogue, policy, ("media",)).pick_many(100, a, b, lengths, transport="infiniband")
            one = MediaChooser(c.catalogue, policy, ("media",))
            assert sweep == {length: one.pick(100, a, b, length, transport="infiniband") for length in lengths}
            assert "" in {choice.medium for choice in sweep.values()}  # the lengths span past the longest reach


@pytest.mark.parametrize("name", ["dac-2x400g", "sr4-400g", "dr4-400g", "lacc-2x800g", "dr4-800g"])
def test_vendor_media_name_their_parts(name):
    c = _compile()
    m = c.catalogue.media[name]
    if m.shape == "transceiver":
        assert all(not c.catalogue.transceivers[k].part.generic for k in m.modules)
        assert c.catalogue.cords[m.cord].part.number
    else:
        assert m.part is not None and not m.part.generic


# Single-port 400G OSFP NICs (flat top, ConnectX-7) next to an NDR leaf: the leaf's twin-port cage
# takes an MCP7Y00 splitter, one leg to each NIC's cage (rail-optimised: two nodes per cage).
SPLIT = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: split-test}}
site:
  rows:
    - {{name: A, racks: 4}}
nodes:
  - name: s
    model: storage-node
    count: 4
    placement: {{row: A, first_rack: {node_rack}, per_rack: 4, first_u: {node_u}, gap_u: {gap}}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints: [{{group: s}}]
    placement:
      leaf: {{row: A, first_u: 30, per_rack: 2}}
      spine: {{row: A, first_rack: 4, first_u: 40, per_rack: 4}}
"""


def test_a_twin_port_switch_cage_feeds_two_nics_through_one_splitter():
    c = compile_text(SPLIT.format(node_rack=1, node_u=2, gap=0))
    links = _links(c, "node-leaf")
    assert {link.medium for link in links} == {"splitter-dac-2x400g"} and not _errors(c)
    assert {link.head for link in links} == {"b"}  # the leaf end takes the head plug
    f = c.fabric
    heads = {(k.b, f.layouts[f.devices[k.b].model].port_cages[k.b_port]) for k in links}
    legs = {(k.a, k.a_port) for k in links}
    assert len(legs) == len(links) == 2 * len(heads)  # two legs per splitter, each in a cage of its own
    from supernodeiac.facts.bom import bill_of_materials
    from supernodeiac.outputs import RenderContext

    bom = bill_of_materials(c.catalogue, f, c.blueprint)
    splitters = [x for x in bom.lines if x.item == "splitter-dac-2x400g"]
    assert sum(x.count for x in splitters) == len(heads)
    # one length class per splitter: its longest leg
    longest: dict[tuple, float] = {}
    for k in links:
        head = (k.b, f.layouts[f.devices[k.b].model].port_cages[k.b_port])
        longest[head] = max(longest.get(head, 0.0), k.length_m)
    stock = c.catalogue.media["splitter-dac-2x400g"].stock_lengths_m
    expected = Counter(min(s for s in stock if s >= x - 1e-9) for x in longest.values())
    assert {x.length_m: x.count for x in splitters} == dict(expected)
    assert RenderContext  # (imported for the renderers' context type)


def test_a_splitter_leg_past_its_reach_moves_the_whole_cage_to_optics():
    """One node per rack: node 1 sits beside the leaf (a splitter leg would reach it), node 2 in the
    next rack (4-5 m, past the splitter's 3 m). They share a leaf cage, whose one plug must serve
    both: one length class for a splitter, so the cage takes a module, fibres to both nodes."""
    c = compile_text(SPLIT.format(node_rack=1, node_u=2, gap=0).replace("per_rack: 4, first_u: 2", "per_rack: 1, first_u: 2"))
    f = c.fabric
    links = _links(c, "node-leaf")
    near = [k for k in links if f.devices[k.a].rack == f.devices[k.b].rack]
    assert near and max(k.length_m for k in near) < 3 < min(k.length_m for k in links if k not in near)
    by_cage: dict[tuple, set] = {}
    for k in links:
        by_cage.setdefault((k.b, f.layouts[f.devices[k.b].model].port_cages[k.b_port]), set()).add(k.medium)
    assert all(media == {"sr4-400g"} for media in by_cage.values())
    assert not _errors(c)


ETHERNET = """\
    ethernet:
      addressing: {loopbacks: 10.0.0.0/24, p2p: 10.64.0.0/20}
      bgp: {asn_first: 4200000000, asn_last: 4200000999}
      lossless:
        pfc_priorities: [3]
        dscp_to_tc: {26: 3, 48: 6}
        roce_dscp: 26
        cnp_dscp: 48
        ecn: {min_threshold_bytes: 150000, max_threshold_bytes: 1500000, max_probability_pct: 5}
"""


def test_an_800g_port_takes_two_fibres_from_one_twin_port_module():
    optics = "media:\n  tiers:\n    leaf-spine: {forbid: [dac, acc]}\n"
    text = TWO_RACKS.format(media=optics, racks=12, leaf_rack=12).replace(
        "    switch: qm9700\n", "    switch: sn5600\n    transport: ethernet\n" + ETHERNET
    )
    text = text.replace("model: hgx-h100", "model: hgx-h100-bf3")
    c = compile_text(text)
    ups = _links(c, "leaf-spine")
    assert ups and {(k.medium, k.lanes, k.a_module, k.b_module) for k in ups} == {("sr4-400g", 8, "mma4z00-ns", "mma4z00-ns")}
    from supernodeiac.facts.bom import fibres_per_link

    spec = c.fabric.links.specs[c.fabric.links.spec[c.fabric.links.index(ups[0])]]
    assert fibres_per_link(c.catalogue, spec) == 2  # one MPO fibre per 400G optical port


@pytest.mark.parametrize(
    ("policy", "where"),
    [
        ("media:\n  tiers:\n    leaf-spine: {pin: dacc}\n", ("media", "tiers", "leaf-spine", "pin")),
        ("media:\n  forbid: [sr, lacc]\n", ("media", "forbid", 1)),
        ("media:\n  tiers:\n    node-leaf: {allow: [dr4-400g, dr5]}\n", ("media", "tiers", "node-leaf", "allow", 1)),
    ],
)
def test_a_mistyped_medium_in_any_policy_is_a_located_error(policy, where):
    c = _one_rack(spine_u=38, media=policy)
    assert c.exit_code == 2
    [e] = c.findings
    assert e.rule == "unknown-catalogue-item" and e.path == where and e.hint.startswith("did you mean")


SPREAD = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: spread-test}
site:
  rack_pitch_m: 9
  rows:
    - {name: A, racks: 1}
    - {name: N, racks: 8}
nodes:
  - {name: gpu, model: hgx-h100, count: 2, placement: {row: A, per_rack: 2, first_u: 2}}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints: [{group: gpu}]
    placement:
      leaf: {row: N, per_rack: 1, first_u: 2}
      spine: {row: A, per_rack: 4, first_u: 30}
"""


def test_a_module_carries_one_kind_of_optics_for_both_its_fibres():
    """Rail r's leaf stands r racks of 9 m down the row. A DGX cage holds two rails (OSFP 1: GPUs 7
    and 4, OSFP 3: GPUs 2 and 1): the fibre to rail 7 needs single-mode, the one to rail 4 alone
    would take multimode, but one twin-port module carries one optics, and the leaf cage it lands
    in (both nodes' rail-4 ports) too: single-mode throughout that group; OSFP 3's group stays SR."""
    c = compile_text(SPREAD)
    assert not _errors(c), _errors(c)
    f = c.fabric
    medium: dict[int, set] = {}
    lengths: dict[int, float] = {}
    for k in _links(c, "node-leaf"):
        rail = f.devices[k.b].coord("rail")
        medium.setdefault(rail, set()).add(k.medium)
        lengths[rail] = k.length_m
    assert lengths[4] < 50 < lengths[7]  # the premise: rail 4 alone would be multimode
    assert medium[7] == medium[4] == {"dr4-400g-100m"}  # OSFP 1 (GPUs 7, 4) and the leaf cages of rails 7 and 4
    assert medium[2] == medium[1] == {"sr4-400g"}  # OSFP 3 (GPUs 2, 1): short both ways
