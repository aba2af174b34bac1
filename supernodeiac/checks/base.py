"""The checks' registry and what a check reads: a rule family registers a function of the
:class:`CheckContext` under its rule id."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..findings import Finding
from ..model.blueprint import Blueprint
from ..util.registry import Registry


@dataclass(frozen=True)
class CheckContext:
    blueprint: Blueprint
    catalogue: Catalogue
    fabric: Fabric


Check = Callable[[CheckContext], Iterable[Finding]]
CHECKS: Registry[Check] = Registry("check")
