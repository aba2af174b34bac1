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

from ..facts.sonic_ports import SonicPort, sonic_ports
from ..facts.switch_facts import SERIAL_ROLES, FabricFacts, facts_for
from .base import RENDERERS, RenderContext, Stream

_key = json.encoder.encode_basestring_ascii


class _Announced:
    """Per model, once: the port ID each port announces over LLDP (SONiC: the alias; else the port
    name) and the ports' names, as JSON strings; per device its name as one; per model whether it
    speaks LLDP. A neighbour's text is then three per-model or per-device fragments and the cable's
    ID: its own port's head (``{"port": .., "alias": .., "neighbor": ``) by the switch's model, the
    far end's name, the far port's middle (``, "neighbor_port": .., "neighbor_port_id": ..,
    "neighbor_speaks_lldp": .., "cable": ``) by the far end's model."""

    def __init__(self, facts: FabricFacts) -> None:
        self.facts = facts
        f = facts.fabric
        self._by_model: dict[str, list[str]] = {}
        self._heads: dict[str, list[str | None]] = {}
        self._middles: dict[str, list[str]] = {}
        self.device_keys = [_key(d.name) for d in f.devices]
        self.device_models = [d.model for d in f.devices]
        self.peer_middles: list[list[str] | None] = [None] * len(f.devices)  # by device: its model's middles
        self.speaks = {m: "true" if model.kind == "switch" else "false" for m, model in f.models.items()}
        self.networks: dict[str, str] = {}  # network name -> its JSON string

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

    def heads(self, model: str, mapped: list[SonicPort | None] | None) -> list[str | None]:
        """A switch model's ports as a neighbour's opening: its name and, where the SONiC port map
        has the port, its alias (else null); None for a serial console port (its cable carries no LLDP)."""
        found = self._heads.get(model)
        if found is None:
            ids = self(model)
            layout = self.facts.fabric.layouts[model]
            aliases = [_key(ids[p]) if mapped is not None and mapped[p] is not None else "null" for p in range(len(ids))]
            found = self._heads[model] = [
                None if role in SERIAL_ROLES else f'{{"port": {_key(name)}, "alias": {aliases[p]}, "neighbor": '
                for p, (name, role) in enumerate(zip(layout.names, layout.port_roles, strict=True))
            ]
        return found

    def middles(self, model: str) -> list[str]:
        """A far end model's ports as the neighbour's middle: the port's name, the ID it announces,
        whether the model speaks LLDP, up to the cable's ID."""
        found = self._middles.get(model)
        if found is None:
            ids, speaks = self(model), self.speaks[model]
            found = self._middles[model] = [
                f', "neighbor_port": {_key(name)}, "neighbor_port_id": {_key(ids[p])}, '
                f'"neighbor_speaks_lldp": {speaks}, "cable": '
                for p, name in enumerate(self.facts.fabric.layouts[model].names)
            ]
        return found


def _expected(facts: FabricFacts, device: int, announced: _Announced) -> str:
    """One switch's line: its name, model and neighbours (one per cabled port, what `show lldp
    table` lists), as one JSON object."""
    f = facts.fabric
    sw = facts.switch(device)
    ids = f.links.ids()
    device_keys, peer_middles = announced.device_keys, announced.peer_middles
    heads = announced.heads(sw.device.model, sw.ports.ports if sw.ports is not None else None)
    networks = announced.networks
    neighbours = []
    for i in sw.interfaces:
        head = heads[i.port]
        if head is None:
            continue  # a serial console cable carries no LLDP
        peer = i.peer
        middle = peer_middles[peer]
        if middle is None:
            middle = peer_middles[peer] = announced.middles(announced.device_models[peer])
        network = networks.get(i.network)
        if network is None:
            network = networks[i.network] = _key(i.network)
        neighbours.append(f'{head}{device_keys[peer]}{middle[i.peer_port]}{_key(ids[i.link])}, "network": {network}}}')
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
