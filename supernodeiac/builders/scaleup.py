"""Scale-up domains: orthogonal (OEX) boards, switched trays (NVL72-style), and a second level.

**Link spread (both one-level forms).** A domain instance (a supernode; an NVL72 rack) has N
compute boards of A accelerators with L scale-up links each, and M switch boards of C chips with
R ports each. Accelerator ``g = board * A + acc`` (its index in the instance) sends link ``l`` to

* switch board ``l % M``,
* chip ``(l // M) % C`` of that board,
* chip port ``g * k + l // (M * C)``, with ``k = L / (M * C)`` links from each accelerator to each chip,

so every accelerator spreads its links evenly over all M*C chips (one switch hop to every other
accelerator of the instance), and a chip's ports are keyed by the accelerator's index: adding a
compute board takes the ports above the existing ones. Valid when L is a multiple of M*C and
N*A*k <= R; anything else is a BuildError with the nearest valid values.

* Orthogonal: connector ``(b, s)`` mates compute board b with switch board s and carries the
  A*L/M links of b's accelerators with ``l % M == s``. Each accelerator link is its own Link
  (kind "connector", length 0, medium by the media policy: the orthogonal connector) so port
  budgets and reach are checked per link; the connector's identity is the coordinate pair
  (board, switch_board) of its two ends.
* Switched: the same links are cable-cartridge lanes (kind "cartridge") with their in-rack length.

Placement: each instance takes one placement slot. Orthogonal: a supernode chassis (the smallest
catalogue chassis with the slots, or ``chassis:``) whose front slots hold the compute boards one
above the other (horizontal) and whose rear slots hold the switch boards side by side (vertical,
each spanning the chassis), so every compute board crosses every switch board once; the boards
record their chassis and slot (``Device.chassis``, ``Device.slot``: F01.., R01..). Switched: trays
stacked in U, half of the compute trays below the switch trays and the rest above (shortest
cartridge runs, as in an NVL72 rack). Either way the power shelves the catalogue asks for
(``physical.power_shelves`` of the chassis or the compute tray: 8 per NVL72 rack) go with the
instance: above the chassis, or half below and half above the trays.

**Second level (two-level).** L1 chips are numbered across the joined domains in order (domain,
supernode, switch board, chip). With X L2 chips and U uplinks per L1 chip (``p = U / X`` parallel
links per L1-L2 chip pair), uplink ``u`` of L1 chip ``i`` goes to L2 chip ``u // p``, on its port
``i * p + u % p``; L2 chip x is chip ``x % C2`` of L2 switch ``x // C2``. An L1 board's uplink
ports are split evenly over its chips in order (chip c owns uplinks ``c*U' .. c*U'+U'-1``).
Growing the last joined domain appends L1 chips and leaves existing cables in place.

**Planes (two-level, ``planes: true``).** With P = chips per supernode (M x C), plane c is its own
level 2: L1 chip ``c = board * C + chip`` of every supernode and the X L2 chips of plane c
(``switches`` per plane, named ``{domain}-l2-p{plane}-{switch}``). The L1 chip of the supernode at
position ``n`` (in (domain, supernode) order) sends uplink ``u`` to L2 chip ``u // p`` of its plane,
on its port ``n * p + u % p``. An L2 chip then takes one L1 chip per supernode rather than every L1
chip of the cluster, so the same chip joins P times as many supernodes; any accelerator still reaches
any other in three hops (its L1 chip c, plane c, chip c of the other supernode), as a rail-optimised
scale-out fabric does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..catalog.types import DeviceModel
from ..fabric.fabric_facts import is_one_level
from ..model.scaleup import ONE_LEVEL, OrthogonalDomain, SwitchedDomain, TwoLevelDomain
from .base import BUILDERS
from .context import BuildContext, did_you_mean


@dataclass(frozen=True, slots=True)
class Spread:
    """Where each accelerator link lands in a one-level domain (see the module docstring)."""

    boards: int  # M switch boards per instance
    chips: int  # C chips per switch board
    links: int  # L links per accelerator

    @property
    def per_chip(self) -> int:
        return self.links // (self.boards * self.chips)

    def target(self, g: int, link: int) -> tuple[int, int, int]:
        """(switch board, chip, chip port) of link ``link`` of accelerator ``g`` of the instance."""
        m, c = self.boards, self.chips
        return link % m, (link // m) % c, g * self.per_chip + link // (m * c)


def _domain_index(ctx: BuildContext, name: str) -> int | None:
    for i, spec in enumerate(ctx.blueprint.scaleup):
        if spec.name == name:
            return i
    return None


@dataclass(frozen=True, slots=True)
class _Form:
    kind: Literal["orthogonal", "switched"]
    link_kind: str
    compute_key: str  # blueprint field names, for finding paths
    switch_key: str
    n_key: str
    m_key: str
    compute_name: str
    switch_name: str
    shelf_name: str


_ORTHOGONAL = _Form(
    "orthogonal",
    "connector",
    "compute_board",
    "switch_board",
    "compute_boards",
    "switch_boards",
    "{domain}-sn{supernode:02d}-cb{board:02d}",
    "{domain}-sn{supernode:02d}-sb{board:02d}",
    "{domain}-sn{supernode:02d}-ps{shelf:02d}",
)
_SWITCHED = _Form(
    "switched",
    "cartridge",
    "compute_tray",
    "switch_tray",
    "compute_trays",
    "switch_trays",
    "{domain}-{supernode:02d}-ct{board:02d}",
    "{domain}-{supernode:02d}-st{board:02d}",
    "{domain}-{supernode:02d}-ps{shelf:02d}",
)


@BUILDERS.register("orthogonal")
def build_orthogonal(ctx: BuildContext, spec: OrthogonalDomain, path: tuple) -> None:
    _build_one_level(ctx, spec, path, _ORTHOGONAL, spec.compute_board, spec.switch_board, spec.compute_boards, spec.switch_boards)


@BUILDERS.register("switched")
def build_switched(ctx: BuildContext, spec: SwitchedDomain, path: tuple) -> None:
    _build_one_level(ctx, spec, path, _SWITCHED, spec.compute_tray, spec.switch_tray, spec.compute_trays, spec.switch_trays)


def _spread_hint(
    ctx: BuildContext, form: _Form, links: int, chips: int, n: int, acc: int, ports: int, m: int, switch: str
) -> str:
    """Fixes that work: every accelerator spreads its L links evenly over M boards x C chips only
    when L is a multiple of M x C, and the chips need N x A x L / (M x C) ports. So: another board
    count (when one divides L and fits), a compute board whose link count is a multiple of M x C,
    or a switch board whose chip count divides L. Nothing is suggested that still fails."""

    def fits(boards: int, c: int, r: int) -> bool:
        return links % (boards * c) == 0 and n * acc * (links // (boards * c)) <= r

    valid = [b for b in range(1, links + 1) if fits(b, chips, ports)]
    if valid:
        return f"{form.m_key}: one of {', '.join(map(str, valid))} spreads {links} links evenly over {chips}-chip boards"
    step = m * chips
    lower, upper = (links // step) * step, (links // step + 1) * step
    counts = [x for x in (lower, upper) if x > 0 and n * acc * (x // step) <= ports]
    hints = [
        f"links per accelerator must be a multiple of {form.m_key} x chips per board; {links} is a multiple of no "
        f"count of {chips}-chip boards that fits"
    ]
    if counts:
        hints.append(f"a {form.compute_key} with {' or '.join(map(str, counts))} links per accelerator ({m} x {chips} chips)")
    others = []
    for name, model in sorted(ctx.catalogue.devices.items()):
        c = model.switch_chips
        if name == switch or model.kind != "switch-board" or c is None:
            continue
        boards = [b for b in range(1, links + 1) if fits(b, c.count, c.ports_per_chip)]
        if boards:
            others.append(f"{name} ({c.count} chips; {form.m_key} {', '.join(map(str, boards[:4]))})")
    if others:
        hints.append(f"a {form.switch_key} whose chip count divides {links}: " + ", ".join(others))
    if not counts and not others:
        hints.append(f"fewer {form.n_key}, or a {form.switch_key} with more ports per chip")
    return "; ".join(hints)


@dataclass(frozen=True, slots=True)
class _Stack:
    """Where one domain instance's devices sit, in units above its placement's U."""

    height_u: int  # the whole stack: one placement slot
    chassis: str | None  # orthogonal: the chassis model the boards slide into
    chassis_u: int
    chassis_height_u: int
    front_slots: int
    rear_slots: int
    compute_u: list[int]  # per compute board (a front slot of the chassis, or a tray's unit)
    switch_u: list[int]  # per switch board (the chassis's bottom for a vertical rear board)
    shelf_model: str | None
    shelf_u: list[int]

    @property
    def extra_devices(self) -> int:
        return (self.chassis is not None) + len(self.shelf_u)


def _stack(
    ctx: BuildContext,
    spec: OrthogonalDomain | SwitchedDomain,
    path: tuple,
    form: _Form,
    cm: DeviceModel,
    sm: DeviceModel,
    n: int,
    m: int,
) -> _Stack:
    """Lay out one instance: an OEX supernode is a chassis (compute boards in its front slots, one
    above the other; switch boards in its rear slots, vertical, side by side) with its power shelves
    above it; a switched domain (NVL72) is trays stacked in U, half of its compute trays below the
    switch trays and half above, with its power shelves split below and above them."""
    chassis_name, host = _chassis(ctx, spec, path, n, m) if form.kind == "orthogonal" else (None, None)
    feed = (host.physical if host is not None else cm.physical) or None
    shelves = feed.power_shelves if feed is not None else None
    shelf_model, shelf_h, count = None, 0, 0
    if shelves is not None:
        shelf_model = shelves.model
        shelf_h = ctx.model(shelf_model, path, "power-shelf").height_u
        count = shelves.count
    if host is not None:
        assert host.slots is not None
        slots = host.slots
        compute_u = [slots.front_first_u + b * slots.front_pitch_u for b in range(n)]
        return _Stack(
            host.height_u + count * shelf_h, chassis_name, 0, host.height_u, slots.front, slots.rear,
            compute_u, [0] * m, shelf_model, [host.height_u + j * shelf_h for j in range(count)],
        )  # fmt: skip
    hc, hs = cm.height_u, sm.height_u
    below = count // 2
    base = below * shelf_h
    lower = n // 2
    compute_u = [base + (b * hc if b < lower else lower * hc + m * hs + (b - lower) * hc) for b in range(n)]
    switch_u = [base + lower * hc + j * hs for j in range(m)]
    top = base + n * hc + m * hs
    shelf_u = [j * shelf_h for j in range(below)] + [top + j * shelf_h for j in range(count - below)]
    return _Stack(top + (count - below) * shelf_h, None, 0, 0, 0, 0, compute_u, switch_u, shelf_model, shelf_u)


def _chassis(ctx: BuildContext, spec: OrthogonalDomain | SwitchedDomain, path: tuple, n: int, m: int) -> tuple[str, DeviceModel]:
    """The chassis an OEX supernode's boards slide into: the declared one, or the smallest in the
    catalogue with enough front (compute) and rear (switch) slots."""
    assert isinstance(spec, OrthogonalDomain)
    cm = ctx.catalogue.devices[spec.compute_board]
    name = spec.chassis
    if name is not None:
        model = ctx.model(name, path + ("chassis",), "chassis")
        assert model.slots is not None
        if model.slots.front < n or model.slots.rear < m:
            raise ctx.fail(
                "chassis-slots",
                f"{spec.chassis} has {model.slots.front} front and {model.slots.rear} rear slots; this supernode has "
                f"{n} compute boards and {m} switch boards",
                path + ("chassis",),
                "a larger chassis, or fewer boards",
            )
    else:
        fits = sorted(
            (v.height_u, k)
            for k, v in ctx.catalogue.devices.items()
            if v.kind == "chassis" and v.slots is not None and v.slots.front >= n and v.slots.rear >= m
        )
        if not fits:
            sizes = sorted(f"{k} ({v.slots.front} x {v.slots.rear})" for k, v in ctx.catalogue.devices.items() if v.slots)
            raise ctx.fail(
                "chassis-slots",
                f"no catalogue chassis has {n} front (compute) and {m} rear (switch) slots",
                path + ("compute_boards",),
                "chassis: " + (", ".join(sizes) or "none") + "; add one under catalogue: devices: (kind chassis)",
            )
        name = fits[0][1]
        model = ctx.catalogue.devices[name]
    assert model.slots is not None
    if cm.height_u > model.slots.front_pitch_u:
        raise ctx.fail(
            "chassis-slots",
            f"{spec.compute_board} is {cm.height_u}U; the chassis's front slots are {model.slots.front_pitch_u}U",
            path + ("compute_board",),
            "a chassis with taller front slots",
        )
    return name, model


def _build_one_level(
    ctx: BuildContext,
    spec: OrthogonalDomain | SwitchedDomain,
    path: tuple,
    form: _Form,
    compute: str,
    switch: str,
    n: int,
    m: int,
) -> None:
    f = ctx.fabric
    cm = ctx.model(compute, path + (form.compute_key,), "compute-board")
    sm = ctx.model(switch, path + (form.switch_key,), "switch-board")
    acc, chips = cm.accelerators, sm.switch_chips
    if acc is None:
        raise ctx.fail(
            "catalogue", f"{compute} lists no accelerators", path + (form.compute_key,), "a compute board needs 'accelerators:'"
        )
    if chips is None:
        raise ctx.fail(
            "catalogue", f"{switch} lists no switch_chips", path + (form.switch_key,), "a switch board needs 'switch_chips:'"
        )
    a_count, links, c_count, ports = acc.count, acc.links, chips.count, chips.ports_per_chip
    cb_ports = f.layouts[compute].ports_of("scaleup")
    sb_ports = f.layouts[switch].ports_of("scaleup")
    if len(cb_ports) < a_count * links:
        raise ctx.fail(
            "catalogue",
            f"{compute} has {len(cb_ports)} scale-up ports for {a_count} accelerators x {links} links",
            path + (form.compute_key,),
            f"give it {a_count * links} scale-up ports",
        )
    if links % (m * c_count):
        raise ctx.fail(
            "scaleup-spread",
            f"{links} links per {acc.model} cannot spread evenly over {m} {form.m_key} x {c_count} chips = {m * c_count} chips",
            path + (form.m_key,),
            _spread_hint(ctx, form, links, c_count, n, a_count, ports, m, switch),
        )
    spread = Spread(m, c_count, links)
    k = spread.per_chip
    if n * a_count * k > ports:
        most = ports // (a_count * k)
        raise ctx.fail(
            "port-budget",
            f"each {chips.model or 'switch'} chip needs {n * a_count * k} ports ({n} {form.n_key} x {a_count} "
            f"accelerators x {k} link(s)); {switch} chips have {ports}",
            path + (form.n_key,),
            f"at most {most} {form.n_key} with {m} {form.m_key}; or "
            + _spread_hint(ctx, form, links, c_count, n, a_count, ports, m, switch),
        )

    policy_path = path + ("media",) if spec.media else ("media",)
    chooser = ctx.chooser(spec.media, policy_path)
    name = spec.name
    stack = _stack(ctx, spec, path, form, cm, sm, n, m)
    ctx.reserve(spec.count * (n + m + stack.extra_devices), path + ("count",))
    placement_path = ctx.placement_path(path, spec.placement)
    boards_all: list[int] = []
    for s in range(spec.count):
        rack, u0 = ctx.geometry.place(spec.placement, s, stack.height_u, placement_path)
        chassis = -1
        if stack.chassis is not None:
            chassis = ctx.add_device(
                name=ctx.name("chassis", "{domain}-sn{supernode:02d}", path, domain=name, supernode=s + 1),
                role="chassis",
                model=stack.chassis,
                group=name,
                placement=None,
                slot=0,
                origin=path,
                coords=(("domain", name), ("supernode", s)),
                at=(rack, u0 + stack.chassis_u),
            ).index
        for j, shelf_u in enumerate(stack.shelf_u):
            assert stack.shelf_model is not None  # shelf units are planned only with a shelf model
            ctx.add_device(
                name=ctx.name("power-shelf", form.shelf_name, path, domain=name, supernode=s + 1, shelf=j + 1),
                role="power-shelf",
                model=stack.shelf_model,
                group=name,
                placement=None,
                slot=0,
                origin=path,
                coords=(("domain", name), ("supernode", s), ("shelf", j)),
                at=(rack, u0 + shelf_u),
            )
        boards: list[int] = []
        switches: list[int] = []
        for b in range(n):
            dev = ctx.add_device(
                name=ctx.name("compute-board", form.compute_name, path, domain=name, supernode=s + 1, board=b + 1),
                role="compute-board",
                model=compute,
                group=name,
                placement=None,
                slot=0,
                origin=path,
                coords=(("domain", name), ("supernode", s), ("board", b)),
                at=(rack, u0 + stack.compute_u[b]),
            )
            if chassis >= 0:
                dev.chassis, dev.slot = chassis, f"F{b + 1:02d}"
            boards.append(dev.index)
        for j in range(m):
            dev = ctx.add_device(
                name=ctx.name("switch-board", form.switch_name, path, domain=name, supernode=s + 1, board=j + 1),
                role="switch-board",
                model=switch,
                group=name,
                placement=None,
                slot=0,
                origin=path,
                coords=(("domain", name), ("supernode", s), ("switch_board", j)),
                tier=1,
                at=(rack, u0 + stack.switch_u[j]),
            )
            if chassis >= 0:
                # A vertical board at the rear spans the chassis: its ports sit at mid-chassis.
                dev.chassis, dev.slot, dev.height_u = chassis, f"R{j + 1:02d}", stack.chassis_height_u
            switches.append(dev.index)
        ends: list[tuple[int, int, int, int]] = []
        for b, board in enumerate(boards):
            for j, sw in enumerate(switches):  # connector (b, j): board b's links with l % m == j
                for a in range(a_count):
                    g = b * a_count + a
                    for link in range(j, links, m):
                        _, c, p = spread.target(g, link)
                        ends.append((board, cb_ports[a * links + link], sw, sb_ports[c * ports + p]))
        ctx.add_link_rows(name, ends, chooser=chooser, origin=path, kind=form.link_kind)
        boards_all.extend(boards)
    # Only the compute boards are endpoints: a scale-out fabric takes their data ports (NICs).
    ctx.groups[name] = boards_all
    f.facts[name] = {
        "kind": form.kind,
        "levels": 1,
        "supernodes": spec.count,
        "compute_boards": n,
        "switch_boards": m,
        "accelerators_per_board": a_count,
        "accelerators_per_supernode": n * a_count,
        "accelerators": spec.count * n * a_count,
        "chips_per_switch_board": c_count,
        "chips_per_supernode": m * c_count,
        "chip_ports": ports,
        "chip_ports_used": n * a_count * k,
        "links_per_accelerator": links,
        "links_per_chip_per_accelerator": k,
        "link_gbps": acc.link_gbps,
        "connectors_per_supernode": n * m,
        "links_per_connector": a_count * links // m,
        "max_compute_boards": ports // (a_count * k),
        "chassis": stack.chassis,
        "chassis_slots": {"front": stack.front_slots, "rear": stack.rear_slots} if stack.chassis else None,
        "power_shelves_per_supernode": len(stack.shelf_u),
        "power_shelf": stack.shelf_model,
    }


@BUILDERS.register("two-level")
def build_two_level(ctx: BuildContext, spec: TwoLevelDomain, path: tuple) -> None:
    f = ctx.fabric
    one_level = sorted(n for n, fa in f.facts.items() if is_one_level(fa))
    order: dict[str, int] = {}
    for i, dname in enumerate(spec.domains):
        facts = f.facts.get(dname)
        where = path + ("domains", i)
        if not is_one_level(facts):
            later = _domain_index(ctx, dname)
            hint = (
                f"list {dname!r} before this entry in scaleup:"
                if later is not None and ctx.blueprint.scaleup[later].kind in ONE_LEVEL
                else did_you_mean(dname, one_level)
            )
            raise ctx.fail("unknown-reference", f"no orthogonal or switched scale-up domain named {dname!r} (yet)", where, hint)
        if dname in order:
            raise ctx.fail("unknown-reference", f"{dname!r} is listed twice", where, "list each domain once")
        if facts.get("joined_by"):
            raise ctx.fail(
                "unknown-reference",
                f"{dname!r} is already joined by {facts['joined_by']!r}",
                where,
                "a domain's uplinks go to one second level",
            )
        order[dname] = i

    # L1 chips in (domain, supernode, switch board, chip) order; devices were created in that order.
    per_domain: dict[str, list[int]] = {d: [] for d in order}
    for dev in f.devices:
        if dev.role == "switch-board" and dev.group in per_domain:
            per_domain[dev.group].append(dev.index)
    available: dict[str, int] = {}
    for dname, i in order.items():
        model_name = f.devices[per_domain[dname][0]].model
        model: DeviceModel = f.models[model_name]
        up = len(f.layouts[model_name].ports_of("uplink"))
        c = model.switch_chips.count if model.switch_chips else 1
        bp_index = _domain_index(ctx, dname)
        where = ("scaleup", bp_index) if bp_index is not None else path + ("domains", i)
        if up == 0 or up % c:
            with_up = sorted(
                n for n, dm in ctx.catalogue.devices.items() if dm.switch_chips and any(g.role == "uplink" for g in dm.ports)
            )
            raise ctx.fail(
                "scaleup-uplinks",
                f"{model_name} (switch boards of {dname}) has {up} uplink ports"
                + ("" if up == 0 else f", not a whole number per chip ({c} chips)"),
                where,
                "a second level needs switch boards with uplink ports: " + (", ".join(with_up) or "add one to the catalogue"),
            )
        available[dname] = up // c
    uplinks = spec.uplinks_per_chip or min(available.values())
    short = [d for d, u in available.items() if u < uplinks]
    if short:
        raise ctx.fail(
            "scaleup-uplinks",
            f"{uplinks} uplinks per chip asked; switch boards of {', '.join(short)} have {min(available[d] for d in short)}",
            path + ("uplinks_per_chip",),
            f"at most {min(available.values())}",
        )

    l1: list[tuple[int, int, int]] = []  # (switch board, chip, first uplink port of the chip)
    plane_of: list[int] = []  # per L1 chip: its position in its supernode (board x chips + chip)
    per_supernode: set[int] = set()
    for dname in order:
        for sb in per_domain[dname]:
            model_name = f.devices[sb].model
            up_ports = f.layouts[model_name].ports_of("uplink")
            board_chips = f.models[model_name].switch_chips
            assert board_chips is not None  # the L1 builder placed only boards with switch chips
            c = board_chips.count
            per = len(up_ports) // c
            board = f.devices[sb].coord("switch_board")
            l1.extend((sb, chip, up_ports[chip * per]) for chip in range(c))
            plane_of.extend(board * c + chip for chip in range(c))
        joined_facts = f.facts[dname]
        assert is_one_level(joined_facts)
        per_supernode.add(joined_facts["chips_per_supernode"])
    planes = 1
    if spec.planes:
        if len(per_supernode) > 1:
            raise ctx.fail(
                "scaleup-planes",
                f"planes join L1 chip c of every supernode, but the joined domains have {sorted(per_supernode)} L1 chips "
                "per supernode",
                path + ("planes",),
                "join domains whose supernodes have the same switch boards, or leave planes out",
            )
        planes = per_supernode.pop()

    l2m = ctx.model(spec.switch, path + ("switch",), ("switch", "switch-board"))
    if l2m.switch_chips is None:
        raise ctx.fail(
            "catalogue", f"{spec.switch} lists no switch_chips", path + ("switch",), "a level-2 switch needs 'switch_chips:'"
        )
    c2, r2 = l2m.switch_chips.count, l2m.switch_chips.ports_per_chip
    n_l1 = len(l1)
    per_plane = n_l1 // planes  # L1 chips one level-2 plane joins (one per supernode when planed)
    valid = [s for s in range(1, uplinks + 1) if uplinks % (s * c2) == 0 and per_plane * (uplinks // (s * c2)) <= r2]
    switches = spec.switches or (valid[0] if valid else 0)
    if switches not in valid:
        where = path + ("switches",) if spec.switches else path + ("domains",)
        scope = f"{per_plane} L1 chips per plane" if spec.planes else f"{n_l1} L1 chips"
        hint = (
            f"switches: one of {', '.join(map(str, valid))}" + (" per plane" if spec.planes else "")
            if valid
            else f"at most {r2} L1 chips reach {spec.switch} evenly ({per_plane} here): join fewer supernodes, "
            + ("" if spec.planes else "planes: true (plane c joins L1 chip c of every supernode), ")
            + "or use a level-2 switch with more ports per chip"
        )
        raise ctx.fail(
            "scaleup-spread",
            f"{scope} x {uplinks} uplinks cannot spread evenly over {switches or 'any number of'} {spec.switch} "
            f"({c2} chips of {r2} ports each)",
            where,
            hint,
        )
    x_chips = switches * c2  # per plane
    p = uplinks // x_chips
    ctx.reserve(planes * switches, path + ("switches",))
    l2: list[int] = []  # by plane x switches + switch
    for plane in range(planes):
        for s in range(switches):
            index = plane * switches + s
            if spec.planes:
                name = ctx.name(
                    "l2-switch", "{domain}-l2-p{plane:02d}-{switch:02d}", path,
                    domain=spec.name, plane=plane + 1, switch=s + 1, index=index + 1,
                )  # fmt: skip
                coords: tuple = (("domain", spec.name), ("plane", plane), ("l2", s))
            else:
                name = ctx.name("l2-switch", "{domain}-l2-{index:02d}", path, domain=spec.name, index=s + 1)
                coords = (("domain", spec.name), ("l2", s))
            l2.append(
                ctx.add_device(
                    name=name,
                    role="l2-switch",
                    model=spec.switch,
                    group=spec.name,
                    placement=spec.placement,
                    slot=index,
                    origin=path,
                    coords=coords,
                    tier=2,
                ).index
            )
    l2_ports = f.layouts[spec.switch].ports_of("scaleup")
    policy_path = path + ("media",) if spec.media else ("media",)
    chooser = ctx.chooser(spec.media, policy_path)
    # Position of each L1 chip within its plane: its supernode's order (planed), or its global index.
    seen: dict[int, int] = {}
    position: list[int] = []
    for i in range(n_l1):
        key = plane_of[i] if spec.planes else 0
        position.append(seen.get(key, 0) if spec.planes else i)
        seen[key] = seen.get(key, 0) + 1
    first_l2 = [(plane_of[i] if spec.planes else 0) * switches for i in range(n_l1)]
    ups = [
        (sb, first_up + u, l2[first_l2[i] + (u // p) // c2], l2_ports[((u // p) % c2) * r2 + position[i] * p + u % p])
        for i, (sb, _chip, first_up) in enumerate(l1)
        for u in range(uplinks)
    ]
    ctx.add_link_rows(spec.name, ups, chooser=chooser, origin=path)
    # The joined domain is one accelerator domain: a scale-out fabric may take it as an endpoint group.
    ctx.groups[spec.name] = [b for d in order for b in ctx.groups[d]]
    accelerators = 0
    for dname in order:
        joined = f.facts[dname]
        assert is_one_level(joined)  # checked above
        joined["joined_by"] = spec.name
        accelerators += joined["accelerators"]
    f.facts[spec.name] = {
        "kind": "two-level",
        "levels": 2,
        "domains": list(order),
        "accelerators": accelerators,
        "l1_chips": n_l1,
        "planes": planes if spec.planes else 0,
        "l2_switches": planes * switches,
        "l2_switches_per_plane": switches,
        "l2_chips": planes * x_chips,
        "l2_chip_ports": r2,
        "l2_chip_ports_used": per_plane * p,
        "uplinks_per_chip": uplinks,
        "parallel": p,
        "max_l1_chips": (r2 // p) * planes,  # per plane: one per supernode
        "taper": spec.taper,
    }
