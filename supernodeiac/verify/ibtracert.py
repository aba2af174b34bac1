"""``ibtracert`` output (infiniband-diags) read back as hops, and hops turned into cables.

ibtracert prints the path from one port to another, one line per hop::

    From ca {0x02534e0000000082} portnum 1 lid 85-85 "gpu-0003 mlx5_3"
    [1] -> switch port {0x02534e8010000100}[3] lid 4-4 "ib-leaf-su001-02"
    [37] -> switch port {0x02534e8020000000}[13] lid 3-3 "ib-spine-001"
    [33] -> switch port {0x02534e8010000400}[33] lid 10-10 "ib-leaf-su001-05"
    [1] -> ca port {0x02534e0000000009}[1] lid 31-31 "gpu-0001 mlx5_6"
    To ca {0x02534e0000000008} portnum 1 lid 31-31 "gpu-0001 mlx5_6"

A hop ``[out] -> <kind> port {guid}[in] ... "<description>"`` is the cable from port ``out`` of
the node before to port ``in`` of the named node. ``acceptance/<fabric>/ports.tsv`` (snc render)
names the cable behind each (description, port). Pure: text in, data out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FROM = re.compile(r'^From (?:ca|switch|router) \{0x[0-9a-fA-F]+\} portnum (\d+) lid \S+ "(.*)"\s*$')
_HOP = re.compile(r'^\[(\d+)\] -> (?:ca|switch|router)(?: port)? \{0x[0-9a-fA-F]+\}\[(\d+)\] lid \S+ "(.*)"\s*$')
_TO = re.compile(r'^To (?:ca|switch|router) \{0x[0-9a-fA-F]+\} portnum \d+ lid \S+ "(.*)"\s*$')


@dataclass
class Trace:
    source: str  # the first node's description
    hops: list[tuple[tuple[str, int], tuple[str, int]]] = field(default_factory=list)  # (node, port) -> (node, port)
    complete: bool = False  # the "To ..." line closes it
    error: str = ""  # ibtracert's own complaint ("iberror: ..."), or what is not a trace


def parse_ibtracert(text: str) -> Trace:
    """The hops of one ibtracert run. A text without a ``From`` line, or with a hop line that is
    not one, comes back with ``error`` set (and the hops read up to there)."""
    trace = Trace("")
    node: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if "iberror" in line or line.startswith("ibwarn"):
            trace.error = trace.error or line[:200]
            continue
        if node is None:
            m = _FROM.match(line)
            if m:
                node = trace.source = m.group(2)
            continue
        m = _HOP.match(line)
        if m:
            trace.hops.append(((node, int(m.group(1))), (m.group(3), int(m.group(2)))))
            node = m.group(3)
            continue
        m = _TO.match(line)
        if m:
            trace.complete = m.group(1) == node
            if not trace.complete:
                trace.error = f"line {n}: the path ends at {node!r}, not at {m.group(1)!r}"
            break
        trace.error = trace.error or f"line {n}: not an ibtracert hop: {line[:80]!r}"
        break
    if node is None and not trace.error:
        trace.error = "no 'From ...' line: not ibtracert output"
    elif not trace.complete and not trace.error:
        trace.error = "no 'To ...' line: the trace stops short"
    return trace


class PortMap:
    """(node description, IB port) -> (cable ID, label), from ``ports.tsv`` rows."""

    def __init__(self, rows: list[dict[str, str]]) -> None:
        self.cable: dict[tuple[str, int], tuple[str, str]] = {}
        self.label: dict[str, str] = {}  # cable ID -> printed label
        for r in rows:
            if any(not isinstance(r.get(k), str) for k in ("cable", "label", "a_node", "a_port", "b_node", "b_port")):
                continue  # a line cut short or edited by hand: its cable is not known by port
            cable = (r["cable"], r["label"])
            self.label[r["cable"]] = r["label"]
            for end in ("a", "b"):
                port = r[f"{end}_port"]
                if port.isdigit():
                    self.cable[(r[f"{end}_node"], int(port))] = cable

    def cables(self, trace: Trace) -> tuple[list[tuple[str, str]], list[str]]:
        """The cables of a trace's hops in path order, and the hops no cable of the plan joins
        (a cable moved, or a node the plan does not have), as text."""
        found: list[tuple[str, str]] = []
        unknown: list[str] = []
        for (a, ap), (b, bp) in trace.hops:
            one, two = self.cable.get((a, ap)), self.cable.get((b, bp))
            if one is not None and one == two:
                found.append(one)
            else:
                unknown.append(f"{a} port {ap} -> {b} port {bp}")
        return found, unknown
