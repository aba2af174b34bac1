"""Every diagram's SVG from one `dot` (outputs/dot_batch.py), against one real `dot` per diagram:
the same bytes on the shipped designs; the batch refused (and each diagram laid out alone)
wherever it could not be trusted; a labelled edge within a rank (Graphviz 2.43 frees such a
layout twice before the next graph) never given to the batch."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

import pytest
from conftest import shipped

from supernodeiac.outputs import diagram as diagram_mod
from supernodeiac.outputs import dot_batch

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz `dot` not installed")
SUBGRAPH = re.compile(r'^  subgraph "tier(\d+)" \{$')
NODE = re.compile(r'^    "((?:[^"\\]|\\.)*)" \[')
EDGE = re.compile(r'^  "((?:[^"\\]|\\.)*)" -- "((?:[^"\\]|\\.)*)" \[(.*)\];$', re.M)
# small-ib's management view has labelled edges within a rank; dragonfly-plus its group views;
# nvl72-pod the board grids; roce-rail-2tier the rail views.
DESIGNS = ["small-ib", "dragonfly-plus", "nvl72-pod", "roce-rail-2tier", "nebula-x128-ib"]


@functools.cache
def _diagrams(name: str) -> list[diagram_mod.Diagram]:
    return diagram_mod.diagrams(shipped(name).fabric)


def _alone(d: diagram_mod.Diagram) -> bytes:
    assert DOT is not None
    return subprocess.run([DOT, "-Tsvg"], input=d.dot.encode(), capture_output=True, check=True, timeout=60).stdout


def _flat_labels(dot: str) -> bool:
    """A labelled edge whose two ends are in one tier's rank=same subgraph, read from the text."""
    tier_of: dict[str, str] = {}
    tier = None
    for line in dot.splitlines():
        if m := SUBGRAPH.match(line):
            tier = m.group(1)
        elif line == "  }":
            tier = None
        elif tier is not None and (m := NODE.match(line)):
            tier_of[m.group(1)] = tier
    return any("label=" in attrs and a in tier_of and tier_of[a] == tier_of.get(b) for a, b, attrs in EDGE.findall(dot))


@pytest.mark.parametrize("name", DESIGNS)
def test_flat_labels_are_the_labelled_edges_within_a_rank(name):
    ds = _diagrams(name)
    assert [d.flat_labels for d in ds] == [_flat_labels(d.dot) for d in ds]


def test_the_designs_have_both_kinds():
    """The tests below see batched and lone diagrams: the shipped designs have both."""
    flat = {name: [d.fabric for d in _diagrams(name) if d.flat_labels] for name in DESIGNS}
    assert flat["small-ib"] == ["mgmt"]
    assert flat["dragonfly-plus"] == [f"dfp-group{i:02d}" for i in range(1, 6)]
    assert not flat["nvl72-pod"] and not flat["roce-rail-2tier"]


@needs_dot
@pytest.mark.parametrize("name", DESIGNS)
def test_one_dot_gives_the_bytes_of_one_dot_per_diagram(name, monkeypatch):
    ds = [d for d in _diagrams(name) if d.edges <= diagram_mod.SVG_MAX_EDGES]
    batched = [d for d in ds if not d.flat_labels]
    got = dot_batch.svgs([d.dot for d in batched], DOT, 60)
    assert got is not None and len(got) == len(batched) >= 2
    for d, svg in zip(batched, got, strict=True):
        assert svg == _alone(d), d.fabric
    # The renderer: one `dot` for the batch, one more for each flat-labelled diagram, same files.
    calls: list[int] = []
    real = diagram_mod.child_process.run

    def counted(args, data, timeout_s):
        calls.append(data.count(b"\ngraph ") + data.startswith(b"graph "))
        return real(args, data, timeout_s)

    monkeypatch.setattr(dot_batch.child_process, "run", counted)
    out = diagram_mod.render_diagram(shipped(name).render_context())
    assert sorted(calls) == sorted([len(batched) + 1] + [1] * (len(ds) - len(batched)))
    for d in ds:
        assert out[f"diagrams/{d.fabric}.svg"] == (got[batched.index(d)] if d in batched else _alone(d))
    assert not [k for k in out if k.startswith("notice:")]


GRAPHVIZ_2_43 = DOT is not None and b"2.43" in subprocess.run([DOT, "-V"], capture_output=True).stderr


@pytest.mark.skipif(not GRAPHVIZ_2_43, reason="the double free of Graphviz 2.43")
def test_a_crash_after_a_flat_label_is_why_they_go_alone():
    """The reason for the rule, on this `dot`: a group view of dragonfly-plus then another graph
    in one process aborts (a double free in gvFreeLayout) or leaves no trusted batch."""
    group, other = (next(d for d in _diagrams("dragonfly-plus") if d.fabric == s) for s in ("dfp-group01", "mgmt"))
    assert dot_batch.svgs([other.dot, group.dot, other.dot], DOT, 60) is None
    assert dot_batch.svgs([other.dot, other.dot], DOT, 60) is not None


def _batch_only(edit: str) -> str:
    """A `dot` that edits its output with ``edit`` when it is given more than one graph."""
    many = f'printf "%s" "$in" | {DOT} -Tsvg | {edit}'
    one = f'printf "%s" "$in" | {DOT} -Tsvg'
    return f'in=$(cat); if [ "$(printf "%s" "$in" | grep -c "^graph ")" -gt 1 ]; then {many}; else {one}; fi\n'


def _fake_dot(tmp_path, script: str) -> str:
    path = tmp_path / f"dot{len(list(tmp_path.iterdir()))}"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


@needs_dot
def test_a_batch_that_is_not_the_bytes_of_lone_runs_is_refused(tmp_path, monkeypatch):
    small = [d for d in _diagrams("small-ib") if not d.flat_labels][:3]
    dots = [d.dot for d in small]
    assert dot_batch.svgs(dots, DOT, 60) is not None
    # A `dot` whose later documents differ elsewhere than the root graph's id (a newer leak).
    leaky = _fake_dot(tmp_path, _batch_only('sed "s/class=\\"node\\"/class=\\"page0,1_node\\"/"'))
    assert dot_batch.svgs(dots, leaky, 60) is None
    # A `dot` that writes every document as a fresh process would (no leak at all): refused too,
    # since the one known difference is not there to put back (another Graphviz: lone runs).
    fixed = _fake_dot(tmp_path, _batch_only('sed "s/page0,1_graph0/graph0/"'))
    assert dot_batch.svgs(dots, fixed, 60) is None
    # One that fails, or writes fewer documents than graphs (the first graph alone here).
    assert dot_batch.svgs(dots, _fake_dot(tmp_path, "exit 1\n"), 60) is None
    assert dot_batch.svgs(dots, _fake_dot(tmp_path, f"head -c {len(dots[0])} | {DOT} -Tsvg\n"), 60) is None
    # The renderer then lays out each diagram alone: the same files as the batch gives.
    monkeypatch.setattr(diagram_mod.shutil, "which", lambda _name: leaky)
    alone = diagram_mod.render_diagram(shipped("small-ib").render_context())
    monkeypatch.setattr(diagram_mod.shutil, "which", lambda _name: DOT)
    assert alone == diagram_mod.render_diagram(shipped("small-ib").render_context())
