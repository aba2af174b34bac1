"""Small shared blueprint pieces: media policy and naming."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import NonNegFloat, Strict

# Tiers a builder names for its links (Clos: node-leaf, leaf-spine, spine-core; Dragonfly: node-leaf,
# local, global; Dragonfly+: node-leaf, leaf-spine, global; management: node-leaf, leaf-spine).
Tier = Literal["node-leaf", "leaf-spine", "spine-core", "local", "global"]
TIERS: tuple[str, ...] = ("node-leaf", "leaf-spine", "spine-core", "local", "global")
# OpenSM's unicast routing engines a blueprint may pin for an InfiniBand fabric (opensm(8)).
RoutingEngine = Literal["ftree", "updn", "nue", "minhop", "lash", "dfsssp", "sssp"]


class TierPolicy(Strict):
    """Media rules for one tier of a network; they replace the network's own allow/forbid/pin."""

    allow: list[str] | None = Field(None, description="only these media (names or kinds) may be chosen on this tier")
    forbid: list[str] = Field(default_factory=list, description="these media (names or kinds) are never chosen here")
    pin: str | None = Field(None, description="use this medium (name or kind) on this tier; reach is then checked")


class MediaPolicy(Strict):
    """How a network's links get their medium, chosen per cage from the catalogue.

    Names in ``allow``, ``forbid`` and ``pin`` are catalogue media (``dac-2x400g``) or kinds
    (``dac``, ``acc``, ``sr``, ``dr``, ...): a kind stands for the media of that kind in the
    product line of the link's transport and lane rate.
    """

    policy: Literal["cheapest"] = "cheapest"
    margin_m: NonNegFloat = Field(
        0, description="derating: the ordered stock length plus this must be within the rated reach (default off)"
    )
    derate_pct: float = Field(
        0, ge=0, lt=100, description="derating: use only this percentage less than the rated reach (default off)"
    )
    copper_warning_m: NonNegFloat = Field(
        0.25,
        description="warn when a copper cable's ordered length is less than this short of its rated reach "
        "(field lesson: copper at the edge of its reach drops links under load); 0 turns the warning off",
    )
    allow: list[str] | None = Field(None, description="only these media (names or kinds) may be chosen")
    forbid: list[str] = Field(default_factory=list, description="these media (names or kinds) are never chosen")
    pin: str | None = Field(None, description="use this medium (name or kind) for every link; reach is then checked")
    tiers: dict[Tier, TierPolicy] = Field(
        default_factory=dict, description="per-tier allow/forbid/pin: node-leaf, leaf-spine, spine-core, local, global"
    )


END_LABEL = "{site}/{row}/{rack}/U{u:02d}/{device}/{port} > {far_row}/{far_rack}/U{far_u:02d}/{far_device}/{far_port}"
END_LABEL_FIELDS = ("site", "row", "rack", "u", "device", "port", "os_port", "cable")
# The short label on each end of a physical cable, one template per printed line: the cable's
# number, the local end, the far end (its fields: SHORT_LABEL_FIELDS, and far_ + the end's).
SHORT_LABEL = ("{number} {fabric}", "{rack} U{u} {device} {port}", "to {far_rack} U{far_u} {far_device} {far_port}")
SHORT_LABEL_FIELDS = ("number", "fabric", "cable", "row", "rack", "u", "device", "port")


class Naming(Strict):
    cable_id: str = Field("{a}-{a_port}", description="stable ID: keyed by the A end (a port carries one cable)")
    cable_label: str = Field(
        "{a}:{a_port} > {b}:{b_port}", description="a link's label text: a_port and b_port are the ports as printed"
    )
    end_label: str = Field(
        END_LABEL,
        description="label at each end of a cable (TIA-606 practice: the local end, then the far end): "
        "site, row, rack, u, device, port (physical), os_port, cable, and far_ + each of them",
    )
    short_label: list[str] = Field(
        default_factory=lambda: list(SHORT_LABEL),
        min_length=1,
        max_length=6,
        description="the short label printed on each end of a cable, one template per line: number (the cable's "
        "short number), fabric, cable (its ID), row, rack, u, device, port (printed; a multi-port plug's cage), "
        "and far_ + row, rack, u, device, port",
    )
    label_width: int = Field(40, ge=12, le=120, description="characters per short-label line the label stock takes")
    label_stock: Literal["avery-5160", "avery-l7160"] = Field(
        "avery-5160", description="label sheet stock of the printable label sheets (catalog/data/label_stock.yaml)"
    )
    paper: Literal["a4", "letter"] = Field(
        "a4",
        description="paper of the printed outputs: a4 (the cabling workbook on A4, the elevation PDFs on A3) or "
        "letter (the workbook on US Letter, the elevations on Tabloid, 11 x 17 in); landscape both",
    )
    devices: dict[str, str] = Field(
        default_factory=dict,
        description="device name templates by role (leaf, spine, core, mgmt, ...), overriding the builders' defaults",
    )
