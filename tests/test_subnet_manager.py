"""A fabric's subnet managers from the blueprint: an opensm.<name>.conf per machine with its own
sm_priority, the fabric's lmc, and the checks on both (rule ib-subnet-manager)."""

from __future__ import annotations

import re

import pytest
from conftest import BLUEPRINTS, compile_text
from helpers import ibsim

from supernodeiac.pipeline import render

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
# small-ib with updn pinned (ftree takes no LMC > 0), two LIDs per HCA port and an HA pair.
HA = """    routing_engine: updn
    subnet_manager:
      lmc: 1
      instances: [{name: ufm-a, priority: 15}, {name: ufm-b, priority: 14}]
"""


def _with(extra: str) -> str:
    text, n = re.subn(r"(\n    kind: fat-tree\n)", r"\1" + extra.replace("\\", "\\\\"), SMALL, count=1)
    assert n == 1
    return text


def _findings(text: str, rule: str = "ib-subnet-manager") -> list:
    return [f for f in compile_text(text, "bp.yaml").findings if f.rule == rule]


def test_one_conf_per_subnet_manager_with_its_priority_and_the_lmc():
    c = compile_text(_with(HA), "bp.yaml")
    assert not [f for f in c.findings if f.severity == "error"], c.findings
    files, _ = render(c, ["opensm"])
    confs = {p: d.decode() for p, d in files.items() if re.fullmatch(r"opensm/ib/opensm(\.[\w-]+)?\.conf", p)}
    assert sorted(confs) == ["opensm/ib/opensm.conf", "opensm/ib/opensm.ufm-a.conf", "opensm/ib/opensm.ufm-b.conf"]
    for conf in confs.values():
        assert re.search(r"^lmc 1$", conf, re.M) and re.search(r"^routing_engine updn$", conf, re.M)
    assert "sm_priority" not in confs["opensm/ib/opensm.conf"]
    assert re.findall(r"^sm_priority (\d+)$", confs["opensm/ib/opensm.ufm-a.conf"], re.M) == ["15"]
    assert re.findall(r"^sm_priority (\d+)$", confs["opensm/ib/opensm.ufm-b.conf"], re.M) == ["14"]
    assert "ufm-b 14" in confs["opensm/ib/opensm.ufm-a.conf"]


def test_without_the_section_the_files_are_as_before():
    files, _ = render(compile_text(SMALL, "bp.yaml"), ["opensm"])
    conf = files["opensm/ib/opensm.conf"].decode()
    assert re.search(r"^lmc 0$", conf, re.M) and "sm_priority" not in conf
    assert not [p for p in files if re.fullmatch(r"opensm/ib/opensm\..+\.conf", p)]


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_lmc_with_ftree_is_an_error_at_its_line():
    text = _with("    subnet_manager: {lmc: 2}\n")  # ftree: small-ib's default engine
    found = _findings(text)
    assert len(found) == 1 and "does not support LMC > 0" in found[0].message and found[0].severity == "error"
    assert found[0].location.line == _line_of(text, "subnet_manager:")


def test_the_lid_space_bounds_lmc():
    """dgx-h100-superpod-4su: 1,016 compute HCA ports and its switches; 2^5 LIDs each fit in the
    49,151 unicast LIDs, 2^6 do not."""
    base = (BLUEPRINTS / "dgx-h100-superpod-4su.yaml").read_text()

    def at(lmc: int) -> str:
        extra = f"    routing_engine: updn\n    subnet_manager: {{lmc: {lmc}}}\n"
        return base.replace("\n    kind: fat-tree\n", "\n    kind: fat-tree\n" + extra, 1)

    assert _findings(at(5)) == []
    found = _findings(at(6))
    assert len(found) == 1 and "unicast LIDs" in found[0].message, found
    ports = int(re.search(r"([\d,]+) HCA ports", found[0].message).group(1).replace(",", ""))
    switches = int(re.search(r"\+ ([\d,]+) switches", found[0].message).group(1).replace(",", ""))
    assert ports * 32 + switches <= 0xBFFF < ports * 64 + switches
    assert found[0].location.line == _line_of(at(6), "subnet_manager:")


@pytest.mark.parametrize(
    "bad",
    [
        "    subnet_manager: {instances: [{name: a, priority: 16}]}\n",
        "    subnet_manager: {instances: [{name: a, priority: 3}, {name: b, priority: 3}]}\n",
        "    subnet_manager: {instances: [{name: a, priority: 3}, {name: A, priority: 2}]}\n",
        "    subnet_manager: {lmc: 8}\n",
        "    subnet_manager: {instances: [{name: 'a;reboot', priority: 3}]}\n",
    ],
)
def test_bad_sections_are_rejected_at_their_line(bad):
    c = compile_text(_with(bad), "bp.yaml")
    errors = [f for f in c.findings if f.severity == "error"]
    assert errors and all(f.location is not None for f in errors), errors
    assert any(f.location.line == _with(bad).splitlines().index(bad.rstrip("\n")) + 1 for f in errors), errors


@pytest.mark.skipif(ibsim.missing() is not None, reason=ibsim.missing() or "")
def test_opensm_accepts_an_sm_conf_and_gives_two_lids_per_port(tmp_path):
    """The real OpenSM on ibsim accepts ufm-a's file (sm_priority 15, lmc 1): updn routes, and every
    HCA port gets a block of 2^lmc LIDs starting at a multiple of 2^lmc. (The run configures the
    subnet once and exits, so SMInfo's priority cannot be queried from it: the file's line is
    tested above.)"""
    files, _ = render(compile_text(_with(HA), "bp.yaml"), ["opensm"])
    conf = ibsim.install(files, "ib", tmp_path / "etc")
    ufm_a = files["opensm/ib/opensm.ufm-a.conf"].decode()
    (conf.parent / "opensm.conf").write_text(ufm_a.replace("/etc/opensm", str(conf.parent)))
    topology = conf.parent / "ibnetdiscover.topo"
    with ibsim.Simulation(topology, tmp_path / "sim", ibsim.first_hca(topology)) as sim:
        run = sim.opensm(conf)
        assert run.subnet_up and run.engine == "updn" and run.errors == [], run.summary()
        guid2lid = (tmp_path / "sim" / "run" / "guid2lid").read_text()
        ranges = re.findall(r"^0x[0-9a-f]+ (0x[0-9a-f]+) (0x[0-9a-f]+)", guid2lid, re.M)
        spans = {int(hi, 16) - int(lo, 16) for lo, hi in ranges}
        assert spans == {0, 1}, spans  # switches one LID (base LMC on port 0), HCA ports two
        assert all(int(lo, 16) % 2 == 0 for lo, hi in ranges if int(hi, 16) > int(lo, 16))


def _bench_generate():
    import importlib.util
    import sys

    path = BLUEPRINTS.parent / "bench" / "generate.py"
    spec = importlib.util.spec_from_file_location("generate", path)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("generate", gen)
    spec.loader.exec_module(gen)
    return gen


def test_a_subnet_over_the_lid_space_is_an_error_without_a_subnet_manager_section():
    """6,400 HGX H100 nodes of 8 NDR HCA ports: 51,200 HCA ports and their switches cannot be one
    subnet (49,151 unicast LIDs), declared subnet managers or not. bench/generate.py splits such
    a size into planes (each its own subnet): 2 planes of 25,600 ports fit, and each plane's rails
    still follow the GPUs (plane p's rail r carries GPU r * 2 + p), so no nic-placement warning."""
    planed = _bench_generate().blueprint(6_400)
    assert "\n    planes: 2\n" in planed
    c = compile_text(planed, "bench.yaml")
    assert not [f for f in c.findings if f.rule in ("ib-subnet-manager", "nic-placement")], c.findings
    per_plane = {
        name: sum(1 for d in c.fabric.devices if d.group == name and d.role in ("leaf", "spine", "core"))
        for name in ("ib-p1", "ib-p2")
    }
    assert all(25_600 + n <= 0xBFFF for n in per_plane.values()), per_plane

    one = planed.replace("\n    planes: 2\n", "\n    planes: 1\n")
    found = _findings(one)
    assert len(found) == 1 and found[0].severity == "error", found
    ports = int(re.search(r"([\d,]+) HCA ports", found[0].message).group(1).replace(",", ""))
    switches = int(re.search(r"\+ ([\d,]+) switches", found[0].message).group(1).replace(",", ""))
    assert ports == 6_400 * 8 and switches == sum(per_plane.values()) and ports + switches > 0xBFFF
    assert "planes" in found[0].hint
    assert found[0].location.line == _line_of(one, "  - name: ib")
