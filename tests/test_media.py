"""Media policy and reach: cheapest medium that covers length + margin; pinned media are checked."""

from __future__ import annotations

from conftest import compile_text

from supernodeiac.findings import Severity

# Two racks in one row, 0.6 m apart: a node-to-leaf cable between them is about
# 2 x (top - device centre) + 2 x tray + 0.6 m + 1 m slack.
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


def _compile(media: str = "", racks: int = 2, leaf_rack: int = 2):
    return compile_text(TWO_RACKS.format(media=media, racks=racks, leaf_rack=leaf_rack))


def _node_leaf_links(c):
    f = c.fabric
    return [link for link in f.links if f.devices[link.a].role == "node"]


def test_policy_picks_cheapest_medium_that_reaches():
    c = _compile(racks=2, leaf_rack=1)  # node and leaf in one rack: short copper
    links = _node_leaf_links(c)
    assert links and all(link.medium == "dac" for link in links)
    media = c.catalogue.media
    for link in links:
        assert link.length_m + 0.5 <= media["dac"].reach_at(link.lane_gbps)


def test_policy_moves_to_longer_reach_when_copper_is_too_short():
    c = _compile(racks=12, leaf_rack=12)  # 11 racks away: ~10 m
    media = c.catalogue.media
    links = _node_leaf_links(c)
    assert links and all(link.length_m + 0.5 > media["dac"].reach_at(link.lane_gbps) for link in links)  # the premise
    for link in links:
        chosen = media[link.medium]
        assert chosen.reach_at(link.lane_gbps) >= link.length_m + 0.5
        # nothing cheaper would have reached
        for name, m in media.items():
            if m.relative_cost < chosen.relative_cost and "osfp" in m.cages and m.requires_cage is None:
                reach = m.reach_at(link.lane_gbps)
                assert reach is None or reach < link.length_m + 0.5, name
    assert c.exit_code == 0


def test_pinned_dac_over_8m_is_rejected_with_its_location():
    media = "media:\n  pin: dac\n"
    c = _compile(media=media, racks=10, leaf_rack=10)
    lengths = [link.length_m for link in _node_leaf_links(c)]
    assert min(lengths) > 8  # the premise: these runs are longer than 8 m
    errors = [f for f in c.findings if f.rule == "reach" and f.severity is Severity.ERROR]
    assert errors, c.findings
    first = errors[0]
    assert "dac" in first.message and "exceeds" in first.message
    # points at the pin in the blueprint: line 7 'media:', key 'pin' on line 8, column 3
    assert (first.location.file, first.location.line, first.location.col) == ("test.yaml", 8, 3)
    assert c.exit_code == 1


def test_margin_is_applied():
    # A 1.9 m run fits passive DAC's 2 m at 100G/lane only without margin.
    c0 = _compile(media="media:\n  margin_m: 0\n", racks=2, leaf_rack=1)
    c1 = _compile(media="media:\n  margin_m: 5\n", racks=2, leaf_rack=1)
    assert {link.medium for link in _node_leaf_links(c0)} == {"dac"}
    assert "dac" not in {link.medium for link in _node_leaf_links(c1)}


def test_catalogue_override_changes_the_choice():
    media = "catalogue:\n  media:\n    dac:\n      reach_m: {100: 30}\n      stock_lengths_m: [1, 5, 10, 20, 30]\n"
    c = _compile(media=media, racks=12, leaf_rack=12)
    assert {link.medium for link in _node_leaf_links(c)} == {"dac"}


def test_chooser_decides_each_exact_length_on_its_own():
    """Lengths a hair apart on both sides of a reach limit get different media, in either order.

    (An earlier chooser memoised by length rounded to 1 cm, so the first of two such lengths
    decided for both: a 1.004 m link could get copper rated for 1 m, an error for the reach check.)
    """
    from supernodeiac.build.media import MediaChooser
    from supernodeiac.model.common import MediaPolicy

    c = _compile(racks=2, leaf_rack=1)
    dac = c.catalogue.media["dac"]
    limit = dac.reach_at(200)  # the DAC's reach at 200G/lane: the boundary under test
    for order in ((limit - 0.004, limit + 0.004), (limit + 0.004, limit - 0.004)):
        chooser = MediaChooser(c.catalogue, MediaPolicy(margin_m=0), ("media",))
        picked = {length: chooser.choose(200, "osfp", "osfp", length)[0] for length in order}
        assert picked[limit - 0.004] == "dac"
        chosen = picked[limit + 0.004]
        assert chosen not in ("", "dac") and c.catalogue.media[chosen].reach_at(200) >= limit + 0.004


def test_choose_many_agrees_with_choose_length_by_length():
    """The sorted sweep of choose_many makes the same choice as choose, on both sides of every limit."""
    import random

    from supernodeiac.build.media import MediaChooser
    from supernodeiac.model.common import MediaPolicy

    c = _compile(racks=2, leaf_rack=1)
    rng = random.Random(7)
    edges = [m.reach_at(100) for m in c.catalogue.media.values() if m.reach_at(100)]
    edges += [max(m.stock_lengths_m) for m in c.catalogue.media.values()]
    lengths = {rng.uniform(0, 2500) for _ in range(2000)} | {e + d for e in edges for d in (-0.5, -1e-9, 0, 1e-9, 0.5)}
    for margin in (0.0, 0.5):
        sweep = MediaChooser(c.catalogue, MediaPolicy(margin_m=margin), ("media",)).choose_many(100, "osfp", "osfp", lengths)
        one = MediaChooser(c.catalogue, MediaPolicy(margin_m=margin), ("media",))
        assert sweep == {length: one.choose(100, "osfp", "osfp", length) for length in lengths}
        assert {medium for medium, _ in sweep.values()} >= {"dac", ""}  # the lengths span copper to out of reach
