"""IMEX addressing: a switched scale-up domain's ``inband`` pool addresses every compute tray of
every domain instance (facts/imex.py keys them by instance and tray)."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator

from ..facts.imex import per_domain
from ..findings import Finding, error
from ..model.scaleup import SwitchedDomain
from .base import CHECKS, CheckContext


@CHECKS.register("imex-addressing")
def check_imex_addressing(ctx: CheckContext) -> Iterator[Finding]:
    for i, spec in enumerate(ctx.blueprint.scaleup):
        if not isinstance(spec, SwitchedDomain) or spec.inband is None:
            continue
        path = ("scaleup", i, "inband")
        block = per_domain(spec, spec.inband)
        need = spec.compute_trays + 3  # the subnet's network, gateway and broadcast addresses beside the trays
        if block < need:
            yield error(
                "imex-addressing",
                f"per_domain {block} leaves no room for {spec.compute_trays} compute trays and the subnet's network, "
                "gateway and broadcast addresses",
                path + ("per_domain",),
                f"at least {need} (or leave it out: {1 << (need - 1).bit_length()})",
            )
            continue
        net = ipaddress.ip_network(spec.inband.network)
        if spec.count * block > net.num_addresses:
            prefix = net.max_prefixlen - math.ceil(math.log2(spec.count * block))
            yield error(
                "imex-addressing",
                f"{net} holds {net.num_addresses // block} domain instances of {block} addresses; {spec.name} has {spec.count}",
                path + ("network",),
                f"a /{prefix} or larger",
            )
