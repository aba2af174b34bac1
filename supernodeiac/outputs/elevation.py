"""Rack elevations: every rack's devices at their units, with power and the cables leaving each.

* ``elevation/racks.csv``: one row per device, rack by rack, bottom up: rack, U, height, chassis slot
  (a board in an OEX chassis shows its slot, F01.. front or R01.. rear, not a U of its own; a 0U PDU
  has no U), device, model, role, group, power (typical and maximum), weight, cooling and the cable
  ends that leave the rack from it;
* ``elevation/totals.csv``: one row per rack in use: units used, power (typical, maximum) against
  the budget, cooling, weight, cable ends leaving against the density limit;
* ``elevation/<row>.svg`` (``<row>-<n>.svg`` for a row wider than one sheet): the front view of each
  rack, drawn directly as SVG: devices as boxes at their units with name, kW and cables; a chassis as
  one box with its front slots (horizontal boards) and its rear slots (vertical boards) drawn across
  it; 0U devices in a strip beside the rack; the rack's totals above it;
* ``elevation/<row>.pdf``: the row for print, front and rear faces on A3 (``elevation_sheets``).

Everything comes from the Fabric (positions) and ``racks`` (loads, budgets); sorted, so the same
blueprint gives the same bytes.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from ..fabric import Device, Fabric
from ..facts.racks import Budget, RackLoad, budgets, cables_leaving, device_order, device_power, rack_loads
from ..util.number_format import rounded
from .base import RENDERERS, SAME_PREFIX, SUBSETS, RenderContext, RowSelection, Stream
from .csv_safe import CsvWriter
from .elevation_sheets import row_inputs, row_pdf, row_sheets

RACK_COLUMNS = [
    "row",
    "rack",
    "u",
    "height_u",
    "chassis",
    "slot",
    "device",
    "model",
    "role",
    "group",
    "power_typical_w",
    "power_max_w",
    "weight_kg",
    "cooling",
    "cables_leaving",
]
TOTAL_COLUMNS = [
    "row",
    "rack",
    "devices",
    "units_used",
    "rack_units",
    "power_typical_kw",
    "power_max_kw",
    "budget_kw",
    "cooling",
    "liquid_devices",
    "weight_kg",
    "weight_budget_kg",
    "cables_leaving",
    "cables_max",
]

# Drawing (presentation choices, not hardware figures).
SHEET_RACKS = 24  # racks per SVG sheet
UNIT_PX = 10
RACK_W = 190
GAP = 70  # between racks (the 0U strip sits in it)
HEAD = 64  # title and rack header above the racks
FILL = {
    "compute": "#f6d5d0",
    "switch": "#d3e3f4",
    "mgmt": "#dcefd8",
    "power": "#fcf0c8",
    "chassis": "#efe3f2",
    "other": "#ececec",
}


def _kind(f: Fabric, d: Device) -> str:
    m = f.models[d.model]
    if m.kind == "chassis":
        return "chassis"
    if m.kind in ("power-shelf", "pdu"):
        return "power"
    if d.group == "mgmt" or m.kind == "console-server":
        return "mgmt"
    if m.accelerators is not None or m.kind in ("node", "compute-board", "memory"):
        return "compute"
    if m.kind in ("switch", "switch-board"):
        return "switch"
    return "other"


def _num(x: float | None) -> str:
    return "" if x is None else f"{rounded(x):g}"


@RENDERERS.register("elevation")
def render_elevation(ctx: RenderContext) -> dict[str, bytes | Stream]:
    return _elevation(ctx)


@SUBSETS.register("elevation")
def render_elevation_rows(ctx: RenderContext, selection: RowSelection) -> dict[str, bytes | Stream]:
    """``snc diff``: the CSVs whole, the sheets and PDFs of the rows of racks that may differ
    (``selection.hall_rows``: a device, a link end, the racks or the budget there), the other
    rows' marked the same."""
    return _elevation(ctx, selection.hall_rows)


def _elevation(ctx: RenderContext, wanted: frozenset[str] | None = None) -> dict[str, bytes | Stream]:
    f = ctx.fabric
    loads = rack_loads(f, ctx.catalogue)
    if not loads:
        return {}
    rows = budgets(ctx.blueprint, ctx.catalogue)
    leaving = cables_leaving(f).tolist()
    typical, maximum = (x.tolist() for x in device_power(f, ctx.catalogue))
    units = ctx.blueprint.site.rack_units
    out: dict[str, bytes | Stream] = {
        "elevation/racks.csv": _racks_csv(f, loads, leaving, typical, maximum),
        "elevation/totals.csv": _totals_csv(loads, rows, units),
    }
    by_row: dict[str, list[RackLoad]] = {}
    for load in loads.values():
        by_row.setdefault(load.row, []).append(load)
    for row, racks in by_row.items():
        sheets = [racks[i : i + SHEET_RACKS] for i in range(0, len(racks), SHEET_RACKS)]
        for n, sheet in enumerate(sheets, 1):
            name = f"elevation/{row}.svg" if len(sheets) == 1 else f"elevation/{row}-{n:02d}.svg"
            if wanted is not None and row not in wanted:
                out[SAME_PREFIX + name] = b""
                continue
            title = f"{ctx.blueprint.metadata.name}: row {row}" + (f", sheet {n} of {len(sheets)}" if len(sheets) > 1 else "")
            out[name] = _svg(f, sheet, rows[row], units, leaving, maximum, title)
    inputs = row_inputs(ctx, leaving, maximum)
    for row, racks in by_row.items():
        if wanted is not None and row not in wanted:
            out[f"{SAME_PREFIX}elevation/{row}.pdf"] = b""
            continue

        def produce(row: str = row, racks: list[RackLoad] = racks) -> list[bytes]:
            title = f"{inputs.design} row {row} rack elevations (front and rear)"
            return [row_pdf(row_sheets(f, row, racks, rows[row], inputs), title, inputs.page)]

        out[f"elevation/{row}.pdf"] = Stream(produce)
    return out


def _racks_csv(f: Fabric, loads: dict[int, RackLoad], leaving: list[int], typical: list[float], maximum: list[float]) -> bytes:
    w = CsvWriter(RACK_COLUMNS)
    for load in loads.values():
        for d in device_order(f, load):
            m = f.models[d.model]
            host = f.devices[d.chassis].name if d.chassis >= 0 else ""
            w.writerow(
                [
                    load.row,
                    load.name,
                    d.u if d.height_u and d.chassis < 0 else "",
                    d.height_u if d.chassis < 0 else "",
                    host,
                    d.slot,
                    d.name,
                    d.model,
                    d.role,
                    d.group,
                    _num(typical[d.index]),
                    _num(maximum[d.index]),
                    _num(m.weight_kg),
                    m.cooling,
                    leaving[d.index],
                ]
            )
    return w.getvalue()


def _totals_csv(loads: dict[int, RackLoad], rows: dict[str, Budget], units: int) -> bytes:
    w = CsvWriter(TOTAL_COLUMNS)
    for load in loads.values():
        b = rows[load.row]
        w.writerow(
            [
                load.row,
                load.name,
                len(load.devices),
                load.units,
                units,
                f"{load.power_typical_w / 1000:.2f}",
                f"{load.power_max_w / 1000:.2f}",
                _num(b.power_kw) if b.declared else "",
                b.cooling if b.declared else "",
                len(load.liquid),
                # "+": some devices have no catalogue weight; nothing known: empty
                "" if load.unweighed == len(load.devices) else _num(load.weight_kg) + ("+" if load.unweighed else ""),
                _num(b.weight_kg) if b.declared else "",
                load.cables,
                b.cables_max,
            ]
        )
    return w.getvalue()


def _text(x: float, y: float, body: str, size: float = 8, anchor: str = "start", weight: str = "normal") -> str:
    return f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}">{escape(body)}</text>'


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str, extra: str = "") -> str:
    return (
        f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}" stroke="#555" stroke-width="0.6"{extra}>'
        f"<title>{escape(title)}</title></rect>"
    )


def _svg(
    f: Fabric, racks: list[RackLoad], budget: Budget, units: int, leaving: list[int], maximum: list[float], title: str
) -> bytes:
    width = len(racks) * (RACK_W + GAP) + GAP
    height = HEAD + units * UNIT_PX + 40
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        _text(GAP, 18, title, 14, weight="bold"),
    ]
    for i, load in enumerate(racks):
        parts.extend(_rack(f, load, budget, units, leaving, maximum, GAP + i * (RACK_W + GAP)))
    parts.append("</svg>")
    return ("\n".join(parts) + "\n").encode()


def _y(units: int, u: int, height_u: int) -> float:
    """Top of a device of ``height_u`` units whose lowest unit is ``u`` (U1 at the bottom)."""
    return HEAD + (units - (u + height_u - 1)) * UNIT_PX


def _rack(f: Fabric, load: RackLoad, budget: Budget, units: int, leaving: list[int], maximum: list[float], x: float) -> list[str]:
    limit = f" / {budget.power_kw:g}" if budget.declared and budget.power_kw is not None else ""
    cooling = f" {budget.cooling}" if budget.declared else ""
    out = [
        f'<g class="rack" id={quoteattr("rack-" + load.name)}>',
        _text(x, HEAD - 22, f"{load.name}", 11, weight="bold"),
        _text(x, HEAD - 8, f"{load.power_kw:.1f}{limit} kW{cooling}, {load.units}/{units}U, {load.cables} cables", 8),
        f'<rect x="{x:g}" y="{HEAD}" width="{RACK_W}" height="{units * UNIT_PX}" fill="#fafafa" stroke="#222" stroke-width="1"/>',
    ]
    for u in range(1, units + 1, 4):
        out.append(_text(x - 3, _y(units, u, 1) + UNIT_PX - 2, str(u), 6, anchor="end"))
    zero_u: list[Device] = []
    for d in device_order(f, load):
        if d.chassis >= 0:
            continue  # drawn inside its chassis
        if d.height_u == 0 or d.u <= 0:
            zero_u.append(d)
            continue
        m = f.models[d.model]
        y = _y(units, d.u, d.height_u)
        h = d.height_u * UNIT_PX
        supply = m.physical.supply_w if m.physical is not None else None
        power = f"supplies {supply / 1000:.0f} kW" if supply else f"{maximum[d.index] / 1000:.1f} kW"
        label = f"U{d.u} {d.name} {power}, {leaving[d.index]} cables"
        out.append(_rect(x + 2, y, RACK_W - 4, h, FILL[_kind(f, d)], label, f' data-device={quoteattr(d.name)} data-u="{d.u}"'))
        if m.kind == "chassis":
            out.extend(_chassis(f, load, d, x + 2, y, RACK_W - 4, h, units, leaving, maximum))
        else:
            out.append(_text(x + 6, y + min(h, UNIT_PX) - 2.5, label, 7))
    for k, d in enumerate(zero_u):
        # 0U devices (vertical PDUs, in the rear): a strip beside the rack.
        label = f"{d.name} (0U, rear)"
        sy = HEAD + k * 40
        out.append(_rect(x + RACK_W + 4, sy, 10, 36, FILL[_kind(f, d)], label, f' data-device={quoteattr(d.name)} data-u="0"'))
        out.append(
            f'<text x="{x + RACK_W + 11:g}" y="{sy + 2:g}" font-size="6" text-anchor="end" '
            f'transform="rotate(-90 {x + RACK_W + 11:g} {sy + 2:g})">{escape(d.role)}</text>'
        )
    out.append("</g>")
    return out


def _chassis(
    f: Fabric,
    load: RackLoad,
    chassis: Device,
    x: float,
    y: float,
    w: float,
    h: float,
    units: int,
    leaving: list[int],
    maximum: list[float],
) -> list[str]:
    """A chassis: its boards in their slots. Front boards horizontal at their units across the left
    part; rear boards as vertical strips across the right part, each spanning the chassis."""
    m = f.models[chassis.model]
    boards = [f.devices[i] for i in load.devices if f.devices[i].chassis == chassis.index]
    front = sorted((d for d in boards if d.slot.startswith("F")), key=lambda d: d.slot)
    rear = sorted((d for d in boards if d.slot.startswith("R")), key=lambda d: d.slot)
    slots = m.slots
    rear_w = w * 0.35
    out = [
        _text(x + 4, y + 9, f"{chassis.name} ({chassis.model}), front slots", 7),
        _text(x + w - rear_w / 2, y + 9, "rear slots", 7, anchor="middle"),
    ]
    for d in front:
        by = _y(units, d.u, d.height_u)
        kw = maximum[d.index] / 1000
        label = f"{d.slot} {d.name} {kw:.1f} kW, {leaving[d.index]} cables"
        out.append(
            _rect(x + 3, by + 1, w - rear_w - 8, d.height_u * UNIT_PX - 2, FILL["compute"], label,
                  f' data-device={quoteattr(d.name)} data-slot="{d.slot}" data-u="{d.u}"')
        )  # fmt: skip
        out.append(_text(x + 6, by + d.height_u * UNIT_PX - 5, f"{d.slot} {d.name} {kw:.1f} kW", 7))
    n_rear = slots.rear if slots is not None else max(len(rear), 1)
    strip = rear_w / n_rear
    top = y + 12
    for k, d in enumerate(rear):
        sx = x + w - rear_w + k * strip
        label = f"{d.slot} {d.name} {maximum[d.index] / 1000:.1f} kW, {leaving[d.index]} cables"
        out.append(
            _rect(sx, top, strip - 1, h - 14, FILL["switch"], label, f' data-device={quoteattr(d.name)} data-slot="{d.slot}"')
        )
        out.append(
            f'<text x="{sx + strip / 2:g}" y="{top + 4:g}" font-size="6" text-anchor="end" '
            f'transform="rotate(-90 {sx + strip / 2:g} {top + 4:g})">{escape(d.slot)}</text>'
        )
    return out
