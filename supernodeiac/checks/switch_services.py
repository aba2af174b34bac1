"""The blueprint's ``services:``: every server address in a network the switches reach, and no
secret written inline (the model takes ``passkey``/``community``/``password`` only to say so here,
at their line)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from urllib.parse import urlsplit

from ..facts.sonic_ports import sonic_switches
from ..facts.switch_facts import mgmt_plan
from ..findings import Finding, error, warning
from .base import CHECKS, CheckContext

_INLINE = "give 'secret: <name>' (a key in your secret store; services/secrets.json says where it goes) and delete the value"


@CHECKS.register("service-address")
def check_service_address(ctx: CheckContext) -> Iterator[Finding]:
    s = ctx.blueprint.services
    if s is None:
        return
    m = ctx.blueprint.management
    nets = [ipaddress.ip_network(n) for n in s.networks]
    if m is not None and m.addressing is not None:
        nets.insert(0, ipaddress.ip_network(m.addressing.network))
    named = ", ".join(str(n) for n in nets) or "none"
    where: list[tuple[str, tuple[str | int, ...]]] = [(a, ("ntp", k)) for k, a in enumerate(s.ntp)]
    where += [(x.address, ("syslog", k, "address")) for k, x in enumerate(s.syslog)]
    where += [(a, ("dns", k)) for k, a in enumerate(s.dns)]
    where += [(a, ("dhcp", k)) for k, a in enumerate(s.dhcp)]
    if s.tacacs is not None:
        where += [(a, ("tacacs", "servers", k)) for k, a in enumerate(s.tacacs.servers)]
    # The management network's family is the DHCP family: DHCPv4 relayed to IPv4 servers (VLAN
    # dhcp_servers), DHCPv6 to IPv6 ones (DHCP_RELAY dhcpv6_servers).
    family = ipaddress.ip_network(m.addressing.network).version if m is not None and m.addressing is not None else 4
    relay = "DHCPv4 (VLAN dhcp_servers)" if family == 4 else "DHCPv6 (DHCP_RELAY dhcpv6_servers)"
    for k, a in enumerate(s.dhcp):
        if ipaddress.ip_address(a).version != family:
            yield error(
                "service-address",
                f"services: DHCP server {a} is IPv{6 if family == 4 else 4}; the management network is IPv{family}, "
                f"so the switches relay {relay} to IPv{family} servers",
                ("services", "dhcp", k),
                f"give the DHCP server's IPv{family} address",
            )
    for address, path in where:
        ip = ipaddress.ip_address(address)
        if not any(ip.version == n.version and ip in n for n in nets):
            yield error(
                "service-address",
                f"services: {address} is in no network the switches reach (management and services.networks: {named})",
                ("services", *path),
                "add the site network that holds it to services.networks, or correct the address",
            )


@CHECKS.register("secret-inline")
def check_secret_inline(ctx: CheckContext) -> Iterator[Finding]:
    s = ctx.blueprint.services
    if s is None:
        return
    found: list[tuple[str, tuple[str | int, ...]]] = []
    if s.tacacs is not None and s.tacacs.passkey is not None:
        found.append(("the TACACS+ key", ("tacacs", "passkey")))
    if s.snmp is not None:
        found += [
            ("an SNMP community", ("snmp", "communities", k, "community"))
            for k, c in enumerate(s.snmp.communities)
            if c.community is not None
        ]
        found += [
            (f"SNMPv3 user {u.name}'s password", ("snmp", "users", k, "password"))
            for k, u in enumerate(s.snmp.users)
            if u.password is not None
        ]
    for what, path in found:
        yield error(
            "secret-inline", f"services: {what} is given inline; secrets are named, never written", ("services", *path), _INLINE
        )


@CHECKS.register("ztp-url")
def check_ztp_url(ctx: CheckContext) -> Iterator[Finding]:
    """Where snc renders SONiC zero-touch provisioning (a SONiC switch whose management port takes
    a DHCP reservation: any SONiC switch but the rack and OOB switches, whose own addresses are
    in-band), the blueprint names the provisioning server; an address given as its host lies in a
    network the switches reach."""
    m = ctx.blueprint.management
    if m is None or m.addressing is None:
        return
    f, cat = ctx.fabric, ctx.catalogue
    url = m.addressing.provisioning_url
    if url is None:
        ztp = any(f.devices[i].role not in ("mgmt", "mgmt-oob") for i in sonic_switches(f, cat))
        if ztp:
            yield warning(
                "ztp-url",
                "management.addressing: no provisioning_url, so the DHCP config gives the SONiC switches no ZTP URL and "
                "dhcp/ztp/ is not written: they boot without zero-touch provisioning",
                ("management", "addressing"),
                "set provisioning_url to the HTTP server that serves the rendered dhcp/ztp/ and sonic/ folders "
                "(e.g. http://10.10.0.67 beside Kea), in the management network or in services.networks",
            )
        return
    host = urlsplit(url).hostname or ""  # the model accepted it: http(s)://host[:port][/path], IPv6 in brackets
    at = ("management", "addressing", "provisioning_url")
    services = ctx.blueprint.services
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if services is None or not services.dns:
            yield error(
                "ztp-url",
                f"management.addressing: provisioning_url names the host {host!r}, but the switches are given no DNS "
                "resolver (services.dns) to find it",
                at,
                "give the provisioning server's address, or the site's resolvers under services.dns",
            )
        return
    if services is not None and any(ip.version == n.version and ip in n for n in map(ipaddress.ip_network, services.networks)):
        return  # on a site network reached through the border
    net = ipaddress.ip_network(m.addressing.network)
    if ip.version != net.version or ip not in net:
        named = ", ".join([str(net), *(services.networks if services is not None else [])])
        yield error(
            "ztp-url",
            f"management.addressing: provisioning_url's host {host} is in no network the switches reach "
            f"(management and services.networks: {named})",
            at,
            "give the provisioning server's address in the management network, or add its site network to services.networks",
        )
        return
    if m.switch not in f.layouts:
        return  # the management checks report the unknown switch
    plan = mgmt_plan(m.addressing, len(f.layouts[m.switch].ports_of("data")), f)
    problem = plan.static_problem(host, len(f.racks))
    if problem is not None:
        yield error(
            "ztp-url",
            f"management.addressing: provisioning_url's host {host} is {problem}",
            at,
            "a free address of a rack's management segment (above its access ports, below its switch; the server on a "
            "spare port of that rack's switch), or a server on a site network in services.networks",
        )
