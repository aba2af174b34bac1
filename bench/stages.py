"""Where a render's CPU goes: per-stage and per-renderer CPU seconds and peak memory of one design,
beside the same-bytes write floor.

One command, one design:

    python bench/stages.py roce131k            # 131,072-GPU RoCE (bench/roce_gen.py)
    python bench/stages.py 131k                # 131,072-GPU XDR InfiniBand (bench/generate.py)
    python bench/stages.py dragonfly           # Dragonfly (bench/dragonfly_gen.py; validated only)
    python bench/stages.py dragonfly-plus      # Dragonfly+ of 1,049,600 endpoints (validated only)
    python bench/stages.py path/to/design.yaml # any blueprint
    python bench/stages.py roce131k --json     # the same figures for machines

It measures CPU time (user + system, from resource.getrusage), never wall time: on a shared
machine wall time is mostly other people's work. Three parts:

1. In this process, each stage on its own: load (YAML), parse, build (catalogue and Fabric),
   each check, each renderer of ``outputs.base.RENDERERS`` (with the ``dot`` it runs) (its streams joined into bytes, so a
   streamed renderer's work is its own and not the writer's), write (``writer.write``: staging
   folder, SHA-256 manifest, swap). Peak RSS here is higher than the CLI's, since every artifact
   is held as bytes at once.
2. The floor: a plain loop that writes the same bytes into the same number of files in the same
   folders (open, write, close; no hashing, no staging). No writer can do less; the issue's
   "<= 2x floor" compares the whole render with it.
3. ``snc render`` as users run it, in a child process (RUSAGE_CHILDREN: its CPU and peak RSS),
   into a fresh folder; then the same command again on the unchanged design (the render_state
   shortcut) and ``snc render --check`` of it. ``--no-cli`` skips this part.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (bench/generate.py)
import roce_gen  # noqa: E402  (bench/roce_gen.py)


def cpu_self() -> float:
    """This process's CPU and its finished children's (``dot`` for the diagrams)."""
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def peak_mb(who: int) -> float:
    scale = 1 if sys.platform == "darwin" else 1024  # Linux reports KiB, macOS bytes
    return resource.getrusage(who).ru_maxrss * scale / 2**20


def design(name: str, work: Path) -> tuple[Path, bool]:
    """The blueprint file for ``name`` and whether it is rendered (the Dragonfly+ is validated only)."""
    if name in generate.SIZES:
        return generate.write(name, work), True
    if name in roce_gen.GENERATORS:
        return roce_gen.write(name, work), True
    if name == "dragonfly":
        import dragonfly_gen  # bench/dragonfly_gen.py

        path = work / "bench-dragonfly.yaml"
        path.write_text(dragonfly_gen.blueprint())
        return path, False
    if name == "dragonfly-plus":
        import dragonfly_gen  # bench/dragonfly_gen.py: radix 64, 1,049,600 endpoints

        path = work / "bench-dragonfly-plus.yaml"
        path.write_text(dragonfly_gen.dragonfly_plus_blueprint())
        return path, False
    path = Path(name)
    if not path.is_file():
        known = ", ".join([*generate.SIZES, *roce_gen.GENERATORS, "dragonfly", "dragonfly-plus"])
        raise SystemExit(f"{name}: not a design ({known}) nor a file")
    return path, True


def stages(path: Path, out: Path, do_render: bool) -> dict[str, Any]:
    """Each stage's CPU seconds in this process, the artifacts' shape, and the floor."""
    rows: list[dict[str, Any]] = []

    def timed(stage: str, name: str, fn: Callable[[], Any]) -> Any:
        start = cpu_self()
        result = fn()
        rows.append({"stage": stage, "name": name, "cpu_s": cpu_self() - start, "peak_mb": peak_mb(resource.RUSAGE_SELF)})
        return result

    def imports() -> Any:
        from supernodeiac import builders, checks, outputs, writer
        from supernodeiac.load import parse, source

        return builders, checks, outputs, writer, parse, source

    builders, checks, outputs, writer, parse_mod, source = timed("import", "import", imports)
    doc = timed("load", "load", lambda: source.load_file(str(path)))
    gc.disable()  # as supernodeiac.pipeline does for build, checks and render
    blueprint = timed("parse", "parse", lambda: parse_mod.parse(doc))
    catalogue = timed("build", "catalogue", lambda: builders.load_catalogue(blueprint))
    fabric, _ = timed("build", "fabric", lambda: builders.build(blueprint, catalogue))
    ctx = checks.CheckContext(blueprint, catalogue, fabric)
    for name, check in checks.CHECKS.items():
        timed("check", name, functools.partial(lambda c: list(c(ctx)), check))
    result: dict[str, Any] = {"devices": len(fabric.devices), "links": len(fabric.links)}
    if do_render:
        rctx = outputs.RenderContext(blueprint, catalogue, fabric)
        artifacts: dict[str, bytes] = {}

        def produce(renderer: Callable[[Any], Any]) -> dict[str, bytes]:
            made = renderer(rctx).items()
            return {k: bytes(v) for k, v in made if not k.startswith("notice:")}

        for name, renderer in outputs.RENDERERS.items():
            artifacts.update(timed("render", name, functools.partial(produce, renderer)))
        gc.enable()
        timed("write", "write", lambda: writer.write(artifacts, out, blueprint.metadata.name))
        result["files"] = len(artifacts) + 1  # and MANIFEST.json
        result["bytes"] = sum(len(v) for v in artifacts.values()) + (out / "MANIFEST.json").stat().st_size
        manifest = (out / "MANIFEST.json").read_bytes()
        shutil.rmtree(out)
        result["floor_cpu_s"] = floor({**artifacts, "MANIFEST.json": manifest}, out.with_name("floor"))
    gc.enable()
    result["stages"] = rows
    result["peak_mb"] = peak_mb(resource.RUSAGE_SELF)
    return result


def floor(files: dict[str, bytes], folder: Path) -> float:
    """CPU seconds of the least a writer does: the same bytes into the same files and folders."""
    start = cpu_self()
    made: set[Path] = set()
    for rel, data in files.items():
        dest = folder / rel
        if dest.parent not in made:
            dest.parent.mkdir(parents=True, exist_ok=True)
            made.add(dest.parent)
        with open(dest, "wb") as f:
            f.write(data)
    seconds = cpu_self() - start
    shutil.rmtree(folder)
    return seconds


def child(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """CPU seconds and peak RSS of one child process (os.wait4's own rusage, so its alone)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    assert proc.stdout and proc.stderr
    err = proc.stderr.read().decode(errors="replace")
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {rc}:\n{err[-2000:]}")
    scale = 1 if sys.platform == "darwin" else 1024
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss * scale / 2**20}


def cli(path: Path, out: Path, do_render: bool, cache: Path) -> dict[str, Any]:
    """``snc render`` (or validate) as users run it; then an unchanged re-render and --check."""
    env = {**os.environ, "SNC_CACHE_DIR": str(cache)}  # its own render cache: no other run's entry
    snc = [sys.executable, "-m", "supernodeiac"]
    if not do_render:
        return {"validate": child([*snc, "validate", "-q", str(path)], env)}
    return {
        "render": child([*snc, "render", "-q", str(path), "-o", str(out)], env),
        "render unchanged": child([*snc, "render", "-q", str(path), "-o", str(out)], env),
        "render --check unchanged": child([*snc, "render", "--check", "-q", str(path), "-o", str(out)], env),
    }


def table(name: str, r: dict[str, Any]) -> str:
    lines = [f"# {name}: {r['devices']:,} devices, {r['links']:,} links; {r['machine']}"]
    if "files" in r:
        lines[0] += f"; {r['files']:,} files, {r['bytes'] / 1e6:.1f} MB"
    lines.append(f"{'stage':8} {'part':28} {'CPU s':>7} {'peak MB':>8}")
    totals: dict[str, float] = {}
    for s in r["stages"]:
        totals[s["stage"]] = totals.get(s["stage"], 0.0) + s["cpu_s"]
        if s["cpu_s"] >= 0.01 or s["stage"] not in ("check", "render"):
            lines.append(f"{s['stage']:8} {s['name']:28} {s['cpu_s']:7.2f} {s['peak_mb']:8.0f}")
    lines.append("totals:  " + ", ".join(f"{k} {v:.2f}" for k, v in totals.items()))
    held = " (every artifact held as bytes)" if "files" in r else ""
    lines.append(f"in-process total {sum(totals.values()):.2f} CPU s, peak {r['peak_mb']:.0f} MB{held}")
    if "floor_cpu_s" in r:
        f = r["floor_cpu_s"]
        lines.append(f"same-bytes write floor {f:.2f} CPU s; write stage {totals.get('write', 0) / f:.1f}x floor")
    for what, c in r.get("cli", {}).items():
        extra = f" = {c['cpu_s'] / r['floor_cpu_s']:.1f}x floor" if what == "render" and "floor_cpu_s" in r else ""
        lines.append(f"snc {what:26} {c['cpu_s']:7.2f} CPU s {c['peak_mb']:6.0f} MB peak{extra}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "design",
        nargs="?",
        default="roce131k",
        help=f"{', '.join([*generate.SIZES, *roce_gen.GENERATORS])}, dragonfly, dragonfly-plus or a blueprint file",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-cli", action="store_true", help="skip the snc render child processes")
    parser.add_argument("--stages-of", nargs=3, help=argparse.SUPPRESS)  # the child: path, out, render(0/1)
    args = parser.parse_args()
    if args.stages_of:
        path, out, do_render = args.stages_of
        print(json.dumps(stages(Path(path), Path(out), do_render == "1")))
        return
    with tempfile.TemporaryDirectory(prefix="snc-stages-") as tmp:
        work = Path(tmp)
        path, do_render = design(args.design, work)
        # The stages run in a child too, so the import and the first catalogue load count and
        # this process's generator work does not; RUSAGE_CHILDREN would mix it with the CLI runs.
        cmd = [sys.executable, __file__, "--stages-of", str(path), str(work / "out-stages"), "1" if do_render else "0"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"stages of {path} failed:\n{proc.stderr[-3000:]}")
        result = json.loads(proc.stdout)
        result["machine"] = f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start"
        if not args.no_cli:
            result["cli"] = cli(path, work / "out-cli", do_render, work / "cache")
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        result["children_cpu_s"] = kids.ru_utime + kids.ru_stime
    print(json.dumps(result, indent=1) if args.json else table(args.design, result))


if __name__ == "__main__":
    main()
