"""Slurm topology files, read back with a parser that follows topology.conf(5) and topology.yaml(5)."""

from __future__ import annotations

import re

import pytest
from conftest import BLUEPRINTS
from ruamel.yaml import YAML

from supernodeiac.outputs.slurm import block_sizes, hostlist
from supernodeiac.pipeline import compile_file, render


def expand(expr: str) -> list[str]:
    """Slurm's hostlist expression: comma-separated items, each 'prefix[1-3,7]suffix' or a name."""
    out: list[str] = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", expr):
        m = re.fullmatch(r"([^\[]*)\[([^\]]+)\](.*)", item)
        if m is None:
            out.append(item)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{prefix}{n:0{width}d}{suffix}")
    return out


def parse_conf(text: str) -> list[dict[str, str]]:
    """topology.conf(5): one record per line, 'Key=Value' pairs, keys case-insensitive, '#' comments."""
    records = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pairs = {}
        for token in line.split():
            key, sep, value = token.partition("=")
            assert sep and value, f"not Key=Value: {token!r}"
            pairs[key.lower()] = value
        records.append(pairs)
    return records


def check_tree(records: list[dict[str, str]]) -> tuple[dict[str, list[str]], str]:
    """Switches unique (at most 64 characters), children defined, one root; node -> its leaf switch."""
    switches = {r["switchname"]: r for r in records}
    assert len(switches) == len(records), "SwitchName repeated"
    assert all(len(s) <= 64 for s in switches)
    parent: dict[str, str] = {}
    nodes: dict[str, list[str]] = {}
    for name, r in switches.items():
        assert ("nodes" in r) != ("switches" in r), name
        for child in expand(r.get("switches", "")) if "switches" in r else []:
            assert child in switches, f"{name} names undefined switch {child}"
            assert child not in parent, f"{child} under two switches"
            parent[child] = name
        for node in expand(r["nodes"]) if "nodes" in r else []:
            nodes.setdefault(node, []).append(name)
    roots = [s for s in switches if s not in parent]
    assert len(roots) == 1, roots
    return nodes, roots[0]


def check_blocks(records: list[dict[str, str]]) -> tuple[dict[str, list[str]], list[int]]:
    sizes_rec = [r for r in records if "blocksizes" in r]
    blocks = {r["blockname"]: expand(r["nodes"]) for r in records if "blockname" in r}
    assert len(blocks) == len([r for r in records if "blockname" in r]), "BlockName repeated"
    assert len(sizes_rec) == 1
    sizes = [int(x) for x in sizes_rec[0]["blocksizes"].split(",")]
    base = sizes[0]
    # Every block has at least the base size; each later size is the one before times a power of two.
    assert all(len(n) >= base for n in blocks.values())
    for a, b in zip(sizes, sizes[1:], strict=False):
        ratio = b // a
        assert b % a == 0 and ratio >= 2 and ratio & (ratio - 1) == 0, sizes
    assert sizes[-1] <= sum(len(n) for n in blocks.values())
    return blocks, sizes


@pytest.mark.parametrize("name", ["small-ib", "nvl72-pod", "ib-3tier", "dragonfly-plus", "nebula-x128-ib"])
def test_slurm_files_parse_and_match_the_fabric(name):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    artifacts, _ = render(c, ["slurm"])
    hosts = {d.name for d in c.fabric.devices if c.fabric.models[d.model].accelerators is not None}
    nodes, root = check_tree(parse_conf(artifacts["slurm/topology.conf"].decode()))
    # Every host is under exactly one leaf switch.
    assert set(nodes) == hosts and all(len(v) == 1 for v in nodes.values())
    blocks, sizes = check_blocks(parse_conf(artifacts["slurm/topology-block.conf"].decode()))
    assert sorted(n for ns in blocks.values() for n in ns) == sorted(hosts)
    doc = YAML(typ="safe").load(artifacts["slurm/topology.yaml"].decode())
    tree = next(t for t in doc if t["topology"] == "tree")
    block = next(t for t in doc if t["topology"] == "block")
    assert tree["cluster_default"] is True and block["cluster_default"] is False
    assert block["block"]["block_sizes"] == sizes
    assert {b["block"]: expand(b["nodes"]) for b in block["block"]["blocks"]} == blocks
    yaml_nodes = {n for s in tree["tree"]["switches"] for n in expand(s.get("nodes", ""))} - {""}
    assert yaml_nodes == hosts


def test_nvl72_blocks_are_its_racks_and_leaf_switches_are_the_cabled_leaf_groups():
    c = compile_file(str(BLUEPRINTS / "nvl72-pod.yaml"))
    artifacts, _ = render(c, ["slurm"])
    blocks, sizes = check_blocks(parse_conf(artifacts["slurm/topology-block.conf"].decode()))
    assert sorted(blocks) == [f"nvl-{i:02d}" for i in range(1, 9)] and sizes == [18, 36, 72, 144]
    for b, members in blocks.items():
        assert members == [f"{b}-ct{i:02d}" for i in range(1, 19)]
    nodes, _ = check_tree(parse_conf(artifacts["slurm/topology.conf"].decode()))
    f = c.fabric
    for link in f.links_of("ib"):
        host = f.devices[link.a]
        if host.name in nodes:
            assert nodes[host.name] == [f"ib-su{f.devices[link.b].coord('su') + 1:03d}"]


def test_hostlist_round_trips():
    names = ["gpu-0001", "gpu-0002", "gpu-0003", "gpu-0007", "x9", "login", "gpu-0010"]
    expr = hostlist(names)
    assert expr == "gpu-[0001-0003,0007,0010],login,x9"
    assert sorted(expand(expr)) == sorted(names)


def test_block_sizes_rule():
    assert block_sizes([18] * 8) == [18, 36, 72, 144]
    assert block_sizes([18] * 5) == [18, 36, 72]
    assert block_sizes([31, 32, 32]) == [31, 62]
    assert block_sizes([]) == []
