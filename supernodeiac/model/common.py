"""Small shared blueprint pieces: media policy and naming."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import NonNegFloat, Strict


class MediaPolicy(Strict):
    """How a fabric's cables get their medium."""

    policy: Literal["cheapest"] = "cheapest"
    margin_m: NonNegFloat = Field(0.5, description="reach must cover length + margin (field lesson: DAC at its limit drops)")
    allow: list[str] | None = Field(None, description="only these media may be chosen (catalogue names)")
    pin: str | None = Field(None, description="use this medium for every cable; reach is then checked, not chosen")


class Naming(Strict):
    cable_id: str = Field("{a}-{a_port}", description="stable ID: keyed by the A end (a port carries one cable)")
    cable_label: str = Field("{a}:{a_port} > {b}:{b_port}", description="text printed on the cable's label")
    devices: dict[str, str] = Field(
        default_factory=dict,
        description="device name templates by role (leaf, spine, core, mgmt, ...), overriding the builders' defaults",
    )
