"""Fabric -> artifacts ({relative path: bytes}). Each output family is one registered module."""

from __future__ import annotations

from ..util.progress import NULL, Progress
from .base import COMPARING, NOTICE_PREFIX, RENDERERS, RENDERING, SUBSETS, Artifacts, Notice, RenderContext, RowSelection, Stream


def render_all(
    ctx: RenderContext,
    only: list[str] | None = None,
    stream: bool = False,
    progress: Progress = NULL,
    rows: RowSelection | None = None,
    comparing: bool = False,
) -> tuple[Artifacts, list[str]]:
    """All artifacts, and notices (one line each) about outputs that could not be produced.

    Renderers may return :class:`Stream` values for large outputs; they are joined into bytes
    here unless ``stream`` is set (the writer takes them as they are and writes them chunk by chunk).
    With ``rows``, a renderer that has a subset form (``SUBSETS``) makes the selected rows only;
    with ``comparing`` (``snc diff``), one that has a comparison form (``COMPARING``) uses it.
    """
    artifacts: dict[str, bytes | Stream] = {}
    notices: list[str] = []  # Notice values (str), transient ones marked
    ctx.memo[RENDERING] = frozenset(
        name for name in RENDERERS.names() if (not only or name in only) and (rows is None or name not in SUBSETS)
    )
    for name, renderer in RENDERERS.items():
        if only and name not in only:
            continue
        with progress.step(name):
            if rows is not None and name in SUBSETS:
                produced = SUBSETS.get(name)(ctx, rows)
            elif comparing and name in COMPARING:
                produced = COMPARING.get(name)(ctx)
            else:
                produced = renderer(ctx)
        for path, data in produced.items():
            if path.startswith(NOTICE_PREFIX):
                notices.append(Notice.of(path, bytes(data).decode()))
                continue
            if path in artifacts:
                raise ValueError(f"renderer {name} writes {path} which another renderer wrote")
            artifacts[path] = data if stream or not isinstance(data, Stream) else bytes(data)
    return artifacts, notices  # type: ignore[return-value]


# Registration: importing a renderer module registers it (they import RENDERERS from .base).
from . import (  # noqa: E402,F401
    acceptance,
    bom,
    cabling,
    connectors,
    cxl_bindings,
    dhcp,
    diagram,
    elevation,
    host_addresses,
    host_network,
    imex,
    kubernetes,
    labels,
    lldp,
    nccl,
    netbox,
    opensm,
    p2p,
    rccl,
    slurm,
    sonic,
    workbook,
)
