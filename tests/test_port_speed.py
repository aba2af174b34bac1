"""port-speed: a link runs at its slower end's rate, so a 200GE NIC on a 400G leaf port leaves half
of the port idle; snc says so per link shape, with the count from the design."""

from __future__ import annotations

from pathlib import Path

from conftest import compile_text

MESH = (Path(__file__).parent / "data" / "ascend-hccs-mesh.yaml").read_text()


def test_npus_on_a_400g_leaf_are_a_located_warning_with_their_count():
    # The NPU fabric's leaves as the 400G variant: 16 Atlas 800T A2 x 8 x 200GE ports, each on a 400G port.
    text = MESH.replace("    switch: sn5600-128x200g", "    switch: sn5600-128x400g", 1)
    assert text != MESH
    c = compile_text(text)
    (f,) = [f for f in c.findings if f.rule == "port-speed"]
    hosts = sum(1 for d in c.fabric.devices if d.model == "atlas-800t-a2")
    ports = len(c.fabric.layouts["atlas-800t-a2"].ports_of("data"))
    assert f.severity.value == "warning" and hosts == 16
    head = f"npu-roce: {hosts * ports} node-leaf link(s) run at 200 Gb/s on sn5600-128x400g's 400 Gb/s ports"
    assert f.message.startswith(head)
    assert "50% of each of those ports is idle" in f.message
    assert f.location.line == next(n for n, row in enumerate(text.splitlines(), 1) if row == "  - name: npu-roce")
    # Each named cable is one of those links, and it really runs below the leaf port's speed.
    cable = f.message.rsplit("e.g. ", 1)[1]
    t = c.fabric.links
    (i,) = [i for i in range(len(t)) if t.id_of(i) == cable]
    leaf = t.b[i] if c.fabric.devices[t.b[i]].model == "sn5600-128x400g" else t.a[i]
    port = t.b_port[i] if leaf == t.b[i] else t.a_port[i]
    assert c.fabric.layouts["sn5600-128x400g"].group(port).speed_gbps == 400
    assert t.specs[t.spec[i]].gbps == 200


def test_matched_speeds_are_silent():
    c = compile_text(MESH)
    assert not [f for f in c.findings if f.rule == "port-speed"]
