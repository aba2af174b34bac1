"""Scale-out fabrics: one discriminated union; a new topology adds its model here."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .clos import FatTree
from .dragonfly import Dragonfly, DragonflyPlus

ScaleoutFabric = Annotated[FatTree | Dragonfly | DragonflyPlus, Field(discriminator="kind")]


def fabric_names(spec: ScaleoutFabric) -> list[str]:
    """The fabrics a scale-out entry builds: its own name, or one per plane of a planed fat tree."""
    return spec.fabric_names if isinstance(spec, FatTree) else [spec.name]
