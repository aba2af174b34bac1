"""Which routing engine the subnet manager of an InfiniBand fabric runs, and whether its routes stay
free of credit loops for the traffic a GPU cluster actually sends (read by the opensm output and
the routing check).

A credit loop needs a cycle in the channel-dependency graph of the routes on one virtual lane
(Dally and Seitz). Engines that break cycles by spreading paths over VLs (dfsssp, lash) hand each
source/destination pair its VL as the service level of the SA path record; that only works for
traffic whose queue pairs take their SL from the path record. NCCL does not: it sets every queue
pair's address vector to one static SL (``NCCL_IB_SL``, default 0, in its IB transport; it never
queries the SA), so all its traffic rides one VL whatever the engine computed. The plan therefore
picks, per topology, an engine that is deadlock-free on a single VL:

* fat tree: ftree (up/down by rank, credit-loop free by construction);
* Dragonfly+: updn with the spines as roots: every minimal route is leaf-up, at most one global
  hop, spine-down (one global link joins each group pair), so up*/down* keeps them all minimal;
* Dragonfly: nue with ``nue_max_num_vls 1`` ("100%-applicable and deadlock-free ... for any number
  of virtual lanes (this includes the absence of VLs)", opensm(8)). Minimal routes local, global,
  local close cycles on one VL (Kim et al., ISCA 2008, use two VLs for that reason), so some pairs
  take a longer, deadlock-free detour. updn has no roots to rank here (every router is one tier;
  with all routers as roots OpenSM's up/down still leaves cycles, measured on ibsim).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.blueprint import Blueprint, built_fabrics
from ..model.clos import FatTree
from ..model.dragonfly import Dragonfly, DragonflyPlus

# The SL NCCL puts every queue pair on unless NCCL_IB_SL says otherwise (NCCL environment variables
# page: "NCCL_IB_SL ... Default 0"); static for the job, not taken from the SA path record.
NCCL_DEFAULT_SL = 0

DEFAULT_ENGINE = {"fat-tree": "ftree", "dragonfly": "nue", "dragonfly-plus": "updn"}
FALLBACK_ENGINE = "minhop"

# What each engine guarantees, in the words of opensm(8) and the routing literature.
HOW = {
    "ftree": "fat-tree routing: up/down by rank, credit-loop free and balanced for shift patterns",
    "updn": "up*/down* from the root switches: no route turns down and then up, so no cycle on one VL",
    "nue": "Nue: deadlock-free within the VLs it is given, here one (nue_max_num_vls 1), on any topology",
    "minhop": "minimum hop: shortest paths, no deadlock avoidance of its own",
    "lash": "LASH: shortest paths layered over VLs, handed out as the path record's SL",
    "dfsssp": "deadlock-free SSSP: balanced paths, cycles broken with VLs handed out as the path record's SL",
    "sssp": "SSSP: balanced paths over the whole fabric, no deadlock avoidance",
}


@dataclass(frozen=True)
class RoutingPlan:
    fabric: str
    kind: str
    engine: str
    pinned: bool  # the blueprint named the engine (routing_engine)
    severity: str  # "ok" (deadlock-free on the one VL NCCL uses), "warning" or "error"
    why: str  # why it is or is not deadlock-free for a static SL
    options: dict[str, str] = field(default_factory=dict)  # more opensm.conf keys the engine needs

    @property
    def uses_roots(self) -> bool:
        return self.engine in ("ftree", "updn")

    @property
    def how(self) -> str:
        return HOW.get(self.engine, self.engine)


def _verdict(engine: str, kind: str) -> tuple[str, str]:
    """(severity, why) of ``engine`` on a ``kind`` fabric whose collective traffic has one static SL."""
    if engine == "nue":
        return "ok", "Nue routes within one VL without a cycle on any topology"
    if kind == "fat-tree":
        if engine in ("ftree", "updn"):
            return "ok", "routes go up to the top tier and down, never down and up again: no cycle on one VL"
        if engine in ("minhop", "lash"):
            return "ok", "shortest paths on a fat tree go up and then down: no cycle on one VL"
        return "warning", (
            f"{engine} balances paths by link load, not only by length, and may leave the up/down ones; "
            "deadlock-free for one static SL only where OpenSM logs 'Virtual Lanes needed: 1'"
        )
    if engine == "ftree":
        return "error", (
            f"OpenSM's ftree refuses a {kind} (ERR AB2B: more than one root) and falls back to minhop, "
            "whose shortest paths close cycles on one VL"
        )
    if kind == "dragonfly-plus":
        if engine == "updn":
            return "ok", "with the spines as roots every minimal route is leaf-up, one global hop, spine-down: no cycle on one VL"
        if engine in ("minhop", "lash"):
            return "ok", "one global link joins each group pair, so every shortest path is leaf-up, global, spine-down"
        return "warning", (
            f"{engine} balances paths by link load and may route through a third group, down and up again; "
            "deadlock-free for one static SL only where OpenSM logs 'Virtual Lanes needed: 1'"
        )
    # A Dragonfly: one tier of routers joined all to all inside a group and across groups.
    if engine in ("dfsssp", "lash"):
        return "error", (
            f"{engine} keeps a Dragonfly deadlock-free only by putting paths on several VLs through the path record's "
            "SL, but NCCL puts every queue pair on one static SL (NCCL_IB_SL): on that one VL the minimal routes "
            "local-global-local form a cycle (a credit loop)"
        )
    if engine == "updn":
        return "error", "every router of a Dragonfly is one tier: up/down has no ranks to order, its routes keep cycles on one VL"
    return "error", f"{engine} routes a Dragonfly's shortest paths, local-global-local, which form a cycle on one VL"


def routing_plan(blueprint: Blueprint, name: str, kind: str) -> RoutingPlan:
    """The routing engine of InfiniBand fabric ``name`` (a ``kind`` fabric): the blueprint's
    ``routing_engine`` or the topology's default, with its verdict for one static SL."""
    requested = None
    for _, spec, built in built_fabrics(blueprint):
        if built == name and isinstance(spec, FatTree | Dragonfly | DragonflyPlus):
            requested = spec.routing_engine
    engine = requested or DEFAULT_ENGINE.get(kind, FALLBACK_ENGINE)
    severity, why = _verdict(engine, kind)
    options = {"nue_max_num_vls": "1"} if engine == "nue" else {}
    return RoutingPlan(name, kind, engine, requested is not None, severity, why, options)
