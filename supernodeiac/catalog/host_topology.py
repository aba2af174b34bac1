"""Host PCI/NUMA layouts (``data/host_topology.yaml``), typed, with a blueprint's overrides.

Kept apart from ``devices.yaml``: only the NCCL topology files and the placement report read
it. A blueprint replaces or adds entries under ``catalogue: host_topology:`` (an entry given
there replaces the keys it names, as for devices).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator
from ruamel.yaml import YAML

from ..findings import Finding, error
from ..model.base import Name, NonNegInt, Strict
from ..model.name_rules import PHYSICAL_PORT, PORT, template_problem
from .types import DeviceModel, Source, Text

# Every string of a layout lands in an XML attribute NCCL's tokenizer reads (no quotes, angle
# brackets or entities; 255 characters) or in an env file: each has a pattern that keeps it so.
BUSID = r"^[0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}\.[0-7]$"
HEX = r"^0x[0-9a-fA-F]{1,8}$"
# The link speeds NCCL's dictionary knows (xml.cc kvDictPciGen); anything else reads as Gen3.
LINK_SPEED = r"^(2\.5|5|8|16|32)(\.0)? GT/s( PCIe)?$|^64\.0 GT/s PCIe$"
BusId = Annotated[str, Field(pattern=BUSID)]
# The NCCL parser's limits on one file (src/graph/xml.h): elements in the file.
MAX_ELEMENTS = 256


def _rdma_template(value: str | None) -> str | None:
    if value is not None:
        problem = template_problem(value, PORT, ("j",))
        if problem is not None:
            raise ValueError(f"{problem[0]} ({problem[1]})")
    return value


def _printed(value: str | None) -> str | None:
    if value is not None:
        problem = template_problem(value.replace("{", "{{").replace("}", "}}"), PHYSICAL_PORT, ())
        if problem is not None:
            raise ValueError(problem[0].replace("naming template", "printed port"))
    return value


class PciEnd(Strict):
    """A GPU or NIC on a PCIe switch or a root complex."""

    gpu: NonNegInt | None = Field(None, description="accelerator index on the host")
    nic: NonNegInt | None = Field(None, description="index into the model's data ports (port order)")
    busid: BusId
    port: Annotated[str | None, AfterValidator(_printed)] = Field(
        None,
        max_length=63,
        description="NIC: the printed port the vendor's port table gives this NIC (DGX H100: 'OSFP 4 port 2' for GPU 0's); "
        "it must be the catalogue's physical name of data port `nic` (check nic-placement)",
    )
    rdma: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        max_length=63,
        description="NIC: its RDMA device name on the host (NCCL_IB_HCA, perftest -d) when the vendor's table gives one",
    )

    @model_validator(mode="after")
    def _one(self) -> PciEnd:
        if (self.gpu is None) == (self.nic is None):
            raise ValueError("a PCI device is either {gpu: i, busid} or {nic: j, busid}")
        if self.gpu is not None and (self.port is not None or self.rdma is not None):
            raise ValueError("port and rdma describe a NIC, not a GPU")
        return self


LinkWidth = Annotated[int, Field(gt=0, le=32)]
LinkSpeed = Annotated[str, Field(pattern=LINK_SPEED)]


class PcieSwitch(Strict):
    busid: BusId
    vendor: str | None = Field("0x1000", pattern=HEX, description="null: left out of the file (NCCL reads it from the host)")
    device: str | None = Field("0xc030", pattern=HEX, description="null: left out of the file")
    link_speed: LinkSpeed = "32.0 GT/s PCIe"
    link_width: LinkWidth = 16
    devices: list[PciEnd] = Field(min_length=1, max_length=64)


class Cpu(Strict):
    numaid: Annotated[int, Field(ge=0, le=1023)]
    affinity: str = Field(pattern=r"^[0-9a-fA-F]{8}(,[0-9a-fA-F]{8})*$", max_length=251)
    arch: Literal["x86_64", "arm64", "ppc64"]
    vendor: str | None = Field(None, pattern=r"^[A-Za-z][A-Za-z0-9]{0,31}$", description="GenuineIntel, AuthenticAMD, ...")
    familyid: Annotated[int, Field(ge=0, le=255)] | None = None
    modelid: Annotated[int, Field(ge=0, le=255)] | None = None
    switches: list[PcieSwitch] = Field(default_factory=list, max_length=64)
    direct: list[PciEnd] = Field(default_factory=list, max_length=64, description="devices on the root complex, no switch")

    @model_validator(mode="after")
    def _x86(self) -> Cpu:
        # NCCL requires vendor on x86_64, and family/model for Intel (topo.cc ncclTopoAddCpu).
        if self.arch == "x86_64" and self.vendor is None:
            raise ValueError("an x86_64 cpu needs vendor (NCCL requires it)")
        if self.vendor == "GenuineIntel" and (self.familyid is None or self.modelid is None):
            raise ValueError("an Intel cpu needs familyid and modelid (NCCL requires them)")
        return self


class C2c(Strict):
    bw: Annotated[int, Field(gt=0, le=10_000_000)]
    count: Annotated[int, Field(gt=0, le=64)]


class GpuPci(Strict):
    sm: Annotated[int, Field(gt=0, le=999)]
    vendor: str = Field("0x10de", pattern=HEX)
    device: str | None = Field(None, pattern=HEX)
    subsystem_vendor: str | None = Field(None, pattern=HEX)
    subsystem_device: str | None = Field(None, pattern=HEX)
    pci_class: str = Field("0x030200", alias="class", pattern=HEX)
    link_speed: LinkSpeed = "32.0 GT/s PCIe"
    link_width: LinkWidth = 16
    nvlink: Literal["switches", "remote", "none"] = "switches"
    nvswitch_busids: list[BusId] = Field(
        default_factory=list, max_length=64, description="one per on-board switch chip, chip order"
    )
    c2c: C2c | None = None


class NicPci(Strict):
    vendor: str = Field("0x15b3", pattern=HEX)
    device: str | None = Field(None, pattern=HEX)
    pci_class: str = Field("0x020700", alias="class", pattern=HEX)
    link_speed: LinkSpeed = "32.0 GT/s PCIe"
    link_width: LinkWidth = 16
    port: Annotated[int, Field(gt=0, le=8)] = 1
    rdma_device: Annotated[str | None, AfterValidator(_rdma_template)] = Field(
        None,
        description="naming template of NIC j's RDMA device ({j}) as NCCL and perftest name it, when the port's name is "
        "the network interface (eth0); default: the port's name; a NIC's own `rdma` wins",
    )

    def device_name(self, j: int, port_name: str) -> str:
        return self.rdma_device.format(j=j) if self.rdma_device else port_name


# Where a layout's PCI bus ids come from. NCCL keeps a topology file's GPUs and PCI tree only where
# the running host has those bus ids (it trims the rest and probes sysfs instead), so a file is
# written only for layouts whose every bus id is what a bare-metal host of the model shows.
BusIds = Literal["bare-metal", "virtual", "partial"]


class HostTopology(Strict):
    description: Text
    busids: BusIds = Field(
        "partial",
        description="bare-metal: every bus id is what a bare-metal host of the model shows (a public dump, or "
        "lspci -D / nvidia-smi -q of one of your nodes): NCCL topology files are written; virtual: a VM's ids; "
        "partial: some ids are placeholders. Only bare-metal layouts get nccl/<model>.xml",
    )
    gpu: GpuPci
    nic: NicPci
    cpus: list[Cpu] = Field(min_length=1, max_length=16)
    sources: list[Source] = Field(min_length=1)

    def ends(self) -> list[tuple[Cpu, PcieSwitch | None, PciEnd]]:
        """Every GPU and NIC with its CPU and switch (None when on the root complex), in file order."""
        out: list[tuple[Cpu, PcieSwitch | None, PciEnd]] = []
        for cpu in self.cpus:
            for sw in cpu.switches:
                out.extend((cpu, sw, end) for end in sw.devices)
            out.extend((cpu, None, end) for end in cpu.direct)
        return out

    def nics(self) -> dict[int, PciEnd]:
        """NIC index -> its entry."""
        return {d.nic: d for _c, _s, d in self.ends() if d.nic is not None}

    def rdma_names(self, port_names: list[str]) -> list[str]:
        """The RDMA device name of each data port (``port_names`` in data-port order): the NIC's
        own ``rdma``, else the layout's ``rdma_device`` template, else the port's name."""
        own = {j: d.rdma for j, d in self.nics().items() if d.rdma is not None}
        return [own.get(j) or self.nic.device_name(j, name) for j, name in enumerate(port_names)]

    def element_count(self, gpu_links: int) -> int:
        """Elements of the NCCL file (every NIC cabled): NCCL's parser takes at most 256."""
        n = 1 + len(self.cpus) + sum(len(c.switches) for c in self.cpus)
        for _c, _s, d in self.ends():
            n += 2 + gpu_links + (self.gpu.c2c is not None) if d.gpu is not None else 3
        return n

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


class HostLayouts(Strict):
    """The ``host_topology`` section as load/parse.py validates it (errors located in the override)."""

    host_topology: dict[Name, HostTopology]


@lru_cache(maxsize=1)
def builtin_host_topology() -> dict[str, Any]:
    root = resources.files(__package__) / "data"
    return YAML(typ="safe").load((root / "host_topology.yaml").read_text(encoding="utf-8")) or {}


def merged_host_topology(overrides: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """Built-in layouts with the blueprint's entries laid over (an entry's keys replace the built-in's)."""
    entries = {name: dict(entry) for name, entry in builtin_host_topology().items()}
    for name, entry in (overrides or {}).items():
        entries[name] = {**entries.get(name, {}), **entry}
    return entries


def host_topologies(overrides: dict[str, dict[str, Any]] | None) -> tuple[dict[str, HostTopology], list[Finding]]:
    """The layouts by model, built-in with the blueprint's entries laid over. load/parse.py reports a
    bad entry as a located schema error before any of this runs; here one is left out, with a
    finding at the override (or at ``catalogue`` for a built-in one)."""
    entries = merged_host_topology(overrides)
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
    gpu_links = 0
    if topo.gpu.nvlink == "switches":
        chips = model.internal_scaleup.switch_chips if model.internal_scaleup else 0
        gpu_links = len(topo.gpu.nvswitch_busids)
        if gpu_links != chips:
            problems.append(
                f"gives {len(topo.gpu.nvswitch_busids)} NVSwitch bus ids; the model has {chips} on-board switch chips "
                "(nvlink: remote for switches in other trays)"
            )
    elif topo.gpu.nvlink == "remote":
        gpu_links = 1
    elements = topo.element_count(gpu_links)
    if elements > MAX_ELEMENTS:
        problems.append(f"makes an NCCL file of {elements} elements; NCCL's parser reads at most {MAX_ELEMENTS}")
    return problems
