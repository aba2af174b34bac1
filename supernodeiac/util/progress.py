"""Progress of long work, reported to whoever asked (the CLI) without the stages printing anything.

The stages stay pure: they announce the steps they take (``with progress.step("build"):``) to an
observer they are handed, and the observer decides what a person sees. The default observer,
:data:`NULL`, does nothing, so library callers and tests pay nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class Progress:
    """An observer of named steps. Subclasses override :meth:`started` and :meth:`finished`.

    Steps nest (``render`` holds one step per renderer); ``depth`` says how deep a step is, so an
    observer can show the stages and, when asked for detail, the steps inside them.
    """

    def __init__(self) -> None:
        self.depth = 0

    def started(self, name: str, depth: int) -> None:
        """A step begins (called on the thread doing the work)."""

    def finished(self, name: str, depth: int, seconds: float) -> None:
        """A step ends, after ``seconds`` of wall time (also when it raised)."""

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        depth = self.depth
        self.depth += 1
        self.started(name, depth)
        began = time.perf_counter()
        try:
            yield
        finally:
            self.depth = depth
            self.finished(name, depth, time.perf_counter() - began)


NULL = Progress()
