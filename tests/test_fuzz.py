"""Property: whatever the blueprint, the outcome is a located finding (exit 1 or 2) or a valid
render (exit 0), never an internal error, an unlocated finding or a CSV cell that is a live
formula. Two sources of blueprints, a bounded number of examples each (derandomised: the same
examples every run, so CI is reproducible; the default run takes 100 of each, the slow pass
the full 400/200/200; bench/fuzz.py is the long, random run):

* mutations of the shipped blueprints, the same mutation vocabulary as bench/fuzz.py, drawn
  through hypothesis (so a failure shrinks to the fewest, simplest mutations);
* small blueprints generated from the schema's shapes (rows, node groups, a fat tree, a
  Dragonfly or a Dragonfly+, management, naming), with plausible and hostile values mixed.
"""

from __future__ import annotations

import io
import sys

import pytest
from conftest import BLUEPRINTS, ROOT
from ruamel.yaml import YAML

sys.path.insert(0, str(ROOT / "bench"))
import fuzz  # noqa: E402  (bench/fuzz.py: mutations and the outcome check)

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
SHIPPED = sorted(BLUEPRINTS.glob("*.yaml"))


def _dump(doc: dict) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue()


def _assert_sound(text: str) -> None:
    outcome = fuzz.check(text)
    assert outcome.kind in ("located", "rendered"), f"{outcome.kind}: {outcome.detail}\n{text}"


# Each property runs twice: a bounded number of examples in the default run (about 15 s on 2 cores
# for the three), the full counts (800 examples, about a minute) in the slow pass (`pytest -m slow`, CI).
DEFAULT_EXAMPLES = 100


def _both(max_examples: int, default: int = DEFAULT_EXAMPLES, **strategies):
    """The property as two tests: ``default`` examples, and ``max_examples`` marked slow."""

    def make(body):
        quick = settings(SETTINGS, max_examples=default)(given(**strategies)(body))
        full = pytest.mark.slow(settings(SETTINGS, max_examples=max_examples)(given(**strategies)(body)))
        return quick, full

    return make


def _mutated_shipped(source, rng, steps):
    doc = YAML(typ="safe", pure=True).load(source.read_text())
    for _ in range(steps):
        fuzz._mutate_once(rng, doc)
    _assert_sound(_dump(doc))


test_mutated_shipped_blueprints, test_mutated_shipped_blueprints_full = _both(
    400, default=50, source=st.sampled_from(SHIPPED), rng=st.randoms(use_true_random=False), steps=st.integers(1, 3)
)(_mutated_shipped)


# -- blueprints from the schema's shapes -------------------------------------------------------------

GROUPS = ["gpu", "cpu", "stor"]
ROWS = ["A", "B", "N"]
# Plausible values, so that examples reach the build, the checks and the renderers; the
# hostile ones come from one mutation on top (test_generated_blueprints_mutated) and from the
# mutations of the shipped blueprints above.
count = st.integers(1, 48)
length = st.floats(0.01, 10)
ratio = st.sampled_from(["1:1", "1:2", "2:1", "3:4", "1:3", 2, 1.5])
template = st.sampled_from(["{group}-{index:04d}", "n{index}", "{row}{rack:02d}", "{a}-{a_port}", "{fabric}-{index}", "x{su}"])


def _opt(required: dict, **optional) -> st.SearchStrategy:
    return st.fixed_dictionaries(required, optional=optional)


placement = _opt({"row": st.sampled_from(ROWS)}, first_rack=count, per_rack=count, first_u=count, gap_u=st.integers(0, 4))
group_placement = _opt({"row": st.sampled_from(ROWS)}, first_rack=count, per_rack=count, first_u=count)
endpoints = st.lists(_opt({"group": st.sampled_from(GROUPS)}), min_size=1, max_size=2)
media = _opt(
    {}, margin_m=length, pin=st.sampled_from(["dac", "aoc", "sr", "nope"]), allow=st.lists(st.sampled_from(["dac", "aoc"]))
)
common = {"name": st.sampled_from(["ib", "fab", "gpu"]), "endpoints": endpoints}
fat_tree = _opt(
    {**common, "kind": st.just("fat-tree"), "switch": st.sampled_from(["qm9700", "q3400", "sn5600", "sn2201", "hgx-h100"])},
    tiers=st.sampled_from([2, 3]),
    rail_optimized=st.booleans(),
    oversubscription=_opt({}, leaf=ratio, spine=ratio),
    su_nodes=count,
    grow_to_sus=count,
    placement=_opt({"leaf": placement, "spine": placement}, core=placement),
    media=media,
)
dragonfly = _opt(
    {
        **common,
        "kind": st.just("dragonfly"),
        "router": st.sampled_from(["qm9700", "sn2201", "q3400"]),
        "placement": group_placement,
    },
    terminals=count,
    routers_per_group=count,
    global_links=count,
    groups=count,
    grow_to_groups=count,
    arrangement=st.sampled_from(["absolute", "relative", "circulant"]),
)
dragonfly_plus = _opt(
    {
        **common,
        "kind": st.just("dragonfly-plus"),
        "switch": st.sampled_from(["qm9700", "sn2201"]),
        "placement": st.fixed_dictionaries({"leaf": group_placement, "spine": group_placement}),
    },
    oversubscription=ratio,
    leaves=count,
    spines=count,
    global_links=count,
    groups=count,
)
node_group = _opt(
    {
        "name": st.sampled_from(GROUPS),
        "model": st.sampled_from(["hgx-h100", "cxl-host-2s", "storage-node", "ufm-appliance", "oex-cb8", "qm9700"]),
        "count": count,
        "placement": placement,
    },
    naming=template,
)
blueprint = _opt(
    {
        "apiVersion": st.just("supernodeiac/v1"),
        "kind": st.just("Blueprint"),
        "metadata": st.fixed_dictionaries({"name": st.sampled_from(["t", "bp-1", "bp.2"])}),
        "site": _opt(
            {"rows": st.tuples(*[st.fixed_dictionaries({"name": st.just(r), "racks": count}) for r in ROWS]).map(list)},
            rack_units=st.sampled_from([42, 48, 52]),
            rack_pitch_m=length,
            row_pitch_m=length,
            slack_m=length,
            rack_name=template,
        ),
        "nodes": st.lists(node_group, min_size=1, max_size=2),
    },
    scaleout=st.lists(st.one_of(fat_tree, dragonfly, dragonfly_plus), max_size=1),
    management=_opt({}, switch=st.sampled_from(["sn2201", "qm9700"]), uplinks=count, u=count),
    naming=_opt(
        {}, cable_id=template, cable_label=template, devices=st.dictionaries(st.sampled_from(fuzz.ROLES), template, max_size=2)
    ),
    media=media,
)


def _from_the_schema(doc):
    _assert_sound(_dump(doc))


test_blueprints_from_the_schema, test_blueprints_from_the_schema_full = _both(200, doc=blueprint)(_from_the_schema)


def _generated_mutated(doc, rng):
    fuzz._mutate_once(rng, doc)
    _assert_sound(_dump(doc))


test_generated_blueprints_mutated, test_generated_blueprints_mutated_full = _both(
    200, doc=blueprint, rng=st.randoms(use_true_random=False)
)(_generated_mutated)


def test_some_generated_blueprints_get_through():
    """The generator is not all noise: a plain one builds and renders."""
    doc = {
        "apiVersion": "supernodeiac/v1",
        "kind": "Blueprint",
        "metadata": {"name": "t"},
        "site": {"rows": [{"name": "A", "racks": 4}, {"name": "N", "racks": 2}]},
        "nodes": [{"name": "gpu", "model": "hgx-h100", "count": 16, "placement": {"row": "A", "per_rack": 4, "first_u": 2}}],
        "scaleout": [
            {
                "name": "ib",
                "kind": "fat-tree",
                "switch": "qm9700",
                "endpoints": [{"group": "gpu"}],
                "placement": {
                    "leaf": {"row": "N", "per_rack": 8, "first_u": 2},
                    "spine": {"row": "N", "per_rack": 4, "first_u": 20},
                },
            }
        ],
    }
    assert fuzz.check(_dump(doc)).kind == "rendered"


# -- type-confused catalogue overrides, and the read-back oracle -----------------------------------


def _catalogue_overridden(source, rng):
    doc = YAML(typ="safe", pure=True).load(source.read_text())
    fuzz._catalogue_mutation(rng, doc)
    _assert_sound(_dump(doc))


# Fewer in the default run: most of these mutants pass the schema, so each one is a render.
test_catalogue_overrides_confused, test_catalogue_overrides_confused_full = _both(
    400, default=20, source=st.sampled_from(SHIPPED), rng=st.randoms(use_true_random=False)
)(_catalogue_overridden)


@pytest.fixture(scope="module")
def small_render() -> dict:
    from supernodeiac.pipeline import compile_file, render

    artifacts, _ = render(compile_file(str(BLUEPRINTS / "small-ib.yaml")), ["acceptance", "nccl", "sonic", "diagram", "p2p"])
    return dict(artifacts)


def test_the_oracle_passes_a_shipped_render(small_render, monkeypatch):
    with fuzz.tempfile.TemporaryDirectory() as cwd:
        shapes = {
            name.rsplit("/", 1)[-1]: {fuzz.script_shape(fuzz._text(d), cwd)}
            for name, d in small_render.items()
            if name.endswith(".sh")
        }
    assert set(shapes) == {"perftest.sh", "physical.sh", "nccl-tests.sh", "uplinks.sh", "scaleup.sh"}
    assert None not in set().union(*shapes.values())
    monkeypatch.setattr(fuzz, "_KNOWN_SHAPES", shapes)
    assert fuzz.read_back(small_render) is None


@pytest.mark.parametrize(
    "path, edit, words",
    [
        ("acceptance/ib/perftest.sh", lambda t: t.replace("fabric=ib\n", "fabric=ib;touch CANARY\n"), "not the planned tokens"),
        ("acceptance/ib/perftest.sh", lambda t: t.replace("fabric=ib\n", 'fabric="$(touch CANARY)"\n'), "not the planned tokens"),
        ("acceptance/ib/perftest.sh", lambda t: t + "if\n", "bash cannot parse it"),
        ("nccl/hgx-h100.env", lambda t: t + "LD_PRELOAD=/tmp/evil.so\n", "sets ['LD_PRELOAD'], which no template assigns"),
        ("nccl/hgx-h100.env", lambda t: t + "touch CANARY\n", "neither a comment nor KEY=value"),
        ("acceptance/ib/perftest.tsv", lambda t: t + "a\tb\n", "rows of"),
        ("sonic/mgmt-A01.json", lambda t: '{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("diagrams/ib.svg", lambda t: "<svg><g></svg>", "not well-formed XML"),
    ],
)
def test_the_oracle_finds_what_it_is_for(small_render, monkeypatch, path, edit, words):
    """Each check of the read-back oracle fails on the artefact it reads, edited as a payload that
    escaped would edit it (so the fuzzer's `rendered` means something)."""
    with fuzz.tempfile.TemporaryDirectory() as cwd:
        shapes = {
            name.rsplit("/", 1)[-1]: {fuzz.script_shape(fuzz._text(d), cwd)}
            for name, d in small_render.items()
            if name.endswith(".sh")
        }
    monkeypatch.setattr(fuzz, "_KNOWN_SHAPES", shapes)
    artifacts = dict(small_render)
    artifacts[path] = edit(fuzz._text(artifacts[path])).encode()
    problem = fuzz.read_back(artifacts)
    assert problem is not None and words in problem, problem
