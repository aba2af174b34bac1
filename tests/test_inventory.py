"""The blueprint's MAC inventory: Kea reserves by hw-address where an entry gives the MAC (and
still accepts the config), by the placeholder client-id elsewhere; a duplicate MAC and an unknown
device are located errors."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import render

NAME = "small-ib"


def _with_inventory(entries: str) -> str:
    return (BLUEPRINTS / f"{NAME}.yaml").read_text() + "\ninventory:\n" + entries


def _line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def _reservations(c) -> list[dict]:
    files, _ = render(c, ["dhcp"])
    kea = json.loads(files["dhcp/kea-dhcp4.json"])
    return [r for s in kea["Dhcp4"]["subnet4"] for r in s["reservations"]]


def _two_hosts() -> list[str]:
    c = compile_text((BLUEPRINTS / f"{NAME}.yaml").read_text())
    return sorted({r["hostname"] for r in _reservations(c)})[:2]


def test_reservations_by_mac_where_the_inventory_gives_it(tmp_path):
    a, b = _two_hosts()
    c = compile_text(_with_inventory(f"  {a}: {{mac: 02-00-00-AA-00-01, serial: SN001}}\n"))
    assert c.exit_code == 0, [f.message for f in c.findings]
    rs = _reservations(c)
    mine = [r for r in rs if r["hostname"] == a]
    assert [r.get("hw-address") for r in mine] == ["02:00:00:aa:00:01"] and "client-id" not in mine[0]
    assert all("client-id" in r and "hw-address" not in r for r in rs if r["hostname"] != a)
    kea = shutil.which("kea-dhcp4") or shutil.which("kea-dhcp4", path="/usr/sbin:/sbin")
    if kea is None:
        pytest.skip("kea-dhcp4 not installed (Debian: apt-get install kea-dhcp4-server)")
    files, _ = render(c, ["dhcp"])
    path = tmp_path / "kea.json"
    path.write_bytes(files["dhcp/kea-dhcp4.json"])
    run = subprocess.run([kea, "-t", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_duplicate_mac_is_a_located_error():
    a, b = _two_hosts()
    text = _with_inventory(f"  {a}: {{mac: '02:00:00:aa:00:01'}}\n  {b}: {{mac: '02:00:00:AA:00:01'}}\n")
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "inventory-mac-duplicate"]
    assert len(found) == 1 and a in found[0].message and b in found[0].message
    assert found[0].location is not None and found[0].location.line == _line_of(text, f"  {b}:")
    assert c.exit_code == 1


def test_an_unknown_device_is_a_located_error():
    text = _with_inventory("  no-such-node: {mac: '02:00:00:aa:00:09'}\n")
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "inventory-device"]
    assert len(found) == 1 and found[0].location is not None and found[0].location.line == _line_of(text, "no-such-node")


def test_a_malformed_mac_is_refused_at_parse():
    c = compile_text(_with_inventory("  x: {mac: '02:00:00:aa:00'}\n"))
    assert c.exit_code == 2 and any("MAC" in f.message for f in c.findings)
