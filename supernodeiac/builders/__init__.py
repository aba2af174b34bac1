"""Blueprint -> Fabric. Builders register by the ``kind`` of the blueprint entry they build."""

from __future__ import annotations

from pydantic import ValidationError

from ..catalog import merged
from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..findings import BuildError, Finding, error
from ..model.blueprint import Blueprint
from .base import BUILDERS
from .cages import settle
from .context import BuildContext
from .geometry import Geometry


def load_catalogue(blueprint: Blueprint) -> Catalogue:
    data = merged(blueprint.catalogue.model_dump())
    try:
        return Catalogue.model_validate(data)
    except ValidationError as exc:
        findings: list[Finding] = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            # loc is (section, name, field...); point into the blueprint when it overrode that entry.
            section, name = loc[0], loc[1] if len(loc) > 1 else None
            overridden = name in getattr(blueprint.catalogue, str(section), {})
            path = ("catalogue",) + loc if overridden else ("catalogue",)
            findings.append(error("catalogue", f"catalogue {'.'.join(map(str, loc))}: {err['msg']}", path))
        raise BuildError(findings) from None


def build(blueprint: Blueprint, catalogue: Catalogue | None = None) -> tuple[Fabric, list[Finding]]:
    """Compile the blueprint into a Fabric. Raises BuildError when it cannot be built.

    ``catalogue`` is the blueprint's merged catalogue when the caller already has it (the
    pipeline does: validating it again would cost a second pass over every entry).
    """
    catalogue = catalogue if catalogue is not None else load_catalogue(blueprint)
    fabric = Fabric(blueprint.metadata.name, dict(catalogue.devices), cable_id=blueprint.naming.cable_id)
    ctx = BuildContext(blueprint, catalogue, fabric, Geometry(blueprint.site, fabric))
    try:
        for i, group in enumerate(blueprint.nodes):
            BUILDERS.get("nodes")(ctx, group, ("nodes", i))
        for section in ("scaleup", "scaleout"):
            for i, spec in enumerate(getattr(blueprint, section)):
                BUILDERS.get(spec.kind)(ctx, spec, (section, i))
        for i, pool in enumerate(blueprint.cxl):
            BUILDERS.get(pool.kind)(ctx, pool, ("cxl", i))
        if blueprint.management is not None:
            BUILDERS.get("management")(ctx, blueprint.management, ("management",))
        settle(ctx)  # one plug per cage, for all links at once
    except BuildError as exc:
        exc.partial = fabric  # what was placed so far: the structural checks may name the cause
        raise
    return fabric, ctx.findings


# Registration: importing a builder module registers it (they import BUILDERS from .base).
from . import clos, cxl, dragonfly, management, nodes, scaleup  # noqa: E402,F401
