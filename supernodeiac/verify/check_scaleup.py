"""Scale-up links read back (``snc check-results``): ``scaleup/<check>.before.txt`` and
``.after.txt`` as ``scaleup.sh`` records them, against ``scaleup.tsv``.

For nvidia-smi each file has a ``== status`` section (``nvidia-smi nvlink -s``: per GPU a
``GPU n: <name> (UUID: ...)`` line, then ``Link k: 26.562 GB/s`` or ``Link k: <inactive>``) and
a ``== errors`` section (``nvidia-smi nvlink -e``: ``Link k: Replay Errors: 0`` and the like). A
host passes when every one of its accelerators lists its links, each at the plan's per-link
minimum or above, and no error counter grew from before to after.

For acl-topo (Ascend NPUs) the file has a ``== topo`` section, the output of scaleup.sh's pyACL
program: how CANN's runtime joins every ordered NPU pair (aclrtGetDevicesTopo). A host passes
when it lists its NPUs and every pair is on HCCS; no rate or counter is read. Pure: text in,
verdicts out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GPU = re.compile(r"^GPU (\d+):")
_LINK = re.compile(r"^Link (\d+): (.*)$")
_SPEED = re.compile(r"^([0-9]+(?:\.[0-9]+)?) GB/s$")
_ERROR = re.compile(r"^Link (\d+): ([A-Za-z ]+ Errors): (\d+)$")


@dataclass
class ScaleupVerdict:
    status: str  # pass | fail | unreadable
    measured: float | None  # the slowest link read, GB/s
    detail: str


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("== "):
            current = out.setdefault(line[3:].strip(), [])
        elif current is not None and line.strip():
            current.append(line.strip())
    return out


def nvlink_status(lines: list[str]) -> dict[int, dict[int, float | None]]:
    """GPU -> link -> GB/s (None: inactive or unreadable)."""
    gpus: dict[int, dict[int, float | None]] = {}
    gpu: int | None = None
    for line in lines:
        m = _GPU.match(line)
        if m:
            gpu = int(m.group(1))
            gpus[gpu] = {}
            continue
        m = _LINK.match(line)
        if m and gpu is not None:
            speed = _SPEED.match(m.group(2).strip())
            gpus[gpu][int(m.group(1))] = float(speed.group(1)) if speed else None
    return gpus


def nvlink_errors(lines: list[str]) -> dict[tuple[int, int, str], int]:
    """(GPU, link, counter) -> count."""
    out: dict[tuple[int, int, str], int] = {}
    gpu: int | None = None
    for line in lines:
        m = _GPU.match(line)
        if m:
            gpu = int(m.group(1))
            continue
        e = _ERROR.match(line)
        if e and gpu is not None:
            out[(gpu, int(e.group(1)), e.group(2))] = int(e.group(3))
    return out


def grade(row: dict[str, str], after: str, before: str | None) -> ScaleupVerdict:
    """The host's record graded by its tool's reader (nvidia-smi's unless the row names acl-topo)."""
    if row.get("tool") == "acl-topo":
        return grade_acl_topo(row, after)
    part = _sections(after)
    if "status" not in part:
        return ScaleupVerdict("unreadable", None, "no '== status' section (not scaleup.sh output?)")
    gpus = nvlink_status(part["status"])
    want_gpus, want_links = int(row["accelerators"]), int(row["links"])
    floor = float(row["min_link_gbytes"])
    if not gpus:
        return ScaleupVerdict("unreadable", None, "no 'GPU n:' line in the nvidia-smi nvlink -s output")
    faults: list[str] = []
    if len(gpus) != want_gpus:
        faults.append(f"{len(gpus)} GPUs listed, the host has {want_gpus}")
    speeds: list[float] = []
    for gpu, links in sorted(gpus.items()):
        down = [k for k, v in sorted(links.items()) if v is None]
        slow = [f"{k} ({v:g} GB/s)" for k, v in sorted(links.items()) if v is not None and v < floor]
        speeds += [v for v in links.values() if v is not None]
        if len(links) != want_links:
            faults.append(f"GPU {gpu}: {len(links)} links listed, {want_links} expected")
        if down:
            faults.append(f"GPU {gpu}: link {', '.join(map(str, down))} inactive")
        if slow:
            faults.append(f"GPU {gpu}: link {', '.join(slow)} below {floor:g} GB/s")
    if before is not None and "errors" in part:
        was = nvlink_errors(_sections(before).get("errors", []))
        for (gpu, link, counter), n in sorted(nvlink_errors(part["errors"]).items()):
            grew = n - was.get((gpu, link, counter), 0)
            if grew > 0:
                faults.append(f"GPU {gpu} link {link}: {counter} +{grew}")
    measured = min(speeds) if speeds else 0.0
    if faults:
        more = f" (and {len(faults) - 6} more)" if len(faults) > 6 else ""
        return ScaleupVerdict("fail", measured, "; ".join(faults[:6]) + more)
    checked = "" if before is not None else " (no 'before' record: error counters not compared)"
    return ScaleupVerdict("pass", measured, f"{len(gpus)} GPUs x {want_links} links at {measured:g} GB/s or more{checked}")


# aclrtGetDevicesTopo's bits (CANN API reference; catalog/data/collectives.yaml cites it): a pair
# joined by HCCS, directly or through an HCCS switch, is on the scale-up links; any other is not.
ACL_TOPO_BITS = {0x01: "HCCS", 0x02: "PIX", 0x04: "PIB", 0x08: "PHB", 0x10: "SYS", 0x20: "SIO", 0x40: "HCCS_SW"}
ACL_ON_HCCS = 0x01 | 0x40
_ACL_COUNT = re.compile(r"^count (\d+) (-?\d+)$")
_ACL_PAIR = re.compile(r"^(\d+) (\d+) (-?\d+) (\d+)$")
GRADED = ("nvidia-smi", "acl-topo")  # the tools whose output snc check-results reads


def _acl_names(value: int) -> str:
    names = [name for bit, name in ACL_TOPO_BITS.items() if value & bit]
    return "+".join(names) if names else f"0x{value:x}"


def grade_acl_topo(row: dict[str, str], after: str) -> ScaleupVerdict:
    """``== topo``: scaleup.sh's pyACL program output, ``count N RET`` then ``I J RET VALUE`` per
    ordered NPU pair. A host passes when it lists its NPUs and every pair both ways is on HCCS."""
    part = _sections(after)
    if "topo" not in part:
        return ScaleupVerdict("unreadable", None, "no '== topo' section (not scaleup.sh output?)")
    lines = part["topo"]
    count = next((m for m in map(_ACL_COUNT.match, lines) if m), None)
    if count is None:
        error = next((x for x in reversed(lines) if "Error" in x), lines[-1] if lines else "no output")
        return ScaleupVerdict(
            "unreadable", None, f"no 'count' line: pyACL did not run ({error[:160]}); source CANN's set_env.sh on the host"
        )
    n, ret = int(count.group(1)), int(count.group(2))
    want = int(row["accelerators"])
    if ret != 0:
        return ScaleupVerdict("fail", None, f"acl.rt.get_device_count returned {ret}")
    pairs: dict[tuple[int, int], tuple[int, int]] = {}
    for m in map(_ACL_PAIR.match, lines):
        if m:
            pairs[(int(m.group(1)), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)))
    faults: list[str] = []
    if n != want:
        faults.append(f"{n} NPUs listed, the host has {want}")
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            got = pairs.get((i, j))
            if got is None:
                faults.append(f"NPU {i} -> {j}: not reported")
            elif got[0] != 0:
                faults.append(f"NPU {i} -> {j}: get_devices_topo returned {got[0]}")
            elif not got[1] & ACL_ON_HCCS:
                faults.append(f"NPU {i} -> {j}: {_acl_names(got[1])}, not HCCS")
    if faults:
        more = f" (and {len(faults) - 6} more)" if len(faults) > 6 else ""
        return ScaleupVerdict("fail", None, "; ".join(faults[:6]) + more)
    return ScaleupVerdict(
        "pass", None, f"{n} NPUs, all {n * (n - 1)} ordered pairs on HCCS (topology only: the HCCL test measures the rate)"
    )
