"""A SONiC config_db.json for one switch, built as data from its :class:`SwitchFacts`.

Tables (SONiC Configuration Database Manual, sonic-buildimage src/sonic-yang-models/doc/Configuration.md;
field names and ranges from the SONiC YANG models):
DEVICE_METADATA, PORT (from the catalogue's port map: names, lanes, aliases, cages, speeds),
BREAKOUT_CFG, INTERFACE and LOOPBACK_INTERFACE (point-to-point, host-link and loopback addresses
of the plan), STATIC_ROUTE (a leaf's host-subnet summary, advertised), BGP_NEIGHBOR (the far
end's address and ASN), MGMT_PORT / MGMT_INTERFACE, VLAN (``dhcp_servers``: a routed segment's relay;
DHCP_RELAY ``dhcpv6_servers`` on IPv6) /
VLAN_MEMBER / VLAN_INTERFACE on management switches, and for a lossless RoCEv2 fabric the QoS
and buffer tables of SONiC's own templates (qos_config.j2, buffers_config.j2): DSCP_TO_TC_MAP,
TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE, PORT_QOS_MAP (pfc_enable),
SCHEDULER, WRED_PROFILE (ECN), QUEUE, BUFFER_POOL / PROFILE / PG / QUEUE in the dynamic buffer
model (SONiC computes each lossless PG's headroom from the port speed and CABLE_LENGTH, which
carries the real cable lengths), DEFAULT_LOSSLESS_BUFFER_PARAMETER, LOSSLESS_TRAFFIC_PATTERN,
PFC_WD.

Text that repeats is made once, not per switch: per model each port's PORT, INTERFACE and
CABLE_LENGTH fragments (:class:`_ModelPorts`), per lossless plan the QoS and buffer tables and the
per-port blocks of QUEUE, BUFFER_PG, ... (:class:`PortEntries`, :func:`encoded_table`), and a value
dict shared by many entries is encoded once per file by :func:`dumps`: the 10,143 configs of a
131,072-GPU RoCE design take about 2 CPU s (config_db and text, 948 MB).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..catalog.types import PortMap
from ..fabric.fabric_facts import LosslessFacts
from ..facts.mgmt_l2 import bridge_mode
from ..facts.sonic_ports import SonicPorts
from ..facts.switch_facts import SwitchFacts
from ..model.clos import PORT_MTU
from ..model.management import MgmtAddressing

Config = dict[str, Mapping[str, dict[str, Any]]]

MTU = str(PORT_MTU)  # SONiC's default port MTU (model/clos.py): management switches, PortChannels
# eBGP timers of FRR's "datacenter" defaults profile: keepalive 3 s, hold 9 s (fast failure detection).
BGP_KEEPALIVE, BGP_HOLDTIME = "3", "9"
MAP = "AZURE"  # SONiC's own map and profile names: its qos/buffer templates and tools look for them
LOSSLESS_WRED = "AZURE_LOSSLESS"
# Scheduler weights of SONiC's default qos_config.j2 (scheduler.0 lossy 14, scheduler.1 lossless 15);
# DCQCN congestion notifications go strict priority so that they overtake the data they throttle.
SCHEDULERS = {
    "scheduler.0": {"type": "DWRR", "weight": "14"},
    "scheduler.1": {"type": "DWRR", "weight": "15"},
    "scheduler.2": {"type": "STRICT"},
}
# PFC watchdog: detection and restoration 200 ms, polled every 200 ms (SONiC's pfcwd defaults).
PFCWD = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
PFCWD_POLL_MS = "200"
# The dynamic buffer model's lossless traffic assumptions (SONiC buffers_config.j2 defaults).
LOSSLESS_PATTERN = {"mtu": "1024", "small_packet_percentage": "100"}
DEFAULT_MGMT_VLAN = MgmtAddressing.model_fields["vlan"].default
# Device types whose dhcp_relay feature SONiC enables by default (init_cfg.json.j2).
RELAY_BY_DEFAULT = frozenset({"ToRRouter", "EPMS", "MgmtTsToR", "MgmtToRRouter", "BmcMgmtToRRouter"})
# A leaf's host-subnet summary: a discard route that bgpcfgd redistributes into BGP (see config_db).
HOST_SUMMARY_ROUTE = {"advertise": "true", "blackhole": "true"}


def ranges(values: list[int]) -> list[str]:
    """Contiguous runs as SONiC keys write them: [0, 1, 2, 5, 6] -> ['0-2', '5-6']."""
    out: list[str] = []
    run: list[int] = []
    for v in sorted(values):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [v]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return out


class PortEntries:
    """The entries every port of a table carries (QUEUE, BUFFER_PG, PFC_WD, ...) and the entries
    before the ports' (``global``, ``GLOBAL``), made once per lossless plan and shared by every
    switch's :class:`PortTable`; their JSON text (one templated block per port, the head's lines)
    is made once, on the first :func:`dumps` that writes them."""

    __slots__ = ("entries", "head", "_block", "_head_lines")

    def __init__(self, entries: list[tuple[str, dict[str, Any]]], head: dict[str, dict[str, Any]] | None = None):
        self.entries = entries  # (key suffix, value); suffix "" makes the key the port name itself
        self.head = head or {}
        self._block: str | None = None
        self._head_lines: list[str] | None = None

    def block(self) -> str:
        """One port's lines, ``\0`` standing for its (escaped) name."""
        if self._block is None:
            self._block = ",\n".join(
                f'        "\0{"|" + _key(suffix)[1:-1] if suffix else ""}": {_encode(value)}' for suffix, value in self.entries
            )
        return self._block

    def head_lines(self) -> list[str]:
        if self._head_lines is None:
            self._head_lines = [f"        {_key(key)}: {_encode(value)}" for key, value in self.head.items()]
        return self._head_lines


class PortTable(Mapping[str, dict[str, Any]]):
    """A table whose every port carries the same entries: held as the ports and their shared
    :class:`PortEntries`, read like the dict it stands for (``"Ethernet0|3"`` -> value), and
    written by :func:`dumps` one templated block per port instead of entry by entry."""

    __slots__ = ("shared", "ports", "_keys")

    def __init__(self, ports: list[str], shared: PortEntries):
        self.shared = shared
        self.ports = ports
        self._keys: dict[str, dict[str, Any]] | None = None

    @property
    def head(self) -> dict[str, dict[str, Any]]:
        return self.shared.head

    @property
    def entries(self) -> list[tuple[str, dict[str, Any]]]:
        return self.shared.entries

    def _key(self, port: str, suffix: str) -> str:
        return f"{port}|{suffix}" if suffix else port

    def __iter__(self) -> Iterator[str]:
        yield from self.head
        for port in self.ports:
            for suffix, _ in self.entries:
                yield self._key(port, suffix)

    def __len__(self) -> int:
        return len(self.head) + len(self.ports) * len(self.entries)

    def __getitem__(self, key: str) -> dict[str, Any]:
        if self._keys is None:
            self._keys = dict(self.head)
            for port in self.ports:
                for suffix, value in self.entries:
                    self._keys[self._key(port, suffix)] = value
        return self._keys[key]


class EncodedTable(Mapping[str, dict[str, Any]]):
    """A table built as its JSON lines: one ``        "key": {...}`` line per entry, made with
    f-strings from per-model fragments (a port's alias, index, lanes, FEC are encoded once per
    model, not once per port of every switch). Read like the dict it stands for (parsed on first
    read, for tests and library callers); :func:`dumps` writes the lines as they are."""

    __slots__ = ("keys_", "lines", "_parsed")

    def __init__(self, lines: list[str] | None = None, keys: list[str] | None = None) -> None:
        # The keys, where the maker has them at hand (not copied: PORT's are its model's), else
        # None: read from the lines when asked (only tests and library callers iterate a table;
        # dumps writes the lines). :meth:`add` is for a table made empty.
        self.keys_ = keys if lines is not None else []
        self.lines: list[str] = lines if lines is not None else []
        self._parsed: dict[str, dict[str, Any]] | None = None

    def add(self, key: str, line: str) -> None:
        assert self.keys_ is not None
        self.keys_.append(key)
        self.lines.append(line)

    def _entries(self) -> dict[str, dict[str, Any]]:
        if self._parsed is None:
            self._parsed = json.loads("{" + ",".join(self.lines) + "}")
        return self._parsed

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_ if self.keys_ is not None else self._entries())

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self._entries()[key]


def encoded_table(table: Mapping[str, dict[str, Any]]) -> EncodedTable:
    """A table that many switches carry as it is (the QoS maps, the services): its lines made
    once here, written by every :func:`dumps` as they are."""
    return EncodedTable([f"        {_key(key)}: {_encode(value)}" for key, value in table.items()], list(table))


class _ModelPorts:
    """Per model, each port's PORT line fragments (everything but what the cable decides), made once
    and shared by every switch of the model: the idle line (admin down), and for a cabled port the
    text before the description and between it and the speed."""

    __slots__ = (
        "ports", "mtu", "idle", "head", "middle", "max_speed", "names", "key", "mapped", "mapped_names", "breakout",
        "tails", "routed", "routed_open", "idle_lines", "row", "lossless", "field_keys",
    )  # fmt: skip

    def __init__(self, ports: SonicPorts, mtu: int) -> None:
        self.ports = ports
        self.mtu = mtu
        self.idle: list[str | None] = []
        self.head: list[str] = []
        self.middle: list[str] = []
        self.max_speed: list[int] = []
        self.names: list[str] = []
        self.key: list[str] = []
        for sp in ports.ports:
            if sp is None:
                for column in (self.head, self.middle, self.names, self.key):
                    column.append("")
                self.idle.append(None)
                self.max_speed.append(0)
                continue
            key = _key(sp.name)
            fec = f'"fec": {_key(sp.fec)}, ' if sp.fec else ""
            rest = f'"index": {_key(sp.index)}, "lanes": {_key(sp.lanes)}, "mtu": "{self.mtu}", "speed": '
            alias = _key(sp.alias)
            self.idle.append(f'        {key}: {{"admin_status": "down", "alias": {alias}, {fec}{rest}"{sp.speed_mbps}"}}')
            self.head.append(f'        {key}: {{"admin_status": "up", "alias": {alias}, "description": ')
            self.middle.append(f", {fec}{rest}")
            self.max_speed.append(sp.speed_mbps)
            self.names.append(sp.name)
            self.key.append(key)
        self.mapped = [p for p, sp in enumerate(ports.ports) if sp is not None]
        self.mapped_names = [self.names[p] for p in self.mapped]
        self.idle_lines: list[str] = [self.idle[p] for p in self.mapped]  # type: ignore[misc]
        self.row = [-1] * len(ports.ports)  # a port's line in PORT (-1: not a SONiC port)
        for r, p in enumerate(self.mapped):
            self.row[p] = r
        # The ports that carry the lossless tables (PORT_QOS_MAP, QUEUE, ...): the mapped data ports.
        roles = ports.layout.port_roles
        self.lossless = [sp is not None and roles[p] == "data" for p, sp in enumerate(ports.ports)]
        self.field_keys = [f"{_key(name)}: " for name in ports.layout.names]  # a port as a field name (CABLE_LENGTH)
        # A cabled port's PORT text after the description, by the link's rate (the speed is the
        # lesser of the port's and the link's): made on first use per (port, rate).
        self.tails: list[dict[float, str]] = [{} for _ in ports.ports]
        # INTERFACE: a routed port's plain line, and its addressed key up to the address (the
        # port's OS name, ``Interface.name``: the layout's).
        self.routed = [f"        {key}: {{}}" for key in self.key]
        self.routed_open = [f"        {_key(name)[:-1]}|" for name in ports.layout.names]
        # BREAKOUT_CFG: each cage's mode, keyed by the cage's first port.
        self.breakout = EncodedTable()
        for sp in ports.ports:
            if sp is not None and sp.first_in_cage and sp.group.breakout_mode:
                mode = _key(sp.group.breakout_mode)
                self.breakout.add(sp.cage_master, f'        {_key(sp.cage_master)}: {{"brkout_mode": {mode}}}')


_MODEL_PORTS: dict[tuple[int, int], _ModelPorts] = {}


def _model_ports(ports: SonicPorts, mtu: int) -> _ModelPorts:
    key = (id(ports), mtu)
    found = _MODEL_PORTS.get(key)
    if found is None or found.ports is not ports:
        if len(_MODEL_PORTS) >= 64:  # held entries keep their port maps alive: bounded like _QOS
            _MODEL_PORTS.clear()
        found = _MODEL_PORTS[key] = _ModelPorts(ports, mtu)
    return found


def config_db(sw: SwitchFacts, cable_length_m: list[int] | None = None) -> Config:
    """The config_db tables of one switch. ``cable_length_m`` is each interface's cable length in
    whole metres (same order as ``sw.interfaces``), needed for the lossless buffer tables."""
    assert sw.ports is not None, "config_db needs the model's port map"
    dev, ports = sw.device, sw.ports
    pm = ports.port_map
    cfg: Config = {}
    meta: dict[str, Any] = {"hostname": dev.name, "hwsku": pm.hwsku, "platform": pm.platform}
    if sw.sonic_type:
        meta["type"] = sw.sonic_type
    if sw.asn is not None:
        meta["bgp_asn"] = str(sw.asn)
    if sw.loopback and ":" not in sw.loopback:
        meta["bgp_router_id"] = sw.loopback.split("/")[0]
    elif sw.router_id is not None:
        meta["bgp_router_id"] = sw.router_id
    lossless = sw.lossless is not None and pm.buffers is not None
    if lossless:
        meta["buffer_model"] = "dynamic"
    cfg["DEVICE_METADATA"] = {"localhost": dict(sorted(meta.items()))}

    # -- ports --------------------------------------------------------------------------------
    # Every mapped port idle (admin down), then the cabled ones written over: a border port (its far
    # end a site router, no link of the Fabric, at the port's full speed), then each interface.
    mp = _model_ports(ports, sw.mtu)
    lines = list(mp.idle_lines)
    head, tails, row = mp.head, mp.tails, mp.row
    for b in sw.border:
        if row[b.port] >= 0:
            far = f"{b.router}:{b.router_port}" if b.router_port else b.router
            lines[row[b.port]] = f'{head[b.port]}{_key(far)}{mp.middle[b.port]}"{mp.max_speed[b.port]}"}}'
    for iface in sw.interfaces:
        index = iface.port
        r = row[index]
        if r < 0:
            continue  # not a SONiC port (eth0)
        tail = tails[index].get(iface.gbps)
        if tail is None:
            speed = min(mp.max_speed[index], int(iface.gbps * 1000))
            tail = tails[index][iface.gbps] = f'{mp.middle[index]}"{speed}"}}'
        lines[r] = f"{head[index]}{_key(f'{iface.peer_name}:{iface.peer_port_name}')}{tail}"
    cfg["PORT"] = EncodedTable(lines, mp.mapped_names)
    if mp.breakout:
        cfg["BREAKOUT_CFG"] = mp.breakout  # the same for every switch of the model

    # -- layer 3 ------------------------------------------------------------------------------
    mapped = ports.ports
    plain, opened = mp.routed, mp.routed_open
    routed: list[str] = []
    for i in sw.interfaces:
        if i.address is not None and mapped[i.port] is not None:
            # The plan's addresses are IP text (digits, hex, '.', ':', '/'): nothing JSON escapes.
            routed += (plain[i.port], f'{opened[i.port]}{i.address}": {{}}')
    for b in sw.border:
        if mapped[b.port] is not None:  # the blueprint's address: escaped as any text
            routed += (plain[b.port], f"{opened[b.port]}{_key(b.address)[1:]}: {{}}")
    if routed:
        cfg["INTERFACE"] = EncodedTable(routed)
    if sw.announce:
        # management.border: the aggregate the site routers learn (FabricFacts._border_ports says why
        # a discard route; bgpcfgd's StaticRouteMgr redistributes it, as the leaves' host summaries).
        cfg["STATIC_ROUTE"] = {f"default|{prefix}": dict(HOST_SUMMARY_ROUTE) for prefix in sw.announce}
    if sw.host_routes:
        # Advertising the host subnets. bgpcfgd's bgpd.main.conf.j2 turns Loopback0 and VLAN_INTERFACE
        # prefixes into `network` statements and redistributes connected /31s only on multi-ASIC
        # front-end, VOQ and chassis-packet switches: a single-ASIC BackEndToRRouter's routed
        # INTERFACE subnets reach no BGP peer. The config_db table bgpcfgd does turn into an
        # advertisement is STATIC_ROUTE (StaticRouteMgr: `ip route P blackhole tag 1` and
        # `redistribute static route-map STATIC_ROUTE_FILTER`, matching tag 1 = advertise). So each
        # leaf advertises the summary of its host /31s as a discard route (RFC 4632's aggregate
        # to null): the spines learn one prefix per leaf; the leaf forwards by its connected /31s.
        cfg["STATIC_ROUTE"] = {f"default|{prefix}": dict(HOST_SUMMARY_ROUTE) for prefix in sw.host_routes}
    if sw.loopback:
        empty: dict[str, Any] = {}
        cfg["LOOPBACK_INTERFACE"] = {"Loopback0": empty, f"Loopback0|{sw.loopback}": empty}
    if sw.bgp:
        # nhopself by a conditional, not int(bool): an int() call per neighbour costs a fifth of its line.
        fields = '"admin_status": "up", "asn": "'
        timers = f'", "holdtime": "{BGP_HOLDTIME}", "keepalive": "{BGP_KEEPALIVE}", "local_addr": '
        cfg["BGP_NEIGHBOR"] = EncodedTable(
            [
                f"        {_key(n.address)}: {{{fields}{n.asn}{timers}{_key(n.local_address)}, "
                f'"name": {_key(n.name)}, "nhopself": "{"1" if n.next_hop_self else "0"}", "rrclient": "0"}}'
                for n in sw.bgp
            ]
        )

    # -- management ---------------------------------------------------------------------------
    mgmt = next((i for i in sw.interfaces if i.role == "mgmt"), None)
    has_mgmt_port = any(g.role == "mgmt" for g in sw.model.ports)
    if has_mgmt_port:
        entry = {"admin_status": "up", "alias": pm.mgmt_port}
        if mgmt is not None:
            entry["description"] = f"{mgmt.peer_name}:{mgmt.peer_port_name}"
        cfg["MGMT_PORT"] = {pm.mgmt_port: entry}
        if sw.mgmt_address and not sw.mgmt_inband:
            cfg["MGMT_INTERFACE"] = {f"{pm.mgmt_port}|{sw.mgmt_address}": {"gwaddr": sw.mgmt_gateway}}
    if sw.kind in ("mgmt", "mgmt-agg", "mgmt-oob"):
        _vlan(cfg, sw)

    if sw.lossless is not None:
        _qos(cfg, sw, cable_length_m or [], buffers=lossless)
    return dict(sorted(cfg.items()))


def _vlan(cfg: Config, sw: SwitchFacts) -> None:
    """The management VLAN as ``facts/mgmt_l2.py`` bridges it: a rack or OOB switch's access ports
    untagged; in the flat and MCLAG designs every other cabled port tagged (the VLAN spans the
    site; in the MCLAG design through the PortChannels, :func:`_lags`), in the routed design none
    (a routed aggregation switch has no VLAN at all)."""
    if sw.kind == "mgmt-agg" and sw.mgmt_design not in ("flat", "mclag"):
        return
    vlan = sw.mgmt_vlan or DEFAULT_MGMT_VLAN
    name = f"Vlan{vlan}"
    ports = sw.ports
    assert ports is not None
    untagged, tagged = {"tagging_mode": "untagged"}, {"tagging_mode": "tagged"}
    members: dict[str, dict[str, Any]] = {}
    border = {b.port for b in sw.border}  # routed toward a site router, never bridged
    for i in sw.interfaces:
        if ports.ports[i.port] is None or i.port in border:
            continue
        mode = bridge_mode(sw.kind, i.role, sw.mgmt_design)
        if mode is None:
            continue
        lag = sw.lags.get(i.port)
        member = i.name if lag is None else f"PortChannel{lag}"  # a PortChannel bridges, not its members
        members[f"{name}|{member}"] = untagged if mode == "untagged" else tagged
    entry: dict[str, Any] = {"vlanid": str(vlan)}
    if sw.dhcp_relay:
        # The segment's gateway (a routed rack or OOB switch; the flat or MCLAG VLAN's gateway)
        # relays its DHCP to the servers (SONiC's dhcp_relay container starts one dhcrelay per VLAN
        # with dhcp_servers; the circuit ID it inserts: FabricFacts.relay_circuit_id).
        entry["dhcp_servers"] = list(sw.dhcp_relay)
    cfg["VLAN"] = {name: entry}
    if (sw.dhcp_relay or sw.dhcpv6_relay) and sw.sonic_type not in RELAY_BY_DEFAULT:
        # SONiC starts the dhcp_relay container by default only on the device types its
        # init_cfg.json.j2 lists (sonic-buildimage files/build_templates/init_cfg.json.j2); an
        # aggregation switch (MgmtLeafRouter) that is a VLAN's gateway needs it switched on.
        cfg["FEATURE"] = {"dhcp_relay": {"state": "enabled"}}
    if sw.dhcpv6_relay:
        # DHCPv6: SONiC's dhcp6relay reads its servers per VLAN from DHCP_RELAY (sonic-dhcpv6-relay.yang).
        cfg["DHCP_RELAY"] = {name: {"dhcpv6_servers": list(sw.dhcpv6_relay)}}
    interfaces: dict[str, dict[str, Any]] = {}
    if sw.mgmt_address and sw.mgmt_inband:
        interfaces = {name: {}, f"{name}|{sw.mgmt_address}": {}}
    elif sw.gateway_interface:
        interfaces = {name: {}, f"{name}|{sw.gateway_interface}": {}}
    if sw.lags:
        _lags(cfg, sw, members, interfaces)
    if members:
        cfg["VLAN_MEMBER"] = members
    if interfaces:
        cfg["VLAN_INTERFACE"] = interfaces


def _lags(cfg: Config, sw: SwitchFacts, members: dict[str, dict[str, Any]], interfaces: dict[str, dict[str, Any]]) -> None:
    """The MCLAG design's PortChannels (LACP; PORTCHANNEL, PORTCHANNEL_MEMBER) and, on the
    aggregation pair, the MCLAG domain: the peer link, the keepalive session on a VLAN of its own
    over it (each peer its own address: MCLAG_UNIQUE_IP), every rack-facing PortChannel an MCLAG
    interface (SONiC MCLAG HLD; sonic-mclag.yang)."""
    names = {n: f"PortChannel{n}" for n in sorted(set(sw.lags.values()))}
    lag = {"admin_status": "up", "lacp_key": "auto", "min_links": "1", "mtu": MTU}
    cfg["PORTCHANNEL"] = {names[n]: lag for n in names}
    by_port = sw.by_port
    cfg["PORTCHANNEL_MEMBER"] = {
        f"{names[n]}|{by_port[p].name}": {} for p, n in sorted(sw.lags.items(), key=lambda kv: (kv[1], kv[0]))
    }
    m = sw.mclag
    if m is None:
        return
    keepalive = f"Vlan{m.keepalive_vlan}"
    cfg["VLAN"] = {**cfg["VLAN"], keepalive: {"vlanid": str(m.keepalive_vlan)}}
    members[f"{keepalive}|{m.peer_link}"] = {"tagging_mode": "tagged"}
    interfaces.update({keepalive: {}, f"{keepalive}|{m.source_ip}/{m.keepalive_prefixlen}": {}})
    cfg["MCLAG_DOMAIN"] = {str(m.domain_id): {"peer_ip": m.peer_ip, "peer_link": m.peer_link, "source_ip": m.source_ip}}
    cfg["MCLAG_INTERFACE"] = {
        f"{m.domain_id}|{name}": {"if_type": "PortChannel"} for name in names.values() if name != m.peer_link
    }
    cfg["MCLAG_UNIQUE_IP"] = {keepalive: {"unique_ip": "enable"}}


class _QosPlan:
    """The QoS and buffer tables that depend only on a fabric's lossless plan and the switch's port
    map: built once per (plan, map) and shared by every switch of the fabric (each file encodes
    them once), with the per-port entries its :class:`PortTable` tables repeat."""

    def __init__(self, plan: LosslessFacts, pm: PortMap | None) -> None:
        self.plan, self.pm = plan, pm
        pfc = sorted(plan["pfc_priorities"])
        dscp_map = {int(k): v for k, v in plan["dscp_to_tc"].items()}
        default_tc = plan["default_tc"]
        cnp_dscp = plan["cnp_dscp"]
        cnp_tc = dscp_map.get(cnp_dscp) if cnp_dscp is not None else None
        if cnp_tc in pfc:
            cnp_tc = None  # a CNP class with PFC stays a lossless DWRR queue
        ecn = plan["ecn"]
        pfc_text = ",".join(map(str, pfc))
        tables: Config = {}
        tables["DSCP_TO_TC_MAP"] = {MAP: {str(d): str(dscp_map.get(d, default_tc)) for d in range(64)}}
        tables["TC_TO_QUEUE_MAP"] = {MAP: {str(tc): str(tc) for tc in range(8)}}
        tables["MAP_PFC_PRIORITY_TO_QUEUE"] = {MAP: {str(p): str(p) for p in range(8)}}
        tables["TC_TO_PRIORITY_GROUP_MAP"] = {MAP: {str(tc): str(tc) if tc in pfc else "0" for tc in range(8)}}
        used = {"scheduler.0", "scheduler.1"} | ({"scheduler.2"} if cnp_tc is not None else set())
        tables["SCHEDULER"] = {k: v for k, v in SCHEDULERS.items() if k in used}
        threshold = {
            f"{colour}_{what}": str(value)
            for colour in ("green", "yellow", "red")
            for what, value in (
                ("min_threshold", ecn["min_threshold_bytes"]),
                ("max_threshold", ecn["max_threshold_bytes"]),
                ("drop_probability", ecn["max_probability_pct"]),
            )
        }
        wred = {
            "ecn": "ecn_all", "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true", **threshold
        }  # fmt: skip
        tables["WRED_PROFILE"] = {LOSSLESS_WRED: dict(sorted(wred.items()))}
        self.tables: Config = {name: encoded_table(table) for name, table in tables.items()}

        qos_map = {
            "dscp_to_tc_map": MAP,
            "pfc_enable": pfc_text,
            "pfc_to_queue_map": MAP,
            "pfcwd_sw_enable": pfc_text,
            "tc_to_pg_map": MAP,
            "tc_to_queue_map": MAP,
        }
        lossless_queue = {"scheduler": "scheduler.1", "wred_profile": LOSSLESS_WRED}
        cnp_queue = {"scheduler": "scheduler.2"}
        lossy_queue = {"scheduler": "scheduler.0"}
        others = [q for q in range(8) if q not in pfc and q != cnp_tc]
        lossy_ranges, lossless_ranges = ranges(others), ranges(pfc)
        lossy_buffer_ranges = ranges([q for q in range(8) if q not in pfc])
        lossy_pg = {"profile": "ingress_lossy_profile"}
        lossless_pg = {"profile": "NULL"}  # dynamic model: SONiC computes the headroom
        egress_lossless, egress_lossy = {"profile": "egress_lossless_profile"}, {"profile": "egress_lossy_profile"}
        queue_entries = [(str(q), lossless_queue) for q in pfc]
        if cnp_tc is not None:
            queue_entries.append((str(cnp_tc), cnp_queue))
        queue_entries += [(r, lossy_queue) for r in lossy_ranges]
        self.port_qos = PortEntries([("", qos_map)], {"global": {"dscp_to_tc_map": MAP}})
        self.queue = PortEntries(queue_entries)
        self.pfcwd = PortEntries([("", PFCWD)], {"GLOBAL": {"POLL_INTERVAL": PFCWD_POLL_MS}})
        self.pg = PortEntries([("0", lossy_pg)] + [(r, lossless_pg) for r in lossless_ranges])
        self.bq = PortEntries([(r, egress_lossless) for r in lossless_ranges] + [(r, egress_lossy) for r in lossy_buffer_ranges])

        buffers: Config = {}
        if pm is not None and pm.buffers is not None:
            buffers["BUFFER_POOL"] = {
                "egress_lossless_pool": {"mode": "dynamic", "size": str(pm.buffers.egress_lossless_pool_bytes), "type": "egress"},
                "egress_lossy_pool": {"mode": "dynamic", "type": "egress"},
                "ingress_lossless_pool": {"mode": "dynamic", "type": "ingress"},
            }
            # Profiles of SONiC's Mellanox buffer templates (buffers_defaults_objects.j2).
            buffers["BUFFER_PROFILE"] = {
                "egress_lossless_profile": {"dynamic_th": "7", "pool": "egress_lossless_pool", "size": "0"},
                "egress_lossy_profile": {"dynamic_th": "7", "pool": "egress_lossy_pool", "size": "9216"},
                "ingress_lossy_profile": {"dynamic_th": "7", "pool": "ingress_lossless_pool", "size": "0"},
            }
            buffers["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = {MAP: {"default_dynamic_th": "0"}}
            buffers["LOSSLESS_TRAFFIC_PATTERN"] = {MAP: dict(LOSSLESS_PATTERN)}
        self.buffers: Config = {name: encoded_table(table) for name, table in buffers.items()}


_QOS: dict[tuple[int, int], _QosPlan] = {}


def _qos_plan(plan: LosslessFacts, pm: PortMap | None) -> _QosPlan:
    key = (id(plan), id(pm))
    found = _QOS.get(key)
    if found is None or found.plan is not plan or found.pm is not pm:
        if len(_QOS) >= 64:
            _QOS.clear()
        found = _QOS[key] = _QosPlan(plan, pm)
    return found


def _qos(cfg: Config, sw: SwitchFacts, lengths: list[int], buffers: bool) -> None:
    """Lossless RoCEv2 on every cabled data port: PFC on the declared priorities, ECN marking on
    their queues, the CNP class strict, headroom from the cable lengths (dynamic buffer model)."""
    plan, ports = sw.lossless, sw.ports
    assert plan is not None and ports is not None
    q = _qos_plan(plan, ports.port_map if buffers else None)
    cfg.update(q.tables)
    mp = _model_ports(ports, sw.mtu)
    carries = mp.lossless
    names = [i.name for i in sw.interfaces if carries[i.port]]
    cfg["PORT_QOS_MAP"] = PortTable(names, q.port_qos)
    cfg["QUEUE"] = PortTable(names, q.queue)
    cfg["PFC_WD"] = PortTable(names, q.pfcwd)
    if not buffers:
        return
    cfg.update(q.buffers)
    cfg["BUFFER_PG"] = PortTable(names, q.pg)
    cfg["BUFFER_QUEUE"] = PortTable(names, q.bq)
    # One entry whose fields are the ports, its text from each port's field name (per model) and
    # length; an interface past the end of ``lengths`` has none (zip stops there).
    keys = mp.field_keys
    cable = ", ".join([f'{keys[i.port]}"{m}m"' for i, m in zip(sw.interfaces, lengths, strict=False) if carries[i.port]])
    cfg["CABLE_LENGTH"] = EncodedTable([f"        {_MAP_KEY}: {{{cable}}}"], [MAP])


_key = json.encoder.encode_basestring_ascii
_MAP_KEY = _key(MAP)
_c_encoder = getattr(json.encoder, "c_make_encoder", None)
if _c_encoder is not None:
    # The C encoder json.dumps builds on every call, built once: a third faster per small dict,
    # which counts when a 131,072-GPU design writes 10^6 port entries.
    _encoder = _c_encoder(None, str, _key, None, ": ", ", ", False, False, True)

    def _encode(value: dict[str, Any]) -> str:
        return "".join(_encoder(value, 0))
else:  # pragma: no cover - CPython without the _json accelerator
    _py_encoder = json.JSONEncoder(separators=(", ", ": "))

    def _encode(value: dict[str, Any]) -> str:
        return _py_encoder.encode(value)


# The per-port blocks of a PortTable, by (block, ports): every leaf of a fabric has the same cabled
# ports and the same QoS entries, so its QUEUE, BUFFER_PG, ... text is made once and reused.
_BLOCKS: dict[tuple[str, tuple[str, ...]], str] = {}
_BLOCKS_MAX = 64


def _port_blocks(block: str, ports: list[str]) -> str:
    key = (block, tuple(ports))
    found = _BLOCKS.get(key)
    if found is None:
        if len(_BLOCKS) >= _BLOCKS_MAX:
            _BLOCKS.clear()
        found = _BLOCKS[key] = ",\n".join(block.replace("\0", _key(port)[1:-1]) for port in ports)
    return found


def dumps(cfg: Config) -> Iterator[str]:
    """config_db text: tables and entries one per line (``"key": {fields}``), readable, diffable, and
    fast: a value dict shared by many entries is encoded once, and a :class:`PortTable` is written
    one templated block per port. The result parses back to ``cfg``."""
    cache: dict[int, str] = {}

    def encoded(value: dict[str, Any]) -> str:
        text = cache.get(id(value))
        if text is None:
            text = cache[id(value)] = _encode(value)
        return text

    # The file as one text, joined once: one chunk for the writer to encode (its join of a
    # single chunk is no copy), not a copy per table and another to put the tables together.
    parts = ["{\n"]
    last_table = len(cfg) - 1
    for t, (table, entries) in enumerate(cfg.items()):
        # Exact types: an isinstance of a Mapping subclass goes through the ABC machinery.
        if type(entries) is EncodedTable:
            lines = entries.lines
        elif type(entries) is PortTable:
            shared = entries.shared
            lines = list(shared.head_lines())
            # One block per port: the entries' lines with the port's (escaped) name put in.
            block = shared.block()
            if block:
                lines.append(_port_blocks(block, entries.ports))
        else:
            lines = [f"        {_key(key)}: {encoded(value)}" for key, value in entries.items()]
        end = ",\n" if t < last_table else "\n"
        if lines:
            parts += (f"    {_key(table)}: {{\n", ",\n".join(lines), f"\n    }}{end}")
        else:
            parts.append(f"    {_key(table)}: {{}}{end}")
    parts.append("}\n")
    yield "".join(parts)
