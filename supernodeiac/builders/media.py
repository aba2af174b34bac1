"""Media choice: the cheapest catalogue medium whose rated reach covers the ordered stock length.

A medium here is an orderable realisation of a link between two cages (a straight cable, a
splitter, or a transceiver in each cage with fibre between; see ``catalog.types.Medium``). The
chooser answers per link from the two cages' shapes, the lane rate and the length; whether every
port of a cage can use that answer (one plug per cage) is settled afterwards for all links at
once (``build.cages``), which may move a cage's links to a medium the cage as a whole can take.

Candidates come from the product line of the link's transport and lane rate (``lines.yaml``),
narrowed by the policy's ``allow`` / ``forbid`` (network, then tier) or replaced by its ``pin``.
A candidate fits a length when some stock length covers it and that stock length, plus the
policy's margin, is within the rated reach less the policy's derating: so each candidate takes
every length up to one limit, and over ascending lengths the choice only moves down the
cost-ordered list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..catalog.fit import CageShape, Fit, fit, longest_within
from ..catalog.types import Catalogue
from ..model.common import MediaPolicy

ALL_SHAPES = frozenset({"straight", "splitter", "transceiver", "connector", "cartridge"})
TRANSCEIVER = frozenset({"transceiver"})


class Choice(NamedTuple):
    """What a link gets: its medium, whether the blueprint pinned it, and per-end details."""

    medium: str  # "" when nothing fits (the reach check reports it)
    pinned: bool = False
    a_module: str = ""
    b_module: str = ""
    head: str = ""


class Candidate(NamedTuple):
    name: str
    fit: Fit
    limit: float  # the longest routed length it covers (a stock length); -1: none
    rank: int  # capability order of the catalogue (longest reach last): the per-cage upgrade order


class MediaChooser:
    """One per media policy (and tier); memoised: a fabric has few distinct (rate, cages, length)."""

    def __init__(self, catalogue: Catalogue, policy: MediaPolicy, path: tuple, tier: str = "") -> None:
        self.catalogue = catalogue
        self.policy = policy
        self.tier = tier
        self.base_path = path
        tp = policy.tiers.get(tier) if tier else None  # type: ignore[call-overload]
        self.allow = tp.allow if tp is not None and tp.allow is not None else policy.allow
        self.forbid = [*policy.forbid, *(tp.forbid if tp is not None else [])]
        if tp is not None and tp.pin is not None:
            self.pin, self.pin_path = tp.pin, (*path, "tiers", tier, "pin")
        elif tp is not None and tp.allow is not None:
            self.pin, self.pin_path = None, path
        else:
            self.pin, self.pin_path = policy.pin, (*path, "pin")
        # Kept for callers that read it: the path a pinned link's findings point at.
        self.path = path
        self._tiers: dict[str, MediaChooser] = {}
        self._cands: dict[tuple, list[Candidate]] = {}
        self._exact: dict[tuple, Choice] = {}
        self._ranks: dict[str, int] | None = None

    def for_tier(self, tier: str) -> MediaChooser:
        """The chooser for one tier of this policy's network (itself when the tier has no rules)."""
        if not tier or tier not in self.policy.tiers:
            return self
        found = self._tiers.get(tier)
        if found is None:
            found = self._tiers[tier] = MediaChooser(self.catalogue, self.policy, self.base_path, tier)
        return found

    # -- the answers ----------------------------------------------------------------------------
    def pick(
        self,
        lane_gbps: float,
        a: CageShape | str,
        b: CageShape | str,
        length_m: float,
        *,
        transport: str = "any",
        link_lanes: int = 0,
        shapes: frozenset[str] = ALL_SHAPES,
        min_rank: int = -1,
    ) -> Choice:
        """The cheapest candidate of an allowed shape (and at least ``min_rank``) that fits ``length_m``."""
        sa, sb = CageShape.coerce(a), CageShape.coerce(b)
        key = (lane_gbps, sa, sb, transport, link_lanes, shapes, min_rank, length_m)
        found = self._exact.get(key)
        if found is None:
            cands = self.candidates(lane_gbps, sa, sb, transport, link_lanes, shapes)
            found = self._exact[key] = self._first(cands, length_m, min_rank)
        return found

    def pick_many(
        self,
        lane_gbps: float,
        a: CageShape | str,
        b: CageShape | str,
        lengths: set[float],
        *,
        transport: str = "any",
        link_lanes: int = 0,
        shapes: frozenset[str] = ALL_SHAPES,
    ) -> dict[float, Choice]:
        """``{length: pick(...)}`` for many lengths in one sorted sweep (each candidate covers every
        length up to its limit, so over ascending lengths the choice moves down the list)."""
        sa, sb = CageShape.coerce(a), CageShape.coerce(b)
        cands = self.candidates(lane_gbps, sa, sb, transport, link_lanes, shapes)
        if self.pin is not None:
            return {length: self._first(cands, length, -1) for length in lengths}
        out: dict[float, Choice] = {}
        k = 0
        for length in sorted(lengths):
            while k < len(cands) and cands[k].limit < length - 1e-9:
                k += 1
            out[length] = self._choice(cands[k]) if k < len(cands) else Choice("")
        return out

    def choose(self, lane_gbps: float, cage_a: CageShape | str, cage_b: CageShape | str, length_m: float) -> tuple[str, bool]:
        """(medium name, pinned) for one link; an empty name means nothing fits."""
        c = self.pick(lane_gbps, cage_a, cage_b, length_m)
        return c.medium, c.pinned

    def choose_many(
        self, lane_gbps: float, cage_a: CageShape | str, cage_b: CageShape | str, lengths: set[float]
    ) -> dict[float, tuple[str, bool]]:
        """``{length: choose(...)}`` for many lengths at once."""
        return {k: (c.medium, c.pinned) for k, c in self.pick_many(lane_gbps, cage_a, cage_b, lengths).items()}

    # -- candidates -----------------------------------------------------------------------------
    def candidates(
        self, lane_gbps: float, a: CageShape, b: CageShape, transport: str, link_lanes: int, shapes: frozenset[str]
    ) -> list[Candidate]:
        """The media this policy may use between these cages at this lane rate, cheapest first
        (pinned: the pin's media, fitting ones first, those that fit no length last)."""
        key = (lane_gbps, a, b, transport, link_lanes, shapes)
        found = self._cands.get(key)
        if found is not None:
            return found
        line = self.line(transport, lane_gbps)
        if self.pin is not None:
            names = self.resolve(self.pin, line)
        else:
            names = line if self.allow is None else _unique(n for x in self.allow for n in self.resolve(x, line))
            banned = {n for x in self.forbid for n in self.resolve(x, line, every=True)}
            names = [n for n in names if n not in banned]
        out = self._fitting(names, lane_gbps, a, b, link_lanes, shapes)
        if not out and self.pin is None and self.allow is None and transport != "any":
            # The transport's product line has nothing for these cages (a blueprint's own device,
            # say a single-port switch cage): the generic placeholders, which the BOM marks as such.
            banned = {n for x in self.forbid for n in self.resolve(x, line, every=True)}
            generic = [n for n in self.line("any", lane_gbps) if n not in banned]
            out = self._fitting(generic, lane_gbps, a, b, link_lanes, shapes)
        if self.pin is not None:
            usable = [c for c in out if c.limit >= 0]
            # A pin that reaches no length still names the medium: the reach check reports it.
            out = usable + sorted((c for c in out if c.limit < 0), key=lambda c: -(c.fit.reach or 0))
            if not out and names:
                out = [Candidate(names[0], Fit(names[0], ""), -1.0, 0)]
        self._cands[key] = out
        return out

    def _fitting(
        self, names: list[str], lane_gbps: float, a: CageShape, b: CageShape, link_lanes: int, shapes: frozenset[str]
    ) -> list[Candidate]:
        """``names`` that take both cages at this lane rate, as candidates, cheapest first."""
        media, ranks = self.catalogue.media, self.ranks()
        out = []
        for name in names:
            m = media.get(name)
            if m is None or m.shape not in shapes:
                continue
            f = fit(self.catalogue, name, lane_gbps, a, b, link_lanes)
            if f.problem:
                continue
            out.append(Candidate(name, f, self._limit(name, f), ranks.get(name, 0)))
        out.sort(key=lambda c: (c.fit.cost, c.name))
        return out

    def _limit(self, name: str, f: Fit) -> float:
        if f.reach is None:
            return -1.0
        m = self.catalogue.media[name]
        margin = self.policy.margin_m if m.needs_margin else 0.0
        bound = f.reach * (1 - self.policy.derate_pct / 100) - margin
        best = longest_within(f.stock, bound)
        return -1.0 if best is None else best

    def _first(self, cands: list[Candidate], length_m: float, min_rank: int) -> Choice:
        for c in cands:
            if c.rank >= min_rank and c.limit >= length_m - 1e-9:
                return self._choice(c)
        if self.pin is not None and cands:
            # Nothing pinned covers the length: keep the one that comes closest (the reach check reports it).
            return self._choice(max(cands, key=lambda c: (c.limit, c.fit.reach or 0)))
        return Choice("")

    def _choice(self, c: Candidate) -> Choice:
        return Choice(c.name, self.pin is not None, c.fit.a_module, c.fit.b_module, c.fit.head)

    # -- names ----------------------------------------------------------------------------------
    def line(self, transport: str, lane_gbps: float) -> list[str]:
        """The media the product line offers for a transport at a lane rate (``lines.yaml``)."""
        lines = self.catalogue.lines
        for t in (transport, "any"):
            rates = lines.get(t)
            if not rates:
                continue
            for rate, names in rates.items():
                if abs(rate - lane_gbps) < 1e-9:
                    return names
            if 0 in rates:
                return rates[0]
        return []

    def resolve(self, name: str, line: list[str], every: bool = False) -> list[str]:
        """Media a policy name stands for: a catalogue key itself; a kind (``dac``, ``sr``) the
        line's media of that kind, or every medium of that kind when the line has none (or for
        ``forbid``, ``every``)."""
        media = self.catalogue.media
        if any(m.kind == name for m in media.values()):
            in_line = [n for n in line if n in media and media[n].kind == name]
            if in_line and not every:
                return in_line
            return sorted(n for n, m in media.items() if m.kind == name)
        return [name] if name in media else []

    def ranks(self) -> dict[str, int]:
        """Every medium's place in the capability order: by longest rated reach, then name."""
        if self._ranks is None:
            self._ranks = media_ranks(self.catalogue)
        return self._ranks


def media_ranks(catalogue: Catalogue) -> dict[str, int]:
    """Media ordered by the longest reach they are rated for (a transceiver medium: its modules'),
    so that a cage whose links need different optics settles on the most capable of them."""

    def longest(name: str) -> float:
        m = catalogue.media[name]
        if m.shape == "transceiver":
            return max((max(catalogue.transceivers[k].reach_m.values()) for k in m.modules), default=0.0)
        return max(m.reach_m.values(), default=0.0)

    return {name: i for i, name in enumerate(sorted(catalogue.media, key=lambda n: (longest(n), n)))}


def _unique(names: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for n in names:
        seen.setdefault(n, None)
    return list(seen)
