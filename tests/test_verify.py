"""`snc verify`: the as-built fabric against the plan.

The InfiniBand case runs on the real tools when they are installed: the rendered topology with
injected faults (two cables swapped, one missing, one on the wrong switch) is loaded into ibsim,
``ibnetdiscover`` reads it back as it would a live fabric, and verify must report exactly those
faults, with cable IDs, labels and fixes; the unfaulted simulation must come out clean.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, shipped, shipped_files, shipped_outputs
from helpers import ibsim
from helpers.ibsim import Rewire

from supernodeiac.cli import main

SMALL = str(BLUEPRINTS / "small-ib.yaml")
ROCE = str(BLUEPRINTS / "roce-rail-2tier.yaml")
NEEDS_SIM = pytest.mark.skipif(ibsim.missing() is not None, reason=ibsim.missing() or "")


def _verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _artifacts(path: str) -> dict[str, bytes]:
    return shipped_files(Path(path).stem)


def _topology() -> str:
    return _artifacts(SMALL)["opensm/ib/ibnetdiscover.topo"].decode()


def _faulty() -> str:
    """Two cables swapped on a leaf, a leaf uplink missing, a host cable on the wrong leaf."""
    r = Rewire(_topology())
    leaf = {i: r.guid(f"ib-leaf-su001-0{i}") for i in range(1, 5)}
    r.swap(leaf[1], 1, 2)
    r.remove(leaf[2], 33)
    r.move(leaf[3], 3, leaf[4], 20)
    return r.text()


def _check_faults(doc: dict) -> None:
    kinds = sorted(d["kind"] for d in doc["differences"])
    assert kinds == ["miscabled", "missing", "swapped"], json.dumps(doc, indent=1)[:3000]
    by = {d["kind"]: d for d in doc["differences"]}
    swapped = by["swapped"]
    assert {c["id"] for c in swapped["cables"]} == {"gpu-0001-mlx5_0", "gpu-0002-mlx5_0"}
    assert swapped["fix"].startswith(
        "on ib-leaf-su001-01, exchange the plugs in OSFP 1 port 1 (IB1/1/1, IB port 1) and OSFP 1 port 2 (IB1/1/2, IB port 2)"
    )
    assert "gpu-0001:OSFP 4 port 2 > ib-leaf-su001-01:OSFP 1 port 1" in swapped["fix"]
    missing = by["missing"]
    [cable] = missing["cables"]
    assert cable["a"] == "ib-leaf-su001-02 OSFP 17 port 1 (IB1/17/1, IB port 33)" and cable["b"].startswith("ib-spine-")
    assert missing["fix"].startswith("connect ib-leaf-su001-02 OSFP 17 port 1 (IB1/17/1, IB port 33) to ib-spine-")
    # The labels on the cable's two ends, as cables.csv prints them (naming.end_label).
    assert cable["a_label"] == "small-ib/N/N01/U03/ib-leaf-su001-02/OSFP 17 port 1 > N/N02/U02/ib-spine-001/OSFP 5 port 1"
    assert f"end labels '{cable['a_label']}' and '{cable['b_label']}'" in missing["fix"]
    wrong = by["miscabled"]
    assert [c["id"] for c in wrong["cables"]] == ["gpu-0003-mlx5_4"]
    assert "wrong device" in wrong["message"]
    assert wrong["fix"].startswith(
        "move cable gpu-0003-mlx5_4 from ib-leaf-su001-04 OSFP 10 port 2 (IB1/10/2, IB port 20) "
        "to ib-leaf-su001-03 OSFP 2 port 1 (IB1/2/1, IB port 3)"
    )
    label = "small-ib/N/N01/U04/ib-leaf-su001-03/OSFP 2 port 1 > A/A01/U18/gpu-0003/OSFP 3 port 1"
    assert wrong["fix"].endswith(f"the end labelled '{label}')")
    assert doc["exit_code"] == 1 and doc["checked"] == 388 and doc["matched"] == 388 - 4


@NEEDS_SIM
@pytest.mark.parametrize("faulty", [False, True])
def test_verify_finds_exactly_the_injected_faults_on_ibsim(faulty, tmp_path):
    topology = tmp_path / "plan.topo"
    topology.write_text(_faulty() if faulty else _topology())
    with ibsim.Simulation(topology, tmp_path / "sim", "H-02534e0000000000") as sim:
        discovered = sim.ibnetdiscover()
    assert "Topology file: generated on" in discovered  # ibnetdiscover's own output, not our file
    path = tmp_path / "discovered.topo"
    path.write_text(discovered)
    code, out = _verify(SMALL, str(path), "--format", "json")
    doc = json.loads(out)
    if faulty:
        assert code == 1
        _check_faults(doc)
    else:
        assert code == 0 and doc["differences"] == [] and doc["matched"] == 388


def test_verify_offline_on_an_edited_topology(tmp_path):
    path = tmp_path / "discovered.topo"
    path.write_text(_faulty())
    code, out = _verify(SMALL, str(path), "--format", "json")
    assert code == 1
    _check_faults(json.loads(out))
    code, text = _verify(SMALL, str(path))
    assert "error[swapped]" in text and "fix: move cable gpu-0003-mlx5_4 from ib-leaf-su001-04" in text
    code, md = _verify(SMALL, str(path), "--format", "markdown")
    assert md.startswith("# Cabling check: small-ib") and "| 1 | swapped |" in md


def test_real_hardware_guids_match_by_node_description(tmp_path):
    """Live switches carry vendor GUIDs and descriptions such as 'MF0;<name>:MQM9700/U1'."""
    text = _topology().replace('"S-02534e', '"S-b83fd2').replace("switchguid=0x2534e", "switchguid=0xb83fd2")
    text = text.replace('# "ib-leaf-su001-01"', '# "MF0;ib-leaf-su001-01:MQM9700/U1"')
    path = tmp_path / "live.topo"
    path.write_text(text)
    code, out = _verify(SMALL, str(path), "--format", "json")
    assert code == 0, out


@pytest.mark.parametrize(
    "content, line, message",
    [
        ('Switch\t64 "S-0001"\t\t# "x"\n[1]\t"H-0002"[1]\n[1]\t"H-0003"[1]\n', 3, "port 1 listed twice"),
        ('#\n\nSwitch\t64 "S-0001"\t\t# "x"\nthis is not a topology line\n', 4, "not ibnetdiscover topology syntax"),
        ('[1]\t"H-0002"[1]\n', 1, "not ibnetdiscover output"),
        ('{"lldp": {"interface": {"eth0": [1, 2]}}', 1, "not JSON"),
    ],
)
def test_an_unreadable_discovery_file_is_exit_2_with_its_line(content, line, message, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    code, out = _verify(SMALL, str(path))
    assert code == 2
    assert f"{path}:{line}:" in out or (line == 1 and f"{path}:" in out), out
    assert message in out


def test_a_missing_file_or_blueprint_is_exit_2(tmp_path):
    assert _verify(SMALL, str(tmp_path / "nope.topo"))[0] == 2
    assert _verify(str(tmp_path / "nope.yaml"), str(tmp_path / "x"))[0] == 2


# -- LLDP ----------------------------------------------------------------------------------------------


def _expected_lldp(device: str) -> list[dict]:
    """A switch's expected neighbours, from its line in the rendered lldp/<network>.jsonl files."""
    for path, data in _artifacts(ROCE).items():
        if path.startswith("lldp/"):
            for line in data.decode().splitlines():
                doc = json.loads(line)
                if doc["device"] == device:
                    return doc["neighbors"]
    raise KeyError(device)


def _sonic_table(rows: list[tuple[str, str, str, str]]) -> str:
    head = f"{'LocalPort':<12} {'RemoteDevice':<22} {'RemotePortID':<14} {'Capability':<11} RemotePortDescr"
    dashes = f"{'-' * 12} {'-' * 22} {'-' * 14} {'-' * 11} {'-' * 30}"
    body = [f"{a:<12} {b:<22} {c:<14} {'BR':<11} {d}" for a, b, c, d in rows]
    return (
        "\n".join(
            [
                "Capability codes: (R) Router, (B) Bridge, (O) Other",
                head,
                dashes,
                *body,
                "-" * 40,
                f"Total entries displayed:  {len(rows)}",
            ]
        )
        + "\n"
    )


def _lldpctl(rows: list[tuple[str, str, str, str]]) -> str:
    interfaces = [
        {
            local: {
                "via": "LLDP",
                "chassis": {system: {"id": {"type": "mac", "value": "00:00:00:00:00:01"}}},
                "port": {"id": {"type": "local", "value": port}, "descr": descr},
            }
        }
        for local, system, port, descr in rows
    ]
    return json.dumps({"lldp": {"interface": interfaces}}, indent=2)


def test_lldp_tables_as_planned_are_clean(tmp_path):
    leaf = "roce-leaf-su001-01"
    rows = [
        (n["port"], n["neighbor"], n["neighbor_port_id"], n["neighbor_port"])
        for n in _expected_lldp(leaf)
        if n["neighbor_speaks_lldp"]
    ]
    (tmp_path / f"{leaf}.txt").write_text(_sonic_table(rows))
    spine = "roce-spine-001"
    srows = [
        (n["port"], n["neighbor"] + ".example.net", n["neighbor_port_id"], "")
        for n in _expected_lldp(spine)
        if n["neighbor_speaks_lldp"]
    ]
    (tmp_path / "spine.json").write_text(_lldpctl(srows))
    code, out = _verify(ROCE, str(tmp_path / f"{leaf}.txt"), f"{spine}={tmp_path / 'spine.json'}", "--format", "json")
    doc = json.loads(out)
    assert [d["kind"] for d in doc["differences"]] == ["unverified"] * 64  # the hosts' NICs run no LLDP here
    assert code == 0
    assert {i["format"] for i in doc["inputs"]} == {"show lldp table", "lldpctl -f json"}


def test_lldp_finds_swapped_uplinks_and_a_missing_one(tmp_path):
    leaf = "roce-leaf-su001-01"
    speaking = [n for n in _expected_lldp(leaf) if n["neighbor_speaks_lldp"]]  # 64 uplinks and eth0 to mgmt
    ups = [n for n in speaking if n["neighbor"].startswith("roce-spine")]
    rows = {n["port"]: (n["port"], n["neighbor"], n["neighbor_port_id"], n["neighbor_port"]) for n in speaking}
    a, b = ups[0]["port"], ups[1]["port"]
    rows[a], rows[b] = (a, *rows[b][1:]), (b, *rows[a][1:])  # two uplinks exchanged at the leaf
    del rows[ups[5]["port"]]
    (tmp_path / f"{leaf}.lldp").write_text(_sonic_table(list(rows.values())))
    code, out = _verify(ROCE, str(tmp_path / f"{leaf}.lldp"), "--format", "json")
    doc = json.loads(out)
    kinds = [d["kind"] for d in doc["differences"] if d["severity"] == "error"]
    assert code == 1 and sorted(kinds) == ["missing", "swapped"]
    swapped = next(d for d in doc["differences"] if d["kind"] == "swapped")
    assert {c["id"] for c in swapped["cables"]} == {ups[0]["cable"], ups[1]["cable"]}
    # Both cables join the same two switches: exchanging them at either end is the fix.
    assert swapped["fix"].startswith(
        (f"on {leaf}, exchange the plugs in {a} and {b}", f"on {ups[0]['neighbor']}, exchange the plugs in")
    )
    missing = next(d for d in doc["differences"] if d["kind"] == "missing")
    assert missing["cables"][0]["id"] == ups[5]["cable"]


def test_hosts_announcing_a_mac_as_port_id_match_their_planned_port(tmp_path):
    """lldpd on a Linux host sends its MAC as port ID: the host name on the planned far end is enough."""
    leaf = "roce-leaf-su001-01"
    rows = [
        (n["port"], n["neighbor"], "b8:3f:d2:00:00:01" if not n["neighbor_speaks_lldp"] else n["neighbor_port_id"], "")
        for n in _expected_lldp(leaf)
    ]
    wrong = rows[1]
    rows[1] = (wrong[0], "gpu-b-0001", "b8:3f:d2:00:00:02", "")  # a host the plan puts elsewhere
    (tmp_path / f"{leaf}.json").write_text(_lldpctl(rows))
    code, out = _verify(ROCE, str(tmp_path / f"{leaf}.json"), "--format", "json")
    doc = json.loads(out)
    assert code == 1
    [diff] = doc["differences"]
    assert diff["kind"] == "miscabled" and "gpu-b-0001" in diff["message"], diff


def test_an_lldp_table_of_an_unknown_device_asks_for_its_name(tmp_path):
    path = tmp_path / "table.txt"
    path.write_text(_sonic_table([("Ethernet0", "x", "y", "")]))
    code, out = _verify(ROCE, str(path))
    assert code == 2 and "DEVICE=FILE" in out
    assert _verify(ROCE, f"nope={path}")[0] == 2


# -- files that show nothing ---------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["lldpctl", "lldpctl-no-interface", "sonic"])
def test_an_empty_lldp_table_reports_every_planned_cable_of_its_device_missing(tmp_path, form):
    """`{"lldp": {}}` (lldpd with no neighbour) or a SONiC table with 0 entries passed as
    '0 planned cables checked: all as planned'; each planned cable of the device is missing."""
    leaf = "roce-leaf-su001-01"
    planned = {n["cable"] for n in _expected_lldp(leaf)}
    text = {
        "lldpctl": json.dumps({"lldp": {"interface": []}}),
        "lldpctl-no-interface": json.dumps({"lldp": {}}),
        "sonic": _sonic_table([]),
    }[form]
    path = tmp_path / f"{leaf}.txt"
    path.write_text(text)
    code, out = _verify(ROCE, str(path), "--format", "json")
    doc = json.loads(out)
    assert code == 1
    assert doc["matched"] == 0
    missing = [d for d in doc["differences"] if d["kind"] == "missing"]
    assert len(missing) == len(doc["differences"])
    assert {d["cables"][0]["id"] for d in missing} == planned
    assert all("lists no neighbour" in d["message"] for d in missing)


def test_an_ibnetdiscover_file_without_ports_reports_every_planned_cable_missing(tmp_path):
    text = "\n".join(line for line in _topology().splitlines() if not line.startswith("["))
    path = tmp_path / "portless.topo"
    path.write_text(text + "\n")
    code, out = _verify(SMALL, str(path), "--format", "json")
    doc = json.loads(out)
    assert code == 1
    assert doc["matched"] == 0 and len(doc["differences"]) == 388
    assert {d["kind"] for d in doc["differences"]} == {"missing"}


# A DGX H100's compute HCAs as the host enumerates them, GPU 0..7 (NVIDIA DGX H100/H200 User
# Guide, Network Modules table); GPU i's HCA is cabled to rail i's leaf in the SuperPOD RA.
DGX_H100_HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
_CA = re.compile(
    r'^Ca\t\d+ "H-[0-9a-f]+"\t\t# "(?P<desc>[^"]+)"\n'
    r'\[1\]\([0-9a-f]+\) \t"S-[0-9a-f]+"\[\d+\]\t\t# lid 0 lmc 0 "(?P<leaf>[^"]+)"',
    re.M,
)


def test_a_simulated_dgx_h100_fabric_verifies_clean_by_the_names_dgx_hosts_report(tmp_path):
    """Every DGX HCA's node description is what rdma-ndd sets on a DGX ("<host> mlx5_3" for GPU
    1's), written here from the user guide's table and the rail of the leaf it is cabled to, not
    from the catalogue; GUIDs are vendor ones, so verify matches by description alone."""
    path = str(BLUEPRINTS / "dgx-h100-superpod-4su.yaml")
    c = shipped("dgx-h100-superpod-4su")
    text = shipped_outputs("dgx-h100-superpod-4su", "opensm")["opensm/ib/ibnetdiscover.topo"].decode()
    rename: dict[str, str] = {}
    for m in _CA.finditer(text):
        host = m["desc"].split()[0]
        if host.startswith("dgx-"):
            rename[m["desc"]] = f"{host} {DGX_H100_HCAS[c.fabric.device(m['leaf']).coord('rail')]}"
    assert len(rename) == 127 * 8
    text = re.sub(r'"([^"]+)"', lambda m: f'"{rename.get(m[1], m[1])}"', text)
    text = re.sub(r"(?<![0-9a-f])0?2534e([0-9a-f]{10})\b", lambda m: "946dae" + m.group(1), text)
    assert "2534e" not in text
    discovered = tmp_path / "dgx.topo"
    discovered.write_text(text)
    code, out = _verify(path, str(discovered), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["differences"] == [], out[:2000]
    assert doc["matched"] == 2044  # 1,020 node + UFM cables and 1,024 leaf-spine cables (the RA's count)
