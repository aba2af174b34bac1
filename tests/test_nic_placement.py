"""A NIC's printed port (issue 8's faceplate model), its place beside a GPU (host_topology) and
the rail it is cabled to agree, for every built-in host model; and the check says so when a
blueprint makes them disagree."""

from __future__ import annotations

import json

import pytest
from conftest import BLUEPRINTS, compile_text
from nccl_rules import parse

from supernodeiac.catalog.host_topology import builtin_host_topology, host_topologies
from supernodeiac.facts.hosts import host_facts
from supernodeiac.pipeline import compile_file, render

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
# The same SU of 16 nodes on XDR: DGX B300 under Q3400 leaves (no NDR UFM on an XDR fabric).
B300 = (
    SMALL.replace("model: hgx-h100", "model: hgx-b300")
    .replace("switch: qm9700", "switch: q3400")
    .replace(
        "  - name: ufm\n    model: ufm-appliance\n    count: 2\n"
        "    placement: {row: N, first_rack: 2, per_rack: 2, first_u: 20}\n",
        "",
    )
    .replace("      - group: ufm\n        su: 0\n        ha: true\n", "")
    # 4 x B300 at 14.3 kW: the B300 XDR reference design's ~56 kW air-cooled racks (its PDUs are
    # not the 17.3 kW pdu-3ph of small-ib's H100 racks: none declared here)
    .replace("planned_racks: 8, budget: {power_kw: 45}}", "planned_racks: 8, budget: {power_kw: 60}}")
    .replace("  pdus: {model: pdu-3ph, per_rack: 3}\n", "")
)
assert "ufm" not in B300.split("management:")[0].split("nodes:")[1] and "pdus" not in B300
# A blueprint per built-in host model, each cabling it to a rail-optimised fabric.
CASES = {
    "hgx-h100": lambda: compile_file(str(BLUEPRINTS / "small-ib.yaml")),
    "hgx-h100-bf3": lambda: compile_file(str(BLUEPRINTS / "roce-rail-2tier.yaml")),
    "gb200-tray": lambda: compile_file(str(BLUEPRINTS / "nvl72-pod.yaml")),
    "hgx-b300": lambda: compile_text(B300, "b300.yaml"),
}
# DGX H100 User Guide table 6 (physical.md 2): the printed port of each GPU's NIC.
DGX_H100 = {
    7: "OSFP 1 port 1",
    4: "OSFP 1 port 2",
    6: "OSFP 2 port 1",
    5: "OSFP 2 port 2",
    2: "OSFP 3 port 1",
    1: "OSFP 3 port 2",
    3: "OSFP 4 port 1",
    0: "OSFP 4 port 2",
}


def test_every_built_in_layout_has_a_case():
    assert sorted(CASES) == sorted(builtin_host_topology())


@pytest.mark.parametrize("model", sorted(CASES))
def test_printed_port_gpu_and_rail_agree(model):
    c = CASES[model]()
    assert c.fabric is not None and not [f for f in c.findings if f.rule in ("nic-placement", "host-topology")]
    topo = host_topologies({})[0][model]
    gpu_of = topo.gpu_of_nic()
    entries = topo.nics()
    f = c.fabric
    layout = f.layouts[model]
    data = layout.ports_of("data")
    hosts = host_facts(f, c.blueprint)
    checked = 0
    for fh in hosts.fabrics.values():
        assert fh.rail_optimized
        for h, nics in fh.nics.items():
            if f.devices[h].model != model:
                continue
            for n in nics:
                j = data.index(n.port)
                printed = f.physical_name(h, n.port)
                # PCIe: the NIC sits beside GPU j; the cable: it lands on rail j.
                assert gpu_of[j] == j == n.rail, (f.devices[h].name, n.name)
                # Physical: the layout's vendor port (where it gives one) is the catalogue's printed port.
                if entries[j].port is not None:
                    assert entries[j].port == printed
                if model == "hgx-h100":
                    assert printed == DGX_H100[n.rail]
                checked += 1
    assert checked >= 16 * len(data) or model == "gb200-tray"


def _with_layout(model: str, edit) -> str:  # noqa: ANN001
    """small-ib with a blueprint override of the model's built-in layout, edited."""
    entry = json.loads(json.dumps(builtin_host_topology()[model]))
    edit(entry)
    override = json.dumps({"host_topology": {model: {"cpus": entry["cpus"]}}})
    return SMALL.replace("\nsite:", f"\ncatalogue: {override}\nsite:", 1)


def test_a_layout_port_the_faceplate_does_not_print_there_is_an_error():
    def swap(entry: dict) -> None:
        first = entry["cpus"][1]["switches"][3]["devices"][1]  # NIC 7: OSFP 1 port 1
        first["port"] = "OSFP 2 port 1"

    c = compile_text(_with_layout("hgx-h100", swap))
    found = [f for f in c.findings if f.rule == "nic-placement"]
    assert len(found) == 1 and found[0].severity.value == "error", [f.message for f in c.findings]
    assert "NIC 7 (mlx5_11, beside GPU 7) at OSFP 2 port 1" in found[0].message
    assert "prints data port 7 as OSFP 1 port 1" in found[0].message and "data port 6" in found[0].message
    text = _with_layout("hgx-h100", swap)
    assert found[0].path == ("catalogue", "host_topology", "hgx-h100")
    assert found[0].location.line == text[: text.index("\ncatalogue:")].count("\n") + 2


def test_a_faceplate_override_that_moves_a_nic_is_an_error_at_the_device():
    override = (
        "\ncatalogue:\n  devices:\n    hgx-h100:\n      ports:\n"
        "        - {role: data, count: 8, speed_gbps: 400, lanes: 4, cage: osfp, ports_per_cage: 2, name: 'mlx5_{i}', "
        "top: flat, faceplate: [4, 7, 6, 5, 2, 1, 3, 0], physical: 'OSFP {cage} port {sub}'}\n"
        "        - {role: storage, count: 2, speed_gbps: 400, lanes: 4, cage: qsfp112, name: 'stor{i}'}\n"
        "        - {role: mgmt, count: 1, speed_gbps: 1, lanes: 1, cage: rj45, name: bmc}\nsite:"
    )
    c = compile_text(SMALL.replace("\nsite:", override, 1))
    found = sorted((f for f in c.findings if f.rule == "nic-placement"), key=lambda f: f.message)
    assert [f.path for f in found] == [("catalogue", "devices", "hgx-h100")] * 2, [f.message for f in c.findings]
    assert "NIC 4 (mlx5_4, beside GPU 4) at OSFP 1 port 2" in found[0].message


def test_nics_beside_other_gpus_than_their_rails_are_a_warning():
    def cross(entry: dict) -> None:
        sw = entry["cpus"][0]["switches"]
        # NIC 0 and NIC 1 change places (and bus ids): NIC 0 beside GPU 1, NIC 1 beside GPU 0.
        sw[0]["devices"][1], sw[1]["devices"][1] = sw[1]["devices"][1], sw[0]["devices"][1]
        for dev in (sw[0]["devices"][1], sw[1]["devices"][1]):
            dev.pop("port")

    c = compile_text(_with_layout("hgx-h100", cross))
    found = [f for f in c.findings if f.rule == "nic-placement"]
    assert len(found) == 1 and found[0].severity.value == "warning", [f.message for f in c.findings]
    assert found[0].path == ("scaleout", 0)
    assert "rail 0 reaches GPU 1's NIC mlx5_0 (OSFP 4 port 2) on 16 hgx-h100 hosts" in found[0].message
    assert "rail 1 reaches GPU 0's NIC mlx5_3 (OSFP 3 port 2)" in found[0].message


def test_hgx_b300_gets_an_nccl_file_in_the_xdr_design():
    c = compile_text(B300, "b300.yaml")
    assert c.exit_code == 0, [f.message for f in c.findings]
    artifacts, notices = render(c, ["nccl"])
    # The built-in layout's GPU bus ids are ILLUSTRATIVE: no file until a site gives its own.
    assert "nccl/hgx-b300.xml" not in artifacts and any("hgx-b300" in n for n in notices)
    bare = B300.replace("\nsite:", "\ncatalogue: {host_topology: {hgx-b300: {busids: bare-metal}}}\nsite:", 1)
    artifacts, notices = render(compile_text(bare, "b300.yaml"), ["nccl"])
    assert notices == []
    root = parse(artifacts["nccl/hgx-b300.xml"].decode())
    gpus = root.find_all("gpu")
    assert [g.attrs["dev"] for g in gpus] == [str(i) for i in range(8)] and {g.attrs["sm"] for g in gpus} == {"103"}
    for g in gpus:
        assert [int(x.attrs["count"]) for x in g.find_all("nvlink")] == [9, 9]  # 2 NVLink 5 switch chips, 18 links
    nets = root.find_all("net")
    assert [n.attrs["speed"] for n in nets] == ["800000"] * 8  # XDR: 800 Gb/s per CX-8
    # Each CX-8's PCIe switch holds its GPU and its NIC, 4 per socket.
    for cpu in root.children:
        switches = [p for p in cpu.children if p.attrs["class"] == "0x060400"]
        assert len(switches) == 4
        assert all(sorted(c.attrs["class"][:4] for c in sw.children) == ["0x02", "0x03"] for sw in switches)
    env = artifacts["nccl/hgx-b300.env"].decode()
    assert "dev 0: mlx5_0 at OSFP 1, GPU 0 -> rail 0" in env and "NCCL_CROSS_NIC=0" in env


def test_the_acceptance_plan_names_the_printed_port_of_each_nic(small_ib):
    artifacts, _ = render(small_ib, ["acceptance"])
    rows = artifacts["acceptance/ib/perftest.tsv"].decode().splitlines()
    head = rows[0].split("\t")
    f = small_ib.fabric
    layout = f.layouts["hgx-h100"]
    for line in rows[1:]:
        row = dict(zip(head, line.split("\t"), strict=True))
        for end in ("server", "client"):
            d = f.device(row[end])
            port = layout.names.index(row[end + "_dev"]) if d.model == "hgx-h100" else None
            if port is not None:
                assert row[end + "_port"] == f.physical_name(d.index, port)
    first = dict(zip(head, rows[1].split("\t"), strict=True))
    assert first["server_dev"] == "mlx5_0" and first["server_port"] == "OSFP 4 port 2"


def test_snc_diff_reads_the_nccl_and_acceptance_files_line_by_line():
    """Moving a NIC's printed port shows in `snc diff` as the changed lines of hosts.tsv and the env file."""
    from supernodeiac.compare.artifacts import compare_file, kind_of

    assert {kind_of(p) for p in ("nccl/hosts.tsv", "nccl/hgx-h100.env", "acceptance/ib/perftest.tsv")} == {"text"}
    old = b"host\tnics\ngpu-0001\tmlx5_0=OSFP 4 port 2\n"
    new = b"host\tnics\ngpu-0001\tmlx5_0=OSFP 3 port 2\n"
    change = compare_file("nccl/hosts.tsv", old, new)
    assert change.kind == "text" and change.lines == {"added": 1, "removed": 1}, change
