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
    """Per model, once: the port ID each port announces over LLDP (SONiC: the alias; else the port
    name) and the ports' names, as JSON strings; per device its name as one; per model whether it
    speaks LLDP. A switch's line is then lookups and one f-string per neighbour."""

    def __init__(self, facts: FabricFacts) -> None:
        self.facts = facts
        f = facts.fabric
        self._by_model: dict[str, list[str]] = {}
        self._keys: dict[str, list[str]] = {}
        self._name_keys: dict[str, list[str]] = {}
        self.device_keys = [_key(d.name) for d in f.devices]
        self.speaks = {m: "true" if model.kind == "switch" else "false" for m, model in f.models.items()}

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

    def keys(self, model: str) -> list[str]:
        """The announced port IDs of a model's ports, as JSON strings."""
        found = self._keys.get(model)
        if found is None:
            found = self._keys[model] = [_key(x) for x in self(model)]
        return found

    def name_keys(self, model: str) -> list[str]:
        """A model's port names (``Interface.name``: the layout's names), as JSON strings."""
        found = self._name_keys.get(model)
        if found is None:
            found = self._name_keys[model] = [_key(x) for x in self.facts.fabric.layouts[model].names]
        return found


def _expected(facts: FabricFacts, device: int, announced: _Announced) -> str:
    """One switch's line: its name, model and neighbours (one per cabled port, what `show lldp
    table` lists), as one JSON object."""
    f = facts.fabric
    sw = facts.switch(device)
    ids = f.links.ids()
    speaks = announced.speaks
    device_keys = announced.device_keys
    devices = f.devices
    own = sw.device.model
    own_ids = announced.keys(own)
    own_names = announced.name_keys(own)
    mapped = sw.ports.ports if sw.ports is not None else None
    neighbours = []
    for i in sw.interfaces:
        if i.role in SERIAL_ROLES:
            continue  # a serial console cable carries no LLDP
        peer_model = devices[i.peer].model
        alias = own_ids[i.port] if mapped is not None and mapped[i.port] is not None else "null"
        neighbours.append(
            f'{{"port": {own_names[i.port]}, "alias": {alias}, "neighbor": {device_keys[i.peer]}, '
            f'"neighbor_port": {announced.name_keys(peer_model)[i.peer_port]}, '
            f'"neighbor_port_id": {announced.keys(peer_model)[i.peer_port]}, '
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
