"""``snc bind``: the subnet manager's files with the GUIDs of a discovered fabric.

The discovered fabric here is the rendered topology with every GUID moved out of the plan's
locally administered range into a vendor's (0x02534e... -> 0x946dae..., the same cabling and
descriptions), as ibnetdiscover would print it on the built fabric. test_opensm.py runs the bound
files in the real OpenSM on ibsim.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, shipped, shipped_outputs
from helpers.ibsim import Rewire

from supernodeiac.cli import main
from supernodeiac.facts.ib_fabric import IbFabric

VENDOR = "946dae"


def _plan_topology(name: str, fabric: str = "ib") -> str:
    return shipped_outputs(name, "opensm")[f"opensm/{fabric}/ibnetdiscover.topo"].decode()


def _vendor(guid: int) -> int:
    return guid ^ ((0x02534E ^ int(VENDOR, 16)) << 40)


def _discovered(name: str, fabric: str = "ib") -> str:
    """The plan's topology with vendor GUIDs (in ids, port GUIDs and the guid= lines)."""
    text = _plan_topology(name, fabric)
    return re.sub(r"\b0?2534e([0-9a-f]{10})\b", lambda m: VENDOR + m.group(1), text)


def _bind(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["bind", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _bind_discovered(name: str, tmp_path: Path) -> tuple[int, str]:
    """``snc bind`` of a shipped blueprint to its discovered fabric (fabric.topo), into tmp_path/bound."""
    dump = tmp_path / "fabric.topo"
    dump.write_text(_discovered(name))
    return _bind(str(BLUEPRINTS / f"{name}.yaml"), str(dump), "-o", str(tmp_path / "bound"))


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bind_writes_the_discovered_guids(tmp_path):
    c = shipped("small-ib")
    ib = IbFabric(c.fabric, "ib")
    code, out = _bind_discovered("small-ib", tmp_path)
    assert code == 0, out
    assert "all as planned" in out and "bound ib" in out
    files = _files(tmp_path / "bound")
    assert set(files) == {
        "MANIFEST.json",
        *(f"opensm/ib/{f}" for f in ("opensm.conf", "root_guids.conf", "cn_guids.conf", "io_guids.conf", "partitions.conf")),
        "opensm/ib/opensm-window.conf",  # the acceptance window's (snc routed-tests), with the same GUID files
        "opensm/ib/guids.csv",
    }
    roots = files["opensm/ib/root_guids.conf"].decode().split()
    assert roots == [f"0x{_vendor(n.guid):016x}" for n in ib.top_switches()] and len(roots) == 4
    cn = files["opensm/ib/cn_guids.conf"].decode().split()
    io = files["opensm/ib/io_guids.conf"].decode().split()
    hcas = [f"0x{_vendor(ib.port_guid(n)):016x}" for n in ib.cas]
    assert sorted(cn + io) == sorted(hcas) and len(hcas) == 132 and 0 < len(io) < len(cn)
    assert cn == [g for g in hcas if g not in io]  # in plan order
    for path in ("opensm.conf", "root_guids.conf", "cn_guids.conf", "io_guids.conf", "partitions.conf"):
        assert "02534e" not in files[f"opensm/ib/{path}"].decode()  # no planned GUID left
    conf = files["opensm/ib/opensm.conf"].decode()
    assert "Bound to the discovered fabric" in conf and "routing_engine ftree" in conf and "A PLAN" not in conf
    rows = files["opensm/ib/guids.csv"].decode().splitlines()
    head = ["fabric", "device", "port", "kind", "node_guid", "port_guid", "planned_node_guid", "planned_port_guid"]
    assert rows[0].split(",")[:8] == head
    assert len(rows) == 1 + len(ib.nodes)
    host = next(r.split(",") for r in rows if ",gpu-0003,mlx5_4," in r)
    assert host[4].startswith("0x946dae") and host[6].startswith("0x02534e") and host[9].startswith("fabric.topo:")


def test_bind_is_idempotent(tmp_path):
    outs = []
    for _ in range(2):
        code, out = _bind_discovered("small-ib", tmp_path)
        assert code == 0, out
        outs.append(_files(tmp_path / "bound"))
    assert outs[0] == outs[1]


def test_bound_partitions_list_every_member(tmp_path):
    """ib-3tier's tenants: every compute HCA's discovered port GUID under its tenant's key, full member."""
    c = shipped("ib-3tier")
    ib = IbFabric(c.fabric, "ib")
    code, out = _bind_discovered("ib-3tier", tmp_path)
    assert code == 0, out
    text = (tmp_path / "bound/opensm/ib/partitions.conf").read_text()
    assert "Default=0x7fff, ipoib, defmember=limited : ALL, ALL_SWITCHES=full, SELF=full ;" in text
    for tenant in c.blueprint.tenants:
        block = re.search(
            rf"^{tenant.name}=0x{tenant.pkey:04x}[^:\n]*defmember=full :\n((?:  0x[0-9a-f]{{16}}.*\n)+)", text, re.M
        )
        assert block, tenant.name
        members = re.findall(r"0x[0-9a-f]{16}", block.group(1))
        expected = [f"0x{_vendor(ib.port_guid(n)):016x}" for n in ib.cas if c.fabric.devices[n.device].group in tenant.groups]
        assert members == expected and len(members) == 1024 if tenant.name == "team-a" else members == expected
    io = (tmp_path / "bound/opensm/ib/io_guids.conf").read_text().split()
    assert len(io) == 4 and all(g.startswith("0x946dae") for g in io)  # the UFM pair's ports


def _unchanged(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Bind into a folder an earlier good bind wrote: a failing bind leaves it as it was."""
    good = tmp_path / "good.topo"
    good.write_text(_discovered("small-ib"))
    target = tmp_path / "bound"
    assert _bind(str(BLUEPRINTS / "small-ib.yaml"), str(good), "-o", str(target))[0] == 0
    before = _files(target)
    code, out = _bind(str(BLUEPRINTS / "small-ib.yaml"), *args, "-o", str(target))
    assert _files(target) == before
    return code, out


def test_a_truncated_dump_is_a_located_error(tmp_path):
    text = _discovered("small-ib")
    cut = text[: len(text) * 2 // 3]
    cut = cut[: cut.rindex("\n\n")]  # cut between records, as a dump stopped early looks
    dump = tmp_path / "cut.topo"
    dump.write_text(cut)
    code, out = _unchanged(tmp_path, str(dump))
    assert code == 2
    m = re.search(
        r"cut\.topo:(\d+): port \d+ of '[^']+' leads to node 0x946dae[0-9a-f]+, which has no record: the dump is trunc", out
    )
    assert m, out
    assert "nothing written" in out
    assert re.match(r"^\[\d+\]", cut.splitlines()[int(m.group(1)) - 1])  # the line is that port line


def test_duplicate_node_descriptions_are_a_located_error(tmp_path):
    text = _discovered("small-ib").replace('"gpu-0004 mlx5_3"', '"gpu-0003 mlx5_3"')
    dump = tmp_path / "dup.topo"
    dump.write_text(text)
    code, out = _unchanged(tmp_path, str(dump))
    assert code == 2
    two = r"dup\.topo:\d+: node 0x946dae[0-9a-f]+ \('gpu-0003 mlx5_3'\) and node 0x946dae[0-9a-f]+ at line \d+ are both"
    assert re.search(two + r" 'gpu-0003 mlx5_3' of the plan", out), out


def test_another_fabrics_dump_is_a_located_error(tmp_path):
    dump = tmp_path / "other.topo"
    dump.write_text(_discovered("dragonfly-plus", "dfp"))
    code, out = _unchanged(tmp_path, str(dump))
    assert code == 2
    assert re.search(
        r"other\.topo:\d+: (only \d+ of the \d+ nodes in this dump are in the plan|no node of this topology)", out
    ), out


@pytest.mark.parametrize("what", ["not a dump", "missing file"])
def test_unreadable_input_is_exit_2(tmp_path, what):
    path = tmp_path / "x.topo"
    if what == "not a dump":
        path.write_text("hello\n")
    code, out = _unchanged(tmp_path, str(path))
    assert code == 2 and "x.topo" in out and "nothing written" in out


def test_a_miscabled_fabric_is_not_bound(tmp_path):
    rewired = Rewire(_discovered("small-ib"))
    leaf = rewired.guid("ib-leaf-su001-01")
    rewired.swap(leaf, 1, 2)  # two hosts' plugs exchanged on a leaf
    dump = tmp_path / "swapped.topo"
    dump.write_text(rewired.text())
    code, out = _unchanged(tmp_path, str(dump))
    assert code == 1
    assert "error[swapped]" in out and "nothing written" in out


def test_hosts_whose_rdma_names_the_plan_lacks_are_told_so(tmp_path):
    """rdma-ndd describes an HCA as "<host> <RDMA device>": on nebula-x128-ib's boards, whose data
    ports the catalogue names nic0..nic7, real hosts say mlx5_N. That is this fabric with other
    names, not another fabric's dump, and the error says which names to give."""
    text = re.sub(r'"(x128-sn\d+-cb\d+) nic(\d+)"', r'"\1 mlx5_\2"', _discovered("nebula-x128-ib"))
    assert '"x128-sn01-cb01 mlx5_0"' in text
    dump = tmp_path / "hosts.topo"
    dump.write_text(text)
    code, out = _bind(str(BLUEPRINTS / "nebula-x128-ib.yaml"), str(dump), "-o", str(tmp_path / "bound"))
    assert code == 2 and not (tmp_path / "bound").exists()
    assert re.search(r"host x128-sn\d+-cb\d+ is in the plan, but with NICs nic0, nic1, .*nic7, not mlx5_\d+", out), out
    assert "ibdev2netdev" in out and "another fabric" not in out
