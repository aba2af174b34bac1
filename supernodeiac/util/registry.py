"""A tiny named registry: one per extension point (builders, checks, renderers).

A new topology, check or output is one new module that decorates its entry point; the
package's ``__init__`` imports the module so the decorator runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(entry: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.what} {name!r} registered twice")
            self._entries[name] = entry
            return entry

        return decorate

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise KeyError(f"no {self.what} named {name!r} (known: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        # Sorted so that every run visits entries in the same order (deterministic output).
        for name in sorted(self._entries):
            yield name, self._entries[name]
