"""Expected LLDP neighbours of every Ethernet switch: ``lldp/<switch>.json``.

One entry per cabled port: the local port (name and SONiC alias), the neighbour's system name and
the port ID it should announce (a SONiC neighbour announces its port alias, e.g. ``etp1a``; other
devices their port name), the cable's ID and network, and whether the neighbour is expected to
speak LLDP at all (switches do; BMCs and hosts only when they run an agent). What
``show lldp table`` on the switch should print (one neighbour per line), and what ``snc verify``
checks a discovered table against.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..device_facts import FabricFacts, facts_for
from ..sonic_ports import sonic_ports
from . import RENDERERS, RenderContext, Stream

_key = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


class _Announced:
    """The port ID each model's ports announce over LLDP (SONiC: the alias; else the port name), per model once."""

    def __init__(self, facts: FabricFacts) -> None:
        self.facts = facts
        self._by_model: dict[str, list[str]] = {}

    def __call__(self, model: str) -> list[str]:
        found = self._by_model.get(model)
        if found is None:
            f = self.facts.fabric
            names = list(f.layouts[model].names)
            port_map = self.facts.catalogue.port_maps.get(model)
            if port_map is not None:
                for p, sp in enumerate(sonic_ports(f.layouts[model], port_map).ports):
                    if sp is not None:
                        names[p] = sp.alias
            found = self._by_model[model] = names
        return found


def _expected(facts: FabricFacts, device: int, announced: _Announced) -> Iterator[str]:
    """One neighbour per line (what `show lldp table` lists), as JSON."""
    f = facts.fabric
    sw = facts.switch(device)
    ids = f.links.ids()
    speaks = {m: "true" if model.kind == "switch" else "false" for m, model in f.models.items()}
    own_ids = announced(sw.device.model)
    lines = []
    for i in sw.interfaces:
        peer = f.devices[i.peer]
        alias = _key(own_ids[i.port]) if sw.ports is not None and sw.ports.ports[i.port] is not None else "null"
        lines.append(
            f'    {{"port": {_key(i.name)}, "alias": {alias}, "neighbor": {_key(i.peer_name)}, '
            f'"neighbor_port": {_key(i.peer_port_name)}, "neighbor_port_id": {_key(announced(peer.model)[i.peer_port])}, '
            f'"neighbor_speaks_lldp": {speaks[peer.model]}, "cable": {_key(ids[i.link])}, "network": {_key(i.network)}}}'
        )
    yield f'{{\n  "device": {_key(sw.device.name)},\n  "model": {_key(sw.device.model)},\n  "neighbors": [\n'
    yield ",\n".join(lines)
    yield "\n  ]\n}\n"


@RENDERERS.register("lldp")
def render_lldp(ctx: RenderContext) -> dict[str, bytes | Stream]:
    facts = facts_for(ctx)
    announced = _Announced(facts)
    return {
        f"lldp/{ctx.fabric.devices[d].name}.json": Stream(lambda d=d: _expected(facts, d, announced))
        for d in facts.switches("ethernet")
    }
