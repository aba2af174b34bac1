"""Host PCI/NUMA layouts (``data/host_topology.yaml``), typed, with a blueprint's overrides.

Kept apart from ``devices.yaml``: only the NCCL topology files and the placement report read
it. A blueprint replaces or adds entries under ``catalogue: host_topology:`` (an entry given
there replaces the keys it names, as for devices).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator
from ruamel.yaml import YAML

from ..findings import Finding, error
from ..model.base import NonNegInt, PositiveInt, Strict
from .types import DeviceModel, Source

BUSID = r"^[0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}\.[0-7]$"
HEX = r"^0x[0-9a-fA-F]{1,8}$"


class PciEnd(Strict):
    """A GPU or NIC on a PCIe switch or a root complex."""

    gpu: NonNegInt | None = Field(None, description="accelerator index on the host")
    nic: NonNegInt | None = Field(None, description="index into the model's data ports (port order)")
    busid: str = Field(pattern=BUSID)

    @model_validator(mode="after")
    def _one(self) -> PciEnd:
        if (self.gpu is None) == (self.nic is None):
            raise ValueError("a PCI device is either {gpu: i, busid} or {nic: j, busid}")
        return self


class PcieSwitch(Strict):
    busid: str = Field(pattern=BUSID)
    vendor: str = Field("0x1000", pattern=HEX)
    device: str = Field("0xc030", pattern=HEX)
    link_speed: str = "32.0 GT/s PCIe"
    link_width: PositiveInt = 16
    devices: list[PciEnd] = Field(min_length=1)


class Cpu(Strict):
    numaid: NonNegInt
    affinity: str = Field(pattern=r"^[0-9a-fA-F]{8}(,[0-9a-fA-F]{8})*$")
    arch: Literal["x86_64", "arm64", "ppc64"]
    vendor: str | None = None
    familyid: NonNegInt | None = None
    modelid: NonNegInt | None = None
    switches: list[PcieSwitch] = Field(default_factory=list)
    direct: list[PciEnd] = Field(default_factory=list, description="devices on the root complex, no switch")

    @model_validator(mode="after")
    def _x86(self) -> Cpu:
        # NCCL requires vendor on x86_64, and family/model for Intel (topo.cc ncclTopoAddCpu).
        if self.arch == "x86_64" and self.vendor is None:
            raise ValueError("an x86_64 cpu needs vendor (NCCL requires it)")
        if self.vendor == "GenuineIntel" and (self.familyid is None or self.modelid is None):
            raise ValueError("an Intel cpu needs familyid and modelid (NCCL requires them)")
        return self


class C2c(Strict):
    bw: PositiveInt
    count: PositiveInt


class GpuPci(Strict):
    sm: PositiveInt
    vendor: str = Field("0x10de", pattern=HEX)
    device: str | None = Field(None, pattern=HEX)
    subsystem_vendor: str | None = Field(None, pattern=HEX)
    subsystem_device: str | None = Field(None, pattern=HEX)
    pci_class: str = Field("0x030200", alias="class", pattern=HEX)
    link_speed: str = "32.0 GT/s PCIe"
    link_width: PositiveInt = 16
    nvlink: Literal["switches", "remote", "none"] = "switches"
    nvswitch_busids: list[str] = Field(default_factory=list, description="one per on-board switch chip, chip order")
    c2c: C2c | None = None


class NicPci(Strict):
    vendor: str = Field("0x15b3", pattern=HEX)
    device: str | None = Field(None, pattern=HEX)
    pci_class: str = Field("0x020700", alias="class", pattern=HEX)
    link_speed: str = "32.0 GT/s PCIe"
    link_width: PositiveInt = 16
    port: PositiveInt = 1
    rdma_device: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.{}-]+$",
        description="RDMA device name of NIC j ({j}) as NCCL and perftest name it, when the port's name is "
        "the network interface (eth0); default: the port's name",
    )

    def device_name(self, j: int, port_name: str) -> str:
        return self.rdma_device.format(j=j) if self.rdma_device else port_name


class HostTopology(Strict):
    description: str
    gpu: GpuPci
    nic: NicPci
    cpus: list[Cpu] = Field(min_length=1)
    sources: list[Source] = Field(min_length=1)

    def ends(self) -> list[tuple[Cpu, PcieSwitch | None, PciEnd]]:
        """Every GPU and NIC with its CPU and switch (None when on the root complex), in file order."""
        out: list[tuple[Cpu, PcieSwitch | None, PciEnd]] = []
        for cpu in self.cpus:
            for sw in cpu.switches:
                out.extend((cpu, sw, end) for end in sw.devices)
            out.extend((cpu, None, end) for end in cpu.direct)
        return out

    def gpu_of_nic(self) -> dict[int, int]:
        """NIC index -> the GPU sharing its PCIe switch (or its CPU when it has no switch): the
        GPU NCCL pairs with that NIC."""
        out: dict[int, int] = {}
        for cpu in self.cpus:
            groups = [sw.devices for sw in cpu.switches] + [cpu.direct]
            for devices in groups:
                gpus = [d.gpu for d in devices if d.gpu is not None]
                nics = [d.nic for d in devices if d.nic is not None]
                for k, nic in enumerate(nics):
                    if gpus:
                        out[nic] = gpus[min(k, len(gpus) - 1)]
        return out


@lru_cache(maxsize=1)
def builtin_host_topology() -> dict[str, Any]:
    root = resources.files(__package__) / "data"
    return YAML(typ="safe").load((root / "host_topology.yaml").read_text(encoding="utf-8")) or {}


def host_topologies(overrides: dict[str, dict[str, Any]] | None) -> tuple[dict[str, HostTopology], list[Finding]]:
    """The layouts by model, built-in with the blueprint's entries laid over; a bad entry is a
    finding located at the blueprint's override (or at ``catalogue`` for a built-in one)."""
    entries = {name: dict(entry) for name, entry in builtin_host_topology().items()}
    for name, entry in (overrides or {}).items():
        entries[name] = {**entries.get(name, {}), **entry}
    out: dict[str, HostTopology] = {}
    findings: list[Finding] = []
    for name, entry in sorted(entries.items()):
        try:
            out[name] = HostTopology.model_validate(entry)
        except ValidationError as exc:
            where = ("catalogue", "host_topology", name) if name in (overrides or {}) else ("catalogue",)
            for err in exc.errors():
                loc = ".".join(map(str, err["loc"]))
                findings.append(error("host-topology", f"host_topology {name}.{loc}: {err['msg']}", where))
    return out, findings


def layout_problems(model: DeviceModel, topo: HostTopology) -> list[str]:
    """What makes a layout disagree with its device model (empty when it fits)."""
    problems: list[str] = []
    acc = model.accelerators
    gpus = sorted(d.gpu for _c, _s, d in topo.ends() if d.gpu is not None)
    nics = sorted(d.nic for _c, _s, d in topo.ends() if d.nic is not None)
    want_gpus = list(range(acc.count)) if acc else []
    if gpus != want_gpus:
        problems.append(f"lists GPUs {gpus}; the model has {len(want_gpus)} accelerators (0..{len(want_gpus) - 1})")
    data = model.port_count("data")
    if nics != list(range(data)):
        problems.append(f"lists NICs {nics}; the model has {data} data ports (0..{data - 1})")
    numa = [c.numaid for c in topo.cpus]
    if len(set(numa)) != len(numa):
        problems.append(f"repeats a NUMA id ({numa})")
    busids = [d.busid.lower() for _c, _s, d in topo.ends()] + [s.busid.lower() for c in topo.cpus for s in c.switches]
    if len(set(busids)) != len(busids):
        problems.append("repeats a PCI bus id")
    if topo.gpu.nvlink == "switches":
        chips = model.internal_scaleup.switch_chips if model.internal_scaleup else 0
        if len(topo.gpu.nvswitch_busids) != chips:
            problems.append(
                f"gives {len(topo.gpu.nvswitch_busids)} NVSwitch bus ids; the model has {chips} on-board switch chips "
                "(nvlink: remote for switches in other trays)"
            )
    return problems
