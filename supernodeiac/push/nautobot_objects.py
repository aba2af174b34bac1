"""The Nautobot objects a Fabric asks for, as data: what ``snc push nautobot`` makes Nautobot hold.

Computed from the rows of the NetBox import tables (``outputs/netbox.py``: device types,
rack positions and faces, interface types, cable types, colours and lengths), so both
inventories say the same thing, translated to Nautobot 2's data model
(``nautobot/dcim/models``, ``nautobot/extras/models``):

- a location type (``Site``) and a location per blueprint site (NetBox's site);
- statuses are Nautobot's own ``Planned`` (given the content types snc assigns it to);
- manufacturers, device roles (``extras.Role``), device types (``subdevice_role`` parent/child
  for OEX chassis and their boards);
- racks, devices with rack, position and face; a board of a chassis has neither: it is the
  ``installed_device`` of a **device bay** of its chassis named after its slot (F01.., R01..);
- interfaces (every cabled port, Nautobot's type values, speed in kbit/s);
- cables (interface to interface, type, colour, label = the cable ID, length in whole
  centimetres: Nautobot stores a cable's length as an integer);
- the tag :data:`TAG` on every object of a taggable kind, marking what snc manages.

References between objects are :class:`Ref` (kind and natural key), resolved to ids when the
objects are pushed. Pure: no network, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..outputs.base import RenderContext
from ..outputs.netbox import netbox_tables

TAG = "snc"  # the tag on every object snc manages (never deleted without it)
TAG_COLOR = "2f6db5"
STATUS = "Planned"  # Nautobot's built-in status for designed, not yet installed objects
STATUS_COLOR = "00bcd4"
LOCATION_TYPE = "Site"
CM_LIMIT = 32767  # Nautobot's cable length is a PositiveSmallIntegerField: past this, whole metres


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to another wanted (or existing) object by kind and natural key."""

    kind: str
    key: tuple[str, ...]


@dataclass(slots=True)
class Want:
    """One object snc wants in Nautobot: its kind, natural key and the fields snc sets."""

    kind: str
    key: tuple[str, ...]
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return " ".join(self.key)


@dataclass(frozen=True, slots=True)
class Kind:
    """A Nautobot object type as snc pushes it.

    ``endpoint``: its REST path under ``/api/``; ``taggable``: it carries :data:`TAG` (only
    tagged objects are ever deleted); ``scoped``: listed by the site's location (so stale ones
    can be found); ``merge``: set-valued fields that must *contain* snc's values (content types
    of shared objects), never shrunk; ``create_only``: fields sent on create, not compared
    (a status's colour: the status is shared, its look is the owner's).
    """

    name: str
    endpoint: str
    taggable: bool
    scoped: bool = False
    merge: frozenset[str] = frozenset()
    create_only: frozenset[str] = frozenset()


CONTENT = frozenset({"content_types"})
# In push order: each kind refers only to kinds before it.
KINDS: tuple[Kind, ...] = (
    Kind("statuses", "extras/statuses", False, merge=CONTENT, create_only=frozenset({"color"})),
    Kind("tags", "extras/tags", False, merge=CONTENT, create_only=frozenset({"color"})),
    Kind("location-types", "dcim/location-types", False, merge=CONTENT),
    Kind("locations", "dcim/locations", True),
    Kind("manufacturers", "dcim/manufacturers", False),
    Kind("roles", "extras/roles", False, merge=CONTENT, create_only=frozenset({"color"})),
    Kind("device-types", "dcim/device-types", True),
    Kind("racks", "dcim/racks", True, scoped=True),
    Kind("devices", "dcim/devices", True, scoped=True),
    Kind("device-bays", "dcim/device-bays", True, scoped=True),
    Kind("interfaces", "dcim/interfaces", True, scoped=True),
    Kind("cables", "dcim/cables", True, scoped=True),
)
KIND = {k.name: k for k in KINDS}


def _content_type(kind: str) -> str:
    """Nautobot's content type label of a kind (``dcim.devicebay`` for device-bays)."""
    app = KIND[kind].endpoint.split("/")[0]
    model = {"statuses": "status", "device-bays": "devicebay", "device-types": "devicetype", "location-types": "locationtype"}
    return f"{app}.{model.get(kind, kind.rstrip('s'))}"


TAGGED_TYPES = sorted(_content_type(k.name) for k in KINDS if k.taggable)
STATUS_TYPES = sorted(_content_type(k) for k in ("locations", "racks", "devices", "interfaces", "cables"))


def _cable_length(metres: float) -> tuple[int, str]:
    """A cable's length as Nautobot stores it: whole centimetres, rounded up (a cable ordered a
    centimetre short does not reach), or whole metres past the field's range."""
    cm = math.ceil(round(metres * 100, 6))
    if cm <= CM_LIMIT:
        return cm, "cm"
    return math.ceil(metres), "m"


def wanted(ctx: RenderContext) -> Iterator[Want]:
    """Every object the Fabric asks for, kinds in :data:`KINDS` order, each kind sorted by key."""
    tables = netbox_tables(ctx)

    def rows(name: str) -> Iterator[dict[str, str]]:
        header, body = tables[name]
        for row in body:
            yield dict(zip(header, row))

    tag = [Ref("tags", (TAG,))]
    planned = Ref("statuses", (STATUS,))
    yield Want("statuses", (STATUS,), {"name": STATUS, "color": STATUS_COLOR, "content_types": STATUS_TYPES})
    yield Want("tags", (TAG,), {"name": TAG, "color": TAG_COLOR, "content_types": TAGGED_TYPES})
    yield Want("location-types", (LOCATION_TYPE,), {"name": LOCATION_TYPE, "content_types": ["dcim.device", "dcim.rack"]})
    sites = list(rows("01-sites.csv"))
    for s in sites:
        yield Want(
            "locations",
            (s["name"],),
            {"name": s["name"], "location_type": Ref("location-types", (LOCATION_TYPE,)), "status": planned, "tags": tag},
        )
    site = Ref("locations", (sites[0]["name"],))
    for m in rows("02-manufacturers.csv"):
        yield Want("manufacturers", (m["name"],), {"name": m["name"]})
    for r in rows("03-device-roles.csv"):
        yield Want("roles", (r["name"],), {"name": r["name"], "color": r["color"], "content_types": ["dcim.device"]})
    for t in rows("04-device-types.csv"):
        yield Want(
            "device-types",
            (t["manufacturer"], t["model"]),
            {
                "manufacturer": Ref("manufacturers", (t["manufacturer"],)),
                "model": t["model"],
                "part_number": t["part_number"],
                "u_height": int(t["u_height"]),
                "is_full_depth": t["is_full_depth"] == "true",
                "subdevice_role": t["subdevice_role"],
                "tags": tag,
            },
        )
    for r in rows("05-racks.csv"):
        yield Want(
            "racks",
            (r["name"],),
            {
                "name": r["name"],
                "location": site,
                "status": planned,
                "width": int(r["width"]),
                "u_height": int(r["u_height"]),
                "tags": tag,
            },
        )
    boards: list[tuple[str, str]] = []  # (chassis, board) in device order
    for d in rows("06-devices.csv"):
        fields: dict[str, Any] = {
            "name": d["name"],
            "device_type": Ref("device-types", (d["manufacturer"], d["device_type"])),
            "role": Ref("roles", (d["role"],)),
            "status": planned,
            "location": site,
            "tags": tag,
        }
        if d["parent"]:  # a board: its place is its chassis's device bay (Nautobot moves it with the chassis)
            boards.append((d["parent"], d["name"]))
        else:
            fields["rack"] = Ref("racks", (d["rack"],)) if d["rack"] else None
            fields["position"] = int(d["position"]) if d["position"] else None
            fields["face"] = d["face"]
        yield Want("devices", (d["name"],), fields)
    slot = {d.name: d.slot for d in ctx.fabric.devices if d.chassis >= 0}
    bays = sorted((chassis, slot[board], board) for chassis, board in boards)
    for chassis, bay, board in bays:
        yield Want(
            "device-bays",
            (chassis, bay),
            {"device": Ref("devices", (chassis,)), "name": bay, "installed_device": Ref("devices", (board,)), "tags": tag},
        )
    for i in rows("07-interfaces.csv"):
        yield Want(
            "interfaces",
            (i["device"], i["name"]),
            {
                "device": Ref("devices", (i["device"],)),
                "name": i["name"],
                "type": i["type"],
                "status": planned,
                "mgmt_only": i["mgmt_only"] == "true",
                "speed": int(i["speed"]),
                "tags": tag,
            },
        )
    for c in rows("08-cables.csv"):
        length, unit = _cable_length(float(c["length"]))
        yield Want(
            "cables",
            (c["side_a_device"], c["side_a_name"], c["side_b_device"], c["side_b_name"]),
            {
                "termination_a_type": "dcim.interface",
                "termination_a_id": Ref("interfaces", (c["side_a_device"], c["side_a_name"])),
                "termination_b_type": "dcim.interface",
                "termination_b_id": Ref("interfaces", (c["side_b_device"], c["side_b_name"])),
                "type": c["type"],
                "status": planned,
                "label": c["label"],
                "color": c["color"],
                "length": length,
                "length_unit": unit,
                "tags": tag,
            },
        )
