"""xGMI copies read back (``snc check-results``): ``xgmi/<check>.txt`` as ``xgmi.sh`` records
TransferBench's p2p preset (``NUM_CPU_DEVICES=0 P2P_MODE=1 TransferBench p2p``), against
``xgmi.tsv``.

The format is the preset's own (ROCm/TransferBench client/include/Presets/PeerToPeer.hpp): a
``Unidirectional copy peak bandwidth GB/s [...]`` title, a header ``SRC+EXE\\DST`` (or
``SRC\\EXE+DST`` with remote reads) followed by one ``GPU nn`` per destination, then one row per
source GPU, ``GPU nn ->`` and a GB/s figure (``%10.2f``) or ``N/A`` per destination; the GPU-only
averages line ends the table. The diagonal (a GPU's copy to its own memory) is not an xGMI link
and is not graded. Every other cell is one pair and one direction: it passes at the plan's
``min_pair_gbytes`` or above. A file that is not such a table (no title, a header without GPU
columns, a row of another length, a cell that is not a number or N/A, a GPU listed twice or
missing) is unreadable with its line number. Pure: text in, verdicts out.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

TITLE = "Unidirectional copy peak bandwidth GB/s"
_HEADER = re.compile(r"^\s*(SRC\+EXE\\DST|SRC\\EXE\+DST)\s+(.*)$")
_COLUMN = re.compile(r"(CPU|GPU) (\d+)")
_ROW = re.compile(r"^\s*(CPU|GPU) (\d+)\s+->\s+(.*)$")
_CELL = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")


class XgmiError(ValueError):
    """The file is not TransferBench p2p output of this host: the message names the line."""


@dataclass(frozen=True, slots=True)
class PairVerdict:
    src: int
    dst: int
    status: str  # pass | fail | unreadable
    measured: float | None  # GB/s, None where the cell is N/A
    detail: str


def read_matrix(text: str, name: str) -> dict[int, dict[int, float | None]]:
    """Source GPU -> destination GPU -> GB/s (None: N/A) from the unidirectional table."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(TITLE)), None)
    if start is None:
        raise XgmiError(f"{name}: no '{TITLE}' table (not the output of TransferBench p2p?)")
    header_at = next((i for i in range(start + 1, len(lines)) if lines[i].strip()), None)
    header = _HEADER.match(lines[header_at]) if header_at is not None else None
    if header is None or header_at is None:
        raise XgmiError(f"{name}:{(header_at or start) + 1}: no SRC+EXE\\DST header under the table's title")
    cols = _COLUMN.findall(header.group(2))
    if not cols or any(kind != "GPU" for kind, _ in cols):
        raise XgmiError(
            f"{name}:{header_at + 1}: the header names {len(cols)} devices, "
            "not GPUs only (run with NUM_CPU_DEVICES=0, as xgmi.sh does)"
        )
    gpus = [int(n) for _, n in cols]
    if len(set(gpus)) != len(gpus):
        raise XgmiError(f"{name}:{header_at + 1}: a GPU column appears twice")
    out: dict[int, dict[int, float | None]] = {}
    for i in range(header_at + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        m = _ROW.match(line)
        if m is None:
            break  # the averages line (or the bidirectional table) ends the matrix
        if m.group(1) != "GPU":
            raise XgmiError(f"{name}:{i + 1}: a CPU row in a GPU-only table")
        src = int(m.group(2))
        if src in out:
            raise XgmiError(f"{name}:{i + 1}: GPU {src} listed twice")
        cells = m.group(3).split()
        if len(cells) != len(gpus):
            raise XgmiError(f"{name}:{i + 1}: GPU {src} has {len(cells)} cells, the header {len(gpus)} GPUs")
        row: dict[int, float | None] = {}
        for dst, cell in zip(gpus, cells, strict=True):
            if cell == "N/A":
                row[dst] = None
            elif _CELL.match(cell):
                row[dst] = float(cell)
            else:
                raise XgmiError(f"{name}:{i + 1}: GPU {src} -> GPU {dst}: {cell[:20]!r} is not a number or N/A")
        out[src] = row
    if sorted(out) != sorted(gpus):
        missing = sorted(set(gpus) - set(out))
        raise XgmiError(f"{name}: rows for GPU {', '.join(map(str, missing))} missing (a cut file?)")
    return out


def grade(row: dict[str, str], text: str, name: str, ceiling: float) -> list[PairVerdict]:
    """A verdict per GPU pair and direction; XgmiError when the file cannot be read."""
    matrix = read_matrix(text, name)
    want = int(row["accelerators"])
    if len(matrix) != want:
        raise XgmiError(f"{name}: {len(matrix)} GPUs in the table, the host has {want}")
    expected, floor = float(row["pair_gbytes"]), float(row["min_pair_gbytes"])
    out: list[PairVerdict] = []
    for src in sorted(matrix):
        for dst, v in sorted(matrix[src].items()):
            if dst == src:
                continue
            if v is None:
                out.append(PairVerdict(src, dst, "fail", None, "N/A: TransferBench ran no copy (peer access refused?)"))
            elif not math.isfinite(v) or v > expected * ceiling:
                why = f"an impossible figure: {v:g} GB/s is above the links' {expected:g} GB/s"
                out.append(PairVerdict(src, dst, "unreadable", v, why))
            else:
                status = "pass" if v >= floor else "fail"
                out.append(PairVerdict(src, dst, status, v, f"{v:g} GB/s is {v / expected:.0%} of {expected:g} GB/s"))
    return out
