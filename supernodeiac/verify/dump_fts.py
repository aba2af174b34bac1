"""Reading the unicast forwarding tables a subnet manager programmed: ``dump_fts`` output
(infiniband-diags, ``dump_fts.c``: one ``ibroute`` table per switch found by a fabric scan) or
OpenSM's own ``opensm-lfts.dump`` (``dump_files TRUE`` / ``osm_dump.c``).

Accepted per switch: a header ``Unicast lids [S-E] of switch <how it was reached> guid 0x<node
GUID> (<description>):``, the two column-title lines, one row per LID with a valid out port
``0x<lid> <port> : (<node type> portguid 0x<port GUID>: '<description>')`` (``#`` and no
parentheses in OpenSM's file), ``(path #k out of n: portguid 0x<port GUID>)`` for the LIDs past
an LMC base, ``unknown node and type`` or ``no dest`` where the tool could not name the
destination, and a closing ``N [valid ]lids dumped``. Anything else is a
:class:`~supernodeiac.verify.errors.DiscoveryError` with its line: multicast tables (``-M``), a
row before any header, a switch given twice, a LID outside its header's range, a table whose row
count differs from its closing line (a cut file), an LMC path row whose port has no base row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import DiscoveryError

# "Unicast lids [0x0-0x115] of switch DR path slid 0; dlid 0; 0,1,33 guid 0x02534e8010000700 (leaf-01):"
# OpenSM: "Unicast lids [0-277] of switch Lid 4 guid 0x02534e8010000700 ('leaf-01'):"
_HEAD = re.compile(
    r"^Unicast lids \[(0x[0-9a-fA-F]+|\d+)-(0x[0-9a-fA-F]+|\d+)\] of switch (.*?) guid 0x([0-9a-fA-F]{1,16}) \((.*)\):\s*$"
)
_ROW = re.compile(r"^0x([0-9a-fA-F]{1,4}) (\d{1,3}) ([:#]) (.*?)\s*$")
_NAMED = re.compile(r"^\(?(Channel Adapter|Switch|Router) portguid 0x([0-9a-fA-F]{1,16}): '(.*)'\)?$")
_PATH = re.compile(r"^\(path #(\d+) out of (\d+): portguid 0x([0-9a-fA-F]{1,16})\)$")
_UNKNOWN = ("unknown node and type", "(unknown node and type)", "no dest", "(no dest)", "")
_FOOT = re.compile(r"^(\d+) (?:valid )?lids dumped\s*$")
_TITLES = ("Lid  Out   Destination", "Port     Info")
_KINDS = {"Channel Adapter": "ca", "Switch": "switch", "Router": "router"}


@dataclass(slots=True)
class Destination:
    """What a LID reaches: its port's GUID, node type and description (from the row that names it)."""

    port_guid: int
    kind: str  # ca | switch | router
    description: str
    line: int


NO_PORT = 255  # no entry for the LID (OpenSM's OSM_NO_PATH)
MAX_LID = 0xFFFF


@dataclass(slots=True)
class SwitchTable:
    guid: int
    description: str
    line: int
    # LID -> out port (0: the switch itself), NO_PORT where the table has no entry: one byte per
    # LID of the header's range, so a 131k plane's 2,560 tables of 68,096 LIDs are 174 MB, not 17 GB.
    out: bytearray = field(default_factory=bytearray)

    def port(self, lid: int) -> int | None:
        p = self.out[lid] if 0 <= lid < len(self.out) else NO_PORT
        return None if p == NO_PORT else p


@dataclass
class ForwardingTables:
    path: str
    switches: dict[int, SwitchTable]  # node GUID -> its table
    # LID -> its destination; an LMC path LID carries its base LID's port, kind and description.
    lids: dict[int, Destination]
    # LID -> (path k, of n) for the LIDs past an LMC base (k from 2; the base LID is path 1).
    paths: dict[int, tuple[int, int]] = field(default_factory=dict)


def _shown(text: str) -> str:
    """A description as the site's fabric sent it, control characters escaped: it reaches error
    messages and the terminal (no plan name has one, so an escaped one matches no planned node)."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _int(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def looks_like_dump_fts(text: str) -> bool:
    """A switch table's header within the first lines (read from the head only: a dump is 10^8 rows)."""
    return any(_HEAD.match(line) for line in text[:16_384].splitlines()[:50])


def parse_dump_fts(text: str, path: str = "<dump_fts>") -> ForwardingTables:
    switches: dict[int, SwitchTable] = {}
    lids: dict[int, Destination] = {}
    pending: list[tuple[int, int, int, int, int]] = []  # (lid, port guid, k, n, line) of path rows
    current: SwitchTable | None = None
    lo = hi = rows = 0
    closed = True
    osm = False  # OpenSM's own file: '#' rows, and its closing line counts up to the top LID
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        m = _HEAD.match(line)
        if m:
            if not closed and current is not None:
                raise DiscoveryError(
                    path,
                    number,
                    f"the table of {current.description!r} (line {current.line}) has no closing 'lids dumped' line: a cut file?",
                )
            guid = int(m.group(4), 16)
            if guid in switches:
                raise DiscoveryError(path, number, f"switch 0x{guid:016x} is dumped twice (first at line {switches[guid].line})")
            description = m.group(5)
            if len(description) >= 2 and description[0] == description[-1] == "'":
                description = description[1:-1]
            lo, hi, rows, closed = _int(m.group(1)), _int(m.group(2)), 0, False
            if not lo <= hi <= MAX_LID:
                raise DiscoveryError(path, number, f"LID range [{m.group(1)}-{m.group(2)}]: LIDs are 16-bit numbers")
            current = switches[guid] = SwitchTable(guid, _shown(description), number, bytearray([NO_PORT]) * (hi + 1))
            continue
        stripped = line.strip()
        if stripped in _TITLES and current is not None and not closed:
            continue
        m = _FOOT.match(stripped)
        if m and current is not None and not closed:
            if int(m.group(1)) != (hi if osm else rows):
                raise DiscoveryError(
                    path,
                    number,
                    f"{m.group(1)} LIDs said dumped for {current.description!r}, {rows} rows read: a cut or edited file",
                )
            closed = True
            continue
        m = _ROW.match(line)
        if m is None:
            if line.startswith("Multicast"):
                raise DiscoveryError(path, number, "multicast tables (dump_fts -M): give the unicast dump (dump_fts without -M)")
            raise DiscoveryError(path, number, f"not a line of dump_fts output: {_shown(line[:80])!r}")
        if current is None or closed:
            raise DiscoveryError(
                path, number, "a forwarding-table row outside a switch's table (no 'Unicast lids ... of switch' line before it)"
            )
        lid, port = int(m.group(1), 16), int(m.group(2))
        if not lo <= lid <= hi:
            raise DiscoveryError(path, number, f"LID 0x{lid:x} is outside the table's range [0x{lo:x}-0x{hi:x}]")
        if current.out[lid] != NO_PORT:
            raise DiscoveryError(path, number, f"LID 0x{lid:x} twice in the table of {current.description!r}")
        if port > 254:
            raise DiscoveryError(path, number, f"out port {port} of LID 0x{lid:x}: a switch has at most 254 ports")
        current.out[lid] = port
        rows += 1
        osm = m.group(3) == "#"
        info = m.group(4)
        named = _NAMED.match(info)
        if named is not None:
            dest = Destination(int(named.group(2), 16), _KINDS[named.group(1)], _shown(named.group(3)), number)
            seen = lids.get(lid)
            if seen is None:
                lids[lid] = dest
            elif seen.port_guid != dest.port_guid:
                raise DiscoveryError(
                    path,
                    number,
                    f"LID 0x{lid:x} is port 0x{dest.port_guid:016x} here and 0x{seen.port_guid:016x} at line {seen.line}",
                )
            continue
        p = _PATH.match(info)
        if p is not None:
            k, n = int(p.group(1)), int(p.group(2))
            if not 2 <= k <= n:
                raise DiscoveryError(path, number, f"path #{k} out of {n}: not an LMC path past the base LID")
            pending.append((lid, int(p.group(3), 16), k, n, number))
            continue
        if info in _UNKNOWN:
            continue  # the tool could not name it; such a LID is no test's destination
        raise DiscoveryError(path, number, f"cannot read the destination of LID 0x{lid:x}: {info[:80]!r}")
    if current is not None and not closed:
        raise DiscoveryError(
            path, current.line, f"the table of {current.description!r} has no closing 'lids dumped' line: a cut file?"
        )
    if not switches:
        raise DiscoveryError(path, 0, "no 'Unicast lids ... of switch' table: not dump_fts output")
    base = {d.port_guid: d for d in lids.values()}
    paths: dict[int, tuple[int, int]] = {}
    for lid, guid, k, n, number in pending:
        d = base.get(guid)
        if d is None:
            raise DiscoveryError(path, number, f"LID 0x{lid:x} is a path of port 0x{guid:016x}, whose base LID no row names")
        if lids.get(lid, d).port_guid != guid:
            raise DiscoveryError(
                path, number, f"LID 0x{lid:x} is port 0x{guid:016x} here and 0x{lids[lid].port_guid:016x} elsewhere"
            )
        lids.setdefault(lid, Destination(guid, d.kind, d.description, number))
        paths[lid] = (k, n)
    return ForwardingTables(path, switches, lids, paths)
