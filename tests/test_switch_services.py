"""Switch services from the blueprint's ``services:``: every SONiC config carries them and still
passes the SONiC YANG models, also once the named secrets are written in as the secrets plan says;
no secret reaches an output; a server outside every network and a secret given inline are
located errors."""

from __future__ import annotations

import json
from functools import cache

import pytest
from conftest import BLUEPRINTS, compile_text

from supernodeiac.pipeline import compile_file, render

NAME = "roce-rail-2tier"
SECRET_NAMES = {"tacacs/shared-key", "snmp/monitor-auth", "snmp/monitor-priv"}


@cache
def _files() -> dict[str, bytes]:
    c = compile_file(str(BLUEPRINTS / f"{NAME}.yaml"))
    assert c.exit_code == 0
    files, _ = render(c, ["sonic"])
    return files


def _configs() -> dict[str, dict]:
    return {p: json.loads(v) for p, v in _files().items() if p.startswith("sonic/")}


def test_every_switch_gets_the_services():
    b = compile_file(str(BLUEPRINTS / f"{NAME}.yaml")).blueprint
    s = b.services
    assert s is not None
    for path, cfg in _configs().items():
        assert sorted(cfg["NTP_SERVER"]) == sorted(s.ntp), path
        assert sorted(cfg["SYSLOG_SERVER"]) == [x.address for x in s.syslog], path
        assert sorted(cfg["DNS_NAMESERVER"]) == sorted(s.dns), path
        assert s.tacacs is not None
        servers = cfg["TACPLUS_SERVER"]
        assert sorted(servers, key=lambda a: -int(servers[a]["priority"])) == s.tacacs.servers, path
        # The mgmt VRF where eth0 carries the address; the default VRF for a switch managed in-band.
        on_eth0 = "MGMT_INTERFACE" in cfg
        assert cfg["MGMT_VRF_CONFIG"]["vrf_global"]["mgmtVrfEnabled"] == ("true" if on_eth0 else "false"), path
        vrf = "mgmt" if on_eth0 else "default"
        assert cfg["NTP"]["global"]["vrf"] == vrf and all(v["vrf"] == vrf for v in servers.values()), path


def test_no_secret_in_any_output():
    """Only the names travel: the plan names each secret, no config holds a passkey or a password."""
    plan = json.loads(_files()["services/secrets.json"])
    named = {n for e in plan["entries"] for n in e["secret_fields"].values()} | {
        e["key_secret"] for e in plan["entries"] if "key_secret" in e
    }
    assert named == SECRET_NAMES
    for path, cfg in _configs().items():
        assert "passkey" not in cfg["TACPLUS"]["global"], path
        assert "AAA" not in cfg and "SNMP_USER" not in cfg and "SNMP_COMMUNITY" not in cfg, path
        text = _files()[path].decode()
        assert not any(n in text for n in SECRET_NAMES), path


def _inject(cfg: dict, plan: dict) -> dict:
    """What the operator does: every plan entry written in, each named secret resolved."""
    out = json.loads(json.dumps(cfg))
    for e in plan["entries"]:
        key = e.get("key") or f"community{len(e['key_secret'])}"
        entry = out.setdefault(e["table"], {}).setdefault(key, {})
        entry.update(e["fields"])
        entry.update({field: f"resolved-{len(name)}-value" for field, name in e["secret_fields"].items()})
    return out


libyang = pytest.importorskip("libyang", reason="PyPI libyang==2.7.1 (needs Debian libyang2-dev) validates config_db")
from helpers.sonic_yang import validate  # noqa: E402


def test_configs_with_services_pass_the_yang_models():
    plan = json.loads(_files()["services/secrets.json"])
    configs = _configs()
    picked = sorted(configs)[:: max(1, len(configs) // 6)]  # every kind of switch; all are checked by test_sonic
    for path in picked:
        validate(configs[path])
        validate(_inject(configs[path], plan))  # and once the secrets are in


def test_yang_rejects_a_service_the_models_forbid():
    """The models do read the services' tables: the mgmt VRF on a server without the VRF enabled fails."""
    cfg = next(c for c in _configs().values() if "MGMT_INTERFACE" not in c)
    bad = json.loads(json.dumps(cfg))
    bad["SYSLOG_SERVER"]["10.10.0.21"]["vrf"] = "mgmt"
    with pytest.raises(libyang.LibyangError):
        validate(bad)


def _blueprint(services: str) -> str:
    text = (BLUEPRINTS / f"{NAME}.yaml").read_text()
    head, _, _ = text.partition("\nservices:\n")
    return head + "\nservices:\n" + services


def _line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_server_outside_every_network_is_a_located_error():
    text = _blueprint("  networks: [10.10.0.0/24]\n  ntp: [10.10.0.11, 192.0.2.7]\n")
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "service-address"]
    assert len(found) == 1 and "192.0.2.7" in found[0].message
    assert found[0].location is not None and found[0].location.line == _line_of(text, "192.0.2.7")
    assert c.exit_code == 1


def test_a_dhcp_server_outside_every_network_is_a_located_error():
    text = _blueprint("  networks: [10.10.0.0/24]\n  dhcp:\n    - 10.10.0.67\n    - 198.51.100.9\n")
    c = compile_text(text)
    found = [f for f in c.findings if f.rule == "service-address"]
    assert len(found) == 1 and "198.51.100.9" in found[0].message
    assert found[0].location is not None and found[0].location.line == _line_of(text, "198.51.100.9")
    assert c.exit_code == 1


def test_a_secret_given_inline_is_a_located_error():
    text = _blueprint(
        "  networks: [10.10.0.0/24]\n  tacacs:\n    servers: [10.10.0.31]\n    secret: tacacs/key\n    passkey: hunter2\n"
        "  snmp:\n    communities:\n      - {secret: snmp/ro, community: public}\n"
    )
    c = compile_text(text)
    found = sorted((f for f in c.findings if f.rule == "secret-inline"), key=lambda f: f.location.line if f.location else 0)
    assert [f.location.line for f in found if f.location] == [_line_of(text, "passkey"), _line_of(text, "community: public")]
    assert c.exit_code == 1


def test_the_management_network_counts_as_reachable():
    c = compile_text(_blueprint("  ntp: [10.200.0.5]\n"))
    assert not [f for f in c.findings if f.rule == "service-address"]
