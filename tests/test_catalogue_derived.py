"""Every figure the catalogue grades DERIVED, recomputed from the inputs its source states.

A DERIVED grade says "computed from other figures"; this file holds the computation, reading the
inputs from the catalogue itself wherever the catalogue carries them and, where it does not, from
the reference figure the source cites (named beside the constant). The walk below finds every
DERIVED grade in the shipped data (a source's grade, a part's grade, or a note that calls a figure
DERIVED): one without a recomputation here fails, so a new derived figure arrives with its sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import pytest
from ruamel.yaml import YAML

DATA = resources.files("supernodeiac.catalog") / "data"
FILES = (
    "devices.yaml",
    "facility.yaml",
    "physical.yaml",
    "media.yaml",
    "transceivers.yaml",
    "cords.yaml",
    "lines.yaml",
    "port_maps.yaml",
    "host_topology.yaml",
)

# Reference figures the catalogue does not carry as fields (shared/reference/hardware.md and
# physical.md, as each source's ref names them).
GB200_RACK_NAMEPLATE_W = 120_000  # physical.md 3: GB200 rack nameplate ~120 kW (S)
NVL72_COMPUTE_TRAYS = 18  # hardware.md, GB200 NVL72 rack internals (P)
NVL72_SWITCH_TRAYS = 9  # hardware.md (P)
NVLINK4_GPU_GBYTES = 900  # hardware.md: NVLink 4, 18 links, 900 GB/s per GPU (both directions)
NVLINK5_GPU_GBYTES = 1800  # hardware.md: NVLink 5, 18 links, 1,800 GB/s per GPU
NVLINK_LINKS = 18
PCIE5_GTS = 32  # PCIe 5.0 / CXL 2.0 lane rate
PCIE6_GTS = 64  # PCIe 6.0
XC50256_LANES = 256  # XConn XC50256: 256 lanes, 2,048 GB/s total
XC50256_TOTAL_GBYTES = 2048
B200_RA_SWITCHES_PER_NETWORK_RACK = 16  # physical.md 3: ~16 QM9700 per network rack


def _load(name: str) -> dict[str, Any]:
    return YAML(typ="safe").load((DATA / name).read_text(encoding="utf-8")) or {}


def _derived(node: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Paths (entry names, then the ref) of every place that grades something DERIVED."""
    if isinstance(node, dict):
        graded = node.get("grade") == "DERIVED" or "DERIVED" in str(node.get("note", ""))
        if graded:
            yield (*path, str(node.get("ref", node.get("number", ""))))
        for key, value in node.items():
            yield from _derived(value, (*path, str(key)) if not path or key not in ("sources",) else path)
    elif isinstance(node, list):
        for item in node:
            yield from _derived(item, path)


def _found() -> set[tuple[str, str, str]]:
    out: set[tuple[str, str, str]] = set()
    for name in FILES:
        for found in _derived(_load(name), ()):
            # (file, top-level entry, ref): the entry is the device/medium the figure belongs to.
            out.add((name, found[0] if found[0] != "devices" else found[1], found[-1]))
    return out


def _device(name: str) -> dict[str, Any]:
    devices = _load("devices.yaml")
    return devices[name] if name in devices else _load("facility.yaml")["devices"][name]


def _group(device: str, role: str) -> dict[str, Any]:
    return next(g for g in _device(device)["ports"] if g["role"] == role)


def _close(value: float, expected: float, rel: float = 1e-9) -> None:
    assert math.isclose(value, expected, rel_tol=rel), f"catalogue says {value}, its inputs give {expected}"


# -- the recomputations ---------------------------------------------------------------------------


def _nvlink_link_gbps(device: str, gpu_gbytes: float) -> Callable[[], None]:
    def check() -> None:
        acc = _device(device)["accelerators"]
        assert acc["links"] == NVLINK_LINKS
        # GB/s both directions / links / 2 directions x 8 bit.
        _close(acc["link_gbps"], gpu_gbytes / NVLINK_LINKS / 2 * 8)

    return check


def _cxl_switch_ports() -> None:
    group = _group("cxl-switch-256l", "cxl")
    assert group["count"] * group["lanes"] == XC50256_LANES
    assert group["lanes"] == 16 and group["breakout"] == ["2x8"]  # the chip's 32 x8 ports


def _cxl_switch_speed() -> None:
    group = _group("cxl-switch-256l", "cxl")
    _close(group["speed_gbps"], group["lanes"] * PCIE5_GTS)
    _close(group["count"] * group["speed_gbps"] * 2 / 8, XC50256_TOTAL_GBYTES)  # the vendor's total


def _cables_max() -> None:
    site = _load("facility.yaml")["site"]
    assert site["cables_max"] == B200_RA_SWITCHES_PER_NETWORK_RACK * _group("qm9700", "data")["count"]


def _gb200_tray_power() -> None:
    physical = _load("physical.yaml")
    switch_tray = physical["nvl5-switch-tray"]["physical"]["power_max_w"]
    derived = (GB200_RACK_NAMEPLATE_W - NVL72_SWITCH_TRAYS * switch_tray) / NVL72_COMPUTE_TRAYS
    tray = physical["gb200-tray"]["physical"]["power_max_w"]
    assert tray == math.ceil(derived), f"{tray} W, the inputs give {derived:.1f} W"
    assert _device("gb200-tray")["power_w"] == tray
    # The rack of 18 + 9 trays then sums to the nameplate (within the rounding).
    assert abs(NVL72_COMPUTE_TRAYS * tray + NVL72_SWITCH_TRAYS * switch_tray - GB200_RACK_NAMEPLATE_W) < NVL72_COMPUTE_TRAYS


TH6_L2_REF = (
    "one Tomahawk 6 (catalog/data/asics.yaml tomahawk-6): 512 x 200G SerDes = 128 ports of 4 lanes at 800G, 102.4 Tb/s, "
    "the lane rate of the OEX level-1 uplinks (oex-sb2-up, 4 x 200G)"
)


def _th6_l2_ports() -> None:
    """128 ports of 4 lanes fill Tomahawk 6's 512 SerDes, at 200G a lane 800G a port, 102.4 Tb/s,
    the lane rate of the level-1 uplinks they take."""
    chip = _load("asics.yaml")["tomahawk-6"]
    group = _group("th6-l2-switch", "scaleup")
    chips = _device("th6-l2-switch")["switch_chips"]
    assert chips["model"] == "tomahawk-6" and chips["count"] * chips["ports_per_chip"] == group["count"]
    assert group["count"] * group["lanes"] == chip["serdes_lanes"]
    _close(group["count"] * group["speed_gbps"], chip["capacity_gbps"])
    up = _group("oex-sb2-up", "uplink")
    _close(group["speed_gbps"] / group["lanes"], up["speed_gbps"] / up["lanes"])


def _power_shelf_zero() -> None:
    assert _device("nvl-power-shelf")["power_w"] == 0
    assert "power_max_w" not in _load("physical.yaml")["nvl-power-shelf"]["physical"]


def _mcp_length_code(length: float) -> str:
    """MCP7Y00 ordering table: Nxyz in metres, two digits and A for a half metre (N01A = 1.5 m)."""
    whole = int(length)
    return f"N{whole:02d}A" if length - whole == 0.5 else f"N{whole:03d}"


def _mcp4y10_parts() -> None:
    media = _load("media.yaml")
    # The rule holds on the MCP7Y00 splitter it is taken from, and gives the MCP4Y10 parts.
    for length, part in media["splitter-dac-2x400g"]["parts"].items():
        assert part == f"MCP7Y00-{_mcp_length_code(length)}"
    for length, part in media["dac-2x400g"]["parts"].items():
        assert part == f"MCP4Y10-{_mcp_length_code(length)}"


def _hosts() -> dict[str, Any]:
    return _load("host_topology.yaml")


def _pairs(entry: dict[str, Any]) -> list[tuple[int, int, str, str]]:
    """(numa, switch index, gpu, nic) per PCIe switch (or per CPU for direct attachment)."""
    out = []
    for cpu in entry["cpus"]:
        for s, switch in enumerate(cpu.get("switches", [])):
            gpus = [d for d in switch["devices"] if "gpu" in d]
            nics = [d for d in switch["devices"] if "nic" in d]
            out.extend((cpu["numaid"], s, g["gpu"], n["nic"]) for g, n in zip(gpus, nics, strict=True))
    return out


def _h100_nic_mapping() -> None:
    pairs = _pairs(_hosts()["hgx-h100"])
    data = _group("hgx-h100", "data")
    assert [nic for *_, nic in pairs] == list(range(data["count"]))
    assert all(gpu == nic for *_, gpu, nic in pairs)


# DGX H100 user guide: 12 ConnectX-7 RDMA devices, mlx5_0..mlx5_11 in PCI order (8 compute, and two
# dual-port storage cards); its Network Modules table gives the compute ones' bus numbers.
DGX_H100_COMPUTE_BUS = {"mlx5_0": 0x18, "mlx5_3": 0x40, "mlx5_4": 0x4F, "mlx5_5": 0x5E, "mlx5_6": 0x9A}
DGX_H100_COMPUTE_BUS |= {"mlx5_9": 0xC0, "mlx5_10": 0xCE, "mlx5_11": 0xDC}
DGX_H100_RDMA_DEVICES = 12


def _h100_storage_names() -> None:
    data, storage, inband = (_group("hgx-h100", role)["names"] for role in ("data", "storage", "inband"))
    assert sorted(data, key=DGX_H100_COMPUTE_BUS.__getitem__) == sorted(data, key=lambda n: int(n[5:]))  # PCI order
    rest = sorted(set(range(DGX_H100_RDMA_DEVICES)) - {int(n[5:]) for n in data})
    assert len(rest) == 4
    # Two cards, two functions each, adjacent in the numbering: a card's function 0 (port 1) is storage.
    cards = [rest[:2], rest[2:]]
    assert all(b == a + 1 for a, b in cards)
    assert storage == [f"mlx5_{a}" for a, _ in cards] and inband == [f"mlx5_{b}" for _, b in cards]


def _bf3_as_h100() -> None:
    hosts = _hosts()

    def layout(entry: dict[str, Any]) -> list[Any]:
        return [
            (
                c["numaid"],
                c["affinity"],
                c["modelid"],
                # The NICs' bus ids differ: hgx-h100's are a DGX H100's, the SuperNICs' the Azure file's.
                [[{k: v for k, v in d.items() if k != "port" and "nic" not in d} for d in s["devices"]] for s in c["switches"]],
            )
            for c in entry["cpus"]
        ]

    assert layout(hosts["hgx-h100-bf3"]) == layout(hosts["hgx-h100"])


def _mask_cpus(mask: str) -> set[int]:
    value = int(mask.replace(",", ""), 16)
    return {bit for bit in range(value.bit_length()) if value >> bit & 1}


def _grace_affinity() -> None:
    cores = 72  # hardware.md: 72 Arm Neoverse V2 cores per Grace
    cpus = _hosts()["gb200-tray"]["cpus"]
    assert [_mask_cpus(c["affinity"]) for c in cpus] == [set(range(n * cores, (n + 1) * cores)) for n in range(len(cpus))]


def _grace_nic_numa() -> None:
    for cpu, segments in zip(_hosts()["gb200-tray"]["cpus"], ({"0000", "0002"}, {"0010", "0012"}), strict=True):
        nics = {d["busid"].split(":")[0] for d in cpu["direct"] if "nic" in d}
        assert nics == segments


def _b300_nic_order() -> None:
    pairs = _pairs(_hosts()["hgx-b300"])
    assert all(gpu == nic for *_, gpu, nic in pairs)
    nics = [d for c in _hosts()["hgx-b300"]["cpus"] for s in c["switches"] for d in s["devices"] if "nic" in d]
    # NIC i beside GPU i in bus order: the CX-8 bus ids, sorted, are NIC 0..7.
    assert [d["busid"] for d in sorted(nics, key=lambda d: d["nic"])] == sorted(d["busid"] for d in nics)


def _b300_sm() -> None:
    assert _hosts()["hgx-b300"]["gpu"]["sm"] == 103


def _b300_link_speeds() -> None:
    entry = _hosts()["hgx-b300"]
    assert entry["gpu"]["link_speed"] == entry["nic"]["link_speed"] == f"{PCIE6_GTS}.0 GT/s PCIe"
    assert {s["link_speed"] for c in entry["cpus"] for s in c["switches"]} == {f"{PCIE5_GTS}.0 GT/s PCIe"}


def _b300_model_id() -> None:
    for cpu in _hosts()["hgx-b300"]["cpus"]:
        assert (cpu["familyid"], cpu["modelid"]) == (6, 0xAD)


RECOMPUTE: dict[tuple[str, str, str], Callable[[], None]] = {
    ("devices.yaml", "hgx-h100", "link_gbps 200 per direction"): _nvlink_link_gbps("hgx-h100", NVLINK4_GPU_GBYTES),
    ("devices.yaml", "gb200-tray", "link_gbps 400 per direction"): _nvlink_link_gbps("gb200-tray", NVLINK5_GPU_GBYTES),
    (
        "devices.yaml",
        "hgx-b300",
        "NVLink 5: 18 links per GPU, 1.8 TB/s (DGX SuperPOD GB200 RA, RA-11338-001); 2 NVSwitch chips of 9 links each",
    ): _nvlink_link_gbps("hgx-b300", NVLINK5_GPU_GBYTES),
    ("devices.yaml", "cxl-switch-256l", "16 x16 ports"): _cxl_switch_ports,
    ("devices.yaml", "th6-l2-switch", TH6_L2_REF): _th6_l2_ports,
    ("devices.yaml", "cxl-switch-256l", "speed_gbps 512 per x16 port per direction"): _cxl_switch_speed,
    (
        "facility.yaml",
        "site",
        "DGX SuperPOD B200 RA Fig. 3.2 (as a third-party GitHub note quotes it): network racks of ~16 QM9700 each; 16 x 64 ports",
    ): _cables_max,
    ("physical.yaml", "gb200-tray", "power_max_w 6,267 W per tray"): _gb200_tray_power,
    (
        "physical.yaml",
        "nvl-power-shelf",
        "power_w 0: conversion losses are not budgeted (rack budgets are IT load)",
    ): _power_shelf_zero,
    ("media.yaml", "dac-2x400g", "length codes as the MCP7Y00 ordering table (N001 = 1 m, N01A = 1.5 m)"): _mcp4y10_parts,
    (
        "host_topology.yaml",
        "hgx-h100",
        "mapping GPU i / NIC i to the data ports mlx5_i of devices.yaml hgx-h100",
    ): _h100_nic_mapping,
    (
        "devices.yaml",
        "hgx-h100",
        "storage/in-band RDMA names mlx5_1, mlx5_7 (port 1 of slot 1, slot 2) and mlx5_2, mlx5_8 (port 2): the DGX "
        "H100/H200 User Guide gives the storage cards mlx5_1, 2, 7, 8; RDMA devices number in PCI order (its Network "
        "Modules table: ibp24s0 mlx5_0, ibp64s0 mlx5_3 ... ibp220s0 mlx5_11), so slot 1's two functions are mlx5_1 and "
        "2, slot 2's mlx5_7 and 8, function 0 being port 1",
    ): _h100_storage_names,
    ("host_topology.yaml", "hgx-h100-bf3", "layout, CPUs and bus ids as hgx-h100 (Azure ND H100 v5 file)"): _bf3_as_h100,
    (
        "host_topology.yaml",
        "gb200-tray",
        "affinity: 72 Arm cores per Grace, CPUs 0-71 on NUMA 0 and 72-143 on NUMA 1",
    ): _grace_affinity,
    (
        "host_topology.yaml",
        "gb200-tray",
        "NUMA placement of the NICs: PCI segments 0000/0002 with Grace 0 (its GPUs 0008/0009), 0010/0012 with Grace 1",
    ): _grace_nic_numa,
    (
        "host_topology.yaml",
        "hgx-b300",
        "CX-8 NIC bus ids 17, 39, 5f, 70, 97, b9, dc, ed:00.0: NVIDIA AI Enterprise, Optimizing VM configuration for AI "
        "inference on Blackwell Ultra HGX, appendix (mlxconfig output, docs.nvidia.com)",
    ): _b300_nic_order,
    (
        "host_topology.yaml",
        "hgx-b300",
        "sm 103: Blackwell Ultra, as NCCL dumps of GB300 trays write it (a public GB300 root-cause report)",
    ): _b300_sm,
    (
        "host_topology.yaml",
        "hgx-b300",
        "link speeds: GPU and NIC on the CX-8's Gen6 switch (64 GT/s), its upstream to a Gen5 Xeon 6 root port (32 GT/s)",
    ): _b300_link_speeds,
    (
        "host_topology.yaml",
        "hgx-b300",
        "CPUs: 2 x Intel Xeon 6776P (Granite Rapids, 64 cores each), family 6 model 173 (0xAD)",
    ): _b300_model_id,
}


def test_every_derived_figure_has_a_recomputation() -> None:
    found = _found()
    assert found - RECOMPUTE.keys() == set(), "DERIVED figures without a recomputation in this file"
    assert RECOMPUTE.keys() - found == set(), "recomputations of figures the catalogue no longer grades DERIVED"


@pytest.mark.parametrize("key", sorted(RECOMPUTE), ids=lambda key: f"{key[1]}:{key[2][:40]}")
def test_derived_figure_recomputes(key: tuple[str, str, str]) -> None:
    RECOMPUTE[key]()


def test_the_walk_finds_a_planted_derived_figure() -> None:
    planted = {"x": {"sources": [{"ref": "power 7 W", "grade": "DERIVED"}, {"ref": "a", "note": "b DERIVED"}]}}
    assert {p[0] for p in _derived(planted, ())} == {"x"}
    assert {p[-1] for p in _derived(planted, ())} == {"power 7 W", "a"}
