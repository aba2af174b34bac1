"""Links by cage: which cage each end of a link occupies, what plugs into it, and whether every
cage holds exactly one plug. Decided in bulk (numpy) for 10^6 links.

A cage takes one plug. So all links through a cage share one medium, and that medium's shape
says what else must hold:

* a straight cable joins two cages port for port: each of its cages faces that one other cage
  (a twin-port DAC carries both ports of both cages), position i to position i;
* a splitter's head cage faces only leg cages, and each leg cage holds just that one link;
* a transceiver is one module per cage; its optical ports each take their own fibre, which may
  go to different devices (this is how a node's twin-port cage feeds two rail leaves).

Shared by the build (``build.cages`` settles media so that this holds), the checks (which report
where a pin or an override breaks it) and the renderers (which count one assembly per cage pair,
one splitter per head cage, one module per occupied optical cage).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..catalog.fit import CageShape
from ..catalog.types import Medium
from ..fabric import Fabric
from ..fabric.device_arrays import DeviceArrays

# Shape codes per link (from its medium).
NONE, STRAIGHT, SPLITTER, TRANSCEIVER, CONNECTOR, CARTRIDGE = range(6)
SHAPE_CODES = {
    "straight": STRAIGHT,
    "splitter": SPLITTER,
    "transceiver": TRANSCEIVER,
    "connector": CONNECTOR,
    "cartridge": CARTRIDGE,
}

# Why a link's cage would not hold one plug (0: it does).
OK, MIXED, FANOUT, SPLIT = range(4)
REASONS = {
    MIXED: "two plugs in one cage: its ports use different media",
    FANOUT: "a straight cable's cage must face one cage, port for port",
    SPLIT: "a splitter's head must face single-link cages, one leg each",
}

_BIG = np.iinfo(np.int64).max


@dataclass(frozen=True, slots=True)
class LinkCages:
    """Per link: the Fabric-wide cage id and the 0-based position in the cage of each end
    (``valid`` is False for a link naming a port its device lacks; its cages read -1)."""

    a: np.ndarray
    b: np.ndarray
    pos_a: np.ndarray
    pos_b: np.ndarray
    valid: np.ndarray
    count: int  # cages of the whole Fabric


def link_cages(fabric: Fabric) -> LinkCages:
    """The cages of every link's two ends (made once per state of the links' ends, kept on the
    Fabric: the media settled after the build do not move a cage)."""
    stamp = (fabric.links.ends_stamp(), len(fabric.devices))
    cached = fabric.derived.get("link_cages")
    if cached is not None and cached[0] == stamp:
        return cached[1]
    dv, arr = fabric.device_arrays(), fabric.links.arrays()
    n = len(arr.a)
    valid = np.ones(n, dtype=bool)
    if n:
        valid &= (arr.a_port >= 0) & (arr.a_port < dv.total[arr.a]) & (arr.b_port >= 0) & (arr.b_port < dv.total[arr.b])
    ap, bp = np.where(valid, arr.a_port, 0), np.where(valid, arr.b_port, 0)
    if n and not dv.total[np.concatenate((arr.a, arr.b))].all():
        valid &= (dv.total[arr.a] > 0) & (dv.total[arr.b] > 0)
        ap, bp = np.where(valid, ap, 0), np.where(valid, bp, 0)
        a, b = np.where(valid, arr.a, _first_with_ports(dv)), np.where(valid, arr.b, _first_with_ports(dv))
    else:
        a, b = arr.a, arr.b
    ca, cb = dv.cage_ids(a, ap), dv.cage_ids(b, bp)
    pa, pb = dv.positions(a, ap), dv.positions(b, bp)
    out = LinkCages(np.where(valid, ca, -1), np.where(valid, cb, -1), pa, pb, valid, dv.cage_count)
    fabric.derived["link_cages"] = (stamp, out)
    return out


def _first_with_ports(dv: DeviceArrays) -> int:
    found = np.flatnonzero(dv.total > 0)
    return int(found[0]) if len(found) else 0


def link_shapes(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, list[CageShape]]:
    """Per link, the shape id of each end's cage (-1 for a port its device lacks), and the shapes."""
    dv, arr, cages = fabric.device_arrays(), fabric.links.arrays(), link_cages(fabric)
    ids, shapes = dv.layout_table("cage-shape", lambda layout, g: CageShape.of(g, layout.model.kind))
    if not len(ids):
        none = np.full(len(arr.a), -1, dtype=np.int64)
        return none, none.copy(), shapes
    top = len(ids) - 1  # a link of a device without ports would index past the table; it is invalid anyway
    ap, bp = np.where(cages.valid, arr.a_port, 0), np.where(cages.valid, arr.b_port, 0)
    sa = np.where(cages.valid, ids[np.minimum(dv.rows(arr.a, ap), top)], -1)
    sb = np.where(cages.valid, ids[np.minimum(dv.rows(arr.b, bp), top)], -1)
    return sa, sb, shapes


def spec_columns(fabric: Fabric, media: dict[str, Medium]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per spec: shape code, head-at-B flag, medium id (its index in sorted media names; -1 for
    none or unknown), and whether the spec is a cable (as opposed to a connector or cartridge)."""
    specs = fabric.links.specs
    names = {name: i for i, name in enumerate(sorted(media))}
    shape = np.array([SHAPE_CODES.get(media[s.medium].shape, NONE) if s.medium in media else NONE for s in specs], dtype=np.int64)
    head_b = np.array([s.head == "b" for s in specs], dtype=bool)
    medium = np.array([names.get(s.medium, -1) for s in specs], dtype=np.int64)
    cable = np.array([s.kind == "cable" for s in specs], dtype=bool)
    return shape, head_b, medium, cable


def link_plug_problems(fabric: Fabric, media: dict[str, Medium]) -> np.ndarray:
    """:func:`plug_problems` of every cable of the Fabric with a medium, as its links stand
    (kept on the Fabric until they change: the build's last settling round computes what the
    one-plug check reads). What does not depend on the media (which cage faces which, single
    cages) is kept apart and reused while the same links are selected: a settling round only
    moves links to other media."""
    stamp = (fabric.links.stamp(), len(fabric.devices), id(media))
    cached = fabric.derived.get("plug_problems")
    if cached is not None and cached[0] == stamp:
        return cached[1]
    cages = link_cages(fabric)
    spec = fabric.links.arrays().spec
    shape, head_b, medium, cable = spec_columns(fabric, media)
    sel = cable[spec] & cages.valid & (medium[spec] >= 0)
    ends = (fabric.links.ends_stamp(), len(fabric.devices))
    kept = fabric.derived.get("plug_frame")
    if kept is not None and kept[0] == ends and np.array_equal(kept[1].sel, sel):
        frame = kept[1]
    else:
        frame = _plug_frame(cages, sel)
        fabric.derived["plug_frame"] = (ends, frame)
    out = _plug_reasons(frame, cages, shape[spec], head_b[spec], medium[spec])
    fabric.derived["plug_problems"] = (stamp, out)
    return out


def plug_problems(cages: LinkCages, shape: np.ndarray, head_b: np.ndarray, medium: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """Per link, why its cages would not each hold one plug (``OK`` = 0 when they do), over the
    links selected by ``sel`` (cables with a medium): the rule in the module docstring."""
    return _plug_reasons(_plug_frame(cages, sel), cages, shape, head_b, medium)


@dataclass(frozen=True, slots=True)
class _PlugFrame:
    """The part of :func:`plug_problems` the links' media do not change, for the links ``sel``
    selects (``idx``): per link whether each cage faces one cage, port for port (``paired``);
    per cage whether it holds one link (``single``) and whether every cage it faces does."""

    sel: np.ndarray
    idx: np.ndarray
    a: np.ndarray  # the selected links' A cages
    b: np.ndarray  # and their B cages
    n: int
    paired: np.ndarray
    single: np.ndarray
    far_single: np.ndarray


def _plug_frame(cages: LinkCages, sel: np.ndarray) -> _PlugFrame:
    # Each link end is a (cage, far cage) pair: the A ends and the B ends are reduced in two
    # passes rather than over their concatenation (no 2 x 10^6-long temporaries; the same
    # counts, minima and maxima, since those do not depend on the order they are taken in).
    idx = np.flatnonzero(sel)
    n = max(cages.count, 1)
    a, b = cages.a[idx], cages.b[idx]
    count = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    fmin, fmax = _reduce(a, b, b, a, n)
    paired = (fmin[a] == fmax[a]) & (fmin[b] == fmax[b]) & (cages.pos_a[idx] == cages.pos_b[idx])
    single = (count == 1).astype(np.int64)
    far_single = np.full(n, _BIG, dtype=np.int64)  # the min of _reduce alone: its max is never read
    np.minimum.at(far_single, a, single[b])
    np.minimum.at(far_single, b, single[a])
    return _PlugFrame(sel, idx, a, b, n, paired, single, far_single)


def _plug_reasons(frame: _PlugFrame, cages: LinkCages, shape: np.ndarray, head_b: np.ndarray, medium: np.ndarray) -> np.ndarray:
    out = np.zeros(len(frame.sel), dtype=np.int64)
    idx = frame.idx
    if not len(idx):
        return out
    a, b = frame.a, frame.b
    med = medium[idx]
    mmin, mmax = _reduce(a, b, med, med, frame.n)
    uniform = mmin == mmax
    mixed = ~(uniform[a] & uniform[b])
    sh = shape[idx]
    hb = head_b[idx]
    head, leg = np.where(hb, b, a), np.where(hb, a, b)
    split_ok = (frame.single[leg] == 1) & (frame.far_single[head] == 1)
    reason = np.zeros(len(idx), dtype=np.int64)
    reason[~mixed & (sh == SPLITTER) & ~split_ok] = SPLIT
    reason[~mixed & (sh == STRAIGHT) & ~frame.paired] = FANOUT
    reason[mixed] = MIXED
    out[idx] = reason
    return out


def _reduce(
    keys_a: np.ndarray, keys_b: np.ndarray, values_a: np.ndarray, values_b: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) per key in 0..n-1 of ``values_a`` at ``keys_a`` and ``values_b`` at ``keys_b``
    together (unused keys: int64 max, -1)."""
    lo = np.full(n, _BIG, dtype=np.int64)
    hi = np.full(n, -1, dtype=np.int64)
    for keys, values in ((keys_a, values_a), (keys_b, values_b)):
        np.minimum.at(lo, keys, values)
        np.maximum.at(hi, keys, values)
    return lo, hi


@dataclass(frozen=True, slots=True)
class Assemblies:
    """Per link: the cable assembly it is part of (a straight cable is keyed by the lower cage id
    of its pair, a splitter by its head cage; -1: none, e.g. a transceiver link, whose fibre is its
    own) and the routed length the assembly is ordered for (the longest of its links)."""

    key: np.ndarray
    length_m: np.ndarray


def assemblies(fabric: Fabric, media: dict[str, Medium]) -> Assemblies:
    """Cable assemblies of the Fabric's links (kept on the Fabric until the links change)."""
    stamp = (fabric.links.stamp(), len(fabric.devices), id(media))
    cached = fabric.derived.get("assemblies")
    if cached is not None and cached[0] == stamp:
        return cached[1]
    cages = link_cages(fabric)
    arr = fabric.links.arrays()
    shape, head_b, _, _ = spec_columns(fabric, media)
    sh, hb = shape[arr.spec], head_b[arr.spec]
    key = np.full(len(arr.spec), -1, dtype=np.int64)
    straight = (sh == STRAIGHT) & cages.valid
    split = (sh == SPLITTER) & cages.valid
    key[straight] = np.minimum(cages.a, cages.b)[straight]
    key[split] = np.where(hb, cages.b, cages.a)[split]
    length = arr.length_m.copy()
    grouped = key >= 0
    if grouped.any():
        longest = np.zeros(max(cages.count, 1), dtype=np.float64)
        np.maximum.at(longest, key[grouped], arr.length_m[grouped])
        length[grouped] = longest[key[grouped]]
    out = Assemblies(key, length)
    fabric.derived["assemblies"] = (stamp, out)
    return out
