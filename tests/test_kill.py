"""`snc render` killed with SIGKILL at random points, over and over, into a folder that holds a
previous render: after every kill the folder holds a complete render (the old one or the new
one, byte for byte), and the next run that completes leaves no staging debris.

No timing is asserted: the kill points are random (from the start, or just after the run's
staging lock appears, which is when it writes and swaps), and a run that finishes before its
kill simply does not count as one.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, ROOT, copy_of_shipped_render, read_tree, shipped_render

from supernodeiac.util import renameat2 as rename2

SMALL = BLUEPRINTS / "small-ib.yaml"
KILLS = 32  # the slow pass (`pytest -m slow`); the default run kills 8 times (about a quarter of the time)


def _snc(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "supernodeiac", *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _render(blueprint: Path, out: Path) -> None:
    assert _snc("render", str(blueprint), "-o", str(out)).wait() == 0


def _debris(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if ".snc-" in n)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs kill -9")
@pytest.mark.parametrize("kills", [8, pytest.param(KILLS, marks=pytest.mark.slow, id="32")], ids=str)
def test_kill_9_leaves_the_old_or_the_new_render(tmp_path, kills):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    if not rename2.exchange(tmp_path / "x", tmp_path / "y"):
        pytest.skip("no renameat2(RENAME_EXCHANGE) on this file system: the documented fallback has a window")
    rng = random.Random(20240607)
    work = tmp_path / "work"
    work.mkdir()
    other = tmp_path / "other.yaml"  # same name, another design: a render that differs in every folder
    other.write_text(SMALL.read_text().replace("count: 16", "count: 12"))
    _render(other, tmp_path / "ref-b")
    # small-ib as `snc render` writes it: the shared render (the determinism tests hold it byte
    # for byte to a render in another process), and a copy of it as the previous render
    refs = {"a": read_tree(shipped_render("small-ib")), "b": read_tree(tmp_path / "ref-b")}
    assert refs["a"] != refs["b"]
    out = copy_of_shipped_render("small-ib", work / "out")
    wanted, kills = kills, 0
    state, attempts, mid_write = "a", 0, 0
    while kills < wanted and attempts < 8 * wanted:
        attempts += 1
        proc = _snc("render", str(other if state == "a" else SMALL), "-o", str(out))
        if attempts % 3 == 0:
            time.sleep(rng.uniform(0.0, 0.6))  # anywhere: start-up, compile, render, dot, write
        else:
            while proc.poll() is None and not _debris(work):
                time.sleep(0.0002)
            time.sleep(rng.uniform(0.0, 0.004))  # into the write and the swap
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        tree = read_tree(out)
        assert tree in (refs["a"], refs["b"]), f"after kill {kills}: {sorted(tree)}"
        state = "a" if tree == refs["a"] else "b"
        if proc.returncode == -signal.SIGKILL:
            kills += 1
            mid_write += bool(_debris(work))
        if attempts % 8 == 0:  # now and then a run that completes: it clears what the kills left
            _render(SMALL, out)
            state = "a"
            assert _debris(work) == [] and read_tree(out) == refs["a"]
    assert kills >= wanted, f"{kills} kills in {attempts} runs"
    _render(other, out)
    assert os.listdir(work) == ["out"] and read_tree(out) == refs["b"], f"{mid_write} kills landed mid-write"


def test_dot_dies_with_snc(tmp_path):
    """A `dot` still laying out when snc is killed is killed too (Linux: PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("parent-death signal is Linux's")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pid_file = tmp_path / "dot.pid"
    fake_dot = bin_dir / "dot"
    fake_dot.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 300\n")
    fake_dot.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "supernodeiac", "render", str(SMALL), "-o", str(tmp_path / "out")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        assert proc.poll() is None, "snc ended before it ran dot"
        time.sleep(0.01)
    dot_pid = int(pid_file.read_text())
    proc.kill()
    proc.wait()
    while time.monotonic() < deadline:
        try:
            os.kill(dot_pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{dot_pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":  # a zombie is dead, waiting for init to reap it
                break
        time.sleep(0.01)
    else:
        os.kill(dot_pid, signal.SIGKILL)
        pytest.fail("dot outlived snc")
    assert not (tmp_path / "out").exists()
