"""Bill of materials: devices, cables, transceivers, power and relative cost, all from the catalogue.

``bill_of_materials`` is the pure computation (``snc explain`` reuses it for its totals);
the renderer writes it as ``bom/bom.csv`` (one row per line item, for a spreadsheet) and
``bom/summary.json`` (the same lines plus totals per fabric and overall).

Where the figures come from (catalogue fields, never literals here):

* a device: its model's ``power_w`` and ``relative_cost``;
* a link (cable, connector or cartridge): its medium's ``relative_cost`` (cable plus both ends,
  per link) and ``2 x power_w_per_end`` (transceivers or active plugs at both ends);
* transceivers: ``ceil(transceivers_per_end x 2 x links)`` per fabric and medium, the ceiling
  because a twin-port module (``0.5`` per end) serves two links and an odd link still needs one.
  They are counted, not priced again: the medium's cost and power already include them.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..figures import rounded
from . import RENDERERS, Artifacts, RenderContext
from .csv_safe import CsvWriter
from .stock import ordered_length

NO_MEDIUM = "(none)"  # a link the media policy found nothing for; the reach check reports it


class _Priced:
    """Totals of a BOM line from its count and unit figures (both line kinds carry them)."""

    __slots__ = ()
    count: int
    unit_power_w: float
    unit_cost: float

    @property
    def power_w(self) -> float:
        return self.count * self.unit_power_w

    @property
    def cost(self) -> float:
        return self.count * self.unit_cost


@dataclass(frozen=True, slots=True)
class DeviceLine(_Priced):
    model: str
    role: str
    description: str
    count: int
    unit_power_w: float
    unit_cost: float


@dataclass(frozen=True, slots=True)
class LinkLine(_Priced):
    fabric: str
    kind: str  # cable | connector | cartridge
    medium: str
    length_m: float  # ordered (stock) length
    count: int
    unit_power_w: float  # both ends
    unit_cost: float  # cable plus both ends


@dataclass(frozen=True, slots=True)
class TransceiverLine:
    fabric: str
    medium: str
    links: int
    per_end: float
    count: int


@dataclass(frozen=True, slots=True)
class Bom:
    devices: list[DeviceLine]
    links: list[LinkLine]
    transceivers: list[TransceiverLine]

    def fabrics(self) -> list[str]:
        return sorted({line.fabric for line in self.links})

    def media_power_w(self, fabric: str | None = None) -> float:
        return sum(line.power_w for line in self.links if fabric is None or line.fabric == fabric)

    def media_cost(self, fabric: str | None = None) -> float:
        return sum(line.cost for line in self.links if fabric is None or line.fabric == fabric)

    def device_power_w(self) -> float:
        return sum(line.power_w for line in self.devices)

    def device_cost(self) -> float:
        return sum(line.cost for line in self.devices)


def link_figures(catalogue: Catalogue, medium: str) -> tuple[float, float]:
    """(power W, relative cost) of one link of this medium, both ends included."""
    m = catalogue.media.get(medium)
    return (2 * m.power_w_per_end, m.relative_cost) if m is not None else (0.0, 0.0)


def transceiver_count(catalogue: Catalogue, medium: str, links: int) -> int:
    m = catalogue.media.get(medium)
    return math.ceil(m.transceivers_per_end * 2 * links - 1e-9) if m is not None else 0


def bill_of_materials(catalogue: Catalogue, fabric: Fabric) -> Bom:
    """Count everything once: O(devices + links); cables at their ordered (stock) length."""
    by_model: Counter[tuple[str, str]] = Counter((d.model, d.role) for d in fabric.devices)
    devices = []
    for (model_name, role), count in sorted(by_model.items()):
        model = fabric.models[model_name]
        devices.append(DeviceLine(model_name, role, model.description, count, model.power_w, model.relative_cost))

    # Count by routed length first, then round each distinct (medium, length) up to stock once,
    # through one link that has it: a fabric has far fewer distinct lengths than links.
    t = fabric.links
    stock: dict[tuple[str, float], float] = {}
    by_link: Counter[tuple[str, str, str, float]] = Counter()
    for (s, length_m), count in Counter(zip(t.spec, t.length_m)).items():
        spec = t.specs[s]
        ordered = stock.get((spec.medium, length_m))
        if ordered is None:
            ordered = stock[(spec.medium, length_m)] = ordered_length(catalogue, spec.medium, length_m)
        by_link[(spec.fabric, spec.kind, spec.medium or NO_MEDIUM, ordered)] += count
    links = []
    per_medium: Counter[tuple[str, str]] = Counter()
    for (fab, kind, medium, length), count in sorted(by_link.items()):
        power, cost = link_figures(catalogue, medium)
        links.append(LinkLine(fab, kind, medium, length, count, power, cost))
        per_medium[(fab, medium)] += count

    transceivers = []
    for (fab, medium), count in sorted(per_medium.items()):
        m = catalogue.media.get(medium)
        if m is None or m.transceivers_per_end == 0:
            continue
        transceivers.append(
            TransceiverLine(fab, medium, count, m.transceivers_per_end, transceiver_count(catalogue, medium, count))
        )
    return Bom(devices, links, transceivers)


# -- rendering ------------------------------------------------------------------------------

CSV_COLUMNS = [
    "section",
    "fabric",
    "item",
    "detail",
    "length_m",
    "count",
    "unit_power_w",
    "power_w",
    "unit_relative_cost",
    "relative_cost",
    "description",
]


def _csv(bom: Bom, catalogue: Catalogue) -> bytes:
    w = CsvWriter(CSV_COLUMNS)
    for d in bom.devices:
        figures = [rounded(d.unit_power_w), rounded(d.power_w), rounded(d.unit_cost), rounded(d.cost)]
        w.writerow(["device", "", d.model, d.role, "", d.count, *figures, d.description])
    for k in bom.links:
        m = catalogue.media.get(k.medium)
        figures = [rounded(k.unit_power_w), rounded(k.power_w), rounded(k.unit_cost), rounded(k.cost)]
        description = m.description if m else "no medium chosen"
        w.writerow([k.kind, k.fabric, k.medium, m.kind if m else "", f"{k.length_m:g}", k.count, *figures, description])
    for t in bom.transceivers:
        note = "power and cost included in the medium's link rows"
        w.writerow(["transceiver", t.fabric, t.medium, f"{t.per_end:g} per end", "", t.count, "", "", "", "", note])
    sums = totals(bom)
    for name in ("devices", "media", "total"):
        w.writerow(["total", "", name, "", "", "", "", sums["power_w"][name], "", sums["relative_cost"][name], ""])
    return w.getvalue()


def totals(bom: Bom) -> dict:
    """Counts, power and relative cost of the whole BOM (summary.json's and snc explain's totals)."""
    dp, mp = bom.device_power_w(), bom.media_power_w()
    dc, mc = bom.device_cost(), bom.media_cost()
    return {
        "devices": sum(d.count for d in bom.devices),
        "cables": sum(k.count for k in bom.links if k.kind == "cable"),
        "links": sum(k.count for k in bom.links),
        "transceivers": sum(t.count for t in bom.transceivers),
        "power_w": {"devices": rounded(dp), "media": rounded(mp), "total": rounded(dp + mp)},
        "relative_cost": {"devices": rounded(dc), "media": rounded(mc), "total": rounded(dc + mc)},
    }


def summary(bom: Bom) -> dict:
    """The BOM as plain data (what summary.json holds)."""
    per_fabric = {}
    for fab in bom.fabrics():
        lines = [k for k in bom.links if k.fabric == fab]
        by_medium: Counter[str] = Counter()
        for k in lines:
            by_medium[k.medium] += k.count
        per_fabric[fab] = {
            "links": sum(k.count for k in lines),
            "links_by_medium": dict(sorted(by_medium.items())),
            "transceivers": sum(t.count for t in bom.transceivers if t.fabric == fab),
            "media_power_w": rounded(bom.media_power_w(fab)),
            "media_relative_cost": rounded(bom.media_cost(fab)),
        }
    return {
        "devices": [
            {
                "model": d.model,
                "role": d.role,
                "count": d.count,
                "unit_power_w": rounded(d.unit_power_w),
                "power_w": rounded(d.power_w),
                "unit_relative_cost": rounded(d.unit_cost),
                "relative_cost": rounded(d.cost),
            }
            for d in bom.devices
        ],
        "links": [
            {
                "fabric": k.fabric,
                "kind": k.kind,
                "medium": k.medium,
                "length_m": rounded(k.length_m),
                "count": k.count,
                "power_w": rounded(k.power_w),
                "relative_cost": rounded(k.cost),
            }
            for k in bom.links
        ],
        "transceivers": [
            {"fabric": t.fabric, "medium": t.medium, "links": t.links, "per_end": rounded(t.per_end), "count": t.count}
            for t in bom.transceivers
        ],
        "fabrics": per_fabric,
        "totals": totals(bom),
    }


@RENDERERS.register("bom")
def render_bom(ctx: RenderContext) -> Artifacts:
    bom = bill_of_materials(ctx.catalogue, ctx.fabric)
    doc = {"blueprint": ctx.blueprint.metadata.name, **summary(bom)}
    return {
        "bom/bom.csv": _csv(bom, ctx.catalogue),
        "bom/summary.json": (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode(),
    }
