"""When a long `snc` run says what it is doing: each standard-error line with the second it came.

Usage: python bench/progress.py [--seconds S] SIZE|BLUEPRINT [snc arguments ...]
(SIZE as bench/generate.py: 1k 8k 32k 131k; default arguments: render --force into a scratch folder).
Standard error is a pipe, as in a CI log; prints the first line's delay from the process's start
and the longest gap between two lines.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import generate

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("design", help="a bench/generate.py size or a blueprint file")
    parser.add_argument("args", nargs="*", help="snc arguments after the blueprint (default: render --force)")
    parser.add_argument("--seconds", type=float, default=None, help="stop the run after this long")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="snc-progress-") as work:
        path = generate.write(ns.design, Path(work)) if ns.design in generate.SIZES else Path(ns.design)
        args = ns.args or ["render", "--force", str(path), "-o", str(Path(work) / "out")]
        if ns.args:
            args = [args[0], str(path), *args[1:]]
        env = {k: v for k, v in os.environ.items() if k not in ("SNC_PROGRESS", "NO_COLOR")}
        env["PYTHONPATH"] = str(ROOT)
        began = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "supernodeiac", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        assert proc.stderr is not None
        times: list[float] = []
        for line in proc.stderr:
            times.append(time.monotonic() - began)
            print(f"{times[-1]:7.2f} s  {line.rstrip()[:150]}")
            if ns.seconds is not None and times[-1] > ns.seconds:
                proc.kill()
                break
        proc.wait()
    gaps = [b - a for a, b in zip(times, times[1:])]
    first = f"{times[0]:.2f} s" if times else "none"
    print(f"first line after {first}; longest gap {max(gaps, default=0):.2f} s; {len(times)} lines; exit {proc.returncode}")


if __name__ == "__main__":
    main()
