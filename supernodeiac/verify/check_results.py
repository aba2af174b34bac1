"""``snc check-results``: the tools' output read back against the rendered acceptance plan.

Inputs: the ``acceptance/`` folder ``snc render`` wrote (``<fabric>/perftest.tsv``,
``nccl-tests.tsv``) and the results folder its scripts filled (``perftest/<test>.bw.txt`` and
``.lat.txt`` from ib_write_bw / ib_write_lat with ``--report_gbits``; ``nccl/<run>.txt`` from the
nccl-tests binaries). A perftest below its ``min_gbps`` names its cables by label; an nccl-tests
run below its ``min_busbw_gbytes`` names its group. Pure: paths in, data out; the CLI prints.
"""

from __future__ import annotations

import csv
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

_NUM = r"[0-9]+(?:\.[0-9]+)?"
# ib_write_bw: " 65536  5000  0.00  391.23  0.746" under "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]"
_BW_ROW = re.compile(rf"^\s*([0-9]+)\s+([0-9]+)\s+({_NUM})\s+({_NUM})\s+({_NUM})\s*$")
# ib_write_lat: "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"
_LAT_ROW = re.compile(rf"^\s*([0-9]+)\s+([0-9]+)\s+({_NUM})\s+({_NUM})\s+({_NUM})(\s+{_NUM})*\s*$")


class ResultsError(Exception):
    """The plan folder cannot be read (not an acceptance/ folder of snc render)."""


@dataclass
class Outcome:
    kind: str  # perftest | nccl
    id: str
    status: str  # pass | fail | missing | unreadable
    measured: float | None
    expected: float
    threshold: float
    unit: str
    what: str  # cables by label (perftest) or the group (nccl)
    detail: str = ""
    latency_us: float | None = None


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in ("fail", "unreadable")]

    def as_dict(self) -> dict:
        return {
            "summary": {s: self.count(s) for s in ("pass", "fail", "missing", "unreadable")},
            "failures": [asdict(o) for o in self.failed],
            "missing": sorted(o.id for o in self.outcomes if o.status == "missing"),
        }


def ib_write_bw_gbps(text: str) -> float | None:
    """Average bandwidth (Gb/s) of the last result row of ib_write_bw --report_gbits."""
    if "Gb/sec" not in text:
        return None
    rows = [m for m in (_BW_ROW.match(line) for line in text.splitlines()) if m]
    return float(rows[-1].group(4)) if rows else None


def ib_write_lat_us(text: str) -> float | None:
    """Typical latency (usec) of the last result row of ib_write_lat."""
    rows = [m for m in map(_LAT_ROW.match, text.splitlines()) if m]
    return float(rows[-1].group(5)) if rows else None


def nccl_busbw(text: str) -> float | None:
    """Bus bandwidth (GB/s) at the largest message size of an nccl-tests run: the higher of its
    out-of-place and in-place columns."""
    best: tuple[int, float] | None = None
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].isdigit() or len(parts) < 12:
            continue
        try:
            size = int(parts[0])
            # size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
            busbw = max(float(parts[-6]), float(parts[-2]))
        except ValueError:
            continue
        if best is None or size >= best[0]:
            best = (size, busbw)
    return best[1] if best else None


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def check(plan_dir: str | Path, results_dir: str | Path) -> Report:
    plan, results = Path(plan_dir), Path(results_dir)
    perf = sorted(plan.glob("*/perftest.tsv"))
    nccl = plan / "nccl-tests.tsv"
    if not perf and not nccl.is_file():
        raise ResultsError(f"{plan} holds no */perftest.tsv or nccl-tests.tsv (the acceptance/ folder of snc render)")
    report = Report()
    for tsv in perf:
        for row in _rows(tsv):
            expected, threshold = float(row["line_gbps"]), float(row["min_gbps"])
            what = row["labels"].replace(";", " | ")
            # The NICs that ran it, with their printed ports (plans before them lack the columns).
            ends = [
                f"{row[end]} {row[end + '_dev']}" + (f" at {row[end + '_port']}" if row.get(end + "_port") else "")
                for end in ("server", "client")
                if row.get(end)
            ]
            if ends:
                what += f" (NICs: {', '.join(ends)})"
            bw_file = results / "perftest" / f"{row['test']}.bw.txt"
            if not bw_file.is_file():
                report.outcomes.append(Outcome("perftest", row["test"], "missing", None, expected, threshold, "Gb/s", what))
                continue
            measured = ib_write_bw_gbps(bw_file.read_text(errors="replace"))
            lat_file = bw_file.with_name(f"{row['test']}.lat.txt")
            latency = ib_write_lat_us(lat_file.read_text(errors="replace")) if lat_file.is_file() else None
            if measured is None:
                status, detail = "unreadable", f"no ib_write_bw result row in {bw_file.name}"
            else:
                status = "pass" if measured >= threshold else "fail"
                detail = f"{measured:g} Gb/s is {measured / expected:.0%} of {expected:g} Gb/s"
            report.outcomes.append(
                Outcome("perftest", row["test"], status, measured, expected, threshold, "Gb/s", what, detail, latency)
            )
    if nccl.is_file():
        for row in _rows(nccl):
            expected, threshold = float(row["busbw_gbytes"]), float(row["min_busbw_gbytes"])
            out = results / "nccl" / f"{row['run']}.txt"
            what = f"{row['stage']} {row['group']} {row['collective']}"
            if not out.is_file():
                report.outcomes.append(Outcome("nccl", row["run"], "missing", None, expected, threshold, "GB/s", what))
                continue
            measured = nccl_busbw(out.read_text(errors="replace"))
            if measured is None:
                status, detail = "unreadable", f"no nccl-tests result rows in {out.name}"
            else:
                status = "pass" if measured >= threshold else "fail"
                detail = f"bus bandwidth {measured:g} GB/s is {measured / expected:.0%} of the design's {expected:g} GB/s"
            report.outcomes.append(Outcome("nccl", row["run"], status, measured, expected, threshold, "GB/s", what, detail))
    return report
