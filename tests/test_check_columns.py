"""The reach check's bulk pass over the columns agrees with its per-link walk, and the walk
reports each kind of unusable medium once, at the first link that has it (table order)."""

from __future__ import annotations

import dataclasses

from conftest import compile_text
from test_fast_paths import SMALL

from supernodeiac.checks import CheckContext
from supernodeiac.checks.reach import check_reach


def test_reach_findings_on_edited_links_come_in_table_order():
    c = compile_text(SMALL)
    f = c.fabric
    ctx = CheckContext(c.blueprint, c.catalogue, f)
    assert list(check_reach(ctx)) == []
    links = list(f.links)
    ib = [i for i, link in enumerate(links) if link.fabric == "ib"]
    far, unknown, none, unfit = ib[1], ib[3], ib[5], ib[7]
    unfit_medium = next(name for name, m in c.catalogue.media.items() if "osfp" not in m.cages and "qsfp112" not in m.cages)
    links[far] = dataclasses.replace(links[far], length_m=900.0)
    links[unknown] = dataclasses.replace(links[unknown], medium="zz")
    links[none] = dataclasses.replace(links[none], medium="")
    links[unfit] = dataclasses.replace(links[unfit], medium=unfit_medium)
    f.links[:] = links
    ids = f.links.ids()
    rules = [(x.rule, x.message) for x in check_reach(ctx)]
    assert [r for r, _ in rules] == ["reach", "unknown-catalogue-item", "reach", "media-fit"]
    assert rules[0][1].startswith(f"{ids[far]}: 900.0 m ") and "rated reach" in rules[0][1]
    assert "'zz'" in rules[1][1]
    assert rules[2][1].startswith("no medium reaches") and rules[2][1].endswith(f"({ids[none]})")
    assert rules[3][1].startswith(f"{unfit_medium} does not plug into") and rules[3][1].endswith(f"({ids[unfit]})")
