"""RoCE perftest failures attributed by switch port counters (``snc check-results``).

ECMP hides the path a RoCE test takes, so ``perftest.sh`` reads SONiC's port counters
(``portstat -a -j -r``: sonic-utilities scripts/portstat, one JSON object per interface whose
values utilities_common/netstat.py formats as comma-grouped numbers or "N/A") on every switch its
wave's traffic may cross (``acceptance/<fabric>/counters.tsv``) before and after the wave, in
``counters/<wave>.<before|after>.<switch>.json``. ``switch_ports.tsv`` names the cable behind each
switch port. A port whose error or discard counters grew during a wave is a suspect of the wave's
failing tests: a switch-to-switch cable for every test of the wave (any flow may hash onto it),
a host link only for the test whose NIC it is (tests of a wave share no NIC). Pure: files in,
data out.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..facts.acceptance_plan import wave_key


class Outcome(Protocol):
    """What this module reads and sets of check_results.Outcome."""

    status: str
    what: str
    detail: str
    verdict: str
    suspects: list[str]
    likely: int


# portstat -a's error and discard columns (utilities_common/portstat.py header_all): a healthy
# link in the lossless class moves none of them while line-rate traffic crosses it.
ERROR_KEYS = ("RX_ERR", "RX_DRP", "RX_OVR", "TX_ERR", "TX_DRP", "TX_OVR")
MAX_COUNTER_BYTES = 16 << 20  # portstat -a -j on a 512-port switch is well under 1 MB


class CounterError(ValueError):
    """A counter file that is not portstat JSON; the message says where."""


@dataclass(frozen=True, slots=True)
class Moved:
    cable: str
    label: str
    switch: str
    interface: str
    link: str  # "switch" or "host"
    growth: tuple[tuple[str, int], ...]  # (counter, how much it grew)

    def text(self) -> str:
        grew = ", ".join(f"{k} +{n:,}" for k, n in self.growth)
        return f"{self.label} ({grew} at {self.switch} {self.interface})"


@dataclass
class WaveCounters:
    read: bool = False  # every switch of the wave read before and after
    moved: list[Moved] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, what is wrong where)


def _number(value: object, where: str, key: str) -> int | None:
    """A counter cell: an int, or portstat's comma-grouped text; None for "N/A" (not supported)."""
    if isinstance(value, bool):
        raise CounterError(f"{where}: {key} is {value!r}, not a counter")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.replace(",", "").strip()
        if text == "N/A":
            return None
        if text.isdigit():
            return int(text)
    raise CounterError(f"{where}: {key} is {str(value)[:40]!r}, not a counter")


def read_counters(path: Path) -> dict[str, dict[str, int | None]]:
    """Interface -> error counter -> value of one portstat JSON file. Raises CounterError naming
    the file (and line and column where the JSON breaks)."""
    with path.open("rb") as fh:
        data = fh.read(MAX_COUNTER_BYTES + 1)
    name = f"counters/{path.name}"
    if len(data) > MAX_COUNTER_BYTES:
        raise CounterError(f"{name}: larger than {MAX_COUNTER_BYTES:,} bytes: not portstat output")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CounterError(f"{name}: not UTF-8 text at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise CounterError(f"{name}:{exc.lineno}:{exc.colno}: not portstat JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise CounterError(f"{name}: a JSON {type(doc).__name__}, not portstat's object of interfaces")
    out: dict[str, dict[str, int | None]] = {}
    for iface, row in doc.items():
        if not isinstance(row, dict):
            raise CounterError(f"{name}: {iface[:40]!r} holds no counters")
        out[iface] = {k: _number(row[k], f"{name}: {iface}", k) for k in ERROR_KEYS if k in row}
    return out


def _table(path: Path, columns: Sequence[str]) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if rows and any(c not in rows[0] for c in columns):
        raise CounterError(f"{path}:1: no column {', '.join(c for c in columns if c not in rows[0])}")
    return rows


def wave_counters(folder: Path, results: Path) -> dict[str, WaveCounters] | None:
    """Per wave of ``counters.tsv``: whether its switches were read, the ports whose error
    counters grew, and the files that could not be read. None without a counters.tsv (InfiniBand,
    or a plan before counters)."""
    plan = folder / "counters.tsv"
    if not plan.is_file():
        return None
    waves = _table(plan, ("wave", "switches"))
    ports = {
        (r["switch"], r["interface"]): r
        for r in _table(folder / "switch_ports.tsv", ("switch", "interface", "cable", "label", "link"))
    }
    out: dict[str, WaveCounters] = {}
    for row in waves:
        w = out[row["wave"]] = WaveCounters()
        switches = [s for s in row["switches"].split(";") if s]
        read = 0
        for sw in switches:
            files = [results / "counters" / f"{row['wave']}.{phase}.{sw}.json" for phase in ("before", "after")]
            if not all(f.is_file() for f in files):
                continue
            try:
                before, after = (read_counters(f) for f in files)
            except CounterError as exc:
                w.problems.append((f"{row['wave']}.{sw}", str(exc)))
                continue
            read += 1
            for iface, now in after.items():
                then = before.get(iface, {})
                growth = []
                for key, value in now.items():
                    old = then.get(key)
                    if value is not None and old is not None and value > old:
                        growth.append((key, value - old))
                port = ports.get((sw, iface))
                if growth and port is not None:  # a port no plan cable joins is not this fabric's
                    w.moved.append(Moved(port["cable"], port["label"], sw, iface, port["link"], tuple(growth)))
        w.read = bool(switches) and read == len(switches)
    return out


def attribute_counters(pairs: Sequence[tuple[dict[str, str], Outcome]], waves: dict[str, WaveCounters]) -> list[tuple[str, str]]:
    """Each RoCE test's verdict from its wave's counters, in place: a failing test whose wave
    moved a counter on a cable it may cross names that cable ("counter-moved"); one whose wave
    moved none says its failure is not localised ("not-localised"); a passing test notes the
    counters that moved on its own cables. Returns the counter files that could not be read."""
    problems: list[tuple[str, str]] = []
    for wc in waves.values():
        problems += wc.problems
    for row, o in pairs:
        key = _wave_key(row)
        w = waves.get(key)
        if w is None:
            continue
        mine = {c for c in (row.get("cables", "") + ";" + row.get("via", "")).split(";") if c}
        moved = [m for m in w.moved if m.link == "switch" or m.cable in mine]
        if o.status == "pass":
            own = [m for m in moved if m.cable in mine]
            if own:
                o.detail += ("; " if o.detail else "") + "counter moved on " + " | ".join(m.text() for m in own)
            continue
        if o.status != "fail":
            continue
        nics = o.what[o.what.index(" (NICs:") :] if " (NICs:" in o.what else ""
        if moved:
            labels = list(dict.fromkeys(m.label for m in moved))
            o.suspects = labels + [s for s in o.suspects if s not in labels]
            o.likely = len(labels)
            o.verdict = "counter-moved"
            o.what = f"counter moved on {' | '.join(m.text() for m in moved)} during wave {key}{nics}"
        elif w.read:
            o.verdict = "not-localised"
            o.detail += ("; " if o.detail else "") + (
                f"no counter moved: path not localised (every switch of wave {key} read before and after)"
            )
        else:
            o.verdict = "not-localised"
            o.detail += ("; " if o.detail else "") + f"counters of wave {key} not read: path not localised"
    return problems


def _wave_key(row: dict[str, str]) -> str:
    """The plan's wave key (facts/acceptance_plan.wave_key) of a perftest.tsv line: an empty rail
    cell is no rail, as perftest.sh reads it."""
    return wave_key(row["stage"], row.get("rail") or None, row["wave"])
