"""Provisioning of the out-of-band management network: an ISC Kea DHCPv4 server config,
``dhcp/kea-dhcp4.json`` (``dhcp/kea-dhcp6.json`` on an IPv6 management network), and the SONiC
zero-touch-provisioning file of every SONiC switch, ``dhcp/ztp/<switch>.json``.

DHCPv6 (kea-dhcp6): the same segments (``subnet6``) and reservations (``ip-addresses``), matched
by ``hw-address`` where the inventory gives the MAC, else by a placeholder ``duid`` built as the
DHCPv4 client-id below (DHCPv6 has no circuit-id reservation: SONiC's dhcp6relay inserts the
interface-id, which Kea matches only through its flex-id hook); no router option (DHCPv6 has none:
the hosts take the segment's gateway from its router advertisements); the ZTP URL in option 59
(``bootfile-url``, RFC 5970). The routed design's rack and OOB switches relay (DHCP_RELAY).

Kea: one ``subnet4`` per management segment (routed design: every rack block and every OOB
switch's block, each with its own switch as ``routers``; flat design: the whole network), and in
it one reservation per management address the plan gives over a cable: every BMC, switch eth0,
PDU and console-server port cabled to a rack or OOB switch. No pools: a device the plan does not
name gets no address. The rack and OOB switches' own addresses are not leased: each is its
segment's gateway, configured in its config_db (and relays its segment's DHCP to this server).
A relayed segment names its relay agent's address (``relay.ip-addresses``): the routed rack or OOB
switch, or in the flat and MCLAG designs the gateway that relays to a server beyond the border.

Reservation key, first that applies: by ``hw-address`` where the blueprint's ``inventory:`` gives
the port's MAC (``device`` or ``device:port``); else, where the device's switch relays (routed
design with ``services.dhcp``, a SONiC switch), by ``circuit-id``: the relay agent information
(option 82, RFC 3046) sub-option 1 that SONiC's dhcrelay inserts, ``<switch hostname>:<port
alias>`` of the access port the device is cabled to (``FabricFacts.relay_circuit_id``), given as
quoted text, so a device gets its address on day 1 by where it is cabled, with no MAC inventory;
otherwise by ``client-id`` ``00:<device:port as hex>`` (RFC 2132 option 61, type 0: a
non-hardware identifier), a placeholder that Kea accepts and a client matches only when
configured to send it; replace it with the port's ``hw-address`` from the site's inventory. Kea
looks the identifiers up in ``host-reservation-identifiers`` order (hw-address, circuit-id,
client-id). The reservation also names the device (``hostname``: option 12 in the reply).

ZTP: a SONiC switch's reservation sets option 67 (``boot-file-name``), which SONiC ZTP reads as
the URL of its ZTP JSON (option 239 names a plain provisioning script instead); that JSON's
``configdb-json`` plugin downloads the switch's rendered ``sonic/<switch>.json`` to
``/etc/sonic/config_db.json``. Both are served under ``management.addressing.provisioning_url``, the
site's provisioning (HTTP) server; without it no ZTP option or file is written (a ``ztp-url``
warning): the switches then boot without zero-touch provisioning rather than ask a host that
serves nothing.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from ..facts.sonic_ports import sonic_switches
from ..facts.switch_facts import FabricFacts, facts_for
from .base import RENDERERS, RenderContext


def client_id(device: str, port: str) -> str:
    """The placeholder client identifier of a management port: type 0, then ``device:port`` as
    bytes (colon hex): unique, as a device with two management ports has two reservations."""
    return ":".join(f"{b:02x}" for b in b"\x00" + f"{device}:{port}".encode())


def reservations(facts: FabricFacts) -> list[tuple[str, str, str, int, str | None, int]]:
    """(device, its management port, address, serving switch, gateway, the switch's access port) of
    every address leased over a cable to a rack or OOB switch's access port, in Fabric order of the
    switches and ports."""
    f = facts.fabric
    out = []
    for d in f.devices:
        if d.role not in ("mgmt", "mgmt-oob"):
            continue
        gateway = facts.mgmt_gateway_of(d.index)
        for iface in facts.switch(d.index).interfaces:
            if f.layouts[f.devices[iface.peer].model].port_roles[iface.peer_port] != "mgmt":
                continue  # an uplink, or a console cable
            address = facts.mgmt_address_of(d.index, iface.port)
            if address is not None:
                out.append((iface.peer_name, iface.peer_port_name, address, d.index, gateway, iface.port))
    return out


def _base_url(ctx: RenderContext) -> str | None:
    """The provisioning server's URL; None where the blueprint names none (the ``ztp-url``
    warning): no ZTP option and no ZTP file then, rather than a guessed host (the gateway is a
    router, not a file server)."""
    m = ctx.blueprint.management
    return m.addressing.provisioning_url if m is not None and m.addressing is not None else None


def ztp_json(base: str, switch: str) -> dict[str, Any]:
    """SONiC ZTP: fetch the switch's config_db and apply it (the configdb-json plugin)."""
    return {
        "ztp": {
            "configdb-json": {
                "url": {"source": f"{base}/sonic/{switch}.json", "destination": "/etc/sonic/config_db.json"},
            }
        }
    }


@RENDERERS.register("dhcp")
def render_dhcp(ctx: RenderContext) -> dict[str, bytes]:
    facts = facts_for(ctx)
    plan = facts.mgmt
    if plan is None:
        return {}
    v6 = plan.network.version == 6
    f = ctx.fabric
    base = _base_url(ctx)
    prefixlen = plan.block_prefixlen if plan.routed else plan.prefixlen
    sonic = {f.devices[i].name for i in sonic_switches(f, ctx.catalogue)}
    subnets: dict[str, dict[str, Any]] = {}
    out: dict[str, bytes] = {}
    inventory = ctx.blueprint.inventory
    for device, port, address, switch, gateway, access in reservations(facts):
        net = ipaddress.ip_interface(f"{address}/{prefixlen}").network
        key = str(net)
        subnet = subnets.get(key)
        if subnet is None:
            # Stable IDs: the segment's block index in the network (1 for a flat network).
            ident = (
                _subnet_id((int(net.network_address) - int(plan.network.network_address)) // plan.per_rack, plan.blocks)
                if plan.routed
                else 1
            )
            subnet = subnets[key] = {"id": ident, "subnet": key, "reservations": []}
            if gateway is not None and not v6:  # DHCPv6 has no router option: hosts learn it from RAs
                subnet["option-data"] = [{"name": "routers", "data": gateway}]
            relay = facts.relay_address_of(switch)
            if relay is not None:
                # The relay agent's address the segment's requests arrive with (giaddr, link-address):
                # Kea selects the subnet by it (it lies in the subnet), said here so that a reader
                # sees which switch relays each segment.
                subnet["relay"] = {"ip-addresses": [relay]}
        entry = inventory.get(f"{device}:{port}") or inventory.get(device)
        mac = entry.mac if entry is not None else None
        # By MAC where the inventory gives it (a device with several management ports: device:port).
        circuit = None if mac is not None or v6 else facts.relay_circuit_id(switch, access)
        if mac is not None:
            match = {"hw-address": mac}
        elif circuit is not None:
            match = {"circuit-id": f"'{circuit}'"}  # Kea: a quoted value is the text itself
        elif v6:
            match = {"duid": client_id(device, port)}
        else:
            match = {"client-id": client_id(device, port)}
        r: dict[str, Any] = {**match, "hostname": device}
        r.update({"ip-addresses": [address]} if v6 else {"ip-address": address})
        if device in sonic and base is not None:
            # SONiC ZTP's URL: DHCPv4 option 67 (boot-file-name), DHCPv6 option 59 (bootfile-url, RFC 5970).
            option = "bootfile-url" if v6 else "boot-file-name"
            r["option-data"] = [{"name": option, "data": f"{base}/dhcp/ztp/{device}.json"}]
            out[f"dhcp/ztp/{device}.json"] = _dumps(ztp_json(base, device))
        r["user-context"] = {"port": port}
        subnet["reservations"].append(r)
    if v6:
        out["dhcp/kea-dhcp6.json"] = _dumps(
            {
                "Dhcp6": {
                    "interfaces-config": {"interfaces": ["*"]},
                    "lease-database": {"type": "memfile", "lfc-interval": 3600},
                    # A DHCPv6 client identifies itself by its DUID; the link-layer address comes from
                    # the client's DUID-LL(T) or the relay's option 79 (RFC 6939).
                    "host-reservation-identifiers": ["hw-address", "duid"],
                    "valid-lifetime": 86400,
                    "preferred-lifetime": 43200,
                    "subnet6": sorted(subnets.values(), key=lambda s: s["id"]),
                }
            }
        )
        return out
    config = {
        "Dhcp4": {
            "interfaces-config": {"interfaces": ["*"]},
            "lease-database": {"type": "memfile", "lfc-interval": 3600},
            "host-reservation-identifiers": ["hw-address", "circuit-id", "client-id"],
            "valid-lifetime": 86400,
            "subnet4": sorted(subnets.values(), key=lambda s: s["id"]),
        }
    }
    out["dhcp/kea-dhcp4.json"] = _dumps(config)
    return out


def _subnet_id(block: int, blocks: int) -> int:
    """Kea's subnet ID (32 bits) of a routed segment: its block index + 1, or for a block in the top
    half of an IPv6 network (the OOB switches' blocks, counted from the top) 2^32 - 2 - its index
    from the top; both stable as the plan grows."""
    return block + 1 if block < 2**31 else 2**32 - 2 - (blocks - 1 - block)  # Kea takes 1 .. 2^32 - 2


def _dumps(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
