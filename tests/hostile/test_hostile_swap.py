"""The writer re-checks at the swap: the output folder, its parent and its listing must be the
ones inspected before staging, or the swap is refused and nothing is lost. Before, a file saved
into the previous render during a render was deleted (exit 0), and a parent replaced by a link
mid-run gave a partial render (exit 0, a MANIFEST listing 22 files that were not there)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, ROOT, read_tree

from supernodeiac import writer
from supernodeiac.cli import main

OLD = {"cabling/cables.csv": b"id\nA\n", "bom/bom.csv": b"x\n", "README.txt": b"r"}


class _During:
    """A streamed artifact that does something to the disk while it is being written (the
    render's streams are produced inside the write, between inspection and swap)."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action

    def chunks(self) -> Iterator[bytes]:
        yield b"a,b\n"
        self.action()
        yield b"1,2\n"


def _new(action: Callable[[], None]) -> dict[str, bytes | writer.Chunked]:
    return {"cabling/cables.csv": _During(action), "bom/bom.csv": b"y\n", "new.txt": b"n"}


def _debris(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if ".snc-" in n)


def test_a_file_saved_into_the_previous_render_during_a_render_is_kept(tmp_path):
    out = writer.write(OLD, tmp_path / "out", "t")
    with pytest.raises(writer.WriteError, match=r"changed during the render \(notes.txt was saved into it\)"):
        writer.write(_new(lambda: (out / "notes.txt").write_text("mine")), out, "t")
    assert read_tree(out) == {**read_tree(tmp_path / "out"), "notes.txt": b"mine"}
    assert (out / "notes.txt").read_text() == "mine" and (out / "README.txt").read_bytes() == b"r"
    assert _debris(tmp_path) == []


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda out: (out / "bom" / "bom.csv").write_bytes(b"z\n"), "bom/bom.csv was changed"),  # same size
        (lambda out: (out / "bom" / "extra.csv").write_bytes(b""), "bom/extra.csv was saved into it"),
        (lambda out: (out / "README.txt").unlink(), "README.txt was removed"),
    ],
)
def test_any_change_to_the_listing_refuses_the_swap(tmp_path, edit, words):
    out = writer.write(OLD, tmp_path / "out", "t")
    with pytest.raises(writer.WriteError, match=words):
        writer.write(_new(lambda: edit(out)), out, "t")
    assert "new.txt" not in os.listdir(out) and _debris(tmp_path) == []


def test_a_file_saved_in_the_instant_before_the_exchange_goes_back_with_the_old_render(tmp_path, monkeypatch):
    out = writer.write(OLD, tmp_path / "out", "t")
    real = writer.exchange

    def late(a, b):
        (out / "late.txt").write_text("mine")  # after the re-check, before the exchange
        return real(a, b)

    monkeypatch.setattr(writer, "exchange", late)
    with pytest.raises(writer.WriteError, match="late.txt was saved into it"):
        writer.write({"z.csv": b"z"}, out, "t")
    assert (out / "late.txt").read_text() == "mine" and (out / "README.txt").read_bytes() == b"r"
    assert "z.csv" not in os.listdir(out) and _debris(tmp_path) == []


def test_a_parent_replaced_by_a_link_mid_run_is_refused(tmp_path):
    parent, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = writer.write(OLD, parent / "out", "t")
    before = read_tree(out)

    def replace_parent() -> None:
        parent.rename(tmp_path / "site.moved")
        parent.symlink_to(elsewhere)

    with pytest.raises(writer.WriteError, match="changed during the render: it is now a symbolic link"):
        writer.write(_new(replace_parent), out, "t")
    assert os.listdir(elsewhere) == []  # nothing written through the link
    assert read_tree(tmp_path / "site.moved" / "out") == before and os.listdir(tmp_path / "site.moved") == ["out"]


def test_a_folder_above_replaced_mid_run_is_refused(tmp_path):
    top = tmp_path / "a"
    out = writer.write(OLD, top / "b" / "out", "t")
    before = read_tree(out)

    def replace_top() -> None:
        top.rename(tmp_path / "a.moved")
        (top / "b").mkdir(parents=True)

    with pytest.raises(writer.WriteError, match="it is now another folder"):
        writer.write(_new(replace_top), out, "t")
    assert os.listdir(top / "b") == []  # no partial render at the path
    assert read_tree(tmp_path / "a.moved" / "b" / "out") == before and _debris(tmp_path / "a.moved" / "b") == []


def test_the_render_command_refuses_with_exit_1_naming_the_file(tmp_path, monkeypatch):
    out = tmp_path / "out"
    small = str(BLUEPRINTS / "small-ib.yaml")
    assert CliRunner().invoke(main, ["render", small, "-o", str(out)]).exit_code == 0
    real = writer._fill

    def fill(*args, **kwargs):
        (out / "notes.txt").write_text("mine")
        return real(*args, **kwargs)

    monkeypatch.setattr(writer, "_fill", fill)
    result = CliRunner().invoke(main, ["render", small, "-o", str(out), "--force"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "notes.txt was saved into it" in result.output and f"{out} is unchanged" in result.output
    assert (out / "notes.txt").read_text() == "mine" and _debris(tmp_path) == []


def test_sigterm_during_the_write_leaves_no_staging(tmp_path):
    out = writer.write(OLD, tmp_path / "out", "t")
    before = read_tree(out)
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from supernodeiac import writer
        class Term:
            def chunks(self):
                yield b"a"
                os.kill(os.getpid(), signal.SIGTERM)
                yield b"b"
        writer.write({{"cabling/cables.csv": Term(), "z.csv": b"z"}}, Path({str(out)!r}), "t")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script])
    assert proc.returncode == -signal.SIGTERM
    assert _debris(tmp_path) == [] and read_tree(out) == before


def test_the_default_output_folder_does_not_follow_a_committed_out_link(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "out").symlink_to(elsewhere)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["render", str(BLUEPRINTS / "small-ib.yaml")])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "cannot write out/: it is a symbolic link" in result.output
    assert os.listdir(elsewhere) == []


def _replace_by_link_at_the_exchange(monkeypatch, folder: Path, moved: Path, elsewhere: Path) -> None:
    """The hook between the re-check and the swap: ``folder`` moved away and a link to
    ``elsewhere`` put at its path, in the instant before the exchange."""
    real = writer.exchange

    def exchange(a, b):
        if not folder.is_symlink():
            folder.rename(moved)
            folder.symlink_to(elsewhere)
        return real(a, b)

    monkeypatch.setattr(writer, "exchange", exchange)


def test_a_parent_replaced_by_a_link_in_the_instant_before_the_exchange_is_refused(tmp_path, monkeypatch):
    """After the re-check, before the exchange: the exchange's paths lead through the link and
    miss the staging folder, so nothing is exchanged; the swap is refused as the change it is
    (an ENOENT before), the old render stays whole where it was, nothing lands through the link."""
    parent, elsewhere, moved = tmp_path / "site", tmp_path / "elsewhere", tmp_path / "site.moved"
    elsewhere.mkdir()
    out = writer.write(OLD, parent / "out", "t")
    before = read_tree(out)
    _replace_by_link_at_the_exchange(monkeypatch, parent, moved, elsewhere)
    with pytest.raises(
        writer.WriteError, match="site, the folder out is written in, changed during the swap: it is now a symbolic link"
    ):
        writer.write(_new(lambda: None), out, "t")
    assert os.listdir(elsewhere) == []
    assert read_tree(moved / "out") == before and os.listdir(moved) == ["out"]  # staging and its lock removed


def test_the_render_command_refuses_a_parent_replaced_at_the_exchange_with_exit_1(tmp_path, monkeypatch):
    parent, elsewhere, moved = tmp_path / "site", tmp_path / "elsewhere", tmp_path / "site.moved"
    elsewhere.mkdir()
    out = parent / "out"
    small = str(BLUEPRINTS / "small-ib.yaml")
    assert CliRunner().invoke(main, ["render", small, "-o", str(out), "--only", "bom"]).exit_code == 0
    before = read_tree(out)
    _replace_by_link_at_the_exchange(monkeypatch, parent, moved, elsewhere)
    result = CliRunner().invoke(main, ["render", small, "-o", str(out), "--only", "bom", "--only", "cabling", "--force"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "changed during the swap: it is now a symbolic link" in result.output
    assert os.listdir(elsewhere) == [] and read_tree(moved / "out") == before and os.listdir(moved) == ["out"]


def test_the_default_output_folder_does_not_follow_a_committed_link_below_out(tmp_path, monkeypatch):
    """out/ a real folder, out/<name> a committed link: refused the same way, nothing written."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    (work / "out" / "small-ib").symlink_to(elsewhere)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["render", str(BLUEPRINTS / "small-ib.yaml"), "--only", "bom"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "out/small-ib is a symbolic link" in result.output and "give -o the folder it points to" in result.output
    assert os.listdir(elsewhere) == [] and os.listdir(work / "out") == ["small-ib"]
