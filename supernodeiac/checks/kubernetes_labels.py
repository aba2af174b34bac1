"""Kubernetes names and labels the design implies are valid, and its scheduler levels nest.

Node names must be DNS subdomains; label keys and values obey Kubernetes syntax (63-character
names and values, DNS-subdomain prefixes). A naming template, a rack name or a fabric name that
would break them is an error located where it is written, rather than a manifest the API server
rejects. Scheduler levels that do not nest (a scale-up domain split over two leaf groups) are
noted (info): the Kueue Topology and the Volcano HyperNodes leave that level out and keep the
scale-up domain, so the schedulers still get a valid tree.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..fabric import Device
from ..facts.hosts import cached_host_facts
from ..facts.node_labels import (
    DNS_SUBDOMAIN,
    Labels,
    cached_node_labels,
    key_problem,
    node_name_problem,
    value_problem,
)
from ..findings import Finding, error, info
from ..model.blueprint import built_fabrics
from .base import CHECKS, CheckContext


def _name_path(ctx: CheckContext, d: Device) -> tuple:
    """The template a device's name came from (as the names check locates it)."""
    if d.role in ctx.blueprint.naming.devices:
        return ("naming", "devices", d.role)
    origin = d.origin
    if len(origin) == 2 and origin[0] == "nodes" and ctx.blueprint.nodes[origin[1]].naming is not None:
        return (*origin, "naming")
    return origin


def _fabric_path(ctx: CheckContext, name: str | None) -> tuple:
    for i, s, built in built_fabrics(ctx.blueprint):
        if built == name:
            return ("scaleout", i, "name" if built == s.name else "planes")
    return ("scaleout",)


# DNS_SUBDOMAIN over names joined by newlines (with one before the first), without a match per
# name: every character in [a-z0-9.-] (the newlines aside), and no segment that is empty, starts
# with '-' or '.' (after a newline or a dot) or ends with '-' (before one).
_SUBDOMAIN_CHARS = dict.fromkeys(map(ord, "abcdefghijklmnopqrstuvwxyz0123456789.-\n"))
_NOT_IN_SUBDOMAINS = ("\n-", "\n.", "\n\n", ".-", "..", ".\n", "-.", "-\n")


@CHECKS.register("kubernetes-labels")
def check_kubernetes_labels(ctx: CheckContext) -> Iterator[Finding]:
    hosts = cached_host_facts(ctx.fabric, ctx.blueprint)
    if not hosts.scheduled:
        return
    f, bp = ctx.fabric, ctx.blueprint
    hint = "Kubernetes names: lower-case letters, digits, '-' and '.'; label values: at most 63 characters"
    reported: set[tuple] = set()
    devices = f.devices
    if not _all_node_names_valid([devices[h].name for h in hosts.scheduled]):
        for h in hosts.scheduled:
            d = devices[h]
            problem = node_name_problem(d.name)
            if problem and (path := _name_path(ctx, d)) not in reported:
                reported.add(path)
                yield error("kubernetes-labels", f"host {problem}", path, hint)
    labels = cached_node_labels(hosts, bp)
    if _all_labels_valid(labels):
        yield from _design_findings(ctx, labels)
        return
    seen_keys: set[str] = set()
    # A value repeats on 10^4 hosts (a rack, a leaf, a group): each is checked once.
    problems: dict[str, str | None] = {}
    for h, values in labels.by_host.items():
        for key, value in values.items():
            if key not in seen_keys:
                seen_keys.add(key)
                problem = key_problem(key)
                if problem:
                    fabric = key.rpartition("/")[2].split(".")[0]
                    path = _fabric_path(ctx, fabric) if any(n == fabric for _, _, n in built_fabrics(bp)) else ("kubernetes",)
                    if path not in reported:
                        reported.add(path)
                        yield error("kubernetes-labels", f"label key {key!r}: {problem}", path, "a shorter fabric name")
            if value not in problems:
                problems[value] = value_problem(value)
            problem = problems[value]
            if not problem:
                continue
            origin = labels.origins.get(key)
            if origin is not None and origin.device is not None:
                path = _name_path(ctx, f.devices[origin.device])
            elif origin is not None and origin.what == "rack":
                path = ("site", "rack_name")
            elif origin is not None and origin.what in ("row",):
                path = ("site", "rows")
            elif origin is not None and origin.what in ("domain", "model"):
                path = f.devices[h].origin
            else:
                path = ("metadata", "name")
            if (path, key) not in reported:
                reported.add((path, key))
                yield error("kubernetes-labels", f"label {key}: {problem}", path, hint)
    yield from _design_findings(ctx, labels)


def _all_node_names_valid(names: list[str]) -> bool:
    """True when no name has a problem: one search over the names joined (10^6 hosts in a
    Dragonfly+), where a match per name costs a second; False sends the caller to the
    name-by-name loop that locates each problem."""
    if not names or max(map(len, names)) > 253:
        return not names
    text = "\n" + "\n".join(names) + "\n"
    if text.count("\n") != len(names) + 1:  # a name holding a newline: the per-name loop says why
        return False
    return not text.translate(_SUBDOMAIN_CHARS) and not any(pair in text for pair in _NOT_IN_SUBDOMAINS)


def _all_labels_valid(labels: Labels) -> bool:
    """True when every distinct key and value is valid (sets made in C over the distinct label
    sets), so the host-by-host loop that locates a problem has nothing to find."""
    keys: set[str] = set()
    values: set[str] = set()
    for labelled in labels.sets:
        keys.update(labelled)
        values.update(labelled.values())
    return not any(map(key_problem, keys)) and not any(map(value_problem, values))


def _design_findings(ctx: CheckContext, labels: Labels) -> Iterator[Finding]:
    """The findings of the design as a whole: the Kueue Topology's name and the levels left out."""
    bp = ctx.blueprint
    if bp.kubernetes.topology_name is None and not DNS_SUBDOMAIN.match(bp.metadata.name):
        yield error(
            "kubernetes-labels",
            f"metadata.name {bp.metadata.name!r} cannot name the Kueue Topology (a lower-case DNS subdomain)",
            ("metadata", "name"),
            "set kubernetes.topology_name",
        )
    notes = labels.notes if labels.primary is not None else []
    if notes:
        yield info(
            "scheduler-topology",
            f"Kueue/Volcano levels {'; '.join(notes)}: the schedulers cannot use those levels",
            _fabric_path(ctx, labels.primary)[:2],
            "align scalable units with scale-up domains: su_nodes a multiple of the hosts in one domain",
        )
