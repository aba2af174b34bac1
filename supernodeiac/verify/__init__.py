"""``snc verify``: the as-built fabric against the plan.

Inputs are discovery files: ``ibnetdiscover`` output for an InfiniBand fabric, LLDP neighbour
tables (``lldpctl -f json``, SONiC ``show lldp table``) for Ethernet, each taken on one device
(``DEVICE=FILE``, or a file named after the device). Each file is read, its nodes and ports mapped
onto the plan (InfiniBand: by the plan's GUIDs, else by node description; LLDP: by system name and
port name or alias), and the links compared (``compare.py``). Pure: paths in, a :class:`Result` out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..fabric.end_labels import EndLabels
from ..facts.guid_plan import GuidPlan
from ..facts.ib_fabric import IbFabric, IbNode, infiniband_fabrics
from ..facts.sonic_ports import sonic_ports
from ..facts.switch_facts import SERIAL_ROLES
from ..model.blueprint import Blueprint
from .compare import AnyEnd, Comparison, Discrepancy, End, Seen
from .errors import DiscoveryError
from .ibnetdiscover import DiscoveredNode, Topology, looks_like_ibnetdiscover, parse_ibnetdiscover
from .lldp import LldpEntry, looks_like_lldpctl, looks_like_sonic_table, parse_lldpctl_json, parse_sonic_table

__all__ = ["DiscoveryError", "Result", "verify"]


@dataclass
class Result:
    blueprint: str
    inputs: list[dict[str, str]] = field(default_factory=list)
    checked: int = 0  # planned cables in scope
    matched: int = 0
    discrepancies: list[Discrepancy] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.discrepancies if d.severity == "error")

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0


class _Plan:
    """Name lookups over the Fabric, made once per verify."""

    def __init__(self, blueprint: Blueprint, catalogue: Catalogue, fabric: Fabric) -> None:
        self.blueprint, self.catalogue, self.fabric = blueprint, catalogue, fabric
        self.by_name = {d.name: d.index for d in fabric.devices}
        self.by_lower = {d.name.lower(): d.index for d in fabric.devices}
        self._ports: dict[int, dict[str, int]] = {}

    def device(self, name: str) -> int | None:
        """A device by its name, or by the first label of a fully qualified name (LLDP system names)."""
        for candidate in (name, name.split(".")[0]):
            found = self.by_name.get(candidate)
            if found is None:
                found = self.by_lower.get(candidate.lower())
            if found is not None:
                return found
        return None

    def port(self, device: int, name: str) -> int | None:
        """A port of a device by its name or its SONiC alias (what a SONiC neighbour sends as port ID)."""
        table = self._ports.get(device)
        if table is None:
            d = self.fabric.devices[device]
            table = {n: p for p, n in enumerate(self.fabric.layouts[d.model].names)}
            port_map = self.catalogue.port_maps.get(d.model)
            if port_map is not None:  # its names are the catalogue's (the port-map check holds them so)
                for p, sp in enumerate(sonic_ports(self.fabric.layouts[d.model], port_map).ports):
                    if sp is not None:
                        table.setdefault(sp.alias, p)
            self._ports[device] = table
        return table.get(name)

    def describe(self, end: AnyEnd, extra: str = "") -> str:
        """A planned end as an installer finds it: the device, the port as printed on the faceplate
        (the catalogue's cages), and in brackets the port's OS name (and ``extra``)."""
        if isinstance(end, str):
            return end
        d = self.fabric.devices[end[0]]
        layout = self.fabric.layouts[d.model]
        physical, os_name = layout.physical_names[end[1]], layout.names[end[1]]
        inside = ", ".join(x for x in (os_name if os_name != physical else "", extra) if x)
        return f"{d.name} {physical} ({inside})" if inside else f"{d.name} {physical}"


# -- InfiniBand ----------------------------------------------------------------------------------


def ib_fabrics_of(fabric: Fabric) -> list[IbFabric]:
    guids = GuidPlan(fabric)
    return [IbFabric(fabric, name, guids) for name in infiniband_fabrics(fabric)]


class IbMatcher:
    """A discovered node's planned node: by the plan's GUID, else by node description (an HCA's is
    "<host> <RDMA device>", as rdma-ndd sets it; a switch's carries its name among other words)."""

    def __init__(self, fabric: Fabric, fabrics: list[IbFabric]) -> None:
        self.by_guid = {n.guid: (ib, n) for ib in fabrics for n in ib.nodes.values()}
        # Forwarding tables name an HCA by its port GUID (the plan's differs from its node GUID).
        for ib in fabrics:
            for n in ib.cas:
                self.by_guid.setdefault(ib.port_guid(n), (ib, n))
        self.by_desc = {n.description: (ib, n) for ib in fabrics for n in ib.nodes.values()}
        self.switch_names = {fabric.devices[n.device].name: (ib, n) for ib in fabrics for n in ib.switches}

    def __call__(self, guid: int, description: str, is_switch: bool) -> tuple[IbFabric, IbNode] | None:
        hit = self.by_guid.get(guid) or self.by_desc.get(description)
        if hit is None and is_switch:
            # A real switch's description carries its name among other words ("MF0;leaf-01:MQM9700/U1").
            for token in description.replace(";", " ").replace(":", " ").split():
                if token in self.switch_names:
                    return self.switch_names[token]
        return hit


def ib_match(fabric: Fabric, topo: Topology, fabrics: list[IbFabric]) -> dict[int, tuple[IbFabric, IbNode]]:
    """Discovered node GUID -> the planned node it is (:class:`IbMatcher`). Nodes the plan does
    not know are left out; two nodes answering to one planned node are an error."""
    match = IbMatcher(fabric, fabrics)
    matched: dict[int, tuple[IbFabric, IbNode]] = {}
    for node in topo.nodes.values():
        hit = match(node.guid, node.description, node.kind == "switch")
        if hit is not None:
            matched[node.guid] = hit
    first: dict[tuple[str, tuple[int, int]], DiscoveredNode] = {}
    for guid, (ib, n) in matched.items():
        node = topo.nodes[guid]
        seen = first.setdefault((ib.name, n.key), node)
        if seen is not node:
            # Two nodes answering to one planned name: the plan cannot tell which is which.
            raise DiscoveryError(
                topo.path,
                node.line,
                f"node 0x{node.guid:016x} ('{node.description}') and node 0x{seen.guid:016x} at line {seen.line} "
                f"are both {n.description!r} of the plan: give every node its own description",
            )
    return matched


def _ib_seen(plan: _Plan, topo: Topology) -> tuple[list[Seen], set[str], Callable[[AnyEnd], str]]:
    """Discovered links in plan ends, the IB fabrics they belong to, and a describer that adds the
    IB port number to switch ports ('ib-leaf-01 OSFP 9 port 1 (IB1/9/1, IB port 17)')."""
    f = plan.fabric
    fabrics = ib_fabrics_of(f)
    matched = ib_match(f, topo, fabrics)
    ib_port_of: dict[tuple[int, int], int] = {}
    data_ports: dict[int, list[int]] = {}
    for ib in fabrics:
        for n in ib.switches:
            ports = f.layouts[f.devices[n.device].model].ports_of("data")
            data_ports[n.device] = ports
            for k, p in enumerate(ports):
                ib_port_of[(n.device, p)] = k + 1
    used = {hit[0].name for hit in matched.values()}

    def end(guid: int, port: int) -> AnyEnd:
        hit = matched.get(guid)
        node = topo.nodes.get(guid)
        label = f"{'switch' if node is not None and node.kind == 'switch' else 'node'} 0x{guid:016x}"
        if node is not None and node.description:
            label = f"'{node.description}'"
        if hit is None:
            return f"{label} port {port} (not in the plan)"
        n = hit[1]
        if n.is_switch:
            ports = data_ports[n.device]
            if not 1 <= port <= len(ports):
                return f"{f.devices[n.device].name} port {port} (the model has {len(ports)})"
            return (n.device, ports[port - 1])
        return (n.device, n.port)

    seen = [Seen(end(a, pa), end(b, pb), f"{topo.path}:{line}") for a, pa, b, pb, line in topo.links()]

    def describe(e: AnyEnd) -> str:
        if isinstance(e, tuple) and e in ib_port_of:
            return plan.describe(e, f"IB port {ib_port_of[e]}")
        return plan.describe(e)

    return seen, used, describe


# -- LLDP ----------------------------------------------------------------------------------------


def _lldp_seen(plan: _Plan, device: int, entries: list[LldpEntry], path: str, planned: dict[End, End]) -> list[Seen]:
    f = plan.fabric
    name = f.devices[device].name
    out = []
    for e in entries:
        local = plan.port(device, e.local_port)
        a: AnyEnd = (device, local) if local is not None else f"{name} {e.local_port} (no such port in the plan)"
        peer = plan.device(e.remote_system) if e.remote_system else None
        b: AnyEnd
        if peer is None:
            b = f"'{e.remote_system or '?'}' {e.remote_port} (not in the plan)"
        else:
            port = plan.port(peer, e.remote_port)
            if port is None and e.remote_port_descr:
                port = plan.port(peer, e.remote_port_descr)
            if port is None and isinstance(a, tuple) and planned.get(a, (-1, -1))[0] == peer:
                # A host's lldpd announces its MAC as port ID: the right device on the planned
                # port's far end is all LLDP can tell, and it agrees with the plan.
                port = planned[a][1]
            b = (peer, port) if port is not None else f"{f.devices[peer].name} {e.remote_port} (no such port in the plan)"
        out.append(Seen(a, b, f"{path}:{e.line}"))
    return out


def _lldp_device(plan: _Plan, spec: str, path: Path) -> int:
    if "=" in spec and not Path(spec).exists():
        name = spec.split("=", 1)[0]
        found = plan.device(name)
        if found is None:
            raise DiscoveryError(str(path), 0, f"no device named {name!r} in the plan")
        return found
    stem = path.name
    while True:
        found = plan.device(stem)
        if found is not None:
            return found
        if "." not in stem:
            break
        stem = stem.rsplit(".", 1)[0]
    raise DiscoveryError(str(path), 0, "cannot tell which device this LLDP table was taken on: pass it as DEVICE=FILE")


# -- the command ---------------------------------------------------------------------------------


def verify(
    blueprint: Blueprint,
    catalogue: Catalogue,
    fabric: Fabric,
    specs: list[str],
    parsed: Mapping[str, Topology] | None = None,
) -> Result:
    """Compare the discovery files named by ``specs`` (``FILE`` or ``DEVICE=FILE``) with the plan
    (``parsed``: ibnetdiscover files the caller has read already, by spec).
    Raises DiscoveryError for a file that cannot be read or understood."""
    plan = _Plan(blueprint, catalogue, fabric)
    result = Result(fabric.name)
    ib_seen: list[Seen] = []
    ib_fabrics: set[str] = set()
    ib_describe: Callable[[AnyEnd], str] | None = None
    lldp_seen: list[Seen] = []
    reporting: set[int] = set()
    silent: set[int] = set()  # devices whose table lists no neighbour at all
    planned_peer: dict[End, End] | None = None
    for spec in specs:
        path = Path(spec.split("=", 1)[1]) if "=" in spec and not Path(spec).exists() else Path(spec)
        if parsed is not None and spec in parsed:
            ib_describe = _ib_input(plan, parsed[spec], result, ib_seen, ib_fabrics)
            continue
        try:
            text = _read_discovery(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise DiscoveryError(str(path), 0, f"cannot read: {exc}") from None
        if looks_like_lldpctl(text) or looks_like_sonic_table(text):
            entries = parse_lldpctl_json(text, str(path)) if looks_like_lldpctl(text) else parse_sonic_table(text, str(path))
            device = _lldp_device(plan, spec, path)
            if planned_peer is None:
                planned_peer = _planned_peers(fabric)
            lldp_seen += _lldp_seen(plan, device, entries, str(path), planned_peer)
            reporting.add(device)
            if not entries:
                silent.add(device)
            kind = "lldpctl -f json" if looks_like_lldpctl(text) else "show lldp table"
            result.inputs.append({"path": str(path), "format": kind, "device": fabric.devices[device].name})
        elif looks_like_ibnetdiscover(text):
            ib_describe = _ib_input(plan, parse_ibnetdiscover(text, str(path)), result, ib_seen, ib_fabrics)
        else:
            raise DiscoveryError(str(path), 1, "not ibnetdiscover output, `lldpctl -f json` or SONiC `show lldp table`")

    label = blueprint.naming.cable_label
    ends = EndLabels(blueprint, fabric)
    t = fabric.links
    # A file that shows nothing still counts: every planned cable in its sight is then missing
    # (unplugged, or discovery not converged), never "0 cables checked: all as planned".
    if ib_fabrics:
        planned = [i for name in sorted(ib_fabrics) for i in t.indices_of(name)]
        comparison = Comparison(fabric, label, planned, ib_describe or plan.describe, ends)
        found = comparison.run(_unique(ib_seen), observed=lambda e: True, announces=lambda e: True)
        result.discrepancies += found
        result.checked += len(planned)
    if reporting:
        switch = {d.index for d in fabric.devices if fabric.models[d.model].kind == "switch"}
        # Serial console cables (issue 9) carry no LLDP: LLDP tables cannot confirm or deny them.
        roles = {m: layout.port_roles for m, layout in fabric.layouts.items()}
        devices = fabric.devices
        planned = [
            i
            for i in range(len(t))
            if (t.a[i] in reporting or t.b[i] in reporting)
            and roles[devices[t.a[i]].model][t.a_port[i]] not in SERIAL_ROLES
            and roles[devices[t.b[i]].model][t.b_port[i]] not in SERIAL_ROLES
        ]
        comparison = Comparison(fabric, label, planned, plan.describe, ends)
        found = comparison.run(
            _unique(lldp_seen),
            observed=lambda e: e[0] in reporting,
            announces=lambda e: e[0] in switch or e[0] in reporting,
            silent=lambda e: e[0] in silent,
        )
        result.discrepancies += found
        result.checked += len(planned)
    involved = {c["id"] for d in result.discrepancies for c in d.cables}
    result.matched = result.checked - len(involved)
    return result


# A discovery file of a 200,000-port fabric is tens of MB; larger is not one (or is /dev/zero).
MAX_DISCOVERY_BYTES = 512 << 20


def _read_discovery(path: Path) -> str:
    """The file's text, read no further than :data:`MAX_DISCOVERY_BYTES` (a device or an endless
    stream is refused, not read into memory)."""
    if path.exists() and not (path.is_file() or path.is_fifo()):
        raise DiscoveryError(str(path), 0, "not a regular file")
    with path.open("rb") as fh:
        data = fh.read(MAX_DISCOVERY_BYTES + 1)
    if len(data) > MAX_DISCOVERY_BYTES:
        raise DiscoveryError(str(path), 0, f"larger than {MAX_DISCOVERY_BYTES:,} bytes: not a discovery file")
    return data.decode("utf-8", errors="strict")


def _ib_input(plan: _Plan, topo: Topology, result: Result, ib_seen: list[Seen], ib_fabrics: set[str]) -> Callable[[AnyEnd], str]:
    """One ibnetdiscover topology's links added to ``ib_seen``; its describer."""
    seen, used, describe = _ib_seen(plan, topo)
    if not used:
        line = min((n.line for n in topo.nodes.values()), default=0)
        raise DiscoveryError(
            topo.path, line, "no node of this topology matches the plan (by GUID or node description): another fabric's dump?"
        )
    ib_seen += seen
    ib_fabrics |= used
    result.inputs.append({"path": topo.path, "format": "ibnetdiscover", "fabrics": ", ".join(sorted(used))})
    return describe


def _planned_peers(fabric: Fabric) -> dict[End, End]:
    t = fabric.links
    out: dict[End, End] = {}
    for a, ap, b, bp in zip(t.a, t.a_port, t.b, t.b_port):
        out[(a, ap)] = (b, bp)
        out[(b, bp)] = (a, ap)
    return out


def _unique(seen: list[Seen]) -> list[Seen]:
    """One Seen per link (LLDP tables of both ends report it twice)."""
    out: dict[frozenset, Seen] = {}
    for s in seen:
        out.setdefault(frozenset((s.a, s.b)), s)
    return list(out.values())
