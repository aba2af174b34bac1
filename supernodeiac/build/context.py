"""What every builder shares: the blueprint, the catalogue, the Fabric being built, and the
helpers that keep names, placement, lengths and media consistent across builders."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..catalog.types import Catalogue, DeviceModel, PortGroup
from ..fabric import Coords, Device, Fabric, Link, LinkSpec
from ..findings import BuildError, Finding, error
from ..model.blueprint import Blueprint
from ..model.common import MediaPolicy
from ..model.site import Placement
from .geometry import Geometry
from .media import MediaChooser


def did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "known: " + ", ".join(sorted(known)[:12]) + (" ..." if len(known) > 12 else "")


def link_rate(ga: PortGroup, gb: PortGroup) -> tuple[int, float]:
    """(lanes, lane Gb/s) of a link between two ports: the narrower width at the slower lane rate
    of its two ends (x16 into a x8 port runs x8)."""
    return min(ga.lanes, gb.lanes), min(ga.lane_gbps, gb.lane_gbps)


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
    _linkers: dict[tuple, Callable[[int, int, int, int], None]] = field(default_factory=dict)
    # Per media chooser (by id()): (id of both port groups, length) -> (lanes, lane Gb/s, medium,
    # pinned). Shared by every linker of that chooser: a builder may make a linker per loop.
    _decided: dict[int, dict[tuple[int, int, float], tuple[int, float, str, bool]]] = field(default_factory=dict)

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
    ) -> Device:
        """Create and place a device. ``slot`` is its index within its placement."""
        height = self.catalogue.devices[model].height_u
        rack, u = -1, 0
        if placement is not None:
            rack, u = self.geometry.place(placement, slot, per_slot_u or height, self.placement_path(origin, placement))
            u += u_offset
        device = Device(0, name, role, model, group, rack, u, height, coords, origin, tier)
        self.fabric.add_device(device)
        self.groups.setdefault(group, []).append(device.index)
        return device

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
    ) -> Link:
        """Cable (or mate) port ``a_port`` of device ``a`` to ``b_port`` of ``b``: length, rate, medium.

        Returns the link as a value (for builders that add up bandwidth); loops of 10^5 links
        use :meth:`linker`, which returns nothing.
        """
        key = (fabric, id(chooser), origin, kind)
        link = self._linkers.get(key)
        if link is None:
            link = self._linkers[key] = self.linker(fabric, chooser=chooser, origin=origin, kind=kind)
        link(a, a_port, b, b_port)
        return self.fabric.links[-1]

    def linker(
        self, fabric: str, *, chooser: MediaChooser, origin: tuple, kind: str = "cable"
    ) -> Callable[[int, int, int, int], None]:
        """``link(a, a_port, b, b_port)``: ``connect`` for the many links of one loop.

        Fabric, media policy, origin and kind are fixed for the loop, and the per-link work that
        does not depend on the link is done once (lane rate and medium per pair of port groups
        and length), so a builder that makes 10^5-10^6 links pays for six column appends, the
        routed length and one memo lookup per link. Cable IDs are the Fabric's to format later.
        """
        f = self.fabric
        devices, layouts, table = f.devices, f.layouts, f.links
        add_a, add_ap, add_b, add_bp = table.a.append, table.a_port.append, table.b.append, table.b_port.append
        add_len, add_spec = table.length_m.append, table.spec.append
        cable_length = self.geometry.length_fn()
        choose = chooser.choose
        pinned_origin = chooser.path + ("pin",)
        connector = kind == "connector"
        # Per device model: (port count, port -> group), looked up once per link end.
        ports_of: dict[str, tuple[int, list[PortGroup]]] = {}
        # Rate and medium depend only on the two port groups and the exact length (for one media
        # policy), and a fabric has few distinct such triples: one memo lookup per link decides both.
        decided = self._decided.setdefault(id(chooser), {})
        specs: dict[tuple[int, int, float], int] = {}  # the same key -> this loop's spec index

        def model_ports(model: str) -> tuple[int, list[PortGroup]]:
            layout = layouts[model]
            found = ports_of[model] = (layout.total, layout.port_groups)
            return found

        def spec_of(ga: PortGroup, gb: PortGroup, length: float) -> int:
            key = (id(ga), id(gb), length)
            rate = decided.get(key)
            if rate is None:
                lanes, lane_gbps = link_rate(ga, gb)
                medium, pinned = choose(lane_gbps, ga.cage, gb.cage, length)
                rate = decided[key] = (lanes, lane_gbps, medium, pinned)
            lanes, lane_gbps, medium, pinned = rate
            spec = LinkSpec(fabric, kind, lanes, lane_gbps, medium, pinned_origin if pinned else origin, pinned)
            found = specs[key] = table.spec_id(spec)
            return found

        def link(a: int, a_port: int, b: int, b_port: int) -> None:
            da, db = devices[a], devices[b]
            ta, groups_a = ports_of.get(da.model) or model_ports(da.model)
            tb, groups_b = ports_of.get(db.model) or model_ports(db.model)
            if not (0 <= a_port < ta and 0 <= b_port < tb):
                raise IndexError(f"port {a_port} of {da.name} or {b_port} of {db.name} does not exist")
            ga, gb = groups_a[a_port], groups_b[b_port]
            length = 0.0 if connector else cable_length(da, db)
            spec = specs.get((id(ga), id(gb), length))
            add_a(a)
            add_ap(a_port)
            add_b(b)
            add_bp(b_port)
            add_len(length)
            add_spec(spec if spec is not None else spec_of(ga, gb, length))

        return link

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
