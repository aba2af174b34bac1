"""``snc diff`` (and ``supernodeiac.diff``): what a change to a blueprint does to the physical world and to its outputs.

Two compiled blueprints in, one :class:`Diff` out: the Fabric's work orders (cables added,
removed, moved, replaced, relabelled; devices added, removed, moved, replaced, renamed) from
:mod:`.fabric`, and every rendered artifact compared file by file from :mod:`.artifacts` (all
registered renderers, so new outputs are diffed with no change here). :mod:`.report` writes it
as text, Markdown (a pull-request comment) or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Severity
from ..outputs import RENDERERS, SUBSETS
from ..outputs.base import NOTICE_PREFIX, SAME_PREFIX, Derived, Notice, RenderContext
from ..pipeline import Compiled, render_in
from ..util.progress import NULL, Progress
from .artifacts import ArtifactDiff, diff_artifacts
from .fabric import FabricDiff, diff_fabrics
from .rows import bill_of_materials, select

__all__ = ["ArtifactDiff", "Diff", "FabricDiff", "Side", "diff"]


@dataclass(frozen=True)
class Side:
    """One blueprint of the comparison, as the report names and counts it."""

    label: str
    name: str
    devices: int
    links: int
    errors: int
    warnings: int

    @classmethod
    def of(cls, c: Compiled, label: str | None = None) -> Side:
        assert c.blueprint is not None and c.fabric is not None
        count = {s: sum(1 for f in c.findings if f.severity is s) for s in Severity}
        return cls(
            label or c.path,
            c.blueprint.metadata.name,
            len(c.fabric.devices),
            len(c.fabric.links),
            count[Severity.ERROR],
            count[Severity.WARNING],
        )

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "name": self.name,
            "devices": self.devices,
            "links": self.links,
            "errors": self.errors,
            "warnings": self.warnings,
        }


HEADLINE = (  # (key, words): the totals a reviewer wants first, from the bill of materials
    ("relative_cost", "relative cost"),
    ("power_kw", "power (kW)"),
    ("transceivers", "optics (transceivers)"),
    ("cables", "cables and fibres"),
)


def headline(ctx: RenderContext) -> dict[str, float]:
    """Cost, power, optics and cable totals of one side (the BOM's totals; the BOM kept in the
    side's render context, where the choice of rows reads it again)."""
    from ..facts.bom import totals

    t = totals(bill_of_materials(ctx))
    return {
        "relative_cost": t["relative_cost"]["total"],
        "power_kw": round(t["power_w"]["total"] / 1000, 1),
        "transceivers": t["transceivers"],
        "cables": t["cables"] + t["fibres"] + t["connectors"],
    }


def _named(c: Compiled) -> set[tuple[str, str, str]]:
    return {(f.severity.value, f.rule, f.message) for f in c.findings if f.severity is not Severity.INFO}


@dataclass
class Diff:
    old: Side
    new: Side
    fabric: FabricDiff
    artifacts: ArtifactDiff | None = None  # None when outputs were not compared
    notices: list[str] = field(default_factory=list)
    totals: dict[str, tuple[float, float]] = field(default_factory=dict)  # HEADLINE key -> (old, new)
    new_findings: list[tuple[str, str, str]] = field(default_factory=list)  # (severity, rule, message)
    resolved_findings: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """No work order and no changed file."""
        return not self.fabric.devices and not self.fabric.cables and not (self.artifacts and self.artifacts.files)

    def as_dict(self) -> dict:
        return {
            "old": self.old.as_dict(),
            "new": self.new.as_dict(),
            "fabric": self.fabric.as_dict(),
            "artifacts": self.artifacts.as_dict() if self.artifacts is not None else None,
            "notices": self.notices,
            "totals": {k: {"old": o, "new": n} for k, (o, n) in self.totals.items()},
            "findings": {
                "new": [dict(zip(("severity", "rule", "message"), f, strict=True)) for f in self.new_findings],
                "resolved": [dict(zip(("severity", "rule", "message"), f, strict=True)) for f in self.resolved_findings],
            },
        }


def diff(
    old: Compiled,
    new: Compiled,
    *,
    artifacts: bool = True,
    only: list[str] | None = None,
    labels: tuple[str | None, str | None] = (None, None),
    progress: Progress = NULL,
    fast: bool = True,
) -> Diff:
    """The semantic diff of two built blueprints (``stage`` BUILT; design errors are allowed and
    counted). ``artifacts=False`` compares the Fabrics only; ``only`` limits the renderers.
    ``fast=False`` renders every table whole on both sides (the reference the fast path is tested
    against: the same report)."""
    for c in (old, new):
        if c.fabric is None or c.blueprint is None or c.catalogue is None:
            raise ValueError(f"{c.path} was not built ({c.stage.value}): nothing to compare")
    assert old.blueprint and old.catalogue and old.fabric and new.blueprint and new.catalogue and new.fabric
    with progress.step("compare fabrics"):
        fabric = diff_fabrics((old.blueprint, old.catalogue, old.fabric), (new.blueprint, new.catalogue, new.fabric))
    result = Diff(Side.of(old, labels[0]), Side.of(new, labels[1]), fabric)
    ctx_old, ctx_new = old.render_context(), new.render_context()
    with progress.step("compare totals"):
        before, after = headline(ctx_old), headline(ctx_new)
        result.totals = {k: (before[k], after[k]) for k, _ in HEADLINE}
    result.new_findings = sorted(_named(new) - _named(old))
    result.resolved_findings = sorted(_named(old) - _named(new))
    if artifacts:
        result.artifacts, result.notices = _artifacts(ctx_old, ctx_new, only, progress, fast)
    return result


def _artifacts(
    ctx_old: RenderContext, ctx_new: RenderContext, only: list[str] | None, progress: Progress, fast: bool
) -> tuple[ArtifactDiff, list[str]]:
    """Every renderer's files of both sides compared, one renderer at a time: both sides' files of
    one renderer are held, not every renderer's (at 131k GPUs the cabling lists alone are 2 x 198
    MB); streamed outputs are produced file by file as they are compared.

    Each side keeps one render context, so facts that several renderers share are made once per
    side. A per-link table whose renderer has a subset form (``outputs.base.SUBSETS``) is rendered
    with only the rows that may differ (``compare/rows.py``, from the Fabrics' link columns):
    its comparison is that of the whole tables, at the cost of the changed rows."""
    selections = None
    names = [name for name, _ in RENDERERS.items() if not only or name in only]
    if fast and any(name in SUBSETS for name in names):
        with progress.step("select changed rows"):
            selections = select(ctx_old, ctx_new, names)
    files: list = []
    unchanged = 0
    notices: set[str] = set()
    for name, _renderer in RENDERERS.items():
        if only and name not in only:
            continue
        subset = selections is not None and name in SUBSETS
        with progress.step(f"compare {name}" + (" (changed rows)" if subset else "")):
            old_files, old_notices = render_in(ctx_old, [name], selections.old if selections and subset else None, fast)
            new_files, new_notices = render_in(ctx_new, [name], selections.new if selections and subset else None, fast)
            same_o = {p for p in old_files if p.startswith(SAME_PREFIX)}
            same_n = {p for p in new_files if p.startswith(SAME_PREFIX)}
            if same_o != same_n:  # a file left out on one side only: compare this output whole
                old_files, old_notices = render_in(ctx_old, [name], None, fast)
                new_files, new_notices = render_in(ctx_new, [name], None, fast)
                same_o = same_n = set()
            for p in same_o:
                del old_files[p], new_files[p]
            derived_same, made_notices = _settle_derived(old_files, new_files)
            part = diff_artifacts(old_files, new_files)
            part.unchanged += len(same_o) + derived_same
        del old_files, new_files
        if selections is not None:  # what one side's subset form left for the other's: not the next renderer's
            selections.old.shared.clear()
        if subset:  # a changed table's sizes would be those of its changed rows: not known
            for change in part.files:
                if change.status == "changed" and change.kind in ("csv", "text"):
                    change.old_bytes = change.new_bytes = None
        files += part.files
        unchanged += part.unchanged
        notices |= set(old_notices) | set(new_notices) | set(made_notices)
    return ArtifactDiff(sorted(files, key=lambda f: f.path), unchanged), sorted(notices)


def _settle_derived(old_files: dict, new_files: dict) -> tuple[int, list[str]]:
    """Deferred files (:class:`outputs.base.Derived`, a diagram's SVG): one whose source is the
    same bytes on both sides is the same file, left out and counted (the first figure); the others
    made now, each side's in one call of its maker, their notices returned."""
    same = 0
    wanted: list[tuple[dict, dict[int, list[str]], dict[int, Derived]]] = [(old_files, {}, {}), (new_files, {}, {})]
    for path in sorted(set(old_files) | set(new_files)):
        a, b = old_files.get(path), new_files.get(path)
        if isinstance(a, Derived) and isinstance(b, Derived) and a.source == b.source:
            sa, sb = old_files.get(a.source), new_files.get(b.source)
            if isinstance(sa, bytes) and isinstance(sb, bytes) and sa == sb:
                del old_files[path], new_files[path]
                same += 1
                continue
        for (_files, paths, maker), value in zip(wanted, (a, b), strict=True):
            if isinstance(value, Derived):
                paths.setdefault(id(value.make), []).append(path)
                maker[id(value.make)] = value
    notices: list[str] = []
    for files, paths, maker in wanted:
        for key, group in paths.items():
            for p in group:
                del files[p]
            for p, data in maker[key].make(group).items():
                if p.startswith(NOTICE_PREFIX):
                    notices.append(Notice.of(p, bytes(data).decode()))
                else:
                    files[p] = data
    return same, notices
