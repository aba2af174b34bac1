"""Expected LLDP neighbours of every Ethernet switch: ``lldp/<network>.jsonl``, one JSON object
per line and switch (``{"device", "model", "neighbors"}``), the switches of one network (a fabric,
or the management network) in one file: a 131,072-GPU design has 10^4 switches, and a file each
cost more to create and remove than to write.

One neighbour per cabled port: the local port (name and SONiC alias), the neighbour's system name and
the port ID it should announce (a SONiC neighbour announces its port alias, e.g. ``etp1a``; other
devices their port name), the cable's ID and network, and whether the neighbour is expected to
speak LLDP at all (switches do; BMCs and hosts only when they run an agent). What
``show lldp table`` on the switch should print (one neighbour per line), and what ``snc verify``
checks a discovered table against.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial

from ..facts.sonic_ports import sonic_ports
from ..facts.switch_facts import SERIAL_ROLES, FabricFacts, facts_for
from .base import RENDERERS, RenderContext, Stream

_key = json.encoder.encode_basestring_ascii


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


def _expected(facts: FabricFacts, device: int, announced: _Announced) -> str:
    """One switch's line: its name, model and neighbours (one per cabled port, what `show lldp
    table` lists), as one JSON object."""
    f = facts.fabric
    sw = facts.switch(device)
    ids = f.links.ids()
    speaks = {m: "true" if model.kind == "switch" else "false" for m, model in f.models.items()}
    own_ids = announced(sw.device.model)
    mapped = sw.ports.ports if sw.ports is not None else None
    neighbours = []
    for i in sw.interfaces:
        if i.role in SERIAL_ROLES:
            continue  # a serial console cable carries no LLDP
        peer_model = f.devices[i.peer].model
        alias = _key(own_ids[i.port]) if mapped is not None and mapped[i.port] is not None else "null"
        neighbours.append(
            f'{{"port": {_key(i.name)}, "alias": {alias}, "neighbor": {_key(i.peer_name)}, '
            f'"neighbor_port": {_key(i.peer_port_name)}, "neighbor_port_id": {_key(announced(peer_model)[i.peer_port])}, '
            f'"neighbor_speaks_lldp": {speaks[peer_model]}, "cable": {_key(ids[i.link])}, "network": {_key(i.network)}}}'
        )
    return (
        f'{{"device": {_key(sw.device.name)}, "model": {_key(sw.device.model)}, "neighbors": [' + ", ".join(neighbours) + "]}\n"
    )


def _lines(facts: FabricFacts, devices: list[int], announced: _Announced) -> Iterator[str]:
    out: list[str] = []
    for d in devices:
        out.append(_expected(facts, d, announced))
        if len(out) >= 64:
            yield "".join(out)
            out = []
    yield "".join(out)


@RENDERERS.register("lldp")
def render_lldp(ctx: RenderContext) -> dict[str, bytes | Stream]:
    """``lldp/<network>.jsonl``: a line per Ethernet switch of the network, in Fabric order."""
    facts = facts_for(ctx)
    announced = _Announced(facts)
    by_network: dict[str, list[int]] = {}
    for d in facts.switches("ethernet"):
        by_network.setdefault(ctx.fabric.devices[d].group, []).append(d)
    return {
        f"lldp/{network}.jsonl": Stream(partial(_lines, facts, devices, announced)) for network, devices in by_network.items()
    }
