"""The peak memory of a command, measured so that the test process's own size does not count.

Linux carries a process's peak RSS across ``exec`` (the kernel keeps the larger of the old and
the new image's high-water mark), so a child forked straight from a pytest worker that has
grown to 600 MB reports 600 MB whatever it does. The command is therefore forked from a fresh
interpreter (a few MB), which reports that child's own peak: the figure the test means.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

# Fork from a small process, wait, report "exit-code peak-KB" into the file named first.
_TRAMPOLINE = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "open(sys.argv[1], 'w').write(f'{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}')\n"
)


@dataclass(frozen=True)
class Measured:
    exit_code: int
    peak_kb: int
    wall_s: float


def run_measured(
    command: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
    timeout: float = 300,
) -> Measured:
    """Run ``command`` to its end (killed past ``timeout``: a guard against a hang, not a timing
    test) and return its exit code and its own peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "peak")
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, report, *command],
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        wall = time.monotonic() - start
        with open(report) as f:
            code, peak = f.read().split()
    return Measured(int(code), int(peak), wall)
