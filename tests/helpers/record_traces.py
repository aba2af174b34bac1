"""Record real ``ibtracert`` output for a plan's perftests: ibsim + OpenSM on a rendered fabric,
then ``ibtracert <client LID> <server LID>`` per test, as ``perftest.sh`` runs it on the hosts.

    PYTHONPATH=$PWD python -m tests.helpers.record_traces small-ib ib tests/data/acceptance/small-ib-ib.traces.txt

writes one file: each test's trace after a ``== <test>`` line (tests/test_check_results_paths.py
splits it into ``perftest/<test>.trace.txt`` files). Needs ibsim, OpenSM and infiniband-diags.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

from supernodeiac.pipeline import compile_file, render

from . import ibsim

ROOT = Path(__file__).resolve().parents[2]


def record(blueprint: str, fabric: str) -> str:
    c = compile_file(str(ROOT / "blueprints" / f"{blueprint}.yaml"))
    files, _ = render(c, ["opensm", "acceptance"])
    guid_of = {
        row["description"]: int(row["port_guid"], 16)
        for row in csv.DictReader(files[f"opensm/{fabric}/guids.csv"].decode().splitlines())
    }
    tests = list(csv.DictReader(files[f"acceptance/{fabric}/perftest.tsv"].decode().splitlines(), delimiter="\t"))
    out = []
    with tempfile.TemporaryDirectory(prefix="snc-traces-") as tmp:
        conf = ibsim.install(files, fabric, Path(tmp) / "osm")
        with ibsim.simulate(Path(tmp) / "osm" / "ibnetdiscover.topo", Path(tmp) / "sim") as sim:
            run = sim.opensm(conf)
            if not run.subnet_up:
                raise SystemExit(run.summary())
            _tables, lids = ibsim.parse_dump_fts(sim.dump_fts())
            lid_of = {guid: lid for lid, guid in lids.items()}
            for t in tests:
                client = lid_of[guid_of[f"{t['client']} {t['client_dev']}"]]
                server = lid_of[guid_of[f"{t['server']} {t['server_dev']}"]]
                out.append(f"== {t['test']}\n" + sim.client(["ibtracert", str(client), str(server)]))
    return "".join(out)


if __name__ == "__main__":
    blueprint, fabric, target = sys.argv[1:4]
    Path(target).write_text(record(blueprint, fabric))
