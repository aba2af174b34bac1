from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from supernodeiac.cli import main
from supernodeiac.fabric import Fabric
from supernodeiac.load.source import load_text
from supernodeiac.pipeline import Compiled, compile_document, compile_file, render

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINTS = ROOT / "blueprints"


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under a folder, by its posix path relative to it (to compare whole renders)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cable_ends(f: Fabric, fabric: str | None = None) -> dict[str, tuple[str, str, str, str]]:
    """Cable ID -> (A device, A port, B device, B port) of every link (of one fabric if named),
    to check that growing a blueprint leaves existing cables where they are."""
    links = f.links if fabric is None else f.links_of(fabric)
    return {
        link.id: (
            f.devices[link.a].name,
            f.port_name(link.a, link.a_port),
            f.devices[link.b].name,
            f.port_name(link.b, link.b_port),
        )
        for link in links
    }


def compile_text(text: str, name: str = "test.yaml") -> Compiled:
    """Compile blueprint text held in a test (the path shows up in findings)."""
    return compile_document(load_text(text, name))


# -- the shipped blueprints, compiled once per process, rendered once per test run -----------------
# Rendering every shipped blueprint takes about 70 CPU-s; a dozen test files read their outputs.
# Each pytest-xdist worker compiles a blueprint the first time a test asks; the first worker that
# asks for a render makes it (under a lock, in a folder every worker of the run shares) and every
# other worker reads the same folder. They are shared: do not change them; a test that edits a
# render copies it first (copy_of_shipped_render).

_SHARED_ENV = "SNC_TEST_SHARED_RENDERS"  # the run's shared folder, made by the controller
_MADE_ROOT = pytest.StashKey[Path]()
_RENDERED_HERE: set[str] = set()


def pytest_configure(config: pytest.Config) -> None:
    """The controller (or a run without workers) makes the shared folder before the workers start;
    they inherit its path in the environment."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None and _SHARED_ENV not in os.environ:
        root = Path(tempfile.mkdtemp(prefix="snc-shipped-"))
        os.environ[_SHARED_ENV] = str(root)
        config.stash[_MADE_ROOT] = root


def pytest_unconfigure(config: pytest.Config) -> None:
    root = config.stash.get(_MADE_ROOT, None)
    if root is not None:
        os.environ.pop(_SHARED_ENV, None)
        shutil.rmtree(root, ignore_errors=True)


def _shared_root() -> Path:
    root = os.environ.get(_SHARED_ENV)
    if root is None:  # conftest imported without its pytest_configure (a helper run on its own)
        root = tempfile.mkdtemp(prefix="snc-shipped-")
        os.environ[_SHARED_ENV] = root
    return Path(root)


@cache
def shipped(name: str) -> Compiled:
    """``blueprints/<name>.yaml`` compiled, clean (shared: read, do not mutate)."""
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0, [str(f.location) + " " + f.message for f in c.findings]
    return c


@cache
def shipped_render(name: str) -> Path:
    """The folder ``snc render blueprints/<name>.yaml -o`` wrote (MANIFEST.json included), made
    once per test run through the real CLI by whichever process asks first, and left read-only;
    checked unchanged at the end."""
    root = _shared_root()
    out = root / name
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if not (out / "MANIFEST.json").is_file():  # the writer swaps a whole render in, or nothing
            env = {"SNC_NO_RENDER_CACHE": "1", "SNC_CACHE_DIR": str(root / f".cache-{os.getpid()}")}
            result = CliRunner().invoke(main, ["render", str(BLUEPRINTS / f"{name}.yaml"), "-o", str(out)], env=env)
            assert result.exit_code == 0, result.output
            for p in out.rglob("*"):
                if p.is_file():
                    p.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            _RENDERED_HERE.add(name)
    return out


def rendered_here(name: str) -> bool:
    """Whether this process made the shared render of ``name`` (another worker may have)."""
    shipped_render(name)
    return name in _RENDERED_HERE


@cache
def shipped_files(name: str) -> dict[str, bytes]:
    """Every artifact of the shared render by path, as ``pipeline.render(shipped(name))[0]`` returns
    them (the same bytes: the writer adds only MANIFEST.json)."""
    files = read_tree(shipped_render(name))
    del files["MANIFEST.json"]
    return files


@cache
def shipped_outputs(name: str, *only: str) -> dict[str, bytes]:
    """``pipeline.render(shipped(name), list(only))[0]``, made once per process (a few output
    families, cheaper than the whole render when a worker needs nothing else)."""
    artifacts, _ = render(shipped(name), list(only))
    return {path: bytes(data) for path, data in artifacts.items()}


def copy_of_shipped_render(name: str, to: Path) -> Path:
    """A private, writable copy of the shared render folder (for tests that change or re-render it)."""
    shutil.copytree(shipped_render(name), to)
    for p in to.rglob("*"):
        if p.is_file():
            p.chmod(0o644)
    return to


@pytest.fixture(scope="session", autouse=True)
def _shared_renders_unchanged():
    """At the end of each process: every shared render still holds what its MANIFEST.json
    recorded, so no test passed by reading a folder another test had changed."""
    yield
    root = os.environ.get(_SHARED_ENV)
    if root is None or not Path(root).is_dir():
        return
    for out in sorted(p for p in Path(root).iterdir() if not p.name.startswith(".") and p.is_dir()):
        manifest = json.loads((out / "MANIFEST.json").read_text())
        recorded = {f["path"]: f["sha256"] for f in manifest["files"]}
        now = {
            p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in out.rglob("*")
            if p.is_file() and p.name != "MANIFEST.json"
        }
        assert now == recorded, f"a test changed the shared render of {out.name}"


@pytest.fixture(scope="session")
def small_ib() -> Compiled:
    return shipped("small-ib")


@pytest.fixture(autouse=True)
def _render_cache(tmp_path_factory, monkeypatch):
    """Tests render every time (many re-render one folder to see what a second render does) and
    never write into the user's ~/.cache; tests/test_incremental.py turns the shortcut back on."""
    monkeypatch.setenv("SNC_CACHE_DIR", str(tmp_path_factory.mktemp("snc-cache")))
    monkeypatch.setenv("SNC_NO_RENDER_CACHE", "1")
