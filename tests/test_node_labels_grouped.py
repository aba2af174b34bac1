"""Node labels made once per group of placement-alike hosts (a Dragonfly+ has 10^6 hosts in a
few 10^4 groups) are the labels a host-by-host build makes: every host's set, every key's
origin (and their order), the scheduler levels and the notes, on shipped designs and test
designs, under each kubernetes option that changes which labels a host gets."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernodeiac.facts.hosts import Hosts, host_facts
from supernodeiac.facts.node_labels import node_labels, placement_groups
from supernodeiac.model.blueprint import Blueprint
from supernodeiac.pipeline import compile_file, compile_text

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = [
    "blueprints/small-ib.yaml",
    "blueprints/nvl72-pod.yaml",
    "blueprints/dgx-h100-superpod-4su.yaml",
    "blueprints/roce-rail-2tier.yaml",
    "blueprints/supercluster-2level.yaml",
    "blueprints/nebula-x128-ib.yaml",
    "blueprints/dragonfly-plus.yaml",
    "blueprints/ib-3tier.yaml",
    "tests/data/mixed-cpu-gpu-ib.yaml",
    "tests/data/roce-dual-plane.yaml",
    "tests/data/ascend-hccs-mesh.yaml",
    "bench:dragonfly-plus-8",  # CPU endpoints, one NIC each: the 10^6-host benchmark's shape
]


def _bench_dragonfly_plus(k: int) -> str:
    spec = importlib.util.spec_from_file_location("dragonfly_gen", ROOT / "bench" / "dragonfly_gen.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("dragonfly_gen", gen)
    spec.loader.exec_module(gen)
    return str(gen.dragonfly_plus_blueprint(k))


@functools.cache
def _design(path: str) -> tuple[Hosts, Blueprint]:
    c = compile_text(_bench_dragonfly_plus(8), "dfp.yaml") if path.startswith("bench:") else compile_file(str(ROOT / path))
    assert c.fabric is not None
    return host_facts(c.fabric, c.blueprint), c.blueprint


def _same(hosts: Hosts, bp: Blueprint) -> None:
    fast, plain = node_labels(hosts, bp), node_labels(hosts, bp, grouped=False)
    assert fast.hosts == plain.hosts == hosts.scheduled
    assert fast.by_host == plain.by_host
    assert list(fast.origins.items()) == list(plain.origins.items())
    assert [list(v) for v in fast.by_host.values()] == [list(v) for v in plain.by_host.values()]  # key order
    assert (fast.primary, fast.level_keys, fast.notes) == (plain.primary, plain.level_keys, plain.notes)
    assert len(fast.sets) <= len(plain.sets)


@pytest.mark.parametrize("path", DESIGNS)
def test_grouped_labels_are_the_host_by_host_labels(path):
    hosts, bp = _design(path)
    assert hosts.scheduled, "a design with hosts to label"
    _same(hosts, bp)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(DESIGNS),
    st.sampled_from(["row", "rack", "su", "pod", "scaleup-domain", "none"]),
    st.booleans(),
    st.sampled_from(["v1", "v0"]),
)
def test_grouped_labels_under_each_option(path, zone, topograph, keys):
    hosts, bp = _design(path)
    k8s = bp.kubernetes.model_copy(update={"zone": zone, "nvidia_topology_labels": topograph, "topograph_keys": keys})
    _same(hosts, bp.model_copy(update={"kubernetes": k8s}))


@pytest.mark.parametrize("path", DESIGNS)
def test_groups_split_hosts_that_differ(path):
    hosts, _bp = _design(path)
    first, group = placement_groups(hosts, hosts.scheduled)
    assert len(group) == len(hosts.scheduled) and first == sorted(first)
    index = {h: i for i, h in enumerate(hosts.scheduled)}
    assert [group[index[h]] for h in first] == list(range(len(first)))  # numbered by first host
    f = hosts.fabric
    for h, g in zip(hosts.scheduled, group, strict=True):
        rep = first[g]
        assert (f.devices[h].model, f.devices[h].rack, hosts.domain.get(h)) == (
            f.devices[rep].model,
            f.devices[rep].rack,
            hosts.domain.get(rep),
        )
        for fh in hosts.fabrics.values():
            assert [n.switch for n in fh.nics.get(h, ())] == [n.switch for n in fh.nics.get(rep, ())]


def test_some_designs_share_label_sets():
    shared = []
    for path in DESIGNS:
        hosts, _bp = _design(path)
        if len(placement_groups(hosts, hosts.scheduled)[0]) < len(hosts.scheduled):
            shared.append(path)
    assert {"blueprints/nvl72-pod.yaml", "bench:dragonfly-plus-8"} <= set(shared), shared
