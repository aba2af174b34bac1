"""CXL logical devices, shared regions, the binding table, and side-by-side rack routes.

The counts are the CXL arithmetic: a Type 3 device of C GB split into L logical devices (an MLD,
L <= 16: CXL 2.0 specification, section 2.4; L = 1 is a single logical device) binds to hosts in
LDs of C / L; a host promised P takes ceil(P / (C / L)) LDs; a shared region (CXL 3.x shared
memory) of S GB takes ceil(S / (C / L)) LDs once, whatever number of hosts map it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from pathlib import Path

import pytest
from conftest import compile_text
from test_cxl import blueprint, line_col, of_rule, pool_links

from supernodeiac.findings import Severity
from supernodeiac.pipeline import Compiled, Stage, compile_file, render

DATA = Path(__file__).parent / "data"
MLD = DATA / "cxl-shared-mld.yaml"
POOL = "kvpool"
ROUTE = "  routes:\n    - {type: side-by-side, racks: [A01, A02]}\n"


@pytest.fixture(scope="module")
def mld() -> Compiled:
    c = compile_file(str(MLD))
    assert c.exit_code == 0, [f"{f.location} {f.message}" for f in c.findings]
    return c


@pytest.fixture(scope="module")
def tables(mld) -> tuple[list[dict], dict]:
    files, _ = render(mld, ["cxl"])
    assert sorted(files) == [f"cxl/{POOL}/bindings.csv", f"cxl/{POOL}/bindings.json"]
    rows = list(csv.DictReader(io.StringIO(bytes(files[f"cxl/{POOL}/bindings.csv"]).decode())))
    return rows, json.loads(bytes(files[f"cxl/{POOL}/bindings.json"]))


# -- the MLD pool: LDs against the formula --------------------------------------------------------


def test_mld_pool_ld_counts_match_the_arithmetic(mld, tables):
    f, spec = mld.fabric, mld.blueprint.cxl[0]
    model = f.models[spec.memory.model]
    devices = spec.switches * spec.memory.per_switch
    ld_gb = model.memory_gb / model.logical_devices
    assert (devices, model.logical_devices, ld_gb) == (6, 8, 256)
    host_lds = 8 * math.ceil(1100 / ld_gb)
    region_lds = [math.ceil(r.size_gb / ld_gb) for r in spec.shared]
    assert (host_lds, region_lds) == (40, [6, 2])
    assert host_lds + sum(region_lds) == devices * model.logical_devices  # exactly full
    facts = f.facts[POOL]
    assert (facts["lds"], facts["ld_gb"], facts["logical_devices"]) == (48, 256, 8)
    assert facts["shared_gb"] == sum(r.size_gb for r in spec.shared) == 2048
    (note,) = of_rule(mld, "cxl-granularity")
    assert note.severity is Severity.INFO
    assert "48 of 48 LDs of 256 GB" in note.message and "40 to 8 hosts, 8 to 2 shared regions" in note.message
    assert f"{8 * (5 * 256 - 1100)} GB bound beyond the promises" in note.message
    # the shared regions count once against the capacity: 8 x 1100 + 1536 + 512 of 6 x 2048
    (cap,) = of_rule(mld, "cxl-capacity")
    assert "promised 8800 GB + 2 shared regions 2048 GB" in cap.message and "12288 GB" in cap.message
    _rows, doc = tables
    assert (doc["lds"], doc["lds_bound"], doc["ld_gb"], doc["logical_devices_per_device"]) == (48, 48, 256, 8)


def test_binding_table_rows_and_ends(mld, tables):
    rows, doc = tables
    spec = mld.blueprint.cxl[0]
    hosts = sorted(d.name for d in mld.fabric.devices if d.group == "cpu")
    # one row per (LD, host mapping it): 40 private LDs, 6 LDs x 8 hosts, 2 LDs x 2 hosts
    assert len(rows) == 40 + 6 * 8 + 2 * 2
    lds = {(r["memory_device"], r["ld"]) for r in rows}
    assert len(lds) == 48  # every LD of the pool, once per mapping host
    private = Counter(r["host"] for r in rows if not r["shared_region"])
    assert sorted(private) == hosts and set(private.values()) == {5}
    assert all(5 * float(r["gb"]) >= spec.hosts[0].promised_gb for r in rows)
    private_lds = [(r["memory_device"], r["ld"]) for r in rows if not r["shared_region"]]
    assert len(set(private_lds)) == len(private_lds) == 40  # a private LD binds to one host only
    shared = {}
    for r in rows:
        if r["shared_region"]:
            shared.setdefault(r["shared_region"], {}).setdefault((r["memory_device"], r["ld"]), set()).add(r["host"])
    assert {k: len(v) for k, v in shared.items()} == {"kv-prefix": 6, "ckpt": 2}
    assert all(members == set(hosts) for members in shared["kv-prefix"].values())
    assert all(members == {"cpu-0001", "cpu-0002"} for members in shared["ckpt"].values())
    # each memory device's switch is the one its cable reaches
    f = mld.fabric
    cabled = {}
    for link in pool_links(mld):
        a, b = f.devices[link.a], f.devices[link.b]
        if b.role == "cxl-memory":
            cabled[b.name] = a.name
    assert all(cabled[r["memory_device"]] == r["switch"] for r in rows)
    # the JSON says the same
    assert len(doc["memory_devices"]) == 6 and all(len(d["lds"]) == 8 for d in doc["memory_devices"])
    by_host = {h["name"]: {(x["memory_device"], str(x["ld"])) for x in h["lds"]} for h in doc["hosts"]}
    for host in hosts:
        assert by_host[host] == {(r["memory_device"], r["ld"]) for r in rows if r["host"] == host and not r["shared_region"]}
    regions = {r["name"]: (r["hosts"], len(r["lds"])) for r in doc["shared_regions"]}
    assert regions == {"kv-prefix": (hosts, 6), "ckpt": (["cpu-0001", "cpu-0002"], 2)}


def test_hosts_bind_from_the_bottom_regions_from_the_top(tables):
    rows, _doc = tables
    order = [f"kvpool-mem{s:02d}-{j:02d}" for j in (1, 2, 3) for s in (1, 2)]  # slot by slot, switch by switch
    index = {(d, str(k)): n * 8 + k for n, d in enumerate(order) for k in range(8)}
    first = {}
    for r in rows:
        first.setdefault(r["shared_region"] or r["host"], []).append(index[(r["memory_device"], r["ld"])])
    assert sorted(set(first["cpu-0001"])) == [0, 1, 2, 3, 4]
    assert sorted(set(first["cpu-0008"])) == [35, 36, 37, 38, 39]
    assert sorted(set(first["kv-prefix"])) == [42, 43, 44, 45, 46, 47]
    assert sorted(set(first["ckpt"])) == [40, 41]


def test_growth_keeps_every_binding():
    text = MLD.read_text()
    seven = text.replace("count: 8", "count: 7")
    more = text.replace("per_switch: 3}", "per_switch: 4}")

    def table(t: str) -> dict[tuple, tuple]:
        c = compile_text(t)
        assert c.exit_code == 0, [f.message for f in c.findings]
        files, _ = render(c, ["cxl"])
        rows = csv.DictReader(io.StringIO(bytes(files[f"cxl/{POOL}/bindings.csv"]).decode()))
        return {(r["memory_device"], r["ld"], r["host"]): r["shared_region"] for r in rows if r["host"]}

    base, small = table(text), table(seven)
    # one host fewer: the others keep their LDs, and so do the regions (bound from the top)
    assert {k: v for k, v in base.items() if k[2] != "cpu-0008"} == small
    # more memory devices: every host keeps its LDs (regions move to the new top)
    grown = table(more)
    assert {k for k, v in base.items() if not v} <= set(grown)


# -- the granularity check ---------------------------------------------------------------------------


def test_issue_case_1100_gb_hosts_on_1_tb_slds_is_an_error_at_the_pool():
    # 8 x 1100 GB = 8800 GB fits 12 x 1024 GB (72 %), but each host needs 2 whole SLDs: 16 devices
    text = blueprint(hosts=8, switches=2, per_switch=6, promised=1100)
    c = compile_text(text, "sld.yaml")
    assert not of_rule(c, "cxl-capacity", Severity.ERROR)
    (err,) = of_rule(c, "cxl-granularity", Severity.ERROR)
    assert c.exit_code == 1
    assert "8 cpu x 1100 GB take 2 LDs each (16)" in err.message
    assert "12 LDs of 1024 GB (12 memory devices x 1, SLD): 4 LDs short" in err.message
    assert "memory.per_switch: 8 (16 devices, 16 LDs)" in err.hint and "cpu: 1024 GB" in err.hint
    line, col = line_col(text, "- name: kvpool")
    assert (err.location.file, err.location.line, err.location.col) == ("sld.yaml", line, col + 2)
    # the hint's per_switch builds and passes
    ok = compile_text(blueprint(hosts=8, switches=2, per_switch=8, promised=1100))
    assert ok.exit_code == 0, [f.message for f in ok.findings]


def test_mld_override_serves_the_same_promise_with_fewer_devices():
    # the same 1 TB device as an MLD of 2 LDs (512 GB): 8 x ceil(1100 / 512) = 24 LDs = 12 devices,
    # where single logical devices need 16
    mld = "catalogue:\n  devices:\n    cxl-mem-1t:\n      logical_devices: 2\n"
    short = compile_text(blueprint(hosts=8, switches=2, per_switch=5, promised=1100, catalogue=mld))
    assert not of_rule(short, "cxl-capacity", Severity.ERROR)  # 10 x 1024 GB hold 8800 GB
    (err,) = of_rule(short, "cxl-granularity", Severity.ERROR)
    assert "take 3 LDs each (24): 24 LDs, but the pool has 20 LDs of 512 GB" in err.message
    assert "MLD of 2" in err.message and "4 LDs short" in err.message
    assert "memory.per_switch: 6 (12 devices, 24 LDs)" in err.hint
    ok = compile_text(blueprint(hosts=8, switches=2, per_switch=6, promised=1100, catalogue=mld))
    assert ok.exit_code == 0, [f.message for f in ok.findings]


def test_more_than_16_logical_devices_is_a_catalogue_error():
    c = compile_text(blueprint(catalogue="catalogue:\n  devices:\n    cxl-mem-1t:\n      logical_devices: 17\n"))
    assert c.exit_code != 0
    assert any("logical_devices" in f.message and "16" in f.message for f in c.findings), [f.message for f in c.findings]


# -- shared regions ---------------------------------------------------------------------------------


def _with_shared(regions: str, **kw) -> str:
    return blueprint(pool_extra="\n    shared:\n" + regions, **kw)


def test_shared_region_on_a_device_without_sharing_is_an_error_at_the_region():
    text = _with_shared("      - {name: prefix, size_gb: 256, hosts: [cpu]}\n", per_switch=3)
    c = compile_text(text, "share.yaml")
    (err,) = of_rule(c, "cxl-shared", Severity.ERROR)
    assert "prefix needs memory sharing" in err.message and "cxl-mem-1t" in err.message
    assert "cxl-mem-2t-mld" in err.hint
    assert err.location.line == line_col(text, "- {name: prefix")[0]


def test_shared_region_names_resolve_to_the_pools_hosts():
    mld = "\n".join(["catalogue:", "  devices:", "    cxl-mem-1t:", "      memory_sharing: true", ""])
    text = _with_shared("      - {name: prefix, size_gb: 256, hosts: [cpu-0001, cpux]}\n", per_switch=3, catalogue=mld)
    c = compile_text(text, "names.yaml")
    (err,) = of_rule(c, "cxl-shared", Severity.ERROR)
    assert "'cpux'" in err.message and "did you mean 'cpu'" in err.hint
    assert err.path == ("cxl", 0, "shared", 0, "hosts", 1)
    lonely = compile_text(
        _with_shared("      - {name: p, size_gb: 256, hosts: [cpu-0001, cpu-0001]}\n", per_switch=3, catalogue=mld)
    )
    (warn,) = of_rule(lonely, "cxl-shared", Severity.WARNING)
    assert "mapped by 1 host only" in warn.message
    # a region counts against capacity once: 2 x 1024 + 1024 (mapped by both) fits 3 x 1024, not 2
    region = "      - {name: p, size_gb: 1024, hosts: [cpu]}\n"
    fits = compile_text(_with_shared(region, hosts=2, promised=1024, per_switch=3, catalogue=mld))
    assert fits.exit_code == 0, [f.message for f in fits.findings]
    over = compile_text(_with_shared(region, hosts=2, promised=1024, per_switch=2, catalogue=mld))
    (cap,) = of_rule(over, "cxl-capacity", Severity.ERROR)
    assert "promised 3072 GB" in cap.message and "1 shared region 1024 GB" in cap.message and "2048 GB" in cap.message


def test_shared_region_names_are_unique_in_the_pool():
    text = _with_shared("      - {name: p, size_gb: 1, hosts: [cpu]}\n      - {name: p, size_gb: 1, hosts: [cpu]}\n")
    c = compile_text(text)
    assert c.stage is Stage.UNREADABLE and any("named twice" in f.message for f in c.findings)


# -- side-by-side rack routes -------------------------------------------------------------------


def test_side_by_side_route_gives_neighbours_the_short_length(mld):
    f, site = mld.fabric, mld.blueprint.site
    unit, pitch, loop = site.unit_height_m, site.rack_pitch_m, site.in_rack_slack_m
    checked = 0
    for link in pool_links(mld):
        a, b = f.devices[link.a], f.devices[link.b]
        if a.rack == b.rack:
            continue
        ya, yb = (a.u - 1 + a.height_u / 2) * unit, (b.u - 1 + b.height_u / 2) * unit
        assert link.length_m == pytest.approx(pitch + abs(ya - yb) + loop, abs=1e-12)
        assert link.medium == "cdfp-copper"  # passive copper, 2 m: the tray route needs the retimed cable
        checked += 1
    assert checked == 16  # 8 hosts x 2 switches
    # the same design without the route climbs to the tray: up, 2 x tray, along, down, slack
    tray = compile_text(MLD.read_text().replace(ROUTE, ""))
    top = site.rack_units * unit
    for link in pool_links(tray):
        a, b = tray.fabric.devices[link.a], tray.fabric.devices[link.b]
        if a.rack != b.rack:
            ya, yb = (a.u - 1 + a.height_u / 2) * unit, (b.u - 1 + b.height_u / 2) * unit
            expected = (top - ya) + (top - yb) + 2 * site.tray_height_m + pitch + site.slack_m
            assert link.length_m == pytest.approx(expected, abs=1e-12) and link.medium == "cdfp-aec"


def test_every_cable_between_bayed_racks_takes_the_route_in_bulk_and_one_by_one():
    # the management network's cables go through the bulk (numpy) path, a pool's few links one by
    # one: both give the route's length, with the route's own loop, and cables within a rack keep theirs
    text = MLD.read_text().replace("racks: [A01, A02]}", "racks: [A02, A01], slack_m: 0.5}")
    c = compile_text(text)
    assert c.exit_code == 0, [f.message for f in c.findings]
    f, site = c.fabric, c.blueprint.site

    def height(d) -> float:
        return (d.u - 1 + d.height_u / 2) * site.unit_height_m

    across = Counter()
    for link in f.links:
        a, b = f.devices[link.a], f.devices[link.b]
        if a.rack < 0 or b.rack < 0:
            continue
        if a.rack == b.rack:
            expected = abs(height(a) - height(b)) + site.in_rack_slack_m
        else:
            expected = abs(f.racks[a.rack].x_m - f.racks[b.rack].x_m) + abs(height(a) - height(b)) + 0.5
            across[link.fabric] += 1
        assert link.length_m == pytest.approx(expected, abs=1e-12), (link.fabric, a.name, b.name)
    assert across["kvpool"] == 16 and across["mgmt"] >= 2


def test_bulk_lengths_equal_one_by_one_lengths_with_a_route(mld):
    # builders take the numpy path for 32 links or more: the same floats as cable_length, route or not
    from supernodeiac.builders.geometry import Geometry
    from supernodeiac.fabric import Fabric

    devices = mld.fabric.devices
    placed = [d.index for d in devices if d.rack >= 0]
    a = [x for x in placed for _ in placed]
    b = [y for _ in placed for y in placed]
    out = {}
    for label, site in (("route", mld.blueprint.site), ("tray", mld.blueprint.site.model_copy(update={"routes": []}))):
        f = Fabric("copy", dict(mld.fabric.models))
        g = Geometry(site, f)  # the same racks in the same order
        f.devices = devices
        bulk = g.lengths(a, b)
        assert bulk == [g.cable_length(devices[x], devices[y]) for x, y in zip(a, b)]
        out[label] = bulk
    across = [k for k, (x, y) in enumerate(zip(a, b)) if devices[x].rack != devices[y].rack]
    assert across and all(out["route"][k] < out["tray"][k] for k in across)
    assert all(out["route"][k] == out["tray"][k] for k in range(len(a)) if k not in set(across))


@pytest.mark.parametrize(
    ("routes", "rule", "needle"),
    [
        ("[A01, A03]", "site-route", "positions 1, 3"),
        ("[A01, B01]", "site-route", "in rows A, B"),
        ("[A01, A09]", "unknown-reference", "'A09'"),
    ],
)
def test_side_by_side_route_joins_neighbours_only(routes, rule, needle):
    text = blueprint().replace("    - {name: A, racks: 2}\n", "    - {name: A, racks: 3}\n")
    route = "  routes:\n    - {type: side-by-side, racks: " + routes + "}\n"
    text = text.replace("    - {name: C, racks: 2}\n", "    - {name: C, racks: 2}\n" + route)
    c = compile_text(text, "route.yaml")
    assert c.stage is Stage.UNBUILDABLE
    (err,) = of_rule(c, rule)
    assert needle in err.message and err.path[:3] == ("site", "routes", 0)
    assert err.location.line == line_col(text, "- {type: side-by-side")[0]
    twice = text.replace("racks: " + routes + "}", "racks: [A01, A02]}\n    - {type: side-by-side, racks: [A02, A03]}")
    (err,) = of_rule(compile_text(twice), "site-route")
    assert "A02 is already in site.routes[0]" in err.message and err.path == ("site", "routes", 1, "racks", 0)
    (err,) = of_rule(compile_text(text.replace("racks: " + routes + "}", "racks: [A01, A01]}")), "site-route")
    assert "A01 is listed twice in this route" in err.message and err.path == ("site", "routes", 0, "racks", 1)
