"""NVIDIA IMEX node lists (snc render: imex/), from ``facts/imex.py``.

* ``imex/<domain>/nodes_config.cfg``: per NVLink domain instance of a switched scale-up domain
  with ``inband`` addressing (an NVL72 rack), the in-band address of every compute tray, one
  per line in tray order and nothing else, as the IMEX service reads the file named by
  ``IMEX_NODE_CONFIG_FILE`` (default ``/etc/nvidia-imex/nodes_config.cfg``; NVIDIA IMEX guide,
  Deployment Models: "NVLink Domain Wide", the same list on every node of the domain).
"""

from __future__ import annotations

from ..facts.imex import imex_domains
from .base import RENDERERS, Artifacts, RenderContext


@RENDERERS.register("imex")
def render_imex(ctx: RenderContext) -> Artifacts:
    out: Artifacts = {}
    for domain in imex_domains(ctx.blueprint, ctx.fabric):
        if domain.trays:
            lines = "".join(address.partition("/")[0] + "\n" for _tray, _port, address in domain.trays)
            out[f"imex/{domain.name}/nodes_config.cfg"] = lines.encode()
    return out
