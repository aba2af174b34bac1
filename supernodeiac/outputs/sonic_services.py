"""The blueprint's ``services:`` as SONiC config_db tables, the same on every switch (one dict per
variant, shared: the serialiser encodes a shared value once), and the plan of the secrets the
configs leave out.

Tables (sonic-ntp, sonic-syslog, sonic-dns, sonic-system-tacacs, sonic-mgmt_vrf YANG models):
NTP_SERVER (iburst), NTP global (its VRF), SYSLOG_SERVER, DNS_NAMESERVER and DNS_OPTIONS,
TACPLUS_SERVER (priority in the listed order) and TACPLUS global (no passkey), MGMT_VRF_CONFIG.
With ``mgmt_vrf: true`` a switch whose management address is on eth0 reaches the servers in the
``mgmt`` VRF; a switch managed in-band (a management rack switch on its VLAN) keeps the default VRF.

Secrets never reach a config: ``services/secrets.json`` lists, per entry, the config_db table,
key and fields to write once the named secrets are resolved (the TACACS+ passkey, then AAA login
``tacacs+,local``, which SONiC's model refuses without a passkey; each SNMP community, whose name
is the secret itself, so the key is the secret; each SNMPv3 user's passwords). The operator
applies it on each switch from their store, e.g. ``sonic-db-cli CONFIG_DB HSET 'TACPLUS|global'
passkey "$(vault kv get -field=value secret/<name>)"``, or merges it into config_db.json before
serving it to ZTP; ``config save`` keeps it.
"""

from __future__ import annotations

from typing import Any

from ..model.services import Services


def service_tables(services: Services, mgmt_vrf: bool) -> dict[str, dict[str, Any]]:
    """The services' tables for a switch that reaches them in the mgmt VRF (``mgmt_vrf``) or not."""
    vrf = "mgmt" if mgmt_vrf else "default"
    out: dict[str, dict[str, Any]] = {}
    if services.mgmt_vrf:
        out["MGMT_VRF_CONFIG"] = {"vrf_global": {"mgmtVrfEnabled": "true" if mgmt_vrf else "false"}}
    if services.ntp:
        out["NTP"] = {"global": {"vrf": vrf}}
        out["NTP_SERVER"] = {a: {"association_type": "server", "iburst": "on"} for a in services.ntp}
    if services.syslog:
        out["SYSLOG_SERVER"] = {s.address: {"port": str(s.port), "protocol": s.protocol, "vrf": vrf} for s in services.syslog}
    if services.dns:
        out["DNS_NAMESERVER"] = {a: {} for a in services.dns}
        if services.dns_search:
            out["DNS_OPTIONS"] = {"GLOBAL": {"search": list(services.dns_search)}}
    t = services.tacacs
    if t is not None:
        out["TACPLUS"] = {"global": {"auth_type": "pap", "timeout": str(t.timeout_s)}}
        out["TACPLUS_SERVER"] = {
            a: {"priority": str(len(t.servers) - k), "tcp_port": "49", "timeout": str(t.timeout_s), "vrf": vrf}
            for k, a in enumerate(t.servers)
        }
    return out


def secrets_plan(services: Services) -> dict[str, Any]:
    """What the operator writes into every switch's config_db from their secret store, in order."""
    entries: list[dict[str, Any]] = []
    t = services.tacacs
    if t is not None:
        entries.append({"table": "TACPLUS", "key": "global", "fields": {}, "secret_fields": {"passkey": t.secret}})
        entries.append(
            {
                "table": "AAA",
                "key": "authentication",
                "fields": {"login": "tacacs+,local", "failthrough": "True"},
                "secret_fields": {},
            }
        )
    snmp = services.snmp
    if snmp is not None:
        for c in snmp.communities:
            entries.append(
                {"table": "SNMP_COMMUNITY", "key_secret": c.secret, "fields": {"TYPE": c.access.upper()}, "secret_fields": {}}
            )
        for u in snmp.users:
            entries.append(
                {
                    "table": "SNMP_USER",
                    "key": u.name,
                    "fields": {
                        "SNMP_USER_TYPE": "Priv",
                        "SNMP_USER_PERMISSION": u.access.upper(),
                        "SNMP_USER_AUTH_TYPE": "SHA",
                        "SNMP_USER_ENCRYPTION_TYPE": "AES",
                    },
                    "secret_fields": {"SNMP_USER_AUTH_PASSWORD": u.auth_secret, "SNMP_USER_ENCRYPTION_PASSWORD": u.priv_secret},
                }
            )
    return {
        "about": "config_db entries to write on every SONiC switch once the named secrets are resolved from the "
        "operator's store; 'key_secret': the entry's key is the secret; 'secret_fields': field -> secret name",
        "entries": entries,
    }
