"""NCCL topology files and environment: NCCL's parser rules, the structure of a real H100 file,
NIC order against the cables, the remote-switch form of NVL72 trays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, compile_text
from nccl_rules import NcclXmlError, Node, check_busids, check_nets, parse

from supernodeiac.catalog.host_topology import builtin_host_topology, host_topologies
from supernodeiac.facts.hosts import host_facts
from supernodeiac.outputs.nccl import El, dump
from supernodeiac.pipeline import compile_file, render

DATA = Path(__file__).parent / "data" / "nccl"


def _render(name: str) -> dict[str, bytes]:
    return _render_noticed(name)[0]


def _render_noticed(name: str) -> tuple[dict[str, bytes], str]:
    """The nccl artifacts of a shipped blueprint, and its notices as one text."""
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    artifacts, notices = render(c, ["nccl"])
    return artifacts, "\n".join(notices)


# The GPU order of a DGX H100's compute HCAs (NVIDIA DGX H100/H200 User Guide, Network Modules table).
DGX_H100_HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


# A site that gives its hosts' bus ids says so: the layout is then bare-metal and gets a file.
def _bare(model: str) -> str:
    """A blueprint override of ``model``'s layout as a site gives it: its own switch bus ids (the
    built-in ones are a VM's), declared bare-metal."""
    entry = json.loads(json.dumps(builtin_host_topology()[model]))
    for k, sw in enumerate(sw for cpu in entry["cpus"] for sw in cpu["switches"]):
        sw["busid"] = f"0000:{0x11 + 0x10 * k:02x}:00.0"
    override = json.dumps({"host_topology": {model: {"busids": "bare-metal", "cpus": entry["cpus"]}}})
    return f"\ncatalogue: {override}\nsite:"


def _small_bare() -> str:
    return (BLUEPRINTS / "small-ib.yaml").read_text().replace("\nsite:", _bare("hgx-h100"), 1)


@pytest.fixture(scope="module")
def small() -> dict[str, bytes]:
    c = compile_text(_small_bare())
    assert c.exit_code == 0
    return render(c, ["nccl"])[0]


# -- the checker itself: real files pass, each broken rule fails ---------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.xml")))
def test_checker_accepts_published_files(name):
    root = parse((DATA / name).read_text())
    assert root.name == "system" and root.find_all("cpu")


GOOD = '<system version="1">\n  <cpu numaid="0" arch="arm64">\n  </cpu>\n</system>\n'


@pytest.mark.parametrize(
    "text, why",
    [
        ('<?xml version="1.0"?>\n' + GOOD, "prolog"),
        (GOOD.replace("  <cpu", "\t<cpu"), "expecting '<', got '\\\\t'"),
        (GOOD.replace('numaid="0" arch', 'numaid="0"\n arch'), "one line"),
        (GOOD.replace('numaid="0"', "numaid=0"), "quoted"),
        (GOOD.replace('numaid="0" arch', 'numaid="0"  arch'), "one space"),
        (GOOD.replace('version="1"', 'version="2"'), "wrong version"),
        (GOOD.replace(' arch="arm64"', ""), "arch"),
        (GOOD.replace('arch="arm64"', 'arch="x86_64"'), "vendor"),
        (GOOD.replace("</cpu>", "</pci>"), "does not match"),
        (GOOD.replace("<cpu", "<gpu").replace("</cpu>", "</gpu>"), "not accepted"),
        (
            GOOD.replace('arch="arm64"', 'arch="arm64"' + "".join(f' a{i}="x"' for i in range(15))),
            "attributes",
        ),
        (
            '<system version="1">\n'
            + '  <cpu numaid="0" arch="arm64">\n'
            + '    <nic>\n      <net dev="0"/>\n    </nic>\n' * 130
            + "  </cpu>\n</system>\n",
            "elements",
        ),
    ],
)
def test_checker_rejects(text, why):
    with pytest.raises(NcclXmlError, match=why):
        parse(text)


def test_dump_refuses_what_nccl_cannot_read():
    with pytest.raises(ValueError, match="attributes"):
        dump(El("cpu", tuple((f"a{i}", "1") for i in range(17))))
    with pytest.raises(ValueError, match="dialect"):
        dump(El("net", (("name", 'a"b'),)))
    with pytest.raises(ValueError, match="256"):
        dump(El("system", (), tuple(El("cpu") for _ in range(256))))


# -- what snc writes --------------------------------------------------------------------------------


def _check_files(artifacts: dict[str, bytes]) -> int:
    """Every topology file among ``artifacts`` through NCCL's parser and loader rules, its NICs in
    dev order the same as its env file's NCCL_IB_HCA; returns how many files there were."""
    files = {p: d.decode() for p, d in artifacts.items() if p.startswith("nccl/") and p.endswith(".xml")}
    for path, text in files.items():
        root = parse(text)
        assert "\t" not in text and not text.startswith("<?")
        for pci in root.find_all("pci"):
            assert {"busid", "class", "link_speed", "link_width", "vendor"} <= pci.attrs.keys(), path
        check_busids(root)
        names = check_nets(root)
        env = artifacts[path[:-4] + ".env"].decode()
        assert f"NCCL_TOPO_FILE=/etc/nccl/topo/{path[5:]}" in env
        hca = next(line for line in env.splitlines() if line.startswith("NCCL_IB_HCA="))
        assert hca == "NCCL_IB_HCA==" + ",".join(f"{n}:1" for n in names), path
    return len(files)


@pytest.mark.parametrize("name", sorted(p.stem for p in BLUEPRINTS.glob("*.yaml")))
def test_every_rendered_file_passes_nccls_parser_rules(name):
    artifacts, notices = _render_noticed(name)
    count = _check_files(artifacts)
    models = {p[5:-4] for p in artifacts if p.startswith("nccl/") and p.endswith(".env")}
    # Only the GB200 tray's layout has bare-metal bus ids among the built-in ones.
    assert count == len([m for m in models if m.startswith("gb200-tray")])
    if count < len(models):
        assert "no NCCL topology file for" in notices and "busids: bare-metal" in notices
    if name in ("supercluster-2level", "nebula-x128-ib"):  # OEX boards: no NCCL at all, and why
        assert not models and "no NCCL files for oex-cb8: its accelerators (npu-oex) are not NVIDIA's" in notices


def test_a_bare_metal_layout_given_by_the_site_passes_nccls_rules(small):
    assert _check_files(small) == 1


def test_net_rules_refuse_what_nccls_loader_would():
    base = '<system version="1">\n  <cpu numaid="0" arch="arm64">\n    <nic>\n      <net {}/>\n    </nic>\n  </cpu>\n</system>\n'
    assert check_nets(parse(base.format('name="mlx5_3" dev="0" speed="400000" port="1" gdr="1"'))) == ["mlx5_3"]
    for attrs, why in [
        ('dev="0"', "no name"),
        ('name="mlx5_0" dev="0" rail="0"', "derives"),
        ('name="mlx5_0" dev="0" busid="x"', "never reads"),
        ('name="mlx5_0" dev="1"', "dev numbers"),
    ]:
        with pytest.raises(NcclXmlError, match=why):
            check_nets(parse(base.format(attrs)))
    vm = base.replace("    <nic>", '    <pci busid="ffff:ff:01.0">\n    <nic>').replace("    </nic>", "    </nic>\n    </pci>")
    with pytest.raises(NcclXmlError, match="VM"):
        check_busids(parse(vm.format('name="mlx5_0" dev="0"')))


def test_dgx_h100_hosts_get_the_env_alone_with_their_hcas_in_gpu_order():
    artifacts, notices = _render_noticed("dgx-h100-superpod-4su")
    assert not any(p.endswith(".xml") for p in artifacts)
    assert "no NCCL topology file for hgx-h100: the catalogue's layout has partial PCI bus ids" in notices
    env = artifacts["nccl/hgx-h100.env"].decode()
    assert "NCCL_TOPO_FILE" not in env.replace("No topology file", "")
    hca = next(line for line in env.splitlines() if line.startswith("NCCL_IB_HCA="))
    assert hca == "NCCL_IB_HCA==" + ",".join(f"{n}:1" for n in DGX_H100_HCAS)
    for gpu, name in enumerate(DGX_H100_HCAS):
        assert f"NIC {gpu}: {name} at " in env and f"GPU {gpu} -> rail {gpu}" in env
    rows = artifacts["nccl/hosts.tsv"].decode().splitlines()[1:]
    assert len(rows) == 127 and all(r.split("\t")[2] == "" for r in rows)


def _switch_of(root: Node) -> list[tuple[str, list[str]]]:
    """(cpu numaid, [child classes]) per PCIe switch."""
    out = []
    for cpu in root.children:
        for pci in cpu.children:
            if pci.attrs.get("class") == "0x060400":
                out.append((cpu.attrs["numaid"], sorted(c.attrs["class"][:4] for c in pci.children)))
    return out


def test_hgx_h100_keeps_the_structure_of_the_published_nd_h100_v5_file(small):
    ours = parse(small["nccl/hgx-h100.xml"].decode())
    real = parse((DATA / "azhpc-ndv5-topo.xml").read_text())
    # Same CPUs (NUMA ids, affinity, vendor, family, model) ...
    keys = ("numaid", "affinity", "arch", "vendor", "familyid", "modelid")
    assert [{k: c.attrs[k] for k in keys} for c in ours.children] == [{k: c.attrs[k] for k in keys} for c in real.children]
    # ... 8 PCIe switches, 4 per socket, each with one GPU (0x03..) and one NIC (0x02..) ...
    assert _switch_of(ours) == _switch_of(real) == [(n, ["0x02", "0x03"]) for n in "00001111"]

    # ... with the same GPUs under the same switches, and beside each a DGX H100's NIC (its
    # interface ibp<bus>s0 in the user guide's table: buses 24, 64, 79, 94, 154, 192, 206, 220).
    def under(root: Node, cls: str) -> list[str]:
        switches = [sw for sw in root.find_all("pci") if sw.attrs["class"] == "0x060400"]
        return [c.attrs["busid"] for sw in switches for c in sw.children if c.attrs["class"].startswith(cls)]

    assert under(ours, "0x03") == under(real, "0x03")
    assert under(ours, "0x02") == [f"0000:{b:02x}:00.0" for b in (24, 64, 79, 94, 154, 192, 206, 220)]
    # What the hint file leaves to NCCL, ours states: 8 GPUs with NVLinks to 4 NVSwitches (5+5+4+4), 8 NICs.
    gpus = ours.find_all("gpu")
    assert [g.attrs["dev"] for g in gpus] == [str(i) for i in range(8)]
    for g in gpus:
        links = g.find_all("nvlink")
        assert [int(x.attrs["count"]) for x in links] == [5, 5, 4, 4]
        assert {x.attrs["tclass"] for x in links} == {"0x068000"}
        assert len({x.attrs["target"] for x in links}) == 4
    nets = ours.find_all("net")
    assert [n.attrs["name"] for n in nets] == DGX_H100_HCAS
    assert {n.attrs["speed"] for n in nets} == {"400000"}
    assert ours.find_all("gpu")[0].attrs["sm"] == "90"


def test_nic_dev_order_follows_the_rails_the_nics_are_cabled_to(small):
    c = compile_text(_small_bare())
    hosts = host_facts(c.fabric, c.blueprint)
    fh = hosts.fabrics["ib"]
    root = parse(small["nccl/hgx-h100.xml"].decode())
    dev_of = {n.attrs["name"]: int(n.attrs["dev"]) for n in root.find_all("net")}
    for h in hosts.hosts:
        for nic in fh.nics[h]:
            leaf = c.fabric.devices[nic.switch]
            # The cable's far end is a leaf of rail r; NCCL's dev for that NIC is r.
            assert dev_of[nic.name] == leaf.coord("rail")
    env = small["nccl/hgx-h100.env"].decode()
    assert "NCCL_IB_HCA==" + ",".join(f"{n}:1" for n in DGX_H100_HCAS) in env
    assert "NCCL_CROSS_NIC=0" in env and "NCCL_MNNVL_ENABLE" not in env
    assert "NCCL_TOPO_FILE=/etc/nccl/topo/hgx-h100.xml" in env
    tsv = small["nccl/hosts.tsv"].decode().splitlines()
    assert tsv[0].split("\t") == ["host", "model", "topology_file", "env_file", "nics"] and len(tsv) == 1 + 16
    # Each host's NICs in NCCL dev order with the printed port its cable is plugged into.
    for line in tsv[1:]:
        host, _model, _xml, _env, nics = line.split("\t")
        d = c.fabric.device(host)
        cabled = sorted(fh.nics[d.index], key=lambda n: n.rail)
        assert nics == ";".join(f"{n.name}={c.fabric.physical_name(d.index, n.port)}" for n in cabled)
    assert "mlx5_11=OSFP 1 port 1" in tsv[1] and "mlx5_0=OSFP 4 port 2" in tsv[1]  # DGX H100 table 6


def test_a_host_cabled_in_another_rail_order_gets_its_own_file():
    c = compile_text(_small_bare())
    hosts = host_facts(c.fabric, c.blueprint)
    t = c.fabric.links
    # Swap the leaves of NIC 0 and NIC 1 on the first host (a patching mistake made on purpose).
    h = hosts.hosts[0]
    n0, n1 = hosts.fabrics["ib"].nics[h][:2]
    t.b[n0.link], t.b[n1.link] = t.b[n1.link], t.b[n0.link]
    t.b_port[n0.link], t.b_port[n1.link] = t.b_port[n1.link], t.b_port[n0.link]
    t._edits += 1
    artifacts, _ = render(c, ["nccl"])
    assert sorted(p for p in artifacts if p.endswith(".xml")) == ["nccl/hgx-h100-2.xml", "nccl/hgx-h100.xml"]
    env = artifacts["nccl/hgx-h100-2.env"].decode()
    assert "NCCL_IB_HCA==mlx5_3:1,mlx5_0:1,mlx5_4:1" in env
    root = parse(artifacts["nccl/hgx-h100-2.xml"].decode())
    assert {n.attrs["name"]: n.attrs["dev"] for n in root.find_all("net")}["mlx5_3"] == "0"
    rows = dict(line.split("\t")[:3:2] for line in artifacts["nccl/hosts.tsv"].decode().splitlines()[1:])
    assert rows[c.fabric.devices[h].name] == "hgx-h100-2.xml"
    assert list(rows.values()).count("hgx-h100.xml") == 15


def test_nvl72_trays_use_the_remote_switch_form_and_mnnvl():
    artifacts = _render("nvl72-pod")
    root = parse(artifacts["nccl/gb200-tray.xml"].decode())
    assert {c.attrs["arch"] for c in root.children} == {"arm64"}
    gpus = root.find_all("gpu")
    assert len(gpus) == 4 and {g.attrs["sm"] for g in gpus} == {"100"}
    for g in gpus:
        (link,) = g.find_all("nvlink")
        assert link.attrs == {"target": "fffffff:ff:ff.0", "count": "18", "tclass": "0x068000"}
    env = artifacts["nccl/gb200-tray.env"].decode()
    assert "NCCL_MNNVL_ENABLE=1" in env and "NCCL_CUMEM_ENABLE=1" in env and "72 GPUs in one NVLink domain" in env
    # The RDMA devices a GB200 tray gives its four CX-7s (Mission Control guide: the BlueField-3
    # ports take mlx5_2, 3, 6, 7), not mlx5_0..3.
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_4:1,mlx5_5:1" in env
    assert [n.attrs["name"] for n in root.find_all("net")] == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"]
    assert "nvl72-pod" in env and "dev 2: mlx5_4 at OSFP 3, GPU 2 -> rail 2" in env


def test_roce_env_carries_the_lossless_traffic_class_and_rdma_names():
    artifacts, notices = _render_noticed("roce-rail-2tier")
    env = artifacts["nccl/hgx-h100-bf3.env"].decode()
    c = compile_file(str(BLUEPRINTS / "roce-rail-2tier.yaml"))
    dscp = c.blueprint.scaleout[0].ethernet.lossless.roce_dscp
    assert f"NCCL_IB_TC={dscp * 4}" in env
    assert "NCCL_IB_HCA==mlx5_0:1" in env  # the RDMA device, not the netdev eth0
    # Azure's virtual bus ids: no file, and the notice says why.
    assert "nccl/hgx-h100-bf3.xml" not in artifacts and "virtual PCI bus ids" in notices
    text = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text().replace("\nsite:", _bare("hgx-h100-bf3"), 1)
    artifacts, _ = render(compile_text(text), ["nccl"])
    root = parse(artifacts["nccl/hgx-h100-bf3.xml"].decode())
    assert {p.attrs["class"] for p in root.find_all("pci") if any(c.name == "nic" for c in p.children)} == {"0x020000"}


def test_a_layout_that_disagrees_with_its_model_is_a_located_error():
    text = (BLUEPRINTS / "small-ib.yaml").read_text().replace("catalogue:", "catalogue_unused:") + (
        "catalogue:\n  host_topology:\n    hgx-h100:\n      gpu: {sm: 90, nvlink: switches, nvswitch_busids: ['0000:f5:00.0']}\n"
    )
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "host-topology"]
    assert found and "NVSwitch bus ids" in found[0].message
    assert found[0].location is not None and found[0].location.line > 0
    artifacts, notices = render(c, ["nccl"])
    assert not any(p.endswith(".xml") for p in artifacts) and any("hgx-h100" in n for n in notices)


def test_builtin_layouts_validate():
    topologies, findings = host_topologies({})
    assert findings == [] and {"hgx-h100", "gb200-tray"} <= topologies.keys()
    assert topologies["hgx-h100"].gpu_of_nic() == {j: j for j in range(8)}


@pytest.mark.parametrize(
    ("gpu", "words"),
    [
        ("{sm: 90, link_speed: '32.0 GT/s\" x=\"1'}", "link_speed: string should match pattern"),
        ("{sm: 90, nvswitch_busids: ['0000:f5:00.0\"/><cpu']}", "nvswitch_busids[0]: string should match pattern"),
        ("{sm: 1e400}", "sm: expected a whole number, got inf"),
        ("{sm: 90, link_width: 100000}", "link_width: input should be less than or equal to 32"),
    ],
)
def test_a_layout_override_nccl_could_not_read_is_a_schema_error_where_it_is_written(gpu, words):
    """Whatever a layout override holds lands in an XML attribute NCCL's tokenizer reads: a value
    it could not read is refused when the blueprint is parsed, at its line, never at render."""
    text = (
        (BLUEPRINTS / "small-ib.yaml")
        .read_text()
        .replace("\nsite:", f"\ncatalogue:\n  host_topology:\n    hgx-h100:\n      gpu: {gpu}\nsite:", 1)
    )
    c = compile_text(text)
    assert c.exit_code == 2, [f.message for f in c.findings]
    [finding] = c.findings
    line = text[: text.index(f"      gpu: {gpu}")].count("\n") + 1
    assert finding.rule == "schema" and finding.location.line == line and words in finding.message, finding.message
    assert finding.path[:4] == ("catalogue", "host_topology", "hgx-h100", "gpu")
