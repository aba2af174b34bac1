"""Fabric -> artifacts ({relative path: bytes}). Each output family is one registered module."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..model.blueprint import Blueprint
from ..registry import Registry


@dataclass(frozen=True)
class RenderContext:
    blueprint: Blueprint
    catalogue: Catalogue
    fabric: Fabric
    # Facts several renderers share (device_facts.facts_for keeps its FabricFacts here), made on first use.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


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


Artifacts = dict[str, bytes]
Renderer = Callable[[RenderContext], "dict[str, bytes | Stream]"]
RENDERERS: Registry[Renderer] = Registry("renderer")


def render_all(ctx: RenderContext, only: list[str] | None = None, stream: bool = False) -> tuple[Artifacts, list[str]]:
    """All artifacts, and notices (one line each) about outputs that could not be produced.

    Renderers may return :class:`Stream` values for large outputs; they are joined into bytes
    here unless ``stream`` is set (the writer takes them as they are and writes them chunk by chunk).
    """
    artifacts: dict[str, bytes | Stream] = {}
    notices: list[str] = []
    for name, renderer in RENDERERS.items():
        if only and name not in only:
            continue
        produced = renderer(ctx)
        for path, data in produced.items():
            if path.startswith("notice:"):
                notices.append(data.decode())
                continue
            if path in artifacts:
                raise ValueError(f"renderer {name} writes {path} which another renderer wrote")
            artifacts[path] = data if stream or not isinstance(data, Stream) else bytes(data)
    return artifacts, notices  # type: ignore[return-value]


# Registration: importing a renderer module registers it (kept last: they import RENDERERS).
from . import (  # noqa: E402,F401
    acceptance,
    bom,
    cabling,
    connectors,
    diagram,
    elevation,
    host_addresses,
    kubernetes,
    lldp,
    nccl,
    opensm,
    p2p,
    slurm,
    sonic,
)


class _RenderModule(types.ModuleType):
    """``supernodeiac.render`` is this package and, for the public API, also the pipeline's
    ``render(compiled, only=None)``: calling the package renders (see supernodeiac/__init__)."""

    def __call__(self, compiled: Any, only: list[str] | None = None) -> tuple[Artifacts, list[str]]:
        from ..pipeline import render

        return render(compiled, only)


sys.modules[__name__].__class__ = _RenderModule
