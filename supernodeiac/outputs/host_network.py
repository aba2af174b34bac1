"""The hosts' side of the Ethernet fabrics: netplan for their fabric NICs and a NIC QoS script that
matches the leaves' lossless class.

``hosts/netplan.yaml``: one netplan document per host (every Ethernet fat tree with a host pool,
all of a host's fabric NICs in one document), in host order: the figures of the host sheet
(``host-addresses/``): per NIC its odd /31 (/127) address, an MTU the leaf ports carry, and the
source routing the multi-rail design needs (a table per NIC, 100 + its port index, holding the
route to the fabric's host pool via the NIC's leaf, and a rule "from <the NIC's address> lookup
<table>"; no link-local addresses on an IPv4 NIC, IPv6's own for neighbour discovery
on an IPv6 one). Each document opens with the line ``--- # node: <name>`` and is by itself a whole
netplan file, so ``awk '/^--- # node: /{f=$4".yaml"} {print > f}' hosts/netplan.yaml`` splits it
into one file per host (for /etc/netplan/60-snc-fabric.yaml). One streamed file, not one per
host: a 131,072-GPU design has 16,384 hosts, and 16,384 more files would cost the writer about
2.7 CPU s (measured; docs/performance.md) where one file costs what its bytes cost.

``hosts/nic-qos/<fabric>/<model>.sh``: per lossless Ethernet fabric and host model, a bash script
setting on each of the model's NICs on that fabric what the leaves expect (their PORT_QOS_MAP
and DSCP_TO_TC_MAP, outputs/sonic_config.py): DSCP trust, PFC on the lossless priorities, the
DSCP -> priority map of every DSCP the blueprint maps (priority = the leaves' traffic class),
DCQCN (ECN notification and reaction point) on the lossless priorities, the CNP's DSCP and
priority, and the RoCE ToS for RDMA-CM (``cma_roce_tos``) and plain verbs QPs. Commands and sysfs
paths are NVIDIA's (MLNX_OFED / DOCA-OFED documentation: "Quality of Service", "Explicit Congestion
Notification"). Every value reaching the script is a number or a quoted word.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from functools import partial

from ..facts.switch_facts import facts_for
from ..util.shell import comment_text
from ..util.templating import environment, render_template
from .base import RENDERERS, RenderContext, Stream
from .host_addresses import host_rows

NETPLAN_FILE = "60-snc-fabric.yaml"
_BATCH = 256  # hosts per template render (one write each)


def _quote_yaml(value: str) -> str:
    """A YAML double-quoted scalar (a JSON string is one): no name can break the document."""
    return json.dumps(value)


def _fabrics(ctx: RenderContext) -> list[str]:
    """Ethernet fat trees whose hosts are numbered (a host pool), in name order."""
    facts = facts_for(ctx)
    out = []
    for name in sorted(n for n, x in ctx.fabric.facts.items() if x.get("kind") == "fat-tree" and "ethernet" in x):
        hosts = facts.host_addresses(name)
        if hosts is not None and hosts.numbered:
            out.append(name)
    return out


def host_nics(ctx: RenderContext, fabrics: list[str]) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Per host (device order), its fabric NICs in port order across the fabrics: (nic, address with
    prefix, address, gateway, table, route, fabric, mtu); the MTU is the fabric's ``host_mtu``
    (default the leaf ports' ``mtu``: both are IP MTUs, model/clos.py)."""
    facts = facts_for(ctx)
    index = {d.name: d.index for d in ctx.fabric.devices}
    per: dict[int, list[tuple[int, tuple[str, ...]]]] = {}
    for name in fabrics:
        hosts = facts.host_addresses(name)
        assert hosts is not None
        mtu = str(ctx.fabric.facts[name]["ethernet"]["host_mtu"])  # type: ignore[typeddict-item]
        for node, nic, _rdma, _port, address, gateway, _leaf, _lp, _rail, table, route in host_rows(ctx, name, hosts):
            source = address.partition("/")[0]
            per.setdefault(index[node], []).append((int(table), (nic, address, source, gateway, table, route, name, mtu)))
    devices = ctx.fabric.devices
    return [(devices[h].name, [row for _t, row in sorted(per[h])]) for h in sorted(per)]


def _netplan(ctx: RenderContext, fabrics: list[str]) -> Iterator[str]:
    """The documents, _BATCH hosts per template render: the template renders whole host documents
    (nothing outside its loop), so batches joined are the one render's text, and each batch is
    joined by jinja in one call instead of 250 chunks per host passing through here."""
    template = environment().get_template("host-netplan.yaml.j2")
    hosts = host_nics(ctx, fabrics)
    name = ctx.blueprint.metadata.name
    for start in range(0, len(hosts), _BATCH):
        yield template.render(
            hosts=hosts[start : start + _BATCH], blueprint=name, file_name=NETPLAN_FILE, c=comment_text, q=_quote_yaml
        )


def _qos_scripts(ctx: RenderContext, fabrics: list[str]) -> dict[str, bytes | Stream]:
    facts = facts_for(ctx)
    out: dict[str, bytes | Stream] = {}
    models = {d.name: d.model for d in ctx.fabric.devices}
    for name in fabrics:
        lossless = ctx.fabric.facts[name]["ethernet"]["lossless"]  # type: ignore[typeddict-item]
        if lossless is None:
            continue  # plain Ethernet: no lossless class to match
        hosts = facts.host_addresses(name)
        assert hosts is not None
        nics: dict[str, dict[str, str]] = {}
        for node, nic, rdma, *_rest in host_rows(ctx, name, hosts):
            nics.setdefault(models[node], {})[nic] = rdma
        dscp_to_tc: dict[int, int] = {int(k): int(v) for k, v in lossless["dscp_to_tc"].items()}
        pfc = sorted(lossless["pfc_priorities"])
        cnp = lossless["cnp_dscp"]
        for model in sorted(nics):
            out[f"hosts/nic-qos/{name}/{model}.sh"] = render_template(
                "nic-qos.sh.j2",
                blueprint=ctx.blueprint.metadata.name,
                model=model,
                fabric=name,
                nics=sorted(nics[model].items(), key=lambda kv: _natural(kv[0])),
                pfc_priorities=pfc,
                pfc_vector=",".join("1" if p in pfc else "0" for p in range(8)),
                dscp2prio=sorted(dscp_to_tc.items()),
                roce_dscp=lossless["roce_dscp"],
                roce_priority=dscp_to_tc[lossless["roce_dscp"]],
                roce_tos=lossless["roce_dscp"] * 4,
                cnp_dscp=cnp,
                cnp_priority=None if cnp is None else dscp_to_tc[cnp],
                c=comment_text,
                q=shlex.quote,
            ).encode()
    return out


def _natural(name: str) -> tuple[str, int]:
    """eth2 before eth10."""
    head = name.rstrip("0123456789")
    tail = name[len(head) :]
    return (head, int(tail) if tail else -1)


@RENDERERS.register("hosts")
def render_hosts(ctx: RenderContext) -> dict[str, bytes | Stream]:
    fabrics = _fabrics(ctx)
    if not fabrics:
        return {}
    out: dict[str, bytes | Stream] = {"hosts/netplan.yaml": Stream(partial(_netplan, ctx, fabrics))}
    out.update(_qos_scripts(ctx, fabrics))
    return out
