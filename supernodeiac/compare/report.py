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
from typing import TypeVar

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


# -- text --------------------------------------------------------------------------------------------------


def to_text(d: Diff, limit: int | None = None) -> str:
    out: list[str] = []
    w = out.append
    w(f"snc diff {d.old.label} -> {d.new.label}")
    w(
        f"  devices {d.old.devices:,} -> {d.new.devices:,}, links {d.old.links:,} -> {d.new.links:,}, "
        f"errors {d.old.errors} -> {d.new.errors}, warnings {d.old.warnings} -> {d.new.warnings}"
    )
    w(verdict(d))
    w(_counts_line("cables", Counter(c.change for c in d.fabric.cables), CABLE_CHANGES))
    w(_counts_line("devices", Counter(x.change for x in d.fabric.devices), DEVICE_CHANGES))
    if d.artifacts is not None:
        w(_counts_line("files", Counter(f.status for f in d.artifacts.files), ("changed", "removed", "added")))
    racks = d.fabric.racks()
    if racks:
        w(f"racks touched: {len(racks):,}")

    if d.fabric.cables:
        w("")
        w("Cables")
        for key, changes in sorted(_grouped(d.fabric.cables, CableChange.group).items(), key=_order(CABLE_CHANGES)):
            change, fabric, roles = key
            w(f"  {change} {len(changes):,}: {fabric} {roles}")
            for row in _limited(changes, limit, "cables"):
                w("    " + (row if isinstance(row, str) else f"{row[1]}  {row[2]}  [{row[3]}]"))
    if d.fabric.devices:
        w("")
        w("Devices")
        for key, device_changes in sorted(_grouped(d.fabric.devices, DeviceChange.group).items(), key=_order(DEVICE_CHANGES)):
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
                for k in f.keys[: limit or None]:
                    w(f"    {k.status} {k.path}" + (f": {_short(k.old)} -> {_short(k.new)}" if k.status == "changed" else ""))
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
            for c in counts:
                w(f"  {c.file}: {c.label()}: {c.old:g} -> {c.new:g} ({_delta(c)})")
    for notice in d.notices:
        w(f"notice: {notice}")
    return "\n".join(out) + "\n"


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
    """Text from the blueprint (names, parts) in a table cell: no column breaks, no HTML, and no
    '@' that GitHub would turn into a mention of a user or team."""
    return (
        text.replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("\n", " ")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("@", "&#64;")
    )


def _table(header: list[str], rows: Iterable[list[str]], align: Sequence[str] = ()) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align or ["---"] * len(header)) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{_md_cell(summary)}</summary>", "", *body, "", "</details>", ""]


def _more(total: int, shown: int, what: str) -> list[str]:
    return (
        ["", f"_{total - shown:,} more {what} not shown: `snc diff --format text --limit 0` lists all._"] if total > shown else []
    )


def to_markdown(d: Diff, limit: int | None = MARKDOWN_LIMIT) -> str:
    lim = limit if limit is not None else 10**9
    cables = Counter(c.change for c in d.fabric.cables)
    devices = Counter(x.change for x in d.fabric.devices)
    files = Counter(f.status for f in d.artifacts.files) if d.artifacts else Counter()
    racks = d.fabric.racks()
    out: list[str] = [f"### snc diff: `{d.old.label}` → `{d.new.label}`", "", f"**{verdict(d)}**", ""]
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

    if d.fabric.cables:
        groups = sorted(_grouped(d.fabric.cables, CableChange.group).items(), key=_order(CABLE_CHANGES))
        out += _table(["change", "fabric", "ends (roles)", "cables"], ([k[0], k[1], k[2], f"{len(v):,}"] for k, v in groups))
        out.append("")
        for change in CABLE_CHANGES:
            items = [c for c in d.fabric.cables if c.change == change]
            if not items:
                continue
            title = {"moved": "Move orders", "replaced": "Replace orders", "relabelled": "Relabel orders"}.get(
                change, f"Cables {change}"
            )
            body = _table(["order", "cable", "work", "racks"], (_cable_row(c) for c in items[:lim]))
            out += _details(f"{title} ({len(items):,})", body + _more(len(items), min(len(items), lim), "cables"))
    if d.fabric.devices:
        body = _table(["change", "device", "model / role", "where"], (_device_row(x) for x in d.fabric.devices[:lim]))
        out += _details(
            f"Devices ({len(d.fabric.devices):,})",
            body + _more(len(d.fabric.devices), min(len(d.fabric.devices), lim), "devices"),
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
                rows_md.append([f"`{group}` ({len(fs):,} files)", status, what])
            else:
                rows_md += [[f"`{f.path}`", f.status, _file_detail(f)] for f in fs]
        body = _table(["file", "change", "what changed"], rows_md[:lim])
        out += _details(
            f"Files ({sum(files.values()):,} changed, added or removed)",
            body + _more(len(rows_md), min(len(rows_md), lim), "files"),
        )
        counts = d.artifacts.counts
        if counts:
            body = _table(
                ["file", "line (part)", "old", "new", "Δ"],
                ([f"`{c.file}`", c.label(), f"{c.old:g}", f"{c.new:g}", _delta(c)] for c in counts[:lim]),
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
        text = cut.rstrip() + "\n\n_The rest is cut to fit a comment: `snc diff --format text` has everything._\n"
    return text


def _file_detail(f: FileChange) -> str:
    text = f.summary()
    if f.keys:
        text += ": " + ", ".join(f"`{k.path}`" for k in f.keys[:5]) + (" ..." if f.key_changes > 5 else "")
    return text
