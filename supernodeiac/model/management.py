"""The out-of-band management network: a switch per rack, every BMC cabled, uplinks; optional
console servers and rack PDUs, and an out-of-band path for the aggregation switches themselves."""

from __future__ import annotations

from pydantic import Field

from .base import DeviceCount, PositiveInt, Strict
from .common import MediaPolicy
from .site import Placement


class Aggregation(Strict):
    switch: str = Field(description="catalogue switch the rack switches uplink to")
    count: DeviceCount = 2
    placement: Placement
    oob_switch: str | None = Field(
        None,
        description="catalogue switch that takes the aggregation switches' own management ports (an out-of-band "
        "path that does not run through them); default: the rack switch model",
    )
    oob_placement: Placement | None = Field(
        None,
        description="where the OOB switches go (one per oob_switch's worth of aggregation switches); "
        "default: stacked just above the last aggregation switch",
    )


class Consoles(Strict):
    """A console (serial) server in every rack with console ports: each switch's RJ45 console is cabled to it."""

    model: str = Field("console-48", description="catalogue console-server")
    u: PositiveInt | None = Field(None, description="U of the console server; default: just below the rack switch")


class Pdus(Strict):
    """Rack PDUs (0U, in the rear) with a network port each, in every rack that holds devices and no power shelves."""

    model: str = Field("pdu-3ph", description="catalogue pdu")
    per_rack: PositiveInt = Field(3, description="PDUs per rack (the H100 RA has 3 per compute rack)")


class Management(Strict):
    switch: str = Field("sn2201", description="catalogue switch placed in every rack with management ports")
    u: PositiveInt | None = Field(None, description="U of the rack switch; default: the rack's top unit")
    uplinks: PositiveInt = Field(
        1, description="links from each rack switch into the aggregation layer (round-robin over its switches)"
    )
    aggregation: Aggregation | None = None
    console: Consoles | None = Field(None, description="console servers for the switches' serial ports")
    pdus: Pdus | None = Field(None, description="rack PDUs on the management network")
    media: MediaPolicy | None = None
