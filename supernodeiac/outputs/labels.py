"""Cable labels for printing: ``labels/<rack>.pdf``, a sheet of label stock per page holding the
short label of every cable end in the rack (in rack-unit order, as the rack's pull list), and
``labels/labels.csv``, the same labels one row per end with a column per line, for a label
printer's import (Brady Workstation and similar take a CSV with one column per text line).

A physical cable has a label at each plug end: two for a cable or cord, one more per further
leg of a splitter. The stock (``naming.label_stock``, ``catalog/data/label_stock.yaml``) gives
the sheet and the label size; the text is set in Helvetica at the largest size up to 8 pt at
which every line fits the label's width and all lines its height (measured with reportlab's
Helvetica width table, as its ``stringWidth``), never under 4 pt; ``naming.label_width`` already
keeps lines short. The PDFs are snc's own minimal PDF 1.4 (the standard-14 Helvetica in
WinAnsiEncoding, a character it lacks printed as '?'), pre-formatted operators per page.

Both are written at every size: the labels of one-link cables (every cable of a RoCE design) are
made a column at a time from cables.csv's short-label columns (``cabling.label_columns``), the
others' by the cable pass (``cabling.label_ends``: each end's rack, U and lines, no row text); per
label only a sort key (one int) and its lines (one string) are kept; each rack's PDF and the CSV
are made when written (``Stream``), a page of plain labels in one % of its template, font sizes a
rack at a time in numpy, labels.csv's cells gathered a column at a time.
"""

from __future__ import annotations

import operator
import re
import zlib
from array import array
from collections.abc import Collection, Iterator
from functools import partial
from itertools import repeat
from typing import Any, cast

import numpy as np
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import getFont

from ..catalog.label_stock import LabelStock, label_stocks
from ..facts.cable_plan import cable_ids, cable_plan
from ..facts.cage_plan import SPLITTER
from .base import RENDERERS, SAME_PREFIX, SUBSETS, RenderContext, RowSelection, Stream
from .cable_columns import end_table, objects, pick
from .cabling import cable_numbers_of, label_columns, label_ends, simple_cables
from .csv_safe import CsvWriter

FONT = "Helvetica"
MAX_PT, MIN_PT, LEADING = 8.0, 4.0, 1.15


class Label:
    """One printed label: the rack it is stuck on, where, and its lines (for :func:`_sheet_pdf`'s
    callers; the renderer holds :class:`RackLabels`' columns instead)."""

    __slots__ = ("cable_id", "cable_no", "end", "lines", "rack", "u")

    def __init__(self, rack: str, u: int, cable_no: str, cable_id: str, end: str, lines: tuple[str, ...]) -> None:
        self.rack, self.u, self.cable_no, self.cable_id, self.end, self.lines = rack, u, cable_no, cable_id, end, lines


def _text(lines: tuple[str, ...]) -> str | tuple[str, ...]:
    """A label's lines as held: joined by commas when none holds one (one string instead of a
    tuple of them, and the CSV's cells already joined), else the tuple itself."""
    text = ",".join(lines)
    return text if text.count(",") == len(lines) - 1 else lines


def _column_texts(lines: list[list[str]], wrapped: list[tuple[str, ...]] | None) -> tuple[list[str | tuple[str, ...]], int, bool]:
    """The :func:`_text` of each end of cabling.ShortLabels' (line columns, wrapped lines), the
    most lines one has, and whether each is a string of that many lines: with no line wrapped
    and no comma in any, each end's lines joined in C."""
    if wrapped is None:
        if not any("," in "".join(column) for column in lines):
            return list(map(",".join, zip(*lines, strict=True))), len(lines), True
        wrapped = list(zip(*lines, strict=True))
    joined = list(map(",".join, wrapped))
    counts = list(map(len, wrapped))
    # Every end's text a string (as _text makes it) when the commas are only those the joins
    # put in: no line holds one (and no end is without lines, which _text keeps as a tuple).
    if min(counts, default=1) and sum(map(str.count, joined, repeat(","))) == sum(counts) - len(counts):
        return cast("list[str | tuple[str, ...]]", joined), max(counts, default=0), False
    return list(map(_text, wrapped)), max(counts, default=0), False


def _padded(text: str | tuple[str, ...], width: int) -> str:
    """The label's lines as ``width`` CSV cells joined by commas (missing lines empty)."""
    if isinstance(text, str):
        return text + "," * (width - 1 - text.count(","))
    return ",".join([*text, *[""] * (width - len(text))])


def _padded_all(texts: list[str | tuple[str, ...]], width: int) -> list[str | tuple[str, ...]]:
    """``[_padded(text, width) for text in texts]``: when all are strings, each one's missing
    cells gathered from a table by its comma count (numpy) and added in C."""
    if tuple in map(type, texts):
        return [_padded(text, width) for text in texts]
    have = np.fromiter(map(str.count, texts, repeat(",")), dtype=np.int64, count=len(texts))  # type: ignore[arg-type]
    pads = objects(["," * k for k in range(max(width, 1))])
    # (none missing for a text of more lines than ``width``, as "," * a negative count)
    return list(map(str.__add__, texts, pick(pads, np.maximum(width - 1 - have, 0))))  # type: ignore[arg-type]


def _lines(text: str | tuple[str, ...]) -> tuple[str, ...] | list[str]:
    return text.split(",") if isinstance(text, str) else text


class RackLabels:
    """Every plug end's label, grouped by rack: per rack, a sort key per label (its U, its
    cable's rank by ID, the end's rank by tag, the end's tag code, and the cable's plan item
    when the IDs are not in plan order, in one int) and its lines (:func:`_text`), in (U, cable
    ID, end) order. About 150 bytes a label at 131k (849,208 labels) instead of a ``Label`` and
    a tuple of strings each.

    With ``keep`` (a bool per plan item), those cables' labels only; with ``only`` (rack names, ""
    for no rack), those racks' only (``snc diff``'s subset: keep every cable with an end there).
    The sort keys and tags are the whole plan's either way."""

    def __init__(self, ctx: RenderContext, keep: Any = None, only: Collection[str] | None = None) -> None:
        f = ctx.fabric
        plan = cable_plan(f, ctx.catalogue)
        self.ids = ids = cable_ids(f, plan)
        self.numbers = cable_numbers_of(ctx)
        # The cables' ranks by ID (their plan order when the IDs are sorted, as the plan makes them).
        cable_bits = max(len(ids), 1).bit_length()
        if all(map(operator.lt, ids, ids[1:])):
            rank: list[int] | range = range(len(ids))
            self.item_bits = 0  # the rank is the plan item
        else:
            # Equal IDs share a rank (their ends then sort by tag across them, as (U, cable ID,
            # end) does), and the key ends in the item: the item order among equals is the stable one.
            order = sorted(range(len(ids)), key=ids.__getitem__)
            ranks = [0] * len(ids)
            r = 0
            for j, k in enumerate(order):
                if j and ids[k] != ids[order[j - 1]]:
                    r = j
                ranks[k] = r
            rank, self.item_bits = ranks, cable_bits
        ends = int(np.diff(plan.start).max()) + 1 if len(plan) else 2
        self.tags = ["a", "b", *[f"leg{n}" for n in range(1, ends)]]  # by tag code: a, b, leg1, leg2, ...
        self.end_bits = max(ends, 2).bit_length()
        self.rank_shift = self.item_bits + 2 * self.end_bits
        self.u_shift = self.rank_shift + cable_bits
        # Per number of ends, each end's (rank of its tag among the cable's tags << end_bits) | tag code.
        codes: dict[int, list[int]] = {}
        racks = f.racks
        if max((d.u for d in f.devices), default=0).bit_length() + self.u_shift > 62:
            raise ValueError("label sort keys past 64 bits")  # U under 2**20 at 10**12 cables
        u_shift, rank_shift, item_bits = self.u_shift, self.rank_shift, self.item_bits
        # Every label: its text, rack index and key, in flat columns, sorted at the end (the keys
        # are distinct, so the order they are made in is not the labels' order). The one-link
        # cables' a column at a time (cabling.label_columns), the others' a cable at a time.
        wanted = np.ones(len(plan), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
        simple = simple_cables(plan)
        texts: list[str | tuple[str, ...]] = []
        at_parts: list[Any] = []
        key_parts: list[Any] = []
        lines = 0
        even = True  # every label a string of `lines` lines (labels.csv's lines then need no padding)
        items = np.flatnonzero(wanted & simple)
        if len(items):
            e = end_table(f, ctx.memo)
            dev_rack, dev_u = e.rack_index.astype(np.int64), e.u_int.astype(np.int64)
            rank_of = np.arange(len(ids), dtype=np.int64) if isinstance(rank, range) else np.array(rank, dtype=np.int64)
            item_keys = (rank_of[items] << rank_shift) | (items if item_bits else 0)
            pair = codes[2] = self._codes(2)
            made = label_columns(ctx, items)
            for end_code in pair:  # the A ends, then the B ends: one end's lines held at a time
                dev, made_short = next(made)
                made_texts, most, same = _column_texts(*made_short)
                even = even and same and most == (lines or most)
                del made_short
                texts.extend(made_texts)
                del made_texts
                lines = max(lines, most)
                at_parts.append(dev_rack[dev])
                key_parts.append((dev_u[dev] << u_shift) | item_keys | end_code)
        at = array("q")
        keys = array("q")
        add_text, add_rack, add_key = texts.append, at.append, keys.append
        rest = wanted & ~simple
        even = even and not rest.any()  # (those labels may have any number of lines)
        for k, cable in label_ends(ctx, rest) if rest.any() else ():
            code = codes.get(len(cable))
            if code is None:
                code = codes[len(cable)] = self._codes(len(cable))
            base = (rank[k] << rank_shift) | (k if item_bits else 0)
            for (rack, u, short), c in zip(cable, code, strict=True):
                text = ",".join(short)  # _text, inline: a call per label is a tenth of this loop
                add_text(text if text.count(",") == len(short) - 1 else short)
                add_rack(rack)
                add_key((u << u_shift) | base | c)
                if len(short) > lines:
                    lines = len(short)
        at_parts.append(np.frombuffer(at, dtype=np.int64))
        key_parts.append(np.frombuffer(keys, dtype=np.int64))
        self.lines, self.even = lines, even
        self._u = [""]  # U as its CSV cell (0: none)
        self._u_cells = objects(self._u)
        self._columns: tuple[Any, Any, Any] | None = None  # numbers, IDs and tags as object arrays
        self._spots: list[str] = []
        # Racks in row order (a device outside racks first, under ""), each rack's labels by key:
        # one stable sort of (rack's place, key), as the (U, cable ID, end) sort per rack it stands for.
        rack_at = np.concatenate(at_parts) + 1
        present = np.flatnonzero(np.bincount(rack_at, minlength=len(racks) + 1)).tolist()
        where = [(-1, 0, ""), *[(r.row_index, r.position, r.name) for r in racks]]  # by rack index + 1
        place = sorted(present, key=where.__getitem__)
        place_of = np.zeros(len(racks) + 1, dtype=np.int64)
        place_of[place] = np.arange(len(place))
        key_at = np.concatenate(key_parts)
        sort = np.lexsort((key_at, place_of[rack_at]))
        cuts = np.searchsorted(place_of[rack_at][sort], np.arange(len(place) + 1)).tolist()
        sorted_keys = key_at[sort]
        held = objects(texts)
        texts.clear()  # held: one reference to each text, not two lists of them
        sorted_texts = held[sort]
        del held
        self.racks: list[tuple[str, Any, list[str | tuple[str, ...]]]] = []
        for n, i in enumerate(place):
            name = racks[i - 1].name if i else ""
            if only is not None and name not in only:
                continue
            a, b = cuts[n], cuts[n + 1]
            self.racks.append((name, sorted_keys[a:b], sorted_texts[a:b].tolist()))

    def _codes(self, ends: int) -> list[int]:
        """Each end's code for a cable of ``ends`` plug ends (A, B; or A and legs)."""
        tags = [0, 1] if ends == 2 else [0, *range(2, ends + 1)]
        by_tag = sorted(range(ends), key=lambda e: self.tags[tags[e]])
        lex = [0] * ends
        for r, e in enumerate(by_tag):
            lex[e] = r
        return [((lex[e] << self.end_bits) | tags[e]) << self.item_bits for e in range(ends)]

    def _decode(self, keys: Any) -> tuple[list[int], list[int], list[int]]:
        """Each key's (plan item, U, tag code)."""
        items, us, codes = self._decode_arrays(keys)
        return items.tolist(), us.tolist(), codes.tolist()

    def _decode_arrays(self, keys: Any) -> tuple[Any, Any, Any]:
        """Each key's (plan item, U, tag code), as arrays."""
        rank_mask, end_mask = (1 << (self.u_shift - self.rank_shift)) - 1, (1 << self.end_bits) - 1
        items = keys & ((1 << self.item_bits) - 1) if self.item_bits else (keys >> self.rank_shift) & rank_mask
        return items, keys >> self.u_shift, (keys >> self.item_bits) & end_mask

    def rows(self, rack: str, keys: Any, texts: list[str | tuple[str, ...]], per: int) -> list[str]:
        """labels.csv's lines (no line ends) of a rack's labels, cells joined by commas, each line
        ``7 + self.lines`` cells: the keys decoded in bulk, each cell's column gathered from a
        table of its text (numpy), a join per line."""
        if self._columns is None:
            self._columns = (objects(self.numbers), objects(self.ids), objects(self.tags))
        numbers, ids, tags = self._columns
        width = self.lines
        ks, us, codes = self._decode_arrays(keys)
        top = int(us.max()) if len(us) else 0
        if len(self._u) <= top:
            self._u.extend(str(u) for u in range(len(self._u), top + 1))
            self._u_cells = objects(self._u)
        spot = self._spot(len(texts), per)
        if not self.even:
            blob = _blob(texts)
            if blob is None or blob.count(",") != len(texts) * (width - 1):  # not every label `width` lines
                texts = _padded_all(texts, width)
        cells = (pick(self._u_cells, us), pick(numbers, ks), pick(ids, ks), pick(tags, codes), texts)
        return list(map(",".join, zip(repeat(rack), spot, *cells, strict=False)))  # spot: the first len(texts)

    def _spot(self, count: int, per: int) -> list[str]:
        """The "sheet,position" cells (from 1) of a rack's first ``count`` labels."""
        spots = self._spots
        while len(spots) < count:
            sheet, pos = divmod(len(spots), per)
            spots.append(f"{sheet + 1},{pos + 1}")
        return spots

    def cells(self, rack: str, keys: Any, texts: list[str | tuple[str, ...]], per: int, n: int) -> list[str]:
        """The cells of the rack's ``n``th CSV row (the slow path for a line that needs quoting or
        neutralising)."""
        (k,), (u,), (code,) = self._decode(keys[n : n + 1])
        lines = list(_lines(texts[n]))
        sheet, pos = divmod(n, per)
        tag = self.tags[code]
        pad = [""] * (self.lines - len(lines))
        return [rack, str(sheet + 1), str(pos + 1), str(u or ""), self.numbers[k], self.ids[k], tag, *lines, *pad]


def font_size(lines: tuple[str, ...] | list[str], stock: LabelStock) -> float:
    """The largest size (pt, in 0.25 steps, MIN_PT..MAX_PT) at which the lines fit the label."""
    width = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
    height = (stock.label_mm[1] - 2 * stock.padding_mm) * mm
    widest = max((_width(x) for x in lines), default=0.0)
    size = MAX_PT
    if widest:
        size = min(size, width / widest)
    size = min(size, height / (LEADING * max(len(lines), 1)))
    return max(MIN_PT, int(size * 4) / 4)


def _width(text: str) -> float:
    """``stringWidth(printed(text), FONT, 1.0)``: the printed line's WinAnsi codes summed from the
    font's width table in the same integer sum and scaling as reportlab's."""
    if not _PRINTABLE.fullmatch(text):
        text = printed(text)
    return sum(map(_WIDTHS.__getitem__, text.encode("cp1252"))) * 0.001 * 1.0


def _sizes(
    texts: list[str | tuple[str, ...]], blob: str | None, stock: LabelStock, printable: bool = False
) -> tuple[list[float], list[int]]:
    """Each label's :func:`font_size` and line count. Labels of printable ASCII held as strings
    (the common case) in bulk: every line's width is the same integer sum of the width table, by
    a cumulative sum over the rack's text (``blob``, :func:`_blob`), then the same float steps as
    font_size, elementwise. ``printable``: the blob is known to be printable ASCII (not tested again)."""
    if blob is None or not (printable or (blob.isascii() and _PRINTABLE_NL.fullmatch(blob))):
        out = [font_size(_lines(x), stock) for x in texts]
        return out, [len(_lines(x)) for x in texts]
    b = np.frombuffer(blob.encode("ascii"), dtype=np.uint8)
    cum = np.zeros(len(b) + 1, dtype=np.int64)
    np.cumsum(_WIDTH_TABLE[b], out=cum[1:])
    cut = np.flatnonzero(_SEPARATOR[b])  # a comma between lines, a break between labels
    # A separator has no width: a line's is the sum from the separator before it to the one after.
    widths = np.diff(cum[_framed(cut, len(b))])
    first = _framed(np.flatnonzero(b[cut] == 10) + 1, len(widths))  # each label's first line, and the end
    counts = np.diff(first)
    widest = np.maximum.reduceat(widths, first[:-1]).astype(np.float64) * 0.001 * 1.0
    width = (stock.label_mm[0] - 2 * stock.padding_mm) * mm
    height = (stock.label_mm[1] - 2 * stock.padding_mm) * mm
    with np.errstate(divide="ignore"):
        size = np.where(widest > 0, np.minimum(MAX_PT, width / widest), MAX_PT)
    size = np.minimum(size, height / (LEADING * np.maximum(counts, 1)))
    size = np.maximum(MIN_PT, np.trunc(size * 4) / 4)
    return size.tolist(), counts.tolist()


def _framed(inner: Any, end: int) -> Any:
    """``[0, *inner, end]`` as an int array (without np.concatenate's conversion of lists)."""
    out = np.empty(len(inner) + 2, dtype=np.int64)
    out[0], out[1:-1], out[-1] = 0, inner, end
    return out


def _blob(texts: list[str | tuple[str, ...]]) -> str | None:
    """The labels' texts joined by line breaks when all are strings and none holds a break."""
    if tuple in map(type, texts):
        return None
    blob = "\n".join(texts)  # type: ignore[arg-type]
    return blob if blob.count("\n") == len(texts) - 1 else None


_WIDTHS = getFont(FONT).widths
# For _sizes: a comma (44) separates a label's lines there and a line break (10) labels: no width.
_WIDTH_TABLE = np.array(_WIDTHS[:256], dtype=np.int64)
_WIDTH_TABLE[[10, 44]] = 0
_SEPARATOR = np.zeros(256, dtype=bool)
_SEPARATOR[[10, 44]] = True
_PRINTABLE = re.compile(r"[ -~]*")
_PRINTABLE_NL = re.compile(r"[ -~\n]*")
_PLAIN = re.compile(r"[ -'*-\[\]-~]+")  # printable ASCII but for \ ( ), which PDF strings escape
_PLAIN_NL = re.compile(r"[ -'*-\[\]-~\n]*")


@RENDERERS.register("labels")
def render_labels(ctx: RenderContext) -> dict[str, bytes | Stream]:
    """A PDF per rack and labels.csv at every size: the cable ends' labels are made a column at a
    time (one-link cables) or a cable at a time (the others) and only their lines held, grouped by
    rack; each rack's PDF and the CSV are made when written."""
    return _whole(ctx)


def _whole(ctx: RenderContext) -> dict[str, bytes | Stream]:
    grouped = RackLabels(ctx)
    if not grouped.racks:
        return {}
    return _label_files(ctx, grouped)


@SUBSETS.register("labels")
def render_labels_racks(ctx: RenderContext, selection: RowSelection) -> dict[str, bytes | Stream]:
    """``snc diff``: the PDFs of the racks whose labels may differ (``selection.racks``) and
    labels.csv with those racks' rows, each rack's labels all there (its sheet positions are
    its own); the other racks' PDFs marked the same. labels.csv's line cells are as many as
    those racks' labels have at most (``select`` made sure that is the same on both sides, so
    the whole tables' headers are the same too and a left-out rack's rows are the same lines)."""
    if selection.racks is None:
        return _whole(ctx)
    if not len(cable_plan(ctx.fabric, ctx.catalogue)):
        return {}
    out = _label_files(ctx, rack_subset(ctx, selection.racks))
    names = rack_names(ctx)
    for r in np.unique(label_end_racks(ctx)[1]).tolist():
        if names[r] not in selection.racks:
            out[SAME_PREFIX + label_path(names[r])] = b""
    return out


def rack_names(ctx: RenderContext) -> list[str]:
    """The racks' names by index, and "" (no rack) last: index -1."""
    return [r.name for r in ctx.fabric.racks] + [""]


def label_path(rack: str) -> str:
    """The label sheets' file of the rack named ``rack`` ("": the labels outside racks)."""
    return f"labels/{_file_part(rack or 'unracked')}.pdf"


def label_end_racks(ctx: RenderContext) -> tuple[Any, Any]:
    """(plan item, rack index or -1) of every label of every cable, as numpy arrays: a cable's
    labels are on the ends of its first link (a multi-link cable's two plugs), a splitter's on
    every link's (its head and each leg); a rack may repeat for an item."""
    f = ctx.fabric
    plan = cable_plan(f, ctx.catalogue)
    item = np.repeat(np.arange(len(plan), dtype=np.int64), np.diff(plan.start))
    use = plan.shape[item] == SPLITTER
    use[plan.start[:-1]] = True
    links, item = plan.links[use], item[use]
    arr = f.links.arrays()
    dev_rack = np.array([d.rack for d in f.devices], dtype=np.int64)
    return np.concatenate((item, item)), np.concatenate((dev_rack[arr.a[links]], dev_rack[arr.b[links]]))


def rack_subset(ctx: RenderContext, racks: frozenset[str]) -> RackLabels:
    """The labels of the racks ``racks`` (every cable with a label there taken), made once per
    render context and rack set (``compare.rows.select`` reads their line count first)."""
    found = ctx.memo.get("label_racks")
    if found is None or found[0] != racks:
        names = rack_names(ctx)
        item, at = label_end_racks(ctx)
        wanted = np.array([n in racks for n in names], dtype=bool)
        keep = np.zeros(len(cable_plan(ctx.fabric, ctx.catalogue)), dtype=bool)
        keep[item[wanted[at]]] = True
        found = ctx.memo["label_racks"] = (racks, RackLabels(ctx, keep, racks))
    return found[1]


def _label_files(ctx: RenderContext, grouped: RackLabels) -> dict[str, bytes | Stream]:
    """A PDF per rack of ``grouped`` and labels.csv of its racks, made when written."""
    stock = label_stocks()[ctx.blueprint.naming.label_stock]
    sheets = _Sheets(stock)
    name = ctx.blueprint.metadata.name
    out: dict[str, bytes | Stream] = {}
    for rack, _, texts in grouped.racks:

        def produce(rack: str = rack, texts: list[str | tuple[str, ...]] = texts) -> list[bytes]:
            return [sheets.pdf(f"{name} rack {rack} cable labels ({stock.description})", texts)]

        out[label_path(rack)] = Stream(produce)

    def table() -> Iterator[bytes]:
        lines = grouped.lines
        header = ["rack", "sheet", "position", "u", "cable_no", "cable_id", "end", *[f"line{i + 1}" for i in range(lines)]]
        per = stock.per_sheet
        csv = CsvWriter(header)
        for rack, keys, texts in grouped.racks:
            csv.text_lines(grouped.rows(rack, keys, texts, per), partial(grouped.cells, rack, keys, texts, per))
            yield from csv.take()
        yield csv.getvalue()

    out["labels/labels.csv"] = Stream(table)
    return out


class _Sheets:
    """A stock's label sheets: each label's operators from a template made once per label
    position, font size and line count."""

    def __init__(self, stock: LabelStock) -> None:
        self.stock = stock
        self.page = (stock.sheet_mm[0] * mm, stock.sheet_mm[1] * mm)
        self.starts_of: dict[tuple[int, float, int], list[str]] = {}  # each line's "BT .. Tm"
        self.templates: dict[tuple[int, float, int], str] = {}  # the label's operators, its lines as {}
        self.pages: dict[tuple[float | int, ...], str] = {}  # a page's (lines as %s), by its labels' sizes and line counts

    def starts(self, pos: int, size: float, count: int) -> list[str]:
        starts = self.starts_of.get((pos, size, count))
        if starts is None:
            stock = self.stock
            pad = stock.padding_mm * mm
            row, col = divmod(pos, stock.columns)
            left = (stock.margin_mm[0] + col * stock.pitch_mm[0]) * mm
            top = self.page[1] - (stock.margin_mm[1] + row * stock.pitch_mm[1]) * mm
            y = top - pad - size
            starts = []
            for _ in range(count):
                starts.append(f"BT /F1 {_num(size)} Tf 1 0 0 1 {_num(left + pad)} {_num(y)} Tm ")
                y -= size * LEADING
            self.starts_of[(pos, size, count)] = starts
        return starts

    def template(self, pos: int, size: float, count: int) -> str:
        text = self.templates.get((pos, size, count))
        if text is None:
            text = self.templates[(pos, size, count)] = "\n".join(f"{s}({{}}) Tj ET" for s in self.starts(pos, size, count))
        return text

    def pdf(self, title: str, texts: list[str | tuple[str, ...]]) -> bytes:
        """The rack's sheets as a minimal PDF 1.4 (one page of stock per ``per_sheet`` labels):
        each line a text object of pre-formatted operators, joined per page into one Flate stream
        (zlib level 1)."""
        per = self.stock.per_sheet
        blob = _blob(texts)
        plain = blob is not None and _PLAIN_NL.fullmatch(blob) is not None
        sizes, counts = _sizes(texts, blob, self.stock, plain)
        shown: dict[str, str] = {}  # line -> its PDF string operand
        pages: list[bytes] = []
        template = self.template
        for first in range(0, len(texts), per):
            if plain:  # a page of plain labels: one % of the page's template with every line
                shape = (*sizes[first : first + per], *counts[first : first + per])
                page_code = self.pages.get(shape)
                if page_code is None:
                    code_text = "\n".join(map(template, range(per), sizes[first : first + per], counts[first : first + per]))
                    # The template's {} as %s: % fills a page in about half format's time (it parses less).
                    page_code = code_text.replace("%", "%%").replace("{}", "%s")
                    if len(self.pages) < 256:  # a few shapes make nearly every page
                        self.pages[shape] = page_code
                lines = ",".join(texts[first : first + per]).split(",")  # type: ignore[arg-type]
                pages.append(zlib.compress((page_code % tuple(lines)).encode("latin-1"), 1))
                continue
            code: list[str] = []
            page = zip(texts[first : first + per], sizes[first : first + per], counts[first : first + per], strict=True)
            for pos, (text, size, count) in enumerate(page):
                if isinstance(text, str) and (plain or _PLAIN.fullmatch(text)):
                    code.append(template(pos, size, count).format(*text.split(",")))
                    continue
                for start, line in zip(self.starts(pos, size, count), _lines(text), strict=True):
                    if _PLAIN.fullmatch(line):  # printable ASCII, nothing to escape: its own PDF string
                        code.append(f"{start}({line}) Tj ET")
                        continue
                    operand = shown.get(line)
                    if operand is None:
                        operand = shown[line] = _pdf_string(line)
                    code.append(f"{start}{operand} Tj ET")
            pages.append(zlib.compress("\n".join(code).encode("latin-1"), 1))
        if not texts:
            pages.append(zlib.compress(b"", 1))
        return _pdf_document(pages, self.page, title)


def _sheet_pdf(ctx: RenderContext, rack: str, labels: list[Label], stock: LabelStock) -> bytes:
    """The sheets of ``labels`` as the renderer makes a rack's."""
    title = f"{ctx.blueprint.metadata.name} rack {rack} cable labels ({stock.description})"
    return _Sheets(stock).pdf(title, [_text(x.lines) for x in labels])


def _pdf_document(contents: list[bytes], page: tuple[float, float], title: str) -> bytes:
    """PDF 1.4 bytes: catalog, page tree, the Helvetica standard-14 font (WinAnsiEncoding), /Info,
    a page per compressed content stream, and the xref table of every object's byte offset. The
    page objects differ only in their numbers: one bytes format each, the offsets summed."""
    count = len(contents)
    kids = " ".join([f"{5 + 2 * i} 0 R" for i in range(count)])
    box = f"[0 0 {_num(page[0])} {_num(page[1])}]"
    parts = [
        b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n",
        b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n",
        f"2 0 obj\n<< /Type /Pages /Kids [{kids}] /Count {count} >>\nendobj\n".encode(),
        b"3 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>\nendobj\n",
        b"4 0 obj\n<< /Title " + _pdf_string(title).encode("latin-1") + b" /Author (snc) /Producer (snc) >>\nendobj\n",
    ]
    page_object = (
        f"%d 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox {box} /Resources << /Font << /F1 3 0 R >> >> "
        "/Contents %d 0 R >>\nendobj\n"
    ).encode()
    stream_end = b"\nendstream\nendobj\n"
    offsets = [len(parts[0])]
    for k, part in enumerate(parts[1:4]):
        offsets.append(offsets[k] + len(part))
    at = offsets[3] + len(parts[4])
    for i, data in enumerate(contents):
        k = 5 + 2 * i
        page_code = page_object % (k, k + 1)
        stream = b"%d 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % (k + 1, len(data))
        offsets += (at, at + len(page_code))
        parts += (page_code, stream, data, stream_end)
        at += len(page_code) + len(stream) + len(data) + len(stream_end)
    objects = len(offsets)
    parts.append(b"xref\n0 %d\n0000000000 65535 f \n" % (objects + 1))
    parts.append(b"".join([b"%010d 00000 n \n" % o for o in offsets]))
    parts.append(b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (objects + 1, at))
    return b"".join(parts)


def printed(line: str) -> str:
    """The line as the sheet prints it: a character WinAnsiEncoding lacks (or a control
    character) is set as '?'."""
    return "".join(c if c >= " " and c != "\x7f" and _winansi(c) else "?" for c in line)


def _winansi(c: str) -> bool:
    try:
        c.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def _pdf_string(text: str) -> str:
    """A PDF literal string of the printed line in WinAnsi codes, ``\\ ( )`` escaped, other
    bytes past ASCII as octal escapes (the content stream stays ASCII)."""
    if _PRINTABLE.fullmatch(text):
        return "(" + text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"
    out = []
    for b in printed(text).encode("cp1252"):
        c = chr(b)
        out.append("\\" + c if c in "\\()" else c if 32 <= b < 127 else f"\\{b:03o}")
    return "(" + "".join(out) + ")"


def _num(value: float) -> str:
    """A PDF number: at most 4 decimals, no trailing zeros."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _file_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"
