"""Names that differ only in case: node groups, scale-up domains, fabrics and CXL pools (one
namespace) and rows name files and folders (acceptance/<fabric>/, diagrams/<fabric>.dot,
lldp/<network>.jsonl, imex/<domain>/, elevation/<row>.pdf), which collide on case-insensitive
file systems. A fabric 'GPU' beside the node group 'gpu' rendered with exit 0 before; each is now
an error at the second name's line, naming both spellings."""

from __future__ import annotations

import pytest
from conftest import BLUEPRINTS, compile_text

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("  - name: ib\n", "  - name: GPU\n", "'GPU' is already the name of nodes[0] (spelt 'gpu': "),  # fabric vs group
        ("  - name: ib\n", "  - name: MGMT\n", "'MGMT' is already the name of the management network (spelt 'mgmt': "),
        ("  - name: ufm\n", "  - name: Gpu\n", "'Gpu' is already the name of nodes[0] (spelt 'gpu': "),  # group vs group
    ],
)
def test_names_of_one_namespace_differing_only_in_case_collide(old, new, words):
    text = SMALL.replace(old, new, 1).replace("group: ufm", "group: Gpu")
    c = compile_text(text, "bp.yaml")
    assert c.exit_code == 2, [f.message for f in c.findings]
    [f] = [f for f in c.findings if f.rule == "names-unique"]
    assert f.message == words + "names that differ only in case collide as file names on case-insensitive systems)"
    assert (f.location.file, f.location.line) == ("bp.yaml", _line(text, new))


def test_rows_differing_only_in_case_collide_at_the_second_row():
    text = SMALL.replace("- {name: N, racks: 2}", "- {name: a, racks: 2}").replace("row: N", "row: a")
    c = compile_text(text, "bp.yaml")
    assert c.exit_code == 2
    [f] = [f for f in c.findings if f.rule == "names-unique"]
    assert f.message.startswith("row 'a' is already the name of site.rows[0] (spelt 'A': names that differ only in case")
    assert (f.location.file, f.location.line) == ("bp.yaml", _line(text, "- {name: a, racks: 2}"))


def test_the_same_spelling_keeps_its_message():
    text = SMALL.replace("  - name: ib\n", "  - name: gpu\n", 1)
    [f] = [f for f in compile_text(text).findings if f.rule == "names-unique"]
    assert f.message == "'gpu' is already the name of nodes[0]"


def test_distinct_names_are_clean():
    assert not [f for f in compile_text(SMALL).findings if f.rule == "names-unique"]
