"""The `snc` command. The only module that prints.

Each command is a small function; what several share is a decorator: :func:`finding_options`
(``--format``, ``-q``/``-v``, ``--config``: the findings a command prints and how) and
:func:`input_options` (``-`` for standard input and ``--stdin-filename``). Loading the
configuration, compiling (with the configuration's severities and ignores applied) and printing
findings are helpers every command calls the same way.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from . import config as snc_config
from .findings import Finding, Severity, plain_text
from .findings.formats import FINDING_FORMATS, Verbosity, finding_dicts, github, github_annotations, human, shown
from .util.progress import NULL, Progress

if TYPE_CHECKING:  # the pipeline (every model, builder and output) is imported where it runs:
    # `snc render` of an unchanged design, `snc rules` and `--help` need none of it.
    from .catalog.types import Catalogue
    from .fabric import Fabric
    from .load.compose import Source  # ruamel: 0.1 s, only where a blueprint is read
    from .model.blueprint import Blueprint
    from .pipeline import Compiled

STDIN = "-"
T = TypeVar("T")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # 0.08 s to import: only when asked

    try:
        return version("supernodeiac")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0"


def _internal_error(what: str, exc: BaseException) -> None:
    """A bug in snc, not in the blueprint: one clear line; SNC_DEBUG=1 re-raises for the traceback."""
    if os.environ.get("SNC_DEBUG"):
        raise exc
    click.echo(
        f"snc: internal error {what}: {type(exc).__name__}: {exc} "
        "(a bug in snc, please report it with the blueprint; SNC_DEBUG=1 shows the traceback)",
        err=True,
    )
    sys.exit(3)


# -- shared options ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """What every findings command was asked for: format, verbosity, configuration, input name."""

    fmt: str
    verbosity: Verbosity
    config: snc_config.Config
    stdin_filename: str | None = None

    @property
    def quiet(self) -> bool:
        return self.verbosity is Verbosity.QUIET

    @property
    def verbose(self) -> bool:
        return self.verbosity is Verbosity.VERBOSE


def _load_config(path: str | None, fmt: str) -> snc_config.Config:
    try:
        return snc_config.load(Path(path) if path else snc_config.find())
    except snc_config.ConfigError as exc:
        for f in exc.findings:
            click.echo(github(f) if fmt == "github" else human(f), err=fmt != "github")
        sys.exit(2)


def finding_options(default_format: str = "human", formats: list[str] = FINDING_FORMATS) -> Callable:
    """``--format``, ``-q``/``-v`` and ``--config``, handed to the command as ``opts: Options``.

    The format's default comes from the configuration (``[tool.snc] format``) when the command
    line gives none.
    """

    def decorate(command: Callable) -> Callable:
        @click.option(
            "--format",
            "fmt",
            type=click.Choice(formats),
            default=None,
            help=f"output format (default: {default_format}, or [tool.snc] format)",
        )
        @click.option("-q", "--quiet", is_flag=True, help="errors and warnings only")
        @click.option("-v", "--verbose", is_flag=True, help="also stage timings and ignored findings (on stderr)")
        @click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False),
            default=None,
            help="configuration file (default: .snc.toml or pyproject.toml [tool.snc], found upwards)",
        )
        @functools.wraps(command)
        def wrapper(*args: Any, fmt: str | None, quiet: bool, verbose: bool, config_path: str | None, **kwargs: Any) -> Any:
            cfg = _load_config(config_path, fmt or default_format)
            chosen = fmt or (cfg.format if cfg.format in formats else None) or default_format
            opts = Options(chosen, Verbosity.of(quiet, verbose), cfg, kwargs.pop("stdin_filename", None))
            return command(*args, opts=opts, **kwargs)

        return wrapper

    return decorate


def input_options(command: Callable) -> Callable:
    """``--stdin-filename``: the name findings give a blueprint read from ``-`` (standard input)."""
    return click.option(
        "--stdin-filename",
        default=None,
        metavar="PATH",
        help="with '-': the blueprint's name in findings, and where its includes are found from",
    )(command)


# -- progress on standard error ----------------------------------------------------------------------


FIRST_PROGRESS_S = 1.0  # a run still busy this long after the process started says what it is doing
_IMPORTED = time.monotonic()
_FIRST_CLOCK: list[float] = []  # the first reporter's start, once taken


def _clock_start() -> float:
    """Where a reporter's clock starts: the first one of an `snc` process counts from the process's
    start, so the imports before the first step (seconds on a loaded machine) are no silent gap;
    later ones (the second side of a diff) and hosts that imported snc long after they started
    (a test runner) count from now."""
    now = time.monotonic()
    if _FIRST_CLOCK:
        return now
    _FIRST_CLOCK.append(now)
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # starttime
    except (OSError, ValueError, IndexError, AttributeError):  # not Linux: from now
        return now
    return now - age if 0 <= age < now - _IMPORTED + 10 else now


def _progress_interval() -> float:
    """Seconds between plain progress lines (``SNC_PROGRESS_INTERVAL``, default 5)."""
    try:
        return max(0.05, float(os.environ.get("SNC_PROGRESS_INTERVAL", "5")))
    except ValueError:
        return 5.0


def _real_stream(stream: Any) -> bool:
    """A stream backed by a file descriptor (a terminal, a pipe, a CI log), not an in-memory capture."""
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


class _Reporter(Progress):
    """What a person watching a long run sees on standard error, fed by the stages' steps.

    On a terminal a live status line (rich) names the step and the elapsed time, and is erased
    when the work ends. Elsewhere (a CI log) one plain line every :func:`_progress_interval`
    seconds, the first after :data:`FIRST_PROGRESS_S`: a short run stays silent, a long one never
    looks hung. ``-v`` adds
    a line with the time of every finished step (and each renderer); ``-q`` shows nothing.
    ``NO_COLOR`` on a terminal gets the plain lines (no escape codes).
    """

    def __init__(self, what: str, verbosity: Verbosity) -> None:
        super().__init__()
        self.what = plain_text(what)  # a file name: one line on standard error, however it is spelt
        self.verbose = verbosity is Verbosity.VERBOSE
        stream = sys.stderr
        if verbosity is Verbosity.QUIET or os.environ.get("SNC_PROGRESS", "") in ("0", "off") or not _real_stream(stream):
            self.mode = "off"
        elif stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb":
            self.mode = "live"
        else:
            self.mode = "plain"
        self.began = _clock_start()
        self.current: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self._ticked = False
        self._live: Any = None
        self._console: Any = None

    # the observer side (called on the working thread)
    def started(self, name: str, depth: int) -> None:
        with self._lock:
            del self.current[depth:]
            self.current.append(name)

    def finished(self, name: str, depth: int, seconds: float) -> None:
        with self._lock:
            del self.current[depth:]
        if self.verbose:
            self._say(f"{self.what}: {'  ' * depth}{name} {seconds:.2f} s")

    def status(self) -> str:
        with self._lock:
            where = " > ".join(self.current) or "starting"
        return f"{self.what}: {where} ({time.monotonic() - self.began:.0f} s)"

    def _say(self, line: str) -> None:
        if self.mode == "live" and self._console is not None:
            self._console.print(line, markup=False, highlight=False)
        elif self.mode != "off" or self.verbose:
            click.echo(line, err=True)

    # the display side
    @contextlib.contextmanager
    def shown(self) -> Iterator[_Reporter]:
        """Show progress while the block runs; the live line is gone when it ends."""
        if self.mode == "live":
            from rich.console import Console
            from rich.status import Status

            reporter = self

            class _Line:  # rendered on every refresh, so the elapsed time ticks
                def __rich__(self) -> str:
                    return reporter.status()

            self._console = Console(stderr=True, highlight=False)
            self._live = Status(_Line(), console=self._console, spinner="dots")
            self._live.start()
        elif self.mode == "plain":
            self._stop.clear()
            self._worker = threading.Thread(target=self._tick, name="snc-progress", daemon=True)
            self._worker.start()
        try:
            yield self
        finally:
            if self._live is not None:
                self._live.stop()
                self._live = None
            if self._worker is not None:
                self._stop.set()
                self._worker.join()
                self._worker = None

    def _tick(self) -> None:
        interval = _progress_interval()
        wait = min(FIRST_PROGRESS_S, interval)
        if not self._ticked:  # the first line of the run: FIRST_PROGRESS_S after the clock's start
            self._ticked = True
            wait = max(0.0, wait - (time.monotonic() - self.began))
        while not self._stop.wait(wait):
            click.echo(self.status(), err=True)
            wait = interval


# -- how findings look on a terminal ---------------------------------------------------------------------

_SOURCES: dict[str, list[str] | None] = {}  # file -> its lines, for source snippets (standard input kept here)


def _colour(err: bool = False) -> bool:
    """Colour for standard output (or error): ``NO_COLOR`` (set, non-empty) never, ``FORCE_COLOR``
    (set, not 0) always, otherwise on a terminal that is not ``TERM=dumb``."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    stream = sys.stderr if err else sys.stdout
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _source_line(f: Finding) -> str | None:
    """The text of the line a finding is located at (None for an unreadable or unnamed file)."""
    loc = f.location
    if loc is None or loc.line <= 0:
        return None
    if loc.file not in _SOURCES:
        try:
            _SOURCES[loc.file] = Path(loc.file).read_text(encoding="utf-8", errors="replace").splitlines()
        except (OSError, ValueError):
            _SOURCES[loc.file] = None
    lines = _SOURCES[loc.file]
    return lines[loc.line - 1] if lines is not None and loc.line <= len(lines) else None


def _human(f: Finding, err: bool = False) -> str:
    """A finding for a person: compiler style, with its source line and caret, coloured where wanted."""
    return human(f, _source_line(f), _colour(err))


# -- compiling and printing findings -----------------------------------------------------------------


def _compile(path: str, opts: Options, source: Source | None = None, progress: Progress | None = None) -> Compiled:
    """Compile a file (standard input for '-'; a file at a git revision with a GitSource), then
    apply the configuration's severities and ignores; -v reports the time and what was ignored.
    Progress goes to ``progress`` when given, else to a reporter of its own for this file."""
    started = time.perf_counter()
    own = _Reporter(path, opts.verbosity) if progress is None else None
    try:
        with own.shown() if own is not None else contextlib.nullcontext():
            with own.step("import") if own is not None else contextlib.nullcontext():  # seconds when loaded
                from .pipeline import compile_file, compile_text
            watcher = progress or own or NULL
            if path == STDIN:
                text = sys.stdin.read()
                _SOURCES[opts.stdin_filename or "<stdin>"] = text.splitlines()
                compiled = compile_text(text, opts.stdin_filename or "<stdin>", progress=watcher)
            else:
                compiled = compile_file(path, source, watcher)
    except Exception as exc:  # noqa: BLE001 - the safety net under every located error
        _internal_error(f"while compiling {path}", exc)
        raise  # unreachable: _internal_error exits
    findings, ignored = opts.config.apply(compiled.findings)
    compiled = replace(compiled, findings=findings)
    if opts.verbose:
        size = f", {len(compiled.fabric.devices):,} devices, {len(compiled.fabric.links):,} links" if compiled.fabric else ""
        took = time.perf_counter() - started
        click.echo(f"{plain_text(compiled.path)}: {compiled.stage.value} in {took:.2f} s{size}", err=True)
        for f, rule in ignored:
            click.echo(f"{f.location or plain_text(compiled.path)}: ignored {f.rule} ({rule.location}: {rule.reason})", err=True)
    return compiled


def _summary(c: Compiled) -> str:
    counts = {s: sum(1 for f in c.findings if f.severity is s) for s in Severity}
    parts = [f"{counts[Severity.ERROR]} error(s)", f"{counts[Severity.WARNING]} warning(s)"]
    if c.fabric is not None:
        parts.append(f"{len(c.fabric.devices)} devices, {len(c.fabric.links)} links")
    return f"{plain_text(c.path)}: " + ", ".join(parts)  # a file name shown on one line


def _emit(
    results: list[Compiled],
    opts: Options,
    verbosity: Verbosity | None = None,
    summary: bool = True,
    extra: dict[str, Any] | None = None,
) -> None:
    """The findings of ``results`` in the chosen format (at ``verbosity``, default the options');
    ``extra`` adds keys to each JSON entry (render: the files written)."""
    level = opts.verbosity if verbosity is None else verbosity
    if opts.fmt == "sarif":
        from .findings.sarif import sarif_log

        findings = shown((f for c in results for f in c.findings), level)
        click.echo(json.dumps(sarif_log(findings, _version(), docs_url=opts.config.docs_url), indent=2))
    elif opts.fmt == "json":
        doc = [
            {
                "file": c.path,
                "stage": c.stage.value,
                "exit_code": c.exit_code,
                "findings": finding_dicts(shown(c.findings, level)),
                "devices": len(c.fabric.devices) if c.fabric else None,
                "links": len(c.fabric.links) if c.fabric else None,
                **(extra or {}),
            }
            for c in results
        ]
        click.echo(json.dumps(doc, indent=2))
    elif opts.fmt == "github":
        for c in results:
            for line in github_annotations(c.findings):
                click.echo(line)
    else:
        for c in results:
            for f in shown(c.findings, level):
                click.echo(_human(f), color=True)  # _human coloured only where wanted
            if summary and level > Verbosity.QUIET:
                click.echo(_summary(c))


# -- commands -------------------------------------------------------------------------------------------


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: snc's and the hardware catalogue's (a digest of its data files)."""
    if not value or ctx.resilient_parsing:
        return
    from .catalog import catalogue_version

    click.echo(f"snc, version {_version()}, catalogue {catalogue_version()}")
    ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version, help="show the version and exit"
)
def main() -> None:
    """supernodeiac: compile supernode blueprints into fabrics, checks, and configs."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@finding_options()
@input_options
def validate(files: tuple[str, ...], opts: Options) -> None:
    """Check blueprints ('-' reads standard input); exit 0 clean, 1 error findings, 2 unreadable
    or invalid blueprint."""
    results = [_compile(f, opts) for f in files]
    _emit(results, opts)
    sys.exit(max(c.exit_code for c in results))


@main.command(name="render")
@click.argument("file", type=click.Path(allow_dash=True))
# Not file_okay=False: a file, a link or an empty path at -o is the writer's (and --check's) to
# explain, with its own exit code.
@click.option("-o", "--out", "out", type=click.Path(), default=None, help="output folder (default: out/<blueprint name>)")
@click.option("--only", multiple=True, help="render only these outputs (repeatable)")
@click.option("--check", is_flag=True, help="write nothing: exit 1 naming every file of the output folder that differs")
@click.option("--exclude", multiple=True, metavar="GLOB", help="with --check: paths to leave out (e.g. 'diagrams/*.svg')")
@click.option("--force", is_flag=True, help="render even when the output folder is already what the blueprint renders")
@finding_options()
@input_options
def render_cmd(
    file: str, out: str | None, only: tuple[str, ...], check: bool, exclude: tuple[str, ...], force: bool, opts: Options
) -> None:
    """Validate, then write every artifact of a blueprint atomically (or, with --check, compare
    them with the committed output folder)."""
    from . import render_state
    from .writer import WriteError, write

    if out == "":
        click.echo("snc: -o needs a folder (it was given an empty path)", err=True)
        sys.exit(2)
    findings_level = opts.verbosity if opts.verbose else Verbosity.QUIET  # render's job is files: info only with -v
    if out is None and not check and os.path.islink("out"):  # a committed link would send the render anywhere
        click.echo(
            f"snc: cannot write out/: it is a symbolic link (to {os.readlink('out')!r}); the default output folder is "
            "written only into a real folder: give -o the folder to write",
            err=True,
        )
        sys.exit(1)
    unchanged = None if force else _unchanged_render(file, out, only, exclude, opts)
    if unchanged is not None:
        target, (stored, stored_notices) = unchanged
        _emit([_Replayed(file, stored)], opts, findings_level, summary=False)  # type: ignore[list-item]
        for notice in () if opts.quiet else stored_notices:
            click.echo(f"notice: {notice}", err=True)
        if opts.fmt == "human" and not opts.quiet:
            verb = "is up to date" if check else "is already up to date: nothing written"
            click.echo(f"{target}/ {verb} (blueprint, includes, configuration and snc unchanged; --force renders again)")
        return
    reporter = _Reporter(file, opts.verbosity)  # one clock for the imports, compile, render and write
    with reporter.shown():
        with reporter.step("import"):  # seconds under load: after the progress line has started
            from .outputs import RENDERERS
            from .pipeline import render
        compiled = _compile(file, opts, progress=reporter)
    if compiled.exit_code != 0:
        _emit([compiled], opts, findings_level)
        click.echo("nothing written: fix the errors above", err=True)
        sys.exit(compiled.exit_code)
    known = RENDERERS.names()
    unknown = [o for o in only if o not in known]
    if unknown:
        click.echo(f"unknown output(s): {', '.join(unknown)}; known: {', '.join(known)}", err=True)
        sys.exit(2)
    try:
        # Large outputs stay streams: the writer produces them chunk by chunk into the staging folder
        # (--check compares bytes).
        with reporter.shown():
            artifacts, notices = render(compiled, list(only) or None, stream=not check, progress=reporter)
    except Exception as exc:  # noqa: BLE001 - nothing has been written yet
        _internal_error(f"while rendering {file} (nothing written)", exc)
    assert compiled.blueprint is not None
    name = compiled.blueprint.metadata.name
    target = Path(out) if out is not None else Path("out") / name
    if check:
        _check(compiled, artifacts, target, exclude, opts, findings_level, notices)
        return
    read = _render_digest(file, only, exclude, opts)
    render_state.forget(target)  # the folder is about to change: no shortcut until it is recorded again
    files = len(artifacts)
    try:
        with reporter.shown():
            write(artifacts, target, name, reporter, consume=True)  # what is written is freed as it goes
    except (OSError, WriteError) as exc:
        click.echo(f"snc: cannot write {target}/: {exc} ({target} is unchanged)", err=True)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - a streamed renderer failed; the staging folder is gone
        _internal_error(f"while rendering {file} ({target} is unchanged)", exc)
    if read is not None and not any(getattr(n, "transient", False) for n in notices):
        render_state.remember(target, read[0], compiled.findings, notices)  # a transient notice may not hold next time
        render_state.remember_sources(file, out, target, read[1])
    _emit([compiled], opts, findings_level, summary=False, extra=_written(target) if opts.fmt == "json" else None)
    for notice in () if opts.quiet else notices:  # -q: errors and warnings only
        click.echo(f"notice: {notice}", err=True)
    if opts.fmt == "human" and not opts.quiet:
        click.echo(f"wrote {files} files to {target}/")


@dataclass
class _Replayed:
    """What ``_emit`` reads of a Compiled, for the findings of a render that did not run again
    (importing the pipeline would cost more than the whole shortcut)."""

    path: str
    findings: list[Finding]
    exit_code: int = 0
    fabric: None = None

    @dataclass
    class _Built:
        value: str = "built"

    stage: _Built = field(default_factory=_Built)


def _render_options(only: tuple[str, ...], exclude: tuple[str, ...], opts: Options) -> dict[str, Any]:
    return {"only": sorted(only), "exclude": sorted(exclude), "config": repr(opts.config)}


def _render_digest(file: str, only: tuple[str, ...], exclude: tuple[str, ...], opts: Options) -> tuple[str, list[str]] | None:
    """The digest of what a render of ``file`` reads (render_state.py) and the files it read,
    None when it cannot be told cheaply (standard input, an unreadable blueprint: those always
    render)."""
    from . import render_state
    from .load.compose import compose, has_references
    from .load.source import LoadError, load_file

    if file == STDIN:
        return None
    try:
        doc = load_file(file)
        paths = list(getattr(compose(doc), "sources", ())) if has_references(doc) else [doc.path]
        paths = [str(p) for p in paths or [doc.path]]
        files = [(str(Path(p).resolve()), Path(p).read_bytes()) for p in paths]
    except (LoadError, OSError):
        return None
    return render_state.input_digest(files, _render_options(only, exclude, opts)), paths


def _unchanged_render(
    file: str, out: str | None, only: tuple[str, ...], exclude: tuple[str, ...], opts: Options
) -> tuple[Path, tuple[list[Finding], list[str]]] | None:
    """(folder, the findings its render reported) when the output folder already holds what the
    blueprint renders, else None (render as usual)."""
    from . import render_state
    from .load.source import LoadError, load_file

    if file == STDIN:
        return None
    # First from the files the last render read, without parsing the blueprint (a 5,000-line
    # blueprint takes 0.4 s to compose): their bytes decide the includes and the folder.
    recalled = render_state.recall_sources(file, out)
    if recalled is not None:
        target, files = recalled
        digest = render_state.input_digest(files, _render_options(only, exclude, opts))
        stored = render_state.up_to_date(target, digest)
        if stored is not None:
            return target, stored
    if out is not None:
        target = Path(out)
    else:
        try:
            data = load_file(file).data
        except LoadError:
            return None
        name = data.get("metadata", {}).get("name") if isinstance(data, dict) else None
        # Only a name the blueprint type accepts (model.base.Name): anything else renders and fails as usual.
        if not isinstance(name, str) or len(name) > 63 or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            return None
        target = Path("out") / name
    read = _render_digest(file, only, exclude, opts)
    stored = None if read is None else render_state.up_to_date(target, read[0])
    return None if stored is None else (target, stored)


def _written(target: Path) -> dict[str, Any]:
    """``render --format json``: the folder and every file written, with its size and SHA-256."""
    from .writer import written

    return {"out": str(target), "files": written(target)}


def _check(
    compiled: Compiled,
    artifacts: dict[str, bytes],
    target: Path,
    exclude: tuple[str, ...],
    opts: Options,
    level: Verbosity,
    notices: Sequence[str] = (),
) -> None:
    """``render --check``: drift findings for every file of ``target`` that differs; exit 1 if any."""
    from .compare.drift import drift_findings

    assert compiled.blueprint is not None
    drift = drift_findings(artifacts, compiled.blueprint.metadata.name, target, exclude, notices)
    checked = replace(compiled, findings=compiled.findings + drift)
    _emit([checked], opts, level, summary=False)
    if opts.fmt == "human" and not opts.quiet:
        if drift:
            click.echo(f"{target}/: {len(drift)} file(s) differ from what {compiled.path} renders", err=True)
        else:
            click.echo(f"{target}/ is up to date ({len(artifacts) + 1} files)")
    sys.exit(1 if drift else 0)


@main.command(name="explain")
@click.argument("file", type=click.Path(allow_dash=True))
@finding_options(default_format="text", formats=["text", "json"])
@input_options
def explain_cmd(file: str, opts: Options) -> None:
    """Sizing report per fabric: endpoints, switches, cables, bisection, oversubscription, growth, power, cost.

    Exit codes as validate: 0 clean, 1 error findings (the report still prints when the design
    was built), 2 unreadable or invalid blueprint.
    """
    from .explain import explain, to_text

    compiled = _compile(file, opts)
    report = None
    if compiled.fabric is not None:
        assert compiled.blueprint is not None and compiled.catalogue is not None
        try:
            report = explain(compiled.blueprint, compiled.catalogue, compiled.fabric)
        except Exception as exc:  # noqa: BLE001 - a bug in the report, not in the blueprint
            _internal_error(f"while explaining {file}", exc)
    level = Verbosity.QUIET if opts.verbosity < Verbosity.VERBOSE else Verbosity.VERBOSE  # the report is the point
    if opts.fmt == "json":
        doc = {
            "file": compiled.path,
            "stage": compiled.stage.value,
            "exit_code": compiled.exit_code,
            "findings": finding_dicts(shown(compiled.findings, level)),
            "report": report,
        }
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    else:
        for f in shown(compiled.findings, level):
            click.echo(_human(f, err=True), err=True, color=True)
        if report is not None:
            click.echo(to_text(report), nl=False)
        else:
            click.echo(_summary(compiled), err=True)
    sys.exit(compiled.exit_code)


def _plan(c: Compiled) -> tuple[Blueprint, Catalogue, Fabric]:
    """(blueprint, catalogue, fabric) of a plan that was built."""
    assert c.blueprint is not None and c.catalogue is not None and c.fabric is not None
    return c.blueprint, c.catalogue, c.fabric


def _against_plan(
    command: str,
    doing: str,
    blueprint: str,
    config_path: str | None,
    use: str,
    work: Callable[[Compiled], T],
    unread: str = "",
) -> T:
    """``snc verify`` and ``snc bind``: the plan compiled, then ``work`` done with it against the
    discovered files. A plan that cannot be built exits 2 with its errors, as does an unreadable
    discovery file (``unread`` ends its line); any other failure is a bug in snc (exit 3)."""
    from .verify import DiscoveryError

    opts = Options("human", Verbosity.NORMAL, _load_config(config_path, "human"))
    compiled = _compile(blueprint, opts)
    if compiled.fabric is None:
        for f in compiled.findings:
            if f.severity is Severity.ERROR:
                click.echo(human(f), err=True)
        click.echo(f"snc {command}: {blueprint} cannot be built, so there is no plan to {use}", err=True)
        sys.exit(2)
    try:
        return work(compiled)
    except DiscoveryError as exc:
        click.echo(f"snc {command}: {exc}{unread}", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - a bug in snc, not in the inputs
        _internal_error(f"while {doing} {blueprint}", exc)
        raise


@main.command(name="verify")
@click.argument("blueprint", type=click.Path())
@click.argument("discovered", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="configuration file")
def verify_cmd(blueprint: str, discovered: tuple[str, ...], fmt: str, config_path: str | None) -> None:
    """Compare the as-built fabric with the plan: DISCOVERED files are ibnetdiscover output or LLDP
    tables (`lldpctl -f json`, SONiC `show lldp table`), each LLDP table as DEVICE=FILE or in a file
    named after its device. Exit 0 as planned, 1 differences, 2 an unreadable blueprint or input.
    """
    from .verify import verify
    from .verify.report import FORMATS as REPORTS

    result = _against_plan(
        "verify", "verifying", blueprint, config_path, "compare with", lambda c: verify(*_plan(c), list(discovered))
    )
    click.echo(REPORTS[fmt](result), nl=False)
    sys.exit(result.exit_code)


def _need_folder(out: str) -> None:
    """``-o`` of a command that writes a folder: an empty path is a usage error (exit 2)."""
    if out == "":
        click.echo("snc: -o needs a folder (it was given an empty path)", err=True)
        sys.exit(2)


def _write_out(files: dict[str, bytes], out: str, name: str) -> Path:
    """``files`` written to the folder ``out`` through the writer (all or nothing), or exit 1."""
    from .writer import WriteError, write

    target = Path(out)
    try:
        write(files, target, name)
    except (OSError, WriteError) as exc:
        click.echo(f"snc: cannot write {target}/: {exc} ({target} is unchanged)", err=True)
        sys.exit(1)
    return target


@main.command(name="bind")
@click.argument("blueprint", type=click.Path())
@click.argument("discovered", nargs=-1, required=True)
@click.option("-o", "--out", "out", type=click.Path(), required=True, help="output folder for the bound files")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="configuration file")
def bind_cmd(blueprint: str, discovered: tuple[str, ...], out: str, fmt: str, config_path: str | None) -> None:
    """Write the subnet manager's files with the real GUIDs: DISCOVERED are ibnetdiscover dumps (one
    per InfiniBand fabric), matched to the plan by node description and cabling. Writes
    opensm/<fabric>/ (opensm.conf, root/cn/io GUID files, partitions.conf, guids.csv) to OUT only
    when every planned cable is found as planned. Exit 0 written, 1 differences or an unwritable
    OUT (nothing written), 2 an unreadable blueprint or input.
    """
    from .verify.bind import bind
    from .verify.report import FORMATS as REPORTS

    _need_folder(out)
    compiled, bound = _against_plan(
        "bind",
        "binding",
        blueprint,
        config_path,
        "bind to",
        lambda c: (c, bind(*_plan(c), list(discovered))),
        " (nothing written)",
    )
    assert compiled.blueprint is not None
    if bound.exit_code:
        click.echo(REPORTS[fmt](bound.result), nl=False)
        click.echo("snc bind: the fabric differs from the plan; nothing written (fix the cabling, then bind again)", err=True)
        sys.exit(bound.exit_code)
    target = _write_out(bound.files, out, compiled.blueprint.metadata.name)
    click.echo(REPORTS[fmt](bound.result), nl=False)
    if fmt == "text":
        click.echo(f"bound {', '.join(bound.fabrics)}: wrote {len(bound.files)} files to {target}/")


@main.command(name="routed-tests")
@click.argument("blueprint", type=click.Path())
@click.argument("dumps", nargs=-1, required=True)
@click.option("-o", "--out", "out", type=click.Path(), required=True, help="output folder for the routed plan")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="configuration file")
def routed_tests_cmd(blueprint: str, dumps: tuple[str, ...], out: str, fmt: str, config_path: str | None) -> None:
    """Tier tests on the routes a subnet manager programmed: DUMPS are `dump_fts` outputs (or
    OpenSM's opensm-lfts.dump), one per InfiniBand fabric, taken in an acceptance window (the
    rendered opensm-window.conf: dfsssp, lmc 1 where the LIDs allow). Writes OUT/<fabric>/
    perftest.tsv, perftest.sh, ports.tsv and untestable.tsv: every switch-link direction the routes
    load on some test's path, no wave sharing a direction; `snc check-results OUT RESULTS` grades
    them. Exit 0 written, 1 an unwritable OUT, 2 an unreadable blueprint or dump, or tables that
    do not fit the planned cabling (nothing written).
    """
    from .verify.routed_tests import routed_tests

    _need_folder(out)
    compiled, routed = _against_plan(
        "routed-tests",
        "routing",
        blueprint,
        config_path,
        "route tests on",
        lambda c: (c, routed_tests(*_plan(c), list(dumps))),
        " (nothing written)",
    )
    assert compiled.blueprint is not None
    target = _write_out(routed.files, out, compiled.blueprint.metadata.name)
    rows = [r.as_dict() for r in routed.fabrics]
    if fmt == "json":
        click.echo(json.dumps({"blueprint": compiled.blueprint.metadata.name, "out": str(target), "fabrics": rows}, indent=2))
        return
    for row in rows:
        loaded = row["directions"] - row["untested_directions"]
        click.echo(
            f"{row['fabric']}: {row['tests']} tests in {row['waves']} waves on the routes of {row['dump']} "
            f"({row['targets']} target LIDs, {row['lids_per_port']} per HCA port); {loaded} of {row['directions']} "
            "switch-link directions under test"
            + (f", {row['untested_directions']} loaded by no route (untestable.tsv)" if row["untested_directions"] else "")
        )
        if row["ports_not_in_plan"]:
            strangers = row["ports_not_in_plan"]
            click.echo(f"  {len(strangers)} LIDs of ports not in the plan left out: {', '.join(strangers[:3])}")
        if row["planned_ports_without_lid"]:
            absent = row["planned_ports_without_lid"]
            click.echo(
                f"  {len(absent)} planned HCA ports have no LID in the dump (down or not managed), so no test aims at them: "
                + ", ".join(absent[:3])
            )
    click.echo(
        f"wrote {len(routed.files)} files to {target}/; run {target}/<fabric>/perftest.sh RESULTS, "
        f"then snc check-results {target} RESULTS"
    )


@main.command(name="check-results")
@click.argument("plan_dir", type=click.Path())
@click.argument("results_dir", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--require-all", is_flag=True, help="a test without a result fails the check too")
def check_results_cmd(plan_dir: str, results_dir: str, fmt: str, require_all: bool) -> None:
    """Read physical-layer, perftest and nccl-tests output against a rendered acceptance plan; name failing cables by label.

    PLAN_DIR is the acceptance/ folder of `snc render`, RESULTS_DIR the folder its scripts wrote.
    Exit codes: 0 every result present passes, 1 a failure (or, with --require-all, a missing
    result), 2 PLAN_DIR is not an acceptance plan.
    """
    from .verify.check_results import ResultsError, check

    try:
        report = check(plan_dir, results_dir)
    except ResultsError as exc:
        click.echo(f"snc: {exc}", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - a bug in snc, not in the results
        _internal_error(f"while checking {results_dir}", exc)
        raise
    missing = report.count("missing")
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2, sort_keys=True))
    elif fmt == "markdown":
        click.echo(report.as_markdown(), nl=False)
    else:
        for o in report.failed:
            if o.status == "unreadable":
                click.echo(f"UNREADABLE {o.kind} {o.id}: {o.detail} [{o.what}]")
                continue
            if o.kind == "physical":
                click.echo(f"FAIL physical {o.id} [{o.verdict}]: {o.detail}; cable: {o.what}")
                continue
            if o.kind not in ("perftest", "nccl"):  # uplinks, scale-up links: the faults are in the detail
                click.echo(f"FAIL {o.kind} {o.id}: {o.detail}; {o.what}")
                continue
            click.echo(
                f"FAIL {o.kind} {o.id}: {o.detail}, below the {o.threshold:g} {o.unit} threshold; "
                + (f"cables: {o.what}" if o.kind == "perftest" else o.what)
            )
        click.echo(
            f"{report.count('pass')} passed, {report.count('fail')} failed, {report.count('unreadable')} unreadable, "
            f"{missing} without a result"
        )
    sys.exit(1 if report.failed or (require_all and missing) else 0)


@main.command(name="diff")
@click.argument("blueprints", nargs=-1, type=click.Path(allow_dash=False))
@click.option(
    "--rev",
    default=None,
    metavar="A..B",
    help="compare one blueprint as committed at revision A and B (B default HEAD; 'A' alone: against the working tree)",
)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option(
    "--limit",
    type=click.IntRange(min=0, max=10_000_000),
    default=None,
    help="rows per group in text and Markdown (0: all; default: all for text, 25 for Markdown)",
)
@click.option("--only", multiple=True, help="compare only these outputs (repeatable)")
@click.option("--no-outputs", is_flag=True, help="compare the Fabrics only, not the rendered files")
@click.option("--exit-code", "exit_code", is_flag=True, help="exit 1 when there are differences (like git diff --exit-code)")
@click.option("-v", "--verbose", is_flag=True, help="stage timings on stderr")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="configuration file")
def diff_cmd(
    blueprints: tuple[str, ...],
    rev: str | None,
    fmt: str,
    limit: int | None,
    only: tuple[str, ...],
    no_outputs: bool,
    exit_code: bool,
    verbose: bool,
    config_path: str | None,
) -> None:
    """Semantic diff of two blueprints: cable work orders, devices, changed outputs, BOM deltas.

    snc diff OLD.yaml NEW.yaml, or snc diff --rev main..HEAD blueprints/x.yaml. Exit 0 (1 with
    --exit-code when something differs), 2 when a blueprint cannot be read or built.
    """
    from .compare import diff
    from .compare.report import FILE_KEYS, MARKDOWN_LIMIT, to_json, to_markdown, to_text

    opts = Options("human", Verbosity.VERBOSE if verbose else Verbosity.NORMAL, _load_config(config_path, "human"))
    sides = _diff_sides(blueprints, rev, opts)
    started = time.perf_counter()
    try:
        with (reporter := _Reporter("diff", opts.verbosity)).shown():
            result = diff(
                sides[0][0],
                sides[1][0],
                artifacts=not no_outputs,
                only=list(only) or None,
                labels=(sides[0][1], sides[1][1]),
                progress=reporter,
            )
    except Exception as exc:  # noqa: BLE001
        _internal_error("while comparing", exc)
    if verbose:
        click.echo(f"compared in {time.perf_counter() - started:.2f} s", err=True)
    if fmt == "json":
        click.echo(to_json(result), nl=False)
    elif fmt == "markdown":
        click.echo(to_markdown(result, MARKDOWN_LIMIT if limit is None else (limit or None)), nl=False)
    else:
        click.echo(to_text(result, limit or None, file_keys=None if limit == 0 else FILE_KEYS), nl=False)
    sys.exit(1 if exit_code and not result.empty else 0)


def _diff_sides(blueprints: tuple[str, ...], rev: str | None, opts: Options) -> list[tuple[Compiled, str]]:
    """The two compiled blueprints and their labels, from two files or one file at two revisions."""
    from .load.compose import GitSource

    if rev is None:
        if len(blueprints) != 2:
            raise click.UsageError("give two blueprints (OLD NEW), or one with --rev A..B")
        pairs = [(_compile(p, opts), p) for p in blueprints]
    else:
        if len(blueprints) != 1:
            raise click.UsageError("--rev compares one blueprint at two revisions: give one file")
        old_rev, _, new_rev = rev.partition("..")
        if old_rev.startswith("-") or new_rev.startswith("-"):
            raise click.UsageError(f"--rev {rev!r}: a revision cannot start with '-'")
        repo, rel = _git_location(blueprints[0])
        pairs = []
        for r in (old_rev or "HEAD", new_rev or ("HEAD" if ".." in rev else None)):
            if r is None:  # 'A' alone: the working tree
                pairs.append((_compile(blueprints[0], opts), blueprints[0]))
                continue
            pairs.append((_compile(f"{r}:{rel}", opts, GitSource(repo, r)), f"{r}:{rel}"))
    for compiled, label in pairs:
        if compiled.fabric is None:
            for f in compiled.findings:
                click.echo(_human(f, err=True), err=True, color=True)
            click.echo(f"snc diff: {label} could not be built ({compiled.stage.value}); nothing compared", err=True)
            sys.exit(2)
    return pairs


def _git_location(path: str) -> tuple[Path, str]:
    """(repository root, path relative to it) of a blueprint in a git working tree."""
    import subprocess

    folder = Path(path).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise click.UsageError(f"--rev needs git: {exc}") from None
    if done.returncode != 0:
        raise click.UsageError(f"--rev: {path} is not in a git repository")
    root = Path(done.stdout.strip())
    return root, Path(path).resolve().relative_to(root.resolve()).as_posix()


@main.command()
def schema() -> None:
    """Print the blueprint's JSON Schema (for editor completion)."""
    from .model.blueprint import Blueprint

    doc = Blueprint.model_json_schema(by_alias=True)
    doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    doc["title"] = "supernodeiac blueprint"
    # Composition keys: resolved by the loader before the blueprint is parsed (load/compose.py).
    doc["properties"]["extends"] = {"type": "string", "description": "a blueprint this file overlays (relative path)"}
    doc["properties"]["include"] = {
        "type": "array",
        "items": {"type": "string"},
        "description": "fragments laid under this file, in order (relative paths)",
    }
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


@main.command()
@click.argument("rule", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
def rules(rule: str | None, fmt: str) -> None:
    """List the rule ids findings carry (for [tool.snc] severity and ignore), with what each checks;
    with RULE, that rule in full: what it checks, how to fix it, how to silence it."""
    from .findings.rules import RULES, markdown

    if rule is not None:
        _one_rule(rule, fmt)
        return
    if fmt == "markdown":
        click.echo(markdown(), nl=False)
    elif fmt == "json":
        click.echo(json.dumps([{"id": r.id, "stage": r.stage, "short": r.short, "full": r.full} for r in RULES], indent=2))
    else:
        width = max(len(r.id) for r in RULES)
        for r in sorted(RULES, key=lambda r: r.id):
            click.echo(f"{r.id:<{width}}  {r.stage:<6}  {r.short}")


def _one_rule(rule_id: str, fmt: str) -> None:
    """``snc rules RULE``: one rule's page; an unknown id is a usage error naming the nearest ids."""
    import difflib

    from .findings.rules import RULES

    by_id = {r.id: r for r in RULES}
    r = by_id.get(rule_id)
    if r is None:
        near = difflib.get_close_matches(rule_id, list(by_id), n=3)
        raise click.UsageError(
            f"no rule {rule_id!r}" + (f"; did you mean {', '.join(near)}?" if near else "; `snc rules` lists them")
        )
    fixed = r.stage in snc_config.FIXED_STAGES
    silence = (
        f"it cannot be silenced: [tool.snc] severity and ignore apply to design rules, not to the {r.stage} stage's"
        if fixed
        else (
            f'in .snc.toml or pyproject.toml: [tool.snc.severity] {r.id} = "warning" (or "info", "error"); '
            f'[tool.snc.ignore] {r.id} = "why it does not apply" (a reason is required; '
            f'{{ reason = "...", files = ["blueprints/lab/*.yaml"] }} for some files only)'
        )
    )
    if fmt == "json":
        click.echo(json.dumps({"id": r.id, "stage": r.stage, "short": r.short, "full": r.full, "silence": silence}, indent=2))
        return
    if fmt == "markdown":
        click.echo(f"### {r.id}\n\n**{r.short}** ({r.stage})\n\n{r.full}\n\nSilencing: {silence}\n")
        return
    import textwrap

    click.echo(f"{r.id} ({r.stage} stage): {r.short}\n")
    click.echo(textwrap.fill(r.full, 100) + "\n")
    click.echo(f"more: {r.help_uri('docs') or ''} (snc rules --format markdown prints them all)\n")
    click.echo(textwrap.fill("silence: " + silence, 100, subsequent_indent="  "))


INIT_SHAPES = ("ib-fat-tree", "roce", "nvl72", "oex")  # templates/init/<shape>.yaml.j2
_INIT_NAME = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"  # a DNS label: safe in every output's names


@main.command(name="init")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), default="blueprint.yaml")
@click.option("--shape", type=click.Choice(INIT_SHAPES), required=True, help="the kind of deployment to start from")
@click.option("--name", default=None, help="metadata.name (default: the file's name without .yaml)")
@click.option("--force", is_flag=True, help="replace FILE if it exists")
def init_cmd(file: str, shape: str, name: str | None, force: bool) -> None:
    """Write a commented starter blueprint of a shape (validates clean as written; '-' prints it)."""
    import re

    from .util.templating import render_template

    name = name or (Path(file).name.rsplit(".", 1)[0] if file != STDIN else "starter")
    if not re.fullmatch(_INIT_NAME, name):
        raise click.BadParameter(f"{name!r}: lower-case letters, digits and '-', at most 63 (a DNS label)", param_hint="--name")
    text = render_template(f"init/{shape}.yaml.j2", blueprint_name=name)
    if file == STDIN:
        click.echo(text, nl=False)
        return
    try:
        with open(file, "w" if force else "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        click.echo(f"snc init: {file} exists (--force replaces it)", err=True)
        sys.exit(1)
    except OSError as exc:
        click.echo(f"snc init: cannot write {file}: {exc.strerror or exc}", err=True)
        sys.exit(2)
    click.echo(f"wrote {file} ({shape}); next: snc validate {file}")


@main.group(name="push")
def push_group() -> None:
    """Put the design into a source of truth (Nautobot)."""


TOKEN_ENV = "NAUTOBOT_TOKEN"


@push_group.command(name="nautobot")
@click.argument("file", type=click.Path(allow_dash=True))
@click.option("--url", required=True, help="the Nautobot server's base URL (http:// or https://)")
@click.option(
    "--token-env",
    "token_env",
    metavar="VAR",
    default=None,
    help=f"environment variable holding the API token (default {TOKEN_ENV})",
)
@click.option("--token", default=None, help="the API token itself (others can see it in the process list: prefer --token-env)")
@click.option("--dry-run", is_flag=True, help="read the server and report what would change; change nothing")
@click.option("--prune", is_flag=True, help="delete objects tagged by snc in the blueprint's location that it no longer has")
@click.option(
    "--jobs",
    type=click.IntRange(1, 32),
    default=4,
    show_default=True,
    help="bulk requests in flight at once (a server with several workers takes them in parallel)",
)
@finding_options(default_format="text", formats=["text", "json"])
@input_options
def push_nautobot(
    file: str, url: str, token_env: str | None, token: str | None, dry_run: bool, prune: bool, jobs: int, opts: Options
) -> None:
    """Create or update the design in Nautobot through its REST API: location, racks, device types,
    devices in their rack units, OEX boards in their chassis's device bays, interfaces and cables,
    each tagged `snc`. A second push changes nothing; nothing snc did not tag is ever deleted.
    Exit 0 pushed, 1 error findings or the server unreachable or refusing, 2 an unreadable
    blueprint, a bad --url, no token, or pynautobot not installed.
    """
    from .push import MISSING, TAG, NautobotApi, PushError, check_url, push, wanted

    bad_url = check_url(url)
    if bad_url:
        click.echo(f"snc push: {bad_url}", err=True)
        sys.exit(2)
    if token is None:
        var = token_env or TOKEN_ENV
        token = os.environ.get(var, "")
        if not token:
            click.echo(f"snc push: no API token: set {var} (or name another variable with --token-env)", err=True)
            sys.exit(2)
    elif not token:
        click.echo("snc push: --token is empty", err=True)
        sys.exit(2)
    try:
        import pynautobot  # noqa: F401 - only to say how to install it before compiling
    except ImportError:
        click.echo(f"snc push: {MISSING}", err=True)
        sys.exit(2)
    reporter = _Reporter(f"push {file}", opts.verbosity)
    try:  # the server first: a wrong URL or token fails in a second, not after a long compile
        with reporter.shown(), reporter.step("connect"):
            api = NautobotApi(url, token)
            version = api.status().get("nautobot-version", "?")
    except PushError as exc:
        click.echo(f"snc push: {exc}", err=True)
        sys.exit(1)
    with reporter.shown():
        compiled = _compile(file, opts, progress=reporter)
    if compiled.exit_code != 0:
        _emit([compiled], opts, Verbosity.QUIET if not opts.verbose else opts.verbosity)
        click.echo("snc push: nothing pushed: fix the errors above", err=True)
        sys.exit(compiled.exit_code)
    try:
        with reporter.shown():
            with reporter.step("plan"):
                objects = list(wanted(compiled.render_context()))
            report = push(api, objects, dry_run=dry_run, prune=prune, jobs=jobs, progress=reporter)
    except PushError as exc:
        done = "" if dry_run else " (what was pushed before it stays; pushing again carries on)"
        click.echo(f"snc push: {exc}{done}", err=True)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - a bug in snc, not in the server
        _internal_error(f"while pushing {file} to {url}", exc)
    if opts.fmt == "json":
        doc = {"file": compiled.path, "url": url, "nautobot_version": version, **report.as_dict()}
        click.echo(json.dumps(doc, indent=2))
        return
    if opts.quiet:
        return
    width = max(len(k) for k in report.kinds)
    for kind, r in report.kinds.items():
        line = f"  {kind:<{width}}  {r.created:>6} created  {r.updated:>6} updated  {r.unchanged:>6} unchanged"
        if r.deleted:
            line += f"  {r.deleted:>6} deleted"
        click.echo(line)
        for name, fields in r.changes[:5] if opts.verbose or dry_run else ():
            click.echo(f"      ~ {name}: {', '.join(fields)}")
        if r.stale and not r.deleted:
            shown_stale = ", ".join(r.stale[:5]) + (f" and {len(r.stale) - 5} more" if len(r.stale) > 5 else "")
            click.echo(f"      {len(r.stale)} tagged {TAG} but no longer in the blueprint (--prune deletes): {shown_stale}")
    verb = "would change" if dry_run else "changed"
    click.echo(
        f"{compiled.path} -> {url} (Nautobot {version}): {verb} {report.changes} objects "
        f"({report.total('created')} created, {report.total('updated')} updated, {report.total('deleted')} deleted), "
        f"{report.total('unchanged')} unchanged" + ("; dry run: nothing written" if dry_run else "")
    )


@main.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(snc completion bash)" (see docs/gitops.md)."""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None
    click.echo(cls(main, {}, "snc", "_SNC_COMPLETE").source())


def run() -> None:
    """The ``snc`` console script: :func:`main` in a process that ends as soon as it is done.

    A compile makes 10^5-10^6 long-lived objects that form no cycles. In a one-shot process the
    cyclic collector would only re-scan them (about 0.5 s at 10^6 links) and the interpreter's
    teardown would free them one by one (about 1 s) just before the memory goes back to the OS
    anyway. So the collector stays off and the process exits without teardown once every
    output is flushed; files are written and closed by the writer before this point. Tests and
    library callers use :func:`main` or the pipeline and keep the normal behaviour.
    """
    gc.disable()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe (`snc ... | head`): nothing left to say.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
