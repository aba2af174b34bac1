"""The compiler's stages wired together: load -> parse -> build -> check (-> render).

Pure: takes a path, returns values. Printing is the CLI's job, files the writer's.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum

from .builders import build, load_catalogue
from .catalog.types import Catalogue
from .checks import CheckContext, run_checks, run_structural_checks
from .fabric import Fabric
from .findings import BuildError, Finding, Severity, causes_first
from .load.compose import Source, compose, has_references
from .load.parse import ParseError, parse
from .load.source import Document, LoadError, load_file, load_text
from .model.blueprint import Blueprint
from .outputs import Artifacts, RenderContext, RowSelection, Stream, render_all
from .util.progress import NULL, Progress


class Stage(StrEnum):
    UNREADABLE = "unreadable"  # not a file, not YAML, or not a valid blueprint: exit 2
    UNBUILDABLE = "unbuildable"  # valid blueprint, impossible design: exit 1
    BUILT = "built"


@dataclass
class Compiled:
    path: str
    stage: Stage
    findings: list[Finding] = field(default_factory=list)
    document: Document | None = None
    blueprint: Blueprint | None = None
    catalogue: Catalogue | None = None
    fabric: Fabric | None = None

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity is Severity.ERROR)

    @property
    def exit_code(self) -> int:
        if self.stage is Stage.UNREADABLE:
            return 2
        return 1 if self.errors else 0

    def render_context(self) -> RenderContext:
        assert self.blueprint and self.catalogue and self.fabric
        return RenderContext(self.blueprint, self.catalogue, self.fabric)


def _located(doc: Document, findings: list[Finding]) -> list[Finding]:
    """Findings at their file:line:col, in source order, root causes first."""
    out = [f if f.location else f.at(doc.locate(f.path)) for f in findings]
    return causes_first(sorted(out, key=Finding.sort_key))


@contextmanager
def _bulk() -> Iterator[None]:
    """Pause the cyclic garbage collector while a stage makes or walks 10^5-10^6 objects.

    Devices, links and rows are long-lived and form no cycles to reclaim, so every collection
    would only re-scan them (about a third of build time at 10^5 links). Reference counting
    still frees memory as usual; the collector resumes afterwards if it was on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def compile_file(path: str | os.PathLike[str], source: Source | None = None, progress: Progress = NULL) -> Compiled:
    """Load (with its includes), parse, build and check the blueprint at ``path``.

    ``source`` says where files come from (default: the file system; a ``GitSource`` reads
    them as committed at a revision). ``progress`` is told each stage as it starts and ends.
    """
    path = os.fspath(path)
    try:
        with progress.step("load"):
            doc = source.load(path) if source is not None else load_file(path)
    except LoadError as exc:
        return Compiled(path, Stage.UNREADABLE, [exc.finding])
    return compile_document(doc, source, progress)


def compile_text(text: str, path: str = "<stdin>", source: Source | None = None, progress: Progress = NULL) -> Compiled:
    """Compile blueprint text (standard input, an editor buffer); ``path`` names it in findings
    and is where its includes are resolved from."""
    try:
        with progress.step("load"):
            doc = load_text(text, path)
    except LoadError as exc:
        return Compiled(path, Stage.UNREADABLE, [exc.finding])
    return compile_document(doc, source, progress)


def compile_document(doc: Document, source: Source | None = None, progress: Progress = NULL) -> Compiled:
    if has_references(doc):
        try:
            with progress.step("compose"):
                doc = compose(doc, source)
        except LoadError as exc:
            return Compiled(doc.path, Stage.UNREADABLE, [exc.finding], doc)
    # One pause for the whole compile: resuming the collector between stages would make it
    # scan every new device and link at once (twice, young then old: ~0.5 s at 10^5 links).
    with _bulk():
        return _compile(doc, progress)


def _compile(doc: Document, progress: Progress) -> Compiled:
    try:
        with progress.step("parse"):
            blueprint = parse(doc)
    except ParseError as exc:
        return Compiled(doc.path, Stage.UNREADABLE, _located(doc, exc.findings), doc)
    catalogue: Catalogue | None = None
    try:
        with progress.step("build"):
            catalogue = load_catalogue(blueprint)
            fabric, build_findings = build(blueprint, catalogue)
    except BuildError as exc:
        findings = exc.findings + _structural(blueprint, catalogue, exc.partial)
        return Compiled(doc.path, Stage.UNBUILDABLE, _located(doc, findings), doc, blueprint)
    with progress.step("check"):
        findings = build_findings + run_checks(CheckContext(blueprint, catalogue, fabric))
    return Compiled(doc.path, Stage.BUILT, _located(doc, findings), doc, blueprint, catalogue, fabric)


def _structural(blueprint: Blueprint, catalogue: Catalogue | None, partial: object) -> list[Finding]:
    """Rack-space findings of a partly built Fabric (the root cause a later builder only felt)."""
    if catalogue is None or not isinstance(partial, Fabric):
        return []
    try:
        return run_structural_checks(CheckContext(blueprint, catalogue, partial))
    except Exception:  # noqa: BLE001 - a half-built Fabric may lack what a check reads; the build error stands
        return []


def render(
    compiled: Compiled, only: list[str] | None = None, stream: bool = False, progress: Progress = NULL
) -> tuple[Artifacts, list[str]]:
    """Every artifact as bytes; with ``stream``, large ones may stay :class:`render.Stream` for the writer."""
    with _bulk(), progress.step("render"):
        return render_all(compiled.render_context(), only, stream, progress)


def render_in(
    ctx: RenderContext, only: list[str], rows: RowSelection | None = None, comparing: bool = False
) -> tuple[dict[str, bytes | Stream], list[str]]:
    """Renderers ``only`` in a context that is kept between calls (its shared facts made once),
    streamed; with ``rows``, the subset forms of those that have one (``outputs.base.SUBSETS``);
    with ``comparing``, their comparison forms (``outputs.base.COMPARING``, deferred files)."""
    with _bulk():
        return render_all(ctx, only, True, NULL, rows, comparing)  # type: ignore[return-value]
