"""Diagrams at every scale: each fabric's overview aggregates (under 200 nodes), has a legend and
is readable when its SVG is fitted to a 1,600 px screen (every text >= 9 px), for every shipped
blueprint and, in the slow pass, the 131k, RoCE 131k and Dragonfly+ benchmark designs; laid
out by the real ``dot``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, shipped

from supernodeiac.load.source import load_text
from supernodeiac.outputs import diagram as diagram_mod
from supernodeiac.pipeline import compile_document

DOT = shutil.which("dot")
SCREEN_PX = 1600
MIN_PX = 9
BENCH = Path(__file__).resolve().parent.parent / "bench"
VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
FONT = re.compile(r'<text[^>]*font-size="([\d.]+)"')


def _check_overviews(fabric) -> list[str]:
    """The overviews' names; asserts their size, legend and, with ``dot``, legibility."""
    names = []
    for d in diagram_mod.diagrams(fabric):
        if d.mode != "groups":
            continue
        names.append(d.fabric)
        assert d.nodes < 200, (d.fabric, d.nodes)
        assert '"legend" [shape=plaintext' in d.dot
        if DOT is None:
            continue
        start = time.monotonic()
        svg = subprocess.run([DOT, "-Tsvg"], input=d.dot.encode(), capture_output=True, check=True, timeout=60).stdout.decode()
        assert time.monotonic() - start < 10, f"{d.fabric}: dot took {time.monotonic() - start:.1f} s"
        width = float(VIEWBOX.search(svg).group(1))
        sizes = [float(x) for x in FONT.findall(svg)]
        assert sizes and len(sizes) == svg.count("<text"), d.fabric
        smallest = min(sizes) * SCREEN_PX / width
        assert smallest >= MIN_PX, (
            f"{d.fabric}: {min(sizes)} pt text in a {width:.0f} pt wide drawing is {smallest:.1f} px at {SCREEN_PX} px"
        )
    return names


@pytest.mark.parametrize("name", sorted(p.stem for p in BLUEPRINTS.glob("*.yaml")))
def test_shipped_overviews_aggregate_and_read_at_1600px(name):
    c = shipped(name)
    names = _check_overviews(c.fabric)
    assert sorted(names) == sorted(c.fabric.fabrics())


def test_overview_is_one_bundle_per_group_pair_and_counts_every_link():
    c = shipped("dgx-h100-superpod-4su")
    f = c.fabric
    for d in diagram_mod.diagrams(f):
        if d.mode != "groups":
            continue
        counts = [int(m.replace(",", "")) for m in re.findall(r": ([\d,]+) links, ", d.dot)]
        assert sum(counts) == len(list(f.links_of(d.fabric)))
        pairs = re.findall(r'^  ("[^"]+") -- ("[^"]+") \[', d.dot, re.M)
        assert len(pairs) == len(set(pairs)) == d.edges


def test_part_views_are_bounded_and_name_their_part():
    f = shipped("ib-3tier").fabric
    parts = [d for d in diagram_mod.diagrams(f) if d.mode == "part"]
    assert parts
    per_fabric: dict[str, int] = {}
    for d in parts:
        fabric, part = d.fabric.rsplit("-", 1)
        per_fabric[fabric] = per_fabric.get(fabric, 0) + 1
        assert re.fullmatch(r"(supernode|group|pod|su)\d{2,}", part), d.fabric
        assert '"legend" [shape=plaintext' in d.dot
    assert max(per_fabric.values()) <= diagram_mod.PART_DIAGRAMS_MAX


def _bench(module: str, make: str, *args) -> object:
    sys.path.insert(0, str(BENCH))
    try:
        mod = __import__(module)
    finally:
        sys.path.remove(str(BENCH))
    text = getattr(mod, make)(*args)
    c = compile_document(load_text(text, f"{module}.yaml"))
    assert c.fabric is not None
    return c.fabric


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, make, args",
    [("generate", "blueprint", (16_384,)), ("roce_gen", "roce_blueprint", ()), ("dragonfly_gen", "dragonfly_blueprint", ())],
    ids=["ib131k", "roce131k", "dragonfly"],
)
def test_benchmark_overviews_aggregate_and_read_at_1600px(module, make, args):
    _check_overviews(_bench(module, make, *args))
