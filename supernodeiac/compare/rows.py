"""Which rows of the per-link tables can differ between two Fabrics, from their link columns.

``snc diff`` compares the outputs of both sides. A table with one row per link (``links.csv``,
``p2p/<fabric>.csv``, the acceptance plan's ``physical.tsv``, a line per link end) or per physical
cable (``cables.csv``) is compared by the lines present on
one side only (``artifacts._csv``: rows keyed by cable ID, or added and removed lines), so a row
that is the same bytes on both sides takes no part in the result. This module finds, without
rendering, the rows that may differ; the renderers' subset form (``outputs.base.SUBSETS``) then
renders those rows alone on both sides, and the comparison of the two short tables is the
comparison of the two whole ones.

A link's row is a function of its cable ID, its two ends (each device's name, model, row, rack
and unit; the port), its spec, its routed length and its assembly's ordered length, and of what
is the same for every row: the naming settings, the site name, the catalogue (media, parts,
modules, device models and their ports, port maps), the blueprint's catalogue section (host
topologies) and each fabric's kind and transport. When any of the
latter differ, or a cable ID repeats on a side (a names-unique error), :func:`select` gives None
and the tables are rendered whole. Otherwise a link is kept (rendered) on both sides when its
cable ID is on one side only or any of its own inputs differ; a cable (an item of
``facts/cable_plan``) when its ID is on one side only, its cord or short number differs, or one
of its links is kept or is not the same set of links. Matched rows are kept on both sides or on
neither, so a row never looks added or removed because it was left out on the other side.

Files per row of racks (workbooks, elevation sheets) are made for the rows where such a cable
has an end (``hall_rows``); the label sheets for the racks where one has a label (``racks``).
A file of one fabric's links alone (its ibnetdiscover topology) is left out where no link of that
fabric may differ on either side (``fabrics``) and no GUID of its devices may (``guids``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ..fabric.fabric_facts import kind_of, transport_of
from ..facts.bom import Bom
from ..facts.bom import bill_of_materials as bom_of
from ..facts.cable_plan import cable_ids, cable_numbers, cable_plan
from ..facts.cage_plan import assemblies
from ..outputs.base import RenderContext, RowSelection


@dataclass(frozen=True)
class Selections:
    old: RowSelection
    new: RowSelection


def _globals(ctx: RenderContext) -> tuple:
    """What every row reads beside its own link: naming, site, the blueprint's catalogue section
    (host topologies: the RDMA device names), each fabric's kind and transport."""
    bp, f = ctx.blueprint, ctx.fabric
    fabrics = {name: (kind_of(facts), transport_of(facts)) for name, facts in f.facts.items()}
    return (bp.naming, bp.site.name or bp.metadata.name, bp.catalogue, f.cable_id, fabrics, f.fabrics())


def numbers(ctx: RenderContext) -> list[str]:
    """The short numbers of the Fabric's cables (``cable_numbers``), made once per render context."""
    found = ctx.memo.get("cable_numbers")
    if found is None:
        plan = cable_plan(ctx.fabric, ctx.catalogue)
        found = ctx.memo["cable_numbers"] = cable_numbers(cable_ids(ctx.fabric, plan))
    return found


def bill_of_materials(ctx: RenderContext) -> Bom:
    """The side's bill of materials (facts/bom), made once per render context: ``snc diff``'s
    totals and the per-row workbooks' choice (``_hall_rows``) read it."""
    found = ctx.memo.get("bill_of_materials")
    if found is None:
        found = ctx.memo["bill_of_materials"] = bom_of(ctx.catalogue, ctx.fabric, ctx.blueprint)
    return found


def select(old: RenderContext, new: RenderContext, outputs: Collection[str] | None = None) -> Selections | None:
    """The rows to render on each side, or None when the tables must be rendered whole.
    ``outputs``: the renderers that will take the selections (None: all); what only one of them
    reads is found only for it (the label sheets' line count)."""
    if _globals(old) != _globals(new) or old.catalogue != new.catalogue:
        return None
    fo, fn = old.fabric, new.fabric
    ids_o, ids_n = fo.links.ids(), fn.links.ids()
    pos_old = dict(zip(ids_o, range(len(ids_o))))
    if len(pos_old) != len(ids_o) or len(set(ids_n)) != len(ids_n):
        return None
    match = np.fromiter(map(pos_old.get, ids_n, repeat(-1)), dtype=np.int64, count=len(ids_n))
    matched = match >= 0
    nj = np.flatnonzero(matched)
    oi = match[matched]

    # Devices in one space of signatures: the same number for a device whose name, model and
    # place are the same on both sides.
    space: dict[tuple, int] = {}
    sig_o = np.array([space.setdefault(s, len(space)) for s in _signatures(old)], dtype=np.int64)
    sig_n = np.array([space.setdefault(s, len(space)) for s in _signatures(new)], dtype=np.int64)
    specs: dict[object, int] = {}
    spec_o = np.array([specs.setdefault(s, len(specs)) for s in fo.links.specs], dtype=np.int64)
    spec_n = np.array([specs.setdefault(s, len(specs)) for s in fn.links.specs], dtype=np.int64)
    ao, an = fo.links.arrays(), fn.links.arrays()
    asm_o = assemblies(fo, old.catalogue.media).length_m
    asm_n = assemblies(fn, new.catalogue.media).length_m
    same = np.ones(len(nj), dtype=bool)
    for dev, port in (("a", "a_port"), ("b", "b_port")):
        same &= sig_o[getattr(ao, dev)[oi]] == sig_n[getattr(an, dev)[nj]]
        same &= getattr(ao, port)[oi] == getattr(an, port)[nj]
    same &= spec_o[ao.spec[oi]] == spec_n[an.spec[nj]]
    same &= ao.length_m[oi] == an.length_m[nj]
    same &= asm_o[oi] == asm_n[nj]

    links_o = np.ones(len(ids_o), dtype=bool)
    links_n = np.ones(len(ids_n), dtype=bool)
    links_o[oi[same]] = False
    links_n[nj[same]] = False
    # The partner of each link that is the same on both sides (-1: none), for the cables below.
    partner = np.full(len(ids_n), -1, dtype=np.int64)
    partner[nj[same]] = oi[same]
    (cables_o, cables_n), (twins_o, twins_n) = _cables(old, new, links_n, partner)
    rows = _hall_rows(old, new, (cables_o, cables_n), (links_o, links_n))
    racks = _label_racks(old, new, (cables_o, cables_n), outputs is None or "labels" in outputs)
    ports = frozenset(_ports(old, links_o) | _ports(new, links_n))
    shared: dict = {}
    ordered = bool(np.all(oi[1:] > oi[:-1]))  # the new side's matched links in the old side's order
    guids = _guid_devices(old, new) if outputs is None or "opensm" in outputs else None
    fabrics = frozenset(_fabrics(old, links_o) | _fabrics(new, links_n))
    return Selections(
        RowSelection(links_o, cables_o, rows, racks, ports, 0, twins_o, ordered, guids, fabrics, shared),
        RowSelection(links_n, cables_n, rows, racks, ports, 1, twins_n, ordered, guids, fabrics, shared),
    )


def _fabrics(ctx: RenderContext, links: np.ndarray) -> set[str]:
    """The fabrics of the links ``links`` selects (a link's fabric is its spec's)."""
    specs = ctx.fabric.links.specs
    return {specs[k].fabric for k in np.unique(ctx.fabric.links.arrays().spec[links]).tolist()}


def _guid_devices(old: RenderContext, new: RenderContext) -> frozenset[str] | None:
    """The devices (by name) whose InfiniBand GUIDs may differ: on one side only, or made from
    another base (facts/guid_plan: another entry or rank). None (the subnet manager's per-node
    files whole) when there is no InfiniBand fabric, a name repeats on a side, the devices both
    sides have are not in one order (those files list nodes in device order), or a GUID does not
    fit its plan."""
    from ..facts.guid_plan import GuidPlanError
    from ..facts.ib_fabric import infiniband_fabrics
    from ..outputs.opensm import guid_plan

    if not infiniband_fabrics(old.fabric) or not infiniband_fabrics(new.fabric):
        return None
    names = [[d.name for d in c.fabric.devices] for c in (old, new)]
    if any(len(set(n)) != len(n) for n in names):
        return None
    at_new = {x: k for k, x in enumerate(names[1])}
    common = np.array([at_new[x] for x in names[0] if x in at_new], dtype=np.int64)
    if not np.all(common[1:] > common[:-1]):
        return None
    try:
        bases = [dict(zip(n, guid_plan(c).bases(), strict=True)) for n, c in zip(names, (old, new), strict=True)]
    except GuidPlanError:
        return None
    return frozenset(x for x in bases[0].keys() | bases[1].keys() if bases[0].get(x) != bases[1].get(x))


def _ports(ctx: RenderContext, links: np.ndarray) -> set[tuple[str, int]]:
    """(device name, port) of both ends of the links ``links`` selects."""
    arr = ctx.fabric.links.arrays()
    names = [d.name for d in ctx.fabric.devices]
    out: set[tuple[str, int]] = set()
    for dev, port in ((arr.a, arr.a_port), (arr.b, arr.b_port)):
        out |= {(names[d], p) for d, p in zip(dev[links].tolist(), port[links].tolist(), strict=True)}
    return out


def _label_racks(
    old: RenderContext, new: RenderContext, keep: tuple[np.ndarray, np.ndarray], labels: bool
) -> frozenset[str] | None:
    """The racks whose label sheets may differ: those where a cable that may differ has a label
    (on either side), or that are on one side only; with two racks whose sheets share a file
    name, both. None (every rack) when every sheet's title differs (the design's name), when the
    racks both sides have are not in the same order (labels.csv lists racks in order: a left-out
    rack must not change places), or (``labels``) when those racks' labels have at most another
    number of lines on each side: labels.csv has a cell per line of the longest label of the
    design, and the labels left out are the same on both sides, so the same number for the racks
    made on both sides is the same for the whole tables."""
    from ..outputs.labels import label_end_racks, label_path, rack_names, rack_subset

    if old.blueprint.metadata.name != new.blueprint.metadata.name:
        return None
    touched: set[str] = set()
    names: list[list[str]] = []
    for ctx, kept in ((old, keep[0]), (new, keep[1])):
        by_index = rack_names(ctx)
        if len(set(by_index)) != len(by_index):  # a rack's name repeats (or a rack named "")
            return None
        item, rack = label_end_racks(ctx)
        touched |= {by_index[r] for r in np.unique(rack[kept[item]]).tolist()}
        names.append(by_index)
    have_o, have_n = set(names[0]), set(names[1])
    touched |= have_o ^ have_n
    both = have_o & have_n
    orders = [
        [r.name for r in sorted(c.fabric.racks, key=lambda r: (r.row_index, r.position, r.name)) if r.name in both]
        for c in (old, new)
    ]
    if orders[0] != orders[1]:
        return None
    files: dict[str, set[str]] = defaultdict(set)
    for name in have_o | have_n:
        files[label_path(name)].add(name)
    for group in files.values():
        if len(group) > 1:
            touched |= group
    racks = frozenset(touched)
    if labels and rack_subset(old, racks).lines != rack_subset(new, racks).lines:
        return None
    return racks


def _hall_rows(
    old: RenderContext, new: RenderContext, keep: tuple[np.ndarray, np.ndarray], links: tuple[np.ndarray, np.ndarray]
) -> frozenset[str] | None:
    """The rows of racks whose per-row files (workbooks, elevation sheets) may differ: those where
    a cable or link that may differ has an end (on either side), a device differs (any of what an
    elevation draws), whose racks or budget differ, or that are on one side only. None (every row)
    when what every row's files say differs: the design's name, the rack height, the switch
    fills; past the per-row workbooks' size, the connector and cartridge counts."""
    from ..facts.racks import budgets
    from ..outputs.elevation_sheets import switch_fills
    from ..outputs.workbook import ROW_LIMIT, item_rows

    bo, bn = old.blueprint, new.blueprint
    if (bo.metadata.name, bo.site.rack_units) != (bn.metadata.name, bn.site.rack_units):
        return None
    if switch_fills(old.fabric) != switch_fills(new.fabric):
        return None
    if min(len(keep[0]), len(keep[1])) > ROW_LIMIT:
        boms = [bill_of_materials(c) for c in (old, new)]
        if any(boms[0].count(s) != boms[1].count(s) for s in ("connector", "cartridge")):
            return None
    touched: set[str] = set()
    racks: list[dict[str, list[tuple]]] = []
    for ctx, kept, kept_links in ((old, keep[0], links[0]), (new, keep[1], links[1])):
        f = ctx.fabric
        item, row = item_rows(ctx)
        names = sorted({r.row for r in f.racks})
        touched |= {names[k] for k in np.unique(row[kept[item]]).tolist()}
        arr = f.links.arrays()
        dev_rack = np.array([d.rack for d in f.devices] + [-1], dtype=np.int64)
        ends = np.unique(np.concatenate((dev_rack[arr.a[kept_links]], dev_rack[arr.b[kept_links]])))
        touched |= {f.racks[r].row for r in ends.tolist() if r >= 0}
        by_row: dict[str, list[tuple]] = {}
        for r in f.racks:
            by_row.setdefault(r.row, []).append((r.name, r.row_index, r.position))
        for d in f.devices:
            if d.rack >= 0:
                chassis = f.devices[d.chassis].name if d.chassis >= 0 else ""
                by_row[f.racks[d.rack].row].append((d.name, d.role, d.model, d.group, d.u, d.height_u, chassis, d.slot))
        racks.append(by_row)
    budget = [budgets(c.blueprint, c.catalogue) for c in (old, new)]
    for n in set(racks[0]) | set(racks[1]):
        if racks[0].get(n) != racks[1].get(n) or budget[0].get(n) != budget[1].get(n):
            touched.add(n)
    return frozenset(touched)


def _signatures(ctx: RenderContext) -> list[tuple]:
    f = ctx.fabric
    racks = f.racks
    return [
        (d.name, d.model, racks[d.rack].row, racks[d.rack].name, d.u) if d.rack >= 0 else (d.name, d.model, "", "", d.u)
        for d in f.devices
    ]


def _cables(
    old: RenderContext, new: RenderContext, links_n: np.ndarray, partner: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Cables (cable-plan items) to render on each side (see the module's text), and per item
    of each side its twin on the other (the same cable: the item left out on both; -1: none)."""
    po, pn = cable_plan(old.fabric, old.catalogue), cable_plan(new.fabric, new.catalogue)
    item_ids_o, item_ids_n = cable_ids(old.fabric, po), cable_ids(new.fabric, pn)
    num_o, num_n = numbers(old), numbers(new)
    keep_o = np.ones(len(po), dtype=bool)
    keep_n = np.ones(len(pn), dtype=bool)
    twin_o = np.full(len(po), -1, dtype=np.int64)
    twin_n = np.full(len(pn), -1, dtype=np.int64)
    if not len(po) or not len(pn):
        return (keep_o, keep_n), (twin_o, twin_n)
    by_id = dict(zip(item_ids_o, range(len(item_ids_o))))
    if len(by_id) != len(item_ids_o) or len(set(item_ids_n)) != len(item_ids_n):
        return (keep_o, keep_n), (twin_o, twin_n)
    k_new = np.arange(len(pn), dtype=np.int64)
    k_old = np.fromiter(map(by_id.get, item_ids_n, repeat(-1)), dtype=np.int64, count=len(pn))
    ok = k_old >= 0
    sizes_o, sizes_n = np.diff(po.start), np.diff(pn.start)
    kn, ko = k_new[ok], k_old[ok]
    ok_pair = sizes_o[ko] == sizes_n[kn]
    ok_pair &= (po.cord[ko] == pn.cord[kn]) & (po.cords[ko] == pn.cords[kn]) & (po.shape[ko] == pn.shape[kn])
    ok_pair &= np.array([num_o[a] == num_n[b] for a, b in zip(ko.tolist(), kn.tolist())], dtype=bool)
    # Every member link the same on both sides and in the matched item, member by member.
    member_item_n = np.repeat(k_new, sizes_n)
    members = pn.links
    bad_member = links_n[members] | (partner[members] < 0)
    # ... each the partner of the matched item's member at the same place (the A end and the
    # legs are read in member order; a cord item repeats its link).
    offset_n = np.arange(len(members)) - pn.start[member_item_n]
    ko_of = k_old[member_item_n]
    old_pos = np.where(ko_of >= 0, po.start[np.maximum(ko_of, 0)] + offset_n, 0)
    old_pos = np.minimum(old_pos, max(len(po.links) - 1, 0))
    member_ok = ~bad_member & (po.links[old_pos] == np.maximum(partner[members], 0))
    all_ok = np.ones(len(pn), dtype=bool)
    np.logical_and.at(all_ok, member_item_n, member_ok)
    same = ok_pair & all_ok[kn]
    keep_n[kn[same]] = False
    keep_o[ko[same]] = False
    twin_n[kn[same]] = ko[same]
    twin_o[ko[same]] = kn[same]
    return (keep_o, keep_n), (twin_o, twin_n)
