"""SONiC config_db.json for every Ethernet switch: ``sonic/<switch>.json`` (copied to the switch's
``/etc/sonic/config_db.json``; one file per switch in one folder, not a folder per switch: at 10^4
switches each folder costs more to make and remove than its file to write).

RoCE leaves, spines and cores, management rack switches and aggregation switches. The tables
and their values are built in ``sonic_config``; this module only picks the switches, streams one
file per switch (a 131,072-GPU RoCE design has thousands of them) and says which it could not
render (a model without a SONiC port map).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from functools import partial

from ..facts.sonic_ports import sonic_switches
from ..facts.switch_facts import FabricFacts, facts_for
from .base import RENDERERS, RenderContext, Stream
from .sonic_config import Config, config_db, dumps, encoded_table
from .sonic_services import secrets_plan, service_tables


def _produce(facts: FabricFacts, device: int, services: tuple[Config, Config] | None = None) -> Iterator[str]:
    sw = facts.switch(device)
    if sw.lossless is None:
        cfg = config_db(sw)
    else:
        metres = facts.cable_lengths_m()
        cfg = config_db(sw, [metres[i.link] for i in sw.interfaces])
    if services is not None:
        # The services' tables (shared dicts, sonic_services.py): in the mgmt VRF where eth0 has the address.
        cfg = dict(sorted({**cfg, **services[bool(sw.mgmt_address) and not sw.mgmt_inband]}.items()))
    return dumps(cfg)


@RENDERERS.register("sonic")
def render_sonic(ctx: RenderContext) -> dict[str, bytes | Stream]:
    facts = facts_for(ctx)
    out: dict[str, bytes | Stream] = {}
    unmapped: Counter[str] = Counter()
    spec = ctx.blueprint.services
    services: tuple[Config, Config] | None = None
    if spec is not None:
        # Each variant's tables encoded once for every switch that carries them.
        plain, vrf = (service_tables(spec, False), service_tables(spec, spec.mgmt_vrf))
        services = ({k: encoded_table(t) for k, t in plain.items()}, {k: encoded_table(t) for k, t in vrf.items()})
    if spec is not None:
        out["services/secrets.json"] = (json.dumps(secrets_plan(spec), indent=2, sort_keys=True) + "\n").encode()
    mapped = set(sonic_switches(ctx.fabric, ctx.catalogue))
    for device in facts.switches("ethernet"):
        dev = ctx.fabric.devices[device]
        if device not in mapped:
            unmapped[dev.model] += 1
            continue
        out[f"sonic/{dev.name}.json"] = Stream(partial(_produce, facts, device, services))
    for model, count in sorted(unmapped.items()):
        out[f"notice:sonic:{model}"] = (
            f"sonic: no SONiC port map for {model} ({count} switches): their config_db.json is not rendered; "
            f"add one under 'catalogue: port_maps: {model}:'"
        ).encode()
    return out
