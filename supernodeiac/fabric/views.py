"""Read-only views of a Fabric that several consumers share (the diagrams, ``snc explain``).

They live here rather than in one consumer so that a report does not import a renderer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from . import Fabric, LinkSpec
from .fabric_facts import is_scale_out

K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class FabricLinks:
    """The links of one fabric as index-aligned columns (in Fabric order), with the specs their
    ``spec`` entries point into: what a report or a drawing reads, without a ``Link`` per link."""

    a: list[int]
    b: list[int]
    spec: list[int]
    specs: list[LinkSpec]
    # The three columns as int64 arrays, made on first use (or given by links_by_fabric).
    _arrays: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.spec)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``a``, ``b`` and ``spec`` as numpy int64 arrays (the same numbers), for bulk work."""
        if not self._arrays:
            self._arrays.extend(np.fromiter(c, dtype=np.int64, count=len(c)) for c in (self.a, self.b, self.spec))
        a, b, spec = self._arrays
        return a, b, spec

    def count_by(self, key_of: Callable[[int], K]) -> Counter[tuple[K, K, str, float]]:
        """Links per (key of the A device, key of the B device, medium, Gb/s): each end device's
        key made once and numbered, the links counted as numbers in numpy (hashing a key tuple
        per link was most of a 131k overview's time), then folded by spec into the few keys."""
        if not self.spec:
            return Counter()
        a, b, spec = self.arrays()
        ends = np.unique(np.concatenate([a, b]))
        number: dict[K, int] = {}
        distinct: list[K] = []
        dense = np.zeros(int(ends[-1]) + 1, dtype=np.int64)
        for i in ends.tolist():
            key = key_of(i)
            n = number.get(key)
            if n is None:
                n = number[key] = len(distinct)
                distinct.append(key)
            dense[i] = n
        keys, specs = len(distinct), len(self.specs)
        combos, counts = np.unique((dense[a] * keys + dense[b]) * specs + spec, return_counts=True)
        out: Counter[tuple[K, K, str, float]] = Counter()
        for combo, count in zip(combos.tolist(), counts.tolist(), strict=True):
            pair, s = divmod(combo, specs)
            ka, kb = divmod(pair, keys)
            link_spec = self.specs[s]
            out[(distinct[ka], distinct[kb], link_spec.medium, link_spec.gbps)] += count
        return out


def links_by_fabric(f: Fabric) -> dict[str, FabricLinks]:
    """The links of every fabric, in one pass over the specs and one per fabric over the links."""
    t = f.links
    arrays = t.arrays()
    fabric_of = [s.fabric for s in t.specs]
    out: dict[str, FabricLinks] = {}
    for name in t.fabrics():
        # The fabric's positions in table order, as LinkTable.indices_of finds them, in numpy.
        at = np.flatnonzero(np.array([x == name for x in fabric_of], dtype=bool)[arrays.spec])
        cols = [arrays.a[at], arrays.b[at], arrays.spec[at]]
        out[name] = FabricLinks(cols[0].tolist(), cols[1].tolist(), cols[2].tolist(), t.specs, cols)
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


@dataclass(frozen=True, slots=True)
class RoleUse:
    """The data ports of one switch role of a fabric: the design's, and those cabled now."""

    role: str
    switches: int
    radix: int  # data ports of the role's model (the largest, where models differ)
    planned: int | None  # ports each switch uses at the planned size (builder facts), None if not stated
    used: int  # link ends on the role's switches in this fabric, now
    total: int  # data ports of the role's switches

    @property
    def design_fraction(self) -> float | None:
        return self.planned / self.radix if self.planned is not None and self.radix else None

    @property
    def used_fraction(self) -> float:
        return self.used / self.total if self.total else 0.0


def port_use(f: Fabric, name: str) -> list[RoleUse]:
    """Per switch role of a fabric (devices it built, tier > 0), its data-port use: one bincount
    over the fabric's links."""
    import numpy as np

    t = f.links
    arr = t.arrays()
    mine = np.array([spec.fabric == name for spec in t.specs], dtype=bool)[arr.spec] if t.specs else np.zeros(0, bool)
    ends = np.bincount(np.concatenate((arr.a[mine], arr.b[mine])), minlength=len(f.devices))
    facts = f.facts.get(name)
    planned: dict[str, int] = facts["ports_planned"] if is_scale_out(facts) else {}
    by_role: dict[str, list] = {}
    for d in f.devices:
        if d.group != name or d.tier == 0:
            continue
        radix = f.models[d.model].port_count("data")
        acc = by_role.setdefault(d.role, [0, 0, 0, 0])
        acc[0] += 1
        acc[1] = max(acc[1], radix)
        acc[2] += int(ends[d.index])
        acc[3] += radix
    return [RoleUse(role, n, radix, planned.get(role), used, total) for role, (n, radix, used, total) in sorted(by_role.items())]


@dataclass(frozen=True, slots=True)
class RailAlignment:
    """Which NIC positions (a port's place among its device's ports of that role) land on each
    switch of a fabric that endpoints attach to: rail-aligned when each switch takes one."""

    rails: int  # NICs per endpoint device (the most any has)
    switches: int  # switches with endpoints on them
    single: int  # of those, the ones that take one NIC position only
    example: tuple[str, tuple[int, ...]] | None  # a switch that takes several, and which

    @property
    def aligned(self) -> bool:
        return self.rails > 1 and self.single == self.switches


def rail_alignment(f: Fabric, name: str) -> RailAlignment | None:
    """None when the fabric has no endpoints with more than one port on it. In bulk (numpy): each
    endpoint-to-switch link's NIC position read from a per-port table, distinct (switch, NIC) pairs
    counted per switch."""
    import numpy as np

    devices = f.devices
    t = f.links
    if not len(t):
        return None
    arr = t.arrays()
    dv = f.device_arrays()
    mine = np.array([spec.fabric == name for spec in t.specs], dtype=bool)[arr.spec]
    a, ap, b, bp = arr.a[mine], arr.a_port[mine], arr.b[mine], arr.b_port[mine]
    own = np.fromiter((d.group == name and d.tier > 0 for d in devices), dtype=bool, count=len(devices))
    # Orient every link endpoint -> switch of this fabric; drop switch-to-switch links.
    flip = own[a] & ~own[b]
    ep = np.where(flip, b, a)
    ep_port = np.where(flip, bp, ap)
    sw = np.where(flip, a, b)
    keep = own[sw] & ~own[ep]
    ep, ep_port, sw = ep[keep], ep_port[keep], sw[keep]
    if not len(ep):
        return None
    # A port's place among its device's ports of the same role, as a flat table beside dv's rows.
    positions: list[int] = []
    for model in dv.models:
        layout = f.layouts[model]
        seen: dict[str, int] = {}
        for role in layout.port_roles:
            positions.append(seen.get(role, 0))
            seen[role] = seen.get(role, 0) + 1
    nic = np.array(positions, dtype=np.int64)[dv.rows(ep, ep_port)]
    per_endpoint = np.bincount(ep, minlength=len(devices))
    rails = int(per_endpoint.max())
    if rails < 2:
        return None
    # Only the endpoints with a port on every rail (the nodes): a service endpoint's 2 ports (a
    # UFM on the top ports of two rails' leaves) are not rail traffic.
    full = per_endpoint[ep] == rails
    sw, nic = sw[full], nic[full]
    pairs = np.unique(sw * rails + nic)
    switch_of = pairs // rails
    switches, counts = np.unique(switch_of, return_counts=True)
    several = switches[counts > 1]
    example = None
    if len(several):
        first = int(several[0])
        nics = tuple(int(x) for x in pairs[switch_of == first] % rails)
        example = (devices[first].name, nics)
    return RailAlignment(rails, len(switches), len(switches) - len(several), example)
