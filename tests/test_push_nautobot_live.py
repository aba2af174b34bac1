"""`snc push nautobot` against a real Nautobot (slow): the server from tests/helpers/nautobot_server.py
(its own venv, PostgreSQL and Redis on loopback), started once for the session; skipped with the
reason where it cannot start (no PostgreSQL, no Redis, no package index).

Pushes small-ib and nebula-x128-ib through the command, counts devices, interfaces, cables and
device bays through the API against the Fabric, pushes again and sees 0 changes, then grows
small-ib by a node and sees only the new objects created.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import BLUEPRINTS, shipped
from helpers.nautobot_server import NautobotServer, Unavailable
from test_push_nautobot import grown_small_ib

from supernodeiac.cli import main

pytestmark = pytest.mark.slow
pynautobot = pytest.importorskip("pynautobot", reason="pynautobot not installed (pip install '.[nautobot]')")


@pytest.fixture(scope="session")
def nautobot() -> Iterator[NautobotServer]:
    """A fresh Nautobot for the session; ``SNC_NAUTOBOT_URL`` (and ``SNC_NAUTOBOT_TOKEN``) names a
    running throwaway one instead (``python -m tests.helpers.nautobot_server`` starts one)."""
    if os.environ.get("SNC_NAUTOBOT_URL"):
        running = NautobotServer(Path(tempfile.gettempdir()))
        running.url = os.environ["SNC_NAUTOBOT_URL"].rstrip("/")
        running.token = os.environ.get("SNC_NAUTOBOT_TOKEN", running.token)
        yield running
        return
    server = NautobotServer.in_temp()
    try:
        server.start()
    except Unavailable as exc:
        server.stop()
        pytest.skip(f"no Nautobot here: {exc}")
    print(f"Nautobot up at {server.url} in {server.started_s:.0f} s")
    yield server
    server.stop()
    shutil.rmtree(server.root, ignore_errors=True)


def _push(server: NautobotServer, blueprint: Path | str, *extra: str) -> dict[str, Any]:
    began = time.monotonic()
    result = CliRunner().invoke(
        main,
        ["push", "nautobot", str(blueprint), "--url", server.url, "--token-env", "SNC_TOKEN", "--format", "json", *extra],
        env={"SNC_TOKEN": server.token},
    )
    assert result.exit_code == 0, result.output
    assert server.token not in result.output
    doc = json.loads(result.stdout)
    doc["seconds"] = time.monotonic() - began
    print(f"push {Path(blueprint).name}: {doc['changes']} changes in {doc['seconds']:.1f} s")
    return doc


def _count(server: NautobotServer, endpoint: str, **filters: str) -> int:
    api = pynautobot.api(server.url, token=server.token)
    app, name = endpoint.split("/")
    return int(getattr(getattr(api, app), name.replace("-", "_")).count(**filters))


def _fabric_counts(name: str) -> dict[str, int]:
    f = shipped(name).fabric
    cables = [link for link in f.links.links() if link.kind == "cable"]
    ports = {(link.a, link.a_port) for link in cables} | {(link.b, link.b_port) for link in cables}
    return {
        "devices": len(f.devices),
        "racks": len(f.racks),
        "interfaces": len(ports),
        "cables": len(cables),
        "device-bays": sum(1 for d in f.devices if d.chassis >= 0),
    }


@pytest.mark.parametrize("name", ["small-ib", "nebula-x128-ib"])
def test_push_counts_then_nothing_changes(nautobot, name):
    site = shipped(name).blueprint.site.name or shipped(name).blueprint.metadata.name
    first = _push(nautobot, BLUEPRINTS / f"{name}.yaml")
    want = _fabric_counts(name)
    for kind, n in want.items():
        assert first["kinds"][kind]["created"] == n, kind
    assert _count(nautobot, "dcim/devices", location=site) == want["devices"]
    assert _count(nautobot, "dcim/racks", location=site) == want["racks"]
    assert _count(nautobot, "dcim/interfaces", location=site) == want["interfaces"]
    assert _count(nautobot, "dcim/cables", location=site) == want["cables"]
    assert _count(nautobot, "dcim/device-bays", location=site) == want["device-bays"]
    if want["device-bays"]:  # every bay holds its board
        assert _count(nautobot, "dcim/device-bays", location=site, installed_device__isnull="false") == want["device-bays"]
    second = _push(nautobot, BLUEPRINTS / f"{name}.yaml")
    assert second["changes"] == 0, {k: v for k, v in second["kinds"].items() if v["created"] or v["updated"]}
    assert second["totals"]["unchanged"] == first["totals"]["created"] + first["totals"]["unchanged"]


def test_growing_small_ib_creates_only_the_new_objects(nautobot, tmp_path):
    _push(nautobot, BLUEPRINTS / "small-ib.yaml")  # there already when the test above ran first
    grown = tmp_path / "small-ib.yaml"
    grown.write_text(grown_small_ib())
    report = _push(nautobot, grown)
    created = {k: v["created"] for k, v in report["kinds"].items() if v["created"]}
    assert created == {"racks": 1, "devices": 5, "interfaces": 28, "cables": 14}
    assert report["totals"]["updated"] == 0
    assert _push(nautobot, grown)["changes"] == 0
    # back to 16 nodes: the 17th node's objects are stale (tagged, reported), deleted only with --prune
    back = _push(nautobot, BLUEPRINTS / "small-ib.yaml")
    assert back["changes"] == 0 and back["kinds"]["devices"]["stale"] == 5
    pruned = _push(nautobot, BLUEPRINTS / "small-ib.yaml", "--prune")
    assert pruned["kinds"]["devices"]["deleted"] == 5 and pruned["kinds"]["cables"]["deleted"] == 14
    assert _count(nautobot, "dcim/devices", location="small-ib") == 59
