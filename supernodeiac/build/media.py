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
        self._memo: dict[tuple[float, str, str, float], str] = {}
        self._exact: dict[tuple[float, str, str, float], str] = {}
        self._usable_memo: dict[tuple[float, str, str], list[tuple[str, Medium, float]]] = {}

    def choose(self, lane_gbps: float, cage_a: str, cage_b: str, length_m: float) -> tuple[str, bool]:
        """(medium name, pinned). An empty name means nothing fits; the reach check reports it."""
        if self.policy.pin is not None:
            return self.policy.pin, True
        # Exact lengths repeat across a fabric (same racks, same units): looking them up first
        # skips rounding and hashing a new float, half the cost of a call. The answer is always
        # the one memoised for the rounded length.
        exact = (lane_gbps, cage_a, cage_b, length_m)
        found = self._exact.get(exact)
        if found is not None:
            return found, False
        key = (lane_gbps, cage_a, cage_b, round(length_m, 2))
        found = self._memo.get(key)
        if found is None:
            found = ""
            for name, medium, reach in self._usable(lane_gbps, cage_a, cage_b):
                need = length_m + (self.policy.margin_m if medium.needs_margin else 0.0)
                if reach >= need and medium.stock_length(length_m) is not None:
                    found = name
                    break
            self._memo[key] = found
        self._exact[exact] = found
        return found, False

    def _usable(self, lane_gbps: float, cage_a: str, cage_b: str) -> list[tuple[str, Medium, float]]:
        """(name, medium, reach) of the candidates that plug into both cages and are rated at
        this lane rate, cheapest first; the same for every length, so worked out once."""
        key = (lane_gbps, cage_a, cage_b)
        usable = self._usable_memo.get(key)
        if usable is None:
            usable = self._usable_memo[key] = [
                (name, medium, reach)
                for name, medium in self._candidates
                if fits_cages(medium, cage_a, cage_b) and (reach := medium.reach_at(lane_gbps)) is not None
            ]
        return usable


def fits_cages(medium: Medium, cage_a: str, cage_b: str) -> bool:
    if cage_a not in medium.cages or cage_b not in medium.cages:
        return False
    return medium.requires_cage is None or medium.requires_cage in (cage_a, cage_b)
