"""Kubernetes outputs: core objects against the API schema (kubernetes-validate), Kueue and
Volcano objects against their CRDs (jsonschema) and the CEL rules by hand, labels against the
cables, and naming mistakes as located errors."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
from conftest import BLUEPRINTS, compile_text
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from supernodeiac.facts.hosts import cached_host_facts
from supernodeiac.facts.node_labels import cached_node_labels, key_problem, node_labels, value_problem
from supernodeiac.outputs.kubernetes import documents, node_documents, node_object
from supernodeiac.pipeline import compile_file, render

CRDS = Path(__file__).parent / "data" / "k8s"
CASES = ["small-ib", "nvl72-pod", "nebula-x128-ib", "ib-3tier", "dragonfly-plus", "supercluster-2level"]
P = "topology.supernodeiac.io"


def _docs(data: bytes) -> list[dict]:
    return [d for d in YAML(typ="safe").load_all(data.decode()) if d is not None]


def _crd_schema(name: str, version: str) -> dict:
    crd = YAML(typ="safe").load((CRDS / name).read_text())
    return next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]


# The Kueue v1beta1 ResourceFlavor fields snc writes, as its CRD defines them (kubernetes-sigs/kueue
# config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml, read for these constraints).
RESOURCE_FLAVOR = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "kueue.x-k8s.io/v1beta1"},
        "kind": {"const": "ResourceFlavor"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "nodeLabels": {"type": "object", "maxProperties": 8, "additionalProperties": {"type": "string"}},
                "topologyName": {
                    "type": "string",
                    "maxLength": 253,
                    "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                },
            },
        },
    },
}


@pytest.fixture(scope="module", params=CASES)
def rendered(request):
    c = compile_file(str(BLUEPRINTS / f"{request.param}.yaml"))
    assert c.exit_code == 0
    artifacts, _ = render(c, ["kubernetes"])
    return c, artifacts


def test_nodes_validate_against_the_kubernetes_api_schema(rendered):
    c, artifacts = rendered
    nodes = _docs(artifacts["kubernetes/node-labels.yaml"])
    hosts = [d for d in c.fabric.devices if c.fabric.models[d.model].accelerators is not None]
    assert len(nodes) == len(hosts)
    version = kubernetes_validate.latest_version()
    for node in nodes[:50] + nodes[-5:]:
        kubernetes_validate.validate(node, version, strict=True)
    for node in nodes:
        assert node["kind"] == "Node" and set(node) == {"apiVersion", "kind", "metadata"}
        assert set(node["metadata"]) == {"name", "labels"}
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", node["metadata"]["name"])
        for key, value in node["metadata"]["labels"].items():
            assert key_problem(key) is None and value_problem(value) is None


def test_kueue_objects_validate_against_their_crd_and_cel_rules(rendered):
    _c, artifacts = rendered
    docs = _docs(artifacts["kubernetes/kueue.yaml"])
    topology = [d for d in docs if d["kind"] == "Topology"]
    flavors = [d for d in docs if d["kind"] == "ResourceFlavor"]
    assert len(topology) == 1 and flavors
    jsonschema.validate(topology[0], _crd_schema("kueue.x-k8s.io_topologies.yaml", topology[0]["apiVersion"].split("/")[1]))
    levels = [lv["nodeLabel"] for lv in topology[0]["spec"]["levels"]]
    # The CEL rules: unique, kubernetes.io/hostname only last; at most 8 levels (maxItems).
    assert len(levels) == len(set(levels)) <= 8 and levels[-1] == "kubernetes.io/hostname"
    assert "kubernetes.io/hostname" not in levels[:-1]
    for flavor in flavors:
        jsonschema.validate(flavor, RESOURCE_FLAVOR)
        assert flavor["spec"]["topologyName"] == topology[0]["metadata"]["name"]
        assert len(flavor["spec"]["nodeLabels"]) >= 1  # CEL: a topology needs at least one nodeLabel
    # Levels nest strictly: every value of a narrower level lies inside one value of the wider one.
    nodes = _docs(artifacts["kubernetes/node-labels.yaml"])
    labels = [dict(n["metadata"]["labels"], **{"kubernetes.io/hostname": n["metadata"]["name"]}) for n in nodes]
    for wide, narrow in zip(levels, levels[1:], strict=False):
        parent: dict[str, str] = {}
        for lab in labels:
            assert parent.setdefault(lab[narrow], lab[wide]) == lab[wide], (wide, narrow)


def test_volcano_hypernodes_validate_and_form_a_tree(rendered):
    _c, artifacts = rendered
    docs = _docs(artifacts["kubernetes/volcano-hypernodes.yaml"])
    schema = _crd_schema("topology.volcano.sh_hypernodes.yaml", "v1alpha1")
    for d in docs:
        jsonschema.validate(d, schema)
    nodes = {n["metadata"]["name"] for n in _docs(artifacts["kubernetes/node-labels.yaml"])}
    by_tier: dict[int, dict[str, list[dict]]] = {}
    for d in docs:
        by_tier.setdefault(d["spec"]["tier"], {})[d["metadata"]["name"]] = d["spec"]["members"]
    if not docs:
        return
    tiers = sorted(by_tier)
    assert tiers == list(range(1, len(tiers) + 1))
    # Tier 1 holds every node exactly once; each higher tier holds every HyperNode below exactly once.
    below = nodes
    for tier in tiers:
        members = [m for ms in by_tier[tier].values() for m in ms]
        kind = "Node" if tier == 1 else "HyperNode"
        assert {m["type"] for m in members} == {kind}
        names = [m["selector"]["exactMatch"]["name"] for m in members]
        assert sorted(names) == sorted(below)
        below = set(by_tier[tier])


SHIPPED = sorted(p.stem for p in BLUEPRINTS.glob("*.yaml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_scheduler_tree_has_one_root_per_fabric(name):
    """Volcano HyperNodes and Kueue levels close at the whole fabric: one root HyperNode, every
    host reachable from it down the tiers, and the Kueue Topology's widest level the fabric."""
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    artifacts, _ = render(c, ["kubernetes"])
    hosts = {d.name for d in c.fabric.devices if c.fabric.models[d.model].accelerators is not None}
    if not hosts:
        assert artifacts == {}  # nothing to schedule
        return
    docs = _docs(artifacts["kubernetes/volcano-hypernodes.yaml"])
    schema = _crd_schema("topology.volcano.sh_hypernodes.yaml", "v1alpha1")
    for d in docs:
        jsonschema.validate(d, schema)
    by_name = {d["metadata"]["name"]: d["spec"] for d in docs}
    assert len(by_name) == len(docs)
    children = {m["selector"]["exactMatch"]["name"] for spec in by_name.values() for m in spec["members"]}
    roots = [n for n in by_name if n not in children]
    assert len(roots) == 1, roots
    root = by_name[roots[0]]
    assert root["tierName"] == "fabric" and root["tier"] == max(spec["tier"] for spec in by_name.values())
    # Down from the root every host is reached exactly once, each tier one below its parent.
    reached: list[str] = []
    stack = [roots[0]]
    while stack:
        spec = by_name[stack.pop()]
        for m in spec["members"]:
            child = m["selector"]["exactMatch"]["name"]
            if m["type"] == "Node":
                assert spec["tier"] == 1
                reached.append(child)
            else:
                assert by_name[child]["tier"] == spec["tier"] - 1
                stack.append(child)
    assert sorted(reached) == sorted(hosts)
    topology = next(d for d in _docs(artifacts["kubernetes/kueue.yaml"]) if d["kind"] == "Topology")
    jsonschema.validate(topology, _crd_schema("kueue.x-k8s.io_topologies.yaml", topology["apiVersion"].split("/")[1]))
    levels = [lv["nodeLabel"] for lv in topology["spec"]["levels"]]
    assert levels[0].endswith(".fabric") and levels[-1] == "kubernetes.io/hostname"
    nodes = _docs(artifacts["kubernetes/node-labels.yaml"])
    assert len({n["metadata"]["labels"][levels[0]] for n in nodes}) == 1  # one value: the one root


def test_labels_agree_with_the_cables():
    """Walk the Fabric's links: each host's leaf labels name the leaves its NICs are cabled to,
    its domain label the domain instance its coordinates put it in."""
    for name in ("small-ib", "nvl72-pod", "nebula-x128-ib", "ib-3tier"):
        c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
        artifacts, _ = render(c, ["kubernetes"])
        labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in _docs(artifacts["kubernetes/node-labels.yaml"])}
        f, t = c.fabric, c.fabric.links
        checked = 0
        for a, ap, b, bp, s in zip(t.a, t.a_port, t.b, t.b_port, t.spec, strict=True):
            if t.specs[s].fabric != "ib":
                continue
            for host, port, leaf in ((a, ap, b), (b, bp, a)):
                d = f.devices[host]
                if d.name not in labels or f.port_group(host, port).role != "data":
                    continue
                rail = f.devices[leaf].coord("rail")
                assert labels[d.name][f"{P}/ib.rail{rail}.leaf"] == f.devices[leaf].name
                assert labels[d.name][f"{P}/ib.leaf-group"] == f"ib-su{f.devices[leaf].coord('su') + 1:03d}"
                checked += 1
        assert checked == sum(1 for d in f.devices if d.name in labels for p in f.layouts[d.model].ports_of("data"))
        for d in f.devices:
            if d.name not in labels:
                continue
            domain = labels[d.name][f"{P}/scaleup-domain"]
            if d.coord("supernode") is not None:
                assert domain == f"{d.coord('domain')}-{d.coord('supernode') + 1:02d}"
            else:
                assert domain == d.name  # an HGX board is its own scale-up domain
            rack = f.racks[d.rack]
            assert labels[d.name][f"{P}/rack"] == rack.name and labels[d.name]["topology.kubernetes.io/zone"] == rack.row


def test_settings_prefix_zone_and_nvidia_keys():
    text = (BLUEPRINTS / "ib-3tier.yaml").read_text() + (
        "kubernetes: {label_prefix: net.example.com, zone: pod, nvidia_topology_labels: true, topology_name: train}\n"
    )
    c = compile_text(text)
    assert c.exit_code == 0
    artifacts, _ = render(c, ["kubernetes"])
    node = _docs(artifacts["kubernetes/node-labels.yaml"])[0]["metadata"]["labels"]
    assert node["topology.kubernetes.io/zone"] == node["net.example.com/ib.pod"] == "ib-pod01"
    # Topograph v1 keys by default: tier 0 is the switch closest to the node (its leaf).
    assert node["fabric.topograph.run/tier-0"] == node["net.example.com/ib.leaf-group"]
    assert node["fabric.topograph.run/tier-1"] == "ib-pod01" and node["fabric.topograph.run/tier-2"] == "ib"
    assert not any(k.startswith("network.topology.nvidia.com/") for k in node)
    kueue = _docs(artifacts["kubernetes/kueue.yaml"])
    assert kueue[0]["metadata"]["name"] == "train"
    assert [lv["nodeLabel"] for lv in kueue[0]["spec"]["levels"]] == [
        "net.example.com/ib.fabric",
        "net.example.com/ib.spine-group",
        "net.example.com/ib.leaf-group",
        "kubernetes.io/hostname",
    ]


def test_topograph_pre_1_0_keys_as_an_option():
    text = (BLUEPRINTS / "ib-3tier.yaml").read_text() + (
        "kubernetes: {label_prefix: net.example.com, nvidia_topology_labels: true, topograph_keys: v0}\n"
    )
    c = compile_text(text)
    assert c.exit_code == 0
    artifacts, _ = render(c, ["kubernetes"])
    node = _docs(artifacts["kubernetes/node-labels.yaml"])[0]["metadata"]["labels"]
    assert node["network.topology.nvidia.com/leaf"] == node["net.example.com/ib.leaf-group"]
    assert node["network.topology.nvidia.com/spine"] == "ib-pod01" and node["network.topology.nvidia.com/core"] == "ib"
    assert not any(k.endswith("topograph.run/tier-0") for k in node)


def test_nvl72_domain_gets_the_v1_accelerator_key():
    text = (BLUEPRINTS / "nvl72-pod.yaml").read_text() + "kubernetes: {nvidia_topology_labels: true}\n"
    c = compile_text(text)
    assert c.exit_code == 0
    artifacts, _ = render(c, ["kubernetes"])
    nodes = [d["metadata"]["labels"] for d in _docs(artifacts["kubernetes/node-labels.yaml"])]
    domains = {n["accelerator.topograph.run/domain"] for n in nodes}
    assert len(domains) == 8 and len(nodes) == 8 * 18  # one NVL72 rack of 18 trays per domain


def test_a_bad_prefix_is_a_located_parse_error():
    c = compile_text((BLUEPRINTS / "small-ib.yaml").read_text() + "kubernetes: {label_prefix: Not_A_Domain}\n")
    assert c.exit_code == 2
    (f,) = c.findings
    assert "DNS subdomain" in f.message and f.location.line > 40


@pytest.mark.parametrize(
    "edit, where",
    [
        (("    count: 16\n", "    count: 16\n    naming: 'GPU_{index:02d}'\n"), "naming"),
        (
            (
                "  rows:\n",
                "  rack_name: '{row}-rack-with-a-name-far-too-long-for-a-kubernetes-label-value-{rack:03d}'\n  rows:\n",
            ),
            "rack_name",
        ),
    ],
)
def test_a_naming_template_that_breaks_kubernetes_syntax_is_a_located_error(edit, where):
    text = (BLUEPRINTS / "small-ib.yaml").read_text().replace(*edit)
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "kubernetes-labels"]
    assert found and c.exit_code == 1
    line = text.splitlines()[found[0].location.line - 1]
    assert where in line


def test_domains_split_over_leaf_groups_are_noted_and_left_out():
    # nvl72-pod with SUs of 32 trays (the QM9700's down ports): SU boundaries cut NVL72 racks.
    shipped_text = (BLUEPRINTS / "nvl72-pod.yaml").read_text()
    split_text = shipped_text.replace("    su_nodes: 18\n", "")
    split_text = split_text.replace("leaf: {row: N, per_rack: 16", "leaf: {row: N, per_rack: 10")
    c = compile_text(split_text)
    (w,) = [f for f in c.findings if f.rule == "scheduler-topology"]
    assert "leaf-group and scaleup-domain do not nest" in w.message and "nvl-01, nvl-02" in w.message
    artifacts, _ = render(c, ["kubernetes"])
    levels = [lv["nodeLabel"] for lv in _docs(artifacts["kubernetes/kueue.yaml"])[0]["spec"]["levels"]]
    assert levels == [f"{P}/ib.fabric", f"{P}/scaleup-domain", "kubernetes.io/hostname"]
    # Aligned (as shipped): one domain of 18 trays per scalable unit, every level nests.
    aligned = compile_text(shipped_text)
    assert aligned.exit_code == 0 and not [f for f in aligned.findings if f.rule == "scheduler-topology"]


def test_the_check_and_the_renderer_share_one_labelling_of_each_hosts_object():
    first, second = (compile_file(str(BLUEPRINTS / "small-ib.yaml")) for _ in range(2))
    hosts = [cached_host_facts(c.fabric, c.blueprint) for c in (first, second)]
    made = [cached_node_labels(h, c.blueprint) for h, c in zip(hosts, (first, second), strict=True)]
    # The compile's kubernetes-labels check made each: the renderer gets that object back.
    assert made[0] is cached_node_labels(hosts[0], first.blueprint) and made[0] is not made[1]
    fresh = node_labels(hosts[0], first.blueprint)
    assert (made[0].by_host, made[0].origins, made[0].level_keys, made[0].notes) == (
        fresh.by_host,
        fresh.origins,
        fresh.level_keys,
        fresh.notes,
    )
    assert made[0].by_host == made[1].by_host  # the same design, labelled alike
    artifacts, _ = render(first, ["kubernetes"])
    nodes = _docs(artifacts["kubernetes/node-labels.yaml"])
    names = {first.fabric.devices[h].name: h for h in made[0].by_host}
    assert {n["metadata"]["name"]: n["metadata"]["labels"] for n in nodes} == {
        name: made[0].by_host[h] for name, h in names.items()
    }


# Scalars a YAML reader would take for something else unless quoted: booleans, nulls, numbers,
# indicators at the start, ': ' and ' #' inside, quotes, escapes, line breaks, non-ASCII.
HOSTILE = ["yes", "no", "No", "on", "off", "null", "~", "true", "1", "007", "1e3", "0x1F", "-1", "-", "- a", "-x"]
HOSTILE += ["a: b", "a:b", ":", "a #b", "#c", '"q"', "it's", "\\", "\t", "a\nb", "", " ", "&a", "*a", "!t", "[x]"]
HOSTILE += ["{y}", "|", ">", "%", "@", "`", "?", "é", "ラック", "\u2028", "rack-01"]


def _node_list(texts: list[str]) -> list[tuple[str, dict[str, str]]]:
    """Nodes whose names, label keys and values are those texts, some sharing a value, one with no labels."""
    nodes = [(t, {k: v for k, v in zip(texts[i:] + texts[:i], texts, strict=True)}) for i, t in enumerate(texts)]
    return [*nodes, ("bare", {}), ("shared", {"rack": "yes", "leaf": "yes"}), ("shared2", {"rack": "yes"})]


def test_node_documents_are_the_plain_serialisers_bytes_on_hostile_text():
    nodes = _node_list(HOSTILE)
    fast = node_documents(nodes, "# h\n")
    assert fast == documents([node_object(n, labels) for n, labels in nodes], "# h\n")
    # And what a YAML reader gets back is the data, text for text.
    back = _docs(fast)
    assert [(d["metadata"]["name"], d["metadata"]["labels"]) for d in back] == nodes


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.text(min_size=0, max_size=6), min_size=1, max_size=8, unique=True))
def test_node_documents_match_the_plain_serialiser_on_any_text(texts):
    nodes = _node_list(texts)
    assert node_documents(nodes, "") == documents([node_object(n, labels) for n, labels in nodes], "")
