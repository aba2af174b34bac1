"""A real Nautobot for the push tests: its own venv (pip install nautobot), PostgreSQL and Redis
from Debian on loopback, migrated, a superuser with an API token, ``nautobot-server start``
(uWSGI) on 127.0.0.1. Everything under one temporary folder; :meth:`NautobotServer.stop` ends what it
started (by process id).

The venv is cached at ``$SNC_NAUTOBOT_VENV`` (default ``~/.cache/snc/nautobot-<version>``), and
the migrated, empty database beside it as a ``pg_dump`` (the migrations take minutes on two
cores; restoring the dump takes seconds), so a second session in one CI run pays neither.

``python -m tests.helpers.nautobot_server`` starts one and waits (for trying things by hand).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

NAUTOBOT = "nautobot==2.4.44"  # a current 2.4 release (Python 3.9-3.12)
TOKEN = "5cc0000000000000000000000000000000000001"  # a throwaway token for a throwaway loopback server
USER = "nautobot"


class Unavailable(Exception):
    """Why a Nautobot could not be started here (the tests skip with it)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin() -> Path:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise Unavailable("PostgreSQL is not installed (apt-get install -y postgresql)")


def venv_dir() -> Path:
    default = Path.home() / ".cache" / "snc" / NAUTOBOT.replace("==", "-")
    return Path(os.environ.get("SNC_NAUTOBOT_VENV", str(default)))


@contextlib.contextmanager
def _cache_lock() -> Iterator[None]:
    """The cache held by one process at a time: pytest-xdist starts a session per worker, and two
    workers installing into (or one removing) the same venv left neither with a ``nautobot-server``
    (CI, stop 27). The second waits for the first's install and dump, then reuses them."""
    venv = venv_dir()
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_venv(log: Path) -> Path:
    """The venv's ``nautobot-server``, installing Nautobot on first use (a venv whose install did
    not finish has no ``.complete`` and is made again). Call it under :func:`_cache_lock`."""
    venv = venv_dir()
    server = venv / "bin" / "nautobot-server"
    if (venv / ".complete").exists() and server.exists():
        return server
    shutil.rmtree(venv, ignore_errors=True)
    with log.open("ab") as out:
        for cmd in ([sys.executable, "-m", "venv", str(venv)], [str(venv / "bin" / "pip"), "install", "-q", NAUTOBOT]):
            if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=1800).returncode != 0:
                raise Unavailable(f"cannot install {NAUTOBOT} (no package index?): see {log}")
    if not server.exists():
        raise Unavailable(f"{NAUTOBOT} installed without a nautobot-server: see {log}")
    (venv / ".complete").write_text(NAUTOBOT + "\n")
    return server


class NautobotServer:
    """One running Nautobot: ``url`` and ``token`` for the API."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[subprocess.Popen[bytes]] = []
        self.log = root / "nautobot.log"
        self.url = ""
        self.token = TOKEN

    @classmethod
    def in_temp(cls) -> NautobotServer:
        """One in a fresh folder under the system's temporary folder (not pytest's: its folders are
        private to the user, and PostgreSQL runs as another one when the tests run as root)."""
        import tempfile

        return cls(Path(tempfile.mkdtemp(prefix="snc-nautobot-")))

    # -- pieces
    def _as_postgres(self, cmd: list[str]) -> list[str]:
        """PostgreSQL refuses to run as root: there, as the ``postgres`` user Debian's package made."""
        if os.geteuid() != 0:
            return cmd
        if shutil.which("runuser") is None:
            raise Unavailable("running as root without runuser: PostgreSQL cannot be started")
        return ["runuser", "-u", "postgres", "--", *cmd]

    def _spawn(self, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        out = self.log.open("ab")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.root)
        self.procs.append(proc)
        return proc

    def _run(self, cmd: list[str], env: dict[str, str] | None = None, timeout: float = 1800) -> None:
        with self.log.open("ab") as out:
            out.write(f"$ {' '.join(cmd)}\n".encode())
            out.flush()
            code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.root, timeout=timeout).returncode
        if code != 0:
            raise Unavailable(f"{cmd[0]} {cmd[1] if len(cmd) > 1 else ''} failed (exit {code}): see {self.log}")

    def _postgres(self) -> int:
        pg = _pg_bin()
        data = self.root / "pg"
        data.mkdir()
        if os.geteuid() == 0:  # its data and socket folder must be the postgres user's
            shutil.chown(self.root, "postgres")
            shutil.chown(data, "postgres")
        self._run(self._as_postgres([str(pg / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8"]))
        port = _free_port()
        self._spawn(
            self._as_postgres(
                [str(pg / "postgres"), "-D", str(data), "-p", str(port), "-k", str(self.root), "-c", "listen_addresses=127.0.0.1"]
                # a throwaway database: no durability, fewer writes on a shared machine
                + ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
            )
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if subprocess.run([str(pg / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode == 0:
                return port
            time.sleep(0.3)
        raise Unavailable(f"PostgreSQL did not start: see {self.log}")

    def _redis(self) -> int:
        redis = shutil.which("redis-server")
        if redis is None:
            raise Unavailable("Redis is not installed (apt-get install -y redis-server)")
        port = _free_port()
        self._spawn([redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        return port

    def start(self) -> NautobotServer:
        started = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        pg_port = self._postgres()
        redis_port = self._redis()
        pg = _pg_bin()
        config = self.root / "nautobot_config.py"
        # What `nautobot-server init` writes, reduced to what this server needs (the rest comes from
        # Nautobot's defaults, which read the NAUTOBOT_* variables below).
        config.write_text("from nautobot.core.settings import *  # noqa: F403\nSECRET_KEY = 'snc-test-' * 8\n")
        env = {
            **os.environ,
            "NAUTOBOT_ROOT": str(self.root / "nautobot"),
            "NAUTOBOT_CONFIG": str(config),
            "NAUTOBOT_DB_HOST": "127.0.0.1",
            "NAUTOBOT_DB_PORT": str(pg_port),
            "NAUTOBOT_DB_USER": USER,
            "NAUTOBOT_DB_NAME": "nautobot",
            "NAUTOBOT_REDIS_HOST": "127.0.0.1",
            "NAUTOBOT_REDIS_PORT": str(redis_port),
            "NAUTOBOT_ALLOWED_HOSTS": "127.0.0.1 localhost",
            "NAUTOBOT_INSTALLATION_METRICS_ENABLED": "false",
            "NAUTOBOT_CHANGELOG_RETENTION": "0",
            "NAUTOBOT_MAX_PAGE_SIZE": "1000",
        }
        env.pop("DJANGO_SETTINGS_MODULE", None)
        db = ["-h", "127.0.0.1", "-p", str(pg_port), "-U", USER]
        self._run([str(pg / "createdb"), *db, "nautobot"])
        dump = venv_dir().with_name(venv_dir().name + "-migrated.dump")
        with _cache_lock():  # the install and the first migration once, whichever worker comes first
            server = ensure_venv(self.root / "install.log")
            if dump.exists():
                self._run([str(pg / "pg_restore"), *db, "-d", "nautobot", "--no-owner", str(dump)])
            else:
                self._run([str(server), "migrate", "--no-input"], env)
                self._run([str(pg / "pg_dump"), *db, "-Fc", "-f", str(dump) + ".partial", "nautobot"])
                os.replace(str(dump) + ".partial", dump)
        make_user = (
            "from nautobot.users.models import Token, User\n"
            f"u = User.objects.create_superuser({USER!r}, 'snc@example.invalid', 'not-a-secret')\n"
            f"Token.objects.create(user=u, key={TOKEN!r})\n"
        )
        self._run([str(server), "nbshell", "--command", make_user], env)
        port = _free_port()
        # uWSGI (`nautobot-server start`, as Nautobot is deployed) with a worker per core: a push's
        # parallel bulk requests (--jobs) then run side by side, not queued behind each other.
        workers = max(2, min(4, os.cpu_count() or 2))
        uwsgi = [
            f"--http=127.0.0.1:{port}",
            f"--processes={workers}",
            "--master",
            "--die-on-term",
            "--disable-logging",
            "--http-keepalive",
        ]
        self._spawn([str(server), "start", *uwsgi, "--http-timeout=900", "--harakiri=900"], env)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                request = urllib.request.Request(f"{self.url}/api/status/", headers={"Authorization": f"Token {TOKEN}"})
                with urllib.request.urlopen(request, timeout=10) as answer:
                    if answer.status == 200:
                        self.started_s = time.monotonic() - started
                        return self
            except (urllib.error.URLError, OSError):
                time.sleep(1)
        raise Unavailable(f"Nautobot did not answer at {self.url}: see {self.log}")

    def stop(self) -> None:
        data = self.root / "pg"
        if (data / "postmaster.pid").exists():  # PostgreSQL runs under runuser: stop it by its own tool
            with self.log.open("ab") as out:
                subprocess.run(
                    self._as_postgres([str(_pg_bin() / "pg_ctl"), "-D", str(data), "stop", "-m", "fast"]),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=60,
                )
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()


if __name__ == "__main__":
    import signal

    def _interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)  # `kill PID` stops what it started too
    srv = NautobotServer.in_temp()
    try:
        srv.start()
        print(f"{srv.url} token {srv.token} (started in {srv.started_s:.0f} s; log {srv.log}); Ctrl-C stops it")
        while True:
            time.sleep(3600)
    except Unavailable as exc:
        print(f"unavailable: {exc}")
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
