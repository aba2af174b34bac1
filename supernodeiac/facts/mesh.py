"""Switchless scale-up meshes as facts: per host model whose accelerators are wired point to point
on the board (``internal_mesh`` in catalog/data/devices.yaml: AMD xGMI, Huawei HCCS, Intel Gaudi's
in-node RoCE ports), the pairs, the board links and the bandwidth per pair and per accelerator,
and the hosts of that model, computed once from the Fabric.

The board's links are traces, not cables: the Fabric holds no link for them, so cabling sheets,
the BOM and labels never see them; this module is where the consumers that need them read them
(the xGMI copy stage of the acceptance plan, the ``scaleup-class`` finding, ``snc explain``).
A board of n accelerators has n(n-1)/2 pairs (``InternalMesh.pairs``), each of
``links_per_pair`` links at the accelerator's per-link rate (``link_gbps`` per direction), so a
pair carries ``links_per_pair x link_gbps / 8`` GB/s one way and an accelerator (n-1) times that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

from ..fabric import Fabric


@dataclass(frozen=True, slots=True)
class MeshBoard:
    """One host model's switchless mesh, as the catalogue gives it."""

    model: str  # the host model (devices.yaml)
    accelerator: str  # the accelerator model (MI300X, Ascend910B, Gaudi3)
    accelerators: int  # n, per board
    links_per_pair: int
    link_gbytes: float  # one link, one direction: link_gbps / 8
    pairs: int  # n(n-1)/2
    links: int  # pairs x links_per_pair: the board's point-to-point links

    @property
    def pair_gbytes(self) -> float:
        """What one pair's links carry one way (GB/s)."""
        return self.links_per_pair * self.link_gbytes

    @property
    def accelerator_gbytes(self) -> float:
        """One accelerator's links to all its peers, one way (GB/s)."""
        return (self.accelerators - 1) * self.pair_gbytes

    @property
    def accelerator_bidir_gbytes(self) -> float:
        """The same both ways, as vendors quote it (GB/s)."""
        return 2 * self.accelerator_gbytes

    def pair_list(self) -> list[tuple[int, int]]:
        """The board's accelerator pairs (a, b), a < b, in order."""
        return list(combinations(range(self.accelerators), 2))


@dataclass(frozen=True, slots=True)
class MeshFacts:
    boards: dict[str, MeshBoard] = field(default_factory=dict)  # host model -> its mesh
    hosts: dict[str, list[int]] = field(default_factory=dict)  # host model -> its devices, in index order

    @property
    def host_count(self) -> int:
        return sum(len(hs) for hs in self.hosts.values())

    @property
    def pairs(self) -> int:
        """Accelerator pairs over every mesh host of the Fabric."""
        return sum(self.boards[m].pairs * len(hs) for m, hs in self.hosts.items())

    @property
    def links(self) -> int:
        """Board links over every mesh host of the Fabric (none of them a cable)."""
        return sum(self.boards[m].links * len(hs) for m, hs in self.hosts.items())

    def board_of(self, f: Fabric, device: int) -> MeshBoard | None:
        return self.boards.get(f.devices[device].model)


def mesh_boards(f: Fabric) -> dict[str, MeshBoard]:
    """The mesh of each host model in the Fabric that has one, by model name (sorted)."""
    out: dict[str, MeshBoard] = {}
    for name in f.device_arrays().models:
        m = f.models[name]
        acc, mesh = m.accelerators, m.internal_mesh
        if acc is None or mesh is None:
            continue
        out[name] = MeshBoard(
            name,
            acc.model,
            acc.count,
            mesh.links_per_pair,
            acc.link_gbps / 8,
            mesh.pairs(acc.count),
            mesh.links(acc.count),
        )
    return out


_LAST: list[tuple[Fabric, int, MeshFacts]] = []


def mesh_facts(f: Fabric) -> MeshFacts:
    """The Fabric's mesh boards and their hosts; cached for the Fabric while its device count holds."""
    for fabric, n, facts in _LAST:
        if fabric is f and n == len(f.devices):
            return facts
    boards = mesh_boards(f)
    hosts: dict[str, list[int]] = {m: [] for m in boards}
    if boards:  # none in most designs: no walk of 10^6 devices
        for i, d in enumerate(f.devices):
            if d.model in hosts:
                hosts[d.model].append(i)
    facts = MeshFacts(boards, {m: hs for m, hs in hosts.items() if hs})
    _LAST[:] = [(f, len(f.devices), facts)]
    return facts
