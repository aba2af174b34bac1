"""Streamed artifacts: written chunk by chunk with the manifest's size and hash right, joined into
bytes for library callers, and a stream that fails mid-way leaves the output folder as it was."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, read_tree

from supernodeiac import writer
from supernodeiac.cli import main
from supernodeiac.outputs import RENDERERS, Stream
from supernodeiac.pipeline import compile_file, render

SMALL = str(BLUEPRINTS / "small-ib.yaml")


def test_a_stream_is_written_chunk_by_chunk_with_its_hash(tmp_path):
    chunks = ["a" * 1000, b"b" * 10, "\u00e9"]
    data = "".join(c if isinstance(c, str) else c.decode() for c in chunks).encode()
    out = writer.write({"big/x.txt": Stream(lambda: iter(chunks)), "small.txt": b"s"}, tmp_path / "o", "t")
    assert (out / "big" / "x.txt").read_bytes() == data
    manifest = json.loads((out / "MANIFEST.json").read_text())
    entry = next(e for e in manifest["files"] if e["path"] == "big/x.txt")
    assert entry == {"path": "big/x.txt", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert bytes(Stream(lambda: iter(chunks))) == data


def test_library_callers_get_bytes_and_the_cli_streams():
    artifacts, _ = render(compile_file(SMALL))
    assert all(isinstance(v, bytes) for v in artifacts.values())
    streamed, _ = render(compile_file(SMALL), stream=True)
    assert any(isinstance(v, Stream) for v in streamed.values())
    assert {k: bytes(v) for k, v in streamed.items()} == artifacts


def test_a_stream_that_fails_while_writing_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["render", SMALL, "-o", str(out)]).exit_code == 0
    before = read_tree(out)

    def broken():
        yield "partial"
        raise RuntimeError("stream broke")

    monkeypatch.setitem(RENDERERS._entries, "zz-broken", lambda ctx: {"zz/x.txt": Stream(broken)})
    result = CliRunner().invoke(main, ["render", SMALL, "-o", str(out)])
    assert result.exit_code == 3 and "stream broke" in result.output and "unchanged" in result.output
    assert read_tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_streams_of_many_chunks_and_empty_files_have_their_hash(tmp_path):
    chunks = [bytes([i % 251]) * 333 for i in range(50)]  # 16,650 bytes: 17 pieces
    data = b"".join(chunks)
    files = {f"s/{k}.bin": Stream(lambda: iter(chunks)) for k in range(3)} | {"a.txt": b"a", "z/e.txt": b""}
    out = writer.write(files, tmp_path / "o", "t")
    manifest = {e["path"]: e for e in json.loads((out / "MANIFEST.json").read_text())["files"]}
    assert sorted(manifest) == sorted(files)
    for k in range(3):
        assert (out / "s" / f"{k}.bin").read_bytes() == data
        assert manifest[f"s/{k}.bin"] == {"path": f"s/{k}.bin", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert manifest["z/e.txt"]["bytes"] == 0 and (out / "z" / "e.txt").read_bytes() == b""


def test_a_stream_longer_than_the_writers_block_is_written_and_hashed_whole(tmp_path, monkeypatch):
    """The writer gathers a stream's chunks into blocks (writer._BLOCK) before it writes and hashes
    them: chunks that end exactly on a block, straddle one, or are empty all land in the file, in
    order, and the manifest's size and SHA-256 are those of the whole."""
    monkeypatch.setattr(writer, "_BLOCK", 1000)
    chunks = [bytes([i % 251]) * (i * 37 % 700) for i in range(60)] + [b"", b"y" * 1000, b"z"]
    data = b"".join(chunks)
    assert len(data) > 10 * 1000
    out = writer.write({"s.bin": Stream(lambda: iter(chunks))}, tmp_path / "o", "t")
    (entry,) = json.loads((out / "MANIFEST.json").read_text())["files"]
    assert (out / "s.bin").read_bytes() == data
    assert entry == {"path": "s.bin", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_a_stream_that_fails_midway_leaves_no_staging(tmp_path):
    out = writer.write({"old.txt": b"old"}, tmp_path / "o", "t")

    def broken():
        for _ in range(10):
            yield b"x" * 60
        raise RuntimeError("stream broke")

    with pytest.raises(RuntimeError, match="stream broke"):
        writer.write({"new.txt": Stream(broken)}, out, "t")
    assert read_tree(out) == {"old.txt": b"old", "MANIFEST.json": (out / "MANIFEST.json").read_bytes()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_a_disk_error_midway_reaches_the_caller_and_leaves_nothing(tmp_path, monkeypatch):
    real = writer._write_one

    def failing(folder_fd, rel, data):
        if rel == "b.txt":
            raise OSError(28, "No space left on device")
        return real(folder_fd, rel, data)

    monkeypatch.setattr(writer, "_write_one", failing)
    with pytest.raises(OSError, match="No space left"):
        writer.write({"a.txt": b"a", "b.txt": b"b", "c.txt": Stream(lambda: iter([b"c"]))}, tmp_path / "o", "t")
    assert list(tmp_path.iterdir()) == []


def test_a_consumed_render_frees_each_file_once_written(tmp_path):
    # consume=True (the CLI's): a file's value leaves the dict before the next file is made, so a
    # stream's closure (and what it captured) is garbage once its file is on disk, not at the end.
    import gc
    import weakref

    class Held:
        """What a stream's closure captured (a renderer's facts)."""

    held = Held()
    alive = weakref.ref(held)
    seen: list[bool] = []

    def later() -> list[bytes]:
        gc.collect()
        seen.append(alive() is not None)
        return [b"z"]

    files = {"a.txt": Stream(lambda h=held: [repr(type(h)).encode()]), "b.txt": b"b", "z.txt": Stream(later)}
    del held
    out = writer.write(files, tmp_path / "o", "t", consume=True)
    assert seen == [False]  # a.txt's stream, the only holder, was dropped once it was written
    assert files == {}
    assert (out / "a.txt").read_bytes() == repr(Held).encode() and (out / "z.txt").read_bytes() == b"z"
    kept = {"a.txt": b"a"}
    writer.write(kept, tmp_path / "p", "t")
    assert kept == {"a.txt": b"a"}  # without consume the caller's dict is left as it was
