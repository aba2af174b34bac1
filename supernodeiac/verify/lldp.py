"""Reading LLDP neighbour tables: ``lldpctl -f json`` (lldpd, on hosts and switches) and SONiC's
``show lldp table``. Each table was taken on one device (the caller says which); an entry is
(local port, remote system name, remote port ID, remote port description, line)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .errors import DiscoveryError


@dataclass(frozen=True)
class LldpEntry:
    local_port: str
    remote_system: str
    remote_port: str  # the port ID the neighbour sent (a name, an alias such as SONiC's etp1a, or a MAC)
    remote_port_descr: str
    line: int


class _Lines:
    """The line a JSON key is first written on (JSON has no line numbers of its own), found by
    searching on from the previous key's position: interfaces are looked up in file order, so
    the whole table is one pass (searching from the start each time was quadratic)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1

    def __call__(self, needle: str) -> int:
        index = self.text.find(f'"{needle}"', self.pos)
        if index < 0:
            index = self.text.find(f'"{needle}"')  # out of order: search it all (rare)
            return self.text.count("\n", 0, index) + 1 if index >= 0 else 0
        self.line += self.text.count("\n", self.pos, index)
        self.pos = index
        return self.line


def _items(value: object) -> list[tuple[str, object]]:
    """lldpd prints one entry as a mapping and several as a list of one-key mappings."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return [kv for item in value if isinstance(item, dict) for kv in item.items()]
    return []


def parse_lldpctl_json(text: str, path: str) -> list[LldpEntry]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DiscoveryError(path, exc.lineno, f"not JSON: {exc.msg}") from None
    except RecursionError:
        raise DiscoveryError(path, 1, "JSON nested too deeply for an LLDP table") from None
    except ValueError as exc:  # a number with more digits than Python converts
        raise DiscoveryError(path, 1, f"not an LLDP table: {exc}") from None
    _line_of = _Lines(text)
    lldp = doc.get("lldp") if isinstance(doc, dict) else None
    if not isinstance(lldp, dict):
        raise DiscoveryError(path, 1, "no 'lldp' object: is this `lldpctl -f json` output?")
    out = []
    for local, info in _items(lldp.get("interface", {})):
        if not isinstance(info, dict):
            raise DiscoveryError(path, _line_of(local), f"interface {local!r} is not an object")
        system = ""
        chassis = info.get("chassis", {})
        if isinstance(chassis, dict):
            named = [
                (k, v) for k, v in chassis.items() if isinstance(v, dict) and k not in ("id", "descr", "mgmt-ip", "capability")
            ]
            if named:
                system = named[0][0]
            elif isinstance(chassis.get("name"), dict):
                system = str(chassis["name"].get("value", ""))
            elif isinstance(chassis.get("name"), str):
                system = chassis["name"]
        port = info.get("port", {}) if isinstance(info.get("port"), dict) else {}
        pid = port.get("id", {})
        port_id = str(pid.get("value", "")) if isinstance(pid, dict) else str(pid)
        descr = port.get("descr", "")
        out.append(
            LldpEntry(
                local,
                system,
                port_id,
                str(descr if not isinstance(descr, dict) else descr.get("value", "")),
                _line_of(local),
            )
        )
    return out


def parse_sonic_table(text: str, path: str) -> list[LldpEntry]:
    """SONiC ``show lldp table``: a header line, a line of dashes giving the column spans, rows."""
    lines = text.splitlines()
    head = next((i for i, ln in enumerate(lines) if ln.split()[:2] == ["LocalPort", "RemoteDevice"]), None)
    if head is None or head + 1 >= len(lines) or not set(lines[head + 1].strip()) <= {"-", " "}:
        raise DiscoveryError(path, 1, "no 'LocalPort RemoteDevice RemotePortID ...' header: is this `show lldp table` output?")
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[head + 1])]
    names = [lines[head][s : e if k + 1 < len(spans) else None].strip() for k, (s, e) in enumerate(spans)]
    want = {"LocalPort", "RemoteDevice", "RemotePortID"}
    if not want <= set(names):
        raise DiscoveryError(path, head + 1, f"missing columns {sorted(want - set(names))}")
    out = []
    for number, line in enumerate(lines[head + 2 :], head + 3):
        if not line.strip():
            continue
        if set(line.strip()) <= {"-"} or line.startswith("Total entries"):
            break
        cells = {}
        for k, (s, _) in enumerate(spans):
            end = spans[k + 1][0] if k + 1 < len(spans) else None
            cells[names[k]] = line[s:end].strip()
        if not cells["LocalPort"] or not cells["RemoteDevice"]:
            raise DiscoveryError(path, number, f"row without a local port or remote device: {line.strip()[:60]!r}")
        out.append(
            LldpEntry(cells["LocalPort"], cells["RemoteDevice"], cells["RemotePortID"], cells.get("RemotePortDescr", ""), number)
        )
    return out


def looks_like_lldpctl(text: str) -> bool:
    return text.lstrip().startswith("{") and '"lldp"' in text[:2000]


def looks_like_sonic_table(text: str) -> bool:
    return any(ln.split()[:2] == ["LocalPort", "RemoteDevice"] for ln in text.splitlines()[:20])
