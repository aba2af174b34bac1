"""Fabric -> findings. Each check is one module registering one function under its rule id."""

from __future__ import annotations

from ..findings import Finding
from .base import CHECKS, CheckContext


def run_checks(ctx: CheckContext) -> list[Finding]:
    findings: list[Finding] = []
    for _, check in CHECKS.items():
        findings.extend(check(ctx))
    return findings


STRUCTURAL_CHECKS = ("rack-space",)  # meaningful on a partly built Fabric: devices placed, links maybe not


def run_structural_checks(ctx: CheckContext) -> list[Finding]:
    """The checks that can name the root cause of a build that failed later (two devices in one
    rack unit make the management ports clash): run on what was built before the failure."""
    findings: list[Finding] = []
    for name in STRUCTURAL_CHECKS:
        findings.extend(CHECKS.get(name)(ctx))
    return findings


# Registration: importing a check module registers it (they import CHECKS from .base).
from . import (  # noqa: E402,F401
    address_pools,
    cages,
    clos,
    cxl,
    dragonfly,
    host_topology,
    ib_routing,
    imex,
    inventory,
    kubernetes_labels,
    management,
    mgmt_addressing,
    names,
    nic_placement,
    oversubscription,
    port_maps,
    port_speed,
    ports,
    racks,
    rackspace,
    rails,
    reach,
    scaleup,
    services,
    su_alignment,
    switch_bandwidth,
    switch_services,
    tenants,
    utilisation,
    workloads,
)
