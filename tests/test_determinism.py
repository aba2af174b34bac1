"""Same blueprint -> same bytes: across renders in one process, across processes with different
hash seeds, and names/cable IDs that stay put when a blueprint grows at its end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT, cable_ends, compile_text, read_tree, rendered_here, shipped_render

from supernodeiac.cli import main

SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))


# One blueprint of each kind of fabric and output family (an InfiniBand fat tree with its OpenSM
# files, a SONiC Ethernet fabric, a Dragonfly+, CXL, NVL72 scale-up) in the default run.
SEEDED = ["small-ib", "roce-3tier-oversub", "dragonfly-plus", "cxl-pool", "nvl72-pod"]


def _render(blueprint: Path, out: Path) -> dict[str, bytes]:
    result = CliRunner().invoke(main, ["render", str(blueprint), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return read_tree(out)


def _same_trees(a: dict[str, bytes], b: dict[str, bytes]) -> None:
    assert sorted(a) == sorted(b)
    different = [path for path in a if a[path] != b[path]]
    assert not different, f"differ between renders: {different}"


@pytest.mark.parametrize(
    "path",
    [p if p.stem in SEEDED else pytest.param(p, marks=pytest.mark.slow) for p in SHIPPED],
    ids=[p.stem for p in SHIPPED],
)
def test_two_renders_are_byte_identical(path, tmp_path):
    """One blueprint of each kind by default (SEEDED), every shipped one in the slow pass. Both
    renders in this process: the shared one when this worker made it, else a first one here."""
    first = read_tree(shipped_render(path.stem)) if rendered_here(path.stem) else _render(path, tmp_path / "one")
    second = _render(path, tmp_path / "two")
    assert "MANIFEST.json" in first and len(first) > 1
    _same_trees(first, second)


# One interpreter per hash seed renders every shipped blueprint (one start-up each, not one per file).
_DRIVER = """
import sys
from pathlib import Path
from click.testing import CliRunner
from supernodeiac.cli import main
out = Path(sys.argv[1])
for bp in sys.argv[2:]:
    r = CliRunner().invoke(main, ["render", bp, "-o", str(out / Path(bp).stem)])
    assert r.exit_code == 0, r.output
"""


# The default run: one blueprint of each kind of fabric and output family (an InfiniBand fat tree
# with its OpenSM files, a SONiC Ethernet fabric, a Dragonfly+, CXL, NVL72 scale-up), about a
# third of the time of all eleven; the slow pass renders every shipped blueprint.


@pytest.mark.parametrize(
    "names",
    [SEEDED, pytest.param([p.stem for p in SHIPPED], marks=pytest.mark.slow, id="all-shipped")],
    ids=lambda names: "one-of-each" if names == SEEDED else None,
)
def test_byte_identical_across_processes_with_different_hash_seeds(tmp_path, names):
    """This process's shared renders (made under its own hash seed: a random one unless
    PYTHONHASHSEED is set) against a fresh interpreter under a fixed seed that differs from it."""
    blueprints = [str(BLUEPRINTS / f"{name}.yaml") for name in names]
    mine = os.environ.get("PYTHONHASHSEED")
    seed = "1" if mine != "1" else "4242"
    out = tmp_path / f"seed-{seed}"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    # 600 s: all eleven take 15-30 s per process on a loaded 2-core machine.
    subprocess.run([sys.executable, "-c", _DRIVER, str(out), *blueprints], check=True, cwd=ROOT, env=env, timeout=600)
    theirs = read_tree(out)
    here = {f"{name}/{path}": data for name in names for path, data in read_tree(shipped_render(name)).items()}
    assert len({p.split("/")[0] for p in theirs}) == len(names)
    _same_trees(here, theirs)


_SPECS = """
import sys
from supernodeiac.pipeline import compile_file
for path in sys.argv[1:]:
    print([repr(s) for s in compile_file(path).fabric.links.specs])
"""


def test_link_specs_are_numbered_alike_under_every_hash_seed(tmp_path):
    """The Fabric itself, not only its renders: spec ids are link-table columns that `snc diff` and
    the renderers index, so their order must not follow a set's hash order. It did in the
    builder's one-pair path, where one sweep of lengths picks two or more media: the generated
    radix-8 Dragonfly+ (leaf-spine cables of several lengths) numbered them by seed."""
    generated = tmp_path / "dfp8.yaml"
    subprocess.run(
        [sys.executable, "bench/dragonfly_gen.py", "--plus", "8", "--out", str(generated)], check=True, cwd=ROOT, timeout=120
    )
    blueprints = [str(generated), str(BLUEPRINTS / "dragonfly-plus.yaml")]
    seen = {
        subprocess.run(
            [sys.executable, "-c", _SPECS, *blueprints],
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=300,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(seen) == 1


# -- growth at the end of the blueprint ---------------------------------------------------------

GROW_BASE = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata:
  name: grow
site:
  rows:
    - {name: A, racks: 4}
    - {name: N, racks: 2}
nodes:
  - name: gpu
    model: hgx-h100
    count: 16
    placement: {row: A, per_rack: 4, first_u: 2}
  - name: ufm
    model: ufm-appliance
    count: 1
    placement: {row: N, first_rack: 2, first_u: 30}
scaleout:
  - name: ib
    kind: fat-tree
    switch: qm9700
    grow_to_sus: 2
    endpoints:
      - group: gpu
      - group: ufm
        su: 0
    placement:
      leaf: {row: N, per_rack: 16, first_u: 2}
      spine: {row: N, first_rack: 2, per_rack: 8, first_u: 2}
management:
  switch: sn2201
"""


def _grown(extra_rows: str, extra_nodes: str, extra_endpoints: str = "") -> str:
    text = GROW_BASE.replace("    - {name: N, racks: 2}\n", "    - {name: N, racks: 2}\n" + extra_rows)
    text = text.replace("scaleout:\n", extra_nodes + "scaleout:\n")
    return text.replace("        su: 0\n", "        su: 0\n" + extra_endpoints)


def _snapshot(text: str) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """Devices by name (rack, U) and cables by ID (both ends, device and port)."""
    c = compile_text(text)
    assert c.exit_code == 0, [(str(f.location), f.message) for f in c.findings if f.severity.value == "error"]
    f = c.fabric
    devices = {d.name: (f.racks[d.rack].name if d.rack >= 0 else None, d.u) for d in f.devices}
    assert len(devices) == len(f.devices)
    cables = cable_ends(f)
    assert len(cables) == len(f.links)
    return devices, cables


def _assert_grew_in_place(old: tuple[dict, dict], new: tuple[dict, dict]) -> None:
    (old_devices, old_cables), (new_devices, new_cables) = old, new
    assert len(new_devices) > len(old_devices) and len(new_cables) > len(old_cables)
    moved = {name: (pos, new_devices.get(name)) for name, pos in old_devices.items() if new_devices.get(name) != pos}
    assert not moved, moved
    recabled = {cid: (ends, new_cables.get(cid)) for cid, ends in old_cables.items() if new_cables.get(cid) != ends}
    assert not recabled, dict(list(recabled.items())[:5])


def test_a_node_group_added_at_the_end_moves_nothing():
    """Storage nodes in a new row: only management cables are added."""
    storage = "  - name: store\n    model: hgx-h100\n    count: 8\n    placement: {row: S, per_rack: 4, first_u: 2}\n"
    old = _snapshot(GROW_BASE)
    new = _snapshot(_grown("    - {name: S, racks: 2}\n", storage))
    _assert_grew_in_place(old, new)
    assert {n for n in new[0] if n.startswith("store-")} == {f"store-{i:04d}" for i in range(1, 9)}


def test_a_compute_group_added_at_the_end_of_the_fabric_moves_nothing():
    """24 more nodes: 16 fill SU 0, 8 start SU 1 (its leaves are new; the spines were planned for 2 SUs)."""
    more = "  - name: gpu2\n    model: hgx-h100\n    count: 24\n    placement: {row: B, per_rack: 4, first_u: 2}\n"
    old = _snapshot(GROW_BASE)
    new = _snapshot(_grown("    - {name: B, racks: 6}\n", more, "      - group: gpu2\n"))
    _assert_grew_in_place(old, new)
    # the new nodes are on the fabric: every gpu2 node has 8 rail cables
    rails = [ends for ends in new[1].values() if ends[0].startswith("gpu2-") or ends[2].startswith("gpu2-")]
    assert len([e for e in rails if "leaf" in e[0] + e[2]]) == 24 * 8
