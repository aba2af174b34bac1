"""Switch services: NTP, syslog, DNS, TACACS+, SNMP and the management VRF, rendered into every
SONiC switch's config_db. Secrets (the TACACS+ key, SNMP communities and v3 passwords) are named,
never given: ``secret: <name>`` is a reference the operator resolves from their own store when
the configs are installed (``services/secrets.json`` lists where each goes); a value given
inline (``passkey:``, ``community:``, ``password:``) is an error (rule ``secret-inline``)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from .base import Strict
from .clos import Network


def _ip(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IP address ({exc})") from None


Address = Annotated[str, AfterValidator(_ip)]
# A secret's name in the operator's store: a plain word, so it can key a vault path or an env name.
SecretName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")]
Word = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")]


class Syslog(Strict):
    address: Address
    port: int = Field(514, ge=1, le=65535)
    protocol: Literal["udp", "tcp"] = "udp"


class Tacacs(Strict):
    servers: list[Address] = Field(min_length=1, description="TACACS+ servers, in the order the switches try them")
    secret: SecretName = Field(description="name of the shared key in the operator's secret store (never the key)")
    passkey: str | None = Field(None, description="not allowed: the key itself (give 'secret: <name>')")
    timeout_s: int = Field(5, ge=1, le=60)


class SnmpCommunity(Strict):
    secret: SecretName = Field(description="name of the community string in the operator's secret store")
    community: str | None = Field(None, description="not allowed: the community itself (give 'secret: <name>')")
    access: Literal["ro", "rw"] = "ro"


class SnmpUser(Strict):
    name: Word
    auth_secret: SecretName = Field(description="name of the SHA authentication password in the secret store")
    priv_secret: SecretName = Field(description="name of the AES privacy password in the secret store")
    password: str | None = Field(None, description="not allowed: a password itself (give the secrets' names)")
    access: Literal["ro", "rw"] = "ro"


class Snmp(Strict):
    communities: list[SnmpCommunity] = Field(default_factory=list, description="SNMPv2c communities, by reference")
    users: list[SnmpUser] = Field(default_factory=list, description="SNMPv3 users (authPriv: SHA, AES), by reference")


class Services(Strict):
    networks: list[Network] = Field(
        default_factory=list,
        description="site networks the management network reaches through its border (where servers outside "
        "management.addressing.network live); every service address lies in the management network or one of these",
    )
    ntp: list[Address] = Field(default_factory=list, description="NTP servers (iburst)")
    syslog: list[Syslog] = Field(default_factory=list, description="remote syslog servers")
    dns: list[Address] = Field(default_factory=list, description="DNS resolvers")
    dhcp: list[Address] = Field(
        default_factory=list,
        description="DHCP servers (Kea: dhcp/kea-dhcp4.json, or dhcp/kea-dhcp6.json on an IPv6 management network) "
        "the routed rack and out-of-band switches relay their segment's requests to (VLAN dhcp_servers; IPv6: "
        "DHCP_RELAY dhcpv6_servers), as do the flat/MCLAG gateways for a server outside the management network, "
        "in the order given, of the management network's family",
    )
    dns_search: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")]] = Field(
        default_factory=list, description="DNS search domains"
    )
    tacacs: Tacacs | None = Field(None, description="TACACS+ authentication (then local accounts)")
    snmp: Snmp | None = None
    mgmt_vrf: bool = Field(
        False, description="put eth0 and the services reached over it in SONiC's management VRF (MGMT_VRF_CONFIG)"
    )
