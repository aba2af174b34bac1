"""Expected LLDP neighbours: one JSON line per Ethernet switch in its network's file, every cabled
port once, the far end and the port ID it announces (a SONiC switch its alias) as the Fabric has it."""

from __future__ import annotations

import json
from functools import cache

import pytest
from conftest import BLUEPRINTS

from supernodeiac.fabric import SITE_ROLES
from supernodeiac.facts.sonic_ports import sonic_ports
from supernodeiac.facts.switch_facts import SERIAL_ROLES
from supernodeiac.pipeline import compile_file, render


@cache
def _compiled(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    return c


@pytest.mark.parametrize("name", ["roce-rail-2tier", "small-ib"])
def test_one_line_per_switch_with_every_cabled_port(name):
    c = _compiled(name)
    f = c.fabric
    files, _ = render(c, ["lldp"])
    lines = {}
    for path, data in files.items():
        network = path.removeprefix("lldp/").removesuffix(".jsonl")
        for line in data.decode().splitlines():
            doc = json.loads(line)
            assert f.device(doc["device"]).group == network
            lines[doc["device"]] = doc
    # Every Ethernet switch of ours: the site's routers (management.border) are the site's to run.
    ours = [d for d in f.devices if d.role not in SITE_ROLES]
    switches = {d.name for d in ours if f.models[d.model].kind == "switch" and f.models[d.model].transport == "ethernet"}
    assert set(lines) == switches
    t = f.links
    ids = t.ids()
    ends = {}
    for i in range(len(t)):
        ends[(t.a[i], t.a_port[i])] = (t.b[i], t.b_port[i], ids[i])
        ends[(t.b[i], t.b_port[i])] = (t.a[i], t.a_port[i], ids[i])
    for device, doc in lines.items():
        d = f.device(device).index
        layout = f.layouts[f.devices[d].model]
        # Every cabled Ethernet port (a serial console cable carries no LLDP).
        cabled = sorted(p for (dev, p) in ends if dev == d and layout.port_roles[p] not in SERIAL_ROLES)
        assert [n["port"] for n in doc["neighbors"]] == [layout.names[p] for p in cabled]
        for n, p in zip(doc["neighbors"], cabled, strict=True):
            peer, peer_port, cable = ends[(d, p)]
            peer_dev = f.devices[peer]
            assert (n["neighbor"], n["cable"]) == (peer_dev.name, cable)
            assert n["neighbor_port"] == f.layouts[peer_dev.model].names[peer_port]
            port_map = c.catalogue.port_maps.get(peer_dev.model)
            sp = sonic_ports(f.layouts[peer_dev.model], port_map).ports[peer_port] if port_map is not None else None
            # A SONiC switch announces a front-panel port by its alias (etp1a), as show lldp prints it;
            # other ports (eth0) and other devices by name.
            assert n["neighbor_port_id"] == (sp.alias if sp is not None else n["neighbor_port"])
            assert n["neighbor_speaks_lldp"] == (f.models[peer_dev.model].kind == "switch")
