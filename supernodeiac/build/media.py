"""Media choice: the cheapest medium whose reach at the lane rate covers length + margin."""

from __future__ import annotations

from ..catalog.types import Catalogue, Medium
from ..model.common import MediaPolicy


class MediaChooser:
    """One per media policy; memoised because a fabric has few distinct (rate, cages, length)."""

    def __init__(self, catalogue: Catalogue, policy: MediaPolicy, path: tuple) -> None:
        self.catalogue = catalogue
        self.policy = policy
        self.path = path  # blueprint path of the policy, for findings about pinned media
        names = policy.allow if policy.allow is not None else list(catalogue.media)
        self._candidates: list[tuple[str, Medium]] = sorted(
            ((n, catalogue.media[n]) for n in names if n in catalogue.media),
            key=lambda item: (item[1].relative_cost, item[0]),
        )
        self._exact: dict[tuple[float, str, str, float], str] = {}
        self._limits_memo: dict[tuple[float, str, str], list[tuple[str, float, float, float]]] = {}

    def choose(self, lane_gbps: float, cage_a: str, cage_b: str, length_m: float) -> tuple[str, bool]:
        """(medium name, pinned). An empty name means nothing fits; the reach check reports it.

        The cheapest candidate whose reach covers the length plus its margin and that comes in a
        stock length at least that long. Memoised by exact length (lengths repeat across a
        fabric: same racks, same units); a new length costs a few float comparisons.
        """
        if self.policy.pin is not None:
            return self.policy.pin, True
        key = (lane_gbps, cage_a, cage_b, length_m)
        found = self._exact.get(key)
        if found is None:
            found = ""
            for name, reach, margin, longest in self._limits(lane_gbps, cage_a, cage_b):
                # As Medium.stock_length(length) is not None: some stock length >= length - 1e-9.
                if reach >= length_m + margin and longest >= length_m - 1e-9:
                    found = name
                    break
            self._exact[key] = found
        return found, False

    def choose_many(self, lane_gbps: float, cage_a: str, cage_b: str, lengths: set[float]) -> dict[float, tuple[str, bool]]:
        """``{length: choose(lane_gbps, cage_a, cage_b, length)}`` for many lengths at once.

        Each candidate fits every length up to some limit (the reach and stock tests only get
        harder as the length grows), so over the lengths in ascending order the chosen
        candidate only moves down the cost-ordered list: one sort and about one comparison per
        length, with the same tests as :meth:`choose`.
        """
        if self.policy.pin is not None:
            return dict.fromkeys(lengths, (self.policy.pin, True))
        limits = self._limits(lane_gbps, cage_a, cage_b)
        out: dict[float, tuple[str, bool]] = {}
        k = 0
        for length in sorted(lengths):
            while k < len(limits):
                _, reach, margin, longest = limits[k]
                if reach >= length + margin and longest >= length - 1e-9:
                    break
                k += 1
            out[length] = (limits[k][0], False) if k < len(limits) else ("", False)
        return out

    def _limits(self, lane_gbps: float, cage_a: str, cage_b: str) -> list[tuple[str, float, float, float]]:
        """(name, reach, margin, longest stock length) of the candidates that plug into both cages
        and are rated at this lane rate, cheapest first; the same for every length, so worked out once."""
        key = (lane_gbps, cage_a, cage_b)
        limits = self._limits_memo.get(key)
        if limits is None:
            margin = self.policy.margin_m
            limits = self._limits_memo[key] = [
                (name, reach, margin if medium.needs_margin else 0.0, max(medium.stock_lengths_m))
                for name, medium in self._candidates
                if medium.plugs_into(cage_a, cage_b) and (reach := medium.reach_at(lane_gbps)) is not None
            ]
        return limits
