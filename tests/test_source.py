"""The source map: YAML -> plain data plus file:line:col for any blueprint path."""

from __future__ import annotations

import pytest

from supernodeiac.findings import Location, format_path
from supernodeiac.load.parse import _known_fields
from supernodeiac.load.source import LoadError, load_file, load_text
from supernodeiac.model.blueprint import Blueprint

TEXT = """\
apiVersion: supernodeiac/v1
kind: Blueprint
defaults: &d {per_rack: 4, first_u: 2}
nodes:
  - name: gpu
    count: 0x10
    placement: {row: A, <<: *d}
  -   name: cpu
      flag: true
      list: [a, {deep: 1}]
1: one
"""


@pytest.fixture(scope="module")
def doc():
    return load_text(TEXT, "bp.yaml")


def test_plain_data(doc):
    gpu = doc.data["nodes"][0]
    assert gpu["count"] == 16 and type(gpu["count"]) is int  # ruamel's HexInt becomes a plain int
    assert gpu["placement"] == {"row": "A", "per_rack": 4, "first_u": 2}  # merge keys resolved
    assert doc.data["nodes"][1]["flag"] is True
    assert doc.data["1"] == "one"  # keys are strings for pydantic


@pytest.mark.parametrize(
    ("path", "at"),
    [
        ((), (1, 1)),
        (("kind",), (2, 1)),
        (("nodes",), (4, 1)),
        (("nodes", 0), (5, 5)),
        (("nodes", 0, "count"), (6, 5)),
        (("nodes", 0, "placement", "row"), (7, 17)),
        (("nodes", 1), (8, 7)),
        (("nodes", 1, "flag"), (9, 7)),
        (("nodes", 1, "list", 1, "deep"), (10, 18)),
        (("1",), (11, 1)),  # a non-string key is found by its text
        # not written in the file: the nearest written ancestor, where the key would go
        (("nodes", 0, "naming"), (5, 5)),
        (("nodes", 7, "count"), (4, 1)),
        (("site", "rows"), (1, 1)),
        # merged in with '<<': no position of its own here, so the mapping that merged it
        (("nodes", 0, "placement", "per_rack"), (7, 5)),
    ],
)
def test_locate(doc, path, at):
    assert doc.locate(path) == Location("bp.yaml", *at)


@pytest.mark.parametrize(
    ("text", "at", "words"),
    [
        ("a: 1\nb:\n\t- x\n", (3, 1), "'\\t'"),
        ("a: {b: 1\nc: 2\n", (2, 2), "expected ','"),
        ("a: 1\na: 2\n", (2, 1), 'duplicate key "a"'),
        ("a: *nope\n", (1, 4), "undefined alias"),
        ("a: !thing 1\n", (1, 1), "tag '!thing'"),
        ("a:\n  b: !!map {x: 1}\n  c: !local {x: 1}\n", (3, 3), "tag '!local'"),
    ],
)
def test_load_errors_are_located(text, at, words):
    with pytest.raises(LoadError) as info:
        load_text(text, "bad.yaml")
    finding = info.value.finding
    assert finding.location == Location("bad.yaml", *at)
    assert words in finding.message
    assert finding.severity.value == "error"


def test_load_file_errors(tmp_path):
    with pytest.raises(LoadError) as missing:
        load_file(tmp_path / "nope.yaml")
    assert missing.value.finding.rule == "io" and missing.value.finding.location.line == 0
    with pytest.raises(LoadError) as folder:
        load_file(tmp_path)
    assert "is a directory" in folder.value.finding.message and folder.value.finding.hint


def test_format_path():
    assert format_path(("scaleout", 0, "placement", "leaf")) == "scaleout[0].placement.leaf"
    assert format_path(("nodes", 3)) == "nodes[3]"
    assert format_path(()) == ""


def test_known_fields_follow_the_items_own_kind():
    data = {
        "scaleout": [
            {"kind": "fat-tree"},
            {"kind": "dragonfly"},
            {"kind": "dragonfly-plus"},
            {"kind": "no-such-kind"},
        ],
        "scaleup": [{"kind": "orthogonal"}, {"kind": "switched"}],
    }
    fat, df, dfp, unknown = (set(_known_fields(Blueprint, ("scaleout", i), data)) for i in range(4))
    assert {"switch", "tiers", "oversubscription"} <= fat and "router" not in fat
    assert {"router", "terminals", "routers_per_group"} <= df and "tiers" not in df
    assert {"switch", "spine_switch", "leaves", "spines"} <= dfp and "router" not in dfp
    assert unknown == set()  # no member is guessed for a kind nobody declares
    assert "compute_boards" in _known_fields(Blueprint, ("scaleup", 0), data)
    assert "compute_trays" in _known_fields(Blueprint, ("scaleup", 1), data)
    assert set(_known_fields(Blueprint, ("scaleout", 0, "placement"), data)) == {"leaf", "spine", "core"}
