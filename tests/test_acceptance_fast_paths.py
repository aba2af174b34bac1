"""The acceptance renderer's shortcuts (issue 24) against the plain way they replace: each file a
fast path writes is what a loop over the links (or tests), one Python row at a time, writes of the
same design. Designs whose names break the easy assumptions: switch names that do not sort in
Fabric order (``leaf10`` before ``leaf2``), cable IDs keyed by the B end (not in link order),
labels with commas, quotes, an ``=`` and non-ASCII text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import BLUEPRINTS, compile_text
from hypothesis import given, settings
from hypothesis import strategies as st

from supernodeiac.catalog.host_topology import host_topologies
from supernodeiac.catalog.link_health import link_health
from supernodeiac.catalog.parts import medium_part, module_part, ordered_length
from supernodeiac.fabric.views import links_by_fabric, local_tiers
from supernodeiac.facts.acceptance_plan import PerfTest, _grouped, ecmp_switches, kept_labels, label_maker, plan, wave_key
from supernodeiac.facts.hosts import rdma_names
from supernodeiac.facts.physical_plan import TOOLS, PhysicalPlan, physical_fabrics, physical_plan
from supernodeiac.facts.sonic_ports import sonic_ports, sonic_switches
from supernodeiac.outputs import acceptance_physical, acceptance_ports
from supernodeiac.outputs.acceptance_physical import PHYSICAL_COLUMNS, physical_tsv
from supernodeiac.outputs.acceptance_ports import SWITCH_PORT_COLUMNS, switch_ports_tsv
from supernodeiac.outputs.base import RenderContext
from supernodeiac.outputs.csv_safe import tsv_line

DATA = Path(__file__).parent / "data"
HOSTILE = (
    "naming:\n"
    '  cable_label: "{b},\\"{b_port}\\" \\u00e9 ={a}"\n'
    "  cable_id: '{b}#{b_port}'\n"
    '  devices: {leaf: "{fabric}-leaf{index}", spine: "{fabric}-s{index}", core: "{fabric}-c{index}"}\n'
)
DESIGNS = [BLUEPRINTS / "roce-rail-2tier.yaml", BLUEPRINTS / "roce-3tier-oversub.yaml", DATA / "roce-dual-plane.yaml"]


def _context(path: Path, naming: str) -> RenderContext:
    text = path.read_text()
    assert "\nnaming:" not in text
    c = compile_text(text.replace("\nsite:", "\n" + naming + "site:", 1))
    assert c.fabric is not None and c.exit_code == 0, [f.message for f in c.findings if f.severity == "error"]
    return c.render_context()


def _roce_fabrics(ctx: RenderContext) -> list[str]:
    return sorted(n for n, facts in ctx.fabric.facts.items() if facts.get("transport") == "ethernet" and "kind" in facts)


def _switch_ports_plain(ctx: RenderContext, fabric: str) -> bytes:
    """switch_ports.tsv the plain way: per link, per end on a mapped switch port, one row; sorted."""
    f, t = ctx.fabric, ctx.fabric.links
    positions = t.indices_of(fabric)
    mapped = set(sonic_switches(f, ctx.catalogue))
    ids = t.ids()
    labels = label_maker(f, ctx.blueprint)(positions)
    rows = []
    for i, label in zip(positions, labels, strict=True):
        a, ap, b, bp = t.a[i], t.a_port[i], t.b[i], t.b_port[i]
        both = all(f.models[f.devices[x].model].kind == "switch" for x in (a, b))
        for dev, port, peer, peer_port in ((a, ap, b, bp), (b, bp, a, ap)):
            d = f.devices[dev]
            if dev not in mapped:
                continue
            sonic = sonic_ports(f.layouts[d.model], ctx.catalogue.port_maps[d.model]).ports[port]
            if sonic is None:
                continue
            far = f.devices[peer]
            printed = f.layouts[far.model].physical_names[peer_port]
            line = (d.name, sonic.name, ids[i], label, "switch" if both else "host", far.name, printed)
            rows.append((d.name, port, line))
    rows.sort(key=lambda r: (r[0], r[1]))
    return ("".join(tsv_line(r) + "\n" for r in [SWITCH_PORT_COLUMNS, *(r[2] for r in rows)])).encode()


@pytest.mark.parametrize("naming", ["", HOSTILE], ids=["defaults", "hostile"])
@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.stem)
def test_switch_ports_are_the_plain_way(path: Path, naming: str) -> None:
    ctx = _context(path, naming)
    fabrics = _roce_fabrics(ctx)
    assert fabrics
    for fabric in fabrics:
        made = switch_ports_tsv(ctx, fabric)
        assert made == _switch_ports_plain(ctx, fabric)
        assert made.count(b"\n") > 1  # rows, not a header alone
    if naming:
        assert "\u00e9 =".encode() in made and b"#" in made  # the hostile labels and IDs are the ones written


def test_kept_labels_are_the_label_makers_in_any_order_and_repeated() -> None:
    ctx = _context(DESIGNS[0], HOSTILE)
    f, bp = ctx.fabric, ctx.blueprint
    fresh, kept = label_maker(f, bp), kept_labels(f, bp)
    links = f.links.indices_of("roce")
    asks = [links[::7], links[::-1], [links[3], links[3], links[0]], links]  # some, reversed, repeated, all
    for ask in asks:
        assert kept(ask) == fresh(ask)
    assert kept(iter(links[:5])) == fresh(links[:5])  # an iterator, as label_maker takes
    assert kept([]) == []


def _ecmp_plain(ctx: RenderContext, name: str, tests: list[PerfTest]) -> dict[str, list[int]]:
    """Per wave, test by test: its path's switches, and every switch above its lowest ones up to the
    tier it turns at (walked up link by link)."""
    f = ctx.fabric
    fl = links_by_fabric(f)[name]
    tiers = local_tiers(f, name, fl)
    above: dict[int, set[int]] = {}
    for a, b in zip(fl.a, fl.b, strict=True):
        if tiers[a] and tiers[b] and tiers[a] != tiers[b]:
            lo, hi = (a, b) if tiers[a] < tiers[b] else (b, a)
            above.setdefault(lo, set()).add(hi)

    def up(x: int, top: int) -> set[int]:
        return {x}.union(*(up(hi, top) for hi in above.get(x, ()) if tiers[hi] <= top))

    waves: dict[str, set[int]] = {}
    for test in tests:
        path = {d for i in test.under_test + test.via for d in (f.links.a[i], f.links.b[i]) if tiers[d]}
        top, low = max(tiers[d] for d in path), min(tiers[d] for d in path)
        sw = waves.setdefault(wave_key(test.stage, test.rail, test.wave), set())
        sw |= path
        for d in path:
            if tiers[d] == low:
                sw |= up(d, top)
    return {k: sorted(v) for k, v in waves.items()}


@pytest.mark.parametrize("naming", ["", HOSTILE], ids=["defaults", "hostile"])
@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.stem)
def test_ecmp_switches_are_the_plain_way(path: Path, naming: str) -> None:
    ctx = _context(path, naming)
    p = plan(ctx.fabric, ctx.blueprint)
    for fabric in _roce_fabrics(ctx):
        tests = p.perftests[fabric]
        expected = _ecmp_plain(ctx, fabric, tests)
        assert p.ecmp[fabric] == expected and list(p.ecmp[fabric]) == list(expected)  # the waves in the same order too
        assert len(expected) > 1 and max(map(len, expected.values())) > 2
        # Tests in another order (a later wave first): the same switches per wave, waves as first named.
        shuffled = tests[::-1]
        assert ecmp_switches(ctx.fabric, fabric, shuffled) == _ecmp_plain(ctx, fabric, shuffled)


def _expected_part(ctx: RenderContext, spec_index: int, length: float, end: str) -> tuple[str, str, str]:
    """What the BOM orders for one end's cage: (part number or "", its kind, the module's pmd)."""
    cat = ctx.catalogue
    spec = ctx.fabric.links.specs[spec_index]
    m = cat.media.get(spec.medium)
    if m is not None and m.shape == "transceiver":
        module = cat.transceivers.get(spec.a_module if end == "a" else spec.b_module)
        if module is None:
            return ("", "none", "")
        if module.integrated:
            return ("", "integrated", module.pmd)
        ref = module_part(module)
        return (ref.number, "module", module.pmd) if ref.status == "exact" else ("", "generic", module.pmd)
    if m is not None and m.shape in ("straight", "splitter"):
        ref = medium_part(cat, spec.medium, ordered_length(cat, spec.medium, length))
        if ref.status == "exact":
            return (ref.number, "cable", "")
        return (ref.number.rsplit(" ", 2)[0], "family", "") if ref.status == "family" else ("", "generic", "")
    return ("", "none", "")


def _physical_plain(ctx: RenderContext, fabric: str) -> bytes:
    """physical.tsv the plain way: per link in cable-ID order, per end, every cell from the Fabric
    and the catalogue, the text through tsv_line, the figures as snc formats them."""
    f, t = ctx.fabric, ctx.fabric.links
    ids = t.ids()
    health = link_health()
    transport = f.facts[fabric]["transport"]
    ib = transport == "infiniband"
    rdma = rdma_names(f, host_topologies(ctx.blueprint.catalogue.host_topology)[0])

    def num(x: float | None) -> str:
        return "" if x is None else f"{x:.6g}"

    lines = [tsv_line(PHYSICAL_COLUMNS)]
    for i in sorted(t.indices_of(fabric), key=ids.__getitem__):
        spec = t.specs[t.spec[i]]
        label = label_maker(f, ctx.blueprint)([i])[0]
        ends = {"a": (t.a[i], t.a_port[i], t.b[i], t.b_port[i]), "b": (t.b[i], t.b_port[i], t.a[i], t.a_port[i])}
        for end, (x, p, y, q) in ends.items():
            d, far = f.devices[x], f.devices[y]
            layout = f.layouts[d.model]
            switch = f.models[d.model].kind == "switch"
            port_map = ctx.catalogue.port_maps.get(d.model)
            if switch and not ib and port_map is not None:
                sonic = sonic_ports(layout, port_map).ports[p]
                os_name = sonic.name if sonic is not None else layout.names[p]
            else:
                os_name = layout.names[p] if switch else rdma[d.model][p]
            data = layout.ports_of("data")
            ib_port = "" if not ib else ("1" if not switch else str(data.index(p) + 1) if p in data else "")
            number, kind, pmd = _expected_part(ctx, t.spec[i], t.length_m[i], end)
            sig = health.signalling_at(spec.lane_gbps)
            first = layout.port_positions[p] * spec.lanes + 1
            text = [ids[i], label, end, d.name, "ibdiagnet" if switch and ib else "sonic" if switch else "mlxlink"]
            text += [os_name, ib_port, layout.physical_names[p], far.name, f.layouts[far.model].physical_names[q]]
            text += [number, kind, pmd, f"{first}-{first + spec.lanes - 1}", sig.fec if sig is not None else ""]
            optical = kind in ("module", "generic")
            rx = health.rx_power.get(pmd) if optical else None
            figures = [num(spec.lane_gbps), str(spec.lanes), num(sig.pre_fec_ber if sig is not None else None)]
            figures += [num(health.post_fec_ber.get(transport)), str(health.symbol_errors_max), str(health.link_down_max)]
            figures += [num(rx.min_dbm if rx else None), num(rx.max_dbm if rx else None)]
            figures += [num(health.temperature_c_max if optical else None)]
            lines.append(tsv_line(text) + "\t" + "\t".join(figures))
    return ("\n".join(lines) + "\n").encode()


PHYSICAL_DESIGNS = [*DESIGNS, BLUEPRINTS / "small-ib.yaml", BLUEPRINTS / "ib-3tier.yaml"]


@pytest.mark.parametrize("naming", ["", HOSTILE], ids=["defaults", "hostile"])
@pytest.mark.parametrize("path", PHYSICAL_DESIGNS, ids=lambda p: p.stem)
def test_physical_plan_is_the_plain_way(path: Path, naming: str) -> None:
    ctx = _context(path, naming)
    fabrics = physical_fabrics(ctx.fabric)
    assert fabrics
    for fabric in fabrics:
        p = physical_plan(ctx.fabric, ctx.blueprint, ctx.catalogue, fabric)
        made = physical_tsv(p)
        assert made == _physical_plain(ctx, fabric)
        rows = made.decode().splitlines()[1:]
        assert len(rows) == 2 * len(ctx.fabric.links.indices_of(fabric))
        tools = [r.split("\t")[4] for r in rows]
        assert p.counts() == {tool: tools.count(tool) for tool in TOOLS}
        assert p.exact_parts() == sum(1 for r in rows if r.split("\t")[11] in ("module", "cable"))
        # snc diff's plan of some links: those links' rows, the counts of all.
        keep = np.zeros(len(ctx.fabric.links), dtype=bool)
        keep[ctx.fabric.links.indices_of(fabric)[::3]] = True
        some = physical_plan(ctx.fabric, ctx.blueprint, ctx.catalogue, fabric, keep)
        ids = set(np.asarray(ctx.fabric.links.ids())[keep].tolist())
        assert physical_tsv(some).decode().splitlines()[1:] == [r for r in rows if r.split("\t")[0] in ids]
        assert (some.ends(), some.counts(), some.exact_parts()) == (p.ends(), p.counts(), p.exact_parts())


def _physical_rows_plain(p: PhysicalPlan) -> bytes:
    """physical.tsv of a plan row by row: every text cell through tsv_line, the figures as snc formats them."""

    def num(x: float | None) -> str:
        return "" if x is None else f"{x:.6g}"

    lines = [tsv_line(PHYSICAL_COLUMNS)]
    for k in range(len(p)):
        port, peer_port, part = p.ports[p.port[k]], p.ports[p.peer_port[k]], p.parts[p.part[k]]
        number, kind, pmd, fec, lane, lanes, pre, post, rx_min, rx_max, temp = part
        text = [p.cable[k // 2], p.label[k // 2], "ab"[k % 2], p.names[p.device[k]], *port, p.names[p.peer[k]], peer_port[3]]
        text += [number, kind, pmd, p.module_lanes[p.lanes[k]], fec]
        figures = [num(lane), str(lanes), num(pre), num(post), str(p.symbol_errors_max), str(p.link_down_max)]
        figures += [num(rx_min), num(rx_max), num(temp)]
        lines.append(tsv_line(text) + "\t" + "\t".join(figures))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("cell", ["=1+2", "a\tb", "two\nlines", "-3", "@x", "caf\u00e9", "\u2028sep"])
@pytest.mark.parametrize("where", ["cable", "label", "name", "port", "printed", "part", "fec"])
def test_physical_tsv_cleans_each_cell_as_tsv_line(where: str, cell: str) -> None:
    """Text the name rules keep out today (tabs, line breaks, formula starts) still comes out as
    tsv_line makes it, wherever in the plan it is: the per-row columns and the shared tables."""
    ctx = _context(DESIGNS[0], "")
    p = physical_plan(ctx.fabric, ctx.blueprint, ctx.catalogue, "roce")
    if where in ("cable", "label"):
        getattr(p, where)[5] = cell
    elif where == "name":
        p.names[p.device[7]] = cell
    elif where in ("port", "printed"):
        k = p.port[3]
        p.ports[k] = (*p.ports[k][:1], cell, *p.ports[k][2:]) if where == "port" else (*p.ports[k][:3], cell)
    else:
        k = p.part[9]
        p.parts[k] = (cell, *p.parts[k][1:]) if where == "part" else (*p.parts[k][:3], cell, *p.parts[k][4:])
    made = physical_tsv(p)
    assert made == _physical_rows_plain(p)
    assert made.count(b"\n") == len(p) + 1  # no cell split a line


def test_tables_made_in_pieces_are_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """physical.tsv and switch_ports.tsv are made 16,384 lines at a time: pieces of a few lines,
    a cell made unclean in one of them, give the same bytes."""
    ctx = _context(DESIGNS[0], HOSTILE)
    p = physical_plan(ctx.fabric, ctx.blueprint, ctx.catalogue, "roce")
    p.label[11] = "=a\tb"
    ports_whole = switch_ports_tsv(ctx, "roce")
    monkeypatch.setattr(acceptance_physical, "_CHUNK", 7)
    monkeypatch.setattr(acceptance_ports, "_CHUNK", 5)
    assert len(list(acceptance_physical.physical_chunks(p))) > 3
    assert physical_tsv(p) == _physical_rows_plain(p)
    assert len(acceptance_ports.switch_ports_chunks(ctx, "roce")) > 3
    assert switch_ports_tsv(ctx, "roce") == ports_whole == _switch_ports_plain(ctx, "roce")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-3, 3), st.integers(0, 40)), max_size=60))
def test_grouped_rows_are_the_plain_dict_of_sorted_lists(rows: list[tuple[int, int, int]]) -> None:
    """perftests' links sorted by switch in numpy (acceptance_plan._grouped) against the loop it
    replaces: setdefault(key, []).append(row) per link, then each list sorted."""
    plain: dict[int, list[tuple[int, int]]] = {}
    for key, x, y in rows:
        plain.setdefault(key, []).append((x, y))
    for found in plain.values():
        found.sort()
    cols = [np.array([r[k] for r in rows], dtype=np.int64) for k in range(3)]
    made = _grouped(*cols)
    assert made == plain
    assert all(type(v) is int for found in made.values() for row in found for v in row)  # Python ints, not numpy's
