"""The output folder: snc replaces only what it can prove it wrote, never leaves the folder
missing, writes inside folders it cannot replace, and cleans up after killed runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT, read_tree

from supernodeiac import writer
from supernodeiac.cli import main
from supernodeiac.util import renameat2 as rename2

SMALL = BLUEPRINTS / "small-ib.yaml"
RENDER = {"cabling/cables.csv": b"id\nA\n", "bom/bom.csv": b"x\n", "README.txt": b"r"}


def _render(out: Path, *extra: str):
    result = CliRunner().invoke(main, ["render", str(SMALL), "-o", str(out), *extra])
    assert "Traceback" not in result.output
    return result


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(done.stdout)


# -- whose folder ----------------------------------------------------------------------------------


def test_a_foreign_manifest_is_refused_and_nothing_is_touched(tmp_path):
    """The issue's reproducer: '{}' in MANIFEST.json used to be enough to delete notes.txt."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "MANIFEST.json").write_text("{}\n")
    (proj / "notes.txt").write_text("keep\n")
    result = _render(proj)
    assert result.exit_code == 1
    assert "MANIFEST.json was not written by snc" in result.output and "proj is unchanged" in result.output
    assert read_tree(proj) == {"MANIFEST.json": b"{}\n", "notes.txt": b"keep\n"}
    assert _listing(tmp_path) == ["proj"]


def test_a_symlinked_manifest_is_not_ours(tmp_path):
    proj = tmp_path / "proj"
    writer.write(RENDER, tmp_path / "real", "t")  # a genuine manifest, reached through a link
    proj.mkdir()
    (proj / "MANIFEST.json").symlink_to(tmp_path / "real" / "MANIFEST.json")
    (proj / "notes.txt").write_text("keep")
    result = _render(proj)
    assert result.exit_code == 1 and "not a file snc wrote" in result.output
    assert sorted(os.listdir(proj)) == ["MANIFEST.json", "notes.txt"] and (proj / "MANIFEST.json").is_symlink()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: (d / "notes.txt").write_text("mine"), "a file snc did not write (notes.txt)"),
        (lambda d: (d / "cabling" / "mine.csv").write_text("x"), "a file snc did not write (cabling/mine.csv)"),
        (lambda d: (d / "drafts").mkdir(), "a folder snc did not write (drafts/)"),
        (lambda d: (d / "link").symlink_to("/etc"), "a link or special file"),
        (lambda d: (d / "cabling" / "cables.csv").write_bytes(b"edited by hand\n"), "was changed since snc wrote it"),
    ],
)
def test_a_render_folder_with_anything_else_is_refused(tmp_path, change, words):
    out = tmp_path / "o"
    writer.write(RENDER, out, "t")
    change(out)
    before = read_tree(out)
    with pytest.raises(writer.WriteError, match=words.replace("(", r"\(").replace(")", r"\)")):
        writer.write({"new.csv": b"n"}, out, "t")
    assert read_tree(out) == before
    assert _listing(tmp_path) == ["o"]


def test_the_manifest_says_who_wrote_it(tmp_path):
    out = writer.write(RENDER, tmp_path / "o", "bp")
    doc = json.loads((out / "MANIFEST.json").read_bytes())
    assert doc["format"] == "snc-manifest/1" and doc["tool"] == "snc" and doc["blueprint"] == "bp"
    assert [(e["path"], e["bytes"]) for e in doc["files"]] == sorted((p, len(d)) for p, d in RENDER.items())
    # A second render into it replaces it, files the new render drops included.
    writer.write({"only.csv": b"1"}, out, "bp")
    assert sorted(read_tree(out)) == ["MANIFEST.json", "only.csv"]


def test_a_render_of_the_first_version_is_recognised(tmp_path):
    """snc 0.1 wrote {"blueprint", "files"} without a format: its folders stay replaceable."""
    out = tmp_path / "o"
    (out / "cabling").mkdir(parents=True)
    (out / "cabling" / "cables.csv").write_bytes(b"abc")
    files = [{"path": "cabling/cables.csv", "bytes": 3, "sha256": "0" * 64}]
    (out / "MANIFEST.json").write_text(json.dumps({"blueprint": "x", "files": files}))
    writer.write({"new.csv": b"n"}, out, "x")
    assert sorted(read_tree(out)) == ["MANIFEST.json", "new.csv"]


# -- what -o may name ------------------------------------------------------------------------------


def test_o_at_a_file_a_link_or_empty(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("x")
    result = _render(tmp_path / "file")
    assert result.exit_code == 1 and "exists and is not a folder" in result.output  # as the README says
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    result = _render(tmp_path / "link")
    assert result.exit_code == 1 and "is a symbolic link (to " in result.output and "the folder it points to" in result.output
    assert _listing(tmp_path / "real") == []
    result = CliRunner().invoke(main, ["render", str(SMALL), "-o", ""])
    assert result.exit_code == 2 and "empty path" in result.output
    assert not (tmp_path / "out").exists()  # not the default folder instead


def test_an_existing_empty_folder_keeps_its_permissions(tmp_path):
    out = tmp_path / "shared"
    out.mkdir()
    os.chmod(out, 0o2770)
    assert _render(out).exit_code == 0
    assert (out / "MANIFEST.json").is_file() and (os.stat(out).st_mode & 0o7777) == 0o2770
    assert _listing(tmp_path) == ["shared"]


def test_dot_is_written_inside_and_keeps_the_folder(tmp_path, monkeypatch):
    """-o . (the working folder) cannot be swapped away from under the shell: written inside."""
    here = tmp_path / "here"
    here.mkdir()
    inode = os.stat(here).st_ino
    monkeypatch.chdir(here)
    assert _render(Path(".")).exit_code == 0
    first = read_tree(here)
    assert "MANIFEST.json" in first and os.stat(here).st_ino == inode
    writer.write({"only.csv": b"1"}, Path("."), "t")  # a render that drops files, inside again
    assert sorted(read_tree(here)) == ["MANIFEST.json", "only.csv"] and os.stat(here).st_ino == inode
    assert _listing(tmp_path) == ["here"]


def test_a_mount_point_is_written_inside(tmp_path, monkeypatch):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    inode = os.stat(mnt).st_ino
    real = os.path.ismount
    monkeypatch.setattr(writer.os.path, "ismount", lambda p: os.path.samefile(p, mnt) or real(p))

    def no_rename_of_the_mount(src, dst, *a):  # what the kernel says (EBUSY) when asked
        if Path(src) == mnt or Path(dst) == mnt:
            raise OSError(16, "Device or resource busy")
        return False

    monkeypatch.setattr(writer, "exchange", lambda a, b: no_rename_of_the_mount(a, b) or rename2.exchange(a, b))
    writer.write(RENDER, mnt, "t")
    writer.write({**RENDER, "more.csv": b"m"}, mnt, "t")
    assert read_tree(mnt)["more.csv"] == b"m" and os.stat(mnt).st_ino == inode
    assert [n for n in os.listdir(mnt) if n.startswith(".")] == []


# -- killed runs -----------------------------------------------------------------------------------


def _fake_lock(folder: Path, prefix: str, pid: int, state: str = "writing", entries: list[str] | None = None) -> Path:
    staging = folder / f"{prefix}{pid}-0123abcd"
    staging.mkdir()
    (staging / "partial.csv").write_text("half")
    doc = {"format": "snc-staging/1", "tool": "snc", "staging": staging.name, "pid": pid, "start": None}
    doc |= {"host": os.uname().nodename, "state": state, "entries": entries or []}
    (folder / (staging.name + ".lock")).write_text(json.dumps(doc))
    return staging


def test_staging_of_a_killed_run_is_removed_by_the_next(tmp_path):
    out = writer.write(RENDER, tmp_path / "o", "t")
    dead = _dead_pid()
    _fake_lock(tmp_path, ".o.snc-", dead)
    (tmp_path / f".o.snc-{dead}-89abcdef.lock.tmp").write_text('{"form')  # killed while writing its lock
    (tmp_path / ".o.snc-not-ours").mkdir()  # not our name pattern with a lock: left alone
    writer.write(RENDER, out, "t")
    assert _listing(tmp_path) == [".o.snc-not-ours", "o"]


def test_a_live_run_is_not_disturbed(tmp_path):
    out = writer.write(RENDER, tmp_path / "o", "t")
    before = read_tree(out)
    staging = _fake_lock(tmp_path, ".o.snc-", os.getpid())  # this process: alive
    with pytest.raises(writer.WriteError, match="another snc"):
        writer.write({"new.csv": b"n"}, out, "t")
    assert (staging / "partial.csv").is_file() and read_tree(out) == before


def test_an_in_place_run_killed_mid_swap_is_finished_by_the_next(tmp_path):
    """A killed in-place run leaves entries of both renders and its journal; the next run
    recognises them as snc's (killed for real: os._exit in the middle of the swap)."""
    here = tmp_path / "here"
    here.mkdir()
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from supernodeiac import writer
        calls = []
        real = writer.exchange
        def exchange(a, b):
            calls.append(a)
            if len(calls) == 2:
                os._exit(9)  # as kill -9: no cleanup at all
            return real(a, b)
        writer.exchange = exchange
        os.chdir({str(here)!r})
        writer.write({{"a/x.csv": b"new-a", "b/y.csv": b"new-b", "c.csv": b"new-c"}}, Path("."), "t")
        """
    )
    os.chdir(here)
    try:
        writer.write({"a/x.csv": b"old-a", "b/y.csv": b"old-b", "d.csv": b"old-d"}, Path("."), "t")
    finally:
        os.chdir(ROOT)
    assert subprocess.run([sys.executable, "-c", script]).returncode == 9
    leftovers = [n for n in os.listdir(here) if n.startswith(".snc-")]
    assert leftovers, "the killed run left its journal"
    tree = {k: v for k, v in read_tree(here).items() if not k.startswith(".snc-")}
    assert tree["a/x.csv"] == b"new-a" and tree["b/y.csv"] == b"old-b"  # one entry swapped, one not
    writer.write({"a/x.csv": b"3", "e.csv": b"3"}, here, "t")
    assert sorted(read_tree(here)) == ["MANIFEST.json", "a/x.csv", "e.csv"]


# -- renameat2 -------------------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_exchange_through_the_raw_system_call(tmp_path, monkeypatch):
    """Where glibc has no renameat2 wrapper (before 2.28), the system call is made directly."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    class NoWrapper:
        syscall = libc.syscall

    monkeypatch.setattr(rename2.ctypes, "CDLL", lambda *a, **k: NoWrapper())
    rename2._renameat2.cache_clear()
    try:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        (tmp_path / "a" / "1").touch()
        assert rename2.exchange(tmp_path / "a", tmp_path / "b")
        assert os.listdir(tmp_path / "b") == ["1"] and os.listdir(tmp_path / "a") == []
        with pytest.raises(FileExistsError):
            rename2.rename_noreplace(tmp_path / "a", tmp_path / "b")
    finally:
        rename2._renameat2.cache_clear()


def test_without_exchange_the_fallback_still_replaces(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "exchange", lambda a, b: False)
    monkeypatch.setattr(writer, "rename_noreplace", lambda a, b: False)
    out = writer.write(RENDER, tmp_path / "o", "t")
    writer.write({"z.csv": b"z"}, out, "t")
    assert sorted(read_tree(out)) == ["MANIFEST.json", "z.csv"] and _listing(tmp_path) == ["o"]
