"""The elevation report (CSV and SVG) and the connector map's slots, checked against the Fabric."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from conftest import BLUEPRINTS

from supernodeiac.facts.racks import rack_loads
from supernodeiac.pipeline import compile_file, render

SVG = "{http://www.w3.org/2000/svg}"
SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))


def _rows(artifacts: dict, path: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(artifacts[path].decode())))


@pytest.fixture(scope="module")
def nebula():
    c = compile_file(str(BLUEPRINTS / "nebula-x128-ib.yaml"))
    assert c.exit_code == 0
    return c, render(c, ["elevation", "connectors"])[0]


@pytest.fixture(scope="module")
def small(small_ib):
    return small_ib, render(small_ib, ["elevation"])[0]


@pytest.mark.parametrize("which", ["small", "nebula"])
def test_every_placed_device_is_listed_at_its_rack_and_unit(which, request):
    c, arts = request.getfixturevalue(which)
    f = c.fabric
    rows = {r["device"]: r for r in _rows(arts, "elevation/racks.csv")}
    placed = [d for d in f.devices if d.rack >= 0]
    assert len(rows) == len(placed)
    for d in placed:
        r = rows[d.name]
        assert (r["row"], r["rack"], r["model"], r["role"]) == (f.racks[d.rack].row, f.racks[d.rack].name, d.model, d.role)
        if d.chassis >= 0:  # a board shows its chassis slot, not a unit
            assert (r["u"], r["chassis"], r["slot"]) == ("", f.devices[d.chassis].name, d.slot)
        elif d.height_u == 0:  # a rear 0U PDU
            assert (r["u"], r["height_u"]) == ("", "0")
        else:
            assert (int(r["u"]), int(r["height_u"]), r["slot"]) == (d.u, d.height_u, "")
        assert float(r["power_max_w"]) == f.models[d.model].power_max_w


def test_cables_leaving_each_device_are_counted_from_the_links(small):
    c, arts = small
    f = c.fabric
    leaving: Counter[str] = Counter()
    for link in f.links:
        if link.kind == "cable" and f.devices[link.a].rack != f.devices[link.b].rack:
            leaving[f.devices[link.a].name] += 1
            leaving[f.devices[link.b].name] += 1
    rows = _rows(arts, "elevation/racks.csv")
    assert {r["device"]: int(r["cables_leaving"]) for r in rows} == {r["device"]: leaving[r["device"]] for r in rows}
    # a node's 8 NICs leave its rack for the leaves; its BMC stays on the rack switch
    assert {int(r["cables_leaving"]) for r in rows if r["role"] == "node" and r["group"] == "gpu"} == {8}


def test_rack_totals_are_the_sums_of_their_devices(small):
    c, arts = small
    f = c.fabric
    totals = {r["rack"]: r for r in _rows(arts, "elevation/totals.csv")}
    by_rack: dict[str, list] = {}
    for d in f.devices:
        if d.rack >= 0:
            by_rack.setdefault(f.racks[d.rack].name, []).append(d)
    assert set(totals) == set(by_rack)
    for rack, devices in by_rack.items():
        t = totals[rack]
        assert float(t["power_max_kw"]) == pytest.approx(sum(f.models[d.model].power_max_w for d in devices) / 1000, abs=0.005)
        assert int(t["units_used"]) == sum(d.height_u for d in devices if d.chassis < 0)
        assert int(t["devices"]) == len(devices)
    # A01: 4 HGX H100 (8U, 10.2 kW), the rack switch (1U, 0.1 kW) and 3 PDUs (0U): 33U, 40.9 kW of a 45 kW budget
    a01 = totals["A01"]
    assert (int(a01["units_used"]), float(a01["power_max_kw"]), a01["budget_kw"], a01["cooling"]) == (33, 40.9, "45", "air")


def _svg_devices(data: bytes) -> tuple[dict[str, ET.Element], dict[str, ET.Element]]:
    root = ET.fromstring(data)
    devices = {r.get("data-device"): r for r in root.iter(f"{SVG}rect") if r.get("data-device")}
    racks = {g.get("id")[len("rack-") :]: g for g in root.iter(f"{SVG}g") if g.get("class") == "rack"}
    return devices, racks


def test_svg_draws_each_device_at_its_units(small):
    """A device's box starts (U1 at the bottom of the rack outline) at its lowest unit and is as tall
    as its height, measured on the drawing's own rack outline."""
    c, arts = small
    f = c.fabric
    units = c.blueprint.site.rack_units
    drawn = {}
    for path, data in arts.items():
        if path.endswith(".svg"):
            devices, racks = _svg_devices(data)
            for rack, g in racks.items():
                outline = next(r for r in g.iter(f"{SVG}rect") if not r.get("data-device"))
                top, h = float(outline.get("y")), float(outline.get("height"))
                unit = h / units
                for r in g.iter(f"{SVG}rect"):
                    name = r.get("data-device")
                    if name:
                        drawn[name] = (rack, top, unit, r)
    placed = [d for d in f.devices if d.rack >= 0]
    assert set(drawn) == {d.name for d in placed}
    for d in placed:
        rack, top, unit, r = drawn[d.name]
        assert rack == f.racks[d.rack].name and int(r.get("data-u")) == d.u
        if d.height_u:
            bottom = float(r.get("y")) + float(r.get("height"))
            assert bottom == pytest.approx(top + (units - d.u + 1) * unit)  # its lowest unit
            assert float(r.get("height")) == pytest.approx(d.height_u * unit)


def test_chassis_boards_are_drawn_in_slots_not_units(nebula):
    c, arts = nebula
    f = c.fabric
    devices, _ = _svg_devices(arts["elevation/S.svg"])
    for d in f.devices:
        if d.chassis < 0:
            continue
        r = devices[d.name]
        assert r.get("data-slot") == d.slot
        host = devices[f.devices[d.chassis].name]
        x0, y0 = float(host.get("x")), float(host.get("y"))
        x1, y1 = x0 + float(host.get("width")), y0 + float(host.get("height"))
        assert x0 <= float(r.get("x")) and float(r.get("x")) + float(r.get("width")) <= x1 + 1e-6
        assert y0 <= float(r.get("y")) and float(r.get("y")) + float(r.get("height")) <= y1 + 1e-6
        if d.slot.startswith("F"):  # front boards horizontal, rear boards vertical
            assert float(r.get("width")) > float(r.get("height"))
        else:
            assert float(r.get("height")) > float(r.get("width"))


def test_connector_map_has_one_connector_per_slot_pair(nebula):
    c, arts = nebula
    f = c.fabric
    spec = c.blueprint.scaleup[0]
    rows = _rows(arts, "connectors/connectors.csv")
    assert len(rows) == spec.count * spec.compute_boards * spec.switch_boards
    pairs = Counter((r["chassis"], r["compute_slot"], r["switch_slot"]) for r in rows)
    assert set(pairs.values()) == {1}
    per_pair = Counter(frozenset((k.a, k.b)) for k in f.links if k.kind == "connector")
    for r in rows:
        cb, sb = f.device(r["compute_board"]), f.device(r["switch_board"])
        assert (r["compute_slot"], r["switch_slot"], r["connector"]) == (cb.slot, sb.slot, f"{cb.slot}-{sb.slot}")
        assert cb.chassis == sb.chassis and r["chassis"] == f.devices[cb.chassis].name
        assert "compute_u" not in r  # a chassis board has a slot, not a unit
        assert int(r["links"]) == per_pair[frozenset((cb.index, sb.index))] > 0


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_elevation_renders_and_parses(path):
    c = compile_file(str(path))
    arts, _ = render(c, ["elevation"])
    svgs = [p for p in arts if p.endswith(".svg")]
    rows = {f.racks[i].row for i in rack_loads(c.fabric, c.catalogue)} if (f := c.fabric) else set()
    assert {p.split("/")[1].split(".")[0].split("-")[0] for p in svgs} == rows
    for p in svgs:
        ET.fromstring(arts[p])  # well-formed SVG


def test_bom_orders_one_connector_per_slot_pair_and_the_chassis(nebula):
    """The BOM's orthogonal connectors are the connector map's rows (one per compute slot x switch
    slot of each chassis); the chassis and its power shelves are facility lines with their part."""
    c, _ = nebula
    arts, _ = render(c, ["bom", "connectors"])
    rows = _rows(arts, "connectors/connectors.csv")
    bom = _rows(arts, "bom/bom.csv")
    [connector] = [r for r in bom if r["section"] == "connector"]
    assert int(connector["count"]) == len(rows) == len({(r["chassis"], r["compute_slot"], r["switch_slot"]) for r in rows})
    facility = {r["item"]: r for r in bom if r["section"] == "facility"}
    spec = c.blueprint.scaleup[0]
    chassis = c.catalogue.devices["oex-x128-chassis"]
    assert int(facility["oex-x128-chassis"]["count"]) == spec.count
    shelves = chassis.physical.power_shelves
    assert int(facility[shelves.model]["count"]) == spec.count * shelves.count
    assert facility["oex-x128-chassis"]["part"] == chassis.part.number and facility["oex-x128-chassis"]["grade"]
    assert not {r["item"] for r in bom if r["section"] in ("switch", "node")} & set(facility)


def test_bom_lists_pdus_consoles_and_oob_switches(small_ib):
    arts, _ = render(small_ib, ["bom"])
    bom = _rows(arts, "bom/bom.csv")
    f = small_ib.fabric
    by_role = Counter(d.role for d in f.devices)
    facility = {r["item"]: int(r["count"]) for r in bom if r["section"] == "facility"}
    assert facility == {"pdu-3ph": by_role["pdu"], "console-48": by_role["console"]}
    # a console server where a switch other than the rack switch has a serial console: N01, N02
    consoled = {d.rack for d in f.devices if d.role not in ("console", "mgmt") and f.layouts[d.model].has_role("console")}
    assert by_role["pdu"] == 3 * 6 and by_role["console"] == len(consoled) == 2
    [sn2201] = [r for r in bom if r["item"] == "sn2201"]
    assert sn2201["section"] == "switch" and int(sn2201["count"]) == by_role["mgmt"] + by_role["mgmt-oob"]


# -- elevation/<row>.pdf: the rows for print ---------------------------------------------------------


def _ctx(c):
    from supernodeiac.outputs.base import RenderContext

    return RenderContext(c.blueprint, c.catalogue, c.fabric)


@pytest.fixture(scope="module")
def nebula_sheets(nebula):
    from supernodeiac.outputs.elevation_sheets import layout

    c, _ = nebula
    return c, layout(_ctx(c))


@pytest.fixture(scope="module")
def nvl_sheets():
    from conftest import shipped

    from supernodeiac.outputs.elevation_sheets import layout

    c = shipped("nvl72-pod")
    return c, layout(_ctx(c))


def test_print_pages_are_faces_times_sheets_of_each_row(small, nvl_sheets):
    """Every row of racks gets one PDF: front sheets then rear sheets, RACKS_PER_SHEET racks a page
    (pypdf reads the page count); the rear sheets show the same racks in reverse order."""
    pypdf = pytest.importorskip("pypdf", reason="pypdf reads the PDFs (the test extra)")
    from conftest import shipped_files

    from supernodeiac.outputs.elevation_sheets import RACKS_PER_SHEET

    for c, arts in (small, (nvl_sheets[0], shipped_files("nvl72-pod"))):
        f = c.fabric
        racks: dict[str, list[str]] = {}
        for i in sorted(rack_loads(f, c.catalogue), key=lambda i: f.racks[i].position):
            racks.setdefault(f.racks[i].row, []).append(f.racks[i].name)
        assert {p for p in arts if p.startswith("elevation/") and p.endswith(".pdf")} == {f"elevation/{row}.pdf" for row in racks}
        for row, names in racks.items():
            reader = pypdf.PdfReader(io.BytesIO(bytes(arts[f"elevation/{row}.pdf"])))
            sheets = -(-len(names) // RACKS_PER_SHEET)
            assert len(reader.pages) == 2 * sheets
            texts = [p.extract_text() for p in reader.pages]
            for n in range(sheets):
                shown = names[n * RACKS_PER_SHEET : (n + 1) * RACKS_PER_SHEET]
                assert f"row {row}, front" in texts[n] and f"row {row}, rear" in texts[sheets + n]
                for name in shown:  # each rack's name on its front and its rear sheet
                    assert name in texts[n] and name in texts[sheets + n]
    # nvl72-pod's row A: 8 racks, two sheets a face
    assert len(pypdf.PdfReader(io.BytesIO(bytes(arts["elevation/A.pdf"]))).pages) == 4


def test_print_boxes_sit_at_their_units_on_both_faces(nebula_sheets):
    """Each device at its rack, at its lowest unit and height (U1 at the rack outline's bottom):
    a rack device on both faces, a front chassis board on the front, a rear one on the rear."""
    c, rows = nebula_sheets
    f = c.fabric
    units = c.blueprint.site.rack_units
    for face in ("front", "rear"):
        seen: dict[str, object] = {}
        for sheets in rows.values():
            for sheet in (s for s in sheets if s.face == face):
                outline = {b.rack: b for b in sheet.boxes if not b.device and not b.lines and b.fill == "#fafafa"}
                for b in sheet.boxes:
                    if not b.device:
                        continue
                    assert b.device not in seen
                    seen[b.device] = b
                    d = f.device(b.device)
                    assert b.rack == f.racks[d.rack].name
                    rack = outline[b.rack]
                    unit = rack.h / units
                    if d.chassis < 0 and d.height_u:
                        assert b.u == d.u
                        assert b.y == pytest.approx(rack.y + (d.u - 1) * unit)
                        assert b.h == pytest.approx(d.height_u * unit)
                    elif d.chassis >= 0:
                        host = seen[f.devices[d.chassis].name]
                        assert host.x <= b.x and b.x + b.w <= host.x + host.w + 1e-6
                        assert host.y <= b.y and b.y + b.h <= host.y + host.h + 1e-6
                        assert b.slot == d.slot and b.vertical == d.slot.startswith("R")
        placed = {d.name for d in f.devices if d.rack >= 0}
        zero_u = {d.name for d in f.devices if d.rack >= 0 and d.chassis < 0 and d.height_u == 0}
        boards = {d.name: d.slot[0] for d in f.devices if d.chassis >= 0}
        expected = {n for n in placed if boards.get(n, face[0].upper()) == face[0].upper()}
        assert set(seen) == (expected - zero_u if face == "front" else expected)


@pytest.mark.parametrize("which", ["nebula_sheets", "nvl_sheets"])
def test_print_text_fits_its_box_at_six_points_or_more(which, request):
    """Every line is at least MIN_PT (6 pt) and, measured with reportlab's stringWidth, fits its
    box's width; the lines together fit its height."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from supernodeiac.outputs.elevation_sheets import FONT, LEADING, MIN_PT, PAD

    _, rows = request.getfixturevalue(which)
    drawn = 0
    for sheets in rows.values():
        for sheet in sheets:
            for b in sheet.boxes:
                along, across = (b.h, b.w) if b.vertical else (b.w, b.h)
                if b.lines:
                    drawn += 1
                    assert b.size >= MIN_PT
                    assert len(b.lines) * b.size * LEADING <= across - 2 * PAD + 1e-9
                for line in b.lines:
                    assert stringWidth(line, FONT, b.size) <= along - 2 * PAD + 1e-9, line
            assert all(t.size >= MIN_PT for t in sheet.texts)
    assert drawn > 100


def test_print_counts_say_what_they_count(small, nebula_sheets):
    """A device's count line is its cable ends and those leaving the rack, counted from the links;
    a chassis board adds its connector links (orthogonal connectors are not cables)."""
    from supernodeiac.outputs.elevation_sheets import layout

    for c, rows in ((small[0], layout(_ctx(small[0]))), nebula_sheets):
        f = c.fabric
        cables: Counter[int] = Counter()
        leaving: Counter[int] = Counter()
        connectors: Counter[int] = Counter()
        for link in f.links:
            for end in (link.a, link.b):
                if link.kind == "cable":
                    cables[end] += 1
                    leaving[end] += f.devices[link.a].rack != f.devices[link.b].rack
                elif link.kind == "connector":
                    connectors[end] += 1
        checked = 0
        for sheets in rows.values():
            for b in (b for s in sheets for b in s.boxes if b.device and b.lines):
                d = f.device(b.device)
                text = " ".join(b.lines)
                if cables[d.index] and len(b.lines) > 1:
                    n, m = cables[d.index], leaving[d.index]
                    assert f"{n} cable{'s' if n != 1 else ''}, {m} leave{'s' if m == 1 else ''} the rack" in text
                    checked += 1
                if connectors[d.index] and len(b.lines) > 1:
                    assert f"{connectors[d.index]} connector links" in text
        assert checked > 20


def test_print_pdf_is_the_same_bytes_twice_and_has_a_legend(small):
    c, arts = small
    again, _ = render(c, ["elevation"])
    assert bytes(arts["elevation/A.pdf"]) == bytes(again["elevation/A.pdf"])
    pypdf = pytest.importorskip("pypdf", reason="pypdf reads the PDFs (the test extra)")
    page = pypdf.PdfReader(io.BytesIO(bytes(arts["elevation/A.pdf"]))).pages[0]
    text = page.extract_text()
    assert "Legend" in text and "management network" in text and "compute (nodes, trays, boards)" in text
    assert [float(x) for x in page.mediabox[2:]] == pytest.approx([1190.55, 841.89], abs=0.01)  # A3 landscape


def test_letter_paper_prints_the_workbook_on_letter_and_the_elevations_on_tabloid(tmp_path):
    """naming.paper: letter: the workbook's sheets set paperSize 1 (US Letter; 9 is A4) and every
    page of elevation/<row>.pdf is Tabloid landscape (1224 x 792 pt), its boxes inside the page and
    its text still 6 pt or more, fitting its boxes."""
    import openpyxl
    from pypdf import PdfReader
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from supernodeiac.outputs.elevation_sheets import FONT, MIN_PT, PAD, layout
    from supernodeiac.pipeline import compile_text

    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    sizes = {}
    for paper in ("a4", "letter"):
        c = compile_text(text + f"\nnaming:\n  paper: {paper}\n")
        assert c.exit_code == 0 and c.blueprint.naming.paper == paper
        files, _ = render(c, ["workbook", "elevation"])
        path = tmp_path / f"{paper}.xlsx"
        path.write_bytes(files["cabling/cabling.xlsx"])
        book = openpyxl.load_workbook(path, read_only=False)
        sizes[paper] = {int(ws.page_setup.paperSize) for ws in book.worksheets}
        pages = [p.mediabox for name, data in files.items() if name.endswith(".pdf") for p in PdfReader(io.BytesIO(data)).pages]
        want = (1224.0, 792.0) if paper == "letter" else (1190.55, 841.89)  # Tabloid, A3 (landscape, pt)
        assert pages and {(round(float(b.width), 2), round(float(b.height), 2)) for b in pages} == {want}
        for sheets in layout(_ctx(c)).values():
            for sheet in sheets:
                w, h = sheet.page
                for b in sheet.boxes:
                    assert 0 <= b.x <= w - b.w + 1e-6 and 0 <= b.y <= h - b.h + 1e-6
                    along = b.h if b.vertical else b.w
                    for line in b.lines:
                        assert b.size >= MIN_PT and stringWidth(line, FONT, b.size) <= along - 2 * PAD + 1e-9
    assert sizes == {"a4": {9}, "letter": {1}}


@pytest.mark.parametrize("name", ["nebula-x128-ib", "roce-rail-2tier", "small-ib"])
def test_legends_made_once_are_each_sheets_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """row_pdf writes a legend's operators once per distinct legend (its notes hold parentheses,
    escaped through the canvas): the PDFs must be those made with every sheet's legend drawn."""
    from supernodeiac.outputs import elevation_sheets

    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    pdfs = {k: bytes(v) for k, v in render(c, ["elevation"])[0].items() if k.endswith(".pdf")}
    assert pdfs
    monkeypatch.setattr(elevation_sheets, "_legend_key", lambda sheet: object())  # never found again
    again = {k: bytes(v) for k, v in render(c, ["elevation"])[0].items() if k.endswith(".pdf")}
    assert again == pdfs


@pytest.mark.parametrize("name", ["nebula-x128-ib", "roce-rail-2tier", "dgx-h100-superpod-4su"])
def test_boxes_fitted_once_a_row_are_each_faces_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """row_sheets fits a device's box once for both faces of its row: the PDFs must be those made
    with every sheet fitting its own boxes."""
    from supernodeiac.outputs import elevation_sheets

    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    pdfs = {k: bytes(v) for k, v in render(c, ["elevation"])[0].items() if k.endswith(".pdf")}
    assert pdfs
    sheet = elevation_sheets._sheet
    monkeypatch.setattr(elevation_sheets, "_sheet", lambda *args: sheet(*args[:8]))  # no fits kept between sheets
    again = {k: bytes(v) for k, v in render(c, ["elevation"])[0].items() if k.endswith(".pdf")}
    assert again == pdfs
