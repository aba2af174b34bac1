"""A :class:`~supernodeiac.diff.Diff` as text (a terminal, a work-order list), Markdown (a
pull-request comment: counts first, details folded) or JSON (everything, for tools).

Text and Markdown list at most ``limit`` rows per group of changes (JSON always lists all), and
group what changes the same way: cables by (change, fabric, roles of the two ends), devices by
(change, role, model), files by their path with the numbers taken out (the 512 switch configs of
one role are one line).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..util import markdown as md
from . import Diff
from .artifacts import CountDelta, FileChange
from .fabric import Cable, CableChange, DeviceChange

DIFF_FORMATS = ["text", "markdown", "json"]
CABLE_CHANGES = ("moved", "replaced", "relabelled", "removed", "added")  # the order a crew works in
DEVICE_CHANGES = ("removed", "moved", "replaced", "renamed", "added")
MARKDOWN_LIMIT = 25  # rows per table in a pull-request comment
MARKDOWN_BUDGET = 60_000  # characters: GitHub refuses comments over 65,536

T = TypeVar("T")
K = TypeVar("K")


def to_json(d: Diff) -> str:
    return json.dumps(d.as_dict(), indent=2, sort_keys=True) + "\n"


# -- shared wording ----------------------------------------------------------------------------------


def verdict(d: Diff) -> str:
    """One sentence a reviewer acts on."""
    counts = Counter(c.change for c in d.fabric.cables)
    disturbed = counts["moved"] + counts["removed"] + counts["replaced"]
    if d.empty:
        return "No change: the Fabric and every output are identical."
    if not d.fabric.cables and not d.fabric.devices:
        return "No physical change: only outputs differ (see Files)."
    if disturbed == 0:
        relabel = f" ({counts['relabelled']} relabelled)" if counts["relabelled"] else ""
        return f"Additions only: no existing cable moves{relabel}."
    parts = [f"{counts[c]} {c}" for c in ("moved", "replaced", "removed") if counts[c]]
    return f"Existing cabling changes: {', '.join(parts)}; see the work orders."


def _counts_line(kind: str, counts: Counter[str], order: Sequence[str]) -> str:
    shown = [f"{counts[c]:,} {c}" for c in order if counts[c]]
    return f"{kind}: " + (", ".join(shown) if shown else "none")


def _file_group(path: str) -> str:
    return re.sub(r"\d+", "#", path)


def _cable_row(c: CableChange) -> list[str]:
    """Order, cable ID, what to do, where.

    A move names each moved end with its OS and printed port, old and new, and the labels to
    print again: the cable label and both end labels (each end's label names the far end too).
    """
    if c.change == "moved" and c.old and c.new:
        ends = c.moved.split("+")
        what = "; ".join(f"{side.upper()} end {getattr(c.old, side).text()} -> {getattr(c.new, side).text()}" for side in ends)
        label = f"label {c.old.label!r}" + (f" -> {c.new.label!r}" if c.new.label != c.old.label else "")
        plug = f"; replace {c.old.what()} -> {c.new.what()}" if c.old.plug() != c.new.plug() else ""
        return [c.change, c.cable.id, f"{label}; {what}{plug}{_end_labels(c)}", " ".join(c.racks)]
    if c.change == "relabelled" and c.old and c.new:
        return [
            c.change,
            c.cable.id,
            f"{c.old.id} {c.old.label!r} -> {c.new.id} {c.new.label!r}{_end_labels(c)}",
            " ".join(c.racks),
        ]
    if c.change == "replaced" and c.old and c.new:
        return [c.change, c.cable.id, f"{_ends(c.new)}: {c.old.what()} -> {c.new.what()}", " ".join(c.racks)]
    cab = c.cable
    return [c.change, cab.id, f"{_ends(cab)}, {cab.what()}, label {cab.label!r}", " ".join(c.racks)]


def _end_labels(c: CableChange) -> str:
    """The end labels that change, old -> new (empty when both stay)."""
    assert c.old and c.new
    parts = [
        f"{side.upper()} end label {getattr(c.old, side + '_label')!r} -> {getattr(c.new, side + '_label')!r}"
        for side in ("a", "b")
        if getattr(c.old, side + "_label") != getattr(c.new, side + "_label")
    ]
    return "; " + "; ".join(parts) if parts else ""


def _ends(c: Cable) -> str:
    return f"{c.a.text()} <> {c.b.text()}"


def _device_row(d: DeviceChange) -> list[str]:
    dev = d.device
    if d.change == "moved" and d.old and d.new:
        return [d.change, dev.name, f"{dev.model} {dev.role}", f"{d.old.place()} -> {d.new.place()}"]
    if d.change == "replaced" and d.old and d.new:
        return [d.change, dev.name, f"{d.old.model} -> {d.new.model}", d.new.place()]
    if d.change == "renamed" and d.old and d.new:
        return [d.change, f"{d.old.name} -> {d.new.name}", f"{dev.model} {dev.role}", dev.place()]
    return [d.change, dev.name, f"{dev.model} {dev.role} ({dev.group})", dev.place()]


def _grouped(items: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    groups: dict[K, list[T]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return groups


def _delta(c: CountDelta) -> str:
    return f"{c.delta:+g}"


FILE_KEYS = 10  # changed keys listed per file in text unless --limit says otherwise
TEXT_WIDTH = 200  # characters per line of the text report at most: longer rows continue indented


@dataclass
class DeviceOrder:
    """Devices that move the same way (role, model, old rack, new rack), with the cables that follow
    them: one work order ("re-rack 8 spines N03 -> N04; their 512 cables follow")."""

    role: str
    model: str
    old_rack: str
    new_rack: str
    devices: list[DeviceChange]
    cables: list[CableChange]

    @property
    def verb(self) -> str:
        return "re-rack" if self.old_rack != self.new_rack else "move within rack"

    def title(self) -> str:
        names = [x.device.name for x in self.devices]
        shown = ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"
        where = f"{self.old_rack or 'unplaced'} -> {self.new_rack or 'unplaced'}"
        if self.old_rack == self.new_rack:
            where = self.new_rack
        kinds = Counter(f"{c.cable.fabric} {'-'.join(c.cable.roles)}" for c in self.cables)
        follow = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items())) or "none"
        return (
            f"{self.verb} {len(names):,} {self.role} {self.model} {where} ({shown}); "
            f"their {len(self.cables):,} cables follow ({follow})"
        )

    def device_of(self, c: CableChange) -> str:
        """The device of this order that ``c`` follows."""
        names = {x.device.name for x in self.devices}
        assert c.new is not None
        return next(getattr(c.new, e).device for e in c.moved.split("+") if getattr(c.new, e).device in names)

    def as_dict(self) -> dict:
        return {
            "order": self.verb,
            "role": self.role,
            "model": self.model,
            "old_rack": self.old_rack,
            "new_rack": self.new_rack,
            "devices": [x.device.name for x in self.devices],
            "cables": [c.cable.id for c in self.cables],
        }


def device_orders(d: Diff) -> tuple[list[DeviceOrder], list[CableChange], list[DeviceChange]]:
    """Moved devices grouped into work orders, each with the moved cables whose moved ends are on
    its devices (the same port, the device elsewhere); the cable and device changes left over."""
    moved = {x.device.name: x for x in d.fabric.devices if x.change == "moved" and x.old and x.new}
    owner: dict[str, tuple[str, str, str, str]] = {}
    for name, x in moved.items():
        assert x.old and x.new
        owner[name] = (x.device.role, x.device.model, x.old.rack, x.new.rack)
    follows: dict[tuple[str, str, str, str], list[CableChange]] = defaultdict(list)
    rest: list[CableChange] = []
    for c in d.fabric.cables:
        key = None
        if c.change == "moved" and c.old and c.new:
            # An end that stays on the same port of a moved device: the cable goes with that device
            # (its other end, if it moved too, is re-patched: a rack's own management switch).
            keys = [
                owner[n.device]
                for e in c.moved.split("+")
                if (n := getattr(c.new, e)).device in owner
                and getattr(c.old, e).device == n.device
                and getattr(c.old, e).port == n.port
            ]
            key = min(keys) if keys else None
        if key is None:
            rest.append(c)
        else:
            follows[key].append(c)
    groups: dict[tuple[str, str, str, str], list[DeviceChange]] = defaultdict(list)
    for name, x in moved.items():
        groups[owner[name]].append(x)
    orders = [DeviceOrder(k[0], k[1], k[2], k[3], devs, follows.get(k, [])) for k, devs in sorted(groups.items())]
    others = [x for x in d.fabric.devices if x.device.name not in moved]
    return orders, rest, others


def _follow_row(c: CableChange, device: str) -> str:
    """A cable that follows ``device``: its port there and cable ID, and a new plug if any (the
    ports stay; the labels are reprinted from cables.csv)."""
    assert c.old and c.new
    ends = c.moved.split("+")
    mine = [e for e in ends if getattr(c.new, e).device == device and getattr(c.old, e).device == device]
    row = f"{'/'.join(getattr(c.new, e).port for e in mine) or '-'}  {c.cable.id}"
    # The far end re-patched (a rack's own management switch): where it goes, old -> new. The
    # device and its rack are the order's heading, the labels are reprinted from cables.csv.
    parts = [f"far end {getattr(c.old, e).text()} -> {getattr(c.new, e).text()}" for e in ends if e not in mine]
    if plug := _plug_change(c.old, c.new):
        parts.append(plug)
    return "; ".join([row, *parts])


def _plug_change(old: Cable, new: Cable) -> str:
    """What a technician swaps (empty for nothing), only what differs: medium, length, part, modules."""
    parts = []
    if old.medium != new.medium:
        parts.append(f"{old.medium} -> {new.medium}")
    if old.length_m != new.length_m:
        parts.append(f"{old.length_m:g} m -> {new.length_m:g} m")
    if old.part != new.part and new.part:
        parts.append(f"({new.part})")
    if old.modules != new.modules:
        parts.append(f"modules {'/'.join(m or '-' for m in new.modules)}")
    return " ".join(parts)


_BREAKS = ("; ", "  ", ": ", ", ", " ")  # where a long line breaks, most natural first


def _wrap(line: str, width: int = TEXT_WIDTH) -> list[str]:
    """A report line as lines of at most ``width`` characters: broken after the last '; ' (else
    column gap, ': ', ', ', space) that fits, continuing indented; a word longer than a line is cut."""
    out: list[str] = []
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    while len(line) > width:
        floor = len(indent) + 10
        cut = -1
        for sep in _BREAKS:
            at = line.rfind(sep, floor, width - len(sep) + 1)
            if at > 0:
                cut = at + len(sep)
                break
        if cut < 0:
            cut = width
        out.append(line[:cut].rstrip())
        line = indent + line[cut:].lstrip()
    out.append(line)
    return out


def _number(x: float) -> str:
    return f"{x:,.1f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x):,}"


def headline_text(d: Diff) -> str:
    """Cost, power, optics and cables, old -> new (delta), for the first lines of a report."""
    from . import HEADLINE

    parts = []
    for key, words in HEADLINE:
        if key not in d.totals:
            continue
        old, new = d.totals[key]
        delta = new - old
        parts.append(
            f"{words} {_number(old)} -> {_number(new)}" + (f" ({'+' if delta > 0 else ''}{_number(delta)})" if delta else "")
        )
    return ", ".join(parts)


# -- text --------------------------------------------------------------------------------------------------


def to_text(d: Diff, limit: int | None = None, file_keys: int | None = FILE_KEYS) -> str:
    """The report for a terminal: ``limit`` rows per group (None: all), ``file_keys`` changed keys
    per file when ``limit`` is None (None: all); lines at most :data:`TEXT_WIDTH` characters."""
    out: list[str] = []
    w = out.append
    w(f"snc diff {d.old.label} -> {d.new.label}")
    w(
        f"  devices {d.old.devices:,} -> {d.new.devices:,}, links {d.old.links:,} -> {d.new.links:,}, "
        f"errors {d.old.errors} -> {d.new.errors}, warnings {d.old.warnings} -> {d.new.warnings}"
    )
    w(verdict(d))
    if d.totals:
        w("  " + headline_text(d))
    w(_counts_line("cables", Counter(c.change for c in d.fabric.cables), CABLE_CHANGES))
    w(_counts_line("devices", Counter(x.change for x in d.fabric.devices), DEVICE_CHANGES))
    if d.artifacts is not None:
        w(_counts_line("files", Counter(f.status for f in d.artifacts.files), ("changed", "removed", "added")))
    racks = d.fabric.racks()
    if racks:
        w(f"racks touched: {len(racks):,}")
    for title, found in (("New findings", d.new_findings), ("Resolved findings", d.resolved_findings)):
        if found:
            w("")
            w(f"{title} ({len(found):,})")
            for severity, rule, message in found if limit is None else found[:limit]:
                w(f"  {severity}[{rule}]: {message}")
            if limit is not None and len(found) > limit:
                w(f"  ... {len(found) - limit:,} more (--limit 0 lists all)")
    orders, cables, devices = device_orders(d)
    if orders:
        w("")
        w("Device orders (each device moves with its cables: same ports, labels reprinted from cables.csv)")
        for order in orders:
            w(f"  {order.title()}")
            by_device = _grouped(order.cables, order.device_of)
            for x in order.devices:
                assert x.old and x.new
                mine = by_device.get(x.device.name, [])
                w(f"    {x.device.name}  {x.old.place()} -> {x.new.place()}: {len(mine):,} cables (port, cable, new plug)")
                for c in mine if limit is None else mine[:limit]:
                    w(f"      {_follow_row(c, x.device.name)}")
                if limit is not None and len(mine) > limit:
                    w(f"      ... {len(mine) - limit:,} more cables (--limit 0 lists all; --format json has every one)")

    if cables:
        w("")
        w("Cables" + (" (not part of a device order)" if orders else ""))
        for key, changes in sorted(_grouped(cables, CableChange.group).items(), key=_order(CABLE_CHANGES)):
            change, fabric, roles = key
            w(f"  {change} {len(changes):,}: {fabric} {roles}")
            for row in _limited(changes, limit, "cables"):
                w("    " + (row if isinstance(row, str) else f"{row[1]}  {row[2]}  [{row[3]}]"))
    if devices:
        w("")
        w("Devices")
        for key, device_changes in sorted(_grouped(devices, DeviceChange.group).items(), key=_order(DEVICE_CHANGES)):
            change, role, model = key
            w(f"  {change} {len(device_changes):,}: {role} {model}")
            for row in _limited(device_changes, limit, "devices", _device_row):
                w("    " + (row if isinstance(row, str) else f"{row[1]}  {row[2]}  [{row[3]}]"))
    if racks:
        w("")
        w("Work by rack (orders touching each rack)")
        ranked = sorted(racks.items(), key=lambda x: (-x[1], x[0]))
        shown = ranked if limit is None else ranked[:limit]
        w(
            "  "
            + ", ".join(f"{r} {n}" for r, n in shown)
            + (f", ... {len(ranked) - len(shown)} more" if len(shown) < len(ranked) else "")
        )
    if d.artifacts is not None and d.artifacts.files:
        w("")
        w(f"Files ({d.artifacts.unchanged:,} unchanged)")
        for pattern, files in sorted(_grouped(d.artifacts.files, lambda f: (f.status, _file_group(f.path))).items()):
            status, group = pattern
            if len(files) > 3:
                w(f"  {status} {len(files):,} files {group}")
                keys = Counter(_file_group(k.path) for f in files for k in f.keys)
                for group_name, n in keys.most_common(limit or 10):
                    w(f"    {group_name} ({n} files)")
                continue
            for f in files:
                w(f"  {f.status} {f.path}: {f.summary()}")
                listed = limit if limit is not None else file_keys  # detail: the counts below total them
                for k in f.keys[:listed]:
                    w(f"    {k.status} {k.path}" + (f": {_short(k.old)} -> {_short(k.new)}" if k.status == "changed" else ""))
                if listed is not None and len(f.keys) > listed:
                    w(f"    ... {len(f.keys) - listed:,} more keys (--limit 0 lists all; --format json has every one)")
                if f.kind == "csv" and not f.counts:
                    for what, examples in f.row_examples.items():
                        w(
                            f"    {what}: "
                            + ", ".join(examples[: limit or 10])
                            + (" ..." if f.rows.get(what, 0) > len(examples[: limit or 10]) else "")
                        )
        counts = d.artifacts.counts
        if counts:
            w("")
            w("Counts (bill of materials)")
            for count in counts:
                w(f"  {count.file}: {count.label()}: {count.old:g} -> {count.new:g} ({_delta(count)})")
    for notice in d.notices:
        w(f"notice: {notice}")
    return "\n".join(wrapped for line in out for wrapped in _wrap(line)) + "\n"


def _order(order: Sequence[str]) -> Callable[[tuple], tuple]:
    rank = {c: i for i, c in enumerate(order)}
    return lambda item: (rank.get(item[0][0], len(rank)), item[0])


def _limited(changes: list, limit: int | None, what: str, row: Callable[..., list] = _cable_row) -> list:
    rows: list = [row(c) for c in (changes if limit is None else changes[:limit])]
    if limit is not None and len(changes) > limit:
        rows.append(f"... {len(changes) - limit:,} more {what} (--limit 0 lists all; --format json has every one)")
    return rows


def _short(value: object) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


# -- Markdown -----------------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    """Text from the blueprint (names, parts, messages) shown as text: no markup, no HTML, no
    column break, no mention (``util/markdown.py``); snc's own Markdown (:class:`md.Markdown`) as it is."""
    return md.cell(text)


def _table(header: list[str], rows: Iterable[list[str]], align: Sequence[str] = ()) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align or ["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def _details(summary: str, body: list[str]) -> list[str]:
    """A folded section; its summary is raw HTML (no Markdown escapes there), so entities."""
    return ["<details>", f"<summary>{md.html_text(summary)}</summary>", "", *body, "", "</details>", ""]


FULL_LIST = (
    "the full list: `snc diff --format text --limit 0 OLD NEW > snc-diff.txt` (or `--format json`), kept as a workflow artifact"
)


def _more(total: int, shown: int, what: str) -> list[str]:
    return ["", f"_{total - shown:,} more {what} not shown; {FULL_LIST}._"] if total > shown else []


def to_markdown(d: Diff, limit: int | None = MARKDOWN_LIMIT) -> str:
    lim = limit if limit is not None else 10**9
    cables = Counter(c.change for c in d.fabric.cables)
    devices = Counter(x.change for x in d.fabric.devices)
    files = Counter(f.status for f in d.artifacts.files) if d.artifacts else Counter()
    racks = d.fabric.racks()
    out: list[str] = [
        f"### snc diff: {md.code(d.old.label, in_table=False)} → {md.code(d.new.label, in_table=False)}",
        "",
        f"**{verdict(d)}**",
        "",
    ]
    head = ["", *CABLE_CHANGES]
    rows = [["cables", *(f"{cables[c]:,}" for c in CABLE_CHANGES)]]
    rows.append(["devices", *(f"{devices[c]:,}" if c in DEVICE_CHANGES else "" for c in CABLE_CHANGES)])
    out += _table(head, rows, ["---", *["---:"] * len(CABLE_CHANGES)])
    extra = [f"racks touched: **{len(racks):,}**"]
    if d.artifacts is not None:
        extra.append(
            "files: "
            + ", ".join(f"{files[s]:,} {s}" for s in ("changed", "added", "removed"))
            + f" ({d.artifacts.unchanged:,} unchanged)"
        )
    extra.append(
        f"design: {d.old.devices:,} → {d.new.devices:,} devices, {d.old.links:,} → {d.new.links:,} links; "
        f"errors {d.old.errors} → {d.new.errors}, warnings {d.old.warnings} → {d.new.warnings}"
    )
    out += ["", " · ".join(extra), ""]
    if d.totals:
        out += [f"totals: {_md_cell(headline_text(d))}", ""]
    for title, found in (("New findings", d.new_findings), ("Resolved findings", d.resolved_findings)):
        if found:
            body = _table(["severity", "rule", "message"], ([sev, rule, msg] for sev, rule, msg in found[:lim]))
            out += _details(f"{title} ({len(found):,})", body + _more(len(found), min(len(found), lim), "findings"))
    orders, rest, devices_left = device_orders(d)
    if orders:
        out += _table(
            ["device order", "devices", "cables that follow"],
            (
                [o.verb + f" {o.role} {o.model} {o.old_rack} → {o.new_rack}", f"{len(o.devices):,}", f"{len(o.cables):,}"]
                for o in orders
            ),
            ["---", "---:", "---:"],
        )
        out.append("")
        for o in orders:
            rows = [[x.device.name, f"{x.old.place()} → {x.new.place()}" if x.old and x.new else ""] for x in o.devices]
            beneath = [[_follow_row(c, o.device_of(c))] for c in o.cables[:lim]]
            body = _table(["device", "move"], rows) + [""] + _table(["cable (port, ID, change)"], beneath)
            out += _details(o.title(), body + _more(len(o.cables), min(len(o.cables), lim), "cables"))

    if rest:
        groups = sorted(_grouped(rest, CableChange.group).items(), key=_order(CABLE_CHANGES))
        out += _table(["change", "fabric", "ends (roles)", "cables"], ([k[0], k[1], k[2], f"{len(v):,}"] for k, v in groups))
        out.append("")
        for change in CABLE_CHANGES:
            items = [c for c in rest if c.change == change]
            if not items:
                continue
            title = {"moved": "Move orders", "replaced": "Replace orders", "relabelled": "Relabel orders"}.get(
                change, f"Cables {change}"
            )
            body = _table(["order", "cable", "work", "racks"], (_cable_row(c) for c in items[:lim]))
            out += _details(f"{title} ({len(items):,})", body + _more(len(items), min(len(items), lim), "cables"))
    if devices_left:
        body = _table(["change", "device", "model / role", "where"], (_device_row(x) for x in devices_left[:lim]))
        out += _details(
            f"Devices ({len(devices_left):,})",
            body + _more(len(devices_left), min(len(devices_left), lim), "devices"),
        )
    if racks:
        ranked = sorted(racks.items(), key=lambda x: (-x[1], x[0]))
        body = _table(["rack", "orders"], ([r, f"{n:,}"] for r, n in ranked[:lim]), ["---", "---:"])
        out += _details(f"Work by rack ({len(racks):,} racks)", body + _more(len(ranked), min(len(ranked), lim), "racks"))
    if d.artifacts is not None and d.artifacts.files:
        rows_md = []
        for (status, group), fs in sorted(_grouped(d.artifacts.files, lambda f: (f.status, _file_group(f.path))).items()):
            if len(fs) > 3:
                keys = Counter(_file_group(k.path) for f in fs for k in f.keys)
                what = ", ".join(f"{k} ({n})" for k, n in keys.most_common(5))
                rows_md.append([md.Markdown(f"{md.code(group)} ({len(fs):,} files)"), status, what])
            else:
                rows_md += [[md.code(f.path), f.status, _file_detail(f)] for f in fs]
        body = _table(["file", "change", "what changed"], rows_md[:lim])
        out += _details(
            f"Files ({sum(files.values()):,} changed, added or removed)",
            body + _more(len(rows_md), min(len(rows_md), lim), "files"),
        )
        counts = d.artifacts.counts
        if counts:
            body = _table(
                ["file", "line (part)", "old", "new", "Δ"],
                ([md.code(c.file), c.label(), f"{c.old:g}", f"{c.new:g}", _delta(c)] for c in counts[:lim]),
                ["---", "---", "---:", "---:", "---:"],
            )
            out += _details(
                f"Bill of materials ({len(counts):,} items change)", body + _more(len(counts), min(len(counts), lim), "items")
            )
    for notice in d.notices:
        out.append(f"> notice: {_md_cell(notice)}")
    text = "\n".join(out).rstrip() + "\n"
    if len(text) > MARKDOWN_BUDGET:
        cut = text[:MARKDOWN_BUDGET].rsplit("\n<details>", 1)[0]
        text = cut.rstrip() + f"\n\n_The rest is cut to fit a comment; {FULL_LIST}._\n"
    return text


def _file_detail(f: FileChange) -> md.Markdown:
    text: str = md.text(f.summary())
    if f.keys:
        text += ": " + ", ".join(md.code(k.path) for k in f.keys[:5]) + (" ..." if f.key_changes > 5 else "")
    return md.Markdown(text)
