"""Typed catalogue entries: the hardware figures every builder and check reads.

No hardware number lives in code: radix, lanes, reach, power and cost all come from the YAML
files beside this module (each entry cites its source) or from a blueprint's overrides.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from ..model.base import MAX_FIGURE, MAX_PORTS, NonNegFloat, PortCount, PositiveFloat, PositiveInt, Strict
from ..name_rules import PORT, template_problem

# Lanes of a port, ports of a cage: 32 is twice the widest (CXL x16, OSFP 8 lanes, 2 ports a cage).
Lanes = Annotated[int, Field(gt=0, le=32)]
# reach_m is keyed by lane rate (Gb/s); a blueprint's YAML keys arrive as text ("53.125"), so the
# key alone is read as a number from text too.
LaneRate = Annotated[float, Field(gt=0, le=MAX_FIGURE, allow_inf_nan=False, strict=False)]

# The fields a port name template may use (PortLayout fills them); acc/link and chip/chipport
# only on the scale-up ports of a device with accelerators or switch chips.
PORT_FIELDS = ("i", "n", "cage", "sub", "lane0")
ACCELERATOR_PORT_FIELDS = ("acc", "link")
CHIP_PORT_FIELDS = ("chip", "chipport")


def _port_template(template: str) -> str:
    problem = template_problem(template, PORT, PORT_FIELDS + ACCELERATOR_PORT_FIELDS + CHIP_PORT_FIELDS)
    if problem is not None:
        raise ValueError(f"{problem[0]} ({problem[1]})")
    return template


PortRole = Literal["data", "scaleup", "mgmt", "inband", "storage", "cxl", "uplink"]


class PortGroup(Strict):
    """A run of identical ports on a device, numbered after the groups listed before it."""

    role: PortRole
    count: PortCount
    speed_gbps: PositiveFloat = Field(description="per port, per direction")
    lanes: Lanes = 1
    cage: str = Field(description="osfp, qsfp112, qsfp28, sfp28, rj45, cpo, orthogonal, cartridge, cxl-x16 ...")
    ports_per_cage: Lanes = 1
    name: Annotated[str, AfterValidator(_port_template)] = Field(
        "p{n}",
        description="port name template: {n} 1-based number in the group, {i} 0-based, "
        "{cage} 1-based cage, {sub} 1-based port within the cage, {lane0} first lane (i x lanes), "
        "{acc}/{link} accelerator and link on a compute board, {chip}/{chipport} on a switch board",
    )
    breakout: list[str] = Field(default_factory=list, description="supported breakout modes, e.g. 2x400G")
    first_index: int = Field(0, ge=0, le=MAX_PORTS, description="added to {i} and {n} (ports numbered on from another group)")

    @property
    def lane_gbps(self) -> float:
        return self.speed_gbps / self.lanes


class Accelerators(Strict):
    count: PortCount
    model: str
    links: PortCount = Field(description="scale-up links per accelerator")
    link_gbps: PositiveFloat = Field(description="per link, per direction")
    hbm_gb: NonNegFloat = 0

    @property
    def bidir_gbytes(self) -> float:
        """Per-accelerator scale-up bandwidth as vendors quote it (GB/s, both directions)."""
        return self.links * self.link_gbps * 2 / 8


class InternalScaleup(Strict):
    """A board whose accelerators meet on switch chips of its own (HGX): no cables to plan."""

    switch_chips: PortCount
    links_per_chip: list[PortCount] = Field(description="links each accelerator has to each chip", max_length=MAX_PORTS)


class SwitchChips(Strict):
    """Scale-up switch chips on a switch board or tray; port p of the scaleup group is on chip p // ports_per_chip."""

    count: PortCount
    ports_per_chip: PortCount
    model: str = ""


class Source(Strict):
    ref: str
    grade: Literal["PRIMARY", "SECONDARY", "DERIVED", "UNCONFIRMED", "ILLUSTRATIVE"] = "PRIMARY"
    note: str = ""


class DeviceModel(Strict):
    kind: Literal["switch", "node", "compute-board", "switch-board", "appliance", "memory"]
    description: str
    vendor: str = ""
    transport: Literal["infiniband", "ethernet", "nvlink", "olink", "ualink", "cxl", "any"] = "any"
    height_u: PositiveInt = 1
    power_w: NonNegFloat = 0
    relative_cost: NonNegFloat = 0
    ports: list[PortGroup]
    accelerators: Accelerators | None = None
    internal_scaleup: InternalScaleup | None = None
    switch_chips: SwitchChips | None = None
    memory_gb: NonNegFloat = 0
    sources: list[Source] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> DeviceModel:
        chips = self.switch_chips
        if chips is not None and self.port_count("scaleup") != chips.count * chips.ports_per_chip:
            raise ValueError("scaleup ports must equal switch_chips.count x ports_per_chip")
        internal, acc = self.internal_scaleup, self.accelerators
        if internal is not None and acc is not None and sum(internal.links_per_chip) != acc.links:
            raise ValueError("internal_scaleup.links_per_chip must add up to accelerators.links")
        for group in self.ports:
            fields = PORT_FIELDS
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


class Medium(Strict):
    """A medium ties the cable, both ends' transceivers (or none) and the fibre together."""

    kind: Literal["dac", "acc", "aec", "lpo", "aoc", "sr", "dr", "fr", "npo", "cpo", "copper-utp", "cartridge", "pcb"]
    description: str
    reach_m: dict[LaneRate, PositiveFloat] = Field(
        description="reach in metres by lane rate in Gb/s; a rate not listed uses the next higher one"
    )
    cages: list[str] = Field(description="cage types either end may be")
    requires_cage: str | None = Field(None, description="at least one end must be this cage (CPO)")
    transceivers_per_end: NonNegFloat = 0
    power_w_per_end: NonNegFloat = 0
    relative_cost: NonNegFloat = Field(description="cable plus both ends, per link; orders the policy")
    fibre: Literal["none", "om3", "om4", "om5", "os2"] = "none"
    connector: str = ""
    stock_lengths_m: list[NonNegFloat] = Field(min_length=1)
    sources: list[Source] = Field(min_length=1)

    @property
    def needs_margin(self) -> bool:
        """A connector on a board (pcb) has a fixed path; the cable margin is for cables."""
        return self.kind != "pcb"

    def reach_at(self, lane_gbps: float) -> float | None:
        """Reach at a lane rate: the figure for the lowest listed rate >= the asked one."""
        rates = sorted(r for r in self.reach_m if r >= lane_gbps - 1e-9)
        return self.reach_m[rates[0]] if rates else None

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


class Catalogue(Strict):
    devices: dict[str, DeviceModel]
    media: dict[str, Medium]
