"""The physical stage's readings (``acceptance/<fabric>/physical.sh``) read back against
``physical.tsv``: a verdict per cable from the readings of both its ends.

Readings, in the formats the tools document:

* ``physical/<fabric>/mlxlink/<host>.<rdma device>.json``: ``mlxlink -m -c -e --json`` (NVIDIA
  Firmware Tools, mlxlink utility): ``result.output`` holds the sections "Module Info" (Vendor
  Part Number, Rx Power Current [dBm] as "v1,v2,... [low..high]", Temperature [C]),
  "Physical Counters and BER Info" (Raw Physical BER, Effective Physical BER as "15E-255",
  Symbol Errors, Effective Physical Errors, Link Down Counter), "Operational Info";
  ``result.status.code`` is 0 on success. A value may be a string, a number or {"values": [...]}.
* ``physical/<fabric>/ibdiagnet/ibdiagnet2.db_csv``: ibdiagnet's database (NVIDIA ibdiagnet user
  manual): sections between ``START_<NAME>`` and ``END_<NAME>`` lines, each a CSV header and rows.
  Read: NODES (NodeGUID, NodeDesc), PM_INFO (NodeGUID, PortNumber, SymbolErrorCounter,
  LinkDownedCounter; the ...Ext names too), CABLE_INFO (NodeGuid, PortNum, Vendor, PN, SN,
  Temperature). A switch is found by its NodeDesc: the plan's name, or Mellanox's
  ``MF0;<name>:<model>/U1``.
* ``physical/<fabric>/sonic/<switch>/eeprom.txt``: ``show interfaces transceiver eeprom --dom``
  (sonic-utilities Command Reference): a block per port, ``Ethernet0: SFP EEPROM detected``, then
  ``Vendor PN: ...``, ``RX1Power: -1.2dBm``, ``RxPowerLowAlarm : -13.9dBm``, ``Temperature: 31.2C``;
  ``fec-stats.txt``: ``show interfaces counters fec-stats`` (portstat -f: IFACE, STATE,
  FEC_CORR, FEC_UNCORR, FEC_SYMBOL_ERR, FEC_PRE_BER, FEC_POST_BER, ...), ``errors.txt``:
  ``show interfaces counters errors`` (IFACE, STATE, RX_ERR, ...): tables whose columns the
  dashed rule under the header delimits.

A file that exists but is not its tool's output is a located error (file and line); the cables
whose ends it should hold are *unreadable*, naming it. Pure: paths in, data out.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_BYTES = 64 << 20  # an ibdiagnet database of a large fabric is tens of MB; nothing larger is one


class ReadingError(ValueError):
    """A tool output that cannot be read: where (file and line) and what."""

    def __init__(self, path: Path | str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass
class Reading:
    """What one port reported (None: not reported)."""

    source: str  # the file (and line) it came from
    part: str | None = None
    present: bool = True  # a module or cable in the cage
    pre_fec_ber: float | None = None
    post_fec_ber: float | None = None
    symbol_errors: int | None = None
    link_down: int | None = None
    rx_errors: int | None = None
    rx_dbm: list[float] = field(default_factory=list)
    rx_low_alarm: float | None = None
    temperature_c: float | None = None
    state: str = ""


def _read(path: Path) -> str:
    with path.open("rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ReadingError(path, 0, f"larger than {MAX_BYTES:,} bytes: not a tool's output")
    return data.decode(errors="replace")


# -- mlxlink --------------------------------------------------------------------------------------

_FLOAT = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_RANGE = re.compile(rf"\[\s*({_FLOAT})\s*\.\.\s*({_FLOAT})\s*\]")


def _text(value: Any) -> str:
    if isinstance(value, dict) and "values" in value:
        value = value["values"]
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    return "" if value is None else str(value).strip()


def _number(text: str, what: str, where: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text.upper() in ("N/A", "NA", "-"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {what} {text[:40]!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: {what} {text[:40]!r} is not a reading")
    return value


def _count(text: str, what: str, where: str) -> int | None:
    value = _number(text, what, where)
    return None if value is None else int(value)


def _lanes(text: str, what: str, where: str) -> tuple[list[float], float | None]:
    """Per-lane values "1.886,1.989 [-10.41..6]" (dBm may be negative) and the low threshold."""
    low = None
    m = _RANGE.search(text)
    if m:
        low = float(m.group(1))
        text = text[: m.start()]
    values = []
    for cell in text.replace(" ", "").split(","):
        if not cell or cell.upper() in ("N/A", "NA"):
            continue
        if cell.lower() == "-inf":
            values.append(-math.inf)
            continue
        try:
            values.append(float(cell))
        except ValueError:
            raise ValueError(f"{where}: {what} {cell[:40]!r} is not a number") from None
    return values, low


def parse_mlxlink(text: str, path: Path | str) -> Reading:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReadingError(path, exc.lineno, f"not mlxlink --json output: {exc.msg} (column {exc.colno})") from None
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("output"), dict):
        raise ReadingError(path, 1, "no result.output object: not mlxlink --json output")
    status = result.get("status")
    if isinstance(status, dict) and str(status.get("code", 0)) not in ("0", ""):
        raise ReadingError(path, 1, f"mlxlink failed: {_text(status.get('message'))[:80]!r}")
    out = result["output"]
    module = out.get("Module Info") or {}
    counters = out.get("Physical Counters and BER Info") or {}
    operational = out.get("Operational Info") or {}
    if not isinstance(module, dict) or not isinstance(counters, dict) or not isinstance(operational, dict):
        raise ReadingError(path, 1, "a section of result.output is not an object")
    where = str(path)
    try:
        part = _text(module.get("Vendor Part Number")) or None
        rx, low = _lanes(_text(module.get("Rx Power Current [dBm]")), "Rx Power Current [dBm]", where)
        temp_text = _text(module.get("Temperature [C]"))
        temp_m = _RANGE.search(temp_text)
        temperature = _number(temp_text[: temp_m.start()] if temp_m else temp_text, "Temperature [C]", where)
        symbol = _text(counters.get("Symbol Errors")) or _text(counters.get("Effective Physical Errors"))
        return Reading(
            source=where,
            part=part if part and part.upper() != "N/A" else None,
            present=part is not None and part.upper() != "N/A",
            pre_fec_ber=_number(_text(counters.get("Raw Physical BER")), "Raw Physical BER", where),
            post_fec_ber=_number(_text(counters.get("Effective Physical BER")), "Effective Physical BER", where),
            symbol_errors=_count(symbol, "Symbol Errors", where),
            link_down=_count(_text(counters.get("Link Down Counter")), "Link Down Counter", where),
            rx_dbm=rx,
            rx_low_alarm=low,
            temperature_c=temperature,
            state=_text(operational.get("State")),
        )
    except ValueError as exc:
        raise ReadingError(path, 0, str(exc).removeprefix(where + ": ")) from None


# -- ibdiagnet ------------------------------------------------------------------------------------


@dataclass
class IbdiagDb:
    path: str
    nodes: dict[str, str]  # NodeGUID (lower-case hex) -> NodeDesc
    pm: dict[tuple[str, int], tuple[int | None, int | None, int]]  # (guid, port) -> (symbol errors, link downs, line)
    cables: dict[tuple[str, int], tuple[str, str, float | None, int]]  # (guid, port) -> (vendor, PN, temperature, line)

    def switch_ports(self) -> dict[tuple[str, int], str]:
        """(switch name from NodeDesc, port) -> NodeGUID, for every port any section lists."""
        names = {guid: switch_name(desc) for guid, desc in self.nodes.items()}
        out: dict[tuple[str, int], str] = {}
        for guid, port in (*self.pm, *self.cables):
            if guid in names:
                out[(names[guid], port)] = guid
        return out


def switch_name(desc: str) -> str:
    """The host name in a switch's NodeDesc: "MF0;leaf01:MQM9700/U1" -> "leaf01"; else the whole."""
    if ";" in desc:
        desc = desc.split(";", 1)[1]
        return desc.split(":", 1)[0].strip()
    return desc.strip()


def _guid(text: str) -> str:
    text = text.strip().lower()
    return f"{int(text, 16):016x}" if re.fullmatch(r"(0x)?[0-9a-f]{1,16}", text) else text


def parse_ibdiagnet_db(text: str, path: Path | str) -> IbdiagDb:
    sections: dict[str, tuple[list[str], list[tuple[int, list[str]]]]] = {}
    current: str | None = None
    header: list[str] | None = None
    saw_any = False
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if re.fullmatch(r"START_[A-Z0-9_]+", stripped):
            if current is not None:
                raise ReadingError(path, n, f"{stripped} inside section {current} (no END_{current})")
            current, header, saw_any = stripped[6:], None, True
            continue
        if re.fullmatch(r"END_[A-Z0-9_]+", stripped):
            if stripped[4:] != current:
                raise ReadingError(path, n, f"{stripped} without START_{stripped[4:]}")
            current = None
            continue
        if current is None:
            continue  # text between sections (ibdiagnet writes none; tolerated)
        try:
            cells = next(csv.reader(io.StringIO(line)))
        except (csv.Error, StopIteration):
            raise ReadingError(path, n, f"section {current}: not a CSV row") from None
        if header is None:
            header = [c.strip() for c in cells]
            sections[current] = (header, [])
            continue
        if len(cells) != len(header):
            raise ReadingError(path, n, f"section {current}: {len(cells)} cells where its header has {len(header)}")
        sections[current][1].append((n, cells))
    if current is not None:
        raise ReadingError(path, 0, f"section {current} has no END_{current} (a cut-off file?)")
    if not saw_any:
        raise ReadingError(path, 1, "no START_/END_ sections: not an ibdiagnet2.db_csv")

    def column(section: str, *names: str) -> Callable[[list[str]], str] | None:
        head = [h.lower() for h in sections[section][0]]
        for name in names:
            if name.lower() in head:
                k = head.index(name.lower())
                return lambda cells: cells[k]
        return None

    def need(section: str, *names: str) -> Callable[[list[str]], str]:
        found = column(section, *names)
        if found is None:
            raise ReadingError(path, 0, f"section {section} has no column {names[0]}")
        return found

    nodes: dict[str, str] = {}
    if "NODES" in sections:
        guid, desc = need("NODES", "NodeGUID", "NodeGuid"), need("NODES", "NodeDesc")
        for _n, cells in sections["NODES"][1]:
            nodes[_guid(guid(cells))] = desc(cells)
    pm: dict[tuple[str, int], tuple[int | None, int | None, int]] = {}
    where = str(path)
    if "PM_INFO" in sections:
        guid, port = need("PM_INFO", "NodeGUID", "NodeGuid"), need("PM_INFO", "PortNumber", "PortNum")
        symbol = column("PM_INFO", "SymbolErrorCounter", "SymbolErrorCounterExt")
        downed = column("PM_INFO", "LinkDownedCounter", "LinkDownedCounterExt")
        for n, cells in sections["PM_INFO"][1]:
            try:
                key = (_guid(guid(cells)), int(port(cells)))
                pm[key] = (
                    _count(symbol(cells), "SymbolErrorCounter", f"{where}:{n}") if symbol else None,
                    _count(downed(cells), "LinkDownedCounter", f"{where}:{n}") if downed else None,
                    n,
                )
            except ValueError as exc:
                raise ReadingError(path, n, str(exc).split(": ", 1)[-1]) from None
    cables: dict[tuple[str, int], tuple[str, str, float | None, int]] = {}
    if "CABLE_INFO" in sections:
        guid, port = need("CABLE_INFO", "NodeGuid", "NodeGUID"), need("CABLE_INFO", "PortNum", "PortNumber")
        vendor, pn = column("CABLE_INFO", "Vendor"), need("CABLE_INFO", "PN")
        temp = column("CABLE_INFO", "Temperature")
        for n, cells in sections["CABLE_INFO"][1]:
            try:
                degrees = temp(cells).strip().rstrip("Cc").strip() if temp else ""
                cables[(_guid(guid(cells)), int(port(cells)))] = (
                    vendor(cells).strip() if vendor else "",
                    pn(cells).strip(),
                    _number(degrees, "Temperature", f"{where}:{n}"),
                    n,
                )
            except ValueError as exc:
                raise ReadingError(path, n, str(exc).split(": ", 1)[-1]) from None
    if not pm and not cables:
        raise ReadingError(path, 0, "no PM_INFO or CABLE_INFO rows (run ibdiagnet with --get_cable_info)")
    return IbdiagDb(str(path), nodes, pm, cables)


# -- SONiC ----------------------------------------------------------------------------------------

_BLOCK = re.compile(r"^(Ethernet[0-9]+):\s*(.*)$")
_KEY = re.compile(r"^\s+([A-Za-z][A-Za-z0-9 ()/._-]*?)\s*:\s*(.*?)\s*$")
_RXPOWER = re.compile(r"^RX([0-9]+)Power$")
_DBM = re.compile(rf"^({_FLOAT}|-inf)\s*dBm$", re.IGNORECASE)


def parse_sonic_eeprom(text: str, path: Path | str) -> dict[str, Reading]:
    """Per interface: part number, Rx power per lane, its low alarm and the module temperature."""
    out: dict[str, Reading] = {}
    current: Reading | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _BLOCK.match(line)
        if m:
            detected = "not detected" not in m.group(2).lower()
            current = out[m.group(1)] = Reading(source=f"{path}:{n}", present=detected)
            continue
        k = _KEY.match(line)
        if current is None or k is None:
            continue
        key, value = k.group(1).strip(), k.group(2)
        if key == "Vendor PN":
            current.part = value or None
        elif _RXPOWER.match(key) or key in ("RxPowerLowAlarm", "Temperature"):
            if not value or value.upper() == "N/A":
                continue
            if key == "Temperature":
                try:
                    current.temperature_c = float(value.rstrip("Cc").strip())
                except ValueError:
                    raise ReadingError(path, n, f"Temperature {value[:40]!r} is not a number") from None
                continue
            dbm = _DBM.match(value)
            if dbm is None:
                raise ReadingError(path, n, f"{key} {value[:40]!r} is not a power in dBm")
            figure = -math.inf if dbm.group(1).lower() == "-inf" else float(dbm.group(1))
            if key == "RxPowerLowAlarm":
                current.rx_low_alarm = figure
            else:
                current.rx_dbm.append(figure)
    if not out:
        raise ReadingError(path, 1, "no 'EthernetN: SFP EEPROM ...' block: not show interfaces transceiver eeprom output")
    return out


def parse_sonic_table(text: str, path: Path | str, columns: tuple[str, ...]) -> dict[str, tuple[dict[str, str], int]]:
    """A portstat table (fixed-width columns under a dashed rule): per IFACE, its cells by header."""
    lines = text.splitlines()
    rule = next((k for k, line in enumerate(lines) if line.strip() and set(line.strip()) <= {"-", " "} and "-" in line), None)
    if rule is None or rule == 0:
        raise ReadingError(path, 1, "no header and dashed rule: not a show interfaces counters table")
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    # Cells are right-aligned under the rule; a cell may start before its rule segment, so each
    # column runs from just after the previous segment to the end of its own.
    bounds = [(spans[k - 1][1] if k else 0, end) for k, (_start, end) in enumerate(spans)]
    bounds[-1] = (bounds[-1][0], 10**9)
    header = [lines[rule - 1][a:b].strip() for a, b in bounds]
    missing = [c for c in columns if c not in header]
    if "IFACE" not in header or missing:
        raise ReadingError(path, rule, f"no column {', '.join(missing or ['IFACE'])} in the header")
    out: dict[str, tuple[dict[str, str], int]] = {}
    for n, line in enumerate(lines[rule + 1 :], rule + 2):
        if not line.strip():
            continue
        cells = dict(zip(header, (line[a:b].strip() for a, b in bounds), strict=True))
        if not cells["IFACE"].startswith("Ethernet"):
            raise ReadingError(path, n, f"row {line.strip()[:60]!r} names no Ethernet interface")
        out[cells["IFACE"]] = (cells, n)
    return out


# -- verdicts -------------------------------------------------------------------------------------


@dataclass
class EndResult:
    problems: list[tuple[str, str]]  # (verdict, detail)
    unread: str = ""  # why there is no reading ("" when there is one)
    unreadable: str = ""  # the located error of the file that should hold it


def _lane_slice(values: list[float], lanes: int, module_lanes: str) -> list[float]:
    if len(values) <= lanes:
        return values
    try:
        first, last = (int(x) for x in module_lanes.split("-"))
    except ValueError:
        return values
    return values[first - 1 : last] or values


def judge(row: dict[str, str], r: Reading) -> list[tuple[str, str]]:
    """The problems of one end's reading against its plan row."""
    at = f"{row['device']} {row['printed']}"
    out: list[tuple[str, str]] = []

    def limit(name: str) -> float | None:
        text = row.get(name, "")
        return float(text) if text else None

    expected, kind = row.get("part", ""), row.get("part_kind", "")
    if not r.present:
        out.append(("no-module", f"{at}: no module or cable detected (expected {expected or 'one'})"))
        return out
    if expected and r.part is not None:
        got = r.part.strip().upper()
        ok = got.startswith(expected.upper()) if kind == "family" else got == expected.upper()
        if not ok:
            out.append(("wrong-part", f"{at}: part {r.part.strip()!r} where the plan orders {expected!r}"))
    pre, post = limit("pre_fec_ber_max"), limit("post_fec_ber_max")
    if pre is not None and r.pre_fec_ber is not None and r.pre_fec_ber > pre:
        out.append(("ber", f"{at}: pre-FEC BER {r.pre_fec_ber:.2g} above the {row.get('fec') or 'FEC'} limit {pre:.2g}"))
    if post is not None and r.post_fec_ber is not None and r.post_fec_ber > post:
        out.append(("post-fec-ber", f"{at}: post-FEC BER {r.post_fec_ber:.2g} above {post:.2g}"))
    symbols, downs = int(row.get("symbol_errors_max") or 0), int(row.get("link_down_max") or 0)
    if r.symbol_errors is not None and r.symbol_errors > symbols:
        out.append(("symbol-errors", f"{at}: {r.symbol_errors} symbol errors (uncorrected), {symbols} allowed"))
    if r.rx_errors is not None and r.rx_errors > symbols:
        out.append(("symbol-errors", f"{at}: {r.rx_errors} receive errors, {symbols} allowed"))
    if r.link_down is not None and r.link_down > downs:
        out.append(("link-down", f"{at}: link went down {r.link_down} times, {downs} allowed"))
    rx = _lane_slice(r.rx_dbm, int(row.get("lanes") or 0), row.get("module_lanes", ""))
    rx_min = limit("rx_dbm_min")
    floors = [x for x in (rx_min, r.rx_low_alarm) if x is not None]
    if rx and floors:
        floor = max(floors)
        low = [(k, v) for k, v in enumerate(rx, 1) if v < floor]
        if low:
            lanes = ", ".join(f"lane {k} {v:g} dBm" for k, v in low[:4])
            whose = "the optical interface's minimum" if floor == rx_min else "the module's own low alarm"
            out.append(("low-rx-power", f"{at}: Rx power {lanes} below {floor:g} dBm ({whose}): clean or replace the fibre"))
    temp = limit("temp_c_max")
    if temp is not None and r.temperature_c is not None and r.temperature_c > temp:
        out.append(("hot", f"{at}: module at {r.temperature_c:g} C, above {temp:g} C"))
    return out


class Sources:
    """The readings of one fabric's results folder, each file read once, on first use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.root = str(folder)
        self._cache: dict[str, Any] = {}
        nics = folder / "mlxlink"
        self.mlxlink_files = set(os.listdir(nics)) if nics.is_dir() else set()  # one listing, not a stat per port

    def _load(self, key: str, path: Path, parse: Callable[[str, Path], Any]) -> Any:
        """The parsed file, None when absent, or a ReadingError (kept, so every end it holds says so)."""
        if key not in self._cache:
            if not path.is_file():
                self._cache[key] = None
            else:
                try:
                    self._cache[key] = parse(_read(path), path)
                except (ReadingError, OSError) as exc:
                    self._cache[key] = exc if isinstance(exc, ReadingError) else ReadingError(path, 0, str(exc))
        return self._cache[key]

    def ibdiagnet(self) -> IbdiagDb | ReadingError | None:
        return self._load("ibdiag", self.folder / "ibdiagnet" / "ibdiagnet2.db_csv", parse_ibdiagnet_db)

    def ports_of_ibdiagnet(self) -> dict[tuple[str, int], str]:
        if "ibdiag-ports" not in self._cache:
            db = self.ibdiagnet()
            self._cache["ibdiag-ports"] = db.switch_ports() if isinstance(db, IbdiagDb) else {}
        return self._cache["ibdiag-ports"]

    def sonic(self, switch: str, name: str) -> Any:
        base = self.folder / "sonic" / switch
        if name == "eeprom":
            return self._load(f"{switch}/eeprom", base / "eeprom.txt", parse_sonic_eeprom)
        cols = ("FEC_UNCORR", "FEC_PRE_BER", "FEC_POST_BER") if name == "fec-stats" else ("RX_ERR",)
        return self._load(f"{switch}/{name}", base / f"{name}.txt", lambda text, path: parse_sonic_table(text, path, cols))


def read_end(row: dict[str, str], sources: Sources) -> EndResult:
    tool, device, port = row["tool"], row["device"], row["port"]
    if tool == "mlxlink":
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]*", device + port):
            return EndResult([], unread=f"{device} {port}: not a plain name")
        name = f"{device}.{port}.json"
        if name not in sources.mlxlink_files:
            return EndResult([], unread=f"no mlxlink/{name}")
        path = sources.folder / "mlxlink" / name
        got = sources._load(name, path, parse_mlxlink)
        if got is None:
            return EndResult([], unread=f"no mlxlink/{name}")
        if isinstance(got, ReadingError):
            return EndResult([], unreadable=str(got))
        return EndResult(judge(row, got))
    if tool == "ibdiagnet":
        db = sources.ibdiagnet()
        if db is None:
            return EndResult([], unread="no ibdiagnet/ibdiagnet2.db_csv")
        if isinstance(db, ReadingError):
            return EndResult([], unreadable=str(db))
        try:
            ib_port = int(row["ib_port"])
        except ValueError:
            return EndResult([], unread=f"no IB port number for {device} {row['printed']}")
        guid = sources.ports_of_ibdiagnet().get((device, ib_port))
        if guid is None:
            return EndResult([], unread=f"{device} port {ib_port} is in no section of {db.path} (NodeDesc not the plan's name?)")
        r = Reading(source=db.path)
        pm = db.pm.get((guid, ib_port))
        if pm is not None:
            r.symbol_errors, r.link_down = pm[0], pm[1]
        cable = db.cables.get((guid, ib_port))
        if cable is not None:
            r.part, r.temperature_c = cable[1] or None, cable[2]
        return EndResult(judge(row, r))
    if tool == "sonic":
        eeprom = sources.sonic(device, "eeprom")
        fec = sources.sonic(device, "fec-stats")
        errors = sources.sonic(device, "errors")
        for got in (eeprom, fec, errors):
            if isinstance(got, ReadingError):
                return EndResult([], unreadable=str(got))
        if eeprom is None and fec is None:
            return EndResult([], unread=f"no sonic/{device}/eeprom.txt or fec-stats.txt")
        found: Reading | None = eeprom.get(port) if eeprom is not None else None
        if eeprom is not None and found is None:
            return EndResult([], unread=f"{port} is not in sonic/{device}/eeprom.txt")
        r = found or Reading(source=f"{sources.root}/sonic/{device}")
        try:
            if fec is not None and port in fec:
                cells, n = fec[port]
                where = f"{sources.root}/sonic/{device}/fec-stats.txt:{n}"
                r.pre_fec_ber = _number(cells["FEC_PRE_BER"], "FEC_PRE_BER", where)
                r.post_fec_ber = _number(cells["FEC_POST_BER"], "FEC_POST_BER", where)
                r.symbol_errors = _count(cells["FEC_UNCORR"], "FEC_UNCORR", where)
            if errors is not None and port in errors:
                cells, n = errors[port]
                r.rx_errors = _count(cells["RX_ERR"], "RX_ERR", f"{sources.root}/sonic/{device}/errors.txt:{n}")
        except ValueError as exc:
            return EndResult([], unreadable=str(exc))
        return EndResult(judge(row, r))
    return EndResult([], unread=f"unknown tool {tool[:20]!r}")


# -- the plan -------------------------------------------------------------------------------------

PLAN_COLUMNS = (
    "cable",
    "label",
    "end",
    "device",
    "tool",
    "port",
    "ib_port",
    "printed",
    "part",
    "part_kind",
    "lanes",
    "module_lanes",
    "fec",
    "pre_fec_ber_max",
    "post_fec_ber_max",
    "symbol_errors_max",
    "link_down_max",
    "rx_dbm_min",
    "temp_c_max",
)
_LIMITS = ("pre_fec_ber_max", "post_fec_ber_max", "rx_dbm_min", "temp_c_max", "symbol_errors_max", "link_down_max")


@dataclass
class CableVerdict:
    cable: str
    status: str  # pass | fail | missing | unreadable
    # pass, or the problems found: wrong-part, no-module, ber, post-fec-ber, symbol-errors, link-down, low-rx-power, hot
    verdict: str
    detail: str
    label: str
    fabric: str


def plan_rows(path: Path) -> list[dict[str, str]]:
    """physical.tsv's rows, each checked: every column, the figures numbers. A bad line is a
    ReadingError naming it (the plan is not one snc wrote)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            missing = [c for c in PLAN_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ReadingError(path, 1, f"no column {', '.join(missing)} (is this a plan snc render wrote?)")
            rows = []
            for row in reader:
                if None in row or any(v is None for v in row.values()):
                    raise ReadingError(path, reader.line_num, f"{len(reader.fieldnames or [])} columns expected")
                for name in _LIMITS:
                    text = row[name]
                    try:
                        ok = not text or math.isfinite(float(text))
                    except ValueError:
                        ok = False
                    if not ok:
                        raise ReadingError(path, reader.line_num, f"{name} {text[:40]!r} is not a number")
                rows.append(row)
            return rows
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ReadingError(path, 0, f"cannot read: {exc}") from None


def check_physical(tsv: Path, results: Path) -> list[CableVerdict]:
    """A verdict per cable of one fabric's physical.tsv, from ``results/physical/<fabric>/``."""
    fabric = tsv.parent.name
    sources = Sources(results / "physical" / fabric)
    by_cable: dict[str, list[tuple[dict[str, str], EndResult]]] = {}
    for row in plan_rows(tsv):
        by_cable.setdefault(row["cable"], []).append((row, read_end(row, sources)))
    out = []
    for cable, ends in by_cable.items():
        label = ends[0][0]["label"]
        problems = [p for _row, e in ends for p in e.problems]
        unreadable = sorted({e.unreadable for _row, e in ends if e.unreadable})
        unread = [f"{row['device']} {row['printed']}: {e.unread}" for row, e in ends if e.unread]
        if problems:
            verdicts = list(dict.fromkeys(v for v, _d in problems))
            status, verdict, detail = "fail", ",".join(verdicts), "; ".join(d for _v, d in problems)
        elif unreadable:
            status, verdict, detail = "unreadable", "unreadable", "; ".join(unreadable)
        elif unread:
            status, verdict, detail = "missing", "missing", "; ".join(unread)
        else:
            status, verdict, detail = "pass", "pass", f"{len(ends)} ends read"
        out.append(CableVerdict(cable, status, verdict, detail, label, fabric))
    return out
