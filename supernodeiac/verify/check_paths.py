"""Failing perftests attributed to cables by the path each test took (``snc check-results``).

On an InfiniBand fabric ``perftest.sh`` records every test's path with ``ibtracert``
(``perftest/<test>.trace.txt``); ``acceptance/<fabric>/ports.tsv`` names the cable behind each
port. Per test, the path read back is the recorded one where a trace is readable, else the
plan's (its ``cables`` and ``via`` columns). A cable on the path of a passing test carried line
rate, so it is cleared; the suspects of a failing test are the cables of its path no passing test
cleared, the likely ones first: the fewest cables that lie on every failing path (greedily, the
cable on most failing paths, then the next for the paths left). All of its path when every cable
was cleared elsewhere: then the fault is in the pair's NICs or hosts, or intermittent. A passing
test whose recorded path misses a cable it has under test did not test that cable: it is named
too. Pure: files in, data out.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .ibtracert import PortMap, parse_ibtracert


class Outcome(Protocol):
    """What this module reads and sets of check_results.Outcome."""

    status: str
    what: str
    detail: str
    path: list[str]
    path_source: str
    suspects: list[str]
    likely: int


MAX_TRACE_BYTES = 1 << 20  # an ibtracert output is a few hundred bytes per hop


@dataclass
class PathRead:
    cables: list[str]  # cable IDs in path order
    labels: dict[str, str]  # cable ID -> printed label
    source: str  # "recorded" (ibtracert) or "planned"
    note: str = ""  # why the recorded path was not used, or where it left the plan
    off_plan: list[str] = field(default_factory=list)  # cables under test the recorded path misses


def read_ports(folder: Path) -> PortMap | None:
    path = folder / "ports.tsv"
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if rows and any(c not in rows[0] for c in ("cable", "label", "a_node", "a_port", "b_node", "b_port")):
        return None
    return PortMap(rows)


def _split(cell: str) -> list[str]:
    return [c for c in cell.split(";") if c]


def read_path(row: dict[str, str], results: Path, ports: PortMap | None) -> PathRead:
    """The path of one planned test: recorded when its trace is readable, else planned."""
    under = _split(row.get("cables", ""))
    planned = under + _split(row.get("via", ""))
    labels = dict(zip(under, _split(row.get("labels", "")), strict=False))
    if ports is not None:
        for cable in planned:
            if cable in ports.label:
                labels.setdefault(cable, ports.label[cable])
    trace_file = results / "perftest" / f"{row['test']}.trace.txt"
    if ports is None or not trace_file.is_file():
        return PathRead(planned, labels, "planned")
    with trace_file.open("rb") as fh:
        data = fh.read(MAX_TRACE_BYTES + 1)
    if len(data) > MAX_TRACE_BYTES:
        return PathRead(planned, labels, "planned", f"{trace_file.name} is not an ibtracert output (too large)")
    trace = parse_ibtracert(data.decode(errors="replace"))
    if trace.error:
        return PathRead(planned, labels, "planned", f"{trace_file.name}: {trace.error}")
    found, unknown = ports.cables(trace)
    if unknown:
        return PathRead(
            planned, labels, "planned", f"{trace_file.name}: hops no cable of the plan joins: {'; '.join(unknown[:3])}"
        )
    recorded = [cable for cable, _label in found]
    for cable, label in found:
        labels.setdefault(cable, label)
    missed = [c for c in under if c not in recorded]
    note = ""
    if set(recorded) != set(planned):
        extra = [labels[c] for c in recorded if c not in planned]
        note = "routed off the plan" + (f", through {' | '.join(extra[:4])}" if extra else "")
    return PathRead(recorded, labels, "recorded", note, missed)


def _cover(uncleared: list[list[str]]) -> set[str]:
    """The cables that explain the failing tests: greedily, the cable on most of the failing
    paths not yet explained (all cables tied for most), until every failing path holds one."""
    cover: set[str] = set()
    open_ = [set(u) for u in uncleared if u]
    while open_:
        counts: dict[str, int] = {}
        for u in open_:
            for c in u:
                counts[c] = counts.get(c, 0) + 1
        top = max(counts.values())
        best = {c for c, n in counts.items() if n == top}
        cover |= best
        open_ = [u for u in open_ if u.isdisjoint(best)]
    return cover


def attribute(pairs: Sequence[tuple[dict[str, str], Outcome]], results: Path, ports: PortMap | None) -> None:
    """Set each outcome's path, and each failing one's suspects (cable labels, the likely ones
    first), in place."""
    paths = [read_path(row, results, ports) for row, _o in pairs]
    cleared: set[str] = set()
    for path, (_row, o) in zip(paths, pairs, strict=True):
        if o.status == "pass":
            cleared.update(path.cables)
    failing = [(path, o) for path, (_row, o) in zip(paths, pairs, strict=True) if o.status == "fail"]
    uncleared = [[c for c in path.cables if c not in cleared] for path, _o in failing]
    cover = _cover(uncleared)
    for path, (_row, o) in zip(paths, pairs, strict=True):
        o.path = [path.labels.get(c, c) for c in path.cables]
        o.path_source = path.source
        notes = [path.note] if path.note else []
        if path.off_plan:
            notes.append(f"not on the recorded path, so not tested: {' | '.join(path.labels.get(c, c) for c in path.off_plan)}")
        if notes:
            o.detail += ("; " if o.detail else "") + "; ".join(notes)
    for (path, o), own in zip(failing, uncleared, strict=True):
        name = path.labels.get
        nics = o.what[o.what.index(" (NICs:") :] if " (NICs:" in o.what else ""
        if not own:  # every cable of the path carried line rate in another test
            o.suspects = [name(c, c) for c in path.cables]
            o.likely = len(o.suspects)
            o.what = (
                f"{' | '.join(o.suspects)} (every cable of the {path.source} path passed in another test: "
                f"the NICs, their hosts or an intermittent fault){nics}"
            )
            continue
        likely = [c for c in own if c in cover]
        others = [c for c in own if c not in cover]
        o.suspects = [name(c, c) for c in likely + others]
        o.likely = len(likely)
        shared = sum(1 for u in uncleared if any(c in u for c in likely))
        o.what = (
            f"{' | '.join(name(c, c) for c in likely)} (suspect{'s' if len(likely) > 1 else ''} on the {path.source} path, "
            f"crossed by no passing test{f' and by {shared} failing tests' if shared > 1 else ''})"
            + (f"; also not cleared: {' | '.join(name(c, c) for c in others)}" if others else "")
            + nics
        )
