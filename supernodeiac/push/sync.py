"""Make Nautobot hold what a Fabric asks for: read what is there, plan, then create and update in
bulk, kind by kind (:data:`nautobot_objects.KINDS` order, so every reference resolves).

Idempotent by construction: an object is found by its natural key (a device by name within
the site's location, an interface by device and name, a cable by its two interfaces); only
the fields snc sets are compared, and an object whose fields already match is left alone, so
a second push of the same blueprint changes nothing and a changed blueprint updates only what
changed. Tags and content types are merged, never shrunk (others' tags stay). Nothing is
deleted unless it carries snc's tag, sits in the blueprint's location and is no longer
wanted; even then only with ``prune`` (otherwise it is reported as stale).

The server is reached through :class:`Api` (four calls: read (list), bulk create, bulk update, bulk
delete); ``nautobot_api.py`` implements it with pynautobot, tests with a fake. Pure apart
from that: no printing; progress goes to the :class:`Progress` observer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..util.progress import NULL, Progress
from .nautobot_objects import KIND, KINDS, TAG, Kind, Ref, Want

BATCH = 100  # objects per bulk request: a progress step each; a 2-core server answers in tens of seconds


class PushError(Exception):
    """The server refused or could not be reached; ``where`` names the endpoint and object."""

    def __init__(self, message: str, where: str = "", detail: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class Api(Protocol):
    """The four REST calls a push needs. Records are the API's JSON objects (``id`` on each;
    references as ``{"id": ...}`` or bare ids, choices as ``{"value": ...}`` or bare values)."""

    def read(self, endpoint: str, filters: dict[str, Any]) -> list[dict[str, Any]]: ...

    def create(self, endpoint: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def update(self, endpoint: str, objects: list[dict[str, Any]]) -> None: ...

    def delete(self, endpoint: str, ids: list[str]) -> None: ...


@dataclass(slots=True)
class KindReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    stale: list[str] = field(default_factory=list)  # tagged, in the location, no longer wanted
    changes: list[tuple[str, list[str]]] = field(default_factory=list)  # updated objects and their fields

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "stale": len(self.stale),
            "stale_objects": self.stale,
            "updated_objects": [{"object": o, "fields": f} for o, f in self.changes],
        }


@dataclass(slots=True)
class Report:
    dry_run: bool
    kinds: dict[str, KindReport] = field(default_factory=dict)

    def total(self, what: str) -> int:
        return sum(len(r.stale) if what == "stale" else getattr(r, what) for r in self.kinds.values())

    @property
    def changes(self) -> int:
        """Objects created, updated or deleted (0 for a second push of the same blueprint)."""
        return self.total("created") + self.total("updated") + self.total("deleted")

    def as_dict(self) -> dict[str, Any]:
        totals = {w: self.total(w) for w in ("created", "updated", "unchanged", "deleted", "stale")}
        return {
            "dry_run": self.dry_run,
            "changes": self.changes,
            "totals": totals,
            "kinds": {k: r.as_dict() for k, r in self.kinds.items()},
        }


def plain(value: Any) -> Any:
    """A record's field as a comparable value: a nested object by its id, a choice by its value."""
    if isinstance(value, dict):
        return value.get("id", value.get("value"))
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _same(want: Any, have: Any) -> bool:
    if want in (None, "") and have in (None, ""):
        return True
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have or want == have
    return want == have or (want is not None and have is not None and str(want) == str(have))


def _record_key(kind: str, rec: dict[str, Any], names: dict[str, tuple[str, tuple[str, ...]]]) -> list[tuple[str, ...]]:
    """The natural keys an existing record answers to (none when it refers to objects snc does not
    know: a device type of another manufacturer, a cable to a circuit)."""

    def key_of(value: Any, of: str) -> tuple[str, ...] | None:
        hit = names.get(str(plain(value)))
        return hit[1] if hit is not None and hit[0] == of else None

    if kind == "device-types":
        maker = key_of(rec.get("manufacturer"), "manufacturers")
        return [(*maker, rec["model"])] if maker else []
    if kind in ("interfaces", "device-bays"):
        dev = key_of(rec.get("device"), "devices")
        return [(*dev, rec["name"])] if dev else []
    if kind == "cables":
        if plain(rec.get("termination_a_type")) != "dcim.interface" or plain(rec.get("termination_b_type")) != "dcim.interface":
            return []
        a = key_of(rec.get("termination_a_id"), "interfaces")
        b = key_of(rec.get("termination_b_id"), "interfaces")
        return [(*a, *b), (*b, *a)] if a and b else []  # either way round
    return [(rec["name"],)]


def _filters(kind: Kind, wants: list[Want], location: str | None) -> dict[str, Any] | None:
    """How to list the existing objects of a kind: scoped kinds by the site's location (None when
    it does not exist yet: nothing of it can), shared ones by the names snc wants."""
    if kind.scoped:
        if location is None:
            return None
        return {"location_id" if kind.name == "cables" else "location": location}
    if not wants:
        return None
    if kind.name == "device-types":
        return {"model": sorted({w.key[-1] for w in wants})}
    return {"name": sorted({w.key[0] for w in wants})}


class _Plan:
    """Ids by natural key (existing or just created), and the reverse for reading records."""

    def __init__(self, dry_run: bool) -> None:
        self.dry_run = dry_run
        self.ids: dict[tuple[str, tuple[str, ...]], str] = {}
        self.names: dict[str, tuple[str, tuple[str, ...]]] = {}

    def learn(self, kind: str, key: tuple[str, ...], ident: Any) -> None:
        self.ids[(kind, key)] = str(ident)
        self.names[str(ident)] = (kind, key)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, Ref):
            ident = self.ids.get((value.kind, value.key))
            if ident is None:
                if self.dry_run:  # would be created first: a value nothing existing has
                    return f"(new {value.kind} {' '.join(value.key)})"
                raise PushError(f"refers to {value.kind} {' '.join(value.key)!r}, which is neither there nor created")
            return ident
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value


def _diff(kind: Kind, want: dict[str, Any], have: dict[str, Any]) -> dict[str, Any]:
    """The fields to send so that ``have`` holds ``want`` (empty: nothing to do)."""
    out: dict[str, Any] = {}
    for name, value in want.items():
        if name in kind.create_only or (kind.name == "cables" and name.startswith("termination_")):
            continue  # terminations are the cable's key; a shared object's look is its owner's
        current = plain(have.get(name))
        if name == "tags" or name in kind.merge:
            now = [str(c) for c in current or []]
            missing = [v for v in value if str(v) not in now]
            if missing:
                out[name] = sorted(set(now) | {str(v) for v in value})
        elif not _same(value, current):
            out[name] = value
    return out


def push(
    api: Api,
    wants: Iterable[Want],
    *,
    dry_run: bool = False,
    prune: bool = False,
    batch: int = BATCH,
    jobs: int = 1,
    progress: Progress = NULL,
) -> Report:
    """Create and update what ``wants`` asks for (``dry_run``: only read and report); with
    ``prune``, delete snc's stale objects in the location (cables first). Up to ``jobs`` bulk
    requests of one kind go at once (a server with several workers takes them in parallel)."""
    by_kind: dict[str, list[Want]] = defaultdict(list)
    for w in wants:
        by_kind[w.kind].append(w)
    report = Report(dry_run)
    plan = _Plan(dry_run)
    location: str | None = None
    tag_id: str | None = None
    stale_ids: dict[str, list[str]] = {}
    for kind in KINDS:
        mine = by_kind.get(kind.name, [])
        rep = report.kinds[kind.name] = KindReport()
        filters = _filters(kind, mine, location)
        current: list[dict[str, Any]] = []
        if filters is not None:
            with progress.step(f"read {kind.name}"):
                current = api.read(kind.endpoint, filters)
        found: dict[tuple[str, ...], dict[str, Any]] = {}
        for rec in current:
            keys = _record_key(kind.name, rec, plan.names)
            for key in keys:
                found.setdefault(key, rec)
            if keys:
                plan.learn(kind.name, keys[0], rec["id"])
        wanted_keys = {w.key for w in mine}
        creates: list[tuple[Want, dict[str, Any]]] = []
        updates: list[tuple[Want, dict[str, Any]]] = []
        for w in mine:
            fields = {k: plan.resolve(v) for k, v in w.fields.items()}
            have = found.get(w.key)
            if have is None:
                creates.append((w, fields))
                continue
            change = _diff(kind, fields, have)
            if change:
                updates.append((w, {"id": have["id"], **change}))
                rep.changes.append((w.label, sorted(change)))
            else:
                rep.unchanged += 1
        if kind.scoped and kind.taggable and tag_id is not None:
            seen: set[str] = set()
            for rec in current:
                tagged = tag_id in {str(t) for t in plain(rec.get("tags")) or []}
                keys = _record_key(kind.name, rec, plan.names)
                if tagged and not any(k in wanted_keys for k in keys) and str(rec["id"]) not in seen:
                    seen.add(str(rec["id"]))
                    rep.stale.append(" ".join(keys[0]) if keys else str(rec.get("display") or rec["id"]))
                    stale_ids.setdefault(kind.name, []).append(str(rec["id"]))
        rep.created, rep.updated = len(creates), len(updates)
        if not dry_run:  # a dry run leaves what would be created unresolved: it refers as "(new ...)"
            _create(api, kind, creates, batch, jobs, plan, progress)
            _update(api, kind, updates, batch, jobs, progress)
        if kind.name == "tags":
            tag_id = plan.ids.get(("tags", (TAG,)))
        if kind.name == "locations" and mine:
            location = plan.ids.get(("locations", mine[0].key))
    if prune and not dry_run:
        for kind in reversed(KINDS):
            ids = stale_ids.get(kind.name, [])
            _delete(api, kind, ids, batch, jobs, progress)
            report.kinds[kind.name].deleted = len(ids)
    return report


def _call(fn: Any, kind: Kind, batch: list[Want]) -> Any:
    """Run one API call; a refusal names the endpoint and, for a bulk call, the object the server
    complained about (Nautobot answers a bad bulk request with one error object per item)."""
    try:
        return fn()
    except PushError as exc:
        where = kind.endpoint
        if isinstance(exc.detail, list) and batch:
            for item, err in zip(batch, exc.detail):
                if err:
                    raise PushError(f"{exc.message}: {err}", f"{where} {item.label}", exc.detail) from None
        elif len(batch) == 1:
            where = f"{where} {batch[0].label}"
        raise PushError(exc.message, where, exc.detail) from None


def _batches(
    kind: Kind, verb: str, items: list[Any], batch: int, jobs: int, call: Callable[[list[Any]], Any], progress: Progress
) -> list[Any]:
    """``call`` on each batch of ``items``, up to ``jobs`` at once (the objects of one kind never
    refer to each other, so their batches may go in any order), answers in batch order. The
    progress steps are taken here, on the calling thread, as the batches come back in order."""
    chunks = [items[start : start + batch] for start in range(0, len(items), batch)]
    if not chunks:
        return []
    answers: list[Any] = []
    done = 0
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(chunks)))) as pool:
        futures = [pool.submit(call, chunk) for chunk in chunks]
        try:
            for chunk, future in zip(chunks, futures):
                done += len(chunk)
                with progress.step(f"{verb} {kind.name} {done}/{len(items)}"):
                    answers.append(future.result())
        except BaseException:
            for future in futures:
                future.cancel()  # the batches not yet sent stay unsent
            raise
    return answers


def _create(
    api: Api, kind: Kind, items: list[tuple[Want, dict[str, Any]]], batch: int, jobs: int, plan: _Plan, progress: Progress
) -> None:
    def call(chunk: list[tuple[Want, dict[str, Any]]]) -> list[dict[str, Any]]:
        made = _call(lambda: api.create(kind.endpoint, [f for _, f in chunk]), kind, [w for w, _ in chunk])
        if len(made) != len(chunk):
            raise PushError(f"asked to create {len(chunk)}, the server answered {len(made)}", kind.endpoint)
        return list(made)

    chunks = [items[start : start + batch] for start in range(0, len(items), batch)]
    for chunk, made in zip(chunks, _batches(kind, "create", items, batch, jobs, call, progress)):
        for (w, _), rec in zip(chunk, made):
            plan.learn(kind.name, w.key, rec["id"])


def _delete(api: Api, kind: Kind, ids: list[str], batch: int, jobs: int, progress: Progress) -> None:
    def call(chunk: list[str]) -> None:
        _call(lambda: api.delete(kind.endpoint, chunk), kind, [])

    _batches(kind, "delete", ids, batch, jobs, call, progress)


def _update(api: Api, kind: Kind, items: list[tuple[Want, dict[str, Any]]], batch: int, jobs: int, progress: Progress) -> None:
    def call(chunk: list[tuple[Want, dict[str, Any]]]) -> None:
        _call(lambda: api.update(kind.endpoint, [f for _, f in chunk]), kind, [w for w, _ in chunk])

    _batches(kind, "update", items, batch, jobs, call, progress)


__all__ = ["KIND", "Api", "KindReport", "PushError", "Report", "plain", "push"]
