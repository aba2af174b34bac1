"""Point-to-point sheets for cable-validation tools: ``p2p/<fabric>.csv``.

The columns of NVIDIA UFM Cable Validation Tool's P2P file (docs.nvidia.com, Cable Validation
Tool, "P2P File"): A-Node Name, A-Type (Host or Switch), A-Port, Z-Node Name, Z-Type, Z-Port; one
row per cable of an InfiniBand or Ethernet fabric, in cable-ID order. Port values as that tool
takes them: on an InfiniBand host the HCA number (1 = the first data port, mapped to its name by
``p2p/<fabric>-hca-mapping.csv``, the tool's HCA mapping file), on an InfiniBand switch the cage
and, on a split cage, the port in it ("9/1"), on Ethernet the port's OS name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ..fabric import Fabric
from . import RENDERERS, RenderContext, Stream

COLUMNS = ["A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port"]


def _fabrics(f: Fabric) -> list[str]:
    out = []
    for name in f.fabrics():
        facts = f.facts.get(name, {})
        if facts.get("transport") in ("infiniband", "ethernet") or facts.get("kind") == "management":
            out.append(name)
    return out


def _port_text(f: Fabric, device: int, port: int, infiniband: bool) -> str:
    d = f.devices[device]
    layout = f.layouts[d.model]
    if not infiniband:
        return layout.name(port)
    if f.models[d.model].kind != "switch":
        return str(layout.ports_of("data").index(port) + 1)
    group, offset = layout.port_groups[port], layout.port_offsets[port]
    cage, sub = divmod(offset, group.ports_per_cage)
    return f"{cage + 1}/{sub + 1}" if group.ports_per_cage > 1 else str(cage + 1)


def _rows(f: Fabric, name: str) -> Iterator[str]:
    infiniband = f.facts.get(name, {}).get("transport") == "infiniband"
    t = f.links
    ids = t.ids()
    positions = sorted(t.indices_of(name), key=ids.__getitem__)
    kind = ["Switch" if f.models[d.model].kind == "switch" else "Host" for d in f.devices]
    yield ",".join(COLUMNS) + "\n"
    out = []
    for i in positions:
        a, b = t.a[i], t.b[i]
        out.append(
            f"{f.devices[a].name},{kind[a]},{_port_text(f, a, t.a_port[i], infiniband)},"
            f"{f.devices[b].name},{kind[b]},{_port_text(f, b, t.b_port[i], infiniband)}\n"
        )
        if len(out) >= 5000:
            yield "".join(out)
            out = []
    yield "".join(out)


def _hca_mapping(f: Fabric, name: str) -> bytes:
    """port,hca-name of the fabric's most common endpoint model (the tool takes one mapping)."""
    t = f.links
    models: Counter[str] = Counter()
    for i in t.indices_of(name):
        for d in (t.a[i], t.b[i]):
            if f.models[f.devices[d].model].kind != "switch":
                models[f.devices[d].model] += 1
    if not models:
        return b"port,hca-name\n"
    layout = f.layouts[models.most_common(1)[0][0]]
    rows = [f"{k + 1},{layout.name(p)}" for k, p in enumerate(layout.ports_of("data"))]
    return ("port,hca-name\n" + "\n".join(rows) + "\n").encode()


@RENDERERS.register("p2p")
def render_p2p(ctx: RenderContext) -> dict[str, bytes | Stream]:
    f = ctx.fabric
    out: dict[str, bytes | Stream] = {}
    for name in _fabrics(f):
        out[f"p2p/{name}.csv"] = Stream(lambda name=name: _rows(f, name))
        if f.facts.get(name, {}).get("transport") == "infiniband":
            out[f"p2p/{name}-hca-mapping.csv"] = _hca_mapping(f, name)
    return out
