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
  take a longer, deadlock-free detour. Nue routes every destination LID inside the complete
  channel-dependency graph, so its work grows as destinations x channel dependencies, and faster
  than linearly in that product (docs/performance.md: 8 s at 9.4e7, 62 s at 3.4e8, more than half
  an hour at the 3.0e9 of a 288-router, 4,608-HCA Dragonfly); OpenSM recomputes it on every heavy
  sweep (a link going down). Above ``NUE_WORK_LIMIT`` the plan therefore takes updn from ONE root
  router instead: ranks are distances from that router (ties broken by GUID), which orders every
  link, and no route turns down and then up again, so the routes form no cycle on one VL
  (up*/down* on a spanning tree, Schroeder et al., "Autonet", IEEE JSAC 1991), and every pair has
  a route (up to the root, down its tree). With every router as a root instead, OpenSM's updn
  counts root-to-root links as up in both directions, and its routes keep cycles (measured on ibsim).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.blueprint import Blueprint, built_fabrics
from ..model.clos import FatTree
from ..model.dragonfly import Dragonfly, DragonflyPlus

# The SL NCCL puts every queue pair on unless NCCL_IB_SL says otherwise (NCCL environment variables
# page: "NCCL_IB_SL ... Default 0"); static for the job, not taken from the SA path record.
NCCL_DEFAULT_SL = 0

DEFAULT_ENGINE = {"fat-tree": "ftree", "dragonfly": "nue", "dragonfly-plus": "updn"}
FALLBACK_ENGINE = "minhop"
# Engines that route with one LID per port only: opensm(8), "LMC > 0 is not supported by fat-tree
# routing. If this is specified, the default routing algorithm is invoked instead."
NO_LMC_ENGINES = frozenset({"ftree"})
# A Dragonfly's engine beyond this much nue work (destination LIDs x channel dependencies, see
# nue_work): updn from one root router. At 9.4e7 OpenSM 3.3.23's nue computed its routes in 8 s on
# a 2-core machine, at 3.4e8 in 62 s (docs/performance.md, "Subnet manager routing"): a rerouting
# time a fabric can wait out after a link failure, and a slow test can afford, up to about here.
NUE_WORK_LIMIT = 100_000_000

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


# Unicast LIDs a subnet can assign: 0x0001-0xBFFF (IBTA InfiniBand Architecture Specification vol. 1,
# sec. 4.1.3: 0xC000-0xFFFE are multicast, 0xFFFF the permissive LID).
UNICAST_LIDS = 0xBFFF

# The acceptance window's engine (opensm-window.conf, snc routed-tests): dfsssp balances each
# destination's routes over every port of a parallel bundle where ftree gives a spine one port per
# destination LID, so on OpenSM 3.3 (ibsim) its routes load every switch-link direction of the
# shipped fat trees (small-ib with lmc 1; docs/acceptance.md).
WINDOW_ENGINE = "dfsssp"


def lids_needed(switches: int, hca_ports: int, lmc: int) -> int:
    """The unicast LIDs a subnet takes: one per switch (its port 0, at base LMC), 2^lmc per HCA port."""
    return switches + (hca_ports << lmc)


def window_lmc(switches: int, hca_ports: int) -> int:
    """The window's LMC: 1 (two paths per HCA port, twice the destinations to spread over a
    bundle) where the LIDs fit the unicast range, else 0."""
    return 1 if lids_needed(switches, hca_ports, 1) <= UNICAST_LIDS else 0


@dataclass(frozen=True)
class RoutingPlan:
    fabric: str
    kind: str
    engine: str
    pinned: bool  # the blueprint named the engine (routing_engine)
    severity: str  # "ok" (deadlock-free on the one VL NCCL uses), "warning" or "error"
    why: str  # why it is or is not deadlock-free for a static SL
    options: dict[str, str] = field(default_factory=dict)  # more opensm.conf keys the engine needs
    # "top": the top tier (a fat tree's roots, a Dragonfly+'s spines); "one": the first router (a
    # Dragonfly's up*/down* from one root); "": the engine takes no roots
    roots: str = ""
    lmc: int = 0  # the blueprint's subnet_manager.lmc: 2^lmc LIDs per HCA port
    # (name, sm_priority) of every machine the blueprint says runs OpenSM, highest priority first
    managers: tuple[tuple[str, int], ...] = ()

    @property
    def uses_roots(self) -> bool:
        return self.roots != ""

    @property
    def how(self) -> str:
        return HOW.get(self.engine, self.engine)


def _sci(n: float) -> str:
    """3048523776 -> '3.0e9', 1e8 -> '1.0e8'."""
    mantissa, exponent = f"{n:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def nue_work(facts: Mapping[str, Any]) -> int | None:
    """Nue's routing work on a Dragonfly (``facts`` of the fabric): destination LIDs (HCA ports and
    routers) x channel dependencies (each directed router-to-router link feeds every other link out
    of the router it enters). None for other kinds (their defaults are not nue)."""
    if facts.get("kind") != "dragonfly" or not facts.get("routers"):
        return None
    routers = int(facts["routers"])
    channels = 2 * (int(facts.get("local_links", 0)) + int(facts.get("global_links", 0)))
    dependencies = channels * max(0, channels // routers - 1)
    return (int(facts.get("endpoint_ports", 0)) + routers) * dependencies


def _verdict(engine: str, kind: str, work: int | None) -> tuple[str, str]:
    """(severity, why) of ``engine`` on a ``kind`` fabric whose collective traffic has one static SL."""
    if engine == "nue":
        if work is not None and work > NUE_WORK_LIMIT:
            return "warning", (
                f"Nue routes within one VL without a cycle on any topology, but its work here (destinations x channel "
                f"dependencies, {_sci(work)}) is above {_sci(NUE_WORK_LIMIT)}: OpenSM takes many minutes to compute "
                "the routes, again after every link failure"
            )
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
        why = (
            "up*/down* from one root router: ranks by distance from it order every link, no route turns down and then "
            "up, so no cycle on one VL, and every pair has a route through the root's tree"
        )
        if work is not None and work > NUE_WORK_LIMIT:
            why += (
                f"; taken over nue because nue's work here (destinations x channel dependencies, {_sci(work)}) is above "
                f"{_sci(NUE_WORK_LIMIT)}, past which OpenSM computes nue's routes for minutes, again after every link failure"
            )
        return "ok", why
    return "error", f"{engine} routes a Dragonfly's shortest paths, local-global-local, which form a cycle on one VL"


def default_engine(facts: Mapping[str, Any]) -> str:
    """The engine the plan picks for a fabric with these facts when the blueprint names none."""
    engine = DEFAULT_ENGINE.get(facts["kind"], FALLBACK_ENGINE)
    work = nue_work(facts)
    if engine == "nue" and work is not None and work > NUE_WORK_LIMIT:
        return "updn"
    return engine


def routing_plan(blueprint: Blueprint, name: str, facts: Mapping[str, Any]) -> RoutingPlan:
    """The routing engine of InfiniBand fabric ``name`` (``facts``: its Fabric facts): the blueprint's
    ``routing_engine`` or the topology's default (for a Dragonfly, by size: nue_work), with its
    verdict for one static SL."""
    kind = facts["kind"]
    requested = None
    lmc = 0
    managers: tuple[tuple[str, int], ...] = ()
    for _, spec, built in built_fabrics(blueprint):
        if built == name and isinstance(spec, FatTree | Dragonfly | DragonflyPlus):
            requested = spec.routing_engine
            if spec.subnet_manager is not None:
                lmc = spec.subnet_manager.lmc
                managers = tuple((i.name, i.priority) for i in sorted(spec.subnet_manager.instances, key=lambda i: -i.priority))
    work = nue_work(facts)
    engine = requested or default_engine(facts)
    severity, why = _verdict(engine, kind, work)
    options = {"nue_max_num_vls": "1"} if engine == "nue" else {}
    roots = "one" if (engine, kind) == ("updn", "dragonfly") else "top" if engine in ("ftree", "updn") else ""
    return RoutingPlan(name, kind, engine, requested is not None, severity, why, options, roots, lmc, managers)
