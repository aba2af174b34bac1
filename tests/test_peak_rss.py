"""The memory tests' own instrument: a child's peak is its own, not the size of the test process
that started it (Linux keeps the pre-exec high-water mark, so a child forked from a grown pytest
worker reads as large as the worker)."""

from __future__ import annotations

import sys

from helpers.peak_rss import run_measured


def test_a_child_of_a_large_process_reads_its_own_peak():
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # touch every page: resident, not reserved
    small = run_measured([sys.executable, "-c", "pass"])
    grown = run_measured([sys.executable, "-c", "b = bytearray(200 * 1024 * 1024); b[::4096] = b'\\x01' * len(b[::4096])"])
    assert small.exit_code == 0 and small.peak_kb < 100 * 1024, small
    assert grown.exit_code == 0 and 200 * 1024 < grown.peak_kb < 300 * 1024, grown
    del ballast
