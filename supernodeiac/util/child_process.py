"""Child processes that end with snc: a render killed by a pipeline's timeout (or kill -9) must
not leave a `dot` laying out a diagram for nobody.

On Linux the child asks the kernel for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``),
set between fork and exec; if the parent is already gone by then, the child exits at once.
Elsewhere the timeout every call carries is the bound.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence

_PR_SET_PDEATHSIG = 1


def _tie_to_parent() -> Callable[[], None] | None:
    """A preexec_fn that ties the child to this process, or None where the OS has no such call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here, not in the forked child
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above: nobody waits for us
            os._exit(1)

    return preexec


def run(args: Sequence[str], data: bytes, timeout_s: float) -> bytes:
    """``args`` with ``data`` on stdin; its stdout. Raises as ``subprocess.run(check=True)`` does."""
    done = subprocess.run(list(args), input=data, capture_output=True, check=True, timeout=timeout_s, preexec_fn=_tie_to_parent())
    return done.stdout
