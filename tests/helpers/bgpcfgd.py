"""The FRR configuration SONiC's bgpcfgd would push for a config_db, for tests that load it in
FRR's own daemons (vtysh --dryrun, or bgpd/zebra/staticd in network namespaces).

Follows sonic-buildimage's templates and managers (dockers/docker-fpm-frr/frr/bgpd/):
- bgpd.main.conf.j2: `router bgp <DEVICE_METADATA.bgp_asn>`, `no bgp default ipv4-unicast`,
  `no bgp ebgp-requires-policy`, `bgp router-id <bgp_router_id>` (else Loopback0's IPv4),
  Loopback0's addresses and the VLAN_INTERFACE prefixes as `network` statements of their family;
- templates/general/peer-group.conf.j2 and policies.conf.j2: the PEER_V4/PEER_V6 peer groups with
  the FROM_BGP_PEER_*/TO_BGP_PEER_* route maps (permit 100, CHECK_IDF_ISOLATION);
- templates/general/instance.conf.j2, per BGP_NEIGHBOR: remote-as, description, timers when not
  60/180, shutdown when admin_status is down, the peer group and `activate` in the neighbour
  address's own family only, next-hop-self / route-reflector-client;
- src/sonic-bgpcfgd/bgpcfgd/managers_static_rt.py, per STATIC_ROUTE: `ip[v6] route <prefix>
  blackhole|<nexthop> tag 1` (tag 2 when advertise is "false") and, once, the STATIC_ROUTE_FILTER
  route map (match tag 1) redistributed into both families.

Only what our configs use is modelled (no BFD, VRFs other than default, allow lists, BBR); a
routing table (BGP_*, VRF, ROUTE_MAP ...) this helper does not model is an error rather than silently dropped, so a new table the
renderer starts emitting forces this model to follow.
"""

from __future__ import annotations

import ipaddress

# config_db tables that would change bgpd's or staticd's configuration beyond what is modelled here.
_UNMODELLED = ("BGP_", "VRF", "ROUTE_MAP", "PREFIX_SET", "PREFIX", "ROUTE_REDISTRIBUTE", "STATIC_ROUTE_BFD", "BFD_")
_MODELLED = {"BGP_NEIGHBOR"}


def _addresses(table: dict, name: str | None = None) -> list[ipaddress.IPv4Interface | ipaddress.IPv6Interface]:
    out = []
    for key in table:
        if "|" in key:
            iface, address = key.split("|", 1)
            if name is None or iface == name:
                out.append(ipaddress.ip_interface(address))
    return out


def frr_conf(cfg: dict) -> str:
    """bgpd's and staticd's configuration (one integrated frr.conf) for config_db `cfg`."""
    unknown = {t for t in cfg if t.startswith(_UNMODELLED) and t not in _MODELLED}
    if unknown:
        raise ValueError(f"tables this bgpcfgd model does not know: {sorted(unknown)}")
    meta = cfg["DEVICE_METADATA"]["localhost"]
    asn = meta.get("bgp_asn")
    neighbors: dict = cfg.get("BGP_NEIGHBOR", {})
    statics: dict = cfg.get("STATIC_ROUTE", {})
    loop0 = _addresses(cfg.get("LOOPBACK_INTERFACE", {}), "Loopback0")
    lo4 = next((a for a in loop0 if a.version == 4), None)
    lo6 = next((a for a in loop0 if a.version == 6), None)
    out = [f"hostname {meta['hostname']}", "!"]
    # managers_static_rt: the routes (staticd), tagged for the redistribution filter.
    for key, data in statics.items():
        vrf, prefix = key.split("|", 1) if "|" in key else ("default", key)
        assert vrf == "default", key
        family = "ipv6" if ipaddress.ip_network(prefix).version == 6 else "ip"
        tag = "2" if data.get("advertise") == "false" else "1"
        if data.get("blackhole") == "true":
            out.append(f"{family} route {prefix} blackhole tag {tag}")
        else:
            for hop in data["nexthop"].split(","):
                out.append(f"{family} route {prefix} {hop} tag {tag}")
    if statics:
        out += ["!", "route-map STATIC_ROUTE_FILTER permit 10", " match tag 1", "exit"]
    if lo4 is not None:
        out.append(f"ip prefix-list PL_LoopbackV4 permit {lo4.ip}/32")
    # policies.conf.j2
    out += [
        "!",
        "ip prefix-list DEFAULT_IPV4 permit 0.0.0.0/0",
        "ipv6 prefix-list DEFAULT_IPV6 permit ::/0",
        "!",
        "route-map FROM_BGP_PEER_V4 permit 100",
        "exit",
        "route-map TO_BGP_PEER_V4 permit 100",
        " call CHECK_IDF_ISOLATION",
        "exit",
        "route-map FROM_BGP_PEER_V6 permit 1",
        " on-match next",
        " set ipv6 next-hop prefer-global",
        "exit",
        "route-map FROM_BGP_PEER_V6 permit 100",
        "exit",
        "route-map TO_BGP_PEER_V6 permit 100",
        " call CHECK_IDF_ISOLATION",
        "exit",
        "route-map CHECK_IDF_ISOLATION permit 10",
        "exit",
        "!",
    ]
    if asn is None or str(asn).lower() in ("none", "null"):
        return "\n".join(out) + "\n"
    # bgpd.main.conf.j2
    out += [
        f"router bgp {asn}",
        " bgp log-neighbor-changes",
        " bgp suppress-fib-pending",
        " no bgp default ipv4-unicast",
        " no bgp ebgp-requires-policy",
    ]
    if "bgp_router_id" in meta:
        out.append(f" bgp router-id {meta['bgp_router_id']}")
    elif lo4 is not None:
        out.append(f" bgp router-id {lo4.ip}")
    if lo4 is not None:
        out.append(f" network {lo4.ip}/32")
    if lo6 is not None:
        out += [" address-family ipv6", f"  network {lo6.ip}/64", " exit-address-family"]
    for prefix in _addresses(cfg.get("VLAN_INTERFACE", {})):
        if prefix.version == 4:
            out.append(f" network {prefix}")
        else:
            out += [" address-family ipv6", f"  network {prefix}", " exit-address-family"]
    # peer-group.conf.j2 (a MgmtLeafRouter / LeafRouter without BBR: no allowas-in)
    out += [" neighbor PEER_V4 peer-group", " neighbor PEER_V6 peer-group"]
    for v in ("4", "6"):
        out += [
            f" address-family ipv{v} unicast",
            f"  neighbor PEER_V{v} soft-reconfiguration inbound",
            f"  neighbor PEER_V{v} route-map FROM_BGP_PEER_V{v} in",
            f"  neighbor PEER_V{v} route-map TO_BGP_PEER_V{v} out",
            " exit-address-family",
        ]
    # instance.conf.j2 per neighbour
    for address, n in neighbors.items():
        v = ipaddress.ip_address(address).version
        out += [f" neighbor {address} remote-as {n['asn']}", f" neighbor {address} description {n['name']}"]
        keepalive, hold = n.get("keepalive", "60"), n.get("holdtime", "180")
        if int(keepalive) != 60 or int(hold) != 180:
            out.append(f" neighbor {address} timers {keepalive} {hold}")
        out.append(f" neighbor {address} timers connect 10")
        if n.get("admin_status") == "down":
            out.append(f" neighbor {address} shutdown")
        out += [f" address-family ipv{v} unicast", f"  neighbor {address} peer-group PEER_V{v}"]
        if int(n.get("rrclient", "0")):
            out.append(f"  neighbor {address} route-reflector-client")
        if int(n.get("nhopself", "0")):
            out.append(f"  neighbor {address} next-hop-self")
        out += [f"  neighbor {address} activate", " exit-address-family"]
    if statics:
        for v in ("4", "6"):
            out += [
                f" address-family ipv{v} unicast",
                "  redistribute static route-map STATIC_ROUTE_FILTER",
                " exit-address-family",
            ]
    out += ["exit", "!"]
    return "\n".join(out) + "\n"
