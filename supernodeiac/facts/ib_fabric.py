"""One InfiniBand fabric as the subnet manager and the diagnostic tools see it: nodes with GUIDs,
node descriptions, IB port numbers, links with width and speed.

Conventions (shared by the OpenSM renderer and ``snc verify``):

* a switch is one IB node; its IB port numbers are its data ports in catalogue order, from 1
  (a QM9700's 64 ports on 32 twin-port OSFP cages: port 2c-1 and 2c are cage c's);
* every data port of an endpoint (an HGX node's mlx5_0..mlx5_7, a compute board's NICs) is its
  own single-port HCA, as on real HGX/DGX systems where each ConnectX is a separate adapter;
* node descriptions: a switch's is its name; an HCA's is "<device> <port name>" (what Linux sets:
  "<hostname> mlx5_0"). ``snc verify`` maps a discovered node back to the plan by GUID, and failing
  that by this description.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..fabric import Fabric, LinkSpec
from .guid_plan import GuidPlan

# IBTA link speeds by lane rate (Gb/s, rounded): what ibnetdiscover prints after the width.
SPEEDS = ((2.5, "SDR"), (5, "DDR"), (10, "QDR"), (14, "FDR"), (25, "EDR"), (50, "HDR"), (100, "NDR"), (200, "XDR"))


def speed_name(lane_gbps: float) -> str:
    for rate, name in SPEEDS:
        if lane_gbps <= rate * 1.05:
            return name
    return SPEEDS[-1][1]


def infiniband_fabrics(fabric: Fabric) -> list[str]:
    """Names of the scale-out fabrics built with transport infiniband, in blueprint order."""
    return [name for name, facts in fabric.facts.items() if facts.get("transport") == "infiniband" and "kind" in facts]


def node_counts(fabric: Fabric, name: str) -> tuple[int, int]:
    """(switches, HCA ports) of fabric ``name``: the IB nodes :class:`IbFabric` builds, counted in
    bulk over the link columns (a fabric of 10^6 links in a few numpy passes), without building it."""
    f = fabric
    idx = np.asarray(f.links.indices_of(name), dtype=np.int64)
    if not len(idx):
        return 0, 0
    arr, dv = f.links.arrays(), f.device_arrays()
    switch_model = np.array([f.models[m].kind == "switch" for m in dv.models], dtype=bool)
    dev = np.concatenate((arr.a[idx], arr.b[idx]))
    port = np.concatenate((arr.a_port[idx], arr.b_port[idx]))
    is_switch = switch_model[dv.model[dev]]
    width = int(dv.total.max()) + 1  # a (device, port) as one integer key
    return len(np.unique(dev[is_switch])), len(np.unique(dev[~is_switch] * width + port[~is_switch]))


@dataclass
class IbNode:
    device: int
    port: int  # -1 for a switch; the device port of an HCA
    guid: int
    is_switch: bool
    description: str
    nports: int
    # IB port number -> (peer node key, peer IB port number, link position)
    links: dict[int, tuple[tuple[int, int], int, int]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int]:
        return (self.device, self.port)

    @property
    def node_id(self) -> str:
        return f"{'S' if self.is_switch else 'H'}-{self.guid:016x}"


class IbFabric:
    """The nodes and links of one InfiniBand fabric, in Fabric order (switches, then HCAs)."""

    def __init__(self, fabric: Fabric, name: str, guids: GuidPlan | None = None) -> None:
        self.fabric = fabric
        self.name = name
        self.facts = fabric.facts[name]
        self.kind = self.facts["kind"]
        self.guids = guids or GuidPlan(fabric)
        t = fabric.links
        self.link_positions = t.indices_of(name)
        devices, models, layouts = fabric.devices, fabric.models, fabric.layouts
        data_pos: dict[str, dict[int, int]] = {}
        arr, pos = t.arrays(), np.asarray(self.link_positions, dtype=np.int64)
        ends = np.unique(np.concatenate((arr.a[pos], arr.b[pos]))).tolist()
        for model in {devices[d].model for d in ends}:
            data_pos[model] = {p: k for k, p in enumerate(layouts[model].ports_of("data"))}
        self._data_pos = data_pos
        nodes: dict[tuple[int, int], IbNode] = {}
        # Per device its model's data ports and kind, looked up once (two ends of 10^6 links at 131k).
        switch_model = {m: models[m].kind == "switch" for m in data_pos}
        ports_of = [data_pos.get(d.model) for d in devices]
        is_switch = [switch_model.get(d.model, False) for d in devices]

        def node(dev: int, port: int) -> tuple[IbNode, int, tuple[int, int]]:
            pos = ports_of[dev].get(port)  # type: ignore[union-attr]  # a device of these links: its model is there
            if pos is None:
                d = devices[dev]
                raise ValueError(f"{d.name} port {layouts[d.model].name(port)} is not a data port")
            if is_switch[dev]:
                key = (dev, -1)
                found = nodes.get(key)
                if found is None:
                    d = devices[dev]
                    g = self.guids.switch_guid(dev)
                    found = nodes[key] = IbNode(dev, -1, g, True, d.name, len(data_pos[d.model]))
                return found, pos + 1, key
            key = (dev, port)
            found = nodes.get(key)
            if found is None:
                d = devices[dev]
                g = self.guids.ca_guid(dev, pos)
                found = nodes[key] = IbNode(dev, port, g, False, f"{d.name} {layouts[d.model].name(port)}", 1)
            return found, 1, key

        a, a_port, b, b_port = t.a, t.a_port, t.b, t.b_port
        for i in self.link_positions:
            na, pa, ka = node(a[i], a_port[i])
            nb, pb, kb = node(b[i], b_port[i])
            na.links[pa] = (kb, pb, i)
            nb.links[pb] = (ka, pa, i)
        self.nodes = nodes
        self.switches = sorted((n for n in nodes.values() if n.is_switch), key=lambda n: n.device)
        self.cas = sorted((n for n in nodes.values() if not n.is_switch), key=lambda n: (n.device, n.port))

    def port_guid(self, node: IbNode) -> int:
        return self.guids.port_guid(node.guid, node.is_switch)

    def link_rate(self, position: int) -> str:
        """'4xNDR' for a link: width (lanes) x speed (lane rate)."""
        return self.spec_rate(self.fabric.links.specs[self.fabric.links.spec[position]])

    @staticmethod
    def spec_rate(spec: LinkSpec) -> str:
        """'4xNDR' for the links of one spec."""
        return f"{spec.lanes}x{speed_name(spec.lane_gbps)}"

    def top_switches(self) -> list[IbNode]:
        """The switches of the highest tier (a fat tree's roots: spines of 2 tiers, cores of 3)."""
        devices = self.fabric.devices
        top = max((devices[n.device].tier for n in self.switches), default=0)
        return [n for n in self.switches if devices[n.device].tier == top]
