"""Read-only views of a Fabric that several consumers share (the diagrams, ``snc explain``).

They live here rather than in one consumer so that a report does not import a renderer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .fabric import Fabric, LinkSpec

K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class FabricLinks:
    """The links of one fabric as index-aligned columns (in Fabric order), with the specs their
    ``spec`` entries point into: what a report or a drawing reads, without a ``Link`` per link."""

    a: list[int]
    b: list[int]
    spec: list[int]
    specs: list[LinkSpec]

    def __len__(self) -> int:
        return len(self.spec)

    def count_by(self, key_of: Callable[[int], K]) -> Counter[tuple[K, K, str, float]]:
        """Links per (key of the A device, key of the B device, medium, Gb/s): counted in C over
        the columns, then folded by spec into the few distinct keys."""
        by_spec = Counter(zip(map(key_of, self.a), map(key_of, self.b), self.spec))
        out: Counter[tuple[K, K, str, float]] = Counter()
        for (ka, kb, s), count in by_spec.items():
            spec = self.specs[s]
            out[(ka, kb, spec.medium, spec.gbps)] += count
        return out


def links_by_fabric(f: Fabric) -> dict[str, FabricLinks]:
    """The links of every fabric, in one pass over the specs and one per fabric over the links."""
    t = f.links
    out: dict[str, FabricLinks] = {}
    for name in t.fabrics():
        cols = t.columns(name)
        out[name] = FabricLinks(list(cols.a), list(cols.b), list(cols.spec), t.specs)
    return out


def local_tiers(f: Fabric, name: str, links: FabricLinks) -> dict[int, int]:
    """Every member device of a fabric -> its tier in that fabric.

    A device keeps its own tier in the fabric that built it (``Device.group`` is the fabric's
    name) and is an endpoint (tier 0) of every other fabric it is cabled to. A fabric that built
    none of its devices keeps their tiers as they are.
    """
    devices = f.devices
    members = set(links.a) | set(links.b)
    own = any(devices[i].group == name for i in members)
    return {i: devices[i].tier if (not own or devices[i].group == name) else 0 for i in members}
