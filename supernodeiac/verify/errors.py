"""The error a discovery file that cannot be read raises: where (file, line) and what."""

from __future__ import annotations


class DiscoveryError(Exception):
    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.path, self.line, self.message = path, line, message
