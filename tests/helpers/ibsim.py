"""Run the real subnet manager on a simulated fabric: ibsim + OpenSM through the umad2sim preload
(shared/reference/ibsim.md), and read back what it did.

A :class:`Simulation` starts ``ibsim`` on a topology file under its own socket name (runs can go
in parallel), hands out the environment every client needs, runs ``opensm`` once (``-o``) with a
given configuration, and reads the switches back with ``dump_fts`` and ``ibnetdiscover``. It
stops only the processes it started, by PID.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from supernodeiac.verify.ibnetdiscover import Topology, parse_ibnetdiscover

TOOLS = ("ibsim", "opensm", "dump_fts", "ibnetdiscover")


def _which(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None)


def preload() -> str | None:
    found = sorted(glob.glob("/usr/lib/*/umad2sim/libumad2sim.so")) + sorted(glob.glob("/usr/lib/umad2sim/libumad2sim.so"))
    return found[0] if found else None


def missing() -> str | None:
    """Why the simulation cannot run here (None when it can)."""
    absent = [t for t in TOOLS if _which(t) is None]
    if preload() is None:
        absent.append("libumad2sim.so")
    if absent:
        return "ibsim/OpenSM not installed (" + ", ".join(absent) + "): apt-get install opensm ibsim-utils infiniband-diags"
    return None


def install(files: dict[str, bytes], fabric: str, folder: Path, conf_name: str = "opensm.conf") -> Path:
    """One fabric's OpenSM files (``opensm/<fabric>/...`` of a render or a bind) written flat into
    ``folder``, with the /etc/opensm paths of ``conf_name`` (opensm.conf, or the acceptance
    window's opensm-window.conf) pointed there; returns that file."""
    folder.mkdir(parents=True, exist_ok=True)
    prefix = f"opensm/{fabric}/"
    for path, data in files.items():
        if path.startswith(prefix):
            (folder / path[len(prefix) :]).write_bytes(data)
    conf = folder / conf_name
    conf.write_text(conf.read_text().replace("/etc/opensm", str(folder)))
    return conf


def first_hca(topology: Path) -> str:
    """The node id of the topology's first HCA record (where the simulated SM runs)."""
    return re.search(r'^Ca\s+\d+\s+"(H-[0-9a-f]+)"', topology.read_text(), re.M).group(1)  # type: ignore[union-attr]


def first_hca_description(topology: Path) -> str:
    """The description of that first HCA record."""
    return re.search(r'^Ca\s+\d+\s+"H-[0-9a-f]+"\s*#\s*"([^"]*)"', topology.read_text(), re.M).group(1)  # type: ignore[union-attr]


@dataclass
class OpenSMRun:
    log: str
    returncode: int | None
    subnet_up: bool
    engine: str | None  # from "<engine> tables configured on all switches"
    errors: list[str] = field(default_factory=list)
    vls_needed: int | None = None  # dfsssp's "Virtual Lanes needed: N" (deadlock-free routing's layers)

    def summary(self) -> str:
        lines = [
            ln for ln in self.log.splitlines() if re.search(r"ERR|SUBNET UP|tables configured|routing engine|Lanes needed", ln)
        ]
        return "\n".join(lines[-40:])


def _sizes(text: str) -> list[str]:
    """ibsim's -N/-S/-P limits for a topology (its defaults stop at 2,048 nodes and 256 switches)."""
    switches = cas = ports = 0
    for m in re.finditer(r"^(Switch|Ca|Hca)\s+(\d+)\s", text, re.M):
        if m.group(1) == "Switch":
            switches += 1
        else:
            cas += 1
        ports += int(m.group(2)) + 1
    nodes = switches + cas
    return ["-N", str(max(2048, nodes + 64)), "-S", str(max(256, switches + 16)), "-P", str(max(13312, ports + 256))]


class Simulation:
    def __init__(self, topology: Path, workdir: Path, sim_host: str, ready_timeout: float = 120) -> None:
        self.topology = topology
        self.workdir = workdir
        self.sim_host = sim_host
        workdir.mkdir(parents=True, exist_ok=True)
        self.sockname = f"snc-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.log_path = workdir / "ibsim.log"
        env = {**os.environ, "IBSIM_SOCKNAME": self.sockname}
        env.pop("LD_PRELOAD", None)
        args = [_which("ibsim"), "-s", "-n", *_sizes(topology.read_text()), str(topology)]
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=workdir
        )  # type: ignore[list-item]
        deadline = time.monotonic() + ready_timeout
        while "Network simulator ready." not in self.log_path.read_text():
            if self.proc.poll() is not None:
                raise RuntimeError(f"ibsim exited {self.proc.returncode}:\n{self.ibsim_log()[-3000:]}")
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"ibsim not ready after {ready_timeout} s:\n{self.ibsim_log()[-3000:]}")
            time.sleep(0.05)

    def ibsim_log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def env(self) -> dict[str, str]:
        run = self.workdir / "run"
        run.mkdir(exist_ok=True)
        return {
            **os.environ,
            "LD_PRELOAD": preload() or "",
            "IBSIM_SOCKNAME": self.sockname,
            "SIM_HOST": self.sim_host,
            "OSM_TMP_DIR": str(run),
            "OSM_CACHE_DIR": str(run),
        }

    def _client(self, args: list[str], timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(args, env=self.env(), cwd=self.workdir / "run", capture_output=True, text=True, timeout=timeout)

    def opensm(self, conf: Path, timeout: float = 300) -> OpenSMRun:
        """One OpenSM pass (-o: configure once, then exit) with ``conf``; routing dumps off (-D 0x03)."""
        run = self.workdir / "run"
        run.mkdir(exist_ok=True)
        log = run / "opensm.log"
        args = [
            _which("opensm"),
            "-F",
            str(conf),
            "-o",
            "-e",
            "-s",
            "0",
            "-f",
            str(log),
            "--dump_files_dir",
            str(run),
            "-D",
            "0x03",
        ]
        proc = subprocess.Popen(args, env=self.env(), cwd=run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # type: ignore[list-item]
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGTERM)  # the PID we started, nothing else
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
            code = None
        text = log.read_text(errors="replace") if log.exists() else ""
        engines = re.findall(r"osm_ucast_mgr_process: (\S+) tables configured on all switches", text)
        errors = [
            ln
            for ln in text.splitlines()
            if (" ERR " in ln and "Failed to setup routing engine 'no_fallback'" not in ln)  # a bogus error of 3.3.23
            or "Falling back to default routing" in ln  # ftree refusing the fabric (lmc > 0, no roots): not logged as ERR
        ]
        vls = re.findall(r"dfsssp_remove_deadlocks: Virtual Lanes needed: (\d+)", text)
        return OpenSMRun(text, code, "SUBNET UP" in text, engines[-1] if engines else None, errors, int(vls[-1]) if vls else None)

    def client(self, args: list[str], timeout: float = 300) -> str:
        """Standard output of an infiniband-diags tool (``smpquery``, ...) run on the fabric."""
        return self._client([_which(args[0]) or args[0], *args[1:]], timeout).stdout

    def pkeys(self, lids: list[int], workers: int = 8, timeout: float = 120) -> dict[int, set[int]]:
        """The P_Key table of the port at each LID (``smpquery pkeys``, one SMP round per port, read
        from the port's own SMA), without the empty 0x0000 entries; ``workers`` queries at a time
        (ibsim serves at most 10 clients at once, IBSIM_MAX_CLIENTS)."""
        from concurrent.futures import ThreadPoolExecutor

        def one(lid: int) -> set[int]:
            out = self.client(["smpquery", "pkeys", str(lid)], timeout)
            return {int(k, 16) for k in re.findall(r"0x([0-9a-f]{4})", out)} - {0}

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return dict(zip(lids, pool.map(one, lids), strict=True))

    def dump_fts(self, timeout: float = 300) -> str:
        return self._client([_which("dump_fts")], timeout).stdout  # type: ignore[list-item]

    def ibnetdiscover(self, timeout: float = 300) -> str:
        return self._client([_which("ibnetdiscover")], timeout).stdout  # type: ignore[list-item]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # the ibsim we started (SIGTERM is fine, ibsim.md section 7)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def simulate(topology: Path, workdir: Path) -> Simulation:
    """A :class:`Simulation` of ``topology`` whose SM port is its first HCA."""
    return Simulation(topology, workdir, first_hca(topology))


# -- reading the forwarding tables back ----------------------------------------------------------

_FT_HEAD = re.compile(r"^Unicast lids \[0x([0-9a-f]+)-0x([0-9a-f]+)\] of switch .* guid 0x([0-9a-f]+) ")
_FT_ROW = re.compile(r"^0x([0-9a-f]+) (\d+) : \((Channel Adapter|Switch|Router|path #\d+ out of \d+:) portguid 0x([0-9a-f]+)")


def parse_dump_fts(text: str) -> tuple[dict[int, dict[int, int]], dict[int, int]]:
    """(switch GUID -> {LID: out port}, LID -> port GUID) from dump_fts output, the LIDs past an
    LMC base ("path #k out of n") included."""
    tables: dict[int, dict[int, int]] = {}
    lids: dict[int, int] = {}
    current: dict[int, int] | None = None
    for line in text.splitlines():
        m = _FT_HEAD.match(line)
        if m:
            current = tables.setdefault(int(m.group(3), 16), {})
            continue
        m = _FT_ROW.match(line)
        if m and current is not None:
            lid = int(m.group(1), 16)
            current[lid] = int(m.group(2))
            lids[lid] = int(m.group(4), 16)
    return tables, lids


@dataclass
class RouteCheck:
    pairs: int = 0
    routed: int = 0
    unroutable: list[str] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)
    max_hops: int = 0


def walk_routes(topology: Topology, tables: dict[int, dict[int, int]], lids: dict[int, int]) -> RouteCheck:
    """Follow the LFTs from every HCA port to every other: each walk must reach its destination
    without a loop or a missing entry (an independent check of what OpenSM programmed).

    Forwarding depends only on the switch and the destination LID, so the walk from a switch
    towards a LID is made once and reused by every source behind it (switches x LIDs steps, not
    pairs x hops: 2,044 HCAs in seconds)."""
    nodes = topology.nodes
    port_guid_of: dict[tuple[int, int], int] = {}
    for n in nodes.values():
        for p, g in n.port_guids.items():
            port_guid_of[(n.guid, p)] = g
    ca_ports = [(n.guid, p) for n in nodes.values() if n.kind == "ca" for p in n.ports]
    lid_of_port = {g: lid for lid, g in lids.items()}
    top = max(lids, default=0)
    result = RouteCheck()
    limit = 4 * len(nodes) + 4
    # (switch, dlid) -> ("ok", switch hops to delivery) | ("loop", 0) | ("fail", why)
    memo: dict[tuple[int, int], tuple[str, int | str]] = {}

    def towards(start: int, dlid: int, dst: tuple[int, int]) -> tuple[str, int | str]:
        path: list[int] = []
        on_path: set[int] = set()
        sw = start
        res: tuple[str, int | str]
        while True:
            known = memo.get((sw, dlid))
            if known is not None:
                res = known
                break
            if sw in on_path or len(path) > limit:
                res = ("loop", 0)
                break
            on_path.add(sw)
            path.append(sw)
            out = tables.get(sw, {}).get(dlid)
            if out is None:
                # infiniband-diags 44 never prints a top LID that is a multiple of 64
                res = ("ok", 0) if dlid == top and top % 64 == 0 else ("fail", f"at {nodes[sw].description}")
                break
            peer, peer_port = nodes[sw].ports.get(out, (None, None, 0))[:2]
            if peer is None:
                res = ("fail", f"{nodes[sw].description} port {out} is not connected")
                break
            if (peer, peer_port) == dst:
                res = ("ok", 0)
                break
            if nodes[peer].kind != "switch":
                res = ("fail", f"ends at {nodes[peer].description}")
                break
            sw = peer
        for back in reversed(path):
            if res[0] == "ok":
                res = ("ok", int(res[1]) + 1)
            memo[(back, dlid)] = res
        return memo.get((start, dlid), res)

    # Sources behind one switch share every walk: one per (first switch, destination).
    behind: dict[int, list[tuple[int, int]]] = {}
    for src in ca_ports:
        behind.setdefault(nodes[src[0]].ports[src[1]][0], []).append(src)
    sources_of = {sw: set(sources) for sw, sources in behind.items()}
    for dst in ca_ports:
        dst_guid = port_guid_of.get(dst) or nodes[dst[0]].port_guids.get(dst[1])
        dlid = lid_of_port.get(dst_guid)  # type: ignore[arg-type]
        for first_sw, sources in behind.items():
            n = len(sources) - (dst in sources_of[first_sw])
            result.pairs += n
            if dlid is None:
                result.unroutable += [f"{nodes[dst[0]].description}: no LID"] * n
                continue
            kind, what = towards(first_sw, dlid, dst)
            if kind == "ok":
                result.routed += n
                result.max_hops = max(result.max_hops, int(what))
                continue
            others = [src for src in sources if src != dst]  # named only when something is wrong
            if kind == "loop":
                result.loops += [f"{nodes[src[0]].description} -> {nodes[dst[0]].description}" for src in others]
            else:
                result.unroutable += [f"{nodes[src[0]].description} -> {nodes[dst[0]].description} {what}" for src in others]
    return result


# -- faults: a topology rewired as a careless installer would -----------------------------------


class Rewire:
    """An ibnetdiscover topology (as snc renders it) whose links can be moved, swapped and
    removed, then written back, both ends of every link consistent (ibsim insists)."""

    def __init__(self, text: str) -> None:
        self.topo = parse_ibnetdiscover(text)
        self.headers: dict[int, list[str]] = {}
        self.rates: dict[frozenset, str] = {}
        guid = None
        for line in text.splitlines():
            m = re.match(r'^(Switch|Ca)\s+\d+\s+"[SH]-([0-9a-f]+)"', line)
            if m:
                guid = int(m.group(2), 16)
                self.headers[guid] = []
            if line.startswith("sysimgguid="):
                guid = None
                pending = [line]
                continue
            if line.startswith(("switchguid=", "caguid=")):
                pending.append(line)
                continue
            if m:
                self.headers[guid] = [*pending, line]  # type: ignore[index]
        self.links: dict[tuple[int, int], tuple[int, int]] = {}
        for a, pa, b, pb, _ in self.topo.links():
            self.links[(a, pa)] = (b, pb)
            self.links[(b, pb)] = (a, pa)

    def guid(self, description: str) -> int:
        return next(n.guid for n in self.topo.nodes.values() if n.description == description)

    def peer(self, guid: int, port: int) -> tuple[int, int]:
        return self.links[(guid, port)]

    def remove(self, guid: int, port: int) -> None:
        other = self.links.pop((guid, port))
        self.links.pop(other)

    def move(self, guid: int, port: int, to_guid: int, to_port: int) -> None:
        """The cable plugged into (guid, port) goes into (to_guid, to_port) instead."""
        assert (to_guid, to_port) not in self.links, "target port is taken"
        other = self.links.pop((guid, port))
        self.links[other] = (to_guid, to_port)
        self.links[(to_guid, to_port)] = other

    def swap(self, guid: int, port1: int, port2: int) -> None:
        """Exchange the plugs in two ports of one node."""
        p1, p2 = self.links.pop((guid, port1)), self.links.pop((guid, port2))
        self.links[(guid, port1)], self.links[p2] = p2, (guid, port1)
        self.links[(guid, port2)], self.links[p1] = p1, (guid, port2)

    def text(self) -> str:
        nodes = self.topo.nodes
        out = []
        for guid, node in nodes.items():
            lines = list(self.headers[guid])
            for (g, port), (peer, peer_port) in sorted(self.links.items()):
                if g != guid:
                    continue
                pn = nodes[peer]
                peer_id = f"{'S' if pn.kind == 'switch' else 'H'}-{peer:016x}"
                peer_guid = f"({pn.port_guids[peer_port]:x}) " if pn.kind != "switch" else ""
                own_guid = f"({node.port_guids[port]:x}) " if node.kind != "switch" else ""
                lines.append(f'[{port}]{own_guid}\t"{peer_id}"[{peer_port}]{peer_guid}\t\t# "{pn.description}" lid 0 4xNDR')
            out.append("\n".join(lines) + "\n")
        return "\n".join(out)


# -- a fabric as a site has it: the plan's cabling, the hardware's GUIDs --------------------------

# NVIDIA (Mellanox) OUIs as real GUIDs start (IEEE registry: 0xb8cef6, 0x946dae): switches and HCAs
# get GUIDs of their own, different from the plan's 0x02534e... ones, in no order the plan knows.
VENDOR_SWITCH = 0xB8CEF60300000000
VENDOR_HCA = 0x946DAE0300000000


def vendor_guids(text: str, seed: int = 7) -> str:
    """A rendered topology whose ``switchguid=``/``caguid=``/``sysimgguid=`` lines (which ibsim takes
    the GUIDs from; the record ids are only names) carry vendor-like GUIDs: a multiplicative
    scramble of the record's position, so neighbours do not get neighbouring GUIDs."""
    out = []
    k = 0
    for line in text.splitlines():
        if line.startswith("sysimgguid="):
            k += 1
            pending = (k * 0x9E3779B1 + seed) & 0xFFFFFF
            continue  # written again below, with the node's new GUID
        if line.startswith("switchguid="):
            g = VENDOR_SWITCH | pending << 4
            out += [f"sysimgguid=0x{g:x}", f"switchguid=0x{g:x}({g:x})"]
            continue
        if line.startswith("caguid="):
            g = VENDOR_HCA | pending << 4  # port 1 is node + 1 (ibsim)
            out += [f"sysimgguid=0x{g:x}", f"caguid=0x{g:x}"]
            continue
        out.append(line)
    return "\n".join(out) + "\n"


# -- credit loops: the channel-dependency graph of the programmed routes ----------------------------

_SL2VL_ROW = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):\s*((?:\|\s*\d+)+)\|")


def parse_sl2vl(text: str) -> dict[tuple[int, int], list[int]]:
    """(in port, out port) -> the 16 VLs of SL 0..15, from ``smpquery sl2vl LID PORT``."""
    out: dict[tuple[int, int], list[int]] = {}
    for line in text.splitlines():
        m = _SL2VL_ROW.match(line)
        if m:
            out[(int(m.group(1)), int(m.group(2)))] = [int(v) for v in m.group(3).replace("|", " ").split()]
    return out


def read_sl2vl(
    sim: Simulation, topology: Topology, lids: dict[int, int], timeout: float = 300
) -> dict[int, dict[tuple[int, int], list[int]]]:
    """The SL-to-VL tables of every switch-to-switch output port, as the switches' SMAs report them
    (switch GUID -> (in port, out port) -> VL of SL 0..15); a switch port's GUID is its node's."""
    nodes = topology.nodes
    lid_of = {g: lid for lid, g in lids.items()}
    out: dict[int, dict[tuple[int, int], list[int]]] = {}
    for guid in sorted(g for g, n in nodes.items() if n.kind == "switch" and g in lid_of):
        table = out.setdefault(guid, {})
        for port, (peer, _, _) in sorted(nodes[guid].ports.items()):
            if nodes[peer].kind == "switch":
                table.update(parse_sl2vl(sim.client(["smpquery", "sl2vl", str(lid_of[guid]), str(port)], timeout)))
    return out


Channel = tuple[int, int, int]  # (switch GUID, output port, VL): one buffer a packet can wait on


@dataclass
class DependencyGraph:
    channels: set[Channel] = field(default_factory=set)
    edges: dict[Channel, set[Channel]] = field(default_factory=dict)
    vls: set[int] = field(default_factory=set)

    def cycle(self) -> list[Channel]:
        """A cycle of channel dependencies (a possible credit loop), or [] when the graph is acyclic
        (Dally and Seitz: a routing function is deadlock-free when its dependency graph has none)."""
        indegree = dict.fromkeys(self.channels, 0)
        for targets in self.edges.values():
            for t in targets:
                indegree[t] += 1
        ready = [c for c, d in indegree.items() if d == 0]
        while ready:
            c = ready.pop()
            for t in self.edges.get(c, ()):
                indegree[t] -= 1
                if indegree[t] == 0:
                    ready.append(t)
        left = {c for c, d in indegree.items() if d > 0}
        if not left:
            return []
        # Every channel left has a predecessor left: walk forward inside them until one repeats.
        start = min(left)
        seen: dict[Channel, int] = {}
        path: list[Channel] = []
        c = start
        while c not in seen:
            seen[c] = len(path)
            path.append(c)
            c = min(t for t in self.edges[c] if t in left)
        return path[seen[c] :]


def dependency_graph(
    topology: Topology,
    tables: dict[int, dict[int, int]],
    lids: dict[int, int],
    sl: int = 0,
    sl2vl: dict[int, dict[tuple[int, int], list[int]]] | None = None,
) -> DependencyGraph:
    """The channel-dependency graph of the routes every HCA port takes to every other with service
    level ``sl`` (the one SL a collective library puts all its queue pairs on), each hop on the VL
    the switch's SL-to-VL table gives for (in port, out port, sl); without tables every hop is on
    one VL, the case of a fabric whose SL2VL maps that SL to VL 0 everywhere.

    A channel is a switch output port on one VL; a route through switch s out of port p into switch t
    and out of its port q makes channel (t, q) a dependency of (s, p). HCA links are left out: nothing
    waits on an HCA's send queue from inside the fabric, and a delivery to an HCA never blocks on a
    channel further on, so neither can close a cycle. Forwarding depends only on (switch, in port,
    destination), so each is walked once (switches x destinations steps)."""
    nodes = topology.nodes
    lid_of_port = {g: lid for lid, g in lids.items()}
    graph = DependencyGraph()
    ca_ports = [(n.guid, p) for n in nodes.values() if n.kind == "ca" for p in n.ports]
    # (first switch, in port); without SL2VL tables the in port changes no VL, so one entry per switch
    # (forwarding depends on the switch and the destination only): 16x fewer walks on a Dragonfly.
    entries = sorted({(nodes[g].ports[p][0], nodes[g].ports[p][1] if sl2vl is not None else 0) for g, p in ca_ports})
    limit = 4 * len(nodes) + 4

    def vl_of(sw: int, inp: int, out: int) -> int:
        if sl2vl is None:
            return 0
        return sl2vl[sw][(inp, out)][sl]

    for dst in ca_ports:
        dlid = lid_of_port.get(nodes[dst[0]].port_guids.get(dst[1]))  # type: ignore[arg-type]
        if dlid is None:
            continue
        seen: set[tuple[int, int]] = set()
        for sw, inp in entries:
            prev: Channel | None = None
            for _ in range(limit):
                out = tables.get(sw, {}).get(dlid)
                if out is None:
                    break  # unroutable: walk_routes reports it
                peer, peer_port = nodes[sw].ports.get(out, (None, None, 0))[:2]
                if peer is None or nodes[peer].kind != "switch":
                    break  # delivered (or off the fabric: walk_routes reports that)
                ch = (sw, out, vl_of(sw, inp, out))
                graph.channels.add(ch)
                graph.vls.add(ch[2])
                if prev is not None:
                    graph.edges.setdefault(prev, set()).add(ch)
                if (sw, inp) in seen:
                    break  # the rest of this walk is in the graph already
                seen.add((sw, inp))
                prev, sw, inp = ch, peer, peer_port if sl2vl is not None else 0
    return graph
