"""Where snc cannot model the routes (another engine than ftree, a route table past MAX_ENTRIES,
ECMP on RoCE), the acceptance plan says so per fabric: a field in the plan, the checklist and the
perftest.sh header, and an info finding at the fabric (acceptance-routes); and the counts it gives
are cables and directions, each named as what it is."""

from __future__ import annotations

import csv
from functools import cache

import pytest
from conftest import BLUEPRINTS

from supernodeiac.facts import ib_routes
from supernodeiac.facts.acceptance_plan import ECMP, plan
from supernodeiac.facts.ib_fabric import IbFabric
from supernodeiac.findings import Severity
from supernodeiac.pipeline import compile_file, compile_text, render


@cache
def _rendered(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    artifacts, _ = render(c, ["acceptance"])
    return c, {k: bytes(v) for k, v in artifacts.items()}


def _routes_findings(c):
    return [f for f in c.findings if f.rule == "acceptance-routes"]


def test_a_dragonfly_on_updn_says_its_tier_tests_follow_no_modelled_route():
    c, files = _rendered("dragonfly-plus")
    p = plan(c.fabric, c.blueprint)
    (fabric,) = p.perftests
    assert not p.routed[fabric] and "OpenSM's updn" in p.unrouted[fabric] and "not modelled" in p.unrouted[fabric]
    checklist = files["acceptance/checklist.md"].decode()
    assert f"**Tier tests follow no modelled route**: {p.unrouted[fabric]}." in checklist
    assert "a test may not cross the cables it names" in checklist
    assert "attributes a" in checklist and "failure to the cables on the recorded path" in checklist
    script = files[f"acceptance/{fabric}/perftest.sh"].decode()
    assert f"#   {p.unrouted[fabric]}." in script and "may not cross the cables it names" in script
    assert "ibtracert -C" in script  # the recorded path is what failures are attributed by
    (finding,) = _routes_findings(c)
    assert finding.severity is Severity.INFO and finding.path == ("scaleout", 0)
    assert finding.location is not None and finding.location.line > 0 and fabric in finding.message


def test_a_route_table_too_large_to_model_is_said_with_its_size(monkeypatch):
    c, _ = _rendered("small-ib")
    ib = IbFabric(c.fabric, "ib")
    entries = len(ib.switches) * len(ib.cas)
    monkeypatch.setattr(ib_routes, "MAX_ENTRIES", entries - 1)
    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    c = compile_text(text, str(BLUEPRINTS / "small-ib.yaml"))
    p = plan(c.fabric, c.blueprint)
    assert not p.routed["ib"] and p.unrouted["ib"].startswith(f"route table too large: {entries:,} entries")
    assert all(not t.hops for t in p.perftests["ib"])  # the unrouted pairs
    artifacts, _ = render(c, ["acceptance"])
    checklist = bytes(artifacts["acceptance/checklist.md"]).decode()
    assert f"{entries:,} entries" in checklist and "Tier tests follow no modelled route" in checklist
    assert "directions under test" in checklist and "cables are tested by direction" not in checklist
    (finding,) = _routes_findings(c)
    assert f"{entries:,} entries" in finding.message and finding.path == ("scaleout", 0)
    # One entry more and the model runs: no finding, routed tests.
    monkeypatch.setattr(ib_routes, "MAX_ENTRIES", entries)
    c = compile_text(text, str(BLUEPRINTS / "small-ib.yaml"))
    assert not _routes_findings(c) and plan(c.fabric, c.blueprint).routed["ib"]


def test_counts_are_cables_and_directions_each_named_so():
    """small-ib: 388 cables (132 host, 256 leaf-spine); the routed tier tests name 388 of the
    leaf-spine cables' 512 directions, and untestable.tsv lists the other 124, one row each."""
    c, files = _rendered("small-ib")
    f, p = c.fabric, plan(c.fabric, c.blueprint)
    tests = p.perftests["ib"]
    cables = len(f.links.indices_of("ib"))
    named = {i for t in tests for i in t.under_test}
    directions = sum(len(t.under_test) for t in tests if t.hops)
    total, switch = p.cables["ib"]
    assert (total, len(named)) == (cables, cables) and switch == 256 and directions == 388
    rows = list(csv.DictReader(files["acceptance/ib/untestable.tsv"].decode().splitlines(), delimiter="\t"))
    assert len(rows) == 2 * switch - directions and all(r["untested"].startswith("from ") for r in rows)
    checklist = files["acceptance/checklist.md"].decode()
    assert f"putting\n{cables} of the fabric's {cables} cabled data links under test (all of them)" in checklist
    assert f"{directions} of their {2 * switch} directions" in checklist
    assert "| tier1-2 | 256 | 256 | 388 |" in checklist and "| endpoint | 68 | 132 | - |" in checklist
    assert "520" not in checklist  # directions and cables added up as "links"
    script = files["acceptance/ib/perftest.sh"].decode()
    assert f"put {cables} of the fabric's {cables} cabled data links under test" in script
    assert f"({directions} of their {2 * switch} directions)\n" in script
    assert not _routes_findings(c) and "Tier tests follow no modelled route" not in checklist


def test_directions_no_perftest_can_load_are_said_with_what_covers_them():
    _, files = _rendered("small-ib")
    checklist = " ".join(files["acceptance/checklist.md"].decode().split())
    assert "124 switch-link directions carry no test traffic under these routes (`ib/untestable.tsv`" in checklist
    assert "one output port per destination LID" in checklist
    assert "No perftest can load those directions under production's routes" in checklist
    assert "stage 0 reads them at the physical layer (ibdiagnet reads the part, symbol errors and link downs" in checklist
    # ... and the routed window loads them for bandwidth (tests/test_routed_tests.py on ibsim).
    assert "run the subnet manager with `opensm/ib/opensm-window.conf`" in checklist
    assert "snc routed-tests BLUEPRINT window.fts -o window/" in checklist


def test_roce_says_how_a_failure_is_attributed_and_never_calls_ibtracert():
    c, files = _rendered("roce-rail-2tier")
    p = plan(c.fabric, c.blueprint)
    assert p.unrouted["roce"] == ECMP and not p.routed["roce"]
    script = files["acceptance/roce/perftest.sh"].decode()
    assert "ibtracert" not in script and "trace.txt" not in script
    assert ECMP in script and "switch port counters are read instead" in script and "portstat -a -j -r" in script
    checklist = files["acceptance/checklist.md"].decode()
    assert "- [ ] RoCE: no path is recorded" in checklist and "- [ ] InfiniBand" not in checklist
    assert "no counter moved: path not localised" in checklist and "roce/counters.tsv" in checklist
    assert not _routes_findings(c)  # the finding is InfiniBand's: RoCE never had a path to model


@pytest.mark.parametrize("name", ["dragonfly-balanced", "dragonfly-plus"])
def test_shipped_dragonflies_get_the_finding(name):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert [f.severity for f in _routes_findings(c)] == [Severity.INFO]
