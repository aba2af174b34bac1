"""The `snc` command. The only module that prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .findings import Finding, Severity
from .pipeline import Compiled, compile_file, render

FORMATS = ["human", "json", "github"]


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
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True)
@click.option("-q", "--quiet", is_flag=True, help="hide info findings")
def validate(files: tuple[str, ...], fmt: str, quiet: bool) -> None:
    """Check blueprints; exit 0 clean, 1 error findings, 2 unreadable or invalid blueprint."""
    results = [compile_file(f) for f in files]
    _emit(results, fmt, quiet)
    sys.exit(max(c.exit_code for c in results))


@main.command(name="render")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "-o", "--out", "out", type=click.Path(file_okay=False), default=None, help="output folder (default: out/<blueprint name>)"
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True)
@click.option("--only", multiple=True, help="render only these outputs (repeatable)")
@click.option("-q", "--quiet", is_flag=True, help="hide info findings")
def render_cmd(file: str, out: str | None, fmt: str, only: tuple[str, ...], quiet: bool) -> None:
    """Validate, then write every artifact of a blueprint atomically."""
    from .render import RENDERERS
    from .writer import write

    compiled = compile_file(file)
    if compiled.exit_code != 0:
        _emit([compiled], fmt, quiet)
        click.echo("nothing written: fix the errors above", err=True)
        sys.exit(compiled.exit_code)
    known = RENDERERS.names()
    unknown = [o for o in only if o not in known]
    if unknown:
        click.echo(f"unknown output(s): {', '.join(unknown)}; known: {', '.join(known)}", err=True)
        sys.exit(2)
    artifacts, notices = render(compiled, list(only) or None)
    assert compiled.blueprint is not None
    target = Path(out) if out else Path("out") / compiled.blueprint.metadata.name
    write(artifacts, target, compiled.blueprint.metadata.name)
    _emit([compiled], fmt, quiet=True if fmt == "human" else quiet)
    for notice in notices:
        click.echo(f"notice: {notice}", err=True)
    if fmt == "human":
        click.echo(f"wrote {len(artifacts)} files to {target}/")


@main.command()
def schema() -> None:
    """Print the blueprint's JSON Schema (for editor completion)."""
    from .model.blueprint import Blueprint

    doc = Blueprint.model_json_schema(by_alias=True)
    doc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    doc["title"] = "supernodeiac blueprint"
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


if __name__ == "__main__":  # pragma: no cover
    main()
