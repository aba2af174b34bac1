"""Expected LLDP neighbours of every Ethernet switch: ``lldp/<switch>.json``.

One entry per cabled port: the local port (name and SONiC alias), the neighbour's system name and
the port ID it should announce (a SONiC neighbour announces its port alias, e.g. ``etp1a``; other
devices their port name), the cable's ID and label, and whether the neighbour is expected to
speak LLDP at all (switches do; BMCs and hosts only when they run an agent). What
``show lldp table`` on the switch should print, and what ``snc verify`` compares it with.
"""

from __future__ import annotations

import json

from ..cable_naming import cable_id_format
from ..device_facts import FabricFacts, facts_for
from ..sonic_ports import sonic_ports
from . import RENDERERS, RenderContext, Stream


def _expected(facts: FabricFacts, device: int, label_format: str) -> bytes:
    f = facts.fabric
    sw = facts.switch(device)
    label = cable_id_format(label_format)
    t = f.links
    neighbours = []
    for i in sw.interfaces:
        peer = f.devices[i.peer]
        peer_model = f.models[peer.model]
        peer_map = facts.catalogue.port_maps.get(peer.model)
        announced = i.peer_port_name
        if peer_map is not None:
            sp = sonic_ports(peer_model, peer_map).ports[i.peer_port]
            announced = sp.alias if sp is not None else announced
        own = sw.ports.ports[i.port] if sw.ports is not None else None
        a, b = (t.a[i.link], t.a_port[i.link]), (t.b[i.link], t.b_port[i.link])
        names = (f.devices[a[0]].name, f.port_name(*a), f.devices[b[0]].name, f.port_name(*b))
        neighbours.append(
            {
                "port": i.name,
                "alias": own.alias if own is not None else None,
                "neighbor": i.peer_name,
                "neighbor_port": i.peer_port_name,
                "neighbor_port_id": announced,
                "neighbor_speaks_lldp": peer_model.kind == "switch",
                "cable": t.id_of(i.link),
                "label": label(i.network, *names),
                "network": i.network,
            }
        )
    doc = {"device": sw.device.name, "model": sw.device.model, "neighbors": neighbours}
    return (json.dumps(doc, indent=2) + "\n").encode()


@RENDERERS.register("lldp")
def render_lldp(ctx: RenderContext) -> dict[str, bytes | Stream]:
    facts = facts_for(ctx)
    label = ctx.blueprint.naming.cable_label
    return {
        f"lldp/{ctx.fabric.devices[d].name}.json": Stream(lambda d=d: iter([_expected(facts, d, label)]))
        for d in facts.switches("ethernet")
    }
