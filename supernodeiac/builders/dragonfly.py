"""Dragonfly and Dragonfly+ scale-out fabrics.

Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008)
----------------------------------------------
Routers of data radix ``k`` with ``p`` terminal ports, ``a`` routers per group and ``h`` global
ports per router, ``g`` groups. A router's data ports, in catalogue order, are::

    terminal x (0 <= x < p)        port x
    local, to router r' of group   port p + (r' if r' < r else r' - 1)     (all to all: a - 1 ports)
    global x (0 <= x < h)          port p + a - 1 + x

so ``k = p + a - 1 + h`` ports are used. Each of the three sections starts on a new cage
(``cage_sections``) when the radix has room: a twin-port cage then never holds a local port
beside a global one, whose media differ (a DAC to the next router, optics to another group), so
the one plug a cage takes is settled by its own section, and a global port first used by growth
never turns an existing local DAC into optics. With p = 16, a = 32, h = 16 on 64 ports the
terminals take ports 0-15, the local links 16-46 and the global links 48-63 (47, the second half
of the last local cage, stays empty). A design that only fits packed (no port to spare) keeps
the packed numbering above. With one global link per group pair at most
``g = a*h + 1`` groups are joined, giving ``N = a*p*(a*h + 1)`` terminal ports. Balanced load
(uniform traffic, one global hop minimal / two with Valiant routing) wants ``a = 2p = 2h``.

Terminal ports: the endpoints' data ports, endpoint groups in the order listed, devices in
their group's order, a device's data ports in catalogue order, take terminal slots
``t = 0, 1, ...``; slot t is router ``(t mod a*p) // p`` of group ``t // (a*p)``, terminal
port ``t mod p``. A device's NICs so land on consecutive terminal ports, and adding devices at
the end of the last endpoint group never moves one already cabled.

Global links (shared with Dragonfly+, where the spines play the routers)
-------------------------------------------------------------------------
Each group has ``P = a*h`` group ports, numbered router-major: group port ``q = r*h + x`` is
global port x of router r. The links are planned for ``G`` groups (``grow_to_groups``, default
the built ``g``): every group pair gets ``m = P // (G - 1)`` parallel links (``m = 0`` when
``G = 1``), which keeps every pair equal; the ``P - m*(G - 1)`` group ports left over (and, when
``G > g``, those reserved for groups not built yet) stay free and are reported. Group port
``q < m*(G - 1)`` is copy ``c = q // (G - 1)``, slot ``s = q mod (G - 1)``; the arrangement maps
(group i, slot s) to (peer group j, peer slot s'), and the link ends on group port
``q' = c*(G - 1) + s'`` of group j, i.e. router ``q' // h``, global port ``q' mod h``:

* ``absolute``:  j = s if s < i else s + 1;           s' = i if i < j else i - 1
  (slot s reaches group s skipping itself; j does not depend on G, so with ``grow_to_groups``
  set to ``a*h + 1`` adding groups only cables ports left free.)
* ``relative``:  j = (i + s + 1) mod G;               s' = G - 2 - s
* ``circulant``: j = (i + d) mod G with d = +(s//2 + 1) for even s, -(s//2 + 1) for odd s;
  s' = s + 1 for even s, s - 1 for odd s; when G is even the last slot s = G - 2 has
  d = G/2, its own inverse, and s' = s.

Each is an involution on (group, slot), each maps slot s of group i to a distinct peer group,
so every group pair gets exactly one link per copy: m in all.

Dragonfly+ (Shpiner, Haramaty, Eliad, Zdornov, Gafni, Zahavi, 2017)
-------------------------------------------------------------------
Each group is a two-level Clos of ``L`` leaves and ``S`` spines. A leaf's data ports split
down:up (``d``, ``u``) by its oversubscription (``split_ports`` of the fat tree); leaf l's up
port m goes to spine ``m // p1`` of its group on spine port ``l*p1 + m mod p1`` with
``p1 = u / S`` parallel links (S must divide u). A spine's ports ``0 .. L*p1 - 1`` face its
leaves, the next ``h`` carry global links, wired as above with S in the place of a. At most
``g = S*h + 1`` groups; ``N = L*d*(S*h + 1)`` terminal ports. Terminal slot t is leaf
``(t mod L*d) // d`` of group ``t // (L*d)``, port ``t mod d``.

Tiers (``Device.tier``): endpoints 0; Dragonfly routers 1 (a flat network: local and global
links join routers of the same tier); Dragonfly+ leaves 1, spines 2 (global links join spines).
The oversubscription check handles only kind 'fat-tree'; the dragonfly checks read ``facts``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..fabric import PortLayout
from ..fabric.fabric_facts import DragonflyFacts, DragonflyPlusFacts, GlobalFacts
from ..findings import BuildError, error
from ..model.base import ratio_value
from ..model.dragonfly import Dragonfly, DragonflyPlus
from ..model.site import Placement
from .base import BUILDERS
from .clos_plan import data_radix, split_ports
from .context import BuildContext, did_you_mean
from .media import MediaChooser

# -- global-link arrangements ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GlobalPlan:
    arrangement: str
    planned: int  # G: groups the global links are planned for
    ports: int  # P: global ports per group
    parallel: int  # m: links per group pair

    @property
    def used(self) -> int:
        """Group ports cabled (or reserved for planned groups) per group: m * (G - 1)."""
        return self.parallel * (self.planned - 1)

    @property
    def spare(self) -> int:
        """Group ports no planned group pair can use without unbalancing the pairs."""
        return self.ports - self.used


def global_plan(arrangement: str, planned: int, switches: int, h: int) -> GlobalPlan:
    ports = switches * h
    parallel = ports // (planned - 1) if planned > 1 else 0
    return GlobalPlan(arrangement, planned, ports, parallel)


def peer(arrangement: str, planned: int, i: int, s: int) -> tuple[int, int]:
    """(peer group, peer slot) of slot ``s`` (0 <= s < G - 1) of group ``i`` (formulas above)."""
    if arrangement == "absolute":
        j = s if s < i else s + 1
        return j, (i if i < j else i - 1)
    if arrangement == "relative":
        return (i + s + 1) % planned, planned - 2 - s
    if arrangement == "circulant":
        if planned % 2 == 0 and s == planned - 2:
            return (i + planned // 2) % planned, s
        step = s // 2 + 1
        if s % 2 == 0:
            return (i + step) % planned, s + 1
        return (i - step) % planned, s - 1
    raise ValueError(f"unknown arrangement {arrangement!r}")


def global_links(plan: GlobalPlan, built: int) -> Iterator[tuple[int, int, int, int]]:
    """(group i, group port q, group j, group port q') once per link between built groups, i < j."""
    slots = plan.planned - 1
    arrangement, planned = plan.arrangement, plan.planned
    for i in range(built):
        # A slot's peer is the same for every copy: worked out once per slot, not per group port.
        # The ports still come in group-port order q = c*slots + s, so the links keep their order.
        peers = []
        for s in range(slots):
            j, s2 = peer(arrangement, planned, i, s)
            if i < j < built:
                peers.append((s, j, s2))
        for c in range(plan.parallel):
            base = c * slots
            for s, j, s2 in peers:
                yield i, base + s, j, base + s2


def peers(arrangement: str, planned: int, i: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`peer` of every (group ``i``, slot ``s``) at once (int64 arrays of one shape)."""
    if arrangement == "absolute":
        j = np.where(s < i, s, s + 1)
        return j, np.where(i < j, i, i - 1)
    if arrangement == "relative":
        return (i + s + 1) % planned, planned - 2 - s
    if arrangement == "circulant":
        step, even = s // 2 + 1, s % 2 == 0
        j, s2 = np.where(even, (i + step) % planned, (i - step) % planned), np.where(even, s + 1, s - 1)
        if planned % 2 == 0:
            last = s == planned - 2
            j, s2 = np.where(last, (i + planned // 2) % planned, j), np.where(last, s, s2)
        return j, s2
    raise ValueError(f"unknown arrangement {arrangement!r}")


def global_link_arrays(plan: GlobalPlan, built: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`global_links` as four int64 arrays (i, q, j, q'), in the same order, made in bulk
    (a radix-64 Dragonfly+ has 5 x 10^5 global links)."""
    slots, m = plan.planned - 1, plan.parallel
    if slots < 1 or m < 1 or built < 1:
        return (np.zeros(0, dtype=np.int64),) * 4
    i, s = np.divmod(np.arange(built * slots, dtype=np.int64), slots)
    j, s2 = peers(plan.arrangement, plan.planned, i, s)
    keep = (i < j) & (j < built)
    s, j, s2 = s[keep], j[keep], s2[keep]  # by group, slots ascending: the peers list of each group
    per = np.bincount(i[keep], minlength=built)
    starts = np.concatenate(([0], np.cumsum(per)[:-1]))
    # Group g's links: its kept slots once per copy, copy after copy.
    counts = per * m
    g = np.repeat(np.arange(built, dtype=np.int64), counts)
    k = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    copy, slot = np.divmod(k, np.maximum(per[g], 1))
    at, base = starts[g] + slot, copy * slots
    return g, base + s[at], j[at], base + s2[at]


# -- shared pieces ------------------------------------------------------------------------------


def cage_sections(layout: PortLayout, data: list[int], sizes: list[int]) -> tuple[list[list[int]], bool]:
    """Split a switch's data ports (catalogue order) into consecutive sections of ``sizes`` ports,
    each starting on a new cage, so no cage mixes two sections' links (and their media); when that
    does not fit the data ports, the packed split (``False``: sections may share a cage)."""
    out: list[list[int]] = []
    i = 0
    cages = layout.port_cages
    for n in sizes:
        while 0 < i < len(data) and cages[data[i]] == cages[data[i - 1]]:
            i += 1  # the rest of the previous section's last cage stays empty
        if i + n > len(data):
            break
        out.append(data[i : i + n])
        i += n
    else:
        return out, True
    starts = [sum(sizes[:x]) for x in range(len(sizes))]
    return [data[b : b + n] for b, n in zip(starts, sizes)], False


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Every endpoint port in slot order (devices in their groups' order, a device's ports in
    catalogue order): ``devices[t]`` and ``ports[t]`` for slot t. ``rails`` is the ports per
    device when every device has the same number (the NICs, one per rail), else 0."""

    devices: list[int]
    ports: list[int]
    rails: int

    def __len__(self) -> int:
        return len(self.devices)


def _endpoint_ports(ctx: BuildContext, spec: Dragonfly | DragonflyPlus, path: tuple) -> Endpoints:
    f = ctx.fabric
    out: list[int] = []  # the device of every endpoint port
    out_ports: list[int] = []
    role_ports: dict[tuple[str, str], list[int]] = {}  # per model, not per device: endpoints number 10^5
    counts: set[int] = set()
    for e, ep in enumerate(spec.endpoints):
        devices = ctx.groups.get(ep.group)
        if devices is None:
            raise ctx.fail(
                "unknown-reference",
                f"no node group or scale-up domain named {ep.group!r}",
                path + ("endpoints", e, "group"),
                did_you_mean(ep.group, sorted(ctx.groups)),
            )
        before = len(out)
        models = {f.devices[dev].model for dev in devices}
        if len(models) == 1:  # a node group: one model, 10^5 devices, done in two comprehensions
            ports = f.layouts[models.pop()].ports_of(ep.ports)
            out.extend([dev for dev in devices for _ in ports])
            out_ports.extend(ports * len(devices))
            if ports:
                counts.add(len(ports))
        for dev in devices if models else ():
            model = f.devices[dev].model
            found = role_ports.get((model, ep.ports))
            if found is None:
                found = role_ports[(model, ep.ports)] = f.layouts[model].ports_of(ep.ports)
            out.extend([dev] * len(found))
            out_ports.extend(found)
            if found:
                counts.add(len(found))
        if len(out) == before:
            raise ctx.fail(
                "no-data-ports",
                f"{ep.group} devices have no {ep.ports} ports for a scale-out fabric",
                path + ("endpoints", e, "group"),
                f"list a node group whose model has ports of role {ep.ports!r}",
            )
    return Endpoints(out, out_ports, counts.pop() if len(counts) == 1 else 0)


def terminal_order(spec: Dragonfly | DragonflyPlus, per_group_switches: int, rails: int) -> str | None:
    """The order endpoint ports take terminal ports: rail-aligned where every device has the same
    number of ports (rails) and the switches of a group divide by it; None when rail-aligned is
    asked for and impossible."""
    possible = rails > 1 and per_group_switches % rails == 0
    if spec.terminal_order is None:
        return "rail-aligned" if possible else "consecutive"
    if spec.terminal_order == "rail-aligned" and not possible:
        return None
    return spec.terminal_order


def _attach_endpoints(
    ctx: BuildContext,
    name: str,
    endpoints: Endpoints,
    switches: list[int],
    per_group: int,
    ports: list[int],
    order: str,
    chooser: MediaChooser,
    path: tuple,
) -> None:
    """Endpoint slot t to a switch (numbered across groups, ``per_group`` each) and terminal port.

    consecutive: switch ``t // P``, port ``t mod P`` (P terminal ports per switch), so a node's NICs
    take consecutive ports. rail-aligned (R ports per device, S switches per group, S/R per rail):
    device ``i = t // R`` and NIC ``r = t mod R``; the group holds ``n = S*P/R`` devices, ``q = i mod n``
    is the device's place in group ``j = i // n``, and NIC r lands on switch ``j*S + r*(S/R) + q // P``,
    port ``q mod P``: every switch carries one rail, P devices' NIC r each.
    """
    n, per = len(endpoints), len(ports)
    t = np.arange(n, dtype=np.int64)
    if order == "rail-aligned":
        rails = endpoints.rails
        dev, nic = np.divmod(t, rails)
        group, q = np.divmod(dev, per_group * per // rails)
        switch_index = group * per_group + nic * (per_group // rails) + q // per
        port_index = q % per
    else:
        switch_index, port_index = np.divmod(t, per)
    sw = np.array(switches, dtype=np.int64)[switch_index].tolist()
    sw_ports = np.array(ports, dtype=np.int64)[port_index].tolist()
    ctx.add_links(name, endpoints.devices, endpoints.ports, sw, sw_ports, chooser=chooser, origin=path, tier="node-leaf")


def _order_or_fail(ctx: BuildContext, spec: Dragonfly | DragonflyPlus, path: tuple, switches: int, what: str, rails: int) -> str:
    order = terminal_order(spec, switches, rails)
    if order is None:
        raise ctx.fail(
            "rails",
            f"{spec.name}: rail-aligned terminals need the {what} per group ({switches}) to be a multiple of the "
            f"endpoints' ports per device ({rails or 'not the same for every device'})",
            path + ("terminal_order",),
            f"{what} per group a multiple of {rails}, or terminal_order: consecutive" if rails else "terminal_order: consecutive",
        )
    return order


def _groups(
    ctx: BuildContext,
    spec: Dragonfly | DragonflyPlus,
    path: tuple,
    endpoints: int,
    per_group: int,
    max_groups: int,
    alternatives: list[str],
    what: str,
) -> tuple[int, int]:
    """(groups built, groups planned), or a build error with the nearest valid designs."""
    need = max(1, math.ceil(endpoints / per_group))
    g = spec.groups or need
    where = path + ("groups",) if spec.groups else path + ("endpoints",)
    if g > max_groups:
        asked = f"asks for {g} groups" if spec.groups else f"needs {g} groups for its {endpoints:,} endpoint ports"
        raise ctx.fail(
            "dragonfly-groups",
            f"{spec.name}: {what} joins at most {max_groups} groups with one global link per pair; this design {asked}",
            where,
            "; or ".join(alternatives),
        )
    if need > g:
        raise ctx.fail(
            "dragonfly-endpoints",
            f"{spec.name}: {endpoints:,} endpoint ports need {need} groups of {per_group} terminal ports; {g} asked",
            path + ("groups",),
            f"groups: {need}" + (f" (at most {max_groups})" if need <= max_groups else ""),
        )
    planned = spec.grow_to_groups or g
    if planned > max_groups:
        raise ctx.fail(
            "dragonfly-groups",
            f"{spec.name}: grow_to_groups {planned} exceeds the {max_groups} groups {what} can join",
            path + ("grow_to_groups",),
            f"grow_to_groups: {max_groups} at most; " + "; or ".join(alternatives[1:]),
        )
    if planned < g:
        raise ctx.fail("grow-to", f"grow_to_groups is {planned} but {g} groups are built", path + ("grow_to_groups",))
    return g, planned


def _more_groups(want: int, switches: int, h: int, label_s: str, label_h: str, radix_of: Callable[[int, int], str]) -> list[str]:
    """Nearest designs joining ``want`` groups: more global links, or more switches per group."""
    out = []
    h2 = math.ceil((want - 1) / switches)
    out.append(f"{label_h}: {h2} (keeps {label_s} = {switches}; {radix_of(switches, h2)})")
    s2 = math.ceil((want - 1) / h)
    out.append(f"{label_s}: {s2} (keeps {label_h} = {h}; {radix_of(s2, h)})")
    return out


def _last_gbps(ctx: BuildContext) -> float:
    """Gb/s of the link just added (a loop's links share one rate: one pair of port groups)."""
    t = ctx.fabric.links
    return t.specs[t.spec[-1]].gbps if len(t) else 0.0


def _group_switches(
    ctx: BuildContext,
    path: tuple,
    fabric: str,
    role: str,
    default_name: str,
    model: str,
    placement: Placement,
    group: int,
    count: int,
    *,
    tier: int,
) -> list[int]:
    """The ``count`` switches of one role in group ``group``, placed by (group, index) and named
    with the role's template (the field named like the role is the 1-based index)."""
    return ctx.add_placed_devices(
        names=[ctx.name(role, default_name, path, fabric=fabric, group=group + 1, **{role: x + 1}) for x in range(count)],
        role=role,
        model=model,
        group=fabric,
        placement=placement,
        slots=[group * count + x for x in range(count)],
        origin=path,
        coords=[(("fabric", fabric), ("group", group), (role, x)) for x in range(count)],
        tier=tier,
    )


def _wire_globals(
    ctx: BuildContext,
    name: str,
    switches: list[int],
    per_group: int,
    h: int,
    glob_ports: list[int],
    plan: GlobalPlan,
    built: int,
    chooser: MediaChooser,
    path: tuple,
) -> None:
    # Group port q of group i is switch q // h of the group, global port q mod h.
    i, q, j, q2 = global_link_arrays(plan, built)
    sw, ports = np.array(switches, dtype=np.int64), np.array(glob_ports, dtype=np.int64)
    ctx.add_links(
        name,
        sw[i * per_group + q // h].tolist(),
        ports[q % h].tolist(),
        sw[j * per_group + q2 // h].tolist(),
        ports[q2 % h].tolist(),
        chooser=chooser,
        origin=path,
        tier="global",
    )


def _global_facts(plan: GlobalPlan, built: int) -> GlobalFacts:
    return {
        "arrangement": plan.arrangement,
        "g": built,
        "planned_groups": plan.planned,
        "global_parallel": plan.parallel,
        "global_ports_per_group": plan.ports,
        "global_spare_per_group": plan.spare,
        "global_reserved_per_group": plan.parallel * (plan.planned - built),
        "global_links": plan.parallel * built * (built - 1) // 2,
    }


# -- Dragonfly ----------------------------------------------------------------------------------


@BUILDERS.register("dragonfly")
def build_dragonfly(ctx: BuildContext, spec: Dragonfly, path: tuple) -> None:
    f, name = ctx.fabric, spec.name
    model = ctx.model(spec.router, path + ("router",), "switch")
    k = data_radix(model)
    base = max(1, (k + 1) // 4)  # the balanced design a = 2p = 2h that fits radix k: 4p - 1 <= k
    p = spec.terminals or base
    a = spec.routers_per_group or 2 * base
    h = spec.global_links or base
    used = p + a - 1 + h
    if used > k:
        _radix_error(spec, path, p, a, h, k, base)

    endpoints = _endpoint_ports(ctx, spec, path)
    per_group = a * p
    max_groups = a * h + 1

    def radix_of(a2: int, h2: int) -> str:
        need = p + a2 - 1 + h2
        return f"radix p + a - 1 + h = {need}, " + ("fits" if need <= k else "exceeds") + f" {spec.router}'s {k}"

    want = spec.groups or math.ceil(len(endpoints) / per_group)
    alternatives = [f"groups: {max_groups} ({a * p * max_groups:,} terminal ports)"]
    alternatives += _more_groups(want, a, h, "routers_per_group", "global_links", radix_of)
    g, planned = _groups(ctx, spec, path, len(endpoints), per_group, max_groups, alternatives, f"a={a}, h={h}")
    order = _order_or_fail(ctx, spec, path, a, "routers", endpoints.rails)
    plan = global_plan(spec.arrangement, planned, a, h)

    placement = spec.placement.resolve(a)
    routers: list[int] = []
    for j in range(g):
        routers += _group_switches(
            ctx, path, name, "router", "{fabric}-g{group:03d}-r{router:02d}", spec.router, placement, j, a, tier=1
        )

    chooser = ctx.chooser(spec.media, path + ("media",) if spec.media else ("media",))
    layout = f.layouts[spec.router]
    (term, local, glob), aligned = cage_sections(layout, layout.ports_of("data"), [p, a - 1, h])
    _attach_endpoints(ctx, name, endpoints, routers, a, term, order, chooser, path)
    terminal_gbps = _last_gbps(ctx)
    # Router r's local port towards r2 (> r) is r2 - 1; r2's towards r (< r2) is r. The same
    # (r, port, r2, port) for every group, so listed once.
    pairs = [(r, local[r2 - 1], r2, local[r]) for r in range(a) for r2 in range(r + 1, a)]
    ctx.add_link_rows(
        name,
        [(routers[j * a + r], port, routers[j * a + r2], port2) for j in range(g) for r, port, r2, port2 in pairs],
        chooser=chooser,
        origin=path,
        tier="local",
    )
    _wire_globals(ctx, name, routers, a, h, glob, plan, g, chooser, path)
    global_gbps = _last_gbps(ctx) if plan.parallel and g > 1 else 0.0

    facts: DragonflyFacts = {
        "kind": "dragonfly",
        "terminal_gbps": terminal_gbps,
        "global_gbps": global_gbps,
        "transport": spec.transport,
        "router": spec.router,
        "radix": k,
        "p": p,
        "a": a,
        "h": h,
        "k": used,
        "max_groups": max_groups,
        "capacity": a * p * max_groups,
        "routers": g * a,
        "endpoint_ports": len(endpoints),
        "terminal_order": order,
        "rails": endpoints.rails,
        # Ports each switch uses in the design (terminals, local, global; reserved growth included).
        "ports_planned": {"router": used},
        "cage_aligned": {"router": aligned},
        "local_links": g * a * (a - 1) // 2,
        **_global_facts(plan, g),
    }
    f.facts[name] = facts


def _radix_error(spec: Dragonfly, path: tuple, p: int, a: int, h: int, k: int, base: int) -> None:
    hints = []
    for label, value in (
        ("global_links", k - p - a + 1),
        ("routers_per_group", k - p - h + 1),
        ("terminals", k - a - h + 1),
    ):
        if value >= 1:
            hints.append(f"{label}: {value}")
    hints.append(f"the balanced design for radix {k}: terminals {base}, routers_per_group {2 * base}, global_links {base}")
    given = [f for f in ("global_links", "routers_per_group", "terminals") if getattr(spec, f) is not None]
    raise BuildError(
        [
            error(
                "dragonfly-radix",
                f"{spec.name}: router {spec.router} has {k} data ports; p + a - 1 + h = {p} + {a} - 1 + {h} = "
                f"{p + a - 1 + h} do not fit",
                path + ((given[0],) if given else ("router",)),
                "; or ".join(hints),
            )
        ]
    )


# -- Dragonfly+ ---------------------------------------------------------------------------------


@BUILDERS.register("dragonfly-plus")
def build_dragonfly_plus(ctx: BuildContext, spec: DragonflyPlus, path: tuple) -> None:
    f, name = ctx.fabric, spec.name
    leaf_name = spec.switch
    spine_name = spec.spine_switch or spec.switch
    kl = data_radix(ctx.model(leaf_name, path + ("switch",), "switch"))
    ks = data_radix(ctx.model(spine_name, path + ("spine_switch" if spec.spine_switch else "switch",), "switch"))
    tiers = split_ports(kl, ratio_value(spec.oversubscription))
    d, u = tiers.down, tiers.up
    if d == 0 or u == 0:
        raise ctx.fail(
            "dragonfly-radix",
            f"{spec.name}: a {kl}-port leaf at {spec.oversubscription} has {d} down and {u} up ports",
            path + ("oversubscription",),
            "a leaf needs at least one port each way",
        )
    spines = spec.spines or u
    if u % spines:
        divisors = [s for s in range(1, u + 1) if u % s == 0]
        raise ctx.fail(
            "dragonfly-radix",
            f"{spec.name}: {spines} spines per group do not divide the leaf's {u} up ports evenly",
            path + ("spines",),
            "spines: one of " + ", ".join(map(str, divisors)),
        )
    p1 = u // spines
    leaves = spec.leaves or max(1, (ks // 2) // p1)
    h = spec.global_links or ks - leaves * p1
    if h < 1 or leaves * p1 + h > ks:
        most = ks // p1 - 1
        raise ctx.fail(
            "dragonfly-radix",
            f"{spec.name}: spine {spine_name} has {ks} data ports; {leaves} leaves x {p1} links + {h} global = "
            f"{leaves * p1 + h} do not fit",
            path + ("global_links",) if spec.global_links else path + ("leaves",),
            f"global_links: {ks - leaves * p1}" if ks - leaves * p1 >= 1 else f"leaves: {most} at most",
        )

    endpoints = _endpoint_ports(ctx, spec, path)
    per_group = leaves * d
    max_groups = spines * h + 1

    def radix_of(s2: int, h2: int) -> str:
        need = leaves * (u // s2 if u % s2 == 0 else p1) + h2
        divides = "" if u % s2 == 0 else f", and spines must divide the leaf's {u} up ports"
        return f"spine ports {need}, " + ("fits" if need <= ks else "exceeds") + f" {spine_name}'s {ks}{divides}"

    want = spec.groups or math.ceil(len(endpoints) / per_group)
    alternatives = [f"groups: {max_groups} ({per_group * max_groups:,} terminal ports)"]
    alternatives += _more_groups(want, spines, h, "spines", "global_links", radix_of)
    g, planned = _groups(ctx, spec, path, len(endpoints), per_group, max_groups, alternatives, f"S={spines} spines, h={h}")
    order = _order_or_fail(ctx, spec, path, leaves, "leaves", endpoints.rails)
    plan = global_plan(spec.arrangement, planned, spines, h)

    leaf_place = spec.placement.leaf.resolve(leaves)
    spine_place = spec.placement.spine.resolve(spines)
    leaf_ids: list[int] = []
    spine_ids: list[int] = []
    for j in range(g):
        leaf_ids += _group_switches(
            ctx, path, name, "leaf", "{fabric}-g{group:03d}-leaf{leaf:02d}", leaf_name, leaf_place, j, leaves, tier=1
        )
        spine_ids += _group_switches(
            ctx, path, name, "spine", "{fabric}-g{group:03d}-spine{spine:02d}", spine_name, spine_place, j, spines, tier=2
        )

    chooser = ctx.chooser(spec.media, path + ("media",) if spec.media else ("media",))
    leaf_layout, spine_layout = f.layouts[leaf_name], f.layouts[spine_name]
    (down, up), leaf_aligned = cage_sections(leaf_layout, leaf_layout.ports_of("data"), [d, u])
    (spine_down, glob), spine_aligned = cage_sections(spine_layout, spine_layout.ports_of("data"), [leaves * p1, h])
    _attach_endpoints(ctx, name, endpoints, leaf_ids, leaves, down, order, chooser, path)
    terminal_gbps = _last_gbps(ctx)
    # Leaf x of group j sends up-port m to spine m // p1 of its group, on that spine's port x * p1 + m mod p1.
    # Listed group by group, leaf by leaf, up port by up port (j, x, m), in bulk.
    m = np.arange(u, dtype=np.int64)
    x = np.arange(leaves, dtype=np.int64)[:, None]
    spine_of = np.array(spine_ids, dtype=np.int64).reshape(g, spines)[:, m // p1]  # (j, m)
    ctx.add_links(
        name,
        np.repeat(np.array(leaf_ids, dtype=np.int64), u).tolist(),
        np.array(up, dtype=np.int64)[np.tile(m, g * leaves)].tolist(),
        np.broadcast_to(spine_of[:, None, :], (g, leaves, u)).ravel().tolist(),
        np.tile(np.array(spine_down, dtype=np.int64)[x * p1 + m % p1].ravel(), g).tolist(),
        chooser=chooser,
        origin=path,
        tier="leaf-spine",
    )
    _wire_globals(ctx, name, spine_ids, spines, h, glob, plan, g, chooser, path)
    global_gbps = _last_gbps(ctx) if plan.parallel and g > 1 else 0.0

    facts: DragonflyPlusFacts = {
        "kind": "dragonfly-plus",
        "terminal_gbps": terminal_gbps,
        "global_gbps": global_gbps,
        "transport": spec.transport,
        "leaf_switch": leaf_name,
        "spine_switch": spine_name,
        "leaf_radix": kl,
        "spine_radix": ks,
        "leaves_per_group": leaves,
        "spines_per_group": spines,
        "leaf_down": d,
        "leaf_up": u,
        "leaf_spine_parallel": p1,
        "h": h,
        "max_groups": max_groups,
        "capacity": per_group * max_groups,
        "leaves": g * leaves,
        "spines": g * spines,
        "endpoint_ports": len(endpoints),
        "terminal_order": order,
        "rails": endpoints.rails,
        "ports_planned": {"leaf": d + u, "spine": leaves * p1 + h},
        "cage_aligned": {"leaf": leaf_aligned, "spine": spine_aligned},
        "local_links": g * leaves * u,
        **_global_facts(plan, g),
    }
    f.facts[name] = facts
