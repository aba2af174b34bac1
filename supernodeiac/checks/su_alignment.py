"""Scalable units against scale-up domains: an SU boundary that cuts a multi-host scale-up domain
(an NVL72 rack of 18 trays in SUs of 32 nodes) puts one domain on two SUs' leaves, so the domain's
hosts lose the one-hop rail path between them, its racks cable to two leaf groups, and the
schedulers cannot keep the domain as a level inside the SU. A warning names the split domains and
the rack-aligned ``su_nodes``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ..facts.hosts import cached_host_facts
from ..findings import Finding, warning
from ..model.blueprint import built_fabrics
from .base import CHECKS, CheckContext


@CHECKS.register("su-splits-domain")
def check_su_alignment(ctx: CheckContext) -> Iterator[Finding]:
    f = ctx.fabric
    trees = {n: (i, s) for i, s, n in built_fabrics(ctx.blueprint) if s.kind == "fat-tree"}
    if not trees:
        return
    hosts = cached_host_facts(f, ctx.blueprint)
    multi = {inst: hs for inst, hs in hosts.domain_hosts.items() if len(hs) > 1}
    if not multi:
        return
    for name, fh in sorted(hosts.fabrics.items()):
        facts = f.facts.get(name)
        if name not in trees or facts is None or facts["kind"] != "fat-tree":
            continue
        su_nodes = facts["su_nodes"]
        su_of = {h: fh.leaf_groups[g].su for h, g in fh.group_of.items()}
        spans = {inst: sorted({s for h in hs if (s := su_of.get(h)) is not None}) for inst, hs in multi.items()}
        su_domains: dict[int, set[str]] = {}
        for h, s in su_of.items():
            if s is not None:
                su_domains.setdefault(s, set()).add(hosts.domain.get(h, f"host {h}"))
        # A domain on several SUs is split when one of them holds anything else: a domain of
        # 64 hosts on two SUs of 32 of its own is aligned (whole SUs per domain).
        split = [
            (inst, len(multi[inst]), sus)
            for inst, sus in sorted(spans.items())
            if len(sus) > 1 and any(len(su_domains[s]) > 1 for s in sus)
        ]
        if not split:
            continue
        size = Counter(n for _, n, _ in split).most_common(1)[0][0]  # the hosts in one domain
        if su_nodes >= size:
            aligned = su_nodes // size * size
            per = f"{aligned // size} whole scale-up domain{'s' if aligned // size > 1 else ''} per SU"
        else:
            aligned = max(d for d in range(1, su_nodes + 1) if size % d == 0)
            per = f"each scale-up domain on {size // aligned} whole SUs"
        one_rack = all(len({hosts.rack(h) for h in multi[inst]}) == 1 for inst, _, _ in split)
        examples = "; ".join(f"{inst}: {n} hosts over SUs {', '.join(str(s + 1) for s in sus)}" for inst, n, sus in split[:3])
        i, spec = trees[name]
        declared = getattr(spec, "su_nodes", None) is not None
        yield warning(
            "su-splits-domain",
            f"{name}: scalable units of {su_nodes} nodes split {len(split)} of {len(multi)} scale-up domains "
            f"({examples}){'; each domain is one rack' if one_rack else ''}",
            ("scaleout", i, "su_nodes") if declared else ("scaleout", i),
            f"su_nodes: {aligned} ({per}{', rack-aligned' if one_rack else ''})",
        )
