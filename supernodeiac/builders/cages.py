"""One plug per cage: settle the media the builders chose link by link, for all links at once.

``BuildContext.add_links`` gives each link the cheapest medium for its own two cages and length.
That is right for most links, but a cage takes one plug: a twin-port cage whose two ports go to
two devices cannot take a straight DAC; a splitter's legs share one length class; the two
optical ports of a twin-port module carry the same kind of optics. After every builder has run,
:func:`settle` finds (in bulk, ``cage_plan.plug_problems``) the links whose cage would not hold
one plug and moves them, cage group by cage group, to the cheapest medium every port of the
cage can use:

1. a link whose shape its cages cannot take (a straight cable on a fanned-out cage, a splitter
   whose legs are not single, a splitter leg beyond the splitter's reach at the longest leg, two
   media in one cage) goes to optics: a module in each cage works whatever the far ends are, so
   it is always a valid choice; the change spreads to the links sharing those cages;
2. the transceiver links of each cage then settle on one optical type, the most capable any of
   them needs (a node cage with a 30 m and a 70 m fibre gets single-mode for both), and that
   too spreads across the modules' far ends until every cage agrees.

Pinned links are left as the blueprint says; the checks report what they break. The result is
deterministic: it depends only on the links, never on the order of the loops below.
"""

from __future__ import annotations

import numpy as np

from ..facts.cage_plan import SPLITTER, TRANSCEIVER, LinkCages, link_cages, link_plug_problems, spec_columns
from .context import BuildContext, SpecSource
from .media import TRANSCEIVER as TRANSCEIVER_ONLY
from .media import media_ranks

_ROUNDS = 64  # each round moves at least one link to a more capable medium; real fabrics need 2-4


def settle(ctx: BuildContext) -> None:
    """Make every cage of the Fabric hold one plug (see the module docstring)."""
    t = ctx.fabric.links
    if not len(t):
        return
    media = ctx.catalogue.media
    cages = link_cages(ctx.fabric)
    lengths = t.arrays().length_m
    ranks = media_ranks(ctx.catalogue)
    rechoose = _Rechooser(ctx)

    def columns() -> tuple[np.ndarray, ...]:
        shape, head_b, medium, cable = spec_columns(ctx.fabric, media)
        specs = t.specs
        movable = np.array([not s.pinned and i in ctx.spec_sources for i, s in enumerate(specs)], dtype=bool)
        rank = np.array([ranks.get(s.medium, -1) for s in specs], dtype=np.int64)
        return shape, head_b, medium, cable, movable, rank

    # Each round writes its moves into the table, so the last round's problems (none, when the
    # policy settled every cage) are what the one-plug check reads (``link_plug_problems``).
    # 1. shapes the cages cannot take -> optics, until no cage needs more.
    for _ in range(_ROUNDS):
        shape, head_b, medium, cable, movable, _rank = columns()
        spec = t.arrays().spec
        sel = cable[spec] & cages.valid & (medium[spec] >= 0)
        problems = link_plug_problems(ctx.fabric, media)
        bad = (problems != 0) | _splitters_out_of_reach(rechoose, cages, shape[spec], head_b[spec], spec, lengths, sel)
        bad &= movable[spec] & sel & (shape[spec] != TRANSCEIVER)
        if not bad.any():
            break
        idx = np.flatnonzero(bad)
        new = _choose_each(idx, spec[idx], lengths[idx], np.full(len(idx), -1, dtype=np.int64), rechoose)
        t.set_specs(idx.tolist(), new.tolist())

    # 2. one optical type per cage: the most capable any of its links needs, spread to the far ends.
    for _ in range(_ROUNDS):
        shape, head_b, medium, cable, movable, rank = columns()
        spec = t.arrays().spec
        tx = cable[spec] & cages.valid & (shape[spec] == TRANSCEIVER)
        if not tx.any():
            break
        idx = np.flatnonzero(tx)
        r = rank[spec[idx]]
        a, b = cages.a[idx], cages.b[idx]
        best = np.full(max(cages.count, 1), -1, dtype=np.int64)
        np.maximum.at(best, np.concatenate((a, b)), np.concatenate((r, r)))
        need = np.maximum(best[a], best[b])
        up = (need > r) & movable[spec[idx]]
        if not up.any():
            break
        ups = np.flatnonzero(up)
        at = idx[ups]
        new = _choose_each(at, spec[at], lengths[at], need[ups], rechoose)
        differs = new != spec[at]
        if not differs.any():
            break  # no candidate reaches the rank a cage needs: the cage check reports the mix
        t.set_specs(at[differs].tolist(), new[differs].tolist())


def _choose_each(
    links: np.ndarray, specs: np.ndarray, lengths: np.ndarray, ranks: np.ndarray, rechoose: _Rechooser
) -> np.ndarray:
    """``rechoose.optics(spec, length, rank)`` of every link at once: one call per distinct
    (spec, length, rank), made in the order of each one's first link, so new specs are numbered
    exactly as a call per link in table order numbers them (10^5 links, a few hundred choices)."""
    if not len(links):
        return specs.copy()
    order = np.lexsort((links, ranks, lengths, specs))  # ties by link: a group's first is its lowest link
    s, ln, r = specs[order], lengths[order], ranks[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = (s[1:] != s[:-1]) | (ln[1:] != ln[:-1]) | (r[1:] != r[:-1])
    group = np.cumsum(start) - 1
    firsts = np.flatnonzero(start)
    chosen = np.empty(len(firsts), dtype=np.int64)
    for g in np.argsort(links[order][firsts], kind="stable").tolist():
        k = int(firsts[g])
        chosen[g] = rechoose.optics(int(s[k]), float(ln[k]), int(r[k]))
    out = np.empty(len(links), dtype=np.int64)
    out[order] = chosen[group]
    return out


def _splitters_out_of_reach(
    rechoose: _Rechooser,
    cages: LinkCages,
    shape: np.ndarray,
    head_b: np.ndarray,
    spec: np.ndarray,
    lengths: np.ndarray,
    sel: np.ndarray,
) -> np.ndarray:
    """Splitter links whose splitter (one length class for all legs) would have to be longer
    than the medium covers: the longest leg decides."""
    split = sel & (shape == SPLITTER)
    out = np.zeros(len(spec), dtype=bool)
    if not split.any():
        return out
    idx = np.flatnonzero(split)
    head = np.where(head_b[idx], cages.b[idx], cages.a[idx])
    longest = np.zeros(max(cages.count, 1), dtype=np.float64)
    np.maximum.at(longest, head, lengths[idx])
    specs = spec[idx]
    limit_of = {s: rechoose.limit(s) for s in set(specs.tolist())}
    limit = np.array([limit_of[s] for s in specs.tolist()], dtype=np.float64)
    out[idx] = longest[head] > limit + 1e-9
    return out


class _Rechooser:
    """Chooses again for the links of a spec, from how they were first chosen (memoised)."""

    def __init__(self, ctx: BuildContext) -> None:
        self.ctx = ctx
        self._memo: dict[tuple[int, float, int], int] = {}
        self._limits: dict[int, float] = {}

    def source(self, spec: int) -> SpecSource:
        return self.ctx.spec_sources[spec]

    def optics(self, spec: int, length_m: float, min_rank: int) -> int:
        """The spec of the cheapest transceiver medium (at least ``min_rank``) for a link of ``spec``."""
        key = (spec, length_m, min_rank)
        found = self._memo.get(key)
        if found is None:
            src = self.source(spec)
            p = src.pair
            choice = src.chooser.pick(
                p.lane_gbps,
                p.a,
                p.b,
                length_m,
                transport=p.transport,
                link_lanes=p.lanes,
                shapes=TRANSCEIVER_ONLY,
                min_rank=min_rank,
            )
            found = self._memo[key] = self.ctx.spec_for(src.fabric, src.kind, src.tier, src.chooser, src.origin, p, choice)
        return found

    def limit(self, spec: int) -> float:
        """The longest routed length the spec's medium covers under its policy (inf: not ours to judge)."""
        found = self._limits.get(spec)
        if found is None:
            found = float("inf")
            src = self.ctx.spec_sources.get(spec)
            medium = self.ctx.fabric.links.specs[spec].medium
            if src is not None:
                p = src.pair
                for c in src.chooser.candidates(p.lane_gbps, p.a, p.b, p.transport, p.lanes, frozenset({"splitter"})):
                    if c.name == medium:
                        found = c.limit
                        break
            self._limits[spec] = found
        return found
