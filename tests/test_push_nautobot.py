"""`snc push nautobot`: the objects a Fabric asks for, the sync planner against an in-memory
Nautobot (what the REST API stores and answers, depth 0), and the command's errors. The real
server is tests/test_push_nautobot_live.py (slow)."""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections import Counter
from functools import cache
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, compile_text, shipped

from supernodeiac.cli import main
from supernodeiac.push import KINDS, PushError, Want, push, wanted
from supernodeiac.push.nautobot_objects import CM_LIMIT, Ref, _cable_length
from supernodeiac.push.sync import plain

SECRET = "0123456789abcdef-not-printed-ever"


class FakeNautobot:
    """What Nautobot's API keeps and answers, for the fields snc sends: references stored as
    ``{"id": ...}`` (depth 0), choices as ``{"value": ...}`` (as the real API nests them), lists
    of references as lists of those; the filters snc lists by."""

    CHOICES = frozenset({"type", "face", "width", "length_unit", "subdevice_role"})

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, dict[str, Any]]] = {k.endpoint: {} for k in KINDS}
        self.ids = itertools.count(1)
        self.calls: Counter[str] = Counter()

    def _store(self, endpoint: str, obj: dict[str, Any]) -> dict[str, Any]:
        rec: dict[str, Any] = {}
        for k, v in obj.items():
            if k in ("tags",):
                rec[k] = [{"id": t} for t in v]
            elif k in ("content_types",):
                rec[k] = list(v)
            elif k in self.CHOICES and v not in (None, ""):
                rec[k] = {"value": v, "label": str(v)}
            elif isinstance(v, str) and v.startswith("id-"):
                rec[k] = {"id": v, "object_type": "x", "url": "http://x"}
            else:
                rec[k] = v
        return rec

    def add(self, endpoint: str, obj: dict[str, Any]) -> str:
        ident = f"id-{next(self.ids)}"
        self.rows[endpoint][ident] = {"id": ident, **self._store(endpoint, obj)}
        return ident

    def _location_of(self, endpoint: str, rec: dict[str, Any]) -> str | None:
        if endpoint in ("dcim/interfaces", "dcim/device-bays"):
            dev = self.rows["dcim/devices"].get(plain(rec["device"]))
            return plain(dev["location"]) if dev else None
        if endpoint == "dcim/cables":
            iface = self.rows["dcim/interfaces"].get(plain(rec["termination_a_id"]))
            return self._location_of("dcim/interfaces", iface) if iface else None
        return plain(rec.get("location"))

    def read(self, endpoint: str, filters: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls[f"read {endpoint}"] += 1
        out = []
        for rec in self.rows[endpoint].values():
            if "name" in filters and rec.get("name") not in filters["name"]:
                continue
            if "model" in filters and rec.get("model") not in filters["model"]:
                continue
            where = filters.get("location", filters.get("location_id"))
            if where is not None and self._location_of(endpoint, rec) != where:
                continue
            out.append(json.loads(json.dumps(rec)))
        return out

    def create(self, endpoint: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.calls[f"create {endpoint}"] += 1
        return [{"id": self.add(endpoint, o)} for o in objects]

    def update(self, endpoint: str, objects: list[dict[str, Any]]) -> None:
        self.calls[f"update {endpoint}"] += 1
        for o in objects:
            fields = {k: v for k, v in o.items() if k != "id"}
            self.rows[endpoint][o["id"]].update(self._store(endpoint, fields))

    def delete(self, endpoint: str, ids: list[str]) -> None:
        self.calls[f"delete {endpoint}"] += 1
        for i in ids:
            del self.rows[endpoint][i]

    def writes(self) -> int:
        return sum(n for call, n in self.calls.items() if not call.startswith("read"))


@cache
def _wanted(name: str) -> tuple[Want, ...]:
    return tuple(wanted(shipped(name).render_context()))


def _wants(name: str) -> list[Want]:
    """The objects a shipped blueprint asks for, computed once per worker; fresh copies (tests change them)."""
    return [Want(w.kind, w.key, dict(w.fields)) for w in _wanted(name)]


def _count(wants: list[Want]) -> Counter[str]:
    return Counter(w.kind for w in wants)


def test_small_ib_objects_match_the_fabric():
    f = shipped("small-ib").fabric
    wants = _wants("small-ib")
    counts = _count(wants)
    cables = [link for link in f.links.links() if link.kind == "cable"]
    ports = {(link.a, link.a_port) for link in cables} | {(link.b, link.b_port) for link in cables}
    assert counts["devices"] == len(f.devices) == 59
    assert counts["racks"] == len(f.racks)
    assert counts["interfaces"] == len(ports)
    assert counts["cables"] == len(cables)
    assert counts["device-bays"] == 0
    assert counts["locations"] == 1
    # every key is unique within its kind, and every reference names a wanted object
    keys = {(w.kind, w.key) for w in wants}
    assert len(keys) == len(wants)
    refs = [v for w in wants for v in w.fields.values() if isinstance(v, Ref)]
    refs += [r for w in wants for v in w.fields.values() if isinstance(v, list) for r in v if isinstance(r, Ref)]
    assert refs and all((r.kind, r.key) in keys for r in refs)
    # both ends of every cable are wanted interfaces, with Nautobot's choice values
    cable = next(w for w in wants if w.kind == "cables" and w.fields["label"] == "gpu-0001-mlx5_0")
    assert cable.key == ("gpu-0001", "mlx5_0", "ib-leaf-su001-01", "IB1/1/1")
    assert cable.fields["type"] == "mmf" and cable.fields["length_unit"] == "cm"
    iface = next(w for w in wants if w.kind == "interfaces" and w.key == ("ib-leaf-su001-01", "IB1/1/1"))
    assert iface.fields["type"] == "infiniband-ndr" and iface.fields["speed"] == 400_000_000


def test_nebula_boards_sit_in_device_bays_of_their_chassis():
    f = shipped("nebula-x128-ib").fabric
    wants = _wants("nebula-x128-ib")
    boards = [d for d in f.devices if d.chassis >= 0]
    bays = [w for w in wants if w.kind == "device-bays"]
    assert boards and len(bays) == len(boards)
    by_board = {w.fields["installed_device"].key[0]: w for w in bays}
    for d in boards:
        bay = by_board[d.name]
        assert bay.fields["device"] == Ref("devices", (f.devices[d.chassis].name,))
        assert bay.fields["name"] == d.slot
    devices = {w.key[0]: w for w in wants if w.kind == "devices"}
    types = {w.key[1]: w for w in wants if w.kind == "device-types"}
    for d in boards:  # a board has no rack place of its own; its type is a child, its chassis's a parent
        assert "rack" not in devices[d.name].fields and "position" not in devices[d.name].fields
        assert types[d.model].fields["subdevice_role"] == "child" and types[d.model].fields["u_height"] == 0
        assert types[f.devices[d.chassis].model].fields["subdevice_role"] == "parent"


@pytest.mark.parametrize(
    ("metres", "expected"),
    [(0.43335, (44, "cm")), (2.0, (200, "cm")), (8.97828, (898, "cm")), (CM_LIMIT / 100 + 0.5, (329, "m"))],
)
def test_cable_length_rounds_up_in_whole_units(metres, expected):
    length, unit = _cable_length(metres)
    assert (length, unit) == expected
    assert (length / 100 if unit == "cm" else length) >= metres  # never shorter than the run


def test_push_creates_then_a_second_push_changes_nothing():
    wants = _wants("small-ib")
    api = FakeNautobot()
    first = push(api, wants, batch=100, jobs=3)  # batches in parallel: ids still land on their objects
    counts = _count(wants)
    for kind in KINDS:
        assert first.kinds[kind.name].created == counts[kind.name], kind.name
        assert len(api.rows[kind.endpoint]) == counts[kind.name]
    # bulk: one request per batch of 100, not one per object
    assert api.calls["create dcim/interfaces"] == math.ceil(counts["interfaces"] / 100)
    devices = {i: r["name"] for i, r in api.rows["dcim/devices"].items()}
    on = Counter(devices[r["device"]["id"]] for r in api.rows["dcim/interfaces"].values())
    assert on == Counter(w.key[0] for w in wants if w.kind == "interfaces")
    tag = next(iter(api.rows["extras/tags"]))
    assert all({"id": tag} in r["tags"] for r in api.rows["dcim/cables"].values())
    writes = api.writes()
    second = push(api, _wants("small-ib"))
    assert second.changes == 0, second.as_dict()
    assert second.total("unchanged") == len(wants)
    assert api.writes() == writes


def test_a_changed_object_updates_only_that_object_and_field():
    api = FakeNautobot()
    push(api, _wants("small-ib"))
    wants = _wants("small-ib")
    cable = next(w for w in wants if w.kind == "cables")
    cable.fields = {**cable.fields, "length": cable.fields["length"] + 100}
    report = push(api, wants)
    assert report.changes == 1
    assert report.kinds["cables"].changes == [(cable.label, ["length"])]


def test_dry_run_reads_and_writes_nothing():
    api = FakeNautobot()
    report = push(api, _wants("small-ib"), dry_run=True)
    assert api.writes() == 0
    assert report.total("created") == len(_wants("small-ib"))


def test_nothing_untagged_is_deleted_and_tagged_stale_only_with_prune():
    api = FakeNautobot()
    push(api, _wants("small-ib"))
    tag = next(iter(api.rows["extras/tags"]))
    loc = next(iter(api.rows["dcim/locations"]))
    dtype = next(iter(api.rows["dcim/device-types"]))
    role = next(iter(api.rows["extras/roles"]))
    common = {"device_type": dtype, "role": role, "location": loc}
    theirs = api.add("dcim/devices", {"name": "their-server", **common, "tags": []})
    ours = api.add("dcim/devices", {"name": "gone-from-blueprint", **common, "tags": [tag]})
    # a shared object keeps the content types others gave it; snc's are merged in, never removed
    status = next(iter(api.rows["extras/statuses"].values()))
    status["content_types"].append("ipam.prefix")
    report = push(api, _wants("small-ib"))
    assert report.changes == 0
    assert report.kinds["devices"].stale == ["gone-from-blueprint"]
    assert theirs in api.rows["dcim/devices"] and ours in api.rows["dcim/devices"]
    pruned = push(api, _wants("small-ib"), prune=True)
    assert pruned.kinds["devices"].deleted == 1
    assert ours not in api.rows["dcim/devices"] and theirs in api.rows["dcim/devices"]
    assert "ipam.prefix" in status["content_types"]


def test_others_tags_stay_when_snc_tags_an_object_it_finds():
    api = FakeNautobot()
    push(api, _wants("small-ib"))
    rack = next(iter(api.rows["dcim/racks"].values()))
    rack["tags"] = [{"id": "id-their-tag"}]  # someone re-tagged the rack: snc's tag is put back beside theirs
    report = push(api, _wants("small-ib"))
    assert report.changes == 1 and report.kinds["racks"].changes[0][1] == ["tags"]
    assert {t["id"] for t in rack["tags"]} == {"id-their-tag", next(iter(api.rows["extras/tags"]))}


def test_a_refused_object_is_named():
    class Refusing(FakeNautobot):
        def create(self, endpoint: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
            if endpoint == "dcim/devices":
                errors: list[dict[str, Any]] = [{} for _ in objects]
                errors[2] = {"position": ["U2 is already occupied"]}
                raise PushError("creating dcim/devices: HTTP 400 Bad Request", detail=errors)
            return super().create(endpoint, objects)

    wants = _wants("small-ib")
    third = sorted(w.key for w in wants if w.kind == "devices")[2]
    with pytest.raises(PushError) as err:
        push(Refusing(), wants)
    assert str(err.value).startswith(f"dcim/devices {third[0]}: creating dcim/devices: HTTP 400")
    assert "U2 is already occupied" in str(err.value)


def _cli(*args: str, env: dict[str, str] | None = None) -> Any:
    result = CliRunner().invoke(main, ["push", "nautobot", *args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    assert SECRET not in result.output  # the token is never printed
    return result


SMALL = str(BLUEPRINTS / "small-ib.yaml")


def test_cli_unreachable_server_is_one_line_and_exit_1():
    pytest.importorskip("pynautobot", reason="pynautobot not installed (pip install '.[nautobot]')")
    result = _cli(SMALL, "--url", "http://127.0.0.1:9", "--token-env", "SNC_TEST_TOKEN", env={"SNC_TEST_TOKEN": SECRET})
    assert result.exit_code == 1
    assert "cannot reach Nautobot at http://127.0.0.1:9" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--url", "ftp://nautobot.example", "--token", SECRET], "--url must be an http:// or https:// URL"),
        (["--url", f"http://admin:{SECRET}@nautobot.example", "--token", SECRET], "base URL only"),
        (["--url", "http://nautobot.example", "--token-env", "SNC_TEST_NO_SUCH_VAR"], "no API token: set SNC_TEST_NO_SUCH_VAR"),
    ],
)
def test_cli_bad_arguments_exit_2(args, message):
    result = _cli(SMALL, *args)
    assert result.exit_code == 2 and message in result.output


def test_cli_says_how_to_install_pynautobot(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynautobot", None)  # import fails as if it were not installed
    result = _cli(SMALL, "--url", "http://nautobot.example", "--token", SECRET)
    assert result.exit_code == 2
    assert "pip install 'supernodeiac[nautobot]'" in result.output


def grown_small_ib() -> str:
    """small-ib with a 17th node (and the fifth compute rack it needs)."""
    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    grown = text.replace("    count: 16\n", "    count: 17\n", 1).replace("{name: A, racks: 4,", "{name: A, racks: 5,", 1)
    assert grown.count("17") > text.count("17")
    return grown


def test_growing_the_blueprint_creates_only_the_new_objects():
    api = FakeNautobot()
    push(api, _wants("small-ib"))
    grown = compile_text(grown_small_ib(), "small-ib.yaml")
    report = push(api, list(wanted(grown.render_context())))
    created = {k: r.created for k, r in report.kinds.items() if r.created}
    # one node, its rack's management switch and three PDUs; their cabled ports and cables
    assert created == {"racks": 1, "devices": 5, "interfaces": 28, "cables": 14}
    assert report.total("updated") == 0 and report.total("stale") == 0


def test_cli_pushes_reports_and_pushes_again_with_no_change(monkeypatch):
    pytest.importorskip("pynautobot", reason="pynautobot not installed (pip install '.[nautobot]')")
    server = FakeNautobot()

    class Connected(FakeNautobot):
        def __new__(cls, url: str, token: str) -> FakeNautobot:  # type: ignore[misc]
            assert token == SECRET
            return server

    server.status = lambda: {"nautobot-version": "2.4.44"}  # type: ignore[attr-defined]
    monkeypatch.setattr("supernodeiac.push.NautobotApi", Connected)
    args = (SMALL, "--url", "http://nautobot.example", "--token-env", "SNC_TEST_TOKEN")
    env = {"SNC_TEST_TOKEN": SECRET}
    total = len(_wants("small-ib"))  # 1,493: 59 devices, 938 interfaces, 469 cables and what they refer to
    dry = _cli(*args, "--dry-run", env=env)
    assert dry.exit_code == 0 and server.writes() == 0
    assert f"would change {total} objects" in dry.output and "dry run: nothing written" in dry.output
    first = _cli(*args, "--format", "json", env=env)
    doc = json.loads(first.stdout)
    assert doc["changes"] == doc["totals"]["created"] == total and doc["nautobot_version"] == "2.4.44"
    assert doc["kinds"]["cables"]["created"] == 469
    again = _cli(*args, env=env)
    assert again.exit_code == 0 and "changed 0 objects" in again.output and f"{total} unchanged" in again.output
