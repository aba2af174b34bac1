"""The acceptance plan's physical stage (stage 0): every cabled data-link end with the part the BOM
orders for its cage and the limits from the catalogue, a script that reads the ports (ibdiagnet,
mlxlink, SONiC), and check-results giving a verdict per cable from the tools' real output formats
(samples in tests/data/physical, README there cites the formats)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import shipped, shipped_outputs

from supernodeiac.catalog.link_health import link_health
from supernodeiac.cli import main
from supernodeiac.facts.bom import bill_of_materials
from supernodeiac.facts.cage_plan import link_cages
from supernodeiac.verify.check_results import check
from supernodeiac.verify.physical_results import parse_ibdiagnet_db, parse_mlxlink, parse_sonic_eeprom, parse_sonic_table

SAMPLES = Path(__file__).parent / "data" / "physical"


def _rows(files: dict[str, bytes], fabric: str) -> list[dict[str, str]]:
    text = files[f"acceptance/{fabric}/physical.tsv"].decode()
    return list(csv.DictReader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))


def _one_switch_plan(tmp_path: Path, name: str, fabric: str, switch: str) -> tuple[Path, list[dict[str, str]]]:
    """A plan folder holding only the cables of one switch (both ends of each): a small, real plan."""
    rows = _rows(shipped_outputs(name, "acceptance"), fabric)
    cables = {r["cable"] for r in rows if r["device"] == switch}
    rows = [r for r in rows if r["cable"] in cables]
    folder = tmp_path / "acceptance" / fabric
    folder.mkdir(parents=True)
    header = list(rows[0])
    (folder / "physical.tsv").write_text("\n".join(["\t".join(header), *("\t".join(r[c] for c in header) for r in rows)]) + "\n")
    return folder.parent, rows


def _plan_dir(tmp_path: Path, name: str) -> Path:
    root = tmp_path / "acceptance"
    for path, data in shipped_outputs(name, "acceptance").items():
        if path.endswith(("physical.tsv", "physical.sh", "checklist.md")):
            target = root / Path(path).relative_to("acceptance")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return root


# -- the plan -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, fabric, switch_tool", [("small-ib", "ib", "ibdiagnet"), ("roce-rail-2tier", "roce", "sonic")])
def test_every_cabled_end_once_with_the_part_the_bom_orders_for_its_cage(name, fabric, switch_tool):
    c = shipped(name)
    f, t = c.fabric, c.fabric.links
    rows = _rows(shipped_outputs(name, "acceptance"), fabric)
    links = t.indices_of(fabric)
    ids = t.ids()
    # Both ends of every link, once each.
    assert Counter((r["cable"], r["end"]) for r in rows) == Counter((ids[i], e) for i in links for e in "ab")
    hosts = {d.name for d in f.devices if f.models[d.model].kind != "switch"}
    assert {r["tool"] for r in rows if r["device"] in hosts} == {"mlxlink"}
    assert {r["tool"] for r in rows if r["device"] not in hosts} == {switch_tool}
    # The modules to compare, cage by cage, are the BOM's transceiver lines: one part per occupied cage.
    cages = link_cages(f)
    position = {ids[i]: i for i in links}
    per_part: dict[str, set[int]] = defaultdict(set)
    for r in rows:
        i = position[r["cable"]]
        per_part[r["part"]].add(int(cages.a[i] if r["end"] == "a" else cages.b[i]))
    bom = Counter()
    for line in bill_of_materials(c.catalogue, f, c.blueprint).media_lines(fabric):
        if line.section == "transceiver":
            bom[line.part.number] += line.count
    assert {p: len(s) for p, s in per_part.items()} == dict(bom)
    # Limits from the catalogue: 100G PAM4 lanes, RS(544,514), the KP4 pre-FEC limit.
    health = link_health()
    assert {(r["lane_gbps"], r["fec"], float(r["pre_fec_ber_max"])) for r in rows} == {("100", "RS(544,514)", 2.4e-4)}
    post = health.post_fec_ber["infiniband" if switch_tool == "ibdiagnet" else "ethernet"]
    assert {float(r["post_fec_ber_max"]) for r in rows} == {post}
    assert {float(r["rx_dbm_min"]) for r in rows} == {health.rx_power["sr4"].min_dbm}


def test_switch_ports_are_named_as_the_tools_name_them():
    files = shipped_outputs("small-ib", "acceptance")
    ib = _rows(files, "ib")
    perftest = list(csv.DictReader(files["acceptance/ib/perftest.tsv"].decode().splitlines(), delimiter="\t"))
    nic_devs = {(t[end], t[end + "_dev"]) for t in perftest for end in ("server", "client")}
    c = shipped("small-ib")
    f = c.fabric
    for r in ib:
        if r["tool"] == "ibdiagnet":  # the IB port number: the data port's place in the catalogue, from 1
            d = next(d for d in f.devices if d.name == r["device"])
            layout = f.layouts[d.model]
            data = layout.ports_of("data")
            assert layout.physical_names[data[int(r["ib_port"]) - 1]] == r["printed"]
        else:
            assert r["ib_port"] == "1" and (r["device"], r["port"]) in nic_devs  # the RDMA device perftest uses
    rows = _rows(shipped_outputs("roce-rail-2tier", "acceptance"), "roce")
    f = shipped("roce-rail-2tier").fabric
    model = {d.name: d.model for d in f.devices}
    for r in rows:
        if r["tool"] == "sonic":  # the SONiC interface (config_db's PORT key) of the cage's port
            layout = f.layouts[model[r["device"]]]
            assert layout.names[layout.physical_names.index(r["printed"])] == r["port"] and r["port"].startswith("Ethernet")
    # A twin-port cage: its two ports read lanes 1-4 and 5-8 of one module.
    assert {r["module_lanes"] for r in rows if r["tool"] == "sonic"} == {"1-4", "5-8"}


def test_the_script_is_clean_and_the_checklist_runs_stage_0_first(tmp_path):
    files = shipped_outputs("small-ib", "acceptance")
    for name, fabric in (("small-ib", "ib"), ("roce-rail-2tier", "roce")):
        script = tmp_path / f"{fabric}.sh"
        script.write_bytes(shipped_outputs(name, "acceptance")[f"acceptance/{fabric}/physical.sh"])
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
        if shutil.which("shellcheck"):
            r = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
            assert r.returncode == 0, r.stdout
    ib = files["acceptance/ib/physical.sh"].decode()
    assert "ibdiagnet -o" in ib and "--get_cable_info --get_phy_info" in ib and "-m -c -e --json" in ib
    checklist = files["acceptance/checklist.md"].decode()
    assert checklist.index("## 0. Physical layer") < checklist.index("## 1. Links")
    assert "| ib (infiniband) | 388 | 776 | 132 | 644 | 0 | 776 | [ ] |" in checklist


# -- readings -------------------------------------------------------------------------------------


def _table(sample: str, rows: list[list[str]]) -> str:
    """A portstat table in the sample's layout: its header and rule, cells right-aligned under it."""
    header, rule = (SAMPLES / sample).read_text().splitlines()[:2]
    ends = [m.end() for m in re.finditer(r"-+", rule)]
    lines = [header, rule]
    for cells in rows:
        line, at = "", 0
        for cell, end in zip(cells, ends, strict=True):
            line += cell.rjust(end - at)
            at = end
        lines.append(line)
    return "\n".join(lines) + "\n"


def healthy(results: Path, fabric: str, rows: list[dict[str, str]]) -> Path:
    """Readings of every planned end as the tools print them, each reporting the planned part."""
    base = results / "physical" / fabric
    mlx = json.loads((SAMPLES / "mlxlink-ndr.json").read_text())
    (base / "mlxlink").mkdir(parents=True)
    switches: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        if r["tool"] == "mlxlink":
            mlx["result"]["output"]["Module Info"]["Vendor Part Number"] = r["part"]
            (base / "mlxlink" / f"{r['device']}.{r['port']}.json").write_text(json.dumps(mlx))
        else:
            switches[r["device"]].append(r)
    if fabric == "ib":
        sample = (SAMPLES / "ibdiagnet2.db_csv").read_text().splitlines()
        head = {s: sample[sample.index(f"START_{s}") + 1] for s in ("NODES", "PM_INFO", "CABLE_INFO")}
        nodes, pm, cables = [], [], []
        for k, (name, ends) in enumerate(sorted(switches.items())):
            guid = f"0x{0xFC6A1C0300A10000 + k:016x}"
            nodes.append(f'"MF0;{name}:MQM9700/U1",65,2,1,1,{guid},{guid},{guid},54002,8,0,0x2c9,1')
            for r in ends:
                pm.append(f"{guid},{guid},{r['ib_port']}" + ",0" * 17)
                cables.append(
                    f"{guid},{guid},{r['ib_port']},Cable,Mellanox,0x2c9,{r['part']},MT0001,A6" + ",0" * 9 + ",45C" + ",N/A" * 24
                )
        db = ["# This database file was automatically generated by IBDIAG", ""]
        for section, body in (("NODES", nodes), ("PM_INFO", pm), ("CABLE_INFO", cables)):
            db += [f"START_{section}", head[section], *body, f"END_{section}", ""]
        (base / "ibdiagnet").mkdir()
        (base / "ibdiagnet" / "ibdiagnet2.db_csv").write_text("\n".join(db))
    else:
        for name, ends in switches.items():
            (base / "sonic" / name).mkdir(parents=True)
            blocks = []
            for r in ends:
                rx = "".join(f"                RX{k}Power: -0.{k}000dBm\n" for k in range(1, 9))
                blocks.append(
                    f"{r['port']}: SFP EEPROM detected\n        Vendor Name: NVIDIA\n        Vendor PN: {r['part']}\n"
                    f"        ChannelMonitorValues:\n{rx}        ChannelThresholdValues:\n"
                    "                RxPowerLowAlarm   : -10.4096dBm\n        ModuleMonitorValues:\n"
                    "                Temperature: 44.3125C\n"
                )
            (base / "sonic" / name / "eeprom.txt").write_text("\n".join(blocks))
            fec = [[r["port"], "U", "130,402", "0", "130,402", "1.48e-09", "0.00e+00"] for r in ends]
            (base / "sonic" / name / "fec-stats.txt").write_text(_table("sonic-fec-stats.txt", fec))
            err = [[r["port"], "U", "0", "0", "0", "0", "0", "0"] for r in ends]
            (base / "sonic" / name / "errors.txt").write_text(_table("sonic-errors.txt", err))
    return results


@pytest.fixture(scope="module")
def ib_plan(tmp_path_factory):
    root = _plan_dir(tmp_path_factory.mktemp("plan"), "small-ib")
    return root, _rows(shipped_outputs("small-ib", "acceptance"), "ib")


def test_the_samples_read_as_their_tools_print_them():
    r = parse_mlxlink((SAMPLES / "mlxlink-ndr.json").read_text(), "m.json")
    assert (r.part, r.pre_fec_ber, r.symbol_errors, r.link_down, r.temperature_c) == ("MMA4Z00-NS400", 2e-10, 0, 0, 45.0)
    assert r.post_fec_ber is not None and r.post_fec_ber < 1e-250 and r.rx_dbm[2] == -0.602 and r.rx_low_alarm == -10.41
    db = parse_ibdiagnet_db((SAMPLES / "ibdiagnet2.db_csv").read_text(), "db")
    guid = db.switch_ports()[("ib-leaf-su001-01", 1)]
    assert db.pm[(guid, 1)][:2] == (0, 0) and db.cables[(guid, 1)][1:3] == ("MMA4Z00-NS", 46.0)
    eeprom = parse_sonic_eeprom((SAMPLES / "sonic-eeprom.txt").read_text(), "e")
    assert eeprom["Ethernet0"].part == "MMA4Z00-NS" and len(eeprom["Ethernet0"].rx_dbm) == 8 and not eeprom["Ethernet8"].present
    fec = parse_sonic_table((SAMPLES / "sonic-fec-stats.txt").read_text(), "f", ("FEC_PRE_BER",))
    assert fec["Ethernet4"][0]["FEC_PRE_BER"] == "1.98e-09" and fec["Ethernet8"][0]["FEC_POST_BER"] == "N/A"


def test_healthy_readings_pass_every_cable(tmp_path, ib_plan):
    plan, rows = ib_plan
    results = healthy(tmp_path / "results", "ib", rows)
    report = check(plan, results)
    physical = [o for o in report.outcomes if o.kind == "physical"]
    assert len(physical) == 388 and {o.status for o in physical} == {"pass"}


def test_faults_are_named_per_cable_by_label_and_printed_port(tmp_path, ib_plan):
    plan, rows = ib_plan
    results = healthy(tmp_path / "results", "ib", rows)
    base = results / "physical" / "ib"
    nics = [r for r in rows if r["tool"] == "mlxlink"]
    # Host end 0: a module of the wrong part; host end 1: raw BER above the KP4 limit; host end 2:
    # lane 3 at -12 dBm (below the SR4 minimum and the module's own alarm); a switch port with
    # symbol errors in ibdiagnet's PM counters.
    planted = {}
    for k, (key, value) in enumerate(
        [
            ("Vendor Part Number", "MMA4Z00-NS"),
            ("Raw Physical BER", "5E-4"),
            ("Rx Power Current [dBm]", "-0.4,-0.4,-12.0,-0.4 [-10.41..5]"),
        ]
    ):
        r = nics[k]
        path = base / "mlxlink" / f"{r['device']}.{r['port']}.json"
        data = json.loads(path.read_text())
        section = "Module Info" if key != "Raw Physical BER" else "Physical Counters and BER Info"
        data["result"]["output"][section][key] = value
        path.write_text(json.dumps(data))
        planted[r["cable"]] = (["wrong-part", "ber", "low-rx-power"][k], r)
    sw = next(r for r in rows if r["tool"] == "ibdiagnet" and r["cable"] not in planted)
    db = base / "ibdiagnet" / "ibdiagnet2.db_csv"
    lines = db.read_text().splitlines()
    start = lines.index("START_NODES")
    guid = next(line.split(",")[6] for line in lines[start:] if f";{sw['device']}:" in line)
    at = next(k for k, line in enumerate(lines) if line.startswith(f"{guid},{guid},{sw['ib_port']},0,"))
    cells = lines[at].split(",")
    cells[5] = "12"  # SymbolErrorCounter
    lines[at] = ",".join(cells)
    db.write_text("\n".join(lines))
    planted[sw["cable"]] = ("symbol-errors", sw)
    report = check(plan, results)
    failed = {o.id: o for o in report.failed if o.kind == "physical"}
    assert set(failed) == set(planted)
    for cable, (verdict, r) in planted.items():
        o = failed[cable]
        assert o.verdict == verdict and o.what == r["label"] and f"{r['device']} {r['printed']}" in o.detail
    assert nics[0]["part"] != "MMA4Z00-NS"
    assert f"'MMA4Z00-NS' where the plan orders '{nics[0]['part']}'" in failed[nics[0]["cable"]].detail
    assert "lane 3 -12 dBm" in failed[nics[2]["cable"]].detail and "12 symbol errors" in failed[sw["cable"]].detail
    # The CLI: text names the cable, JSON and Markdown carry the verdicts.
    runner = CliRunner()
    text = runner.invoke(main, ["check-results", str(plan), str(results)])
    assert text.exit_code == 1 and f"FAIL physical {sw['cable']} [symbol-errors]" in text.output and sw["label"] in text.output
    data = json.loads(runner.invoke(main, ["check-results", "--format", "json", str(plan), str(results)]).output)
    verdicts = {p["cable"]: p["verdict"] for p in data["physical"]}
    assert len(verdicts) == 388 and {verdicts[c] for c in planted} == {"wrong-part", "ber", "low-rx-power", "symbol-errors"}
    md = runner.invoke(main, ["check-results", "--format", "markdown", str(plan), str(results)]).output
    assert "## Physical layer" in md and "388 cables: 1 ber, 1 low-rx-power, 384 pass, 1 symbol-errors, 1 wrong-part" in md


def test_sonic_readings_give_verdicts_per_cable(tmp_path):
    plan, rows = _one_switch_plan(tmp_path, "roce-rail-2tier", "roce", "roce-leaf-su001-01")
    results = healthy(tmp_path / "results", "roce", rows)
    report = check(plan, results)
    assert {o.status for o in report.outcomes if o.kind == "physical"} == {"pass"}
    ends = [r for r in rows if r["tool"] == "sonic"]
    bad, lane = ends[0], ends[1]
    folder = results / "physical" / "roce" / "sonic" / bad["device"]
    fec = [
        [r["port"], "U", "9,999", "3", "9,999", "3.10e-04", "2.00e-12"]
        if r is bad
        else [r["port"], "U", "130,402", "0", "130,402", "1.48e-09", "0.00e+00"]
        for r in ends
        if r["device"] == bad["device"]
    ]
    (folder / "fec-stats.txt").write_text(_table("sonic-fec-stats.txt", fec))
    # The second port of a twin-port module: lanes 5-8 are its own, a weak lane 6 is its cable's.
    folder = results / "physical" / "roce" / "sonic" / lane["device"]
    text = (folder / "eeprom.txt").read_text()
    block = text.index(f"{lane['port']}: SFP EEPROM")
    k = 6 if lane["module_lanes"] == "5-8" else 2
    text = text[:block] + text[block:].replace(f"RX{k}Power: -0.{k}000dBm", f"RX{k}Power: -11.5dBm", 1)
    (folder / "eeprom.txt").write_text(text)
    failed = {o.id: o for o in check(plan, results).failed if o.kind == "physical"}
    assert failed[bad["cable"]].verdict == "ber,post-fec-ber,symbol-errors"
    assert failed[lane["cable"]].verdict == "low-rx-power" and f"lane {k - int(lane['module_lanes'][0]) + 1} -11.5 dBm" in (
        failed[lane["cable"]].detail
    )
    assert set(failed) == {bad["cable"], lane["cable"]}


@pytest.mark.parametrize("case", ["cut-json", "db-row", "eeprom-power", "plan-limit"])
def test_bad_input_is_a_located_error(tmp_path, ib_plan, case):
    plan, rows = ib_plan
    results = healthy(tmp_path / "results", "ib", rows)
    base = results / "physical" / "ib"
    nic = next(r for r in rows if r["tool"] == "mlxlink")
    if case == "cut-json":
        path = base / "mlxlink" / f"{nic['device']}.{nic['port']}.json"
        path.write_text(json.dumps(json.loads(path.read_text()), indent=2)[:400])
        (o,) = [o for o in check(plan, results).outcomes if o.id == nic["cable"] and o.kind == "physical"]
        assert o.status == "unreadable" and f"{path}:" in o.detail and "not mlxlink --json output" in o.detail
    elif case == "db-row":
        db = base / "ibdiagnet" / "ibdiagnet2.db_csv"
        lines = db.read_text().splitlines()
        at = lines.index("START_PM_INFO") + 3
        lines[at] = lines[at].rsplit(",", 3)[0]
        db.write_text("\n".join(lines))
        bad = [o for o in check(plan, results).outcomes if o.kind == "physical" and o.status == "unreadable"]
        assert len(bad) == 388  # every cable has a switch end, read from the database
        assert all(f"{db}:{at + 1}: section PM_INFO: 17 cells where its header has 20" in o.detail for o in bad)
    elif case == "eeprom-power":
        roce, rrows = _one_switch_plan(tmp_path / "r", "roce-rail-2tier", "roce", "roce-leaf-su001-01")
        rres = healthy(tmp_path / "rr", "roce", rrows)
        sw = next(r for r in rrows if r["tool"] == "sonic")
        path = rres / "physical" / "roce" / "sonic" / sw["device"] / "eeprom.txt"
        lines = path.read_text().splitlines()
        k = next(i for i, line in enumerate(lines) if "RX3Power" in line)
        lines[k] = "                RX3Power: weak"
        path.write_text("\n".join(lines))
        (o,) = [o for o in check(roce, rres).outcomes if o.id == sw["cable"] and o.kind == "physical"]
        assert o.status == "unreadable" and f"{path}:{k + 1}: RX3Power 'weak' is not a power in dBm" in o.detail
    else:
        tsv = plan.parent / "copy" / "ib" / "physical.tsv"
        tsv.parent.mkdir(parents=True)
        lines = (plan / "ib" / "physical.tsv").read_text().splitlines()
        cells = lines[5].split("\t")
        cells[lines[0].split("\t").index("pre_fec_ber_max")] = "lots"
        lines[5] = "\t".join(cells)
        tsv.write_text("\n".join(lines) + "\n")
        r = CliRunner().invoke(main, ["check-results", str(tsv.parent.parent), str(results)])
        assert r.exit_code == 2 and f"{tsv}:6: pre_fec_ber_max 'lots' is not a number" in r.output
        assert "Traceback" not in r.output


def test_the_script_reads_each_port_once_and_its_output_checks(tmp_path, ib_plan):
    """physical.sh against a fake SSH whose mlxlink and ibdiagnet print the samples: each NIC read
    once with its own device, ibdiagnet run once and its database copied back, check-results reads it."""
    plan, rows = ib_plan
    folder = tmp_path / "acceptance" / "ib"
    folder.mkdir(parents=True)
    keep = [r for r in rows if r["device"] in ("gpu-0001", "gpu-0002", "ib-leaf-su001-01")]
    cables = {r["cable"] for r in keep}
    keep = [r for r in rows if r["cable"] in cables]
    header = (plan / "ib" / "physical.tsv").read_text().splitlines()[0]
    (folder / "physical.tsv").write_text("\n".join([header, *("\t".join(r[c] for c in header.split("\t")) for r in keep)]) + "\n")
    shutil.copy(plan / "ib" / "physical.sh", folder / "physical.sh")
    samples = healthy(tmp_path / "samples", "ib", keep) / "physical" / "ib"
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    calls.mkdir()
    (bin_dir / "fake-ssh").write_text('#!/bin/bash\nexport FAKE_HOST=$1; shift\ncd "$CALLS" && exec bash -c "$*"\n')
    (bin_dir / "mlxlink").write_text(
        '#!/bin/bash\necho "$FAKE_HOST mlxlink $*" >>"$CALLS/log"\ncat "$SAMPLES/mlxlink/$FAKE_HOST.$2.json"\n'
    )
    (bin_dir / "ibdiagnet").write_text(
        '#!/bin/bash\necho "$FAKE_HOST ibdiagnet $*" >>"$CALLS/log"\n'
        'mkdir -p "$2" && cp "$SAMPLES/ibdiagnet/ibdiagnet2.db_csv" "$2/"\n'
    )
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "SSH": str(bin_dir / "fake-ssh"),
        "CALLS": str(calls),
        "SAMPLES": str(samples),
        "IBDIAG_DIR": str(tmp_path / "ibdiag-on-host"),
    }
    r = subprocess.run(["bash", str(folder / "physical.sh"), str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # no line skipped (switch ports such as IB1/1/1 included)
    log = sorted((calls / "log").read_text().splitlines())
    nics = sorted(f"{x['device']} mlxlink -d {x['port']} -p 1 -m -c -e --json" for x in keep if x["tool"] == "mlxlink")
    assert [line for line in log if " mlxlink " in line] == nics
    (ibdiag,) = [line for line in log if " ibdiagnet " in line]
    assert ibdiag == f"gpu-0001 ibdiagnet -o {tmp_path / 'ibdiag-on-host'} --get_cable_info --get_phy_info --pm_pause_time 60"
    report = check(tmp_path / "acceptance", tmp_path / "results")
    assert {o.status for o in report.outcomes} == {"pass"} and len(report.outcomes) == len(cables)


@pytest.mark.parametrize("value", ["x;touch CANARY", "$(touch CANARY)", "-oProxyCommand=touch CANARY", "mlx5 0"])
def test_the_script_refuses_a_plan_line_that_is_not_names(tmp_path, ib_plan, value):
    """A plan edited by hand with shell text in a device or port field: reported and skipped, never run."""
    plan, rows = ib_plan
    folder = tmp_path / "acceptance" / "ib"
    folder.mkdir(parents=True)
    lines = (plan / "ib" / "physical.tsv").read_text().splitlines()
    cells = lines[1].split("\t")
    cells[5] = value  # the port mlxlink would get
    (folder / "physical.tsv").write_text("\n".join([lines[0], "\t".join(cells)]) + "\n")
    shutil.copy(plan / "ib" / "physical.sh", folder / "physical.sh")
    bin_dir, host = tmp_path / "bin", tmp_path / "host"
    bin_dir.mkdir()
    host.mkdir()
    (bin_dir / "fake-ssh").write_text('#!/bin/bash\nshift\ncd "$HOST_DIR" && exec bash -c "$*"\n')
    (bin_dir / "fake-ssh").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SSH": str(bin_dir / "fake-ssh"), "HOST_DIR": str(host), "IBDIAG_HOST": "gpu-0001"}
    env["IBDIAG_DIR"] = str(tmp_path / "ibdiag")
    r = subprocess.run(["bash", str(folder / "physical.sh"), str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "physical.tsv:2: a device or port that is not a plain name; line skipped" in r.stderr
    assert not list((tmp_path / "results" / "physical" / "ib" / "mlxlink").iterdir())
    assert not list(tmp_path.rglob("CANARY"))
