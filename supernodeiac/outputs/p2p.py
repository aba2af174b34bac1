"""Point-to-point sheets for cable-validation tools: ``p2p/<fabric>.csv``.

The first six columns are NVIDIA UFM Cable Validation Tool's P2P file (docs.nvidia.com, Cable
Validation Tool, "P2P File"): A-Node Name, A-Type (Host or Switch), A-Port, Z-Node Name, Z-Type,
Z-Port; one row per cable of an InfiniBand or Ethernet fabric, in cable-ID order. Port values as
that tool takes them: on an InfiniBand host the HCA number (1 = the first data port, mapped to its
name by ``p2p/<fabric>-hca-mapping.csv``, the tool's HCA mapping file), on an InfiniBand switch
the cage as printed on the faceplate and, on a split cage, the port in it ("9/1", the catalogue's
cages: faceplate numbering and order included), on Ethernet the port's OS name.

The tool reads its columns by name, and its own sample sheets carry rack and U beside them, so
the cabling team's columns follow: the cable ID (the key into cables.csv, which has the labels
for each end), each end's rack, U and physical port as printed (``OSFP 9 port 1``). Every cell
goes through the shared CSV writer (``csv_safe``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import partial
from typing import Any

from ..fabric import Fabric
from ..fabric.fabric_facts import kind_of, transport_of
from .base import RENDERERS, SUBSETS, RenderContext, RowSelection, Stream
from .csv_safe import CsvWriter

TOOL_COLUMNS = ["A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port"]
COLUMNS = TOOL_COLUMNS + ["Cable ID", "A-Rack", "A-U", "A-Physical", "Z-Rack", "Z-U", "Z-Physical"]


def _fabrics(f: Fabric) -> list[str]:
    out = []
    for name in f.fabrics():
        facts = f.facts.get(name)
        if transport_of(facts) in ("infiniband", "ethernet") or kind_of(facts) == "management":
            out.append(name)
    return out


class _PortText:
    """The tool's port value of every port, per model once."""

    def __init__(self, f: Fabric, infiniband: bool) -> None:
        self.f, self.infiniband = f, infiniband
        self._by_model: dict[str, list[str]] = {}

    def __call__(self, model: str) -> list[str]:
        found = self._by_model.get(model)
        if found is None:
            found = self._by_model[model] = self._make(model)
        return found

    def _make(self, model: str) -> list[str]:
        layout = self.f.layouts[model]
        if not self.infiniband:
            return list(layout.names)
        if self.f.models[model].kind != "switch":
            hca = {p: str(k + 1) for k, p in enumerate(layout.ports_of("data"))}
            return [hca.get(p, layout.names[p]) for p in range(layout.total)]
        out = []
        for p in range(layout.total):
            cage = layout.cages[layout.port_cages[p]]
            split = layout.port_groups[p].ports_per_cage > 1
            out.append(f"{cage.number}/{layout.port_positions[p] + 1}" if split else str(cage.number))
        return out


def _rows(ctx: RenderContext, name: str, keep: Any = None) -> Iterator[bytes]:
    """The fabric's sheet, in cable-ID order; with ``keep`` (a bool per link position), those links' rows only."""
    f = ctx.fabric
    infiniband = transport_of(f.facts.get(name)) == "infiniband"
    t = f.links
    ids = t.ids()
    positions = t.indices_of(name)
    if keep is not None:
        positions = [i for i, k in zip(positions, keep[positions].tolist()) if k]
    positions.sort(key=ids.__getitem__)
    kind = ["Switch" if f.models[d.model].kind == "switch" else "Host" for d in f.devices]
    racks = [f.racks[d.rack].name if d.rack >= 0 else "" for d in f.devices]
    units = [str(d.u) if d.u else "" for d in f.devices]
    names = [d.name for d in f.devices]
    port_text = _PortText(f, infiniband)
    port_cols = {m: (port_text(m), f.layouts[m].physical_names) for m in f.layouts}
    cols = [port_cols[d.model] for d in f.devices]

    def rows() -> Iterator[list[str]]:
        for i in positions:
            a, b, ap, bp = t.a[i], t.b[i], t.a_port[i], t.b_port[i]
            a_text, a_phys = cols[a]
            b_text, b_phys = cols[b]
            yield [
                names[a], kind[a], a_text[ap], names[b], kind[b], b_text[bp], ids[i],
                racks[a], units[a], a_phys[ap], racks[b], units[b], b_phys[bp],
            ]  # fmt: skip

    return CsvWriter(COLUMNS).stream(rows())


def _hca_mapping(f: Fabric, name: str) -> bytes:
    """port,hca-name of the fabric's most common endpoint model (the tool takes one mapping)."""
    t = f.links
    models: Counter[str] = Counter()
    for i in t.indices_of(name):
        for d in (t.a[i], t.b[i]):
            if f.models[f.devices[d].model].kind != "switch":
                models[f.devices[d].model] += 1
    out = CsvWriter(["port", "hca-name"])
    if models:
        layout = f.layouts[models.most_common(1)[0][0]]
        out.text_rows([str(k + 1), layout.name(p)] for k, p in enumerate(layout.ports_of("data")))
    return out.getvalue()


@RENDERERS.register("p2p")
def render_p2p(ctx: RenderContext) -> dict[str, bytes | Stream]:
    return _p2p(ctx)


def _p2p(ctx: RenderContext, rows: RowSelection | None = None) -> dict[str, bytes | Stream]:
    f = ctx.fabric
    out: dict[str, bytes | Stream] = {}
    for name in _fabrics(f):
        out[f"p2p/{name}.csv"] = Stream(partial(_rows, ctx, name, rows.links if rows is not None else None))
        if transport_of(f.facts.get(name)) == "infiniband":
            out[f"p2p/{name}-hca-mapping.csv"] = _hca_mapping(f, name)
    return out


@SUBSETS.register("p2p")
def render_p2p_rows(ctx: RenderContext, rows: RowSelection) -> dict[str, bytes | Stream]:
    """The same sheets with the selected links' rows only (``snc diff``); the HCA mapping whole."""
    return _p2p(ctx, rows)
