"""The per-row workbooks' pull lists made a column at a time (a render's, issue 24) against the
PullCable path ``snc diff`` keeps (``_pull_lists``): the same zip bytes, row of racks by row, with
names that need escaping, quoting or wrapping (commas, quotes, spaces, &, <, _xHHHH_, tabs,
non-ASCII, long names), cables of one link beside twin-port cables and splitters, and 0U ends
that share a rack with their far end."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from conftest import BLUEPRINTS, compile_text
from hypothesis import given, settings
from hypothesis import strategies as st
from test_media import ONE_RACK, SPLIT

from supernodeiac.outputs import cabling, workbook
from supernodeiac.outputs.base import RenderContext
from supernodeiac.outputs.cable_columns import objects

TEXTS = {
    "small-ib": (BLUEPRINTS / "small-ib.yaml").read_text(),
    "roce-rail-2tier": (BLUEPRINTS / "roce-rail-2tier.yaml").read_text(),
    "twin-port": ONE_RACK.format(spine_u=38, media="", catalogue=""),
    "splitter": SPLIT.format(node_rack=1, node_u=2, gap=0),
    "wrapped": (BLUEPRINTS / "small-ib.yaml").read_text().replace("\nsite:", "\nnaming:\n  label_width: 12\nsite:", 1),
}


@cache
def _compiled(name: str):  # type: ignore[no-untyped-def]
    c = compile_text(TEXTS[name])
    assert c.fabric is not None, [f.message for f in c.findings]
    return c


def _renamed(c, rack_mark: str, device_mark: str) -> RenderContext:  # type: ignore[no-untyped-def]
    f = c.fabric
    racks = [dataclasses.replace(r, name=f"{r.name}{rack_mark}", row=f"{rack_mark}{r.row}") for r in f.racks]
    devices = [dataclasses.replace(d, name=f"{device_mark}{d.name}") if d.index % 3 == 0 else d for d in f.devices]
    return RenderContext(c.blueprint, c.catalogue, dataclasses.replace(f, racks=racks, devices=devices))


def _both(
    ctx: RenderContext, monkeypatch: pytest.MonkeyPatch, backwards: bool = False
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(the column path's workbooks, the PullCable path's), one per row of racks; ``backwards``:
    the column path's written last row first (a cable's labels are kept from its first row made)."""
    monkeypatch.setattr(workbook, "ROW_LIMIT", 0)
    monkeypatch.setattr(cabling, "ROW_LIMIT", 0)
    extras = workbook._not_cables(ctx)
    everything = np.ones(len(cabling.cable_plan(ctx.fabric, ctx.catalogue)), dtype=bool)
    made = list(workbook._row_workbooks(ctx, None, extras).items())
    columns = {k: bytes(v) for k, v in (made[::-1] if backwards else made)}
    plain = {k: bytes(v) for k, v in workbook._row_workbooks(ctx, everything, extras).items()}  # _pull_lists
    return columns, plain


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_row_workbooks_are_the_pullcable_paths_bytes(name: str, backwards: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    c = _compiled(name)
    columns, plain = _both(c.render_context(), monkeypatch, backwards)
    assert columns and columns == plain
    plan = cabling.cable_plan(c.fabric, c.catalogue)
    if name in ("twin-port", "splitter"):  # both kinds of cable in the same rows
        simple = cabling.simple_cables(plan)
        assert simple.any() and not simple.all()


PIECES = [",", '"', " ", "&", "<", ">", "_x0041_", "\t", "é", "'", "=", "a", "Z9"]
HOSTILE = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(TEXTS)), rack_mark=HOSTILE, device_mark=HOSTILE, long=st.booleans())
def test_hostile_names_give_the_same_bytes(name: str, rack_mark: str, device_mark: str, long: bool) -> None:
    c = _compiled(name)
    device_mark = device_mark + ("x" * 40 + " " if long else "")  # a name past the label width
    with pytest.MonkeyPatch.context() as mp:
        columns, plain = _both(_renamed(c, rack_mark, device_mark), mp)
    assert columns == plain


@given(st.lists(st.text(alphabet="AB1 ,", max_size=4), max_size=30), st.booleans())
def test_id_rank_is_the_sorted_order(ids: list[str], presorted: bool) -> None:
    if presorted:
        ids = sorted(ids)
    rank = workbook.id_rank(objects(ids))
    # (rank, cable order) sorts as (ID, cable order) does: _pull_lists' stable sort by ID
    assert sorted(range(len(ids)), key=lambda k: (rank[k], k)) == sorted(range(len(ids)), key=lambda k: (ids[k], k))
