"""Scale-up domains: orthogonal (OEX) boards, switched trays, a second level, and their checks.

Numbers come from the compiled Fabric (links, ports, devices) and are compared with the formulas
of the catalogue entries, never with hard-coded results.
"""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.checks import CheckContext
from supernodeiac.checks.scaleup import check_scaleup, system_class
from supernodeiac.fabric.port_owners import PortMap
from supernodeiac.facts.system_class import SUPERNODE_MIN, SUPERPOD_MIN
from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file, render


def oex(n: int = 4, m: int = 8, count: int = 1, *, board: str = "oex-cb8", switch: str = "oex-sb2", extra: str = "") -> str:
    return f"""
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {{name: oex-test}}
site:
  rack_units: 52
  rows: [{{name: S, racks: 4}}, {{name: L, racks: 1}}, {{name: N, racks: 2}}]
scaleup:
  - name: sn
    kind: orthogonal
    compute_board: {board}
    switch_board: {switch}
    compute_boards: {n}
    switch_boards: {m}
    count: {count}
    placement: {{row: S, first_u: 1}}
{extra}
"""


SCALEOUT = """
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    endpoints: [{group: sn}]
    placement:
      leaf: {row: N, per_rack: 16, first_u: 2}
      spine: {row: N, first_rack: 2, per_rack: 16, first_u: 2}
"""


def built(text: str):
    c = compile_text(text)
    assert c.fabric is not None, [f"{f.location} {f.message} ({f.hint})" for f in c.findings]
    return c


def errors(c, rule: str | None = None):
    return [f for f in c.findings if f.severity is Severity.ERROR and (rule is None or f.rule == rule)]


def domain_links(f, name: str):
    return [link for link in f.links if link.fabric == name]


def acc_to_chips(f, name: str) -> dict[tuple[int, int], Counter]:
    """(compute board, accelerator) -> Counter of (switch board, chip) reached, from the links."""
    pm = PortMap(f)
    out: dict[tuple[int, int], Counter] = defaultdict(Counter)
    for link in domain_links(f, name):
        cb, cp, sb, sp = link.a, link.a_port, link.b, link.b_port
        assert f.devices[cb].role == "compute-board" and f.devices[sb].role == "switch-board"
        out[(cb, pm.unit(cb, cp))][(sb, pm.unit(sb, sp))] += 1
    return out


# -- orthogonal ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "m", "count"), [(16, 8, 1), (4, 8, 2), (6, 4, 1), (3, 2, 1)])
def test_oex_connectors_links_and_chip_ports(n, m, count):
    c = built(oex(n, m, count))
    f = c.fabric
    cb, sb = c.catalogue.devices["oex-cb8"], c.catalogue.devices["oex-sb2"]
    a, links = cb.accelerators.count, cb.accelerators.links
    chips, ports = sb.switch_chips.count, sb.switch_chips.ports_per_chip
    k = links // (m * chips)
    boards = [d for d in f.devices if d.group == "sn" and d.role == "compute-board"]
    switches = [d for d in f.devices if d.group == "sn" and d.role == "switch-board"]
    assert len(boards) == n * count and len(switches) == m * count
    dl = domain_links(f, "sn")
    assert all(link.kind == "connector" and link.length_m == 0 and link.medium == "orthogonal-connector" for link in dl)
    # Exactly N x M connectors per supernode: every compute board meets every switch board once.
    per_sn = Counter(f.devices[link.a].coord("supernode") for link in {(link.a, link.b): link for link in dl}.values())
    assert per_sn == {s: n * m for s in range(count)}
    pairs = Counter((link.a, link.b) for link in dl)
    assert all(v == a * links // m for v in pairs.values())
    for link in dl:  # never across supernodes
        assert f.devices[link.a].coord("supernode") == f.devices[link.b].coord("supernode")
    # Every accelerator reaches every chip of its supernode, k links each.
    reach = acc_to_chips(f, "sn")
    assert len(reach) == n * count * a
    for (board, _), chips_reached in reach.items():
        sn = f.devices[board].coord("supernode")
        own = {(d.index, ch) for d in switches if d.coord("supernode") == sn for ch in range(chips)}
        assert set(chips_reached) == own and set(chips_reached.values()) == {k}
    # Per chip: N x A x k ports used, each once; compute side: A x L ports, each once.
    pm = PortMap(f)
    per_chip = Counter((link.b, pm.unit(link.b, link.b_port)) for link in dl)
    assert set(per_chip.values()) == {n * a * k} and n * a * k <= ports
    assert len({(link.b, link.b_port) for link in dl}) == len(dl) == n * count * a * links
    assert len({(link.a, link.a_port) for link in dl}) == len(dl)
    facts = f.facts["sn"]
    assert facts["connectors_per_supernode"] == n * m and facts["chip_ports_used"] == n * a * k
    assert not errors(c)


def test_oex_bandwidth_measured_and_declared():
    text = oex(4, 8).replace("    count: 1\n", "    count: 1\n    per_accelerator_gbytes: 2000\n")
    c = built(text)
    acc = c.catalogue.devices["oex-cb8"].accelerators
    per_acc = defaultdict(float)
    pm = PortMap(c.fabric)
    for link in domain_links(c.fabric, "sn"):
        per_acc[(link.a, pm.unit(link.a, link.a_port))] += link.gbps
    measured = min(per_acc.values()) * 2 / 8
    assert measured == acc.links * acc.link_gbps * 2 / 8 < 2000
    bad = errors(c, "scaleup-bandwidth")
    assert len(bad) == 1 and f"measured {measured:g} GB/s" in bad[0].message
    assert bad[0].location.line == text.splitlines().index("    per_accelerator_gbytes: 2000") + 1
    ok = built(text.replace("2000", f"{measured:g}"))
    assert not errors(ok)


def test_oex_spread_impossible_is_a_build_error_with_valid_counts():
    c = compile_text(oex(4, 3))
    assert c.fabric is None
    (e,) = c.findings
    assert e.rule == "scaleup-spread" and e.location.line == 14  # switch_boards
    # Valid switch-board counts: the chips divide the links evenly and the chips' ports suffice.
    cb, sb = built(oex(4, 8)).catalogue.devices["oex-cb8"], built(oex(4, 8)).catalogue.devices["oex-sb2"]
    links, chips, ports, a = cb.accelerators.links, sb.switch_chips.count, sb.switch_chips.ports_per_chip, cb.accelerators.count
    valid = [m for m in range(1, links + 1) if links % (m * chips) == 0 and 4 * a * (links // (m * chips)) <= ports]
    assert 3 not in valid and f"one of {', '.join(map(str, valid))} " in e.hint


def test_oex_chip_ports_too_few_hints_the_largest_board_count():
    c = compile_text(oex(17, 8))
    assert c.fabric is None
    (e,) = c.findings
    assert e.rule == "port-budget" and "136" in e.message and "at most 16 compute_boards" in e.hint


def test_oex_supernode_is_a_chassis_with_front_and_rear_slots():
    """Each supernode is one chassis in its rack: compute boards in the front slots one above the
    other, switch boards in the rear slots each spanning the chassis, power shelves above it."""
    c = built(oex(4, 2, 2))
    f = c.fabric
    chassis_model = c.catalogue.devices["oex-x128-chassis"]  # the smallest chassis with 4 front and 2 rear slots
    slots = chassis_model.slots
    shelves = chassis_model.physical.power_shelves
    shelf_h = c.catalogue.devices[shelves.model].height_u
    by_role = Counter(d.role for d in f.devices if d.group == "sn")
    assert by_role == {"chassis": 2, "power-shelf": 2 * shelves.count, "compute-board": 2 * 4, "switch-board": 2 * 2}
    chassis = {d.coord("supernode"): d for d in f.devices if d.role == "chassis"}
    for sn, ch in chassis.items():
        assert ch.model == "oex-x128-chassis" and f.racks[ch.rack].position == sn + 1 and ch.u == 1
        assert ch.height_u == chassis_model.height_u
    for d in f.devices:
        if d.group != "sn" or d.role == "chassis":
            continue
        ch = chassis[d.coord("supernode")]
        assert d.rack == ch.rack
        if d.role == "compute-board":
            b = d.coord("board")
            assert (d.chassis, d.slot) == (ch.index, f"F{b + 1:02d}")
            assert d.u == ch.u + slots.front_first_u + b * slots.front_pitch_u  # horizontal, one above the other
        elif d.role == "switch-board":
            j = d.coord("switch_board")
            assert (d.chassis, d.slot) == (ch.index, f"R{j + 1:02d}")
            assert (d.u, d.height_u) == (ch.u, ch.height_u)  # vertical: spans the chassis
        else:
            j = d.coord("shelf")
            assert d.chassis == -1 and d.u == ch.u + ch.height_u + j * shelf_h
    assert f.facts["sn"]["chassis"] == "oex-x128-chassis" and f.facts["sn"]["chassis_slots"] == {"front": 16, "rear": 8}


def test_oex_too_many_boards_for_any_chassis_is_located():
    c = compile_text(
        oex(4, 8).replace("compute_boards: 4", "compute_boards: 4\n    chassis: small-chassis")
        + """
catalogue:
  devices:
    small-chassis:
      kind: chassis
      description: a 2 x 2 chassis
      height_u: 6
      slots: {front: 2, rear: 2, front_pitch_u: 2}
      ports: []
      sources: [{ref: test, grade: ILLUSTRATIVE}]
"""
    )
    (e,) = c.findings
    assert e.rule == "chassis-slots" and e.path[-1] == "chassis" and "4 compute boards and 8 switch boards" in e.message


def test_growing_supernodes_leaves_existing_links_in_place():
    one = built(oex(4, 4, 1)).fabric
    two = built(oex(4, 4, 2)).fabric

    def ends(f):
        return {link.id: (f.devices[link.a].name, link.a_port, f.devices[link.b].name, link.b_port) for link in f.links}

    small, big = ends(one), ends(two)
    assert len(big) == 2 * len(small)
    assert all(big[i] == e for i, e in small.items())


def test_domain_is_a_fat_tree_endpoint_group():
    c = compile_file(str(BLUEPRINTS / "nebula-x128-ib.yaml"))
    assert c.exit_code == 0
    f = c.fabric
    boards = [d for d in f.devices if d.group == "x128" and d.role == "compute-board"]
    nics = len(f.layouts["oex-cb8"].ports_of("data"))
    on_ib = Counter(d for link in f.links if link.fabric == "ib" for d in (link.a, link.b))
    assert all(on_ib[b.index] == nics for b in boards)
    assert not any(on_ib[d.index] for d in f.devices if d.role == "switch-board")
    facts = f.facts["x128"]
    assert facts["accelerators_per_supernode"] == 128 and facts["connectors_per_supernode"] == 16 * 8


# -- switched -----------------------------------------------------------------------------------


def test_nvl72_each_gpu_link_to_a_different_chip():
    c = compile_file(str(BLUEPRINTS / "nvl72-pod.yaml"))
    assert c.exit_code == 0
    f = c.fabric
    tray, sw = c.catalogue.devices["gb200-tray"], c.catalogue.devices["nvl5-switch-tray"]
    spec = c.blueprint.scaleup[0]
    gpus = spec.compute_trays * tray.accelerators.count
    chips = spec.switch_trays * sw.switch_chips.count
    dl = domain_links(f, "nvl")
    assert len(dl) == spec.count * gpus * tray.accelerators.links
    assert all(link.kind == "cartridge" and link.medium == "nvlink-cartridge" for link in dl)
    reach = acc_to_chips(f, "nvl")
    assert len(reach) == spec.count * gpus
    # 18 links, 18 chips: each link to a different chip.
    assert all(len(r) == tray.accelerators.links == chips and set(r.values()) == {1} for r in reach.values())
    pm = PortMap(f)
    per_chip = Counter((link.b, pm.unit(link.b, link.b_port)) for link in dl)
    assert set(per_chip.values()) == {gpus} and len(per_chip) == spec.count * chips
    # In-rack: both ends in one rack, within the cartridge's reach.
    reach_m = c.catalogue.media["nvlink-cartridge"].reach_at(dl[0].lane_gbps)
    assert all(f.devices[link.a].rack == f.devices[link.b].rack and link.length_m <= reach_m for link in dl)


def test_connector_and_cartridge_maps(tmp_path):
    c = built(oex(4, 4, 2))
    arts, _ = render(c, ["connectors"])
    rows = list(csv.DictReader(io.StringIO(arts["connectors/connectors.csv"].decode())))
    acc = c.catalogue.devices["oex-cb8"].accelerators
    assert len(rows) == 2 * 4 * 4
    assert Counter(r["supernode"] for r in rows) == {"1": 16, "2": 16}
    seen = set()
    for r in rows:
        pairs = r["map"].split()
        assert len(pairs) == int(r["links"]) == acc.count * acc.links // 4
        assert int(r["lanes"]) == sum(
            link.lanes
            for link in c.fabric.links
            if c.fabric.devices[link.a].name == r["compute_board"] and c.fabric.devices[link.b].name == r["switch_board"]
        )
        seen.update((r["compute_board"], p.split(">")[0]) for p in pairs)
    assert len(seen) == 2 * 4 * acc.count * acc.links  # every accelerator link in exactly one connector
    assert "connectors/cartridges.csv" not in arts
    nvl = compile_file(str(BLUEPRINTS / "nvl72-pod.yaml"))
    arts, _ = render(nvl, ["connectors"])
    spec = nvl.blueprint.scaleup[0]
    rows = list(csv.DictReader(io.StringIO(arts["connectors/cartridges.csv"].decode())))
    assert len(rows) == spec.count * spec.compute_trays * spec.switch_trays


# -- second level -------------------------------------------------------------------------------

TWO_LEVEL = """
  - name: sc
    kind: two-level
    domains: [sn]
    switch: olink-l2-switch
    taper: "{taper}"
    placement: {{row: L, per_rack: 16, first_u: 2}}
"""


def test_two_level_every_l1_chip_reaches_every_l2_chip_and_taper():
    c = built(oex(16, 8, 2, switch="oex-sb2-up", extra=TWO_LEVEL.format(taper="2:1")))
    f = c.fabric
    sb, l2m = c.catalogue.devices["oex-sb2-up"], c.catalogue.devices["olink-l2-switch"]
    up_ports = [g for g in sb.ports if g.role == "uplink"][0]
    per_chip_up = up_ports.count // sb.switch_chips.count
    l1_chips = 2 * 8 * sb.switch_chips.count
    facts = f.facts["sc"]
    x = facts["l2_chips"]
    assert x == facts["l2_switches"] * l2m.switch_chips.count and per_chip_up % x == 0
    assert l1_chips * (per_chip_up // x) <= l2m.switch_chips.ports_per_chip
    pm = PortMap(f)
    pairs = Counter()
    up, down = Counter(), Counter()
    for link in f.links:
        if link.fabric == "sc":
            lo = (link.a, pm.unit(link.a, link.a_port))
            pairs[(lo, (link.b, pm.unit(link.b, link.b_port)))] += 1
            up[lo] += link.gbps
        elif link.fabric == "sn":
            down[(link.b, pm.unit(link.b, link.b_port))] += link.gbps
    assert len(pairs) == l1_chips * x and set(pairs.values()) == {per_chip_up // x}
    taper = {down[k] / up[k] for k in up}
    assert len(taper) == 1
    (ratio,) = taper
    facts_sn = f.facts["sn"]
    assert ratio == facts_sn["chip_ports_used"] * facts_sn["link_gbps"] / (per_chip_up * up_ports.speed_gbps)
    info = [f for f in c.findings if f.rule == "scaleup-class" and f.message.startswith("sc:")]
    assert info and f"measured {ratio:g}:1" in info[0].message and "SuperCluster" in info[0].message
    assert not errors(c)
    # Declare no taper: the measured 2:1 is an error at the taper key.
    strict = built(oex(16, 8, 2, switch="oex-sb2-up", extra=TWO_LEVEL.format(taper="1:1")))
    (e,) = errors(strict)
    assert e.rule == "scaleup-taper" and f"{ratio:g}:1" in e.message and e.path[-1] == "taper"


def test_two_level_bad_switch_count_and_reference():
    text = oex(4, 8, 2, switch="oex-sb2-up", extra=TWO_LEVEL.format(taper="2:1").replace("taper:", "switches: 3\n    taper:"))
    c = compile_text(text)
    (e,) = c.findings
    assert e.rule == "scaleup-spread" and "switches: one of" in e.hint and e.path[-1] == "switches"
    c = compile_text(oex(4, 8, 2, switch="oex-sb2-up", extra=TWO_LEVEL.format(taper="2:1").replace("[sn]", "[sm]")))
    (e,) = c.findings
    assert e.rule == "unknown-reference" and "'sn'" in e.hint
    c = compile_text(oex(4, 8, 2, extra=TWO_LEVEL.format(taper="2:1")))  # oex-sb2 has no uplinks
    (e,) = c.findings
    assert e.rule == "scaleup-uplinks" and "oex-sb2-up" in e.hint


def test_supercluster_blueprint_class_and_endpoints():
    c = compile_file(str(BLUEPRINTS / "supercluster-2level.yaml"))
    assert c.exit_code == 0
    facts = c.fabric.facts
    assert facts["matrix"]["accelerators"] == facts["x128"]["accelerators"] == 4 * 128
    classes = {f.message.split(":")[0]: f.message for f in c.findings if f.rule == "scaleup-class"}
    assert "class SuperCluster" in classes["matrix"] and "class SuperNode" in classes["x128"]
    ib_boards = {d for link in c.fabric.links if link.fabric == "ib" for d in (link.a, link.b)}
    assert {d.index for d in c.fabric.devices if d.role == "compute-board"} <= ib_boards


# -- checks -------------------------------------------------------------------------------------


def test_one_hop_check_fails_when_two_accelerators_share_no_chip():
    c = built(oex(4, 8))
    f = c.fabric
    boards = sorted({link.a for link in domain_links(f, "sn")})
    sw_of = {d.index: d.coord("switch_board") for d in f.devices if d.role == "switch-board"}
    pm = PortMap(f)

    def keep(link) -> bool:
        # Accelerator 0 of board 0 keeps only switch board 0; of board 1 only switch board 1.
        if link.fabric != "sn" or pm.unit(link.a, link.a_port) != 0 or link.a not in boards[:2]:
            return True
        return sw_of[link.b] == boards.index(link.a)

    f.links[:] = [link for link in f.links if keep(link)]
    found = list(check_scaleup(CheckContext(c.blueprint, c.catalogue, f)))
    hop = [x for x in found if x.rule == "scaleup-one-hop"]
    assert len(hop) == 1 and hop[0].severity is Severity.ERROR and "share no switch chip" in hop[0].message
    # The intact domain is one hop, evenly spread: no error, no warning.
    intact = built(oex(4, 8))
    assert not [x for x in intact.findings if x.rule.startswith("scaleup") and x.severity is not Severity.INFO]
    # One link fewer: still one hop, but no longer an even spread over every chip.
    dropped = intact.fabric.links.index(domain_links(intact.fabric, "sn")[0])
    del intact.fabric.links[dropped]
    found = list(check_scaleup(CheckContext(intact.blueprint, intact.catalogue, intact.fabric)))
    flagged = [(x.rule, x.severity) for x in found if x.severity is not Severity.INFO]
    assert flagged == [("scaleup-spread", Severity.WARNING)]


def test_scaleup_to_scaleout_rule_warning_and_floor():
    base = oex(4, 8) + SCALEOUT
    c = built(base)
    acc = c.catalogue.devices["oex-cb8"]
    nics = sum(g.count * g.speed_gbps for g in acc.ports if g.role == "data")
    ratio = acc.accelerators.bidir_gbytes / (nics * 2 / 8 / acc.accelerators.count)
    (ok,) = [f for f in c.findings if f.rule == "scaleup-ratio"]
    assert ok.severity is Severity.INFO and f"= {ratio:.3g}x" in ok.message
    above = f"planning: {{scaleup_to_scaleout_min: {ratio + 1:g}}}\n"
    (w,) = [f for f in built(base + above).findings if f.rule == "scaleup-ratio"]
    assert w.severity is Severity.WARNING
    floor = f"planning: {{scaleup_to_scaleout_min: {ratio + 2:g}, scaleup_to_scaleout_floor: {ratio + 1:g}}}\n"
    (e,) = [f for f in built(base + floor).findings if f.rule == "scaleup-ratio"]
    assert e.severity is Severity.ERROR and "below the floor" in e.message


def test_hgx_boards_are_domains_from_the_catalogue(small_ib):
    model = small_ib.catalogue.devices["hgx-h100"]
    msgs = {f.rule: f for f in small_ib.findings if f.rule in ("scaleup-class", "scaleup-ratio") and f.message.startswith("gpu")}
    assert f"{model.accelerators.bidir_gbytes:g} GB/s per accelerator" in msgs["scaleup-class"].message
    assert system_class(model.accelerators.count, 1) in msgs["scaleup-class"].message
    out = sum(g.count * g.speed_gbps for g in model.ports if g.role == "data") * 2 / 8 / model.accelerators.count
    assert f"= {model.accelerators.bidir_gbytes / out:.3g}x" in msgs["scaleup-ratio"].message


def test_system_class_boundaries():
    assert system_class(SUPERNODE_MIN - 1, 1).startswith("server")
    assert system_class(SUPERNODE_MIN, 1) == "SuperNode"
    assert system_class(SUPERPOD_MIN - 1, 1) == "SuperNode"
    assert system_class(SUPERPOD_MIN, 1) == "SuperPoD"
    assert system_class(SUPERNODE_MIN, 2) == "SuperCluster"


# roce-rail-2tier with 2 x 4 MI300X platforms in place of its 2 x 48 HGX H100s.
MESH = (
    (BLUEPRINTS / "roce-rail-2tier.yaml")
    .read_text()
    .replace("model: hgx-h100-bf3\n    count: 48", "model: mi300x-8gpu\n    count: 4")
)


@pytest.mark.parametrize(("model", "per_pair"), [("mi300x-8gpu", 1), ("gaudi3-hls", 3)])
def test_switchless_mesh_catalogue_figures(model, per_pair):
    """A full mesh of n accelerators: n(n-1)/2 pairs, links_per_pair x (n-1) links per accelerator."""
    from supernodeiac.catalog import merged
    from supernodeiac.catalog.types import Catalogue

    m = Catalogue.model_validate(merged(None)).devices[model]
    acc, mesh = m.accelerators, m.internal_mesh
    n = acc.count
    assert mesh.links_per_pair == per_pair and mesh.pairs(n) == n * (n - 1) // 2
    assert mesh.links(n) == per_pair * n * (n - 1) // 2 and acc.links == per_pair * (n - 1)
    assert acc.bidir_gbytes == acc.links * acc.link_gbps * 2 / 8


def test_switchless_mesh_inconsistent_with_accelerator_links_is_rejected():
    from pydantic import ValidationError

    from supernodeiac.catalog import merged
    from supernodeiac.catalog.types import DeviceModel

    entry = dict(merged(None)["devices"]["mi300x-8gpu"], internal_mesh={"links_per_pair": 2})
    with pytest.raises(ValidationError, match="14 links, accelerators.links says 7"):
        DeviceModel.model_validate(entry)
    entry = dict(entry, internal_mesh={"links_per_pair": 1}, internal_scaleup={"switch_chips": 1, "links_per_chip": [7]})
    with pytest.raises(ValidationError, match="excludes internal_scaleup"):
        DeviceModel.model_validate(entry)


def test_switchless_mesh_boards_are_domains_in_the_workload_check():
    c = compile_text(MESH)
    model = c.catalogue.devices["mi300x-8gpu"]
    acc = model.accelerators
    msgs = {f.rule: f.message for f in c.findings if f.rule in ("scaleup-class", "scaleup-ratio")}
    assert (
        f"switchless full mesh of {acc.count} MI300X ({acc.count * (acc.count - 1) // 2} point-to-point" in msgs["scaleup-class"]
    )
    assert f"{acc.bidir_gbytes:g} GB/s per accelerator" in msgs["scaleup-class"]
    out = sum(g.count * g.speed_gbps for g in model.ports if g.role == "data") * 2 / 8 / acc.count
    assert f"scale-up {acc.bidir_gbytes:g} GB/s vs scale-out {out:g} GB/s" in msgs["scaleup-ratio"]
    # each mesh board is its own scale-up domain in the acceptance plan: its links at their per-direction rate
    plan = list(csv.DictReader(io.StringIO(render(c, only=["acceptance"])[0]["acceptance/scaleup.tsv"].decode()), delimiter="\t"))
    assert len(plan) == sum(1 for d in c.fabric.devices if d.model == "mi300x-8gpu") == 8
    assert {(r["domain"] == r["host"], r["links"], float(r["link_gbytes"])) for r in plan} == {
        (True, str(acc.links), acc.link_gbps / 8)
    }
