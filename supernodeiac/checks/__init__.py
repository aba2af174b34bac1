"""Fabric -> findings. Each check is one module registering one function under its rule id."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..catalog.types import Catalogue
from ..fabric import Fabric
from ..findings import Finding
from ..model.blueprint import Blueprint
from ..registry import Registry


@dataclass(frozen=True)
class CheckContext:
    blueprint: Blueprint
    catalogue: Catalogue
    fabric: Fabric


Check = Callable[[CheckContext], Iterable[Finding]]
CHECKS: Registry[Check] = Registry("check")


def run_checks(ctx: CheckContext) -> list[Finding]:
    findings: list[Finding] = []
    for _, check in CHECKS.items():
        findings.extend(check(ctx))
    return findings


# Registration: importing a check module registers it (kept last: they import CHECKS).
from . import (  # noqa: E402,F401
    cages,
    clos,
    cxl,
    dragonfly,
    host_topology,
    kubernetes_labels,
    management,
    mgmt_addressing,
    names,
    nic_placement,
    oversubscription,
    port_maps,
    ports,
    racks,
    rackspace,
    rails,
    reach,
    scaleup,
    services,
    tenants,
    utilisation,
    workloads,
)
