"""What every builder shares: the blueprint, the catalogue, the Fabric being built, and the
helpers that keep names, placement, lengths and media consistent across builders."""

from __future__ import annotations

import difflib
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from ..catalog.fit import CageShape
from ..catalog.types import Catalogue, DeviceModel, PortGroup
from ..fabric import Coords, Device, Fabric, LinkSpec
from ..findings import BuildError, Finding, error
from ..model.base import MAX_DEVICES
from ..model.blueprint import Blueprint
from ..model.common import MediaPolicy
from ..model.site import Placement
from .geometry import Geometry
from .media import Choice, MediaChooser


def did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "known: " + ", ".join(sorted(known)[:12]) + (" ..." if len(known) > 12 else "")


@dataclass(slots=True)
class PairInfo:
    """A link between two port groups, whatever its length."""

    lanes: int
    lane_gbps: float
    a: CageShape
    b: CageShape
    transport: str
    specs: dict[Choice, int]  # media choice -> spec index


@dataclass(frozen=True, slots=True)
class SpecSource:
    """How the links of one spec were chosen: enough to choose again for them."""

    chooser: MediaChooser
    pair: PairInfo
    fabric: str
    kind: str
    tier: str
    origin: tuple


def link_rate(ga: PortGroup, gb: PortGroup) -> tuple[int, float]:
    """(lanes, lane Gb/s) of a link between two ports: the narrower width at the slower lane rate
    of its two ends (x16 into a x8 port runs x8)."""
    return min(ga.lanes, gb.lanes), min(ga.lane_gbps, gb.lane_gbps)


_MODEL = operator.attrgetter("model")
_INDEX = operator.attrgetter("index")


@dataclass
class _ModelTables:
    """What :meth:`BuildContext._group_ids_bulk` indexes: every device's model id (the first
    ``done`` devices), and per model id its first row in ``group_ids`` and its port count."""

    ids: dict[str, int] = field(default_factory=dict)  # model -> model id
    model: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    done: int = 0
    base: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    total: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    group_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # device -> its Device.index int object: link columns take these rather than a new boxed
    # int per link end (a Dragonfly+'s 2.6 x 10^6 links name 1.1 x 10^6 devices)
    ints: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))

    def add_model(self, port_group_ids: list[int]) -> None:
        self.base = np.append(self.base, len(self.group_ids))
        self.total = np.append(self.total, len(port_group_ids))
        self.group_ids = np.concatenate((self.group_ids, np.array(port_group_ids, dtype=np.int64)))


@dataclass
class BuildContext:
    blueprint: Blueprint
    catalogue: Catalogue
    fabric: Fabric
    geometry: Geometry
    findings: list[Finding] = field(default_factory=list)
    # Devices made for each blueprint entry (node group or domain), in index order, so a
    # scale-out builder can find its endpoints without re-deriving them.
    groups: dict[str, list[int]] = field(default_factory=dict)
    _choosers: dict[int, MediaChooser] = field(default_factory=dict)
    _placement_paths: dict[tuple, tuple] = field(default_factory=dict)
    # (fabric, id of the media chooser, origin, kind, tier) -> {(port group id a, b, length): spec index}
    _specs: dict[tuple, dict[tuple[int, int, float], int]] = field(default_factory=dict)
    _port_group_ids: dict[str, list[int]] = field(default_factory=dict)  # model -> port -> group id
    _port_groups: list[PortGroup] = field(default_factory=list)  # group id -> group
    _group_models: list[str] = field(default_factory=list)  # group id -> its device model
    _group_index: dict[int, int] = field(default_factory=dict)  # id(group) -> group id
    # The same keys as _specs -> {(group id a, b): PairInfo}
    _pairs: dict[tuple, dict[tuple[int, int], PairInfo]] = field(default_factory=dict)
    # spec index -> how its links were chosen (for the per-cage settling after the build)
    spec_sources: dict[int, SpecSource] = field(default_factory=dict)
    _tables: _ModelTables = field(default_factory=_ModelTables)
    _index_coords: list[Coords] = field(default_factory=list)  # i -> (("index", i),), shared by node groups

    def __post_init__(self) -> None:
        self.geometry.groups = self.groups  # placements that follow a group read its racks

    # -- catalogue --------------------------------------------------------------------------
    def model(self, name: str, path: tuple, kind: str | tuple[str, ...] | None = None) -> DeviceModel:
        """A catalogue device, or a build error at ``path`` with the nearest names."""
        kinds = (kind,) if isinstance(kind, str) else kind
        model = self.catalogue.devices.get(name)
        if model is None:
            known = [n for n, m in self.catalogue.devices.items() if kinds is None or m.kind in kinds]
            raise BuildError(
                [error("unknown-catalogue-item", f"no catalogue device named {name!r}", path, did_you_mean(name, known))]
            )
        if kinds is not None and model.kind not in kinds:
            known = [n for n, m in self.catalogue.devices.items() if m.kind in kinds]
            raise BuildError(
                [
                    error(
                        "wrong-catalogue-kind",
                        f"{name!r} is a {model.kind}, here a {' or '.join(kinds)} is needed",
                        path,
                        did_you_mean(name, known),
                    )
                ]
            )
        return model

    # -- devices ----------------------------------------------------------------------------
    def name(self, role: str, default: str, path: tuple, **fields: Any) -> str:
        template = self.blueprint.naming.devices.get(role, default)
        try:
            return template.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise BuildError(
                [
                    error(
                        "naming",
                        f"naming template {template!r} for {role} cannot be filled: {exc}",
                        ("naming", "devices", role) if role in self.blueprint.naming.devices else path,
                        "fields available: " + ", ".join(sorted(fields)),
                    )
                ]
            ) from None

    def reserve(self, count: int, path: tuple) -> None:
        """Refuse, at ``path``, a blueprint entry whose ``count`` devices would take the Fabric past
        MAX_DEVICES: before they are made, so a mistyped count is an error, not an exhausted machine."""
        have = len(self.fabric.devices)
        if have + count > MAX_DEVICES:
            raise self.fail(
                "size-limit",
                f"this entry adds {count:,} devices to the {have:,} already built; snc builds at most {MAX_DEVICES:,}",
                path,
                "check the count (a digit too many?) or split the deployment into several blueprints",
            )

    def add_device(
        self,
        *,
        name: str,
        role: str,
        model: str,
        group: str,
        placement: Placement | None,
        slot: int,
        origin: tuple,
        coords: Coords = (),
        tier: int = 0,
        u_offset: int = 0,
        per_slot_u: int | None = None,
        at: tuple[int, int] | None = None,
    ) -> Device:
        """Create and place a device. ``slot`` is its index within its placement; ``at`` places
        it at (rack index, lowest U) instead, for a device the builder places itself."""
        self.reserve(1, origin)
        height = self.catalogue.devices[model].height_u
        rack, u = at if at is not None else (-1, 0)
        if placement is not None:
            rack, u = self.geometry.place(placement, slot, per_slot_u or height, self.placement_path(origin, placement))
            u += u_offset
        device = Device(0, name, role, model, group, rack, u, height, coords, origin, tier)
        self.fabric.add_device(device)
        self.groups.setdefault(group, []).append(device.index)
        return device

    def add_placed_devices(
        self,
        *,
        names: list[str],
        role: str,
        model: str,
        group: str,
        placement: Placement,
        slots: list[int],
        origin: tuple,
        coords: list[Coords],
        tier: int = 0,
    ) -> list[int]:
        """:meth:`add_device` for each (name, slot, coords) in turn, in one pass when every slot
        fits (a Dragonfly+ places 6.5 x 10^4 switches): the same devices, indices and racks. A
        slot that does not fit, or a placement that follows ``group`` itself, takes the device
        by device path, which fails where it did."""
        height = self.catalogue.devices[model].height_u
        path = self.placement_path(origin, placement)
        fits = len(self.fabric.devices) + len(names) <= MAX_DEVICES and group not in (placement.follow or ())
        where = self.geometry.place_slots(placement, slots, height, path) if fits else None
        if where is None:
            return [
                self.add_device(
                    name=n, role=role, model=model, group=group, placement=placement, slot=s, origin=origin, coords=c, tier=tier
                ).index
                for n, s, c in zip(names, slots, coords, strict=True)
            ]
        first = len(self.fabric.devices)
        made = [
            Device(first + k, name, role, model, group, rack, u, height, c, origin, tier)
            for k, (name, (rack, u), c) in enumerate(zip(names, where, coords, strict=True))
        ]
        indices = self.fabric.add_devices(made)
        self.groups.setdefault(group, []).extend(indices)
        return list(indices)

    def index_coords(self, count: int) -> list[Coords]:
        """``(("index", i),)`` for i in 0..count-1, one tuple per i for the whole build: every node
        group's i-th node has the same coords (10^6 nodes in 10^2 groups: no tuple pair per node)."""
        made = self._index_coords
        if len(made) < count:
            made.extend(zip(zip(repeat("index"), range(len(made), count))))
        return made[:count]

    def placement_path(self, origin: tuple, placement: Any) -> tuple:
        """The blueprint path of ``placement`` inside the entry at ``origin``, found by identity,
        so a finding about it points at ``placement.leaf`` rather than at ``placement``."""
        key = (origin, id(placement))
        found = self._placement_paths.get(key)
        if found is None:
            entry: Any = self.blueprint
            for part in origin:
                entry = entry[part] if isinstance(part, int) else getattr(entry, str(part), None)
                if entry is None:
                    break
            inner = _path_to(entry, placement, depth=3) if entry is not None else None
            found = origin + (inner if inner is not None else ("placement",))
            self._placement_paths[key] = found
        return found

    # -- links ------------------------------------------------------------------------------
    def chooser(self, policy: MediaPolicy | None, path: tuple) -> MediaChooser:
        policy = policy or self.blueprint.media
        key = id(policy)
        if key not in self._choosers:
            self._choosers[key] = MediaChooser(self.catalogue, policy, path)
        return self._choosers[key]

    def connect(
        self,
        fabric: str,
        a: int,
        a_port: int,
        b: int,
        b_port: int,
        *,
        chooser: MediaChooser,
        origin: tuple,
        kind: str = "cable",
        tier: str = "",
    ) -> LinkSpec:
        """Cable (or mate) port ``a_port`` of device ``a`` to ``b_port`` of ``b``: length, rate, medium.

        Returns what the link is (lanes, lane rate, medium), for builders that add up bandwidth.
        Loops of 10^5 links pass whole lists to :meth:`add_links` or :meth:`add_link_rows`.
        """
        self.add_links(fabric, [a], [a_port], [b], [b_port], chooser=chooser, origin=origin, kind=kind, tier=tier)
        table = self.fabric.links
        return table.specs[table.spec[-1]]

    def add_links(
        self,
        fabric: str,
        a: Sequence[int],
        a_port: Sequence[int],
        b: Sequence[int],
        b_port: Sequence[int],
        *,
        chooser: MediaChooser,
        origin: tuple,
        kind: str = "cable",
        tier: str = "",
    ) -> None:
        """Cable ``a[i]``'s port ``a_port[i]`` to ``b[i]``'s ``b_port[i]`` for every i, in order.

        The builders' hot path: a fabric's 10^5-10^6 links go through here in a few calls, each
        a handful of passes over the lists rather than a Python call per link. Rate and medium
        depend only on the two port groups and the exact length (for one media policy and tier)
        and a fabric has few distinct such triples, so they are decided once per triple. The
        medium is the link's own best; :func:`build.cages.settle` then makes every cage hold one
        plug, for all links at once. ``tier`` (node-leaf, leaf-spine, spine-core, local, global)
        selects the policy's per-tier rules. Cable IDs are the Fabric's to format later.
        """
        n = len(a)
        if not len(a_port) == len(b) == len(b_port) == n:
            raise ValueError("add_links: the four lists differ in length")
        if n == 0:
            return
        chooser = chooser.for_tier(tier)
        devices = self.fabric.devices
        if n < 32:  # a few links (connect, small pools): numpy's per-call cost would dominate
            da = [devices[x] for x in a]
            db = [devices[x] for x in b]
            ga, gb = self._group_ids(da, a_port), self._group_ids(db, b_port)
            cable_length = self.geometry.cable_length
            lengths = [0.0] * n if kind == "connector" else [cable_length(x, y) for x, y in zip(da, db)]
        else:  # a builder loop's 10^5 links: per-device tables indexed in bulk, no Device read per link
            ia, ib = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
            ga, gb = self._group_ids_bulk(ia, a_port), self._group_ids_bulk(ib, b_port)
            lengths = [0.0] * n if kind == "connector" else self.geometry.lengths(ia, ib)
            if ia.min() >= 0 and ib.min() >= 0:  # the devices' own index ints (same values, shared objects)
                ints = self._tables.ints
                a, b = ints[ia].tolist(), ints[ib].tolist()
        spec = self._link_specs(fabric, kind, tier, chooser, origin, ga, gb, lengths)
        self.fabric.links.add_many(a, a_port, b, b_port, lengths, spec)

    def add_link_rows(
        self,
        fabric: str,
        ends: Sequence[tuple[int, int, int, int]],
        *,
        chooser: MediaChooser,
        origin: tuple,
        kind: str = "cable",
        tier: str = "",
    ) -> None:
        """:meth:`add_links` for links listed as ``(a, a_port, b, b_port)`` rows, the shape most
        builder loops produce (transposed into columns in C)."""
        if ends:
            a, a_port, b, b_port = zip(*ends, strict=True)
            self.add_links(fabric, a, a_port, b, b_port, chooser=chooser, origin=origin, kind=kind, tier=tier)

    def _group_ids(self, devices: list[Device], ports: Sequence[int]) -> list[int]:
        """The port group (as its small id) of each (device, port); IndexError for a port the device lacks."""
        group_ids = self._port_group_ids
        for model in {d.model for d in devices} - group_ids.keys():
            self._port_group_ids_of(model)
        try:
            if min(ports) < 0:
                raise IndexError
            return [group_ids[d.model][p] for d, p in zip(devices, ports)]
        except IndexError:
            bad = next(i for i, (d, p) in enumerate(zip(devices, ports)) if not 0 <= p < len(group_ids[d.model]))
            raise IndexError(f"port {ports[bad]} of {devices[bad].name} does not exist") from None

    def _group_ids_bulk(self, devices: np.ndarray, ports: Sequence[int]) -> list[int]:
        """:meth:`_group_ids` of many links at once: the device's model id and the port index
        one row of a flat table of every model's port group ids (same ids, same IndexError)."""
        table = self._model_tables()
        model = table.model[devices]
        port = np.asarray(ports, dtype=np.int64)
        if len(port) and ((port < 0) | (port >= table.total[model])).any():
            fabric_devices = self.fabric.devices
            return self._group_ids([fabric_devices[x] for x in devices.tolist()], ports)  # names the bad port
        return table.group_ids[table.base[model] + port].tolist()

    def _model_tables(self) -> _ModelTables:
        """Per-device model ids and the per-model port group ids (grown as devices are added:
        builders add devices between link loops)."""
        t = self._tables
        devices = self.fabric.devices
        if t.done < len(devices):
            ids, added = t.ids, devices[t.done :]
            models = list(map(_MODEL, added))
            if not ids.keys() >= set(models):
                for model in dict.fromkeys(models):
                    if model not in ids:
                        ids[model] = len(ids)
                        t.add_model(self._port_group_ids_of(model))
            new = np.fromiter(map(ids.__getitem__, models), dtype=np.int64, count=len(models))
            t.model = np.concatenate((t.model[: t.done], new))
            index = list(map(_INDEX, added))
            ints = np.empty(len(added), dtype=object)
            ints[:] = index if index == list(range(t.done, len(devices))) else range(t.done, len(devices))
            t.ints = np.concatenate((t.ints[: t.done], ints))
            t.done = len(devices)
        return t

    def _port_group_ids_of(self, model: str) -> list[int]:
        group_ids = self._port_group_ids
        if model not in group_ids:
            group_ids[model] = [self._group_id(g, model) for g in self.fabric.layouts[model].port_groups]
        return group_ids[model]

    def _link_specs(
        self,
        fabric: str,
        kind: str,
        tier: str,
        chooser: MediaChooser,
        origin: tuple,
        ga: list[int],
        gb: list[int],
        lengths: list[float],
    ) -> list[int]:
        """The spec index of every link, from its two port groups and its length."""
        loop = (fabric, id(chooser), origin, kind, tier)
        memo = self._specs.setdefault(loop, {})
        pairs = self._pairs.setdefault(loop, {})
        if ga.count(ga[0]) == len(ga) and gb.count(gb[0]) == len(gb):
            # One pair of port groups (a builder loop's usual case): the medium per distinct
            # length in one sorted sweep, then one dict lookup per link.
            pair = self._pair(pairs, ga[0], gb[0])
            choices = chooser.pick_many(
                pair.lane_gbps, pair.a, pair.b, set(lengths), transport=pair.transport, link_lanes=pair.lanes
            )
            # dict.fromkeys, not set: spec ids in the order of the lengths, whatever PYTHONHASHSEED says.
            spec_of = {c: self.spec_for(fabric, kind, tier, chooser, origin, pair, c) for c in dict.fromkeys(choices.values())}
            by_length = {length: spec_of[c] for length, c in choices.items()}
            return list(map(by_length.__getitem__, lengths))
        get = memo.get
        spec = [get(key, -1) for key in zip(ga, gb, lengths)]
        i = -1
        while True:
            try:
                i = spec.index(-1, i + 1)  # the next link whose (groups, length) was new: a scan in C
            except ValueError:
                return spec
            key = (ga[i], gb[i], lengths[i])
            found = get(key)
            if found is None:
                pair = self._pair(pairs, key[0], key[1])
                choice = chooser.pick(pair.lane_gbps, pair.a, pair.b, key[2], transport=pair.transport, link_lanes=pair.lanes)
                found = memo[key] = self.spec_for(fabric, kind, tier, chooser, origin, pair, choice)
            spec[i] = found

    def _group_id(self, group: PortGroup, model: str) -> int:
        """A small int per port group object (a memo key that hashes well and keeps the group alive)."""
        found = self._group_index.get(id(group))
        if found is None:
            found = self._group_index[id(group)] = len(self._port_groups)
            self._port_groups.append(group)
            self._group_models.append(model)
        return found

    def _pair(self, pairs: dict, ga: int, gb: int) -> PairInfo:
        """What a link between two port groups is, whatever its length: lanes, lane rate, both
        cages' shapes, transport. ``pairs`` holds them for one fabric, media policy, origin, kind."""
        pair = pairs.get((ga, gb))
        if pair is None:
            group_a, group_b = self._port_groups[ga], self._port_groups[gb]
            ma, mb = self.fabric.models[self._group_models[ga]], self.fabric.models[self._group_models[gb]]
            lanes, lane_gbps = link_rate(group_a, group_b)
            transport = ma.transport if ma.transport != "any" else mb.transport
            pair = pairs[(ga, gb)] = PairInfo(
                lanes, lane_gbps, CageShape.of(group_a, ma.kind), CageShape.of(group_b, mb.kind), transport, {}
            )
        return pair

    def spec_for(
        self, fabric: str, kind: str, tier: str, chooser: MediaChooser, origin: tuple, pair: PairInfo, choice: Choice
    ) -> int:
        """The spec index of a link of ``fabric`` between the port groups of ``pair`` with this choice."""
        found = pair.specs.get(choice)
        if found is None:
            where = chooser.pin_path if choice.pinned else origin
            spec = LinkSpec(
                fabric,
                kind,
                pair.lanes,
                pair.lane_gbps,
                choice.medium,
                where,
                choice.pinned,
                tier,
                choice.a_module,
                choice.b_module,
                choice.head,
            )
            found = pair.specs[choice] = self.fabric.links.spec_id(spec)
            # How to choose again for these links: the per-cage settling (build.cages) may
            # move them to another medium.
            self.spec_sources.setdefault(found, SpecSource(chooser, pair, fabric, kind, tier, origin))
        return found

    def fail(self, rule: str, message: str, path: tuple, hint: str = "") -> BuildError:
        return BuildError([error(rule, message, path, hint)])


def _path_to(node: Any, target: Any, depth: int) -> tuple | None:
    """Field names leading from a blueprint model to ``target`` (by identity), or None."""
    fields = getattr(type(node), "model_fields", None)
    if fields is None or depth == 0:
        return None
    for name, f in fields.items():
        value = getattr(node, name, None)
        if value is target:
            return (f.alias or name,)
        if hasattr(type(value), "model_fields"):
            deeper = _path_to(value, target, depth - 1)
            if deeper is not None:
                return (f.alias or name, *deeper)
    return None
