"""The outputs' registry and what a renderer reads and returns: an output family registers a
function of the :class:`RenderContext` that returns ``{relative path: bytes | Stream}``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..model.blueprint import Blueprint
from ..util.registry import Registry


@dataclass(frozen=True)
class RenderContext:
    blueprint: Blueprint
    catalogue: Catalogue
    fabric: Fabric
    # Facts several renderers share (device_facts.facts_for keeps its FabricFacts here), made on first use.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


# ctx.memo[RENDERING]: the renderers the running render_all makes whole (not their subset forms),
# so that one can make in its pass what a later one of them takes (cables.csv's pass the workbook's cables).
RENDERING = "rendering"


class Stream:
    """An artifact produced in chunks when it is written: a large output (a 10^5-line topology, a
    thousand switch configs) goes to disk piece by piece instead of being held whole. The chunks
    come from calling ``produce`` (str chunks are UTF-8 encoded); ``bytes(stream)`` joins them."""

    __slots__ = ("produce",)

    def __init__(self, produce: Callable[[], Iterable[bytes | str]]) -> None:
        self.produce = produce

    def chunks(self) -> Iterator[bytes]:
        for chunk in self.produce():
            yield chunk.encode() if isinstance(chunk, str) else chunk

    def __bytes__(self) -> bytes:
        return b"".join(self.chunks())


class Sized(Stream):
    """A stream whose length in bytes (``size``) is known without producing it: ``snc diff`` tells
    two files it compares as bytes apart by their lengths, without making either, where those
    differ (a changed ibnetdiscover topology of 18 MB per plane at 131k GPUs)."""

    __slots__ = ("size",)

    def __init__(self, size: int, produce: Callable[[], Iterable[bytes | str]]) -> None:
        super().__init__(produce)
        self.size = size


class Derived(Stream):
    """A file that is a function of another file of the same render (``source``) and of the tools
    of this process alone: a diagram's SVG, of its DOT text and this `dot`. ``snc diff`` compares
    two renders made in one process, so where both sides' sources are the same bytes it counts
    the file unchanged without making it (a comparison form, ``COMPARING``, defers such files).

    ``make`` takes the paths wanted (one renderer's deferred files share it, so that one call
    makes them together) and gives their files, with a ``notice:...`` key for one it could not
    make; joining the stream makes this file alone."""

    __slots__ = ("make", "source")

    def __init__(self, path: str, source: str, make: Callable[[list[str]], Mapping[str, bytes]]) -> None:
        self.source = source
        self.make = make
        super().__init__(lambda: [make([path])[path]])


Artifacts = dict[str, bytes]

# A renderer reports what it could not produce under a "notice:..." key; "notice:transient:..."
# marks one that may not hold next time (a `dot` that failed or timed out), so a render that gave
# it is not remembered as up to date (render_state).
NOTICE_PREFIX = "notice:"
TRANSIENT_PREFIX = "notice:transient:"


class Notice(str):
    """One notice line; ``transient`` when the same inputs may not give it again."""

    transient: bool = False

    @classmethod
    def of(cls, key: str, text: str) -> Notice:
        n = cls(text)
        n.transient = key.startswith(TRANSIENT_PREFIX)
        return n


# A Mapping (read-only, so covariant): a renderer that only makes bytes returns dict[str, bytes].
Renderer = Callable[[RenderContext], "Mapping[str, bytes | Stream]"]
RENDERERS: Registry[Renderer] = Registry("renderer")


@dataclass(frozen=True)
class RowSelection:
    """The rows a subset render makes (``snc diff``: only the rows that may differ, on both sides):
    True per position of the Fabric's link table (``links``) and per item of its cable plan
    (``cables``, facts/cable_plan)."""

    links: Any  # numpy bool array, len(fabric.links)
    cables: Any  # numpy bool array, len(cable_plan)
    # Rows of racks (hall rows) whose per-row files may differ (a cable with an end there that
    # may differ, another rack list); None: every row's.
    hall_rows: frozenset[str] | None = None
    # Racks (by name; "" for the devices outside racks) whose cable labels may differ (a cable
    # with a label there that may differ, a rack on one side only); None: every rack's.
    racks: frozenset[str] | None = None
    # The ports (device name, port index) where a link that may differ ends, on either side.
    ports: frozenset[tuple[str, int]] = frozenset()
    # Which side of the comparison this is (0: old, 1: new), and per cable-plan item the other
    # side's item that is the same cable (every column of its row the same; -1: none): a subset
    # form may take what the other side made of those cables (``shared``, the same dict on both
    # sides, emptied after each renderer) instead of making them again.
    side: int = 0
    twins: Any = None
    # The links both sides have (by cable ID) are in the same order in both link tables: a table
    # in link order (not sorted by a key) may then leave rows out, the rows kept in their order.
    ordered: bool = False
    # The devices (by name) whose InfiniBand GUIDs may differ (facts/guid_plan: on one side only,
    # or another entry or rank); None: not known (the subnet manager's per-node files whole).
    guids: frozenset[str] | None = None
    # The fabrics (by name) with a link that may differ, on either side: a file of one fabric's
    # links alone (an ibnetdiscover topology) is the same on both sides where its fabric is not here.
    fabrics: frozenset[str] = frozenset()
    shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


# A subset form leaves out a file that is the same bytes on both sides of the comparison and
# says so with an empty value under this prefix and the file's path (``snc diff`` counts it unchanged).
SAME_PREFIX = "same:"

# A renderer's subset form, registered under the renderer's name: the same paths as the
# renderer, each file with the selected rows only (its header and the order of its rows kept).
SubsetRenderer = Callable[[RenderContext, RowSelection], "Mapping[str, bytes | Stream]"]
SUBSETS: Registry[SubsetRenderer] = Registry("subset renderer")

# A renderer's form for ``snc diff``'s comparison, registered under the renderer's name: its
# files, some of them deferred (:class:`Derived`) so that the comparison makes only those whose
# sources differ. Used with or without a row selection (it selects no rows).
COMPARING: Registry[Renderer] = Registry("comparison form")
