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

from ..util import markdown as md
from .check_counters import CounterError, attribute_counters, wave_counters
from .check_paths import attribute, read_ports
from .check_scaleup import GRADED as GRADED_SCALEUP
from .check_scaleup import grade as grade_scaleup
from .check_uplinks import grade as grade_uplink
from .check_xgmi import XgmiError
from .check_xgmi import grade as grade_xgmi
from .physical_results import ReadingError, check_physical

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
# The most accelerators (and links per pair) an xgmi.tsv line may give: TransferBench prints one
# column per GPU of a host, so a figure beyond any board's is not a plan snc wrote.
MAX_MESH = 1024
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
    kind: str  # perftest | nccl | uplink | scaleup | xgmi | physical
    id: str
    status: str  # pass | fail | missing | unreadable
    measured: float | None
    expected: float
    threshold: float
    unit: str
    what: str  # cables by label (perftest) or the group (nccl)
    detail: str = ""
    latency_us: float | None = None
    # nccl-tests: the verdict on the whole curve, the knee (busbw at 90 % of the plateau) measured
    # and per the model, and the busbw per message size read.
    verdict: str = ""
    knee_bytes: int | None = None
    model_knee_bytes: int | None = None
    curve: list[tuple[int, float]] = field(default_factory=list)
    # perftest: the cables of the path the test took (labels, in path order), whether that path is
    # the one ibtracert recorded or the plan's, and a failing test's suspects (verify/check_paths.py).
    path: list[str] = field(default_factory=list)
    path_source: str = ""
    suspects: list[str] = field(default_factory=list)
    likely: int = 0  # the first ``likely`` suspects explain the most failing tests


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
            # Stage 0: every cable read, its verdict (wrong-part, ber, symbol-errors, low-rx-power, ...).
            "physical": [
                {"cable": o.id, "status": o.status, "verdict": o.verdict, "label": o.what, "detail": o.detail}
                for o in self.outcomes
                if o.kind == "physical" and o.status != "missing"
            ],
            "runs": [
                {
                    k: getattr(o, k)
                    for k in (
                        "id",
                        "status",
                        "verdict",
                        "measured",
                        "expected",
                        "threshold",
                        "knee_bytes",
                        "model_knee_bytes",
                        "detail",
                    )
                }
                for o in self.outcomes
                if o.kind == "nccl" and o.status != "missing"
            ],
        }

    def as_markdown(self) -> str:
        """The verdicts for people: failures first (cables named), then every collective run."""
        lines = [
            "# Acceptance results",
            "",
            " ".join(f"{self.count(s)} {s}" for s in ("pass", "fail", "unreadable", "missing")),
            "",
        ]
        if self.failed:
            lines += ["## Failures", "", "| kind | test | verdict | detail | where |", "|---|---|---|---|---|"]
            for o in self.failed:
                lines.append(f"| {o.kind} | {_md(o.id)} | {_md(o.verdict or o.status)} | {_md(o.detail)} | {_md(o.what)} |")
            lines.append("")
        cables = [o for o in self.outcomes if o.kind == "physical"]
        if cables:
            verdicts: dict[str, int] = {}
            for o in cables:
                for v in o.verdict.split(","):
                    verdicts[v] = verdicts.get(v, 0) + 1
            lines += [
                "## Physical layer",
                "",
                f"{len(cables)} cables: " + ", ".join(f"{n} {_md(v)}" for v, n in sorted(verdicts.items())),
                "",
            ]
        runs = [o for o in self.outcomes if o.kind == "nccl" and o.status != "missing"]
        if runs:
            lines += [
                "## Collectives",
                "",
                "| run | verdict | plateau busbw (GB/s) | design | threshold | knee (bytes) | model knee |",
                "|---|---|---:|---:|---:|---:|---:|",
            ]
            for o in runs:
                plateau = f"{o.measured:g}" if o.measured is not None else "-"
                lines.append(
                    f"| {_md(o.id)} | {_md(o.verdict or o.status)} | {plateau} | {o.expected:g} | {o.threshold:g} | "
                    f"{o.knee_bytes if o.knee_bytes is not None else '-'} | {o.model_knee_bytes or '-'} |"
                )
        return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """A table cell: tool output and labels shown as text (no markup, one line, no column break)."""
    return md.text(text)


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


class TableError(ValueError):
    """An nccl-tests output that is not a whole result table: the line and what is wrong."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass
class NcclTable:
    rows: list[tuple[int, float]]  # (bytes, busbw: the higher of out-of-place and in-place)
    ranks: int | None  # "#  Rank N" lines printed, None when the output lists none
    complete: bool  # the "# Avg bus bandwidth" trailer nccl-tests prints at the end


def nccl_table(text: str) -> NcclTable:
    """Every result row of an nccl-tests run. Raises TableError (with the line) on a row whose
    cells are not numbers, a row cut short, or sizes out of order."""
    rows: list[tuple[int, float]] = []
    ranks = 0
    complete = False
    width: int | None = None
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if line.startswith("#"):
            if len(parts) > 2 and parts[1] == "Rank" and parts[2].isdigit():
                ranks += 1
            elif "Avg bus bandwidth" in line:
                complete = True
            continue
        if not parts[0].isdigit():
            continue  # NCCL INFO / WARN lines and launcher noise between rows
        # size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
        # (older nccl-tests print "error" instead of "#wrong"; alltoall and all_gather have the same tail)
        if len(parts) < 12:
            raise TableError(
                n, f"result row with {len(parts)} cells, at least 12 expected (a cut-off table?): {line.strip()[:80]!r}"
            )
        if width is not None and len(parts) != width:
            raise TableError(n, f"result row with {len(parts)} cells where the rows above have {width}: {line.strip()[:80]!r}")
        width = len(parts)
        try:
            busbw = max(float(parts[-6]), float(parts[-2]))
        except ValueError:
            raise TableError(n, f"busbw cells {parts[-6]!r} / {parts[-2]!r} are not numbers") from None
        if busbw != busbw or busbw < 0:  # NaN or negative: not a measurement
            raise TableError(n, f"busbw {busbw!r} is not a measurement")
        size = int(parts[0])
        if rows and size <= rows[-1][0]:
            raise TableError(n, f"size {size} after {rows[-1][0]}: rows out of order (two runs in one file?)")
        rows.append((size, busbw))
    return NcclTable(rows, ranks or None, complete)


def knee(rows: list[tuple[int, float]], share: float = 0.9) -> int | None:
    """The smallest message size whose busbw reaches ``share`` of the run's best."""
    if not rows:
        return None
    best = max(bw for _s, bw in rows)
    return next(size for size, bw in rows if bw >= share * best)


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
    physical = sorted(plan.glob("*/physical.tsv"))
    stages = [plan / "scaleup.tsv", plan / "xgmi.tsv", plan / "management" / "uplinks.tsv", *physical]
    if not perf and not nccl.is_file() and not any(p.is_file() for p in stages):
        raise ResultsError(
            f"{plan} holds no */perftest.tsv, */physical.tsv, nccl-tests.tsv, scaleup.tsv, xgmi.tsv or management/uplinks.tsv "
            "(the acceptance/ folder of snc render)"
        )
    report = Report()
    # Stage 0, the physical layer: a verdict per cable from both its ends' readings.
    for tsv in physical:
        try:
            verdicts = check_physical(tsv, results)
        except ReadingError as exc:
            raise ResultsError(str(exc)) from None
        report.outcomes += [
            Outcome("physical", v.cable, v.status, None, 0.0, 0.0, "", v.label, v.detail, verdict=v.verdict) for v in verdicts
        ]
    planned_tests: set[str] = set()
    for tsv in perf:
        pairs: list[tuple[dict[str, str], Outcome]] = []
        for row, expected, threshold in _rows(tsv, ("line_gbps", "min_gbps"), "test"):
            planned_tests.add(row["test"])
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
                pairs.append((row, report.outcomes[-1]))
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
            pairs.append((row, report.outcomes[-1]))
        try:
            ports = read_ports(tsv.parent)
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ResultsError(f"{tsv.parent / 'ports.tsv'}: cannot read: {exc}") from None
        attribute(pairs, results, ports)
        # RoCE: the switch port counters read around each wave (verify/check_counters.py).
        try:
            waves = wave_counters(tsv.parent, results)
        except (OSError, UnicodeDecodeError, csv.Error, CounterError) as exc:
            raise ResultsError(f"{tsv.parent}: {exc}") from None
        if waves is not None:
            for name, problem in attribute_counters(pairs, waves):
                report.outcomes.append(
                    Outcome("counters", name, "unreadable", None, 0.0, 0.0, "", tsv.parent.name, problem, verdict="unreadable")
                )
    # A bandwidth result of a test no fabric's plan has: another plan's (or a renamed) results, which
    # would otherwise be ignored while the planned test reads as missing, not as a wrong input.
    if perf:
        where = f"{plan}/*/perftest.tsv"
        report.outcomes += _foreign(results / "perftest", ".bw.txt", planned_tests, "perftest", "test", "Gb/s", where)
    scaleup = plan / "scaleup.tsv"
    if scaleup.is_file():
        for row, expected, threshold in _rows(scaleup, ("link_gbytes", "min_link_gbytes"), "check"):
            if row["tool"] in GRADED_SCALEUP:  # other tools' output is read by hand (checklist)
                report.outcomes.append(_scaleup_outcome(row, expected, threshold, results))
    xgmi = plan / "xgmi.tsv"
    if xgmi.is_file():
        for line, (row, expected, threshold) in enumerate(_rows(xgmi, ("pair_gbytes", "min_pair_gbytes"), "check"), 2):
            for column in ("accelerators", "links_per_pair"):
                if not (row.get(column) or "").isdigit() or not 1 <= int(row[column]) <= MAX_MESH:
                    raise ResultsError(f"{xgmi}:{line}: {column} must be a whole number from 1 to {MAX_MESH}")
            report.outcomes += _xgmi_outcomes(row, expected, threshold, results)
    uplinks = plan / "management" / "uplinks.tsv"
    if uplinks.is_file():
        for row, expected, _t in _rows(uplinks, ("line_gbps", "line_gbps"), "test"):
            report.outcomes.append(_uplink_outcome(row, expected, results))
    if nccl.is_file():
        failed_links = _failed_links(report, [tsv.parent.name for tsv in perf])
        rows = [row for row, _e, _t in _rows(nccl, ("busbw_gbytes", "min_busbw_gbytes"), "run")]
        for row in rows:
            report.outcomes.append(_nccl_outcome(row, results, failed_links))
        # Result files of runs this plan does not have: another plan's (or a renamed) results.
        report.outcomes += _foreign(results / "nccl", ".txt", {row["run"] for row in rows}, "nccl", "run", "GB/s", str(nccl))
    return report


def _foreign(folder: Path, suffix: str, planned: set[str], kind: str, noun: str, unit: str, where: str) -> list[Outcome]:
    """An unreadable, foreign outcome per result file in ``folder`` named for no planned id (a
    ``noun``: the plan's word for one of its runs)."""
    out = []
    for extra in sorted(folder.glob(f"*{suffix}")) if folder.is_dir() else ():
        ident = extra.name[: -len(suffix)]
        if ident not in planned:
            detail = f"{extra}: no {noun} {ident!r} in {where} (results of another plan?)"
            out.append(Outcome(kind, ident, "unreadable", None, 0.0, 0.0, unit, str(extra), detail, verdict="foreign"))
    return out


def _scaleup_outcome(row: dict[str, str], expected: float, threshold: float, results: Path) -> Outcome:
    what = f"{row['host']} ({row['domain']}: {row['accelerators']} x {row['accelerator']}, {row['links']} links each)"
    base = Outcome("scaleup", row["check"], "missing", None, expected, threshold, "GB/s", what)
    after, before = (results / "scaleup" / f"{row['check']}.{phase}.txt" for phase in ("after", "before"))
    latest = after if after.is_file() else before
    if not latest.is_file():
        return base
    text = _read_result(latest)
    earlier = _read_result(before) if latest is after and before.is_file() else None
    if text is None:
        base.status, base.detail = "unreadable", f"{latest.name} is larger than {MAX_RESULT_BYTES:,} bytes"
        return base
    verdict = grade_scaleup(row, text, earlier)
    base.status, base.measured, base.detail = verdict.status, verdict.measured, f"{latest.name}: {verdict.detail}"
    return base


def _xgmi_outcomes(row: dict[str, str], expected: float, threshold: float, results: Path) -> list[Outcome]:
    """One outcome per GPU pair and direction of the host's TransferBench matrix (one for the
    host when its file is missing or cannot be read)."""
    what = f"{row['host']} ({row['accelerators']} x {row['accelerator']}, {row['links_per_pair']} xGMI link(s) per pair)"
    base = Outcome("xgmi", row["check"], "missing", None, expected, threshold, "GB/s", what)
    path = results / "xgmi" / f"{row['check']}.txt"
    if not path.is_file():
        return [base]
    text = _read_result(path)
    if text is None:
        base.status, base.detail = "unreadable", f"{path.name} is larger than {MAX_RESULT_BYTES:,} bytes"
        return [base]
    try:
        verdicts = grade_xgmi(row, text, f"xgmi/{path.name}", CEILING)
    except XgmiError as exc:
        base.status, base.detail = "unreadable", str(exc)
        return [base]
    return [
        Outcome(
            "xgmi",
            f"{row['check']}.gpu{v.src}-gpu{v.dst}",
            v.status,
            v.measured,
            expected,
            threshold,
            "GB/s",
            f"{row['host']} GPU {v.src} -> GPU {v.dst} ({row['links_per_pair']} xGMI link(s))",
            f"xgmi/{path.name}: {v.detail}",
        )
        for v in verdicts
    ]


def _uplink_outcome(row: dict[str, str], line_gbps: float, results: Path) -> Outcome:
    what = f"{row.get('label', '')} ({row['switch']} {row['switch_port']} -> {row['peer']} {row['peer_port']})"
    out = results / "management" / f"{row['test']}.txt"
    base = Outcome("uplink", row["test"], "missing", None, line_gbps, line_gbps, "Gb/s", what)
    if not out.is_file():
        return base
    text = _read_result(out)
    if text is None:
        base.status, base.detail = "unreadable", f"{out.name} is larger than {MAX_RESULT_BYTES:,} bytes"
        return base
    verdict = grade_uplink(row, text)
    base.status, base.measured, base.detail = verdict.status, verdict.measured, f"{out.name}: {verdict.detail}"
    return base


def _failed_links(report: Report, fabrics: list[str]) -> dict[str, list[str]]:
    """Per fabric (its acceptance/<fabric>/ folder): the likely cables of every failed perftest."""
    out: dict[str, list[str]] = {}
    for o in report.outcomes:
        if o.kind == "perftest" and o.status == "fail":
            fabric = max((f for f in fabrics if o.id.startswith(f + "-")), key=len, default="")
            cables = out.setdefault(fabric, [])
            # The likely cable first, each once (tests sharing a bad cable all name it).
            cables += [c for c in (o.suspects[: o.likely] if o.suspects else [o.what]) if c not in cables]
    return out


EARLY = 4  # a curve flattening this many times before the model's knee is bandwidth-bound early


def _nccl_outcome(row: dict[str, str], results: Path, failed_links: dict[str, list[str]]) -> Outcome:
    expected, threshold = float(row["busbw_gbytes"]), float(row["min_busbw_gbytes"])
    model_knee = int(row["knee_bytes"]) if row.get("knee_bytes", "").isdigit() else None
    out = results / "nccl" / f"{row['run']}.txt"
    what = f"{row['stage']} {row['group']} {row['collective']}" + (f" ({row['algorithm']})" if row.get("algorithm") else "")
    base = Outcome("nccl", row["run"], "missing", None, expected, threshold, "GB/s", what, model_knee_bytes=model_knee)
    if not out.is_file():
        return base
    text = _read_result(out)
    if text is None:
        base.status, base.verdict = "unreadable", "unreadable"
        base.detail = f"{out.name} is larger than {MAX_RESULT_BYTES:,} bytes"
        return base
    try:
        table = nccl_table(text)
    except TableError as exc:
        base.status, base.verdict, base.detail = "unreadable", "unreadable", f"{out}: {exc}"
        return base
    if not table.rows:
        base.status, base.verdict, base.detail = "unreadable", "unreadable", f"{out}: no nccl-tests result rows"
        return base
    np_ = int(row["np"]) if row.get("np", "").isdigit() else None
    if table.ranks is not None and np_ is not None and table.ranks != np_:
        base.status, base.verdict = "unreadable", "foreign"
        base.detail = f"{out}: ran with {table.ranks} ranks, the plan's run has {np_} (another plan's result?)"
        return base
    if not table.complete:
        base.status, base.verdict = "unreadable", "truncated"
        base.detail = (
            f"{out}: the table stops at {table.rows[-1][0]} bytes without nccl-tests' '# Avg bus bandwidth' line (cut off?)"
        )
        return base
    plateau = max(bw for _s, bw in table.rows)
    bad = _impossible(plateau, expected, "GB/s", "the design's")
    if bad is not None:  # inf, NaN, negative or far above the design: not a measurement
        base.status, base.verdict, base.detail = "unreadable", "unreadable", f"{bad} in {out.name}"
        return base
    at = knee(table.rows)
    base.measured, base.knee_bytes, base.curve = plateau, at, table.rows
    rising = len(table.rows) > 1 and table.rows[-1][1] > 1.05 * table.rows[-2][1]
    share = f"{plateau:g} GB/s is {plateau / expected:.0%} of the design's {expected:g} GB/s" if expected else f"{plateau:g} GB/s"
    if plateau >= threshold:
        base.status = "pass"
        late = model_knee is not None and at is not None and at > EARLY * model_knee
        base.verdict = "pass-late-knee" if late else "pass"
        base.detail = f"plateau {share}, knee at {at} bytes" + (
            f" (the model's is {model_knee}: slow at mid sizes)" if late else ""
        )
        return base
    base.status = "fail"
    if model_knee is not None and at is not None and at * EARLY < model_knee and not rising:
        base.verdict = "early-knee"
        base.detail = (
            f"plateau {share}, flat from {at} bytes where the model's knee is {model_knee}: a bandwidth limit "
            "(a degraded link, NIC or PCIe path) caps it"
        )
    elif rising:
        base.verdict = "no-plateau"
        base.detail = f"busbw still rising at the largest size ({table.rows[-1][0]} bytes): {share}; run larger sizes (-e)"
    else:
        base.verdict = "low-plateau"
        base.detail = f"plateau {share}, knee at {at} bytes"
    suspects = _suspects(row, failed_links)
    if suspects:
        base.what += f"; failed perftests on its path: {suspects}"
    return base


def _suspects(row: dict[str, str], failed_links: dict[str, list[str]]) -> str:
    """The cables of failed perftests on the fabric a rail or fabric run crosses."""
    if row["stage"] == "domain":
        return ""
    group = row["group"]
    fabric = (
        group if row["stage"] == "fabric" else max((f for f in failed_links if group.startswith(f + "-")), key=len, default="")
    )
    cables = failed_links.get(fabric, [])
    return " | ".join(cables[:8]) + (f" (and {len(cables) - 8} more)" if len(cables) > 8 else "")
