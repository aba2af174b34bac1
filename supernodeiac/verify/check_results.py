"""``snc check-results``: the tools' output read back against the rendered acceptance plan.

Inputs: the ``acceptance/`` folder ``snc render`` wrote (``<fabric>/perftest.tsv``,
``nccl-tests.tsv``) and the results folder its scripts filled (``perftest/<test>.bw.txt`` and
``.lat.txt`` from ib_write_bw / ib_write_lat with ``--report_gbits``; ``nccl/<run>.txt`` from the
nccl-tests binaries). A perftest below its ``min_gbps`` names its cables by label; an nccl-tests
run below its ``min_busbw_gbytes`` names its group. Pure: paths in, data out; the CLI prints.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

_NUM = r"[0-9]+(?:\.[0-9]+)?"
# ib_write_bw: " 65536  5000  0.00  391.23  0.746" under "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]"
_BW_ROW = re.compile(rf"^\s*([0-9]+)\s+([0-9]+)\s+({_NUM})\s+({_NUM})\s+({_NUM})\s*$")
# ib_write_lat: "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"
_LAT_ROW = re.compile(rf"^\s*([0-9]+)\s+([0-9]+)\s+({_NUM})\s+({_NUM})\s+({_NUM})(\s+{_NUM})*\s*$")


class ResultsError(Exception):
    """The plan folder cannot be read (not an acceptance/ folder of snc render, or a plan line
    that is not one snc writes: the message names the file and line)."""


# A measured figure above what the plan allows by more than this is impossible (a link carries
# at most its line rate; a collective at most the design's bus bandwidth): the tool's output is
# wrong or is not the run the plan means, so it is unreadable, never a pass.
CEILING = 1.05
# A tool's output file is a few KB; anything larger is not one (read no further than this).
MAX_RESULT_BYTES = 4 << 20
# A test or run ID names its result file: a plain name, never a path.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")


def _read_result(path: Path) -> str | None:
    """The file's text, or None when it is larger than any tool output (read no further)."""
    with path.open("rb") as fh:
        data = fh.read(MAX_RESULT_BYTES + 1)
    return None if len(data) > MAX_RESULT_BYTES else data.decode(errors="replace")


def _impossible(measured: float, ceiling: float, unit: str, what: str) -> str | None:
    if not math.isfinite(measured):
        return f"an impossible figure: {measured:g} {unit}"
    if measured < 0:
        return f"an impossible figure: {measured:g} {unit} is negative"
    if measured > ceiling * CEILING:
        return f"an impossible figure: {measured:g} {unit} is above {what} {ceiling:g} {unit} (x {CEILING:g})"
    return None


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


def _rows(path: Path, numbers: tuple[str, str], ident: str) -> list[tuple[dict[str, str], float, float]]:
    """The plan's rows with their two figures (expected, threshold), each row checked: every
    column present, the ID a plain name, the figures finite and positive, threshold <= expected."""
    out = []
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            columns = reader.fieldnames or []
            missing = [c for c in (ident, *numbers) if c not in columns]
            if missing:
                raise ResultsError(f"{path}:1: no column {', '.join(missing)} (is this a plan snc render wrote?)")
            for row in reader:
                where = f"{path}:{reader.line_num}"
                if None in row or any(v is None for v in row.values()):
                    raise ResultsError(f"{where}: {len(columns)} columns expected")
                if not _ID.fullmatch(row[ident]):
                    raise ResultsError(f"{where}: {ident} {row[ident][:60]!r} is not a plain name")
                try:
                    expected, threshold = (float(row[c]) for c in numbers)
                except ValueError:
                    raise ResultsError(f"{where}: {numbers[0]} and {numbers[1]} must be numbers") from None
                if not (math.isfinite(expected) and math.isfinite(threshold) and 0 < threshold <= expected):
                    raise ResultsError(
                        f"{where}: {numbers[1]} {threshold:g} must be above 0 and at most {numbers[0]} {expected:g}"
                    )
                out.append((row, expected, threshold))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ResultsError(f"{path}: cannot read: {exc}") from None
    return out


def check(plan_dir: str | Path, results_dir: str | Path) -> Report:
    plan, results = Path(plan_dir), Path(results_dir)
    perf = sorted(plan.glob("*/perftest.tsv"))
    nccl = plan / "nccl-tests.tsv"
    if not perf and not nccl.is_file():
        raise ResultsError(f"{plan} holds no */perftest.tsv or nccl-tests.tsv (the acceptance/ folder of snc render)")
    report = Report()
    for tsv in perf:
        for row, expected, threshold in _rows(tsv, ("line_gbps", "min_gbps"), "test"):
            what = row.get("labels", "").replace(";", " | ")
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
            text = _read_result(bw_file)
            measured = ib_write_bw_gbps(text) if text is not None else None
            lat_file = bw_file.with_name(f"{row['test']}.lat.txt")
            lat_text = _read_result(lat_file) if lat_file.is_file() else None
            latency = ib_write_lat_us(lat_text) if lat_text is not None else None
            if latency is not None and not (math.isfinite(latency) and latency >= 0):
                latency = None
            bad = _impossible(measured, expected, "Gb/s", "the line rate") if measured is not None else None
            if text is None:
                status, detail = "unreadable", f"{bw_file.name} is larger than {MAX_RESULT_BYTES:,} bytes"
            elif measured is None:
                status, detail = "unreadable", f"no ib_write_bw result row in {bw_file.name}"
            elif bad is not None:
                status, detail = "unreadable", f"{bad} in {bw_file.name}"
            else:
                status = "pass" if measured >= threshold else "fail"
                detail = f"{measured:g} Gb/s is {measured / expected:.0%} of {expected:g} Gb/s"
            report.outcomes.append(
                Outcome("perftest", row["test"], status, measured, expected, threshold, "Gb/s", what, detail, latency)
            )
    if nccl.is_file():
        for row, expected, threshold in _rows(nccl, ("busbw_gbytes", "min_busbw_gbytes"), "run"):
            out = results / "nccl" / f"{row['run']}.txt"
            what = f"{row.get('stage', '')} {row.get('group', '')} {row.get('collective', '')}"
            if not out.is_file():
                report.outcomes.append(Outcome("nccl", row["run"], "missing", None, expected, threshold, "GB/s", what))
                continue
            text = _read_result(out)
            measured = nccl_busbw(text) if text is not None else None
            bad = _impossible(measured, expected, "GB/s", "the design's") if measured is not None else None
            if text is None:
                status, detail = "unreadable", f"{out.name} is larger than {MAX_RESULT_BYTES:,} bytes"
            elif measured is None:
                status, detail = "unreadable", f"no nccl-tests result rows in {out.name}"
            elif bad is not None:
                status, detail = "unreadable", f"{bad} in {out.name}"
            else:
                status = "pass" if measured >= threshold else "fail"
                detail = f"bus bandwidth {measured:g} GB/s is {measured / expected:.0%} of the design's {expected:g} GB/s"
            report.outcomes.append(Outcome("nccl", row["run"], status, measured, expected, threshold, "GB/s", what, detail))
    return report
