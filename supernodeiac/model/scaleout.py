"""Scale-out fabrics: one discriminated union; a new topology adds its model here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from .clos import FatTree
from .dragonfly import Dragonfly, DragonflyPlus

ScaleoutFabric = Annotated[FatTree | Dragonfly | DragonflyPlus, Field(discriminator="kind")]


if TYPE_CHECKING:
    from .blueprint import Blueprint


def fabric_names(spec: ScaleoutFabric) -> list[str]:
    """The fabrics a scale-out entry builds: its own name, or one per plane of a planed fat tree."""
    return spec.fabric_names if isinstance(spec, FatTree) else [spec.name]


def built_fabrics(blueprint: Blueprint) -> Iterator[tuple[int, ScaleoutFabric, str]]:
    """(index in scaleout:, entry, fabric name) of every fabric the scale-out entries build, in order:
    a planed fat tree gives one row per plane, all at its index (its findings point at the entry)."""
    for i, spec in enumerate(blueprint.scaleout):
        for name in fabric_names(spec):
            yield i, spec, name
