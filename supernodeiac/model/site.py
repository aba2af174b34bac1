"""The site: rows of racks and the geometry that gives every cable its length."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Name, NonNegFloat, NonNegInt, PositiveFloat, PositiveInt, RackCount, Strict


class RackBudget(Strict):
    """What one rack position can take. Keys left out have no limit, except the cooling's air
    limit and the cable density, which fall back to the catalogue's facility figures."""

    power_kw: PositiveFloat | None = Field(None, description="power per rack (kW), held against the devices' maximum power")
    cooling: Literal["air", "liquid"] | None = Field(None, description="air (the default) or liquid (direct liquid cooling)")
    air_cooled_limit_kw: PositiveFloat | None = Field(
        None, description="most an air-cooled rack may draw; default: the catalogue's facility figure"
    )
    weight_kg: PositiveFloat | None = Field(None, description="load per rack (kg), where the floor or the rack limits it")
    cables_max: PositiveInt | None = Field(
        None, description="cable ends leaving one rack before it is overfull (a warning); default: the catalogue's figure"
    )


class Row(Strict):
    name: Name
    racks: RackCount = Field(description="racks in the row, numbered 1.. along it")
    position: NonNegInt | None = Field(None, description="row index across the hall; default: order in the list")
    planned_racks: RackCount | None = Field(
        None,
        description="racks the row is planned to hold (default: racks); the management aggregation keeps a block of "
        "uplink ports per row this size, so racks added up to it move no existing management cable",
    )
    budget: RackBudget | None = Field(None, description="this row's rack budget; the keys given replace the site's")

    @property
    def capacity(self) -> int:
        """Rack positions the row is planned for: ``planned_racks``, or its racks once it has grown
        past the plan (which then re-plans the rows after it, as growth past grow_to_sus does)."""
        return max(self.racks, self.planned_racks or 0)


class Route(Strict):
    """A cable route other than the overhead tray. ``side-by-side``: consecutive racks of one row
    bayed together (side panels open or cut through), so a cable between two of them runs sideways
    at its devices' height instead of climbing to the tray: short copper between neighbours."""

    type: Literal["side-by-side"] = "side-by-side"
    racks: list[Name] = Field(min_length=2, description="rack names, consecutive positions of one row, in any order")
    slack_m: NonNegFloat | None = Field(None, description="service loop of such a cable; default: in_rack_slack_m")


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
    budget: RackBudget | None = Field(None, description="every rack's budget (power, cooling, weight, cable density)")
    rows: list[Row] = Field(min_length=1)
    routes: list[Route] = Field(
        default_factory=list, description="cable routes besides the overhead tray (side-by-side racks), checked when built"
    )


class Placement(Strict):
    """Where a group of devices goes: racks of one row, filled in order of device index.

    Device i of the group lands in rack ``first_rack + i // per_rack`` at U
    ``first_u + (i % per_rack) * (height + gap_u)``: a pure function of the device's index, so
    adding devices never moves the ones already placed.

    ``follow`` instead of ``row``: the racks the named groups occupy (in their devices' order,
    across as many rows as they span), so switches go top-of-rack into the compute racks;
    ``first_rack`` then counts in that list. Nodes added to a followed group take new racks at the
    end of the list, so the switches already placed stay where they are.
    """

    row: Name | None = Field(None, description="a row of site.rows (or give follow)")
    follow: list[Name] | None = Field(
        None, min_length=1, description="node groups (or domains) whose racks this placement uses, top-of-rack"
    )
    first_rack: PositiveInt = 1
    per_rack: PositiveInt = 1
    first_u: PositiveInt = 1
    gap_u: NonNegInt = Field(0, description="free units between devices in a rack")

    @model_validator(mode="after")
    def _one_target(self) -> Placement:
        if (self.row is None) == (self.follow is None):
            raise ValueError("give either 'row' (a row of site.rows) or 'follow' (groups whose racks to use)")
        return self
