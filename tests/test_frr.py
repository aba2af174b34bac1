"""FRR itself on the BGP configuration SONiC would run from our config_db (tests/helpers/bgpcfgd.py
models bgpcfgd's templates): vtysh --dryrun accepts it for every switch that has sessions, and, in
Linux network namespaces with real zebra/staticd/bgpd (FRR 8.4, Debian's frr), an aggregation
switch, a rack switch and the two site routers of roce-rail-2tier's border establish their
sessions: the site routers learn the management network we announce, the switches learn the
site's default route (into the kernel), in the IPv4 and the IPv6 management network.

The live test needs root (network namespaces, veth pairs) and FRR's daemons; it skips naming what
is missing. Debian: apt-get install frr (.ci/run installs it)."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import subprocess
import tempfile
import time
from functools import cache
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, compile_text
from helpers.bgpcfgd import frr_conf

from supernodeiac.pipeline import render

SHIPPED = sorted(p.stem for p in BLUEPRINTS.glob("*.yaml"))
FRR = Path("/usr/lib/frr")
VTYSH = shutil.which("vtysh")
RAIL = (BLUEPRINTS / "roce-rail-2tier.yaml").read_text()


def _v6_text() -> str:
    from test_dhcp import V6

    return V6


@cache
def _configs(text: str) -> dict[str, dict]:
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings if f.severity.value == "error"]
    files, _ = render(c, ["sonic"])
    return {p.split("/")[1].removesuffix(".json"): json.loads(d) for p, d in files.items() if p.startswith("sonic/")}


def _bgp_switches(configs: dict[str, dict]) -> list[str]:
    """Every aggregation switch and the first switch of each other DEVICE_METADATA type with sessions."""
    seen: set[str] = set()
    out = []
    for name, cfg in configs.items():
        if not cfg.get("BGP_NEIGHBOR"):
            continue
        kind = cfg["DEVICE_METADATA"]["localhost"]["type"]
        if name.startswith("mgmt-agg") or kind not in seen:
            out.append(name)
            seen.add(kind)
    return out


@pytest.mark.skipif(VTYSH is None, reason="vtysh not installed (Debian: apt-get install frr)")
@pytest.mark.parametrize("name", [*SHIPPED, "ipv6-management"])
def test_vtysh_accepts_the_bgp_config_sonic_would_run(name, tmp_path):
    text = _v6_text() if name == "ipv6-management" else (BLUEPRINTS / f"{name}.yaml").read_text()
    configs = _configs(text)
    switches = _bgp_switches(configs)
    if name in ("roce-rail-2tier", "roce-3tier-oversub", "ipv6-management"):
        assert len(switches) >= 3  # leaves, spines, the management switches
    for switch in switches:
        path = tmp_path / f"{switch}.conf"
        path.write_text(frr_conf(configs[switch]))
        run = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, (switch, run.stdout + run.stderr)


def test_vtysh_dryrun_rejects_what_frr_does_not_know(tmp_path):
    """The check above can fail: a line FRR does not know is an error of vtysh --dryrun."""
    if VTYSH is None:
        pytest.skip("vtysh not installed (Debian: apt-get install frr)")
    cfg = _configs(RAIL)["mgmt-agg-01"]
    path = tmp_path / "bad.conf"
    path.write_text(frr_conf(cfg).replace(" no bgp ebgp-requires-policy\n", " no bgp ebgp-requires-policy\n bgp no-such-knob\n"))
    run = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "no-such-knob" in run.stdout + run.stderr


# --- the live lab ---------------------------------------------------------------------------


def _lab_missing() -> str | None:
    if VTYSH is None or not all((FRR / d).exists() for d in ("zebra", "staticd", "bgpd")):
        return "FRR's daemons not installed (Debian: apt-get install frr)"
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "network namespaces need root and iproute2"
    probe = subprocess.run(["ip", "netns", "add", f"snc-probe-{os.getpid()}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"ip netns add refused: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", f"snc-probe-{os.getpid()}"], check=True)
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class Lab:
    """One network namespace per device, a veth pair per cable between them, zebra/staticd/bgpd
    in each with their sockets under `root`; configs pushed with vtysh -f as bgpcfgd does."""

    def __init__(self) -> None:
        # Not pytest's tmp_path: its parents are root's alone and the daemons run as user frr.
        self.root = Path(tempfile.mkdtemp(prefix="snc-frr-"))
        self.root.chmod(0o755)
        self.tag = f"snc{os.getpid() % 100000}"
        self.nodes: list[str] = []
        self.links = 0

    def ns(self, node: str) -> str:
        return f"{self.tag}-{self.nodes.index(node)}"

    def add(self, node: str) -> None:
        self.nodes.append(node)
        _ip("netns", "add", self.ns(node))
        _ip("-n", self.ns(node), "link", "set", "lo", "up")
        for key in ("all", "default"):  # addresses usable at once (no duplicate address detection)
            subprocess.run(
                ["ip", "netns", "exec", self.ns(node), "sysctl", "-q", f"net.ipv6.conf.{key}.accept_dad=0"], check=True
            )

    def cable(self, a: str, a_port: str, b: str, b_port: str) -> None:
        self.links += 1
        x, y = f"{self.tag}x{self.links}", f"{self.tag}y{self.links}"
        _ip("link", "add", x, "type", "veth", "peer", "name", y)
        for end, node, port in ((x, a, a_port), (y, b, b_port)):
            _ip("link", "set", end, "netns", self.ns(node))
            _ip("-n", self.ns(node), "link", "set", end, "name", port)
            _ip("-n", self.ns(node), "link", "set", port, "up")

    def address(self, node: str, port: str, address: str) -> None:
        """The address on the port; a port no cable made (Vlan10, Loopback0) is made here."""
        if subprocess.run(["ip", "-n", self.ns(node), "link", "show", port], capture_output=True).returncode != 0:
            # A veth pair inside the namespace (no dummy driver in a container): carrier up.
            self.links += 1
            other = f"{self.tag}z{self.links}"
            _ip("-n", self.ns(node), "link", "add", port, "type", "veth", "peer", "name", other)
            for end in (port, other):
                _ip("-n", self.ns(node), "link", "set", end, "up")
        _ip("-n", self.ns(node), "addr", "add", address, "dev", port)

    def start(self, node: str, conf: str) -> None:
        d = self.root / str(self.nodes.index(node))
        d.mkdir()
        d.chmod(0o777)  # the daemons drop to user frr
        for daemon in ("zebra", "staticd", "bgpd"):
            run = subprocess.run(
                ["ip", "netns", "exec", self.ns(node), str(FRR / daemon), "-d", "-f", "/dev/null", "-P", "0",
                 "--vty_socket", str(d), "-z", str(d / "zserv.api"), "-i", str(d / f"{daemon}.pid"),
                 "--log", f"file:{d / daemon}.log"],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert run.returncode == 0, (node, daemon, run.stdout + run.stderr)
        (d / "frr.conf").write_text(conf)
        run = subprocess.run(
            [VTYSH, "--vty_socket", str(d), "-f", str(d / "frr.conf")], capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, (node, run.stdout + run.stderr)

    def show(self, node: str, command: str) -> dict:
        d = self.root / str(self.nodes.index(node))
        run = subprocess.run([VTYSH, "--vty_socket", str(d), "-c", command], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stdout + run.stderr
        return json.loads(run.stdout)

    def routes(self, node: str) -> list[str]:
        run = subprocess.run(["ip", "-n", self.ns(node), "-4", "route"], capture_output=True, text=True, check=True)
        run6 = subprocess.run(["ip", "-n", self.ns(node), "-6", "route"], capture_output=True, text=True, check=True)
        return (run.stdout + run6.stdout).splitlines()

    def close(self) -> None:
        for pid in sorted(self.root.glob("*/*.pid")):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid.read_text()), 15)
        time.sleep(0.5)
        for node in self.nodes:
            subprocess.run(["ip", "netns", "del", self.ns(node)], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def _site_conf(name: str, asn: str, router_id: str, peers: dict[str, str]) -> str:
    """A site router: eBGP to the aggregation switches it faces, the default route sent to them."""
    out = [f"hostname {name}", f"router bgp {asn}", f" bgp router-id {router_id}", " no bgp ebgp-requires-policy",
           " no bgp default ipv4-unicast"]  # fmt: skip
    for address, remote in peers.items():
        v = ipaddress.ip_address(address).version
        out += [f" neighbor {address} remote-as {remote}", f" neighbor {address} timers 3 9",
                f" address-family ipv{v} unicast", f"  neighbor {address} activate",
                f"  neighbor {address} default-originate", " exit-address-family"]  # fmt: skip
    return "\n".join([*out, "exit", ""])


def _wait(check, timeout: float = 45.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


@pytest.mark.parametrize("family", [4, 6])
def test_border_sessions_exchange_the_management_prefix_and_the_default_route(family):
    """roce-rail-2tier's mgmt-agg-01, its rack switch mgmt-A01 and the site routers site-core-1/2
    (each in its own namespace, cabled as the PORT descriptions say, addressed from INTERFACE,
    VLAN_INTERFACE and LOOPBACK_INTERFACE): every session between them is Established; each site
    router learns the management network (STATIC_ROUTE's aggregate) from the aggregation switch
    (AS path = its ASN, next hop = its end of the /31 or /127); the aggregation switch learns
    0.0.0.0/0 (::/0) from both routers and zebra installs it into the kernel; the rack switch
    learns the default route through the aggregation switch and the aggregation switch the rack's
    VLAN prefix (so the rack block is routed)."""
    missing = _lab_missing()
    if missing:
        pytest.skip(missing)
    text = RAIL if family == 4 else _v6_text()
    configs = _configs(text)
    agg, rack = "mgmt-agg-01", "mgmt-A01"
    aggregate = ipaddress.ip_network(next(iter(configs[agg]["STATIC_ROUTE"])).split("|")[1])
    assert aggregate.version == family
    default = "0.0.0.0/0" if family == 4 else "::/0"
    agg_asn = configs[agg]["DEVICE_METADATA"]["localhost"]["bgp_asn"]
    site = {a: n for a, n in configs[agg]["BGP_NEIGHBOR"].items() if n["name"].startswith("site-")}
    assert len(site) == 2
    lab = Lab()
    try:
        for node in (agg, rack, *(n["name"] for n in site.values())):
            lab.add(node)
        # Cables between lab devices, from the PORT descriptions ("peer:peer_port").
        for port, entry in configs[agg]["PORT"].items():
            peer, _, peer_port = entry.get("description", "").partition(":")
            if peer == rack:
                lab.cable(agg, port, rack, peer_port)
            elif peer in lab.nodes:
                lab.cable(agg, port, peer, "eth1")
        for node in (agg, rack):
            cfg = configs[node]
            for key in cfg.get("INTERFACE", {}):
                port, _, address = key.partition("|")
                far = cfg["PORT"][port].get("description", "").split(":")[0]
                if address and far in lab.nodes:
                    lab.address(node, port, address)
            for table in ("VLAN_INTERFACE", "LOOPBACK_INTERFACE"):
                for key in cfg.get(table, {}):
                    port, _, address = key.partition("|")
                    if address:
                        lab.address(node, port, address)
        for address, n in site.items():
            local = ipaddress.ip_interface(f"{n['local_addr']}/{127 if family == 6 else 31}")
            lab.address(n["name"], "eth1", f"{address}/{local.network.prefixlen}")
        for node in (agg, rack):
            lab.start(node, frr_conf(configs[node]))
        for i, n in enumerate(site.values()):
            lab.start(n["name"], _site_conf(n["name"], n["asn"], f"198.51.100.{i + 1}", {n["local_addr"]: agg_asn}))

        afi = "ipv4" if family == 4 else "ipv6"

        def established():
            for node in lab.nodes:
                peers = lab.show(node, f"show bgp {afi} unicast summary json")["peers"]
                up = {a for a, p in peers.items() if p["state"] == "Established"}
                wanted = set(peers)
                if node in (agg, rack):  # the sessions to switches outside the lab stay down
                    wanted = {a for a in peers if configs[node]["BGP_NEIGHBOR"][a]["name"] in lab.nodes}
                assert wanted and wanted <= up, (node, {a: p["state"] for a, p in peers.items() if a in wanted})

        _wait(established)

        def learned():
            for _address, n in site.items():
                routes = lab.show(n["name"], f"show bgp {afi} unicast json")["routes"]
                assert str(aggregate) in routes, (n["name"], sorted(routes))
                (path,) = [p for p in routes[str(aggregate)] if p.get("bestpath")]
                assert path["path"] == agg_asn and path["peerId"] == n["local_addr"]
                hops = {h["ip"] for h in path["nexthops"]}
                assert (
                    n["local_addr"] in hops
                    or family == 6
                    and any(ipaddress.ip_address(h) == ipaddress.ip_address(n["local_addr"]) for h in hops)
                ), hops
            routes = lab.show(agg, f"show bgp {afi} unicast json")["routes"]
            assert default in routes
            assert {p["peerId"] for p in routes[default]} == set(site)  # both routers
            assert any(line.startswith("default") and "proto bgp" in line for line in lab.routes(agg))
            rack_routes = lab.show(rack, f"show bgp {afi} unicast json")["routes"]
            assert default in rack_routes and str(aggregate) in rack_routes
            vlan = {
                str(ipaddress.ip_interface(k.split("|")[1]).network) for k in configs[rack].get("VLAN_INTERFACE", {}) if "|" in k
            }
            assert vlan and vlan <= set(routes), (vlan, sorted(routes))

        _wait(learned, 30)
    finally:
        lab.close()
