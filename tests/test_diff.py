"""`snc diff`: work orders from two Fabrics, changed outputs by format, and the reports a reviewer reads."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, compile_text
from hypothesis import given, settings
from hypothesis import strategies as st

from supernodeiac.cli import main
from supernodeiac.compare import diff
from supernodeiac.compare.artifacts import compare_file, diff_artifacts, json_changes
from supernodeiac.compare.report import to_json, to_markdown, to_text

ROCE = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()
SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
# small-ib's UFM pair at U20-U21 of rack N02, and the same pair ten units up (U30-U31, free)
UFM_AT_20 = "placement: {row: N, first_rack: 2, per_rack: 2, first_u: 20}"
UFM_AT_30 = "placement: {row: N, first_rack: 2, per_rack: 2, first_u: 30}"


def _one_more_su(text: str) -> str:
    """roce-rail-2tier plus one scalable unit (64 nodes in 16 new racks of row B, its 8 leaves in 2
    new racks of row NL): a pull request within the fabric's planned size (grow_to_sus: 4) and the
    hall's (row B planned for 52 racks)."""
    grown = text.replace("{name: B, racks: 12, planned_racks: 52,", "{name: B, racks: 28, planned_racks: 52,")
    grown = grown.replace(
        "  - name: gpu-b\n    model: hgx-h100-bf3\n    count: 48\n", "  - name: gpu-b\n    model: hgx-h100-bf3\n    count: 112\n"
    )
    assert grown.count("112") == 1 and "racks: 28" in grown
    return grown


@pytest.fixture(scope="module")
def su_diff():
    old, new = compile_text(ROCE, "roce.yaml"), compile_text(_one_more_su(ROCE), "roce-su3.yaml")
    assert old.exit_code == 0 and new.exit_code == 0
    return old, new, diff(old, new)


def test_adding_a_scalable_unit_lists_only_additions(su_diff):
    old, new, d = su_diff
    assert {c.change for c in d.fabric.cables} == {"added"}
    assert {x.change for x in d.fabric.devices} == {"added"}
    added = [c.new for c in d.fabric.cables]
    assert len(added) == len(new.fabric.links) - len(old.fabric.links) == 1132
    assert d.fabric.unchanged_cables == len(old.fabric.links)
    # the counts follow from the design: 64 nodes x 8 rails, 8 new leaves x 64 uplinks, a BMC per
    # node, a management port per leaf, 18 new rack switches (mgmt: 16 compute racks and the
    # leaves' 2 racks) with 2 uplinks each to the aggregation layer
    by_group = {k: len(v) for k, v in _groups(d.fabric.cables).items()}
    assert by_group[("added", "roce", "node-leaf")] == 64 * 8
    assert by_group[("added", "roce", "leaf-spine")] == 8 * 64
    assert by_group[("added", "mgmt", "node-mgmt")] == 64
    assert by_group[("added", "mgmt", "leaf-mgmt")] == 8
    assert by_group[("added", "mgmt", "mgmt-mgmt-agg")] == 18 * 2
    devices = {k: len(v) for k, v in _groups(d.fabric.devices).items()}
    assert devices == {
        ("added", "node", "hgx-h100-bf3"): 64,
        ("added", "leaf", "sn5600-128x400g"): 8,
        ("added", "mgmt", "sn2201"): 18,
    }
    # every added cable's ends are real ports of the new Fabric, in the racks reported
    ends = {(new.fabric.devices[link.a].name, new.fabric.port_name(link.a, link.a_port)) for link in new.fabric.links}
    assert all((c.a.device, c.a.port) in ends for c in added)


def _groups(changes):
    out: dict = {}
    for c in changes:
        out.setdefault(c.group(), []).append(c)
    return out


def test_the_markdown_summary_reads_as_a_review(su_diff):
    _, _, d = su_diff
    md = to_markdown(d)
    lines = md.splitlines()
    assert lines[0] == "### snc diff: `roce.yaml` → `roce-su3.yaml`"
    assert lines[2] == "**Additions only: no existing cable moves.**"
    # counts first: the table of changes comes before any folded detail
    table = lines.index("|  | moved | replaced | relabelled | removed | added |")
    assert lines[table + 2] == "| cables | 0 | 0 | 0 | 0 | 1,132 |"
    assert table < md.index("<details>")
    assert "| added | roce | node-leaf | 512 |" in md
    assert "<summary>Cables added (1,132)</summary>" in md and "<summary>Devices (90)</summary>" in md
    assert "Move orders" not in md
    # BOM deltas by part number: the node line's detail (its role count) changes, the part does not
    assert "| `bom/bom.csv` | node HGX H100 8-GPU system with BlueField-3 SuperNICs (node 160) | 96 | 160 | +64 |" in md
    assert "| `bom/bom.csv` | transceiver roce MMA4Z00-NS (switch side, OSFP, sr4) | 1408 | 2176 | +768 |" in md
    assert md.count("<details>") == md.count("</details>")
    assert len(md) < 60_000


def test_the_text_report_and_json_carry_the_same_orders(su_diff):
    _, _, d = su_diff
    doc = json.loads(to_json(d))
    assert doc["fabric"]["counts"] == {"devices": {"added": 90}, "cables": {"added": 1132}}
    assert len(doc["fabric"]["cables"]) == 1132
    first = doc["fabric"]["cables"][0]
    assert first["change"] == "added" and set(first["new"]["a"]) == {"row", "rack", "u", "device", "port", "physical"}
    assert {"part", "modules", "a_label", "b_label"} <= set(first["new"])
    text = to_text(d)
    assert text.splitlines()[2] == "Additions only: no existing cable moves."
    assert all(c.cable.id in text for c in d.fabric.cables)  # text lists every order unless limited
    assert "... 511 more cables" in to_text(d, limit=1)


def test_a_re_termination_is_a_move_order_with_both_labels():
    # The UFM pair moves up its rack: each BMC cable ends on another port of the rack's management
    # switch (the port of its new unit), and nothing else moves: the devices above keep their ports.
    moved = SMALL.replace(UFM_AT_20, UFM_AT_30)
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(moved, "b.yaml"))
    orders = {c.cable.id: c for c in d.fabric.cables}
    bmc = orders["ufm-0001-bmc"]
    assert bmc.change == "moved" and bmc.moved == "a+b" and bmc.racks == ("N02",)
    assert bmc.old.label == "ufm-0001:BMC > mgmt-N02:RJ45 20" and bmc.new.label == "ufm-0001:BMC > mgmt-N02:RJ45 30"
    assert (bmc.old.a.u, bmc.new.a.u) == (20, 30)
    assert [(x.change, x.old.u, x.new.u) for x in d.fabric.devices] == [("moved", 20, 30), ("moved", 21, 31)]
    assert {c.cable.id for c in d.fabric.cables} == {f"ufm-000{i}-{p}" for i in (1, 2) for p in ("bmc", "ib0", "ib1")}
    # Beneath the order: the far end's new port; the labels are reprinted from cables.csv (the
    # JSON report has them, old and new).
    assert "bmc  ufm-0001-bmc; far end mgmt-N02:Ethernet19 [RJ45 20] (N02 U48) -> mgmt-N02:Ethernet29" in to_text(d)
    assert "ufm-0001:BMC > mgmt-N02:RJ45 30" in to_json(d)
    md = to_markdown(d)
    assert "**Existing cabling changes: 6 moved; see the work orders.**" in md
    # One device order: the pair moves up its rack, its six cables beneath.
    assert "| move within rack node ufm-appliance N02 → N02 | 2 | 6 |" in md


def test_a_move_order_names_printed_ports_and_end_labels_as_cables_csv_prints_them():
    moved = SMALL.replace(UFM_AT_20, UFM_AT_30)
    old, new = compile_text(SMALL, "a.yaml"), compile_text(moved, "b.yaml")
    d = diff(old, new)
    bmc = {c.cable.id: c for c in d.fabric.cables}["ufm-0001-bmc"]
    # the BMC's RJ45 is printed 'BMC'; the rack switch's Ethernet19 is its RJ45 port 20 (for U20),
    # Ethernet29 port 30
    assert (bmc.old.a.physical, bmc.old.b.physical, bmc.new.b.physical) == ("BMC", "RJ45 20", "RJ45 30")
    for side, compiled in (("old", old), ("new", new)):
        cable = getattr(bmc, side)
        [row] = [r for r in csv.DictReader(io.StringIO(_cables_csv(compiled))) if r["cable_id"] == "ufm-0001-bmc"]
        assert (cable.a_label, cable.b_label) == (row["a_label"], row["b_label"])
        assert (cable.a.physical, cable.b.physical, cable.part) == (row["a_physical"], row["b_physical"], row["part"])
    assert bmc.new.a_label == "small-ib/N/N02/U30/ufm-0001/BMC > N/N02/U48/mgmt-N02/RJ45 30"
    text = to_text(d)
    assert "far end mgmt-N02:Ethernet19 [RJ45 20] (N02 U48) -> mgmt-N02:Ethernet29 [RJ45 30] (N02 U48)" in text
    report = json.loads(to_json(d))
    [row] = [c for c in report["fabric"]["cables"] if c["id"] == "ufm-0001-bmc"]
    assert (row["old"]["a_label"], row["new"]["a_label"]) == (bmc.old.a_label, bmc.new.a_label)
    assert (row["old"]["b_label"], row["new"]["b_label"]) == (bmc.old.b_label, bmc.new.b_label)
    assert "-> mgmt-N02:Ethernet29 \\[RJ45 30\\]" in to_markdown(d)  # '[' escaped: no link


def _cables_csv(compiled) -> str:
    from supernodeiac.pipeline import render

    files, _ = render(compiled, ["cabling"])
    return files["cabling/links.csv"].decode()


def test_new_optics_on_the_same_ends_are_replace_orders_naming_parts_and_modules():
    # The leaf-spine tier pinned to DR4: same ports, another cord and other modules in each cage.
    pinned = SMALL.replace(
        "    rail_optimized: true\n", "    rail_optimized: true\n    media: {tiers: {leaf-spine: {pin: dr}}}\n"
    )
    assert pinned != SMALL
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(pinned, "b.yaml"))
    orders = [c for c in d.fabric.cables if c.change == "replaced"]
    assert len(orders) == 256 and {c.group() for c in orders} == {("replaced", "ib", "leaf-spine")}
    assert {c.change for c in d.fabric.cables} == {"replaced"} and not d.fabric.devices
    first = orders[0]
    assert (first.old.medium, first.old.modules) == ("sr4-400g", ("MMA4Z00-NS", "MMA4Z00-NS"))
    assert first.new.medium.startswith("dr4-400g") and first.new.modules != first.old.modules and all(first.new.modules)
    assert first.old.part.startswith("MFP7E10") and first.new.part and first.new.part != first.old.part
    assert f"{first.old.what()} -> {first.new.what()}" in to_text(d)
    # and the BOM says the same by part: the SR4 modules of the spine side go, DR4 ones come
    counts = {c.label(): c.delta for c in d.artifacts.counts}
    assert counts["transceiver ib MMA4Z00-NS (switch side, OSFP, sr4)"] < 0


def test_a_cable_whose_id_changes_is_paired_by_its_kept_end():
    # IDs carry the B end here, so re-terminating the B end changes the ID: still one move order.
    naming = "naming:\n  cable_id: '{a}-{a_port}-{b}-{b_port}'\n\nsite:\n"
    old = SMALL.replace("site:\n", naming, 1)
    new = old.replace(UFM_AT_20, UFM_AT_30)
    d = diff(compile_text(old, "a.yaml"), compile_text(new, "b.yaml"))
    [bmc] = [c for c in d.fabric.cables if c.cable.id.startswith("ufm-0001-bmc")]
    assert bmc.change == "moved" and bmc.old.id == "ufm-0001-bmc-mgmt-N02-Ethernet19" and bmc.new.id.endswith("Ethernet29")
    assert {c.change for c in d.fabric.cables} == {"moved"}


def test_a_longer_route_is_a_replace_order_and_a_rename_is_a_relabel():
    # Spines one rack further: their cables get longer (some to a new stock length or medium).
    far = SMALL.replace("{name: N, racks: 2}", "{name: N, racks: 3}").replace(
        "spine: {row: N, first_rack: 2, per_rack: 4, first_u: 2}", "spine: {row: N, first_rack: 3, per_rack: 4, first_u: 2}"
    )
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(far, "b.yaml"))
    changes = {c.change for c in d.fabric.cables}
    assert "moved" in changes  # the spine ends changed rack
    spines = [x for x in d.fabric.devices if x.device.role == "spine"]
    assert len(spines) == 4 and all(x.change == "moved" and x.new.rack == "N03" for x in spines)
    # renaming a group renames its devices in place: relabel orders, no cable moves
    renamed = SMALL.replace("  - name: ufm\n", "  - name: fm\n").replace("      - group: ufm\n", "      - group: fm\n")
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(renamed, "b.yaml"))
    assert {c.change for c in d.fabric.cables} == {"relabelled"}
    assert [(x.change, x.old.name, x.new.name) for x in d.fabric.devices] == [
        ("renamed", "ufm-0001", "fm-0001"),
        ("renamed", "ufm-0002", "fm-0002"),
    ]


def test_no_change_is_said_plainly():
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(SMALL, "b.yaml"))
    assert d.empty and d.fabric.unchanged_cables == 469
    assert "No change" in to_markdown(d) and "No change" in to_text(d)


# -- artifacts, by format ---------------------------------------------------------------------------------


def test_json_changes_name_the_keys():
    a = {"PORT": {"Ethernet0": {"speed": "400000", "mtu": "9100"}}, "DEVICE_METADATA": {"localhost": {"hostname": "l1"}}}
    b = {
        "PORT": {"Ethernet0": {"speed": "800000", "mtu": "9100"}, "Ethernet8": {"speed": "800000"}},
        "DEVICE_METADATA": {"localhost": {}},
    }
    got = {(k.path, k.status) for k in json_changes(a, b)}
    assert got == {
        ("PORT/Ethernet0/speed", "changed"),
        ("PORT/Ethernet8", "added"),
        ("DEVICE_METADATA/localhost/hostname", "removed"),
    }


def test_counted_csv_gives_deltas_by_item():
    a = b"section,item,count,power_w\ndevice,qm9700,8,100\ncable,aoc,5,0\ntotal,all,,100\n"
    b = b"section,item,count,power_w\ndevice,qm9700,10,120\ncable,dac,3,0\ntotal,all,,120\n"
    f = compare_file("bom/bom.csv", a, b)
    assert f.rows == {"added": 1, "removed": 1, "changed": 2}
    assert f.columns == {"count": 1, "power_w": 2}
    assert [(c.label(), c.old, c.new) for c in f.counts] == [("cable aoc", 5, 0), ("cable dac", 0, 3), ("device qm9700", 8, 10)]


BOM_HEADER = b"section,fabric,part,opn,part_status,grade,item,detail,length_m,count,spares,order,power_w\n"


def test_bom_deltas_are_by_part_number():
    """A line is its part: a device line whose role counts (detail) change is the same line; a
    part on two lines (a module on the switch and on the host side) is told apart by detail;
    totals rows are no items."""
    a = BOM_HEADER + (
        b'switch,,MQM9700-NS2F,,exact,PRIMARY,qm9700,"leaf 8, spine 4",,12,0,12,100\n'
        b'transceiver,ib,MMA4Z00-NS,,exact,PRIMARY,mma4z00-ns,"switch side, OSFP, sr4",,64,0,64,1\n'
        b'transceiver,ib,MMA4Z00-NS,,exact,PRIMARY,mma4z00-ns,"host side, OSFP, sr4",,32,0,32,1\n'
        b"total,,,,,,devices,,,,,,100\n"
    )
    b = BOM_HEADER + (
        b'switch,,MQM9700-NS2F,,exact,PRIMARY,qm9700,"leaf 16, spine 8",,24,0,24,200\n'
        b'transceiver,ib,MMA4Z00-NS,,exact,PRIMARY,mma4z00-ns,"switch side, OSFP, sr4",,128,0,128,1\n'
        b'transceiver,ib,MMA4Z00-NS,,exact,PRIMARY,mma4z00-ns,"host side, OSFP, sr4",,32,0,32,1\n'
        b"cable,ib,MCP4Y10-N001,,exact,PRIMARY,dac-2x400g,dac straight,1,4,0,4,0\n"
        b"total,,,,,,devices,,,,,,200\n"
    )
    f = compare_file("bom/bom.csv", a, b)
    assert f.rows == {"added": 1, "removed": 0, "changed": 3}
    assert [(c.label(), c.old, c.new) for c in f.counts] == [
        ("cable ib MCP4Y10-N001 (dac straight)", 0, 4),
        ("switch MQM9700-NS2F (leaf 16, spine 8)", 12, 24),
        ("transceiver ib MMA4Z00-NS mma4z00-ns switch side, OSFP, sr4", 64, 128),
    ]
    # summary.json's lines are matched the same way
    line = {"section": "switch", "fabric": "", "part": "MQM9700-NS2F", "item": "qm9700", "length_m": None}
    doc_a = {"lines": [{**line, "detail": "leaf 8, spine 4", "count": 12}]}
    doc_b = {"lines": [{**line, "detail": "leaf 16, spine 8", "count": 24}]}
    assert {k.path for k in json_changes(doc_a, doc_b)} == {
        "lines[section=switch,fabric=,part=MQM9700-NS2F]/detail",
        "lines[section=switch,fabric=,part=MQM9700-NS2F]/count",
    }


def test_keyed_csv_and_text_and_unparseable_files():
    a = b"cable_id,b_port\nx-1,p1\nx-2,p2\n"
    b = b"cable_id,b_port\nx-1,p9\nx-3,p3\n"
    f = compare_file("cabling/cables.csv", a, b)
    assert f.rows == {"added": 1, "removed": 1, "changed": 1} and f.row_examples["changed"] == ["x-1"] and not f.counts
    t = compare_file("diagrams/ib.dot", b"a\nb\nc\n", b"a\nc\nd\ne\n")
    assert t.lines == {"added": 2, "removed": 1}
    assert compare_file("x.json", b"{", b"{}").kind == "binary"
    d = diff_artifacts(
        {"a.json": b"{}", "same": b"1", "gone.txt": b"x"}, {"a.json": b'{"k": 1}', "same": b"1", "new.xml": b"<a/>"}
    )
    assert [(f.path, f.status) for f in d.files] == [("a.json", "changed"), ("gone.txt", "removed"), ("new.xml", "added")]
    assert d.unchanged == 1


def test_outputs_added_by_any_renderer_are_diffed(monkeypatch):
    """A renderer registered later (a switch config) is compared with no change to the diff."""
    from supernodeiac.outputs import RENDERERS

    def sonic(ctx):
        return {
            f"config/{d.name}/config_db.json": json.dumps(
                {"DEVICE_METADATA": {"localhost": {"hostname": d.name, "u": d.u}}}
            ).encode()
            for d in ctx.fabric.devices
            if d.role == "node" and d.group == "ufm"
        }

    monkeypatch.setitem(RENDERERS._entries, "zz-sonic", sonic)
    moved = SMALL.replace(UFM_AT_20, UFM_AT_30)
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(moved, "b.yaml"))
    cfgs = [f for f in d.artifacts.files if f.path.startswith("config/")]
    assert [f.path for f in cfgs] == ["config/ufm-0001/config_db.json", "config/ufm-0002/config_db.json"]
    assert [(k.path, k.old, k.new) for k in cfgs[0].keys] == [("DEVICE_METADATA/localhost/u", 20, 30)]


# -- the command ------------------------------------------------------------------------------------------


def test_cli_two_files_and_exit_code(tmp_path):
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(ROCE)
    new.write_text(_one_more_su(ROCE))
    runner = CliRunner()
    result = runner.invoke(main, ["diff", str(old), str(new), "--format", "markdown"])
    assert result.exit_code == 0 and "Additions only" in result.output
    assert runner.invoke(main, ["diff", str(old), str(new), "--exit-code", "--no-outputs"]).exit_code == 1
    assert runner.invoke(main, ["diff", str(old), str(old), "--exit-code"]).exit_code == 0
    doc = json.loads(runner.invoke(main, ["diff", str(old), str(new), "--format", "json", "--no-outputs"]).output)
    assert doc["artifacts"] is None and doc["fabric"]["counts"]["cables"] == {"added": 1132}
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: supernodeiac/v1\n")
    result = runner.invoke(main, ["diff", str(old), str(broken)])
    assert result.exit_code == 2 and "nothing compared" in result.output
    assert runner.invoke(main, ["diff", str(old)]).exit_code == 2  # usage


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_cli_rev_compares_two_commits(tmp_path, monkeypatch):
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "bp").mkdir()
    (tmp_path / "shared").mkdir()
    # composed: the site includes a fragment, read from the same revision
    (tmp_path / "shared" / "naming.yaml").write_text("naming: {cable_label: '{a}:{a_port} > {b}:{b_port}'}\n")
    (tmp_path / "bp" / "roce.yaml").write_text("include: [../shared/naming.yaml]\n" + ROCE)
    git("add", ".")
    git("commit", "-qm", "one")
    (tmp_path / "bp" / "roce.yaml").write_text("include: [../shared/naming.yaml]\n" + _one_more_su(ROCE))
    git("commit", "-qam", "two")
    (tmp_path / "bp" / "roce.yaml").write_text(
        "include: [../shared/naming.yaml]\n" + ROCE.replace("per_rack: 4, first_u: 2}", "per_rack: 4, first_u: 3}", 1)
    )
    monkeypatch.chdir(tmp_path / "bp")
    runner = CliRunner()
    result = runner.invoke(main, ["diff", "--rev", "HEAD~1..HEAD", "roce.yaml", "--no-outputs"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("snc diff HEAD~1:bp/roce.yaml -> HEAD:bp/roce.yaml")
    assert "Additions only" in result.output
    # one revision alone: against the working tree (its uncommitted edit moves row A's nodes up a unit)
    result = runner.invoke(main, ["diff", "--rev", "HEAD~1", "roce.yaml", "--no-outputs"])
    assert result.exit_code == 0 and "-> roce.yaml" in result.output.splitlines()[0] and "devices: 48 moved" in result.output
    result = runner.invoke(main, ["diff", "--rev", "nope..HEAD", "roce.yaml"])
    assert result.exit_code == 2 and "nope:bp/roce.yaml" in result.output


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_cli_rev_reads_blobs_within_the_blueprint_limits(tmp_path, monkeypatch):
    """A committed blueprint is read like a file: at most MAX_FILE_BYTES of it (a larger blob is
    refused unread, as a located yaml-limit error); revisions are never git options."""
    from supernodeiac.load.source import MAX_FILE_BYTES

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "x.yaml").write_text(SMALL)
    git("add", ".")
    git("commit", "-qm", "one")
    (tmp_path / "x.yaml").write_text(SMALL + "#" * (MAX_FILE_BYTES + 1) + "\n")
    git("commit", "-qam", "huge")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["diff", "--rev", "HEAD~1..HEAD", "x.yaml", "--no-outputs"])
    assert result.exit_code == 2
    assert f"HEAD:x.yaml:1:1: error[yaml-limit]: the blueprint is larger than {MAX_FILE_BYTES:,} bytes" in result.output
    result = runner.invoke(main, ["diff", "--rev", "--output=/tmp/owned..HEAD", "x.yaml"])
    assert result.exit_code == 2 and "cannot start with '-'" in result.output


def test_markdown_cells_cannot_break_the_table_or_mention_anyone():
    from supernodeiac.compare.report import _md_cell

    assert _md_cell("a|b <script> @org/team\nx") == "a\\|b \\<script> @\u2060org/team x"


def test_markdown_stays_within_a_comment(tmp_path):
    big = compile_text(SMALL, "a.yaml")
    grown = SMALL.replace("{name: A, racks: 4, planned_racks: 8,", "{name: A, racks: 8, planned_racks: 8,")
    grown = grown.replace("    count: 16\n", "    count: 24\n", 1)
    assert grown.count("racks: 8, planned_racks: 8") == 1
    d = diff(big, compile_text(grown, "b.yaml"))
    assert len(to_markdown(d, limit=None)) <= 62_000
    assert Path  # keep the import used by the helpers above


def _spines_one_rack_on() -> str:
    """small-ib with its spines re-racked from N02 to a new rack N03 (their 4 x 64 cables follow)."""
    far = SMALL.replace("{name: N, racks: 2}", "{name: N, racks: 3}").replace(
        "spine: {row: N, first_rack: 2, per_rack: 4, first_u: 2}", "spine: {row: N, first_rack: 3, per_rack: 4, first_u: 2}"
    )
    assert far != SMALL
    return far


def test_a_re_rack_is_one_device_order_with_its_cables_beneath():
    from supernodeiac.compare.report import device_orders

    old, new = compile_text(SMALL, "a.yaml"), compile_text(_spines_one_rack_on(), "b.yaml")
    d = diff(old, new)
    orders, rest, devices = device_orders(d)
    [order] = orders
    spines = [x for x in old.fabric.devices if x.role == "spine"]
    # Every data link of the re-racked spines, by the Fabric: the cables beneath the order.
    spine_ids = {x.index for x in spines}
    data = [link for link in old.fabric.links if link.fabric == "ib" and (link.a in spine_ids or link.b in spine_ids)]
    assert len(data) == 256
    assert (order.verb, order.role, order.old_rack, order.new_rack) == ("re-rack", "spine", "N02", "N03")
    assert sorted(x.device.name for x in order.devices) == sorted(x.name for x in spines)
    assert {c.cable.id for c in order.cables if c.cable.fabric == "ib"} == {link.id for link in data}
    assert not any(c.cable.id in {link.id for link in data} for c in rest)  # listed once, under the order
    assert all(x.change != "moved" for x in devices)

    text = to_text(d)
    assert len(text.encode()) < 30_000
    assert max(len(line) for line in text.splitlines()) <= 200
    assert text.count("re-rack 4 spine qm9700 N02 -> N03") == 1
    assert "256 ib leaf-spine" in text
    # The headline: the longer runs cost more cords at new lengths, the optics stay.
    assert "relative cost" in text and "optics (transceivers) 392 -> 392" in text
    md = to_markdown(d)
    assert "| re-rack spine qm9700 N02 → N03 | 4 | 264 |" in md


def test_re_racking_eight_spines_is_one_order_with_their_256_cables_beneath():
    """small-ib planned for 2 SUs (8 spines of 32 leaf cables each, one rack): all 8 re-racked."""
    from supernodeiac.compare.report import device_orders

    planned = SMALL.replace("    rail_optimized: true\n", "    rail_optimized: true\n    grow_to_sus: 2\n").replace(
        "spine: {row: N, first_rack: 2, per_rack: 4,", "spine: {row: N, first_rack: 2, per_rack: 8,"
    )
    far = planned.replace("{name: N, racks: 2}", "{name: N, racks: 3}").replace(
        "spine: {row: N, first_rack: 2, per_rack: 8,", "spine: {row: N, first_rack: 3, per_rack: 8,"
    )
    old, new = compile_text(planned, "a.yaml"), compile_text(far, "b.yaml")
    assert old.exit_code == 0 and new.exit_code == 0
    spines = {x.index: x.name for x in old.fabric.devices if x.role == "spine"}
    data = [link for link in old.fabric.links if link.fabric == "ib" and (link.a in spines or link.b in spines)]
    assert (len(spines), len(data)) == (8, 256)
    d = diff(old, new)
    [order] = device_orders(d)[0]
    assert (order.verb, order.role, order.old_rack, order.new_rack) == ("re-rack", "spine", "N02", "N03")
    assert {c.cable.id for c in order.cables if c.cable.fabric == "ib"} == {link.id for link in data}

    text = to_text(d)
    assert len(text.encode()) < 30_000, len(text.encode())
    assert max(len(line) for line in text.splitlines()) <= 200
    assert text.count("re-rack 8 spine qm9700 N02 -> N03") == 1
    assert "256 ib leaf-spine" in text
    # Beneath the order, one line per cable: its port on the spine and its ID (the device and
    # rack are the heading's), each of the 256 exactly once.
    section = text.split("Device orders")[1].split("\n\n")[0]
    listed = re.findall(r"^      \S+  (\S+?);?(?: |$)", section, re.M)
    assert sorted(i for i in listed if i in {link.id for link in data}) == sorted(link.id for link in data)
    assert len(listed) == len(order.cables) == 272  # with each spine's console and management cable
    # A re-patched management cable names its far end's move on the same line.
    assert re.search(r"^      mgmt0  \S+; far end mgmt-N02:\S+ .*-> mgmt-N03:", section, re.M), section[-600:]


def test_findings_new_and_resolved_are_named():
    crowded = SMALL.replace(
        "{name: A, racks: 4, planned_racks: 8, budget: {power_kw: 45}}",
        "{name: A, racks: 4, planned_racks: 8, budget: {power_kw: 35}}",
    )
    assert crowded != SMALL
    d = diff(compile_text(SMALL, "a.yaml"), compile_text(crowded, "b.yaml"), artifacts=False)
    assert d.new_findings and not d.resolved_findings
    text = to_text(d)
    severity, rule, message = d.new_findings[0]
    assert f"{severity}[{rule}]: {message}" in text
    back = diff(compile_text(crowded, "b.yaml"), compile_text(SMALL, "a.yaml"), artifacts=False)
    assert back.resolved_findings == d.new_findings
    assert "Resolved findings" in to_text(back)


def test_markdown_says_where_the_full_list_is():
    old, new = compile_text(ROCE, "roce.yaml"), compile_text(_one_more_su(ROCE), "roce-su3.yaml")
    md = to_markdown(diff(old, new, artifacts=False), limit=5)
    assert "more cables not shown; the full list: `snc diff --format text --limit 0 OLD NEW > snc-diff.txt`" in md


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"b", b"c", b"d", b"", b"e f"]), max_size=8),
    st.lists(st.sampled_from([b"a", b"b", b"c", b"d", b"", b"e f"]), max_size=8),
)
def test_text_lines_added_and_removed_are_counted_as_a_multiset(a, b):
    """A text file's lines on one side only, as many times as the other lacks them: the set
    form (no line repeats) and the counted form give what a plain count of each line gives."""
    text_a, text_b = b"".join(x + b"\n" for x in a), b"".join(x + b"\n" for x in b)
    change = compare_file("x.txt", text_a, text_b)
    added = sum(max(0, b.count(x) - a.count(x)) for x in set(b))
    removed = sum(max(0, a.count(x) - b.count(x)) for x in set(a))
    assert change.lines == {"added": added, "removed": removed}


def test_text_lines_with_and_without_repeats():
    assert compare_file("a.txt", b"x\ny\nz\n", b"x\nz\nw\n").lines == {"added": 1, "removed": 1}
    assert compare_file("a.txt", b"x\nx\ny\n", b"x\ny\ny\ny\n").lines == {"added": 2, "removed": 1}
