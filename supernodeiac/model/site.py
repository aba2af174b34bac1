"""The site: rows of racks and the geometry that gives every cable its length."""

from __future__ import annotations

from pydantic import Field

from .base import Name, NonNegFloat, NonNegInt, PositiveFloat, PositiveInt, RackCount, Strict


class Row(Strict):
    name: Name
    racks: RackCount = Field(description="racks in the row, numbered 1.. along it")
    position: NonNegInt | None = Field(None, description="row index across the hall; default: order in the list")


class Site(Strict):
    name: Name | None = Field(None, description="site name for cable labels (default: metadata.name)")
    rack_units: PositiveInt = 48
    unit_height_m: PositiveFloat = 0.04445
    rack_pitch_m: PositiveFloat = Field(0.6, description="centre-to-centre distance of racks in a row")
    row_pitch_m: PositiveFloat = Field(3.0, description="centre-to-centre distance of rows (rack depth + aisle)")
    tray_height_m: NonNegFloat = Field(0.5, description="height of the cable tray above the rack tops")
    slack_m: NonNegFloat = Field(1.0, description="service loop added to every cable between racks")
    in_rack_slack_m: NonNegFloat = Field(0.3, description="service loop added to every cable inside one rack")
    rack_name: str = Field("{row}{rack:02d}", description="rack naming template: {row} name, {rack} 1-based")
    rows: list[Row] = Field(min_length=1)


class Placement(Strict):
    """Where a group of devices goes: racks of one row, filled in order of device index.

    Device i of the group lands in rack ``first_rack + i // per_rack`` at U
    ``first_u + (i % per_rack) * (height + gap_u)``: a pure function of the device's index, so
    adding devices never moves the ones already placed.
    """

    row: Name
    first_rack: PositiveInt = 1
    per_rack: PositiveInt = 1
    first_u: PositiveInt = 1
    gap_u: NonNegInt = Field(0, description="free units between devices in a rack")
