"""Benchmark: `snc validate` and `snc render` on generated blueprints of 1k to 131k GPUs.

Each command runs in its own process, so its peak memory (from os.wait4's rusage) is its own.
Prints one row per size: devices, links, seconds, peak RSS and microseconds per link, so one
can see the cost grow linearly in links. Times are the best of --repeat runs (the machine may
be shared); peak RSS is the largest seen.

Usage:
    python bench/run.py                    # all sizes, validate and render, best of 1
    python bench/run.py --repeat 3 131k    # one size, best of 3
    python bench/run.py --markdown         # the table as Markdown (for docs/performance.md)
    python bench/run.py --gitops 131k      # also snc diff (against the blueprint less its last
                                           # scalable unit) and snc render --check

Targets (issue 2, on a 2-core machine, at 131,072 GPUs): validate < 5 s, render < 20 s,
peak memory < 1.5 GB. The Dragonfly row (bench/dragonfly_gen.py, issue 3) is validated only.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import inspect
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (bench/generate.py, beside this file)
import roce_gen  # noqa: E402  (bench/roce_gen.py: the RoCE designs whose switch configs are rendered)

TARGETS = {"validate_s": 5.0, "render_s": 20.0, "peak_mb": 1536.0}
TARGET_SIZE = "131k"
# Ethernet designs (bench/roce_gen.py): their rows are validated and rendered; roce131k has the
# 131k targets, clos512's figure is its config renderer's CPU time (--phases), under 2 s.
ROCE_LABELS = {"roce131k": "131,072 GPUs (RoCE)", "clos512": "512 x 64 Clos, 576 switches"}


@dataclass
class Run:
    seconds: float  # wall clock
    cpu: float  # user + system CPU seconds of the child: less disturbed by other load than wall time
    peak_mb: float
    rc: int
    stdout: str
    stderr: str


@dataclass
class Row:
    size: str
    endpoints: str  # what the blueprint scales: GPUs for the fat trees, endpoints for the Dragonfly
    devices: int = 0
    links: int = 0
    validate: list[Run] = field(default_factory=list)
    render: list[Run] = field(default_factory=list)

    def best(self, runs: list[Run]) -> float | None:
        return min((r.seconds for r in runs), default=None)

    def best_cpu(self, runs: list[Run]) -> float | None:
        return min((r.cpu for r in runs), default=None)

    def peak(self) -> float:
        return max((r.peak_mb for r in self.validate + self.render), default=0.0)


def run(cmd: list[str], workdir: Path) -> Run:
    """Run one command; wall seconds and the child's own peak RSS (ru_maxrss is KiB on Linux)."""
    out, err = workdir / "stdout.txt", workdir / "stderr.txt"
    with out.open("wb") as fo, err.open("wb") as fe:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    scale = 1024 if sys.platform != "darwin" else 1  # macOS reports bytes
    cpu = usage.ru_utime + usage.ru_stime
    return Run(seconds, cpu, usage.ru_maxrss * scale / 2**20, proc.returncode, out.read_text(), err.read_text())


def snc(*args: str) -> list[str]:
    return [sys.executable, "-m", "supernodeiac", *args]


def dragonfly_blueprint(folder: Path) -> tuple[Path, str] | None:
    """The radix-64 balanced Dragonfly from bench/dragonfly_gen.py, when that generator exists."""
    path = HERE / "dragonfly_gen.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("dragonfly_gen", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("blueprint", "generate", "render_blueprint", "blueprint_text"):
        fn = getattr(module, name, None)
        if callable(fn):
            text = fn()
            break
    else:
        raise SystemExit(f"{path}: no blueprint()/generate() function returning YAML text")
    target = folder / "bench-dragonfly.yaml"
    target.write_text(text)
    # Endpoints N = a*p*(a*h + 1), from the generator's defaults (p=16, a=32, h=16: 262,656).
    defaults = {k: v.default for k, v in inspect.signature(fn).parameters.items()}
    p, a, h = defaults.get("p"), defaults.get("a"), defaults.get("h")
    label = f"{a * p * (a * h + 1):,} endpoints" if isinstance(p, int) and isinstance(a, int) and isinstance(h, int) else "-"
    return target, label


def measure(row: Row, path: Path, repeat: int, do_render: bool, work: Path) -> None:
    for _ in range(repeat):
        v = run(snc("validate", "--format", "json", str(path)), work)
        row.validate.append(v)
        if v.rc != 0:
            raise SystemExit(f"snc validate {path} exited {v.rc}:\n{v.stdout[-2000:]}\n{v.stderr[-2000:]}")
        doc = json.loads(v.stdout)[0]
        row.devices, row.links = doc["devices"], doc["links"]
        if do_render:
            r = run(snc("render", "-q", str(path), "-o", str(work / f"out-{row.size}")), work)
            row.render.append(r)
            if r.rc != 0:
                raise SystemExit(f"snc render {path} exited {r.rc}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")


def less_last_su(path: Path, size: str) -> Path:
    """The blueprint at ``path`` with its last scalable unit taken out (fewer nodes in the last
    node group, the same hall): the base of a pull request that adds that unit."""
    nodes = generate.SIZES[size]
    su = generate.generation(nodes).su_nodes
    last = nodes % su or su
    nodes_part, sep, after = path.read_text().partition("\nscaleout:")
    head, at, tail = nodes_part.rpartition("    count: ")  # the last node group's
    count, _, rest = tail.partition("\n")
    old = path.with_name(f"old-{path.name}")
    old.write_text(f"{head}{at}{int(count) - last}\n{rest}{sep}{after}")
    return old


def measure_gitops(row: Row, path: Path, repeat: int, work: Path) -> list[tuple[str, Run]]:
    """Best (by CPU) of ``repeat`` runs of snc diff, snc diff --no-outputs and snc render --check."""
    old = less_last_su(path, row.size)
    out = work / f"out-{row.size}"
    if not out.exists():
        r = run(snc("render", "-q", str(path), "-o", str(out)), work)
        if r.rc != 0:
            raise SystemExit(f"snc render {path} exited {r.rc}:\n{r.stderr[-2000:]}")
    commands = [
        ("snc diff OLD NEW", snc("diff", str(old), str(path))),
        ("snc diff --no-outputs OLD NEW", snc("diff", "--no-outputs", str(old), str(path))),
        ("snc render --check", snc("render", "--check", "-q", str(path), "-o", str(out))),
    ]
    results = []
    for name, cmd in commands:
        runs = [run(cmd, work) for _ in range(repeat)]
        if any(r.rc != 0 for r in runs):
            bad = next(r for r in runs if r.rc != 0)
            raise SystemExit(f"{name} exited {bad.rc}:\n{bad.stdout[-2000:]}\n{bad.stderr[-2000:]}")
        best = min(runs, key=lambda r: r.cpu)
        best.peak_mb = max(r.peak_mb for r in runs)
        results.append((f"{row.size} {name}", best))
    return results


def table(rows: list[Row], markdown: bool) -> str:
    head = ["size", "GPUs / endpoints", "devices", "links", "validate s", "validate CPU s", "render s", "render CPU s"]
    head += ["peak RSS MB", "validate µs/link", "render µs/link", "validate Δµs/link", "render Δµs/link"]

    def sec(x: float | None) -> str:
        return f"{x:.2f}" if x is not None else "-"

    def per_link(x: float | None, links: int) -> str:
        return f"{x / links * 1e6:.1f}" if x is not None and links else "-"

    def marginal(x: float | None, px: float | None, links: int, plinks: int) -> str:
        """Cost of the links added since the previous size: the slope, free of start-up time."""
        return f"{(x - px) / (links - plinks) * 1e6:.1f}" if x is not None and px is not None and links > plinks else "-"

    body = []
    prev: Row | None = None  # the previous fat-tree size, for the marginal cost
    for r in rows:
        v, rd = r.best(r.validate), r.best(r.render)
        same_series = prev is not None and r.size in generate.SIZES
        pv = prev.best(prev.validate) if prev and same_series else None
        prd = prev.best(prev.render) if prev and same_series else None
        plinks = prev.links if prev else 0
        body.append(
            [
                r.size,
                r.endpoints,
                f"{r.devices:,}",
                f"{r.links:,}",
                sec(v),
                sec(r.best_cpu(r.validate)),
                sec(rd),
                sec(r.best_cpu(r.render)),
                f"{r.peak():.0f}",
                per_link(v, r.links),
                per_link(rd, r.links),
                marginal(v, pv, r.links, plinks),
                marginal(rd, prd, r.links, plinks),
            ]
        )
        if r.size in generate.SIZES:
            prev = r
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if i > 1 else "---" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*head)] + [fmt.format(*b) for b in body])


def phases(path: Path, out: Path) -> list[tuple[str, float]]:
    """CPU seconds of each stage of `snc render` on one blueprint, measured in this process.

    Mirrors supernodeiac.pipeline (collector paused for build, checks and render, as there)
    but times each stage, check and renderer on its own, to show what dominates.
    """
    t0 = time.process_time()
    from supernodeiac.builders import build, load_catalogue
    from supernodeiac.checks import CHECKS, CheckContext
    from supernodeiac.load.parse import parse
    from supernodeiac.load.source import load_file
    from supernodeiac.outputs import RENDERERS, RenderContext, Stream
    from supernodeiac.writer import write

    stages: list[tuple[str, float]] = [("import", time.process_time() - t0)]

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        start = time.process_time()
        result = fn()
        stages.append((name, time.process_time() - start))
        return result

    doc = timed("load YAML", lambda: load_file(str(path)))
    blueprint = timed("parse", lambda: parse(doc))
    gc.disable()
    catalogue = timed("catalogue", lambda: load_catalogue(blueprint))
    fabric, _ = timed("build", lambda: build(blueprint, catalogue))
    ctx = CheckContext(blueprint, catalogue, fabric)
    for name, check in CHECKS.items():
        timed(f"check {name}", lambda check=check: list(check(ctx)))
    rctx = RenderContext(blueprint, catalogue, fabric)
    artifacts: dict[str, bytes] = {}

    def produce(renderer: Callable) -> dict[str, bytes]:
        # Streamed artifacts are produced here, so that each renderer's time is its own.
        return {k: bytes(v) if isinstance(v, Stream) else v for k, v in renderer(rctx).items()}

    for name, renderer in RENDERERS.items():
        artifacts.update(timed(f"render {name}", lambda renderer=renderer: produce(renderer)))
    gc.enable()
    timed("write", lambda: write({k: v for k, v in artifacts.items() if not k.startswith("notice:")}, out, "phases"))
    return stages


def verdict(rows: list[Row]) -> list[str]:
    """Pass/fail lines against the issue's targets for the 131k size (and the Dragonfly's validate)."""
    lines = []
    for r in rows:
        if r.size not in (TARGET_SIZE, "dragonfly", "roce131k"):
            continue
        checks = [("validate_s", r.best(r.validate)), ("peak_mb", r.peak())]
        if r.render:
            checks.insert(1, ("render_s", r.best(r.render)))
        for key, value in checks:
            if value is None:
                continue
            ok = "ok" if value < TARGETS[key] else "OVER"
            lines.append(f"{r.size} {key}: {value:.2f} (target < {TARGETS[key]:g}) {ok}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description="snc validate/render benchmark")
    parser.add_argument(
        "sizes", nargs="*", help=f"any of {', '.join(generate.SIZES)}, dragonfly, {', '.join(roce_gen.GENERATORS)} (default: all)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per command; the best time is reported")
    parser.add_argument("--no-render", action="store_true", help="validate only")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--keep", type=Path, default=None, help="keep blueprints and outputs in this folder")
    parser.add_argument("--phases", action="store_true", help="CPU seconds per stage, check and renderer instead")
    parser.add_argument("--gitops", action="store_true", help="also snc diff and snc render --check (fat-tree sizes)")
    parser.add_argument("--phases-of", type=Path, default=None, help=argparse.SUPPRESS)  # the child of --phases
    args = parser.parse_args()
    if args.phases_of is not None:
        with tempfile.TemporaryDirectory(prefix="snc-phases-") as tmp:
            print(json.dumps(phases(args.phases_of, Path(tmp) / "out")))
        return
    sizes = args.sizes or [*generate.SIZES, "dragonfly", *roce_gen.GENERATORS]
    unknown = [s for s in sizes if s not in generate.SIZES and s != "dragonfly" and s not in roce_gen.GENERATORS]
    if unknown:
        parser.error(f"unknown size(s) {', '.join(unknown)}")

    with tempfile.TemporaryDirectory(prefix="snc-bench-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rows: list[Row] = []
        gitops: list[tuple[str, Run]] = []
        for size in sizes:
            if size == "dragonfly":
                found = dragonfly_blueprint(work)
                if found is None:
                    print("dragonfly: bench/dragonfly_gen.py not found, skipped", file=sys.stderr)
                    continue
                path, endpoints = found
                row = Row(size, endpoints)
                measure(row, path, args.repeat, do_render=False, work=work)
            elif size in roce_gen.GENERATORS:
                path = roce_gen.write(size, work)
                row = Row(size, ROCE_LABELS[size])
                measure(row, path, args.repeat, do_render=not args.no_render, work=work)
            else:
                path = generate.write(size, work)
                row = Row(size, f"{generate.SIZES[size] * generate.GPUS_PER_NODE:,}")
                measure(row, path, args.repeat, do_render=not args.no_render, work=work)
                if args.gitops:
                    gitops += measure_gitops(row, path, args.repeat, work)
            rows.append(row)
            print(f"{size}: done", file=sys.stderr, flush=True)
            if args.phases:
                # A fresh process, so the import and the first catalogue load are counted too.
                r = run([sys.executable, str(Path(__file__).resolve()), "--phases-of", str(path)], work)
                if r.rc != 0:
                    raise SystemExit(f"phases of {path} failed:\n{r.stderr[-2000:]}")
                print(f"\n{size}: CPU seconds by stage (one run)")
                for name, seconds in json.loads(r.stdout):
                    if seconds >= 0.01:
                        print(f"  {name:32} {seconds:6.2f}")
        print(f"# Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; best of {args.repeat}")
        print(table(rows, args.markdown))
        for line in verdict(rows):
            print(line)
        if gitops:
            print("\ncommand (best CPU of the runs)                wall s  CPU s  peak RSS MB")
            for name, r in gitops:
                print(f"{name:44} {r.seconds:6.2f} {r.cpu:6.2f} {r.peak_mb:12.0f}")


if __name__ == "__main__":
    main()
