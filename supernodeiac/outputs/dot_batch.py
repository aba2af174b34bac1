"""Graphviz `dot` for many diagrams in one process, with the bytes of one process per diagram.

One `dot` per diagram pays a process start each time (plugins and fontconfig: about 15 ms of
dot's CPU, a tenth of a 131k pod's layout) and a fork of snc (a 2 GB process at 131k GPUs, its
page tables copied in the parent's time). One `dot` given every diagram on stdin lays them out
in turn and writes one SVG document after the other.

Those documents are the bytes of separate runs but for one piece of state a Graphviz 2.43 job
keeps from graph to graph: the root graph's id is made before the page loop, from the page
position the previous graph's loop left (layerPagePrefix), so every document after the first
has ``<g id="page0,1_graph0"`` where a fresh process writes ``<g id="graph0"``. That id is put
back. The batch checks that nothing else leaks with the `dot` at hand: its shortest diagram is
laid out first and again last, and its two documents must be the same once the id is put back.
Where that or anything else fails (another Graphviz, an error in one graph, a timeout), the
caller lays out each diagram on its own, as before.

One kind of graph is never given to a batch (the caller's rule, ``Diagram.flat_labels``): a
labelled edge between two nodes of one rank makes 2.43 grow the rank array in flat_edges while
a pointer to the old one is kept, which gvFreeLayout frees again before the next graph
(valgrind: an invalid free; the dragonfly-plus group views then abort the process). Without
such edges valgrind reports nothing for the batches of every shipped blueprint, the 16k and
the 131k RoCE and XDR designs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from ..util import child_process

XML_START = b"<?xml "  # each SVG document's first bytes; text inside one is escaped (&lt;), never this
LEAKED_ID = b'<g id="page0,1_graph0" class="graph"'
FRESH_ID = b'<g id="graph0" class="graph"'


def _fresh(document: bytes) -> bytes | None:
    """A later document of the batch as a process of its own writes it; None if it is not the
    one known difference (the caller then trusts nothing of the batch)."""
    if document.count(LEAKED_ID) != 1 or document.count(b"page0,1_") != 1:
        return None
    return document.replace(LEAKED_ID, FRESH_ID, 1)


def svgs(dots: Sequence[str], program: str, timeout_s: float) -> list[bytes] | None:
    """The SVG of every DOT text from one `dot`, in order; None where the batch cannot be
    trusted to give the bytes of one process per diagram (the caller runs those instead)."""
    if not dots:
        return []
    # The witness, the shortest text (the cheapest layout), first (as a fresh process lays it
    # out) and last (after every other graph).
    w = min(range(len(dots)), key=lambda i: len(dots[i]))
    order = [w, *(i for i in range(len(dots)) if i != w), w]
    try:
        out = child_process.run([program, "-Tsvg"], "\n".join(dots[i] for i in order).encode(), timeout_s)
    except (subprocess.SubprocessError, OSError):
        return None
    parts = out.split(XML_START)
    if parts[0] or len(parts) != len(order) + 1:
        return None
    documents = [XML_START + p for p in parts[1:]]
    fresh = [documents[0]]
    for document in documents[1:]:
        fixed = _fresh(document)
        if fixed is None:
            return None
        fresh.append(fixed)
    if fresh[-1] != fresh[0]:
        return None
    svg_of = dict(zip(order, fresh, strict=False))  # the witness's last document is the first's
    return [svg_of[i] for i in range(len(dots))]
