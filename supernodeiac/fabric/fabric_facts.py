"""The typed shape of ``Fabric.facts``: what each builder knows that checks and reports need.

One record per fabric kind, told apart by ``kind`` (a ``Literal``), so a reader that tests
``facts["kind"] == "fat-tree"`` gets the fat-tree keys checked. They are ``TypedDict``s, so at
run time they stay the plain dicts they were: ``snc explain`` serialises them as they are and
every render is unchanged (key order included: builders write the keys in the order listed).

Kinds: ``fat-tree`` (builders/clos.py), ``dragonfly`` and ``dragonfly-plus``
(builders/dragonfly.py), ``orthogonal`` and ``switched`` (one-level scale-up) and ``two-level``
(builders/scaleup.py), ``cxl-pool`` (builders/cxl.py), ``management`` (builders/management.py,
under the name ``mgmt``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, TypeGuard

from ..model.scaleup import ONE_LEVEL

# A blueprint location, as findings carry it: ("fabrics", 0, "ethernet", "addressing").
BlueprintPath = tuple[Any, ...]

# -- fat tree -----------------------------------------------------------------------------------


class TierSizing(TypedDict):
    """One switch tier's declared down:up ratio against what was built."""

    declared: str  # the blueprint's ratio, e.g. "1:1"
    down_used: int  # down ports in use per switch at the planned shape
    uplinks: int  # uplinks cabled per switch
    sized: int  # uplinks the declared ratio needs for down_used
    explicit: bool  # the blueprint gave the uplink count (uplinks:), not the ratio alone
    speed_ratio: NotRequired[str]  # a leaf of two speeds: down port speed / up port speed ("1/2")


class GrowthReservation(TypedDict):
    """What grow_to_sus costs beyond the same design built for the SUs built only."""

    grow_to_sus: int
    built_sus: int
    spines: int  # extra spines (cores, switch links) reserved for the growth
    cores: int
    switch_links: int
    max_nodes: int
    max_nodes_built_only: int


class DesignFacts(TypedDict):
    """One candidate design (builders/clos_plan.Design.as_dict)."""

    tiers: int
    scope: str  # "built" or "planned"
    leaves: int
    spines: int
    cores: int
    switches: int
    switch_links: int
    max_nodes: int


class AddressingFacts(TypedDict):
    """The Ethernet IP plan: pools, their capacity and what the built / planned fabric needs."""

    path: BlueprintPath
    loopbacks: str  # the loopback pool (a network)
    family: int  # 4 or 6
    loopbacks_capacity: int
    loopbacks_needed: int
    loopbacks_needed_planned: int
    p2p: str  # the point-to-point pool, or "unnumbered"
    p2p_prefixlen: int | None  # /31 or /127; None when unnumbered
    p2p_capacity: int  # blocks of two addresses
    p2p_needed: int
    p2p_needed_planned: int
    hosts: str | None  # the host-link pool, when declared
    hosts_prefixlen: int | None
    hosts_capacity: int
    hosts_needed: int
    hosts_needed_planned: int
    leaf_down: int  # host-link blocks per leaf (its down-port capacity)


class BgpFacts(TypedDict):
    path: BlueprintPath
    scheme: str  # the ASN scheme, in words
    asn_first: int
    asn_last: int
    capacity: int
    needed: int
    needed_planned: int


class EcnFacts(TypedDict):
    """ECN marking on the lossless queues (model.clos.Ecn dumped)."""

    min_threshold_bytes: int
    max_threshold_bytes: int
    max_probability_pct: int


class LosslessFacts(TypedDict):
    """The RoCEv2 lossless class (model.clos.Lossless dumped), with its blueprint location."""

    path: BlueprintPath
    pfc_priorities: list[int]
    dscp_to_tc: dict[int, int]  # DSCP -> traffic class
    default_tc: int  # the class of a DSCP not in dscp_to_tc
    roce_dscp: int
    cnp_dscp: int | None  # DCQCN congestion notification packets, when declared
    ecn: EcnFacts


class EthernetFacts(TypedDict):
    addressing: AddressingFacts
    bgp: BgpFacts
    lossless: LosslessFacts | None  # None for plain Ethernet (no RoCE class)
    mtu: int  # every switch port's IP MTU (SONiC PORT mtu)
    host_mtu: int  # the hosts' fabric NICs' (netplan), at most mtu


class ClosShape(TypedDict):
    """A fat tree's sizes, parallel links and growth limits (builders/clos._facts)."""

    kind: Literal["fat-tree"]
    transport: Literal["infiniband", "ethernet"]
    tiers: int
    rail_optimized: bool
    rails: int
    nodes: int
    service_endpoints: int
    service_ports: dict[int, int]  # SU -> service ports attached in it
    su_nodes: int
    leaves_per_su: int
    built_sus: int
    planned_sus: int
    leaf_radix: int
    # Down-port capacity (the layout) and uplinks cabled per switch.
    leaf_down: int
    leaf_up: int
    leaf_down_used: int
    spine_radix: int
    spine_down: int
    spine_up: int
    spine_down_used: int
    core_radix: int
    leaves: int
    spines: int
    cores: int
    leaves_per_pod: int
    spines_per_pod: int
    pods: int  # pods built
    planned_pods: int
    cores_per_plane: int
    leaf_spine_parallel: int
    spine_core_parallel: int
    # Growth without re-cabling: what the planned spines (and cores) take.
    max_pods: int
    max_leaves: int
    max_sus: int
    max_nodes: int
    max_endpoint_ports: int
    leaf_up_ports: list[int]  # port indices of a leaf's uplinks, in order
    spine_up_ports: list[int]  # 3 tiers: a spine's uplinks; else empty
    ports_planned: dict[str, int]  # role -> data ports used at the planned size


class ClosSizing(TypedDict):
    """Declared against designed ratios per tier, the growth reservation, the candidate designs."""

    sizing: dict[str, TierSizing]  # "leaf" (and "spine" in 3 tiers)
    growth_reservation: GrowthReservation | None  # None without grow_to_sus beyond the built SUs
    designs: list[DesignFacts]


class LeafSetPods(TypedDict):
    """A leaf set's pods in a 3-tier fabric (builders/clos.py ``_share_pods``): every pod holds
    leaves of one set; the set's pods are the fabric's pods ``first`` on."""

    leaves_per_pod: int
    built: int
    planned: int
    first: int  # the fabric's pod number (0-based) of its first pod
    spine_down_used: int  # down ports a spine of the set's pods uses (leaves per pod x links per leaf)
    spine_up: int  # uplinks cabled per spine of the set's pods
    spine_core_parallel: int  # links per pod spine to each core of its plane
    core_first_port: int  # the core down-port position its first pod takes
    sized: int  # spine uplinks the declared spine ratio asks for


class LeafSetFacts(TypedDict):
    """One leaf set of a fabric with per-group leaves (model.clos.LeafSet; builders/clos.py): the
    fabric's own leaves (group None) or one endpoint group's, with their own model and shape."""

    group: str | None  # the endpoint group; None: the fabric's own leaves ('switch')
    switch: str  # the catalogue model of the set's leaves
    path: BlueprintPath  # where the model is named
    nodes: int
    rails: int
    su_nodes: int
    leaves_per_su: int
    built_sus: int
    planned_sus: int
    leaves: int  # built
    first_leaf: int  # global leaf index of its first leaf (the sets before it take the planned ones below)
    first_su: int  # the fabric's SU number (0-based) of its first SU: SUs count on across the sets
    leaf_radix: int
    leaf_down: int
    leaf_up: int
    leaf_down_used: int
    down_gbps: float
    up_gbps: float
    speed_ratio: str  # down port speed / up port speed, a fraction as text
    leaf_spine_parallel: int
    spine_first_port: int  # the spine down-port position its first leaf takes
    max_sus: int  # SUs the set reaches without re-cabling, all sets together: its planned SUs
    max_nodes: int
    leaf_down_ports: list[int]
    leaf_up_ports: list[int]
    sized: int  # uplinks the declared ratio asks for
    pods: NotRequired[LeafSetPods]  # 3 tiers only


class FatTreeFacts(ClosShape, ClosSizing):
    # Built in this key order: ClosShape's, leaf_down_ports, ceiling_nodes, ClosSizing's, ethernet.
    # With per-group leaves the top-level leaf keys are the first set's and the counts (nodes,
    # leaves, max_*) the fabric's totals; each set's shape is under leaf_sets.
    leaf_down_ports: list[int]  # position q of a leaf down port: its host-link block offset
    ceiling_nodes: int  # the most nodes the switch models allow in this many tiers
    leaf_sets: NotRequired[list[LeafSetFacts]]  # per-group leaves (FatTree.leaves) only
    ethernet: NotRequired[EthernetFacts]  # transport ethernet only


# -- Dragonfly ----------------------------------------------------------------------------------


class GlobalFacts(TypedDict):
    """The global (group-to-group) links of a Dragonfly or Dragonfly+."""

    arrangement: str
    g: int  # groups built
    planned_groups: int
    global_parallel: int  # links per group pair
    global_ports_per_group: int
    global_spare_per_group: int
    global_reserved_per_group: int  # kept for the planned groups
    global_links: int


class DragonflyFacts(GlobalFacts):
    kind: Literal["dragonfly"]
    terminal_gbps: float
    global_gbps: float
    transport: Literal["infiniband", "ethernet"]
    router: str  # the router switch model
    radix: int
    p: int  # terminals per router
    a: int  # routers per group
    h: int  # global links per router
    k: int  # router ports used (p + a - 1 + h)
    max_groups: int
    capacity: int  # terminal ports at max_groups
    routers: int
    endpoint_ports: int
    terminal_order: str | None
    rails: int
    ports_planned: dict[str, int]  # role -> ports used in the design (reserved growth included)
    cage_aligned: dict[str, bool]
    local_links: int


class DragonflyPlusFacts(GlobalFacts):
    kind: Literal["dragonfly-plus"]
    terminal_gbps: float
    global_gbps: float
    transport: Literal["infiniband", "ethernet"]
    leaf_switch: str
    spine_switch: str
    leaf_radix: int
    spine_radix: int
    leaves_per_group: int
    spines_per_group: int
    leaf_down: int
    leaf_up: int
    leaf_spine_parallel: int
    h: int  # global links per spine
    max_groups: int
    capacity: int
    leaves: int
    spines: int
    endpoint_ports: int
    terminal_order: str | None
    rails: int
    ports_planned: dict[str, int]
    cage_aligned: dict[str, bool]
    local_links: int


# -- scale-up -----------------------------------------------------------------------------------


class ChassisSlots(TypedDict):
    front: int
    rear: int


class OneLevelFacts(TypedDict):
    """An orthogonal or switched scale-up domain (``count`` supernodes of one switching level)."""

    kind: Literal["orthogonal", "switched"]
    levels: Literal[1]
    supernodes: int
    compute_boards: int  # per supernode
    switch_boards: int
    accelerators_per_board: int
    accelerators_per_supernode: int
    accelerators: int
    chips_per_switch_board: int
    chips_per_supernode: int
    chip_ports: int
    chip_ports_used: int
    links_per_accelerator: int
    links_per_chip_per_accelerator: int
    link_gbps: float
    connectors_per_supernode: int
    links_per_connector: int
    max_compute_boards: int
    chassis: str | None  # orthogonal: the chassis model
    chassis_slots: ChassisSlots | None
    power_shelves_per_supernode: int
    power_shelf: str | None
    joined_by: NotRequired[str]  # the two-level domain that joins this one, once built


class TwoLevelFacts(TypedDict):
    kind: Literal["two-level"]
    levels: Literal[2]
    domains: list[str]  # the one-level domains joined
    accelerators: int
    l1_chips: int
    planes: int  # 0: one level-2 plane joins every L1 chip; P: plane c joins L1 chip c of every supernode
    l2_switches: int
    l2_switches_per_plane: int
    l2_chips: int
    l2_chip_ports: int
    l2_chip_ports_used: int
    uplinks_per_chip: int
    parallel: int
    max_l1_chips: int
    taper: str  # declared L1 down:up


# -- CXL, management ----------------------------------------------------------------------------


class CxlHostGroup(TypedDict):
    group: str
    hosts: int
    promised_gb: float
    links: int  # CXL links per host


class CxlFacts(TypedDict):
    kind: Literal["cxl-pool"]
    switch: str
    switches: int
    switch_ports: int
    switch_ports_used: int
    memory_model: str
    memory_devices: int
    capacity_gb: float
    promised_gb: float
    hosts: int
    host_links: int
    per_host_gbytes: float
    per_host_gbytes_max: float
    per_host_gbytes_target: float | None
    memory_gbytes: float
    host_groups: list[CxlHostGroup]
    logical_devices: int  # LDs per memory device (1: SLD)
    ld_gb: float  # GB per LD
    lds: int  # LDs in the pool
    shared_gb: float  # shared regions, counted once


class BorderLinkFacts(TypedDict):
    """One border link of the management network (management.border): an aggregation switch's
    port, routed, to a site router (no device of the Fabric: named by the blueprint)."""

    switch: str  # the aggregation switch
    port: int  # its port index
    router: str  # the site router's name
    asn: int  # the site router's ASN
    address: str  # the switch's end, with prefix
    peer: str  # the router's end, no prefix
    peer_port: NotRequired[str]  # the router's port, where the blueprint names it


class ManagementFacts(TypedDict):
    kind: Literal["management"]
    rack_switches: int
    aggregation: int  # aggregation switches
    oob_switches: list[str]  # names
    uplinks_per_rack: int
    design: Literal["routed", "flat", "mclag"]  # management.design
    uplink_slots: int  # planned rack positions x uplinks (the aggregation ports kept for them)
    blocks: NotRequired[dict[str, int]]  # shared switch name -> the rack (site index) keying its address block
    border: NotRequired[list[BorderLinkFacts]]  # management.border's links, switch by switch


ScaleOutFacts = FatTreeFacts | DragonflyFacts | DragonflyPlusFacts
FabricFacts = FatTreeFacts | DragonflyFacts | DragonflyPlusFacts | OneLevelFacts | TwoLevelFacts | CxlFacts | ManagementFacts

DragonflyKindFacts = DragonflyFacts | DragonflyPlusFacts

SCALE_OUT_KINDS = ("fat-tree", "dragonfly", "dragonfly-plus")

# Narrowing for readers that test a kind against a set of kinds (mypy narrows ``facts["kind"] ==
# "fat-tree"`` by itself, not ``facts["kind"] in (...)``).


def is_scale_out(facts: FabricFacts | None) -> TypeGuard[ScaleOutFacts]:
    return facts is not None and facts["kind"] in SCALE_OUT_KINDS


def is_dragonfly(facts: FabricFacts | None) -> TypeGuard[DragonflyKindFacts]:
    return facts is not None and facts["kind"] in ("dragonfly", "dragonfly-plus")


def is_one_level(facts: FabricFacts | None) -> TypeGuard[OneLevelFacts]:
    return facts is not None and facts["kind"] in ONE_LEVEL


def is_ethernet_fat_tree(facts: FabricFacts | None) -> TypeGuard[FatTreeFacts]:
    """A fat tree with an Ethernet (RoCEv2) address plan: ``facts["ethernet"]`` is there."""
    return facts is not None and facts["kind"] == "fat-tree" and "ethernet" in facts


def fat_tree_of(facts: FabricFacts | None) -> FatTreeFacts | None:
    """The facts when they are a fat tree's, else None."""
    return facts if facts is not None and facts["kind"] == "fat-tree" else None


def as_fat_tree(facts: FabricFacts) -> FatTreeFacts:
    """The facts of a fabric the caller knows to be a fat tree (an Ethernet plan's readers)."""
    if facts["kind"] != "fat-tree":
        raise TypeError(f"fat-tree facts expected, got {facts['kind']!r}")
    return facts


def kind_of(facts: FabricFacts | None) -> str | None:
    """The kind of a fabric's facts, None for a name without facts."""
    return facts["kind"] if facts is not None else None


def management_of(facts: Mapping[str, FabricFacts]) -> ManagementFacts | None:
    """The management network's facts (kept under ``mgmt``), or None without one."""
    mgmt = facts.get("mgmt")
    return mgmt if mgmt is not None and mgmt["kind"] == "management" else None


def oob_switches(facts: Mapping[str, FabricFacts]) -> list[str]:
    """The out-of-band switches of the management network (its facts are under ``mgmt``)."""
    mgmt = facts.get("mgmt")
    return mgmt["oob_switches"] if mgmt is not None and mgmt["kind"] == "management" else []


def ethernet_of(facts: FabricFacts | None) -> EthernetFacts | None:
    """The Ethernet (RoCEv2) plan of a fat tree; None for InfiniBand and every other kind."""
    return facts.get("ethernet") if facts is not None and facts["kind"] == "fat-tree" else None


def transport_of(facts: FabricFacts | None) -> str | None:
    """The scale-out transport (infiniband, ethernet); None for the other kinds."""
    return facts["transport"] if is_scale_out(facts) else None


def leaf_shapes(facts: FatTreeFacts) -> dict[str, tuple[list[int], list[int]]]:
    """Per leaf model of a fat tree: (its down ports, its up ports), port indices in order. One
    entry ("" key) for a fabric of one leaf model; one per model of its leaf sets otherwise (two
    sets of one model share its split: the split is the model's and the ratio's)."""
    sets = facts.get("leaf_sets")
    if not sets:
        return {"": (list(facts.get("leaf_down_ports", ())), list(facts["leaf_up_ports"]))}
    out: dict[str, tuple[list[int], list[int]]] = {}
    for s in sets:
        down, up = out.get(s["switch"], ([], []))
        # two sets of one model may cable different uplink counts: keep the longer run
        out[s["switch"]] = (s["leaf_down_ports"], up if len(up) >= len(s["leaf_up_ports"]) else s["leaf_up_ports"])
    return out


def leaf_down_of(facts: FatTreeFacts) -> dict[str, int]:
    """Per leaf model (as :func:`leaf_shapes`, "" for one model): host-link blocks per leaf."""
    sets = facts.get("leaf_sets")
    if not sets:
        return {"": int(facts["leaf_down"])}
    return {s["switch"]: s["leaf_down"] for s in sets}
