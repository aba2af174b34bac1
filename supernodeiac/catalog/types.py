"""Typed catalogue entries: the hardware figures every builder and check reads.

No hardware number lives in code: radix, lanes, reach, power and cost all come from the YAML
files beside this module (each entry cites its source) or from a blueprint's overrides.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from ..model.base import (
    MAX_PORTS,
    LaneRate,
    LineRate,
    Name,
    NonNegFloat,
    NonNegInt,
    PortCount,
    PositiveFloat,
    PositiveInt,
    StockLength,
    Strict,
)
from ..model.name_rules import FORM_FACTOR, MAX_TEXT, PHYSICAL_PORT, PORT, TEXT, name_problem, template_problem

# Lanes of a port, ports of a cage: 32 is twice the widest (CXL x16, OSFP 8 lanes, 2 ports a cage).
Lanes = Annotated[int, Field(gt=0, le=32)]

# The fields a port name template may use (PortLayout fills them); acc/link and chip/chipport
# only on the scale-up ports of a device with accelerators or switch chips.
PORT_FIELDS = ("i", "n", "cage", "sub", "lane0")
ACCELERATOR_PORT_FIELDS = ("acc", "link")
CHIP_PORT_FIELDS = ("chip", "chipport")
# The fields of a printed (faceplate) port name template.
PHYSICAL_FIELDS = ("FORM", "form", "cage", "sub", "letter", "n", "i")


def _form(value: str) -> str:
    problem = name_problem(value, FORM_FACTOR, 32)
    if problem is not None:
        raise ValueError(f"{problem} (printed port names are made from it)")
    return value


def _text(value: str) -> str:
    problem = name_problem(value, TEXT, MAX_TEXT)
    if problem is not None:
        raise ValueError(problem)
    return value


def _port_name(value: str) -> str:
    problem = name_problem(value, PORT, 63)
    if problem is not None:
        raise ValueError(problem)
    return value


# A cage form factor: part of every printed port name, so held to a name's characters at its line.
FormFactor = Annotated[str, AfterValidator(_form)]
# Free text a file may quote (descriptions, vendors, part numbers): printable, one line, bounded.
Text = Annotated[str, AfterValidator(_text)]


def _physical_template(template: str) -> str:
    problem = template_problem(template, PHYSICAL_PORT, PHYSICAL_FIELDS)
    if problem is not None:
        raise ValueError(f"{problem[0]} ({problem[1]})")
    return template


def _port_template(template: str) -> str:
    problem = template_problem(template, PORT, PORT_FIELDS + ACCELERATOR_PORT_FIELDS + CHIP_PORT_FIELDS)
    if problem is not None:
        raise ValueError(f"{problem[0]} ({problem[1]})")
    return template


PortRole = Literal["data", "scaleup", "mgmt", "inband", "storage", "cxl", "uplink", "console"]
Grade = Literal["PRIMARY", "SECONDARY", "DERIVED", "UNCONFIRMED", "ILLUSTRATIVE"]
# The top of a cage and of what plugs into it: a finned module (integrated heat sink, IHS) goes
# into a switch cage without a heat sink; a flat-top module (riding heat sink, RHS) under the heat
# sink of a NIC or liquid-cooled cage. A finned plug does not fit a flat-top cage and the other way
# round; "any" where the distinction does not exist (QSFP, RJ45) or is unknown.
Top = Literal["finned", "flat", "any"]


class PortGroup(Strict):
    """A run of identical ports on a device, numbered after the groups listed before it."""

    role: PortRole
    count: PortCount
    speed_gbps: PositiveFloat = Field(description="per port, per direction")
    lanes: Lanes = 1
    cage: FormFactor = Field(description="osfp, qsfp112, qsfp28, sfp28, rj45, cpo, orthogonal, cartridge, cxl-x16 ...")
    ports_per_cage: Lanes = 1
    name: Annotated[str, AfterValidator(_port_template)] = Field(
        "p{n}",
        description="port name template: {n} 1-based number in the group, {i} 0-based, "
        "{cage} 1-based cage, {sub} 1-based port within the cage, {lane0} first lane (i x lanes), "
        "{acc}/{link} accelerator and link on a compute board, {chip}/{chipport} on a switch board",
    )
    names: list[Annotated[str, AfterValidator(_port_name)]] | None = Field(
        None,
        description="the ports' OS names in port order, one per port, where the host's own enumeration follows no "
        "template (a DGX H100 names the compute HCAs of GPU 0..7 mlx5_0, 3, 4, 5, 6, 9, 10, 11); replaces name",
    )
    breakout: list[Text] = Field(default_factory=list, description="supported breakout modes, e.g. 2x400G")
    first_index: int = Field(0, ge=0, le=MAX_PORTS, description="added to {i} and {n} (ports numbered on from another group)")
    # -- the physical cage (issue 8) ------------------------------------------------------------
    top: Top = Field("any", description="finned (integrated heat sink, switch side) or flat (riding heat sink, NIC side)")
    first_cage: PositiveInt = Field(1, description="faceplate number of the group's first cage")
    faceplate: list[NonNegInt] | None = Field(
        None,
        description="port offsets of the group in faceplate order (cage 1 position 1, cage 1 position 2, cage 2 "
        "position 1, ...), when the ports do not sit in cages in index order (DGX H100: [7, 4, 6, 5, 2, 1, 3, 0])",
    )
    physical: Annotated[str, AfterValidator(_physical_template)] | None = Field(
        None,
        description="physical port name as printed: {FORM} upper-case form factor, {form}, {cage} faceplate number, "
        "{sub} 1-based position in the cage, {letter} a/b/c..., {n}, {i}; default '{FORM} {cage}' or "
        "'{FORM} {cage} port {sub}' when a cage holds several ports",
    )
    lane_rates: list[PositiveFloat] | None = Field(
        None, description="lane rates (Gb/s) the port runs at; default: its own and any lower one (downshift)"
    )

    @field_validator("names")
    @classmethod
    def _one_name_each(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        count = info.data.get("count")
        if value is not None and count is not None and len(value) != count:
            raise ValueError(f"names must give each of the group's {count} ports one name ({len(value)} given)")
        if value is not None and len(set(value)) != len(value):
            raise ValueError("names must not repeat a name")
        return value

    @field_validator("faceplate")
    @classmethod
    def _permutation(cls, value: list[int] | None, info: ValidationInfo) -> list[int] | None:
        count = info.data.get("count")
        if value is not None and count is not None and sorted(value) != list(range(count)):
            raise ValueError(f"faceplate must list each of the group's {count} port offsets 0..{count - 1} once")
        return value

    @property
    def lane_gbps(self) -> float:
        return self.speed_gbps / self.lanes

    @property
    def cages(self) -> int:
        """Cages the group's ports fill."""
        return math.ceil(self.count / self.ports_per_cage)

    @property
    def cage_lanes(self) -> int:
        """Electrical lanes of one cage: what a plug in it must carry (8 for a twin-port 2 x 400G OSFP)."""
        return self.lanes * self.ports_per_cage

    def runs_at(self, lane_gbps: float) -> bool:
        """Whether the port runs at this lane rate (its own, or a lower one unless ``lane_rates`` says otherwise)."""
        if self.lane_rates is None:
            return lane_gbps <= self.lane_gbps + 1e-9
        return any(abs(rate - lane_gbps) < 1e-9 for rate in self.lane_rates)


class Accelerators(Strict):
    count: PortCount
    model: Text
    links: PortCount = Field(description="scale-up links per accelerator")
    link_gbps: PositiveFloat = Field(description="per link, per direction")
    hbm_gb: NonNegFloat = 0

    @property
    def bidir_gbytes(self) -> float:
        """Per-accelerator scale-up bandwidth as vendors quote it (GB/s, both directions)."""
        return self.links * self.link_gbps * 2 / 8


class HostCpu(Strict):
    """A server's processors and memory, as a scheduler declares them (Slurm's NodeName line)."""

    model: Text = Field(description="the processor, as its vendor names it")
    sockets: PositiveInt
    cores_per_socket: PositiveInt
    threads_per_core: PositiveInt = 1
    memory_gb: PositiveFloat = Field(description="installed system memory, GiB")


class InternalScaleup(Strict):
    """A board whose accelerators meet on switch chips of its own (HGX): no cables to plan."""

    switch_chips: PortCount
    links_per_chip: list[PortCount] = Field(description="links each accelerator has to each chip", max_length=MAX_PORTS)


class InternalMesh(Strict):
    """A board whose accelerators are wired to each other point to point, no switch (AMD xGMI, Huawei
    HCCS, Intel Gaudi's in-node RoCE ports): a full mesh of n(n-1)/2 accelerator pairs."""

    links_per_pair: PortCount = Field(description="direct links between each pair of the board's accelerators")

    def pairs(self, accelerators: int) -> int:
        """Accelerator pairs of one board: n(n-1)/2."""
        return accelerators * (accelerators - 1) // 2

    def links(self, accelerators: int) -> int:
        """Point-to-point links of one board: links_per_pair x n(n-1)/2."""
        return self.links_per_pair * self.pairs(accelerators)


class SwitchChips(Strict):
    """Scale-up switch chips on a switch board or tray; port p of the scaleup group is on chip p // ports_per_chip."""

    count: PortCount
    ports_per_chip: PortCount
    model: Text = ""


class Source(Strict):
    ref: Text
    grade: Grade = "PRIMARY"
    note: Text = ""


class Asic(Strict):
    """A switch chip: what it switches per direction (``catalog/data/asics.yaml``)."""

    description: Text
    capacity_gbps: PositiveFloat = Field(description="switching capacity per direction, Gb/s (vendors often quote both)")
    serdes_lanes: PositiveInt | None = Field(None, description="SerDes lanes the chip has, where published")
    sources: list[Source] = Field(min_length=1)


class PowerShelves(Strict):
    """The power shelves a rack of these devices is fed from (a busbar rack: NVL72, OEX)."""

    model: Text = Field(description="catalogue power-shelf")
    count: PositiveInt = Field(description="shelves per domain instance (one rack)")


class Physical(Strict):
    """What a device asks of its rack: power, weight, cooling (``catalog/data/physical.yaml``).

    ``power_max_w`` is what rack budgets are held to (the nameplate or the maximum with active
    optics); ``power_typical_w`` is reported beside it. Either left out falls back to the
    device's ``power_w``. ``modules_in_max`` says whether that maximum already includes the
    modules in the device's cages (the rack adds them when it does not).
    """

    power_typical_w: NonNegFloat | None = None
    power_max_w: NonNegFloat | None = None
    modules_in_max: bool = Field(
        True,
        description="the maximum includes the pluggable modules in its cages (as data sheets give it); false: the rack "
        "also carries the modules and active cable ends plugged into the device's cages",
    )
    weight_kg: NonNegFloat | None = None
    cooling: Literal["air", "liquid", "hybrid"] = Field("air", description="hybrid: direct liquid plus air, needs a liquid rack")
    supply_w: NonNegFloat | None = Field(None, description="power shelves and PDUs: the power they deliver")
    power_shelves: PowerShelves | None = None
    sources: list[Source] = Field(default_factory=list)


class ChassisSlots(Strict):
    """A supernode chassis (OEX): compute boards slide in at the front, horizontally, one above the
    other; switch boards at the rear, vertically, side by side, so every compute board crosses
    every switch board once (the orthogonal connectors sit at the crossings)."""

    front: PositiveInt = Field(description="compute-board slots (front, horizontal)")
    rear: PositiveInt = Field(description="switch-board slots (rear, vertical)")
    front_pitch_u: PositiveInt = Field(description="height of one front slot (the compute board's thickness)")
    front_first_u: NonNegInt = Field(0, description="units below the first front slot (power entry, management)")


class Part(Strict):
    """What a BOM line orders: a vendor part number, or a clearly marked generic placeholder."""

    number: Text = Field(description="orderable part number (a family like MCP4Y10-Nxxx where lengths have their own)")
    opn: Text = Field("", description="the vendor's ordering number where it differs (NVIDIA 980-9Ixxx / 920-...)")
    generic: bool = Field(False, description="a placeholder, not a vendor part: the BOM marks it 'generic'")
    grade: Grade = "UNCONFIRMED"
    ref: Text = ""


# CXL 2.0 specification, section 2.4 (Multi-Logical Device): an MLD is partitioned into at most 16
# logical devices (LD-ID 0..15); CXL 3.x keeps the limit. A bound of the schema, not a device figure.
MLD_MAX_LOGICAL_DEVICES = 16


class DeviceModel(Strict):
    kind: Literal[
        "switch",
        "node",
        "compute-board",
        "switch-board",
        "appliance",
        "memory",
        "chassis",
        "power-shelf",
        "pdu",
        "console-server",
    ]
    description: Text
    vendor: Text = ""
    transport: Literal["infiniband", "ethernet", "nvlink", "olink", "ualink", "cxl", "any"] = "any"
    height_u: NonNegInt = Field(1, description="rack units; 0 for a device mounted in the rear (a vertical PDU)")
    power_w: NonNegFloat = 0
    relative_cost: NonNegFloat = 0
    ports: list[PortGroup]
    accelerators: Accelerators | None = None
    cpu: HostCpu | None = Field(None, description="a server's processors and memory (Slurm NodeName figures)")
    internal_scaleup: InternalScaleup | None = None
    internal_mesh: InternalMesh | None = Field(None, description="accelerators wired point to point (switchless full mesh)")
    switch_chips: SwitchChips | None = None
    asic: Text | None = Field(
        None, description="switch: the catalogue ASIC (asics) it is built on; a switch board names its chip in switch_chips.model"
    )
    memory_gb: NonNegFloat = 0
    logical_devices: int = Field(
        1,
        ge=1,
        le=MLD_MAX_LOGICAL_DEVICES,
        description="CXL Type 3: logical devices (LDs) the capacity is split into, each bound to one host; 1 is a "
        "single logical device (SLD), more a multi-logical device (MLD) of memory_gb / logical_devices per LD",
    )
    memory_sharing: bool = Field(
        False, description="CXL Type 3: maps one region into several hosts at once (CXL 3.x shared memory)"
    )
    physical: Physical | None = None
    slots: ChassisSlots | None = Field(None, description="kind chassis: its board slots")
    part: Part | None = Field(None, description="part number for the BOM; none: a generic placeholder")
    sources: list[Source] = Field(min_length=1)

    @property
    def power_max_w(self) -> float:
        p = self.physical
        return p.power_max_w if p is not None and p.power_max_w is not None else self.power_w

    @property
    def power_typical_w(self) -> float:
        p = self.physical
        return p.power_typical_w if p is not None and p.power_typical_w is not None else self.power_w

    @property
    def weight_kg(self) -> float | None:
        return self.physical.weight_kg if self.physical is not None else None

    @property
    def cooling(self) -> str:
        return self.physical.cooling if self.physical is not None else "air"

    @model_validator(mode="after")
    def _consistent(self) -> DeviceModel:
        chips = self.switch_chips
        if chips is not None and self.port_count("scaleup") != chips.count * chips.ports_per_chip:
            raise ValueError("scaleup ports must equal switch_chips.count x ports_per_chip")
        internal, acc = self.internal_scaleup, self.accelerators
        if internal is not None and acc is not None and sum(internal.links_per_chip) != acc.links:
            raise ValueError("internal_scaleup.links_per_chip must add up to accelerators.links")
        mesh = self.internal_mesh
        if mesh is not None:
            if acc is None or internal is not None:
                raise ValueError("internal_mesh needs accelerators and excludes internal_scaleup")
            if mesh.links_per_pair * (acc.count - 1) != acc.links:
                raise ValueError(
                    f"internal_mesh: {mesh.links_per_pair} link(s) to each of the {acc.count - 1} other accelerators "
                    f"is {mesh.links_per_pair * (acc.count - 1)} links, accelerators.links says {acc.links}"
                )
        if (self.kind == "chassis") != (self.slots is not None):
            raise ValueError("a chassis lists its 'slots', and only a chassis does")
        if self.height_u == 0 and self.kind not in ("pdu",):
            raise ValueError("only a pdu (rear-mounted) has height_u 0")
        for group in self.ports:
            fields: tuple[str, ...] = PORT_FIELDS
            if group.role == "scaleup":
                fields += ACCELERATOR_PORT_FIELDS if acc is not None else ()
                fields += CHIP_PORT_FIELDS if chips is not None else ()
            problem = template_problem(group.name, PORT, fields)
            if problem is not None:
                raise ValueError(f"port group {group.role!r}: {problem[0]} ({problem[1]})")
        return self

    def ports_of(self, role: str) -> list[PortGroup]:
        return [g for g in self.ports if g.role == role]

    def port_count(self, role: str) -> int:
        """Ports of one role (``data``: the switch radix the topologies are sized by)."""
        return sum(g.count for g in self.ports if g.role == role)


MediumKind = Literal["dac", "acc", "aec", "lpo", "aoc", "sr", "dr", "fr", "npo", "cpo", "copper-utp", "cartridge", "pcb"]
Fibre = Literal["none", "om3", "om4", "om5", "os2"]
Shape = Literal["straight", "splitter", "transceiver", "connector", "cartridge"]
COPPER_KINDS = frozenset({"dac", "acc", "aec", "copper-utp"})


class End(Strict):
    """One end of a cable assembly: the plug a cage takes."""

    form: FormFactor = Field("any", description="form factor (osfp, qsfp112, ...); any: every form the medium lists in 'cages'")
    top: Top = "any"
    lanes: PositiveInt | None = Field(None, description="electrical lanes of the plug (8 twin-port OSFP); none: any")

    def fits(self, form: str, top: str, lanes: int, forms: list[str]) -> bool:
        return _plug_fits(self.form, self.top, self.lanes, form, top, lanes, forms)


def _plug_fits(plug_form: str, plug_top: str, plug_lanes: int | None, form: str, top: str, lanes: int, forms: list[str]) -> bool:
    """Whether a plug (form factor, top, electrical lanes; 'any'/None: any) takes a cage of this
    form, top and lanes; a plug of form 'any' takes the forms its medium lists."""
    if plug_form == "any":
        if form not in forms:
            return False
    elif plug_form != form:
        return False
    if plug_top != "any" and top != "any" and plug_top != top:
        return False
    return plug_lanes is None or plug_lanes == lanes


class Transceiver(Strict):
    """An optical module: it takes one cage, has ``ports`` optical ports, each with its own fibre."""

    description: Text
    vendor: Text = ""
    pmd: Text = Field(description="optical interface (sr4, dr4, fr4, ...): modules at the two ends of a fibre must match")
    form: FormFactor = Field(description="form factor it plugs into (osfp, qsfp112, ...), or any (a generic module)")
    top: Top = "any"
    ports: PositiveInt = Field(1, description="optical ports (twin-port OSFP: 2), each with its own fibre")
    lanes_per_port: PositiveInt | None = Field(4, description="electrical lanes behind each optical port; none: any")
    lane_rates: list[PositiveFloat] = Field(min_length=1, description="lane rates (Gb/s) it runs at")
    reach_m: dict[LaneRate, PositiveFloat] = Field(min_length=1, description="reach in metres by lane rate")
    fibre: Fibre
    connector: Text = Field(description="optical connector of each port: mpo-12/apc, lc-duplex ...")
    side: Literal["switch", "host", "any"] = Field("any", description="the side it is made for (single-port parts are host-side)")
    integrated: bool = Field(False, description="an optical engine built into the device (CPO): nothing to order")
    power_w: NonNegFloat = 0
    relative_cost: NonNegFloat = 0
    part: Part
    sources: list[Source] = Field(min_length=1)

    @property
    def lanes(self) -> int | None:
        return None if self.lanes_per_port is None else self.ports * self.lanes_per_port

    def reach_at(self, lane_gbps: float) -> float | None:
        return _reach_at(self.reach_m, lane_gbps)

    def runs_at(self, lane_gbps: float) -> bool:
        return any(abs(rate - lane_gbps) < 1e-9 for rate in self.lane_rates)

    def fits(self, form: str, top: str, lanes: int, side: str, forms: list[str]) -> bool:
        """Whether the module takes a cage of this form factor, top, lane count and side."""
        if self.side != "any" and side != "any" and self.side != side:
            return False
        return _plug_fits(self.form, self.top, self.lanes, form, top, lanes, forms)


class Cord(Strict):
    """A fibre patch cord (or trunk): one per optical port of a transceiver link."""

    description: Text
    fibre: Fibre
    connector: Text
    stock_lengths_m: list[PositiveFloat] = Field(min_length=1)
    parts: dict[StockLength, Text] = Field(default_factory=dict, description="part number per stock length")
    opns: dict[StockLength, Text] = Field(default_factory=dict, description="ordering number per stock length")
    part: Part
    relative_cost: NonNegFloat = 0
    sources: list[Source] = Field(min_length=1)


def _reach_at(reach_m: dict[float, float], lane_gbps: float) -> float | None:
    """Reach at a lane rate: the figure for the lowest listed rate >= the asked one."""
    rates = sorted(r for r in reach_m if r >= lane_gbps - 1e-9)
    return reach_m[rates[0]] if rates else None


class Medium(Strict):
    """One physical realisation of a link, as the policy chooses it (media are chosen per cage).

    * ``straight``: a cable assembly from one cage to one cage (a twin-port 2 x 400G DAC carries
      both ports of its cages); ``ends`` gives the plugs (one entry: both alike).
    * ``splitter``: one head plug to ``legs`` plugs, each leg in its own cage; ``ends`` is [head, leg].
    * ``transceiver``: a module in each cage (from ``modules``, the one that fits the cage) and a
      fibre ``cord`` per optical port; the reach is the lesser of the two modules'.
    * ``connector`` / ``cartridge``: a board-to-board connector (OEX) or a rack's cable cartridge
      (NVL72), counted per board pair and per rack assembly.
    """

    kind: MediumKind
    description: Text
    shape: Shape = "straight"
    reach_m: dict[LaneRate, PositiveFloat] = Field(
        default_factory=dict, description="reach in metres by lane rate; a rate not listed uses the next higher one"
    )
    cages: list[FormFactor] = Field(description="cage form factors either end may be")
    requires_cage: FormFactor | None = Field(None, description="at least one end must be this cage (CPO)")
    ends: list[End] = Field(default_factory=list, description="straight: [both] or [a, b]; splitter: [head, leg]")
    legs: PositiveInt = Field(1, description="splitter legs")
    modules: list[str] = Field(default_factory=list, description="transceiver keys this medium uses (transceiver shape)")
    cord: str = Field("", description="fibre cord key (transceiver shape)")
    power_w_per_end: NonNegFloat = Field(0, description="power of each plug of a cable assembly (active copper, AOC)")
    relative_cost: NonNegFloat = Field(description="one assembly (cable, splitter, connector, cartridge); transceiver media: 0")
    fibre: Fibre = "none"
    connector: Text = ""
    stock_lengths_m: list[NonNegFloat] = Field(default_factory=list, description="transceiver media: the cord's")
    parts: dict[StockLength, Text] = Field(default_factory=dict, description="part number per stock length")
    opns: dict[StockLength, Text] = Field(default_factory=dict, description="ordering number per stock length")
    part: Part | None = None
    per_assembly: PositiveInt = Field(1, description="cartridge: cartridges in one rack assembly")
    sources: list[Source] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self) -> Medium:
        if self.shape == "transceiver":
            if not self.modules or not self.cord:
                raise ValueError("a transceiver medium names its modules and its fibre cord")
        else:
            if not self.reach_m:
                raise ValueError("reach_m is required (by lane rate)")
            if not self.stock_lengths_m:
                raise ValueError("stock_lengths_m is required")
        if self.shape == "splitter" and (len(self.ends) != 2 or self.legs < 2):
            raise ValueError("a splitter lists ends [head, leg] and at least 2 legs")
        if self.shape == "straight" and len(self.ends) > 2:
            raise ValueError("a straight assembly lists one end (both alike) or two")
        return self

    @property
    def needs_margin(self) -> bool:
        """A connector on a board (pcb) has a fixed path; the cable margin is for cables."""
        return self.kind != "pcb"

    @property
    def copper(self) -> bool:
        return self.kind in COPPER_KINDS

    def reach_at(self, lane_gbps: float) -> float | None:
        """Reach at a lane rate: the figure for the lowest listed rate >= the asked one."""
        return _reach_at(self.reach_m, lane_gbps)

    def plugs_into(self, cage_a: str, cage_b: str) -> bool:
        """Both ends' cages take this medium, and one of them is the cage it requires (if any)."""
        if cage_a not in self.cages or cage_b not in self.cages:
            return False
        return self.requires_cage is None or self.requires_cage in (cage_a, cage_b)

    def stock_length(self, length_m: float) -> float | None:
        for stock in sorted(self.stock_lengths_m):
            if stock >= length_m - 1e-9:
                return stock
        return None

    def end(self, which: int) -> End:
        """End ``which`` (0 = a / head, 1 = b / leg); a single listed end stands for both; none: any."""
        if not self.ends:
            return End()
        return self.ends[min(which, len(self.ends) - 1)]


# SONiC numbers ports and SerDes lanes from 0 (an SN5600 has 512 lanes); 65,535 is far above any ASIC.
SonicNumber = Annotated[int, Field(ge=0, le=65535)]
SonicStep = Annotated[int, Field(gt=0, le=65535)]
# The fields of a SONiC alias template: the cage's faceplate number, a, b, ... on a split cage, and
# the port's first lane within its cage, 1-based (1, 5 for a cage split 2 x 4 lanes: Arista's
# Ethernet{cage}/{lane}).
ALIAS_FIELDS = ("cage", "sub", "lane")
# A BREAKOUT_CFG mode as platform.json spells it: "2x400G[200G,100G]" (ports x speed, then the
# speeds each port may also run at).
BREAKOUT_MODE = r"^[1-9][0-9]?x[1-9][0-9]{0,3}G(\[[1-9][0-9]{0,3}G(,[1-9][0-9]{0,3}G)*\])?$"


def _alias_template(template: str) -> str:
    problem = template_problem(template, PORT, ALIAS_FIELDS)
    if problem is not None:
        raise ValueError(f"{problem[0]} ({problem[1]})")
    return template


def _lane_list(value: object) -> object:
    """A port's lanes as port_config.ini writes them ("17,18,19,20") or as a YAML list."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if not all(p.isdigit() for p in parts):
            raise ValueError(f"lanes {value!r} are not comma-separated lane numbers (as port_config.ini writes them)")
        return [int(p) for p in parts]
    return value


def _distinct_lanes(value: list[int]) -> list[int]:
    seen: set[int] = set()
    for lane in value:
        if lane in seen:
            raise ValueError(f"lane {lane} is given twice in one port's lanes {','.join(map(str, value))}")
        seen.add(lane)
    return value


class SonicPortLanes(Strict):
    """One port of a group whose lanes follow no rule (a board with swapped lanes): its SerDes
    lanes, and optionally its name, alias and index as the hwsku's port_config.ini gives them (the
    name and index are checked against the catalogue's; the alias replaces the group's template)."""

    name: Annotated[str, AfterValidator(_port_name)] | None = Field(None, description="must be the catalogue's port name")
    lanes: Annotated[
        list[SonicNumber], BeforeValidator(_lane_list), Field(min_length=1, max_length=32), AfterValidator(_distinct_lanes)
    ]
    alias: Annotated[str, AfterValidator(_port_name)] | None = Field(
        None, description="the port's alias as port_config.ini gives it, a literal name; default: from the group's alias"
    )
    index: Annotated[int, Field(gt=0, le=MAX_PORTS)] | None = Field(None, description="must be the catalogue cage's number")


class SonicPortGroup(Strict):
    """How SONiC names and wires one catalogue port group (port_config.ini / platform.json of the hwsku).

    Port ``i`` of the group (0-based) is ``{prefix}{first_name + i * name_step}`` on lanes
    ``first_lane + i * lane_step`` .. ``+ lanes - 1``, or, where the board's lanes follow no such
    rule, on the lanes ``ports[i]`` lists. Its cage is the catalogue's (the port group's
    ``first_cage``, ``ports_per_cage`` and ``faceplate``, as every other output prints it): its
    index is the cage's faceplate number, its alias the ``alias`` template with ``{cage}``, ``{sub}``
    (a, b, c, ... by position when a cage carries several ports, empty otherwise) and ``{lane}``
    (its first lane in the cage, 1-based), unless ``ports[i]`` gives one.
    """

    role: PortRole
    prefix: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")] = "Ethernet"
    first_name: SonicNumber = 0
    name_step: SonicStep
    first_lane: SonicNumber = 0
    lane_step: SonicStep | None = Field(None, description="lanes between port i and port i+1; or give 'ports'")
    ports: list[SonicPortLanes] | None = Field(
        None,
        max_length=MAX_PORTS,
        description="each port's lanes (and optionally name, alias, index) in port order, for a board whose lanes "
        "follow no first_lane/lane_step rule; one entry per port of the catalogue group",
    )
    lanes: Lanes | None = Field(None, description="SerDes lanes per port; default (and it must agree): the catalogue group's")
    alias: Annotated[str, AfterValidator(_alias_template)] = Field(
        "etp{cage}{sub}", description="alias template: {cage} faceplate cage number, {sub} a/b/... on a split cage"
    )
    speed_mbps: Annotated[int, Field(gt=0, le=10_000_000)] | None = Field(
        None, description="PORT.speed in Mb/s; default (and it must agree): the catalogue group's speed"
    )
    fec: Literal["rs", "fc", "none", "auto"] | None = None
    breakout_mode: Annotated[str, Field(pattern=BREAKOUT_MODE, max_length=200)] | None = Field(
        None,
        description="BREAKOUT_CFG mode of each cage, as platform.json spells it; its 'NxSG' must be the catalogue "
        "group's ports per cage and speed",
    )

    @model_validator(mode="after")
    def _one_lane_rule(self) -> SonicPortGroup:
        """Lanes by rule (first_lane, lane_step) or listed (ports), never both, never neither."""
        if self.ports is None and self.lane_step is None:
            raise ValueError("give lane_step (port i on lanes first_lane + i x lane_step ...) or ports (each port's lanes)")
        if self.ports is not None and ({"lane_step", "first_lane"} & self.model_fields_set):
            raise ValueError("give either first_lane/lane_step or ports (each port's lanes), not both")
        return self


class SonicBuffers(Strict):
    """The per-ASIC figure SONiC's dynamic buffer model cannot compute itself."""

    egress_lossless_pool_bytes: Annotated[int, Field(gt=0, le=1 << 32)]


class PortMap(Strict):
    """A switch model as its network OS sees it: hwsku, platform and the name and lanes of every port."""

    os: Literal["sonic"] = "sonic"
    hwsku: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$", max_length=63)]
    platform: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$", max_length=63)]
    mgmt_port: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,15}$")] = "eth0"
    groups: list[SonicPortGroup] = Field(
        min_length=1, max_length=16, description="one per catalogue port group that SONiC runs, by role"
    )
    buffers: SonicBuffers | None = Field(None, description="for the lossless (RoCEv2) buffer tables")
    sources: list[Source] = Field(min_length=1)


class Facility(Strict):
    """Site figures a rack budget falls back to where the blueprint declares none of its own."""

    air_cooled_limit_kw: PositiveFloat = Field(description="most a rack may draw on air cooling")
    cables_max: PositiveInt = Field(description="cable ends leaving one rack before its cable management is overfull")
    sources: list[Source] = Field(min_length=1)


class Catalogue(Strict):
    # Keys are names: a model's key names files (nccl/<model>.env) and appears in configs.
    devices: dict[Name, DeviceModel]
    media: dict[Name, Medium]
    facility: Facility
    transceivers: dict[Name, Transceiver] = Field(default_factory=dict)
    cords: dict[Name, Cord] = Field(default_factory=dict)
    # transport -> lane rate (Gb/s; 0 = any rate) -> media the default policy may choose from
    lines: dict[Name, dict[LineRate, list[Name]]] = Field(default_factory=dict)
    # Network-OS port maps by device model (catalog/data/port_maps.yaml), read by the config renderers.
    port_maps: dict[Name, PortMap] = Field(default_factory=dict)
    # Switch chips and their capacity (catalog/data/asics.yaml), read by the switch-bandwidth check.
    asics: dict[Name, Asic] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _references(self) -> Catalogue:
        """Every name a medium or a line uses exists, and a transceiver medium's modules take its
        cord's fibre and connector: an optic paired with the wrong fibre cannot be described."""
        problems = []
        for name, m in self.media.items():
            if m.shape != "transceiver":
                continue
            cord = self.cords.get(m.cord)
            if cord is None:
                problems.append(f"media.{name}: no cord named {m.cord!r}")
            for key in m.modules:
                module = self.transceivers.get(key)
                if module is None:
                    problems.append(f"media.{name}: no transceiver named {key!r}")
                elif (
                    cord is not None
                    and not module.integrated
                    and (module.fibre != cord.fibre or module.connector != cord.connector)
                ):
                    problems.append(
                        f"media.{name}: transceiver {key} takes {module.fibre} {module.connector} fibre, "
                        f"cord {m.cord} is {cord.fibre} {cord.connector}"
                    )
            pmds = {self.transceivers[k].pmd for k in m.modules if k in self.transceivers}
            if len(pmds) > 1:
                problems.append(f"media.{name}: modules of different optical interfaces ({', '.join(sorted(pmds))}) do not link")
        for name, d in self.devices.items():
            if d.asic is not None and d.asic not in self.asics:
                problems.append(f"devices.{name}: no asic named {d.asic!r} (asics: {', '.join(sorted(self.asics))})")
        for transport, rates in self.lines.items():
            for rate, names in rates.items():
                for n in names:
                    if n not in self.media:
                        problems.append(f"lines.{transport}.{rate:g}: no medium named {n!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self
