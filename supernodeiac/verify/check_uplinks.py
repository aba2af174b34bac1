"""Management uplinks read back (``snc check-results``): what ``management/uplinks.sh`` recorded
per uplink against ``management/uplinks.tsv``.

A result file has five sections, each after a ``== <what>`` line: ``a before`` and ``b before``
(each end's ``operstate``, ``speed`` in Mb/s and error counters as ``key value`` lines, from
/sys/class/net), ``ping`` (iputils ping's output), ``a after`` and ``b after``. An uplink passes
when both ends are up at its line rate, no error counter moved across the pings, and the pings
lost no more than the plan allows. Pure: text in, verdicts out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COUNTERS = ("rx_errors", "tx_errors", "rx_crc_errors")
SECTIONS = ("a before", "b before", "ping", "a after", "b after")
_PING = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")


@dataclass
class UplinkVerdict:
    status: str  # pass | fail | unreadable
    measured: float | None  # the lower end's speed, Gb/s
    detail: str


def sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("== "):
            current = out.setdefault(line[3:].strip(), [])
        elif current is not None and line.strip():
            current.append(line.strip())
    return out


def _port(lines: list[str]) -> dict[str, str]:
    values = {}
    for line in lines:
        key, _, value = line.partition(" ")
        values[key] = value.strip()
    return values


def grade(row: dict[str, str], text: str) -> UplinkVerdict:
    part = sections(text)
    absent = [s for s in SECTIONS if s not in part]
    if absent:
        return UplinkVerdict("unreadable", None, f"no '== {absent[0]}' section (not uplinks.sh output?)")
    line_gbps = float(row["line_gbps"])
    max_loss = float(row.get("max_loss") or 0)
    ends = {"a": f"{row['switch']} {row['switch_port']}", "b": f"{row['peer']} {row['peer_port']}"}
    faults: list[str] = []
    speeds: list[float] = []
    for end, name in ends.items():
        before, after = _port(part[f"{end} before"]), _port(part[f"{end} after"])
        if "operstate" not in after or "speed" not in after:
            return UplinkVerdict("unreadable", None, f"{name}: no operstate/speed read (interface not found?)")
        if after["operstate"] != "up":
            faults.append(f"{name} is {after['operstate']}")
        try:
            mbps = float(after["speed"])
        except ValueError:
            mbps = -1.0  # "-": the kernel reports no speed (link down)
        speeds.append(max(mbps, 0.0) / 1000)
        if mbps < line_gbps * 1000:
            faults.append(f"{name} at {after['speed']} Mb/s, its line rate is {line_gbps * 1000:g}")
        for k in COUNTERS:
            x, y = before.get(k, ""), after.get(k, "")
            if x.isdigit() and y.isdigit() and int(y) > int(x):
                faults.append(f"{name} {k} +{int(y) - int(x)}")
    if row.get("target"):
        m = next((m for m in map(_PING.search, part["ping"]) if m), None)
        if m is None:
            faults.append(f"no ping summary for {row['target']}")
        else:
            sent, got = int(m.group(1)), int(m.group(2))
            loss = (sent - got) / sent if sent else 1.0
            if loss > max_loss:
                faults.append(f"{sent - got} of {sent} pings to {row['target']} lost ({loss:.0%})")
    measured = min(speeds) if speeds else None
    if faults:
        return UplinkVerdict("fail", measured, "; ".join(faults))
    return UplinkVerdict("pass", measured, f"up at {line_gbps:g} Gb/s both ends, no errors, pings answered")
