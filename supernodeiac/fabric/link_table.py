"""Every link of a Fabric, stored column by column.

A fabric of 10^5-10^6 links held as one object per link pays, per link, for the object, its
formatted cable ID and an attribute lookup per field in every pass a check makes. Here a link
is six list entries: its two ends (device, port), its routed length, and its *spec*, an index
into a short table of what links made by one builder loop share (fabric, kind, lane width and
rate, medium, origin, pinned). Checks read the columns; cable IDs are formatted in one pass when
someone asks for them (the Fabric knows the naming), and :class:`Link` objects are made on
demand for code that reads links one at a time (renderers, findings, tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

import numpy as np


@dataclass(slots=True)
class Link:
    """One link, as a value: what ``LinkTable`` hands out. Changing it changes nothing stored."""

    id: str  # stable cable/connector ID
    fabric: str  # the network it belongs to (a scale-out fabric's name, a domain's name, "mgmt")
    kind: str  # cable | connector | cartridge
    a: int  # device index of the A end
    a_port: int  # port index on the A device
    b: int
    b_port: int
    lanes: int
    lane_gbps: float
    length_m: float  # routed length before rounding to stock
    medium: str  # catalogue medium key
    origin: tuple = ()  # blueprint path of what asked for this link (a fabric, a domain, a pin)
    pinned: bool = False  # medium forced by the blueprint rather than chosen by policy
    tier: str = ""  # node-leaf, leaf-spine, spine-core, local, global ("" when the builder names none)
    a_module: str = ""  # transceiver (catalogue key) in the A end's cage, for transceiver media
    b_module: str = ""
    head: str = ""  # splitter media: the end with the head plug, "a" or "b"

    @property
    def gbps(self) -> float:
        return self.lanes * self.lane_gbps


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """What many links share: a fabric has a few dozen of these for 10^6 links.

    ``medium`` is the catalogue medium (the assembly family: ``dac-2x400g``, ``sr4-400g``, ...);
    for transceiver media ``a_module``/``b_module`` name the module that goes into each end's
    cage (they differ when the cages do: a finned twin-port module on the switch, a flat-top
    single-port one on the NIC); for splitters ``head`` says which end takes the head plug.
    """

    fabric: str
    kind: str
    lanes: int
    lane_gbps: float
    medium: str
    origin: tuple
    pinned: bool
    tier: str = ""
    a_module: str = ""
    b_module: str = ""
    head: str = ""

    @property
    def gbps(self) -> float:
        return self.lanes * self.lane_gbps


class Columns(NamedTuple):
    """The columns of some links (all of them, or one fabric's), index-aligned."""

    positions: Sequence[int]  # position of each link in the table
    a: list[int]
    a_port: list[int]
    b: list[int]
    b_port: list[int]
    length_m: list[float]
    spec: list[int]


class LinkArrays(NamedTuple):
    """Every link's columns as numpy arrays, for checks that decide 10^6 links in bulk."""

    a: np.ndarray  # int64
    a_port: np.ndarray
    b: np.ndarray
    b_port: np.ndarray
    length_m: np.ndarray  # float64: the same floats as the list column
    spec: np.ndarray


# Formats the cable IDs of the links at the given positions (all when None), in that order.
IdSource = Callable[["LinkTable", Sequence[int] | None], list[str]]


class LinkTable:
    """The links of a Fabric, in build order. Append through :meth:`add` or :meth:`add_many` (the
    builders' path, via ``BuildContext.add_links``); read columns, or iterate :class:`Link` values."""

    __slots__ = (
        "a",
        "a_port",
        "b",
        "b_port",
        "length_m",
        "spec",
        "specs",
        "_spec_ids",
        "_id_source",
        "_ids",
        "_order",
        "_arrays",
        "_edits",
        "_spec_edits",
    )

    def __init__(self, id_source: IdSource) -> None:
        self.a: list[int] = []
        self.a_port: list[int] = []
        self.b: list[int] = []
        self.b_port: list[int] = []
        self.length_m: list[float] = []
        self.spec: list[int] = []  # index into ``specs``
        self.specs: list[LinkSpec] = []
        self._spec_ids: dict[LinkSpec, int] = {}
        self._id_source = id_source
        self._ids: tuple[tuple[int, int], list[str]] | None = None  # (stamp, IDs) cache
        self._order: tuple[tuple[int, int], list[int]] | None = None  # (stamp, positions by cable ID) cache
        self._arrays: tuple[tuple[int, int], LinkArrays] | None = None  # (stamp, arrays) cache
        self._edits = 0  # bumped by every change other than an append
        self._spec_edits = 0  # of which new specs only (set_specs): the ends stay as they were

    # -- writing ----------------------------------------------------------------------------
    def spec_id(self, spec: LinkSpec) -> int:
        """The index of ``spec`` in ``specs`` (added on first use)."""
        found = self._spec_ids.get(spec)
        if found is None:
            found = self._spec_ids[spec] = len(self.specs)
            self.specs.append(spec)
        return found

    def add(self, a: int, a_port: int, b: int, b_port: int, length_m: float, spec: int) -> int:
        """Append one link; returns its position."""
        self.add_many([a], [a_port], [b], [b_port], [length_m], [spec])
        return len(self.spec) - 1

    def add_many(
        self,
        a: Sequence[int],
        a_port: Sequence[int],
        b: Sequence[int],
        b_port: Sequence[int],
        length_m: Sequence[float],
        spec: Sequence[int],
    ) -> None:
        """Append many links given as index-aligned columns (the builders' path: six extends)."""
        if not len(a) == len(a_port) == len(b) == len(b_port) == len(length_m) == len(spec):
            raise ValueError("add_many: the columns differ in length")
        for column, values in zip(self._columns(), (a, a_port, b, b_port, length_m, spec), strict=True):
            column.extend(values)

    def append(self, link: Link) -> None:
        """Append a link given as a value (its ``id`` is not kept: IDs come from the naming)."""
        spec = LinkSpec(
            link.fabric,
            link.kind,
            link.lanes,
            link.lane_gbps,
            link.medium,
            link.origin,
            link.pinned,
            link.tier,
            link.a_module,
            link.b_module,
            link.head,
        )
        self.add(link.a, link.a_port, link.b, link.b_port, link.length_m, self.spec_id(spec))

    def extend(self, links: Iterable[Link]) -> None:
        for link in links:
            self.append(link)

    def set_specs(self, positions: Sequence[int], specs: Sequence[int]) -> None:
        """Give the links at ``positions`` new specs (media settled per cage after the build)."""
        column = self.spec
        for i, s in zip(positions, specs, strict=True):
            column[i] = s
        arrays = self._arrays if self._arrays is not None and self._arrays[0] == self.stamp() else None
        self._edits += 1
        self._spec_edits += 1
        if arrays is not None:  # the five other columns are as they were: no new conversion
            spec = arrays[1].spec.copy()  # a copy: a caller may hold the old arrays
            spec[np.asarray(positions, dtype=np.int64)] = np.asarray(specs, dtype=np.int64)
            self._arrays = (self.stamp(), arrays[1]._replace(spec=spec))

    def _columns(self) -> tuple[list, ...]:
        return (self.a, self.a_port, self.b, self.b_port, self.length_m, self.spec)

    def __delitem__(self, key: int | slice) -> None:
        for column in self._columns():
            del column[key]
        self._edits += 1

    def __setitem__(self, key: slice, links: Iterable[Link]) -> None:
        """``table[:] = links``: replace every link (for tests and tools that edit a fabric)."""
        if key != slice(None):
            raise TypeError("only table[:] = links is supported")
        kept = list(links)
        for column in self._columns():
            column.clear()
        self._edits += 1
        self.extend(kept)

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.spec)

    def stamp(self) -> tuple[int, int]:
        """Changes whenever the links do: a key for caches of derived data (IDs, sorted order)."""
        return (len(self.spec), self._edits)

    def ends_stamp(self) -> tuple[int, int]:
        """Changes whenever the links' ends do (not on new specs): a key for what depends only
        on which ports are cabled, such as the cages of each link end."""
        return (len(self.spec), self._edits - self._spec_edits)

    def ids(self) -> list[str]:
        """Every link's cable ID, in table order: formatted in one pass, kept until the next change."""
        stamp = self.stamp()
        if self._ids is None or self._ids[0] != stamp:
            self._ids = (stamp, self._id_source(self, None))
        return self._ids[1]

    def id_order(self) -> list[int]:
        """Positions of the links in cable-ID order (sorted once, kept until the next change)."""
        stamp = self.stamp()
        if self._order is None or self._order[0] != stamp:
            ids = self.ids()
            self._order = (stamp, sorted(range(len(ids)), key=ids.__getitem__))
        return self._order[1]

    def arrays(self) -> LinkArrays:
        """The columns as numpy arrays: converted once (a few ms per 10^5 links), kept until the next change."""
        stamp = self.stamp()
        if self._arrays is None or self._arrays[0] != stamp:

            def ints(column: list[int]) -> np.ndarray:
                return np.fromiter(column, dtype=np.int64, count=len(column))

            length = np.fromiter(self.length_m, dtype=np.float64, count=len(self.length_m))
            arrays = LinkArrays(ints(self.a), ints(self.a_port), ints(self.b), ints(self.b_port), length, ints(self.spec))
            self._arrays = (stamp, arrays)
        return self._arrays[1]

    def id_of(self, i: int) -> str:
        if self._ids is not None and self._ids[0] == self.stamp():
            return self._ids[1][i]
        return self._id_source(self, [i])[0]

    def link(self, i: int, cable_id: str | None = None) -> Link:
        s = self.specs[self.spec[i]]
        return Link(
            self.id_of(i) if cable_id is None else cable_id,
            s.fabric,
            s.kind,
            self.a[i],
            self.a_port[i],
            self.b[i],
            self.b_port[i],
            s.lanes,
            s.lane_gbps,
            self.length_m[i],
            s.medium,
            s.origin,
            s.pinned,
            s.tier,
            s.a_module,
            s.b_module,
            s.head,
        )

    @overload
    def __getitem__(self, key: int) -> Link: ...
    @overload
    def __getitem__(self, key: slice) -> list[Link]: ...
    def __getitem__(self, key: int | slice) -> Link | list[Link]:
        if isinstance(key, slice):
            return self.links(range(len(self))[key])
        if key < 0:
            key += len(self)
        if not 0 <= key < len(self):
            raise IndexError("link index out of range")
        return self.link(key)

    def __iter__(self) -> Iterator[Link]:
        """The links as values, one at a time (10^6 of them are not all held at once)."""
        ids = self.ids()
        return (self.link(i, ids[i]) for i in range(len(ids)))

    def links(self, indices: Sequence[int] | None = None) -> list[Link]:
        """Links as values (all, or those at ``indices``), with their IDs formatted in one pass."""
        if indices is None:
            indices = range(len(self))
            ids = self.ids()
            return [self.link(i, ids[i]) for i in indices]
        return [self.link(i, cid) for i, cid in zip(indices, self._id_source(self, indices), strict=True)]

    def index(self, link: Link) -> int:
        """The position of the first link equal to ``link`` (ends, rate, medium, length, origin)."""
        for i, other in enumerate(self):
            if other == link:
                return i
        raise ValueError("link not in table")

    def indices_of(self, fabric: str) -> list[int]:
        """Positions of one fabric's links, decided per spec rather than per link."""
        wanted = np.array([s.fabric == fabric for s in self.specs], dtype=bool)
        if not len(wanted):
            return []
        return np.flatnonzero(wanted[self.arrays().spec]).tolist()  # one pass in numpy (10^6 links)

    def columns(self, fabric: str | None = None) -> Columns:
        """The columns of every link (no copy), or of one fabric's links (copied, in order)."""
        if fabric is None:
            return Columns(range(len(self)), *self._columns())
        idx = self.indices_of(fabric)
        if len(idx) == len(self):
            return Columns(range(len(self)), *self._columns())
        return Columns(idx, *([column[i] for i in idx] for column in self._columns()))

    def fabrics(self) -> list[str]:
        used = set(self.spec)
        return sorted({s.fabric for k, s in enumerate(self.specs) if k in used})
