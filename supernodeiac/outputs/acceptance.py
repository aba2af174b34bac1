"""The acceptance plan, rendered (snc render: acceptance/).

* ``acceptance/<fabric>/perftest.tsv`` and ``perftest.sh``: the ib_write_bw / ib_write_lat pairs
  that cover every cabled data link of the fabric once (``supernodeiac.facts.acceptance_plan``), stage by
  stage and rail by rail, with each test's line rate and the fault threshold, and a script that
  runs them wave by wave;
* ``acceptance/nccl-tests.tsv`` and ``nccl-tests.sh``: all_reduce, all_gather and alltoall per
  scale-up domain, per rail and across each fabric, with the design's bus bandwidth and the pass
  threshold; ``acceptance/hosts/*.txt`` the host files the runs use;
* ``acceptance/checklist.md``: the stages, counts, thresholds and sign-off, for the build team.

``snc check-results acceptance/ RESULTS`` reads the tools' output back against the TSV files.
The data is in the TSV files (one line per test, streamed); the scripts are fixed templates.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from ..catalog.collectives import model_figures
from ..facts.acceptance_plan import NcclRun, PerfTest, Plan, cable_labels, kept_labels, lossless_tclass, min_fraction, plan
from ..facts.host_addresses import HostAddresses
from ..model.blueprint import built_fabrics
from ..util.shell import comment_text
from ..util.templating import render_template
from .acceptance_mgmt import uplink_artifacts
from .acceptance_physical import physical_summaries, render_physical
from .acceptance_ports import LABELS, counters_tsv, labels_of, ports_tsv, switch_ports_chunks
from .acceptance_scaleup import scaleup_artifacts
from .acceptance_xgmi import xgmi_artifacts
from .base import RENDERERS, SUBSETS, RenderContext, RowSelection, Stream
from .csv_safe import tsv_line, tsv_lines

PERFTEST_COLUMNS = [
    "test",
    "stage",
    "rail",
    "wave",
    "server",
    "server_dev",
    "server_port",
    "client",
    "client_dev",
    "client_port",
    "line_gbps",
    "min_gbps",
    "cables",
    "labels",
    "via",
    # RoCE fabrics with a host pool: each end NIC's own address (ib_write_bw -R takes the server's).
    "server_address",
    "client_address",
]
NCCL_COLUMNS = [
    "run",
    "stage",
    "group",
    "collective",
    "hosts",
    "np",
    "gpus_per_host",
    "env",
    "busbw_gbytes",
    "min_busbw_gbytes",
    "basis",
    # From the collective model (facts/collectives.py): what NCCL runs at large sizes, where the
    # busbw curve should reach 90 % of its plateau, and the vendor's test ("none": no known test).
    "algorithm",
    "knee_bytes",
    "tool",
]
STAGE_ORDER = {"endpoint": 0, "tier1-2": 1, "tier2-3": 2, "tier3-4": 3, "peer": 9}


def _vendor_tests(ctx: RenderContext, runs: list[NcclRun]) -> list[str]:
    """The vendors' own collective tests (``collective_test`` in catalog/data/collectives.yaml,
    hccl_test for Ascend) of the accelerators whose runs snc's nccl-tests.sh skips, as
    "test (library)", sorted."""
    f, figures = ctx.fabric, model_figures()
    out: set[str] = set()
    for model in {f.devices[r.hosts[0]].model for r in runs if r.hosts}:
        acc = f.models[model].accelerators
        vendor = figures.vendor_of(acc.model) if acc is not None else None
        if vendor is not None and vendor.collective_test:
            out.add(f"{vendor.collective_test} ({vendor.library})")
    return sorted(out)


def _num(x: float) -> str:
    return f"{x:.6g}"


def perftest_tsv(ctx: RenderContext, p: Plan, fabric: str, dlid: bool = False) -> tuple[list[bytes], dict]:
    """perftest.tsv in pieces (the writer streams them: 64 MB at 131k, never joined here) and
    the fabric's summary for the checklist and the script; ``dlid``: a last column with the
    server LID each test aims at (routed tests on dumped tables)."""
    tests = _sorted_tests(p, fabric)
    return _perftest_chunks(ctx, p, fabric, tests, dlid), _perftest_summary(fabric, tests)


def _perftest_rows(ctx: RenderContext, p: Plan, fabric: str, rows: RowSelection) -> tuple[list[bytes] | Stream, dict]:
    """``snc diff``'s perftest.tsv: the lines of the tests that are not the same line on the
    other side, made when compared (both sides have then left their tests' keys in
    ``rows.shared``). A test's line is the same as the other side's test of the same key
    (:func:`_test_keys`), and the file is its lines sorted by their own columns (stage, rail,
    wave, test ID: unique), so the lines left out, the same on both sides, change neither which
    lines are on one side only nor whether the two files are the same. Whole (eager) where the
    fabric has addresses per test (RoCE) or a test ID repeats; the other side then leaves no
    keys and this one is whole too, as both are where this one is made before the other leaves
    its keys."""
    tests = _sorted_tests(p, fabric)
    summary = _perftest_summary(fabric, tests)
    keys = _test_keys(ctx, fabric, tests, rows.links)
    if keys is None:
        return _perftest_chunks(ctx, p, fabric, tests), summary
    frac = min_fraction(ctx.blueprint, p.roles.get(fabric, "data"))
    rows.shared[f"perftest/{fabric}/{rows.side}"] = (frac, {k for k in keys if k is not None})

    def produce() -> list[bytes]:
        theirs = rows.shared.get(f"perftest/{fabric}/{1 - rows.side}")
        if theirs is None or theirs[0] != frac:  # (made before the other side's keys: both whole)
            rows.shared[f"perftest/{fabric}/{rows.side}"] = (None, set())
            return _perftest_chunks(ctx, p, fabric, tests)
        same = theirs[1]
        kept = [t for t, k in zip(tests, keys, strict=True) if k is None or k not in same]
        return _perftest_chunks(ctx, p, fabric, kept)

    return Stream(produce), summary


def _test_keys(ctx: RenderContext, fabric: str, tests: list[PerfTest], kept: Any) -> list[tuple | None] | None:
    """Per test, what its perftest.tsv line is made from beside the fabric's threshold, by name
    and cable ID (None for a test with a cable under test that may differ, ``kept``: its label
    may); or None where the lines cannot be compared so (addresses per test, a test ID repeats)."""
    f = ctx.fabric
    if "ethernet" in f.facts.get(fabric, {}) or len({t.id for t in tests}) != len(tests):
        return None
    ids = f.links.ids()
    names = [d.name for d in f.devices]
    printed = {m: f.layouts[m].physical_names for m in {d.model for d in f.devices}}
    port_of = [printed[d.model] for d in f.devices]
    may_differ = kept.tolist()
    return [
        None
        if any(may_differ[i] for i in t.under_test)
        else (
            t.id,
            t.stage,
            t.rail,
            t.wave,
            names[t.server],
            t.server_dev,
            port_of[t.server][t.server_port],
            names[t.client],
            t.client_dev,
            port_of[t.client][t.client_port],
            t.gbps,
            tuple([ids[i] for i in t.under_test]),
            tuple([ids[i] for i in t.via]),
        )  # fmt: skip
        for t in tests
    ]


def _sorted_tests(p: Plan, fabric: str) -> list[PerfTest]:
    """The fabric's tests in perftest.tsv's order: stage, rail, wave, test ID."""
    return sorted(
        p.perftests[fabric],
        key=lambda t: (STAGE_ORDER.get(t.stage, 5), -1 if t.rail is None else t.rail, t.wave, t.id),
    )


def _perftest_chunks(ctx: RenderContext, p: Plan, fabric: str, tests: list[PerfTest], dlid: bool = False) -> list[bytes]:
    """perftest.tsv's header and the lines of ``tests`` (in that order), in pieces; ``dlid``: with
    the column of each test's server LID."""
    f, bp = ctx.fabric, ctx.blueprint
    frac = min_fraction(bp, p.roles.get(fabric, "data"))
    ids = f.links.ids()
    id_of = ids.__getitem__
    names = [d.name for d in f.devices]
    # Encoded 8,192 rows at a time: the 55 MB plan at 131k is never held as rows, text and bytes at once.
    # Each batch is built column by column (one comprehension per column) and joined and checked
    # as one block (csv_safe.tsv_lines): the same bytes as a tsv_line per test.
    chunks = [(tsv_line([*PERFTEST_COLUMNS, *(["dlid"] if dlid else [])]) + "\n").encode()]
    label_of = labels_of(ctx)
    nums: dict[float, tuple[str, str]] = {}
    # The printed port (cage and position) of each host NIC, so the team at the rack finds it.
    printed = {m: f.layouts[m].physical_names for m in {d.model for d in f.devices}}
    port_of = [printed[d.model] for d in f.devices]
    # The NICs' host-link addresses (RoCE with a host pool; none on InfiniBand or without a pool).
    hosts = HostAddresses(f, fabric) if "ethernet" in f.facts.get(fabric, {}) else None
    addresses_of = hosts.nic_addresses(f.links.indices_of(fabric)) if hosts is not None and hosts.numbered else None
    rail_text: dict[int | None, str] = {None: ""}
    wave_text: list[str] = []

    def joined(lists: list[list[int]]) -> list[str]:
        return [id_of(x[0]) if len(x) == 1 else ";".join(map(id_of, x)) for x in lists]

    for begin in range(0, len(tests), 8192):
        batch = tests[begin : begin + 8192]
        servers = [t.server for t in batch]
        clients = [t.client for t in batch]
        server_ports = [t.server_port for t in batch]
        client_ports = [t.client_port for t in batch]
        unders = [t.under_test for t in batch]
        rates = []
        for t in batch:
            rate = nums.get(t.gbps)
            if rate is None:
                rate = nums[t.gbps] = (_num(t.gbps), _num(t.gbps * frac))
            rates.append(rate)
            if t.rail not in rail_text:
                rail_text[t.rail] = str(t.rail)
            while t.wave >= len(wave_text):
                wave_text.append(str(len(wave_text)))
        labels = label_of([i for u in unders for i in u])
        at = 0
        label_cells = []
        for u in unders:
            k = len(u)
            label_cells.append(labels[at] if k == 1 else ";".join(labels[at : at + k]))
            at += k
        if addresses_of is not None:
            server_addresses = addresses_of(servers, server_ports)
            client_addresses = addresses_of(clients, client_ports)
        else:
            server_addresses = client_addresses = [""] * len(batch)
        columns = [
            [t.id for t in batch],
            [t.stage for t in batch],
            [rail_text[t.rail] for t in batch],
            [wave_text[t.wave] for t in batch],
            [names[x] for x in servers],
            [t.server_dev for t in batch],
            [port_of[x][p] for x, p in zip(servers, server_ports, strict=True)],
            [names[x] for x in clients],
            [t.client_dev for t in batch],
            [port_of[x][p] for x, p in zip(clients, client_ports, strict=True)],
            [r[0] for r in rates],
            [r[1] for r in rates],
            joined(unders),
            label_cells,
            joined([t.via for t in batch]),
            server_addresses,
            client_addresses,
        ]
        if dlid:
            columns.append([str(t.dlid) for t in batch])
        chunks.append(tsv_lines(columns).encode())
    return chunks


def _perftest_summary(fabric: str, tests: list[PerfTest]) -> dict:
    """The fabric's summary of its tests (in perftest.tsv's order) for the checklist and the script."""
    stages: dict[str, dict] = {}
    cables: set[int] = set()  # links some test has under test
    directions = 0  # routed tests name each switch-link direction they load first: directions, not cables
    # The summary per stage: tests come sorted by stage, so each stage's tests are one run.
    run_start = 0
    for k in range(1, len(tests) + 1):
        if k < len(tests) and tests[k].stage == tests[run_start].stage:
            continue
        run = tests[run_start:k]
        stage = run[0].stage
        s = stages.setdefault(
            stage, {"stage": stage, "tests": 0, "cables": set(), "directions": 0, "waves": 0, "rails": set(), "gbps": set()}
        )
        s["tests"] += len(run)
        for t in run:
            s["cables"].update(t.under_test)
            if t.hops:
                s["directions"] += len(t.under_test)
        s["waves"] = max(s["waves"], max(t.wave for t in run) + 1)
        s["gbps"].update({t.gbps for t in run})
        s["rails"].update({t.rail for t in run if t.rail is not None})
        run_start = k
    for s in stages.values():  # the fabric's totals: each stage's own, whatever its runs
        cables |= s["cables"]
        directions += s["directions"]
    summary = {
        "fabric": fabric,
        "tests": len(tests),
        "cables": len(cables),
        "directions": directions,
        "stages": [
            {**s, "cables": len(s["cables"]), "rails": sorted(s["rails"]), "gbps": sorted(s["gbps"])}
            for s in sorted(stages.values(), key=lambda s: STAGE_ORDER.get(s["stage"], 5))
        ],
    }
    return summary


def _untestable_tsv(ctx: RenderContext, p: Plan, fabric: str) -> bytes:
    """What no test loads: a whole cable ("both") or the end whose outgoing direction no route to
    an HCA port loads, each with why."""
    ids = ctx.fabric.links.ids()
    names = ctx.fabric.devices
    why = p.why.get(fabric, {})
    gaps = [(i, -1, "both") for i in p.untestable.get(fabric, [])]
    gaps += [(i, x, f"from {names[x].name}") for i, x in p.one_way.get(fabric, [])]
    labels = cable_labels(ctx.fabric, ctx.blueprint, [i for i, _, _ in gaps])
    rows = [tsv_line((ids[i], label, what, why.get((i, x), ""))) for (i, x, what), label in zip(gaps, labels, strict=True)]
    return ("cable\tlabel\tuntested\twhy\n" + "\n".join(rows) + "\n").encode()


def nccl_tsv(ctx: RenderContext, p: Plan) -> bytes:
    frac = ctx.blueprint.acceptance.collective_min_fraction
    names = ctx.fabric.devices
    lines = [tsv_line(NCCL_COLUMNS)]
    for r in p.nccl:
        single = len(r.hosts) == 1
        where = f"host:{names[r.hosts[0]].name}" if single else f"hosts/{_hostfile_name(p, r)}.txt"
        lines.append(
            tsv_line(
                (
                    r.id,
                    r.stage,
                    r.group,
                    r.collective,
                    where,
                    str(len(r.hosts) * r.gpus_per_host),
                    str(r.gpus_per_host),
                    ";".join(f"{k}={v}" for k, v in r.env.items()),
                    _num(r.busbw_gbytes),
                    _num(r.busbw_gbytes * frac),
                    r.basis,
                    r.algorithm,
                    str(r.knee_bytes),
                    r.tool or "none",
                )
            )
        )
    return ("\n".join(lines) + "\n").encode()


def _hostfile_name(p: Plan, r: NcclRun) -> str:
    if r.stage == "domain":
        return f"domain-{r.group}"
    if r.stage == "fabric":
        return f"fabric-{r.group}"
    return r.group.rsplit("-", 1)[0]  # the leaf group of a rail run


def routed_files(ctx: RenderContext, p: Plan, fabric: str, source: str) -> dict[str, bytes]:
    """A routed-tests plan of one fabric (snc routed-tests): ``<fabric>/perftest.tsv`` with each
    test's target LID, ``perftest.sh`` that aims at it, ``ports.tsv`` and ``untestable.tsv``, laid
    out as an acceptance/ folder so ``snc check-results`` reads it as it reads the rendered one."""
    data, summary = perftest_tsv(ctx, p, fabric, dlid=True)
    _summarise(ctx, p, fabric, summary, "infiniband")
    summary["source"] = comment_text(Path(source).name)  # the dump's file name, in a comment line of the script
    out = {
        f"{fabric}/perftest.tsv": b"".join(data),
        f"{fabric}/perftest.sh": _perftest_script(ctx, fabric, summary, None, len(PERFTEST_COLUMNS) + 1),
        f"{fabric}/ports.tsv": ports_tsv(ctx, fabric),
    }
    if summary["untestable"] or summary["one_way"]:
        out[f"{fabric}/untestable.tsv"] = _untestable_tsv(ctx, p, fabric)
    return out


def _summarise(ctx: RenderContext, p: Plan, fabric: str, summary: dict, transport: str) -> None:
    """A fabric's perftest summary (perftest_tsv's) completed for the script and the checklist:
    its transport, role and threshold, its gaps, whether its tier tests are routed (and why not),
    and the counts the checklist sets the tests against: the fabric's cables and the switch links
    among them (two directions each, a test per direction where routed)."""
    summary["transport"] = transport
    summary["role"] = p.roles.get(fabric, "data")
    summary["threshold"] = min_fraction(ctx.blueprint, summary["role"])
    summary["untestable"] = len(p.untestable.get(fabric, []))
    summary["one_way"] = len(p.one_way.get(fabric, []))
    summary["routed"] = p.routed.get(fabric, False)
    summary["unrouted"] = p.unrouted.get(fabric, "")
    summary["total"], summary["switch_links"] = p.cables.get(fabric, (0, 0))
    summary["tier_tests"] = sum(s["tests"] for s in summary["stages"] if s["stage"] != "endpoint")


def _perftest_script(ctx: RenderContext, fabric: str, summary: dict, tclass: int | None, columns: int) -> bytes:
    """perftest.sh of a fabric's plan (``columns``: its TSV's, the routed plan's with its LID)."""
    bp = ctx.blueprint
    return render_template(
        "acceptance-perftest.sh.j2",
        fabric=fabric,
        blueprint=bp.metadata.name,
        s=summary,
        seconds=bp.acceptance.perftest_seconds,
        roce=summary["transport"] == "ethernet",
        tclass=tclass,
        threshold=summary["threshold"],
        columns=columns,
    ).encode()


@RENDERERS.register("acceptance")
def render_acceptance(ctx: RenderContext) -> dict[str, bytes | Stream]:
    return _acceptance(ctx)


def _acceptance(ctx: RenderContext, selection: RowSelection | None = None) -> dict[str, bytes | Stream]:
    """Every file of the plan; with ``selection`` (``snc diff``), physical.tsv and ports.tsv of
    the selected links only."""
    ctx.memo[LABELS] = kept_labels(ctx.fabric, ctx.blueprint)  # each cable labelled once for its files
    try:
        return _files(ctx, selection)
    finally:
        ctx.memo.pop(LABELS, None)  # 10^6 labels at 131k: not kept past this renderer


def _files(ctx: RenderContext, selection: RowSelection | None) -> dict[str, bytes | Stream]:
    p = plan(ctx.fabric, ctx.blueprint)
    uplinks, uplink_summary = uplink_artifacts(ctx)
    scaleup, scaleup_summary = scaleup_artifacts(ctx)
    xgmi, xgmi_summary = xgmi_artifacts(ctx)  # switchless meshes: a copy test per GPU pair
    if not p.perftests and not p.nccl and not uplinks and not scaleup:
        return {}
    bp = ctx.blueprint
    out: dict[str, bytes | Stream] = {
        **render_physical(ctx, selection),
        **uplinks,
        **scaleup,
        **xgmi,
    }  # stage 0: outputs/acceptance_physical.py
    summaries = []
    for fabric in sorted(p.perftests):
        data, summary = _perftest_rows(ctx, p, fabric, selection) if selection is not None else perftest_tsv(ctx, p, fabric)
        if not summary["tests"]:
            continue
        transport = next((getattr(s, "transport", "infiniband") for _, s, n in built_fabrics(bp) if n == fabric), "infiniband")
        # RoCE tests run in the lossless class so PFC/ECN are exercised: perftest's --tclass is the
        # IP traffic-class byte, the class's DSCP shifted over the 2 ECN bits.
        tclass = lossless_tclass(bp, fabric)
        _summarise(ctx, p, fabric, summary, transport)
        if summary["untestable"] or summary["one_way"]:
            out[f"acceptance/{fabric}/untestable.tsv"] = _untestable_tsv(ctx, p, fabric)
        summaries.append(summary)
        out[f"acceptance/{fabric}/perftest.tsv"] = data if isinstance(data, Stream) else Stream(partial(iter, data))
        out[f"acceptance/{fabric}/perftest.sh"] = _perftest_script(ctx, fabric, summary, tclass, len(PERFTEST_COLUMNS))
        if transport == "infiniband":  # the cable behind each port ibtracert prints (check-results)
            # Per link, in link order: with the selection's rows alone where the links both sides
            # have are in one order (the lines left out are then the same, in the same order).
            keep = selection.links if selection is not None and selection.ordered else None
            out[f"acceptance/{fabric}/ports.tsv"] = ports_tsv(ctx, fabric, keep)
        elif fabric in p.ecmp:  # RoCE: the switches read around each wave, the cable behind each port
            out[f"acceptance/{fabric}/counters.tsv"] = counters_tsv(ctx, p.ecmp[fabric])
            out[f"acceptance/{fabric}/switch_ports.tsv"] = Stream(partial(iter, switch_ports_chunks(ctx, fabric)))
    if p.nccl:
        out["acceptance/nccl-tests.tsv"] = nccl_tsv(ctx, p)
        out["acceptance/nccl-tests.sh"] = render_template(
            "acceptance-nccl-tests.sh.j2", blueprint=bp.metadata.name, max_bytes=bp.acceptance.nccl_max_bytes
        ).encode()
    names = ctx.fabric.devices
    for name, hs in sorted(p.hostfiles.items()):
        out[f"acceptance/hosts/{name}.txt"] = ("\n".join(names[h].name for h in hs) + "\n").encode()
    nccl_stages: dict[str, dict] = {}
    for r in p.nccl:
        s = nccl_stages.setdefault(r.stage, {"stage": r.stage, "runs": 0, "groups": set(), "busbw": {}})
        s["runs"] += 1
        s["groups"].add(r.group)
        s["busbw"].setdefault(r.collective, set()).add((r.algorithm, round(r.busbw_gbytes, 1)))
    untested = sorted({r.group for r in p.nccl if not r.tool})
    vendor_tests = _vendor_tests(ctx, [r for r in p.nccl if not r.tool])
    out["acceptance/checklist.md"] = render_template(
        "acceptance-checklist.md.j2",
        blueprint=bp.metadata.name,
        physical=physical_summaries(ctx, selection),
        fabrics=summaries,
        nccl=[
            {
                **s,
                "groups": len(s["groups"]),
                "busbw": [f"{c} {a} {bw:g}" for c, v in s["busbw"].items() for a, bw in sorted(v)],
            }
            for s in nccl_stages.values()
        ],
        untested=untested,
        vendor_tests=vendor_tests,
        not_ranks=[names[h].name for h in p.not_ranks],
        uplinks=uplink_summary,
        scaleup=scaleup_summary,
        xgmi=xgmi_summary,
        rccl=any("RCCL" in t["libraries"] for t in scaleup_summary.get("tools", [])),
        perftest_fraction=bp.acceptance.perftest_min_fraction,
        collective_fraction=bp.acceptance.collective_min_fraction,
        seconds=bp.acceptance.perftest_seconds,
        max_bytes=bp.acceptance.nccl_max_bytes,
    ).encode()
    return out


@SUBSETS.register("acceptance")
def render_acceptance_rows(ctx: RenderContext, rows: RowSelection) -> dict[str, bytes | Stream]:
    """The plan with physical.tsv's rows of the selected links only (one line per link end, in
    cable-ID order) and ports.tsv's (a line per link, in link order, where the links both sides
    have are in one order); the other files whole (test waves and routes are the fabric's)."""
    return _acceptance(ctx, rows)
