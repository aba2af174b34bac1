"""The `snc` command. The only module that prints."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
from pathlib import Path

import click

from .findings import Finding, Severity, sarif_log
from .pipeline import Compiled, compile_file, render

FORMATS = ["human", "json", "github", "sarif"]


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


def _compile(path: str) -> Compiled:
    try:
        return compile_file(path)
    except Exception as exc:  # noqa: BLE001 - the safety net under every located error
        _internal_error(f"while compiling {path}", exc)
        raise  # unreachable: _internal_error exits


def _human(finding: Finding) -> str:
    where = str(finding.location) if finding.location else "<blueprint>"
    text = f"{where}: {finding.severity.value}[{finding.rule}]: {finding.message}"
    if finding.hint:
        text += f"\n    hint: {finding.hint}"
    return text


def _github(finding: Finding) -> str:
    """GitHub Actions workflow command: shows the finding on the pull request's diff."""
    level = {"error": "error", "warning": "warning", "info": "notice"}[finding.severity.value]
    loc = finding.location
    props = f"file={loc.file},line={max(loc.line, 1)},col={max(loc.col, 1)}," if loc else ""
    msg = finding.message + (f" (hint: {finding.hint})" if finding.hint else "")
    msg = msg.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::{level} {props}title={finding.rule}::{msg}"


def _summary(c: Compiled) -> str:
    counts = {s: sum(1 for f in c.findings if f.severity is s) for s in Severity}
    parts = [f"{counts[Severity.ERROR]} error(s)", f"{counts[Severity.WARNING]} warning(s)"]
    if c.fabric is not None:
        parts.append(f"{len(c.fabric.devices)} devices, {len(c.fabric.links)} links")
    return f"{c.path}: " + ", ".join(parts)


def _emit(results: list[Compiled], fmt: str, quiet: bool) -> None:
    if fmt == "sarif":
        shown = [f for c in results for f in c.findings if not (quiet and f.severity is Severity.INFO)]
        click.echo(json.dumps(sarif_log(shown, _version()), indent=2))
        return
    if fmt == "json":
        doc = [
            {
                "file": c.path,
                "stage": c.stage.value,
                "exit_code": c.exit_code,
                "findings": [f.as_dict() for f in c.findings],
                "devices": len(c.fabric.devices) if c.fabric else None,
                "links": len(c.fabric.links) if c.fabric else None,
            }
            for c in results
        ]
        click.echo(json.dumps(doc, indent=2))
        return
    for c in results:
        for f in c.findings:
            if quiet and f.severity is Severity.INFO:
                continue
            click.echo(_github(f) if fmt == "github" else _human(f))
        if fmt == "human":
            click.echo(_summary(c), err=False)


@click.group()
@click.version_option(package_name="supernodeiac")
def main() -> None:
    """supernodeiac: compile supernode blueprints into fabrics, checks, and configs."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True)
@click.option("-q", "--quiet", is_flag=True, help="hide info findings")
def validate(files: tuple[str, ...], fmt: str, quiet: bool) -> None:
    """Check blueprints; exit 0 clean, 1 error findings, 2 unreadable or invalid blueprint."""
    results = [_compile(f) for f in files]
    _emit(results, fmt, quiet)
    sys.exit(max(c.exit_code for c in results))


@main.command(name="render")
@click.argument("file", type=click.Path())
@click.option("-o", "--out", "out", type=click.Path(), default=None, help="output folder (default: out/<blueprint name>)")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True)
@click.option("--only", multiple=True, help="render only these outputs (repeatable)")
@click.option("-q", "--quiet", is_flag=True, help="hide info findings")
def render_cmd(file: str, out: str | None, fmt: str, only: tuple[str, ...], quiet: bool) -> None:
    """Validate, then write every artifact of a blueprint atomically."""
    from .render import RENDERERS
    from .writer import WriteError, write

    if out == "":
        click.echo("snc: -o needs a folder (it was given an empty path)", err=True)
        sys.exit(2)
    compiled = _compile(file)
    if compiled.exit_code != 0:
        _emit([compiled], fmt, quiet)
        click.echo("nothing written: fix the errors above", err=True)
        sys.exit(compiled.exit_code)
    known = RENDERERS.names()
    unknown = [o for o in only if o not in known]
    if unknown:
        click.echo(f"unknown output(s): {', '.join(unknown)}; known: {', '.join(known)}", err=True)
        sys.exit(2)
    try:
        artifacts, notices = render(compiled, list(only) or None)
    except Exception as exc:  # noqa: BLE001 - nothing has been written yet
        _internal_error(f"while rendering {file} (nothing written)", exc)
    assert compiled.blueprint is not None
    target = Path(out) if out is not None else Path("out") / compiled.blueprint.metadata.name
    try:
        write(artifacts, target, compiled.blueprint.metadata.name)
    except (OSError, WriteError) as exc:
        click.echo(f"snc: cannot write {target}/: {exc} ({target} is unchanged)", err=True)
        sys.exit(1)
    _emit([compiled], fmt, quiet=True if fmt == "human" else quiet)
    for notice in notices:
        click.echo(f"notice: {notice}", err=True)
    if fmt == "human":
        click.echo(f"wrote {len(artifacts)} files to {target}/")


@main.command(name="explain")
@click.argument("file", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain_cmd(file: str, fmt: str) -> None:
    """Sizing report per fabric: endpoints, switches, cables, bisection, oversubscription, growth, power, cost.

    Exit codes as validate: 0 clean, 1 error findings (the report still prints when the design
    was built), 2 unreadable or invalid blueprint.
    """
    from .explain import explain, to_text

    compiled = _compile(file)
    report = None
    if compiled.fabric is not None:
        assert compiled.blueprint is not None and compiled.catalogue is not None
        try:
            report = explain(compiled.blueprint, compiled.catalogue, compiled.fabric)
        except Exception as exc:  # noqa: BLE001 - a bug in the report, not in the blueprint
            _internal_error(f"while explaining {file}", exc)
    if fmt == "json":
        doc = {
            "file": compiled.path,
            "stage": compiled.stage.value,
            "exit_code": compiled.exit_code,
            "findings": [f.as_dict() for f in compiled.findings if f.severity is not Severity.INFO],
            "report": report,
        }
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    else:
        for f in compiled.findings:
            if f.severity is not Severity.INFO:
                click.echo(_human(f), err=True)
        if report is not None:
            click.echo(to_text(report), nl=False)
        else:
            click.echo(_summary(compiled), err=True)
    sys.exit(compiled.exit_code)


@main.command()
def schema() -> None:
    """Print the blueprint's JSON Schema (for editor completion)."""
    from .model.blueprint import Blueprint

    doc = Blueprint.model_json_schema(by_alias=True)
    doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    doc["title"] = "supernodeiac blueprint"
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


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
