"""Fabric -> artifacts ({relative path: bytes}). Each output family is one registered module."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
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


Artifacts = dict[str, bytes]
Renderer = Callable[[RenderContext], Artifacts]
RENDERERS: Registry[Renderer] = Registry("renderer")


def render_all(ctx: RenderContext, only: list[str] | None = None) -> tuple[Artifacts, list[str]]:
    """All artifacts, and notices (one line each) about outputs that could not be produced."""
    artifacts: Artifacts = {}
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
            artifacts[path] = data
    return artifacts, notices


# Registration: importing a renderer module registers it (kept last: they import RENDERERS).
from . import (  # noqa: E402,F401
    acceptance,
    bom,
    cabling,
    connectors,
    diagram,
    elevation,
    kubernetes,
    nccl,
    slurm,
)


class _RenderModule(types.ModuleType):
    """``supernodeiac.render`` is this package and, for the public API, also the pipeline's
    ``render(compiled, only=None)``: calling the package renders (see supernodeiac/__init__)."""

    def __call__(self, compiled: Any, only: list[str] | None = None) -> tuple[Artifacts, list[str]]:
        from ..pipeline import render

        return render(compiled, only)


sys.modules[__name__].__class__ = _RenderModule
