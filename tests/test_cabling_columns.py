"""The cabling lists made a column at a time (issue 24) against the plain way: cables.csv is
``cable_rows``' text (the row-by-row pass the label sheets and the workbook also read) written
row by row through the csv module, its PullCables are that pass's, and links.csv is what the csv
module writes of its own cells; with names that need quoting or neutralising (commas, quotes,
line breaks, a NUL, leading = + - @), blocks that mix one-link cables with twin-port cables and
splitters, labels that wrap, and cables on more than one fibre cord."""

from __future__ import annotations

import csv
import dataclasses
import io

import numpy as np
import pytest
from conftest import BLUEPRINTS, compile_text
from test_media import ONE_RACK, SPLIT

from supernodeiac.facts.cable_plan import CablePlan
from supernodeiac.outputs import cabling
from supernodeiac.outputs.base import RenderContext
from supernodeiac.outputs.cabling import (
    _PULLS,
    CABLE_COLUMNS,
    COLUMNS,
    _cable_pass,
    cable_rows,
    pull_columns,
    stream_cabling,
)
from supernodeiac.outputs.csv_safe import live_formulas, safe_cell


def _plain(columns: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows([[safe_cell(c) for c in r] for r in rows])
    return buf.getvalue().encode()


def _check(ctx: RenderContext) -> dict[str, bytes]:
    """Both lists as rendered, after checking them against the plain way."""
    made = {path: bytes(s) for path, s in stream_cabling(ctx).items()}
    cables = made["cabling/cables.csv"]
    assert cables == _plain(CABLE_COLUMNS, [r.text for r in cable_rows(ctx, with_ends=False)])
    links = made["cabling/links.csv"]
    cells = list(csv.reader(io.StringIO(links.decode(), newline="")))
    assert cells[0] == COLUMNS and all(len(r) == len(COLUMNS) for r in cells)
    assert len(cells) == len(ctx.fabric.links) + 1
    assert links == _plain(COLUMNS, cells[1:])  # the csv module's quoting, cell for cell
    assert live_formulas(cables) == live_formulas(links) == []
    plain = [p for _, p in _cable_pass(ctx, None, _PULLS)]
    assert pull_columns(ctx) == plain  # the workbook's own pass, without cables.csv's pieces
    n = len(plain)
    for keep in (np.arange(n) % 3 == 1, np.arange(n) % 2 == 0, np.zeros(n, dtype=bool)):  # a diff's subsets
        subset = [p for p, k in zip(plain, keep.tolist(), strict=True) if k]
        assert pull_columns(ctx, keep) == [p for _, p in _cable_pass(ctx, keep, _PULLS)] == subset
    return made


def _hostile(c, mark: str) -> RenderContext:  # type: ignore[no-untyped-def]
    """Rack names holding ``mark``; every leaf's name and every row's starting with a formula character."""
    f = c.fabric
    racks = [dataclasses.replace(r, name=f"R{mark}{r.name}", row=f"-{r.row}") for r in f.racks]
    devices = [dataclasses.replace(d, name=f"={d.name}") if "leaf" in d.role else d for d in f.devices]
    return RenderContext(c.blueprint, c.catalogue, dataclasses.replace(f, racks=racks, devices=devices))


@pytest.mark.parametrize("mark", ["", ",", '"', "\n", "\0", "\t", "é"])
@pytest.mark.parametrize("blueprint", ["small-ib", "roce-rail-2tier"])
@pytest.mark.parametrize("block", [7, cabling.BLOCK])
def test_the_lists_are_the_plain_way_with_names_that_need_quoting(
    blueprint: str, mark: str, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cabling, "BLOCK", block)
    c = compile_text((BLUEPRINTS / f"{blueprint}.yaml").read_text())
    made = _check(_hostile(c, mark))
    rows = list(csv.DictReader(io.StringIO(made["cabling/links.csv"].decode(), newline="")))
    by_id = {x.id: x for x in c.fabric.links}
    for row in rows:  # each name as the fabric has it, neutralised
        link = by_id[row["cable_id"]]
        assert row["a_rack"] == f"R{mark}{c.fabric.racks[c.fabric.devices[link.a].rack].name}"
        assert row["b_row"] == "'-" + c.fabric.racks[c.fabric.devices[link.b].rack].row
        name = c.fabric.devices[link.b].name
        assert row["b_device"] == ("'=" + name if "leaf" in c.fabric.devices[link.b].role else name)


@pytest.mark.parametrize(
    "text",
    [
        ONE_RACK.format(spine_u=38, media="", catalogue=""),  # twin-port DACs beside one-link cables
        SPLIT.format(node_rack=1, node_u=2, gap=0),  # splitters
    ],
    ids=["twin-port", "splitter"],
)
@pytest.mark.parametrize("block", [3, cabling.BLOCK])
def test_blocks_mixing_cables_made_row_by_row(text: str, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cabling, "BLOCK", block)
    c = compile_text(text)
    plan = cabling.cable_plan(c.fabric, c.catalogue)
    assert (np.diff(plan.start) > 1).any() and (np.diff(plan.start) == 1).any()  # both kinds of cable
    _check(_hostile(c, ","))


NAMINGS = [
    "  label_width: 12\n",  # lines wrapped, cable by cable
    # a comma in a line (quoted cells), a paren and a non-ASCII character
    '  short_label: ["{number}, {fabric}", "at ({rack}) U{u} {device} \\u00e9 {port}"]\n',
    # escaped braces, a line without fields, the far end first, the cable ID, fields side by side
    '  short_label: ["n{{{number}}}", "SNC", "{far_device}{device}{cable}{port}{far_port}{row}{far_row}", "{u}{far_u}"]\n',
]


@pytest.mark.parametrize("naming", NAMINGS)
def test_short_labels_of_any_template_are_the_plain_way(naming: str) -> None:
    text = (BLUEPRINTS / "small-ib.yaml").read_text().replace("\nsite:", "\nnaming:\n" + naming + "site:", 1)
    c = compile_text(text)
    assert c.fabric is not None, [f.message for f in c.findings]
    made = _check(c.render_context())
    assert b" | " in made["cabling/cables.csv"]


def test_cables_on_two_cords_are_the_plain_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A link on two fibre cords is two items (cord 1/2 and 2/2): a plan with every third item
    on two cords (none of the shipped designs has such links)."""
    c = compile_text((BLUEPRINTS / "small-ib.yaml").read_text())
    real = cabling.cable_plan(c.fabric, c.catalogue)
    cords = np.where(np.arange(len(real)) % 3 == 0, 2, 1)
    item = np.repeat(np.arange(len(real)), cords)
    cord = np.arange(len(item)) - np.repeat(np.cumsum(cords) - cords, cords) + 1
    plan = CablePlan(
        links=real.links[real.start[:-1]][item],
        start=np.arange(len(item) + 1),
        cord=cord,
        cords=cords[item],
        shape=real.shape[item],
    )
    monkeypatch.setattr(cabling, "cable_plan", lambda f, cat: plan)
    made = _check(c.render_context())
    assert b",1/2," in made["cabling/cables.csv"] and b",2/2," in made["cabling/cables.csv"]


def test_short_lines_with_specs_are_formatted_cable_by_cable(small_ib) -> None:  # type: ignore[no-untyped-def]
    """A line whose fields have a spec or conversion (naming refuses them in blueprints; the
    class takes any template) is formatted with positional fields, as cable_rows formats it."""
    from supernodeiac.fabric.cable_naming import positional_format
    from supernodeiac.outputs.cable_columns import EndTable, ShortLines

    e = EndTable(small_ib.fabric)
    lines = ["{number:>8}|{u}", "{rack!r} {u} {device} {port}", "to {far_device} {far_port}", "{far_u}{{x}}", ""]
    made = ShortLines(lines, cabling.SHORT_FIELDS, e)
    assert [p is None for p in made.plans] == [True, True, False, False, False]
    near, far = np.arange(len(e.name)), np.arange(len(e.name))[::-1].copy()
    cable = {"number": [f"n{k}" for k in near], "fabric": ["ib"] * len(near), "cable": ["c"] * len(near)}
    cable |= {"port": [f"p{k}" for k in near], "far_port": [f"q{k}" for k in far]}
    rows = zip(
        cable["number"], cable["fabric"], cable["cable"], e.row[near], e.rack[near], e.short_u[near], e.name[near],
        cable["port"], e.row[far], e.rack[far], e.short_u[far], e.name[far], cable["far_port"], strict=True,
    )  # fmt: skip
    expected = [[positional_format(x, cabling.SHORT_FIELDS)(*r) for x in lines] for r in rows]
    assert [list(x) for x in zip(*made(near, far, cable), strict=True)] == expected
