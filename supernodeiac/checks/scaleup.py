"""Scale-up checks, measured on the Fabric's links.

* one hop: every accelerator of a domain instance reaches every other through one switch chip.
  Measured per accelerator as the set of chips its links reach; accelerators with the same set
  are grouped, so the pair test runs over distinct sets (one set when the spread is even), never
  over accelerator pairs;
* spread: every accelerator reaches every chip of its instance with the same number of links;
* bandwidth: per accelerator, links x link rate x 2 / 8 (GB/s, both directions) against the
  declared ``per_accelerator_gbytes``; boards with ``internal_scaleup`` (HGX) or ``internal_mesh`` (a
  switchless full mesh: MI300X xGMI) are domains too,
  figured from the catalogue;
* second level: every L1 chip reaches every L2 chip (of its plane, when planed: plane c joins L1
  chip c of every supernode, read from the boards' coordinates) with the same number of links, and the
  taper (L1 chip down vs up bandwidth) against the declared target;
* planning (issue 3): per-accelerator scale-up >= ``planning.scaleup_to_scaleout_min`` x its
  scale-out share (its board's cabled data ports / accelerators): a warning below it, an error
  below ``planning.scaleup_to_scaleout_floor``;
* the class of each domain (SuperNode / SuperPoD / SuperCluster) as info.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from ..catalog.types import Accelerators, DeviceModel
from ..fabric import Fabric
from ..fabric.fabric_facts import OneLevelFacts, TwoLevelFacts, is_one_level
from ..fabric.port_owners import PortMap
from ..facts.mesh import mesh_facts
from ..facts.system_class import SUPERNODE_MIN, system_class_of
from ..findings import Finding, error, info, warning
from ..model.base import format_fraction, ratio_value
from ..model.scaleup import ONE_LEVEL
from .base import CHECKS, CheckContext

Chip = tuple[int, int]  # (device index, chip)
Acc = tuple[int, int]  # (compute board device index, accelerator)


_CLASS_TEXT = {"supercluster": "SuperCluster", "superpod": "SuperPoD", "supernode": "SuperNode"}


def system_class(accelerators: int, levels: int) -> str:
    cls = system_class_of(accelerators, levels)
    return _CLASS_TEXT.get(cls, f"server (below the SuperNode class of {SUPERNODE_MIN})")


def gbytes(gbps: float) -> float:
    """Gb/s per direction -> GB/s both directions (as vendors quote scale-up bandwidth)."""
    return gbps * 2 / 8


@dataclass
class Measure:
    """What one pass over the links finds."""

    acc_chips: dict[Acc, dict[Chip, int]] = field(default_factory=lambda: defaultdict(dict))
    acc_gbps: dict[Acc, float] = field(default_factory=lambda: defaultdict(float))
    chip_down: dict[Chip, float] = field(default_factory=lambda: defaultdict(float))
    chip_up: dict[Chip, float] = field(default_factory=lambda: defaultdict(float))
    l2_pairs: dict[Chip, dict[Chip, int]] = field(default_factory=lambda: defaultdict(dict))
    data_gbps: dict[int, float] = field(default_factory=lambda: defaultdict(float))


def measure(f: Fabric) -> Measure:
    one = {n for n, fa in f.facts.items() if fa.get("kind") in ONE_LEVEL}
    two = {n for n, fa in f.facts.items() if fa.get("kind") == "two-level"}
    pm = PortMap(f)
    devices, models = f.devices, f.models
    # Only the models some device has: a fabric without accelerators (a plain Dragonfly) then
    # has nothing to measure, and skips the walk over its 10^5-10^6 links.
    data_ports: dict[str, frozenset[int]] = {
        name: frozenset(f.layouts[name].ports_of("data"))
        for name in sorted({d.model for d in devices})
        if models[name].accelerators and name in f.layouts
    }
    out = Measure()
    if not (one or two or data_ports):
        return out
    data_gbps = out.data_gbps
    dev_ports = [data_ports.get(d.model) for d in devices]  # each device's data ports, or None
    t = f.links
    # Per spec, decided once: which level its links belong to (1, 2, or 0 for data links), their rate.
    level_of = [1 if spec.fabric in one else 2 if spec.fabric in two else 0 for spec in t.specs]
    gbps_of = [spec.gbps for spec in t.specs]
    for a, ap, b, bp, s in zip(t.a, t.a_port, t.b, t.b_port, t.spec):
        level = level_of[s]
        if not level:  # the hot path on big fabrics: two list lookups and two set tests
            ports = dev_ports[a]
            if ports is not None and ap in ports:
                data_gbps[a] += gbps_of[s]
            ports = dev_ports[b]
            if ports is not None and bp in ports:
                data_gbps[b] += gbps_of[s]
        elif level == 1:
            if models[devices[a].model].accelerators is None:
                a, ap, b, bp = b, bp, a, ap
            acc, chip = pm.unit(a, ap), pm.unit(b, bp)
            if acc is None or chip is None:
                continue
            chips = out.acc_chips[(a, acc)]
            chips[(b, chip)] = chips.get((b, chip), 0) + 1
            out.acc_gbps[(a, acc)] += gbps_of[s]
            out.chip_down[(b, chip)] += gbps_of[s]
        else:
            if devices[a].tier > devices[b].tier:
                a, ap, b, bp = b, bp, a, ap
            lo, hi = pm.unit(a, ap), pm.unit(b, bp)
            if lo is None or hi is None:
                continue
            pairs = out.l2_pairs[(a, lo)]
            pairs[(b, hi)] = pairs.get((b, hi), 0) + 1
            out.chip_up[(a, lo)] += gbps_of[s]
    return out


def _paths(ctx: CheckContext) -> dict[str, tuple]:
    return {spec.name: ("scaleup", i) for i, spec in enumerate(ctx.blueprint.scaleup)}


@CHECKS.register("scaleup")
def check_scaleup(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    if not any(m.accelerators for m in f.models.values()):
        return
    m = measure(f)
    paths = _paths(ctx)
    per_acc: dict[int, float] = {}  # compute board -> worst per-accelerator scale-up GB/s
    for name, facts in sorted(f.facts.items()):
        if is_one_level(facts):
            yield from _one_level(ctx, m, name, facts, paths.get(name, ()), per_acc)
    for name, facts in sorted(f.facts.items()):
        if facts["kind"] == "two-level":
            yield from _two_level(ctx, m, name, facts, paths.get(name, ()))
    yield from _internal(ctx)
    yield from _ratio(ctx, m, per_acc)


def _one_level(
    ctx: CheckContext, m: Measure, name: str, facts: OneLevelFacts, path: tuple, per_acc: dict[int, float]
) -> Iterator[Finding]:
    f = ctx.fabric
    boards: dict[int, list[int]] = defaultdict(list)
    switches: dict[int, list[int]] = defaultdict(list)
    for d in f.devices:
        if d.group != name:
            continue
        if d.role == "compute-board":
            boards[d.coord("supernode", 0)].append(d.index)
        elif d.role == "switch-board":
            switches[d.coord("supernode", 0)].append(d.index)
    not_one_hop: list[str] = []
    uneven: list[str] = []
    worst_gb, best_gb, worst_links, size = float("inf"), 0.0, 10**9, 0
    for sn in sorted(boards):
        chips = {(sw, c) for sw in switches.get(sn, []) for c in range(_chips_of(f, sw))}
        sets: dict[frozenset[Chip], Acc] = {}
        size = max(size, sum(_accelerators_of(f, b).count for b in boards[sn]))
        for b in boards[sn]:
            acc_model = _accelerators_of(f, b)
            gb_board = float("inf")
            for a in range(acc_model.count):
                reached = m.acc_chips.get((b, a), {})
                counts = set(reached.values())
                if set(reached) != chips or len(counts) > 1:
                    uneven.append(f"{f.devices[b].name} accelerator {a} reaches {len(reached)} of {len(chips)} chips")
                sets.setdefault(frozenset(reached), (b, a))
                gb = gbytes(m.acc_gbps.get((b, a), 0.0))
                gb_board = min(gb_board, gb)
                best_gb = max(best_gb, gb)
                worst_links = min(worst_links, sum(reached.values()))
            per_acc[b] = gb_board
            worst_gb = min(worst_gb, gb_board)
        # One hop: every pair of accelerators shares a chip. Pairs of distinct chip sets only.
        distinct = sorted(sets.items(), key=lambda kv: kv[1])
        for i, (s1, a1) in enumerate(distinct):
            for s2, a2 in distinct[i:]:
                if not s1 & s2:
                    first, second = f.devices[a1[0]].name, f.devices[a2[0]].name
                    not_one_hop.append(f"{first} accelerator {a1[1]} and {second} accelerator {a2[1]} share no switch chip")
    if worst_gb == float("inf"):
        worst_gb = 0.0
    if not_one_hop:
        yield error(
            "scaleup-one-hop",
            f"{name}: {len(not_one_hop)} accelerator pair group(s) are more than one switch hop apart, e.g. {not_one_hop[0]}",
            path,
            "every accelerator's links must reach a chip shared with every other accelerator of its supernode",
        )
    elif uneven:
        yield warning(
            "scaleup-spread",
            f"{name}: {len(uneven)} accelerator(s) do not spread their links evenly over all switch chips, e.g. {uneven[0]}",
            path,
            "uneven spread leaves some chips hotter than others and loses bandwidth when a chip fails",
        )
    declared = _declared(ctx, path)
    if declared is not None and worst_gb + 1e-9 < declared:
        yield error(
            "scaleup-bandwidth",
            f"{name}: measured {worst_gb:g} GB/s per accelerator (worst), declared {declared:g} GB/s",
            path + ("per_accelerator_gbytes",),
            f"declare what the design gives ({worst_gb:g}), or use boards with more or faster scale-up links",
        )
    chips_n = facts.get("chips_per_supernode", 0)
    joined = facts.get("joined_by")
    cls = system_class(size, 1)
    text = (
        f"{name}: {len(boards)} {facts['kind']} supernode(s) of {size} accelerators "
        f"({facts['compute_boards']} compute x {facts['switch_boards']} switch boards, {chips_n} chips); "
        f"{'each accelerator reaches every chip in one hop' if not uneven and not not_one_hop else 'spread uneven'}, "
        f"{worst_links if worst_links < 10**9 else 0} links and {worst_gb:g} GB/s per accelerator"
        + (f" (declared {declared:g})" if declared is not None else "")
        + f"; class {cls}"
        + (f"; joined into {joined} by a second level" if joined else "")
    )
    yield info("scaleup-class", text, path)


def _declared(ctx: CheckContext, path: tuple) -> float | None:
    if len(path) < 2:
        return None
    return getattr(ctx.blueprint.scaleup[path[1]], "per_accelerator_gbytes", None)


def _two_level(ctx: CheckContext, m: Measure, name: str, facts: TwoLevelFacts, path: tuple) -> Iterator[Finding]:
    f = ctx.fabric
    joined = set(facts["domains"])
    planed = bool(facts.get("planes"))
    l1: list[Chip] = []
    l1_plane: dict[Chip, int] = {}  # planed: L1 chip c of a supernode (board x chips + chip) -> plane c
    l2_planes: dict[int, set[Chip]] = defaultdict(set)  # plane (0 when not planed) -> its L2 chips
    for d in f.devices:
        chips = f.models[d.model].switch_chips
        if chips is None:
            continue
        if d.group in joined and d.role == "switch-board":
            l1.extend((d.index, c) for c in range(chips.count))
            for c in range(chips.count):
                l1_plane[(d.index, c)] = d.coord("switch_board", 0) * chips.count + c if planed else 0
        elif d.group == name:
            l2_planes[d.coord("plane", 0) if planed else 0].update((d.index, c) for c in range(chips.count))
    l2 = set().union(*l2_planes.values()) if l2_planes else set()
    unreached: list[str] = []
    parallel: set[int] = set()
    worst = Fraction(0)
    worst_chip: Chip | None = None
    for chip in l1:
        pairs = m.l2_pairs.get(chip, {})
        parallel.update(pairs.values())
        want = l2_planes.get(l1_plane[chip], set())
        if set(pairs) != want:
            where = f" of plane {l1_plane[chip] + 1}" if planed else ""
            unreached.append(
                f"{f.devices[chip[0]].name} chip {chip[1]} reaches {len(set(pairs) & want)} of {len(want)} L2 chips{where}"
                + (f" and {len(set(pairs) - want)} of other planes" if set(pairs) - want else "")
            )
        up, down = m.chip_up.get(chip, 0.0), m.chip_down.get(chip, 0.0)
        if up == 0:
            continue
        r = Fraction(down / up).limit_denominator(1000)
        if r > worst:
            worst, worst_chip = r, chip
    if unreached or len(parallel) > 1:
        yield error(
            "scaleup-l2-reach",
            f"{name}: L1 chips do not reach every L2 chip with the same number of links "
            f"({len(unreached)} short; parallel links {sorted(parallel)}), e.g. {(unreached or ['uneven'])[0]}",
            path,
            "every L1 chip needs the same number of uplinks to every L2 chip"
            + (" of its plane (plane c: L1 chip c of every supernode)" if planed else ""),
        )
    declared = ratio_value(facts["taper"])
    measured = f"{format_fraction(worst)}:1" if worst.denominator == 1 else f"{float(worst):.3g}:1"
    if worst > declared:
        chip_text = f" at {f.devices[worst_chip[0]].name} chip {worst_chip[1]}" if worst_chip else ""
        yield error(
            "scaleup-taper",
            f"{name}: L1 down:up taper measures {measured}{chip_text}, declared {facts['taper']}",
            path + ("taper",),
            "more uplinks per chip (uplinks_per_chip), or declare the taper the design has",
        )
    accelerators = facts["accelerators"]
    up_total = sum(m.chip_up.get(c, 0.0) for c in l1)
    shape = (
        f"{len(l1)} L1 chips over {len(l2_planes)} planes of {len(l2) // max(1, len(l2_planes))} L2 chips"
        if planed
        else f"{len(l1)} L1 chips x {len(l2)} L2 chips"
    )
    yield info(
        "scaleup-class",
        f"{name}: {len(facts['domains'])} domain(s), {accelerators} accelerators over 2 switching levels "
        f"({shape}, {'/'.join(map(str, sorted(parallel))) or 0} link(s) per pair); "
        f"taper L1 down:up measured {measured} (declared {facts['taper']}); "
        f"{gbytes(up_total / accelerators) if accelerators else 0:g} GB/s per accelerator through level 2; "
        f"class {system_class(accelerators, 2)}",
        path,
    )


def _groups_text(groups: list[str]) -> str:
    """'a', 'a, b' or 'a, b, c and 13 more groups': a big fabric's node groups in one line."""
    if len(groups) <= 3:
        return ", ".join(groups)
    return f"{', '.join(groups[:3])} and {len(groups) - 3} more groups"


def _on_board(model: DeviceModel) -> bool:
    """Whether the model's accelerators meet on on-board switch chips or an on-board mesh."""
    return (model.internal_scaleup is not None or model.internal_mesh is not None) and model.accelerators is not None


def _internal(ctx: CheckContext) -> Iterator[Finding]:
    """Boards whose accelerators meet on on-board switch chips (HGX): a domain per board, one line per model."""
    f = ctx.fabric
    seen: dict[str, tuple[set[str], int, tuple]] = {}
    boards = {m for m in f.device_arrays().models if _on_board(f.models[m])}
    for d in f.devices if boards else ():  # none in a fabric without such boards: no walk of 10^6 devices
        model = f.models[d.model]
        if (model.internal_scaleup is None and model.internal_mesh is None) or model.accelerators is None:
            continue
        if d.model in seen:
            groups, n, origin = seen[d.model]
            groups.add(d.group)
            seen[d.model] = (groups, n + 1, origin)
        else:
            seen[d.model] = ({d.group}, 1, d.origin)
    for model_name, (groups, n, origin) in sorted(seen.items()):
        model = f.models[model_name]
        acc, internal, mesh = model.accelerators, model.internal_scaleup, model.internal_mesh
        assert acc is not None  # only such models were collected above
        if mesh is not None:
            board = mesh_facts(f).boards[model_name]
            yield info(
                "scaleup-class",
                f"{_groups_text(sorted(groups))}: {n} x {model_name}, each a switchless full mesh of {acc.count} "
                f"{acc.model} ({board.links} point-to-point links, {board.links_per_pair} per pair: one hop), "
                f"{board.accelerator_bidir_gbytes:g} GB/s per accelerator, {board.pair_gbytes:g} GB/s per pair one way "
                f"(board traces, not cables); class {system_class(acc.count, 1)}",
                origin,
            )
            continue
        assert internal is not None
        spread = "+".join(map(str, internal.links_per_chip))
        yield info(
            "scaleup-class",
            f"{_groups_text(sorted(groups))}: {n} x {model_name}, each a scale-up domain of {acc.count} {acc.model} over "
            f"{internal.switch_chips} on-board switch chips ({spread} links: one hop), {acc.bidir_gbytes:g} GB/s per "
            f"accelerator; class {system_class(acc.count, 1)}",
            origin,
        )


def _ratio(ctx: CheckContext, m: Measure, per_acc: dict[int, float]) -> Iterator[Finding]:
    """Planning rule: scale-up per accelerator >= N x its share of the board's scale-out.

    Warnings and errors name each node group or domain; groups that pass with the same figures
    share one info line.
    """
    f, planning = ctx.fabric, ctx.blueprint.planning
    worst: dict[str, tuple[float, float, float, int]] = {}  # group -> (ratio, up GB/s, out GB/s, device)
    for dev, out_gbps in m.data_gbps.items():
        d = f.devices[dev]
        model = f.models[d.model]
        acc = model.accelerators
        if acc is None or out_gbps == 0:
            continue
        if dev in per_acc:
            up = per_acc[dev]
        elif model.internal_scaleup is not None or model.internal_mesh is not None:
            up = acc.bidir_gbytes
        else:
            up = 0.0
        out = gbytes(out_gbps / acc.count)
        ratio = up / out
        if d.group not in worst or ratio < worst[d.group][0]:
            worst[d.group] = (ratio, up, out, dev)
    floor, minimum = planning.scaleup_to_scaleout_floor, planning.scaleup_to_scaleout_min
    passing: dict[tuple[float, float, float], list[str]] = defaultdict(list)
    origins: dict[tuple[float, float, float], tuple] = {}
    for group, (ratio, up, out, dev) in sorted(worst.items()):
        d = f.devices[dev]
        figures = f"scale-up {up:g} GB/s vs scale-out {out:g} GB/s per accelerator = {ratio:.3g}x"
        hint = "more scale-up links per accelerator, or less scale-out per accelerator (fewer or slower NICs)"
        if up == 0:
            figures += " (no scale-up domain: put the boards in a scale-up domain)"
        if floor is not None and ratio < floor:
            yield error("scaleup-ratio", f"{group}: {figures}, below the floor {floor:g}x", d.origin, hint)
        elif ratio < minimum:
            yield warning("scaleup-ratio", f"{group}: {figures}, below the planning minimum {minimum:g}x", d.origin, hint)
        else:
            passing[(ratio, up, out)].append(group)
            origins.setdefault((ratio, up, out), d.origin)
    for key, groups in sorted(passing.items(), key=lambda kv: kv[1][0]):
        ratio, up, out = key
        yield info(
            "scaleup-ratio",
            f"{_groups_text(groups)}: scale-up {up:g} GB/s vs scale-out {out:g} GB/s per accelerator = {ratio:.3g}x "
            f"(planning minimum {minimum:g}x)",
            origins[key],
        )


def _chips_of(f: Fabric, switch_board: int) -> int:
    chips = f.models[f.devices[switch_board].model].switch_chips
    return chips.count if chips is not None else 0


def _accelerators_of(f: Fabric, compute_board: int) -> Accelerators:
    acc = f.models[f.devices[compute_board].model].accelerators
    assert acc is not None  # the builder made compute boards only of models with accelerators
    return acc
