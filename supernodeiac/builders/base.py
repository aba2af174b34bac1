"""The builders' registry: a topology module registers a function under the ``kind`` it builds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..util.registry import Registry
from .context import BuildContext

Builder = Callable[[BuildContext, Any, tuple], None]
BUILDERS: Registry[Builder] = Registry("builder")
