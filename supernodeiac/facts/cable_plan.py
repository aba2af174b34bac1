"""The physical cables of a Fabric: one item per installed assembly, the way the BOM counts them.

A link is a logical connection; a crew pulls and labels assemblies. This groups the links into
what is installed (``facts/cage_plan.assemblies`` decides the grouping):

* a straight cable (DAC, ACC, AOC) joining two cages: one item, whatever number of links it
  carries (a twin-port DAC is one item of two links);
* a splitter: one item per head cage, its legs being its links;
* a transceiver link: one fibre cord per optical port its lanes use (``bom.fibres_per_link``),
  each its own item (an 800G port on two MPO cords: two items ``cord 1/2`` and ``2/2``);
* any other cable (a Cat6 patch cord, a link without a medium): one item per link.

Orthogonal connectors and cable cartridges are not cables: they have sheets of their own
(``connectors/``) and are not items here. So ``len(plan)`` equals the BOM's cable + fibre
counts, by construction and by test.

Items are ordered by the cable ID of their first link (the order of ``cables.csv``), and every
item has a short number, stable under growth: see :func:`cable_numbers`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..catalog.types import Catalogue
from ..fabric import Fabric
from .bom import fibres_per_link
from .cage_plan import CARTRIDGE, CONNECTOR, TRANSCEIVER, assemblies, link_cages, spec_columns

# Crockford's base-32 alphabet: no I, L, O, U, so a number read off a label is not misread.
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
NUMBER_LENGTH = 6  # 30 bits: about 1 clash per 1,000 cables at 10^6 (resolved, see cable_numbers)


@dataclass(frozen=True, slots=True)
class CablePlan:
    """Items (physical cables) as arrays: item ``i`` carries the links
    ``links[start[i]:start[i + 1]]`` (link table positions, in cable-ID order) and is cord
    ``cord[i]`` (1-based) of ``cords[i]`` cords; ``shape`` is its medium's shape code."""

    links: np.ndarray
    start: np.ndarray
    cord: np.ndarray
    cords: np.ndarray
    shape: np.ndarray

    def __len__(self) -> int:
        return len(self.cord)

    def links_of(self, item: int) -> list[int]:
        return self.links[self.start[item] : self.start[item + 1]].tolist()


def cable_plan(fabric: Fabric, catalogue: Catalogue) -> CablePlan:
    """The physical cables of the Fabric (kept on it until the links change): O(links log links)."""
    media = catalogue.media
    stamp = (fabric.links.stamp(), len(fabric.devices), id(media))
    cached = fabric.derived.get("cable_plan")
    if cached is not None and cached[0] == stamp:
        return cached[1]
    t = fabric.links
    n = len(t)
    arr = t.arrays()
    cages = link_cages(fabric)
    asm = assemblies(fabric, media)
    shape_s, _, _, _ = spec_columns(fabric, media)
    shape = shape_s[arr.spec] if n else np.zeros(0, dtype=np.int64)
    keyed = asm.key >= 0
    # The BOM's selection: assemblies by key, transceiver links with valid cages (their cords),
    # and every other cable link on its own; connectors and cartridges are left out.
    tx = (shape == TRANSCEIVER) & cages.valid
    single = ~keyed & (shape != TRANSCEIVER) & (shape != CONNECTOR) & (shape != CARTRIDGE)
    chosen = np.flatnonzero(keyed | tx | single)
    rank = np.empty(n, dtype=np.int64)
    rank[np.asarray(t.id_order(), dtype=np.int64)] = np.arange(n, dtype=np.int64)
    # A group per assembly key; every other chosen link is a group of its own (keys past the cages).
    group = np.where(keyed, asm.key, cages.count + np.arange(n, dtype=np.int64))[chosen]
    r = rank[chosen]
    _, inv = np.unique(group, return_inverse=True)
    first = np.full(int(inv.max()) + 1 if len(inv) else 0, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, inv, r)
    order = np.lexsort((r, first[inv]))  # groups by their first link's ID, links in ID order within
    links = chosen[order]
    g = inv[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1]))) if len(g) else np.zeros(0, dtype=np.int64)
    head = links[starts]
    # Cords: a transceiver link is as many items as the optical ports its lanes use.
    per_spec = np.ones(len(t.specs), dtype=np.int64)
    for s, spec in enumerate(t.specs):
        m = media.get(spec.medium)
        if m is not None and m.shape == "transceiver":
            per_spec[s] = fibres_per_link(catalogue, spec)
    cords = np.where(shape[head] == TRANSCEIVER, per_spec[arr.spec[head]], 1) if len(head) else np.zeros(0, dtype=np.int64)
    item_group = np.repeat(np.arange(len(head), dtype=np.int64), cords)
    bounds = np.concatenate((starts, [len(links)])).astype(np.int64)
    # cord index within its group: position minus the group's first item
    first_item = np.concatenate(([0], np.cumsum(cords)[:-1])) if len(cords) else np.zeros(0, dtype=np.int64)
    cord = np.arange(len(item_group), dtype=np.int64) - first_item[item_group] + 1
    item_start = bounds[item_group]
    item_end = bounds[item_group + 1]
    # Items index into links through start; a cord item repeats its link, so give each item its own run.
    lens = item_end - item_start
    idx = np.repeat(item_start - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(int(lens.sum()))
    plan = CablePlan(
        links=links[idx] if len(idx) else links[:0],
        start=np.concatenate(([0], np.cumsum(lens))).astype(np.int64),
        cord=cord,
        cords=cords[item_group],
        shape=shape[head][item_group] if len(head) else np.zeros(0, dtype=np.int64),
    )
    fabric.derived["cable_plan"] = (stamp, plan)
    return plan


def cable_ids(fabric: Fabric, plan: CablePlan) -> list[str]:
    """Each item's ID: its first link's cable ID, with ``/2`` ... for the second and later cords
    of a link on more than one cord (so the first cord keeps the link's ID)."""
    ids = fabric.links.ids()
    heads = plan.links[plan.start[:-1]].tolist()
    out = [ids[i] for i in heads]
    for k in np.flatnonzero(plan.cord > 1).tolist():
        out[k] = f"{out[k]}/{int(plan.cord[k])}"
    return out


def cable_numbers(ids: list[str], length: int = NUMBER_LENGTH) -> list[str]:
    """A short number per cable for its labels, from a hash of its ID: the same cable keeps its
    number when the design grows (an ordinal would shift), and a number is ``length`` letters
    of Crockford base 32. Two IDs that hash alike are told apart deterministically: the one
    whose ID sorts first keeps the hash, the next is rehashed with a counter until free; so a
    number changes only if a newer cable with an earlier-sorting ID takes it (about one cable
    in 10^3 at 10^6 cables). Hashing is per ID; the rest is numpy (10^6 IDs in about a second)."""
    bits = 5 * length
    mask = (1 << bits) - 1
    if len(ids) > mask + 1:  # the rehash below would never find a free number
        raise ValueError(f"{len(ids):,} cables, more than the {mask + 1:,} {length}-letter numbers")
    # _hash of every ID as the digests joined, read as big-endian integers (no int per ID).
    digest = [hashlib.blake2b(x.encode(), digest_size=8).digest() for x in ids]
    values = (np.frombuffer(b"".join(digest), dtype=">u8") & np.uint64(mask)).astype(np.int64)
    del digest
    clash = _clashes(ids, values)
    if clash:
        taken = set(values.tolist())
        for i in sorted(clash, key=ids.__getitem__):
            salt = 1
            while (v := _hash(f"{ids[i]}#{salt}") & mask) in taken:
                salt += 1
            taken.add(v)
            values[i] = v
    digits = np.stack([(values >> (5 * (length - 1 - k))) & 31 for k in range(length)], axis=1).astype(np.uint8)
    table = np.frombuffer(_ALPHABET.encode(), dtype=np.uint8)
    if not len(values):
        return []
    # Each row of letters one fixed-width text (the alphabet holds no NUL, which they would drop).
    numbers: list[str] = table[digits].view(f"S{length}").reshape(-1).astype(f"U{length}").tolist()
    return numbers


def _clashes(ids: list[str], values: np.ndarray) -> list[int]:
    """The IDs that lose their hash: of each set of equal ``values``, all but the one whose ID
    sorts first (on equal IDs the first in order), by value and then ID, as one lexsort of
    (value, ID rank) orders them; only the few clashing IDs are sorted."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    equal = np.flatnonzero(ordered[1:] == ordered[:-1])
    if not len(equal):
        return []
    member = np.zeros(len(order), dtype=bool)
    member[equal] = member[equal + 1] = True
    at = order[member]  # each clashing set's members, by value, each set in order
    starts = np.flatnonzero(np.diff(values[at], prepend=values[at[0]] - 1)).tolist() + [len(at)]
    at_list = at.tolist()
    out: list[int] = []
    for lo, hi in zip(starts[:-1], starts[1:], strict=True):
        out += sorted(at_list[lo:hi], key=lambda i: (ids[i], i))[1:]
    return out


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


__all__ = ["CablePlan", "cable_ids", "cable_numbers", "cable_plan"]
