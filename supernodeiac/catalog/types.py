"""Typed catalogue entries: the hardware figures every builder and check reads.

No hardware number lives in code: radix, lanes, reach, power and cost all come from the YAML
files beside this module (each entry cites its source) or from a blueprint's overrides.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..model.base import NonNegFloat, NonNegInt, PositiveFloat, PositiveInt, Strict

PortRole = Literal["data", "scaleup", "mgmt", "inband", "storage", "cxl", "uplink", "console"]


class PortGroup(Strict):
    """A run of identical ports on a device, numbered after the groups listed before it."""

    role: PortRole
    count: PositiveInt
    speed_gbps: PositiveFloat = Field(description="per port, per direction")
    lanes: PositiveInt = 1
    cage: str = Field(description="osfp, qsfp112, qsfp28, sfp28, rj45, cpo, orthogonal, cartridge, cxl-x16 ...")
    ports_per_cage: PositiveInt = 1
    name: str = Field(
        "p{n}",
        description="port name template: {n} 1-based number in the group, {i} 0-based, "
        "{cage} 1-based cage, {sub} 1-based port within the cage, {lane0} first lane (i x lanes), "
        "{acc}/{link} accelerator and link on a compute board, {chip}/{chipport} on a switch board",
    )
    breakout: list[str] = Field(default_factory=list, description="supported breakout modes, e.g. 2x400G")
    first_index: int = Field(0, ge=0, description="added to {i} and {n} (ports numbered on from another group)")

    @property
    def lane_gbps(self) -> float:
        return self.speed_gbps / self.lanes


class Accelerators(Strict):
    count: PositiveInt
    model: str
    links: PositiveInt = Field(description="scale-up links per accelerator")
    link_gbps: PositiveFloat = Field(description="per link, per direction")
    hbm_gb: NonNegFloat = 0

    @property
    def bidir_gbytes(self) -> float:
        """Per-accelerator scale-up bandwidth as vendors quote it (GB/s, both directions)."""
        return self.links * self.link_gbps * 2 / 8


class InternalScaleup(Strict):
    """A board whose accelerators meet on switch chips of its own (HGX): no cables to plan."""

    switch_chips: PositiveInt
    links_per_chip: list[PositiveInt] = Field(description="links each accelerator has to each chip")


class SwitchChips(Strict):
    """Scale-up switch chips on a switch board or tray; port p of the scaleup group is on chip p // ports_per_chip."""

    count: PositiveInt
    ports_per_chip: PositiveInt
    model: str = ""


class Source(Strict):
    ref: str
    grade: Literal["PRIMARY", "SECONDARY", "DERIVED", "UNCONFIRMED", "ILLUSTRATIVE"] = "PRIMARY"
    note: str = ""


class PowerShelves(Strict):
    """The power shelves a rack of these devices is fed from (a busbar rack: NVL72, OEX)."""

    model: str = Field(description="catalogue power-shelf")
    count: PositiveInt = Field(description="shelves per domain instance (one rack)")


class Physical(Strict):
    """What a device asks of its rack: power, weight, cooling (``catalog/data/physical.yaml``).

    ``power_max_w`` is what rack budgets are held to (the nameplate or the maximum with active
    optics); ``power_typical_w`` is reported beside it. Either left out falls back to the
    device's ``power_w``.
    """

    power_typical_w: NonNegFloat | None = None
    power_max_w: NonNegFloat | None = None
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
    front_first_u: int = Field(0, ge=0, description="units below the first front slot (power entry, management)")


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
    description: str
    vendor: str = ""
    transport: Literal["infiniband", "ethernet", "nvlink", "olink", "ualink", "cxl", "any"] = "any"
    height_u: NonNegInt = Field(1, description="rack units; 0 for a device mounted in the rear (a vertical PDU)")
    power_w: NonNegFloat = 0
    relative_cost: NonNegFloat = 0
    ports: list[PortGroup]
    accelerators: Accelerators | None = None
    internal_scaleup: InternalScaleup | None = None
    switch_chips: SwitchChips | None = None
    memory_gb: NonNegFloat = 0
    physical: Physical | None = None
    slots: ChassisSlots | None = Field(None, description="kind chassis: its board slots")
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
        if (self.kind == "chassis") != (self.slots is not None):
            raise ValueError("a chassis lists its 'slots', and only a chassis does")
        if self.height_u == 0 and self.kind not in ("pdu",):
            raise ValueError("only a pdu (rear-mounted) has height_u 0")
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
    reach_m: dict[float, PositiveFloat] = Field(
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


class Facility(Strict):
    """Site figures a rack budget falls back to where the blueprint declares none of its own."""

    air_cooled_limit_kw: PositiveFloat = Field(description="most a rack may draw on air cooling")
    cables_max: PositiveInt = Field(description="cable ends leaving one rack before its cable management is overfull")
    sources: list[Source] = Field(min_length=1)


class Catalogue(Strict):
    devices: dict[str, DeviceModel]
    media: dict[str, Medium]
    facility: Facility
