"""Provisioning: Kea's own config test accepts the rendered DHCPv4 config; every management
address the plan gives over a cable has exactly one reservation; every SONiC switch among them is
pointed (option 67) at a ZTP JSON that fetches its rendered config_db."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from functools import cache

import pytest
from conftest import BLUEPRINTS

from supernodeiac.facts.switch_facts import FabricFacts
from supernodeiac.pipeline import compile_file, render

NAMES = ["small-ib", "roce-rail-2tier"]


@cache
def _rendered(name: str):
    c = compile_file(str(BLUEPRINTS / f"{name}.yaml"))
    assert c.exit_code == 0
    files, _ = render(c, ["dhcp", "sonic"])
    return c, files


def _reservations(files) -> dict[str, list[dict]]:
    kea = json.loads(files["dhcp/kea-dhcp4.json"])
    by_address: dict[str, list[dict]] = {}
    for subnet in kea["Dhcp4"]["subnet4"]:
        net = ipaddress.ip_network(subnet["subnet"])
        for r in subnet["reservations"]:
            assert ipaddress.ip_address(r["ip-address"]) in net
            by_address.setdefault(r["ip-address"], []).append(r)
    return by_address


@pytest.mark.parametrize("name", NAMES)
def test_kea_accepts_the_config(name, tmp_path):
    kea = shutil.which("kea-dhcp4") or (shutil.which("kea-dhcp4", path="/usr/sbin:/sbin"))
    if kea is None:
        pytest.skip("kea-dhcp4 not installed (Debian: apt-get install kea-dhcp4-server)")
    _, files = _rendered(name)
    path = tmp_path / "kea-dhcp4.json"
    path.write_bytes(files["dhcp/kea-dhcp4.json"])
    run = subprocess.run([kea, "-t", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", NAMES)
def test_every_management_address_has_one_reservation(name):
    c, files = _rendered(name)
    f = c.fabric
    facts = FabricFacts(c.blueprint, c.catalogue, f)
    # The plan's addresses from the links: every management port cabled to a rack or OOB switch's access port.
    expected: dict[str, str] = {}
    arr = f.links.arrays()
    for a, ap, b, bp in zip(arr.a.tolist(), arr.a_port.tolist(), arr.b.tolist(), arr.b_port.tolist(), strict=True):
        for sw, swp, dev, devp in ((a, ap, b, bp), (b, bp, a, ap)):
            if f.devices[sw].role in ("mgmt", "mgmt-oob") and f.layouts[f.devices[dev].model].port_roles[devp] == "mgmt":
                address = facts.mgmt_address_of(sw, swp)
                if address is not None:
                    assert address not in expected, f"plan gives {address} twice"
                    expected[address] = f.devices[dev].name
    assert len(expected) > 10
    got = _reservations(files)
    assert {a: [r["hostname"] for r in rs] for a, rs in got.items()} == {a: [n] for a, n in expected.items()}
    ids = [r["client-id"] for rs in got.values() for r in rs]
    assert len(ids) == len(set(ids))
    # Every switch's eth0 address in its rendered config_db is one of them, under its own name.
    eth0 = 0
    for path, data in files.items():
        if path.startswith("sonic/"):
            for key in json.loads(data).get("MGMT_INTERFACE", {}):
                address = key.split("|")[1].split("/")[0]
                assert [r["hostname"] for r in got[address]] == [path.removeprefix("sonic/").removesuffix(".json")]
                eth0 += 1
    assert eth0 > 0


@pytest.mark.parametrize("name", NAMES)
def test_sonic_switches_get_their_ztp_json(name):
    c, files = _rendered(name)
    got = _reservations(files)
    pointed = 0
    for rs in got.values():
        (r,) = rs
        sonic = f"sonic/{r['hostname']}.json"
        boot = [o["data"] for o in r.get("option-data", []) if o["name"] == "boot-file-name"]
        assert bool(boot) == (sonic in files), r
        if boot:
            path = boot[0].split("/", 3)[3]
            ztp = json.loads(files[path])
            url = ztp["ztp"]["configdb-json"]["url"]
            assert url["source"].split("/", 3)[3] == sonic
            assert url["destination"] == "/etc/sonic/config_db.json"
            pointed += 1
    assert pointed == len([p for p in files if p.startswith("dhcp/ztp/")]) > 0


def test_provisioning_url_is_validated():
    from pydantic import ValidationError

    from supernodeiac.model.management import MgmtAddressing

    assert MgmtAddressing(network="10.0.0.0/16", provisioning_url="http://ztp.example:8080/site/").provisioning_url == (
        "http://ztp.example:8080/site"
    )
    for bad in ['http://x/"; rm -rf /', "ftp://x", "http://x/a b", "http://x?y=1"]:
        with pytest.raises(ValidationError):
            MgmtAddressing(network="10.0.0.0/16", provisioning_url=bad)
