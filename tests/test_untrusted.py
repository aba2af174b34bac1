"""Nothing a blueprint says runs on a host: free text from the catalogue and the naming templates
reaches the generated scripts and env files only as data, each value one argument.

The scripts are run for real with bash, against a fake SSH that runs the remote command line
in a local bash (as sshd hands it to the login shell) and stub perftest tools that record their
argv; a payload that escaped its quoting would create the canary file.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BLUEPRINTS, ROOT, compile_text, copy_of_shipped_render

from supernodeiac.outputs.csv_safe import tsv_cell, tsv_line

# Shell, XML, Markdown and quoting payloads that are printable, so text fields may hold them.
PRINTABLE_PAYLOAD = "$(touch CANARY) `touch CANARY` ';touch CANARY;' \"<x>&amp;</x>\" **md** | [l](u) ${IFS}"
CONTROL = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))] + ["\u2028", "\u2029"]
# The blueprints whose every string field (and that of every catalogue entry they use) carries
# payloads in the slow test below: InfiniBand with UFM, and RoCE (SONiC configs, NIC layouts with
# RDMA device names, SNMP, syslog and TACACS+ settings, the fabric's address pools).
PAYLOAD_BLUEPRINTS = ("small-ib", "roce-rail-2tier")


def test_tsv_cells_hold_no_control_character():
    for ch in CONTROL:
        line = tsv_line([f"osfp{ch}gpu-0009{ch}x;id>PWNED;#", "b"])
        assert line.split("\t") == ["osfp gpu-0009 x;id>PWNED;#", "b"], repr(ch)
        assert not re.search("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]", line)
        assert tsv_cell(ch + "x") == " x"


def _render(tmp_path: Path, text: str) -> Path:
    """``snc render`` of ``text`` in its own process; a shipped blueprint unchanged is the shared
    render, copied (the same bytes and modes: the tests then edit the plan or run the scripts)."""
    for shipped in PAYLOAD_BLUEPRINTS:
        if text == (BLUEPRINTS / f"{shipped}.yaml").read_text():
            return copy_of_shipped_render(shipped, tmp_path / "out")
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "supernodeiac", "render", str(bp), "-o", str(out)], env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def _fake_host(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose SSH runs the remote line in bash (in a scratch folder, where a
    payload's `touch CANARY` would land) and whose ib_write_* record their argv, one file per call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    calls.mkdir()
    (bin_dir / "fake-ssh").write_text(
        '#!/bin/bash\nhost=$1; shift\ncd "$CANARY_DIR" && exec bash -c "$*"\n'  # ssh joins its words with spaces
    )
    (bin_dir / "ib_write_bw").write_text(
        '#!/bin/bash\nf=$(mktemp "$CALLS/call.XXXXXX")\nprintf "%s\\0" "$(basename "$0")" "$@" >"$f"\n'
    )
    (bin_dir / "ib_write_lat").symlink_to("ib_write_bw")
    for tool in ("ping", "nvidia-smi", "amd-smi"):  # the uplink and scale-up stages' tools
        (bin_dir / tool).symlink_to("ib_write_bw")
    (bin_dir / "sleep").write_text("#!/bin/bash\n")  # the script waits 2 s for each server to listen
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    canary_dir = tmp_path / "host"
    canary_dir.mkdir()
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "SSH": str(bin_dir / "fake-ssh"),
        "CALLS": str(calls),
        "CANARY_DIR": str(canary_dir),
        "DURATION": "1",
    }
    return env, canary_dir


def _calls(env: dict[str, str]) -> list[list[str]]:
    out = []
    for p in sorted(Path(env["CALLS"]).iterdir()):
        out.append(p.read_bytes().split(b"\0")[:-1])
    return [[a.decode() for a in c] for c in out]


def test_perftest_hands_each_value_as_one_argument(tmp_path):
    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    literal = PRINTABLE_PAYLOAD.replace("{", "{{").replace("}", "}}")
    text += "\nnaming:\n  cable_label: " + json.dumps("{a}:{a_port} > {b}:{b_port} " + literal) + "\n"
    out = _render(tmp_path, text)
    folder = out / "acceptance" / "ib"
    script = folder / "perftest.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert PRINTABLE_PAYLOAD.split()[0] in (folder / "perftest.tsv").read_text()  # the payload is in the plan
    env, canary_dir = _fake_host(tmp_path)
    r = subprocess.run(["bash", str(script), str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not (canary_dir / "CANARY").exists()
    rows = [line.split("\t") for line in (folder / "perftest.tsv").read_text().splitlines()[1:]]
    calls = _calls(env)
    assert len(calls) == 4 * len(rows)
    expected = set()
    for row in rows:
        sdev, cdev, server = row[5], row[8], row[4]
        expected.add(("ib_write_bw", "-d", sdev, "-i", "1", "-F", "--report_gbits", "-D", "1"))
        expected.add(("ib_write_bw", "-d", cdev, "-i", "1", "-F", "--report_gbits", "-D", "1", server))
    got = {tuple(c[:9]) + tuple(c[11:]) for c in calls if c[0] == "ib_write_bw"}
    assert got == expected


@pytest.mark.parametrize(
    "value",
    [
        "x;touch CANARY",
        "$(touch CANARY)",
        "-oProxyCommand=touch CANARY",
        "mlx5_0\x1fgpu-0009\x1fx;touch CANARY;#",
        "mlx5 0",
    ],
)
def test_perftest_refuses_a_plan_line_that_is_not_names(tmp_path, value):
    """A plan edited by hand (or made by an older snc) with shell text in a host or device field:
    the line is reported and skipped, never run."""
    out = _render(tmp_path, (BLUEPRINTS / "small-ib.yaml").read_text())
    folder = out / "acceptance" / "ib"
    plan = folder / "perftest.tsv"
    lines = plan.read_text().splitlines()
    cells = lines[1].split("\t")
    cells[5] = value
    plan.write_text("\n".join([lines[0], "\t".join(cells)]) + "\n")
    env, canary_dir = _fake_host(tmp_path)
    r = subprocess.run(["bash", str(folder / "perftest.sh"), str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "perftest.tsv:2:" in r.stderr and "line skipped" in r.stderr
    assert _calls(env) == []
    assert not (canary_dir / "CANARY").exists()


def test_perftest_keeps_empty_cells_in_place(tmp_path):
    """Empty rail and via cells do not shift the fields after them (bash's read would merge tabs)."""
    out = _render(tmp_path, (BLUEPRINTS / "small-ib.yaml").read_text())
    folder = out / "acceptance" / "ib"
    plan = folder / "perftest.tsv"
    lines = plan.read_text().splitlines()
    cells = lines[1].split("\t")
    cells[2] = ""  # rail
    plan.write_text("\n".join([lines[0], "\t".join(cells)]) + "\n")
    env, _ = _fake_host(tmp_path)
    r = subprocess.run(["bash", str(folder / "perftest.sh"), str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = _calls(env)
    assert len(calls) == 4
    assert {c[2] for c in calls} == {cells[5], cells[8]}
    assert "rail - wave" in r.stdout


def _str_fields(model: type, seen: set) -> list[tuple[str, str, object]]:
    """(model, field, FieldInfo) of every string field reachable from ``model``, lists and dicts included."""
    import typing

    from pydantic import BaseModel

    if model in seen:
        return []
    seen.add(model)
    out = []
    for name, info in model.model_fields.items():  # type: ignore[attr-defined]
        stack = [info.annotation]
        while stack:
            t = stack.pop()
            origin = typing.get_origin(t)
            if t is str:
                out.append((model.__name__, name, info))
            elif isinstance(t, type) and issubclass(t, BaseModel):
                out.extend(_str_fields(t, seen))
            elif origin is typing.Literal:
                continue
            elif origin is typing.Annotated:
                base, *meta = typing.get_args(t)
                if base is str:
                    out.append((model.__name__, name, meta))
                else:
                    stack.append(base)
            elif origin is not None:
                stack.extend(a for a in typing.get_args(t) if a is not type(None))
    return out


def test_every_catalogue_string_is_checked():
    """Every string field of the catalogue schema carries a check (a pattern, a name template or
    the text/form-factor rules), so none reaches an artefact as raw free text; and each of those
    checks refuses the unit separator and a line break."""
    from pydantic import TypeAdapter

    from supernodeiac.catalog.host_topology import HostTopology
    from supernodeiac.catalog.types import Catalogue

    fields = _str_fields(Catalogue, set()) + _str_fields(HostTopology, set())
    assert len(fields) > 30
    # References to other catalogue entries: checked to exist (Catalogue._references, the builders).
    references = {("Medium", "modules"), ("Medium", "cord")}
    unchecked = []
    for model, name, info in fields:
        if (model, name) in references:
            continue
        meta = info if isinstance(info, list) else info.metadata
        if not meta:
            unchecked.append(f"{model}.{name}")
            continue
        adapter = TypeAdapter(typing_annotated(meta))
        for bad in ("osfp\x1fx", "a\nb"):
            with pytest.raises(ValueError):
                adapter.validate_python(bad)
    assert unchecked == []


# Blueprint string fields without a check of their own, each checked elsewhere at its line:
BLUEPRINT_TEMPLATES = {  # naming templates: name_rules at parse (load/parse.py), every field in tests/test_hostile.py
    ("Naming", "cable_id"), ("Naming", "cable_label"), ("Naming", "end_label"), ("Naming", "devices"),
    ("Naming", "short_label"), ("NodeGroup", "naming"), ("CxlHosts", "naming"), ("Site", "rack_name"),
}  # fmt: skip
BLUEPRINT_REFERENCES = {  # names of catalogue entries: an unknown name is unknown-catalogue-item (or media-*) at its line
    ("MediaPolicy", "allow"), ("MediaPolicy", "forbid"), ("MediaPolicy", "pin"),
    ("TierPolicy", "allow"), ("TierPolicy", "forbid"), ("TierPolicy", "pin"),
    ("NodeGroup", "model"), ("TwoLevelDomain", "switch"), ("SwitchedDomain", "compute_tray"),
    ("SwitchedDomain", "switch_tray"), ("OrthogonalDomain", "compute_board"), ("OrthogonalDomain", "switch_board"),
    ("OrthogonalDomain", "chassis"), ("DragonflyPlus", "switch"), ("DragonflyPlus", "spine_switch"),
    ("Dragonfly", "router"), ("FatTree", "switch"), ("FatTree", "spine_switch"), ("FatTree", "core_switch"),
    ("CxlPool", "switch"), ("CxlMemory", "model"), ("CxlHosts", "model"), ("Management", "switch"),
    ("Aggregation", "switch"), ("Aggregation", "oob_switch"), ("Consoles", "model"), ("Pdus", "model"), ("LeafSet", "switch"),
    ("Border", "model"),
}  # fmt: skip
BLUEPRINT_REFUSED = {("Tacacs", "passkey"), ("SnmpCommunity", "community"), ("SnmpUser", "password")}  # secret-inline


def test_every_blueprint_string_is_checked():
    """Every string field of the blueprint schema (112, enumerated from the models) refuses
    control characters by its own type, or is a naming template, a catalogue reference or an
    inline secret, each refused at its line by a later check (three shown here); catalogue
    overrides are the catalogue's types (the test above)."""
    from pydantic import TypeAdapter

    from supernodeiac.model.blueprint import Blueprint

    unchecked, kinds = [], BLUEPRINT_TEMPLATES | BLUEPRINT_REFERENCES | BLUEPRINT_REFUSED
    fields = _str_fields(Blueprint, set())
    assert len(fields) >= 100
    for model, name, info in fields:
        meta = info if isinstance(info, list) else info.metadata
        if model == "CatalogueOverrides":  # entry names (Name) over the catalogue's types
            continue
        if (model, name) in kinds:
            assert not meta or (model, name) == ("Naming", "short_label"), f"{model}.{name} has a check now: drop it here"
            continue
        if not meta:
            unchecked.append(f"{model}.{name}")
            continue
        adapter = TypeAdapter(typing_annotated(meta))
        for bad in ("x\x1f", "a\nb", "x\x1b[31m", "a\u2028b"):
            with pytest.raises(ValueError):
                adapter.validate_python(bad)
    assert unchecked == []
    text = (BLUEPRINTS / "small-ib.yaml").read_text()
    appended = text.count("\n") + 2  # the short_label line of the naming block appended
    switch_line = next(n for n, row in enumerate(text.splitlines(), 1) if "switch: sn2201" in row)
    for edited, rule, line in (
        (text + 'naming:\n  short_label: ["X\\nY"]\n', "naming", appended),
        (text + 'naming:\n  short_label: ["X\\e[31m"]\n', "naming", appended),
        (text.replace("switch: sn2201", 'switch: "sn2201\\e[31m"', 1), "unknown-catalogue-item", switch_line),
    ):
        errors = [f for f in compile_text(edited).findings if f.severity == "error"]
        assert errors and {(f.rule, f.location.line if f.location else 0) for f in errors} == {(rule, line)}, errors
        assert all("\x1b" not in f.message and "\n" not in f.message for f in errors)


def typing_annotated(meta: list) -> object:
    import typing

    return typing.Annotated[(str, *meta)]


# -- nccl/<model>.env and nccl-tests.sh ------------------------------------------------------------


def _sourced(env_file: Path, cwd: Path) -> dict[str, str]:
    """The variables a clean bash has after `set -a; . FILE`, beyond those it starts with."""

    def declared(script: str) -> dict[str, str]:
        r = subprocess.run(["env", "-i", "bash", "-c", script], capture_output=True, text=True, cwd=cwd, check=True)
        out = {}
        for line in r.stdout.splitlines():
            m = re.match(r"declare -\S+ ([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$", line)
            if m:
                out[m.group(1)] = m.group(2) or ""
        return out

    base = declared("set -a; . /dev/null; set +a; declare -p")  # the shell's own, PIPESTATUS included
    after = declared(f"set -a; . {subprocess.list2cmdline([str(env_file)])}; set +a; declare -p")
    return {k: v for k, v in after.items() if k not in base and k != "_"}


def test_env_file_sources_to_exactly_the_planned_variables(tmp_path):
    """Comment values with line breaks, shell and control characters (as a hand-edited host
    layout or a future field might bring) stay inside their comments."""
    from supernodeiac.util.shell import assignment, comment_text
    from supernodeiac.util.templating import render_template

    payload = "x\nLD_PRELOAD=/tmp/evil.so\r\ntouch CANARY\x1f$(touch CANARY)\u2028EVIL=1\x85BAD=2"
    text = render_template(
        "nccl.env.j2",
        blueprint=payload,
        model=payload,
        stem=payload,
        hosts=2,
        topo_file="/etc/nccl/topo/m.xml",
        hca="mlx5_0:1,mlx5_1:1",
        nics=[(payload, 0, payload, 0), ("mlx5_1", 1, payload, None)],
        fabrics=[payload],
        rail_optimized=True,
        roce=[(payload, 26)],
        multi_node=True,
        domain_gpus=72,
        domain_kind=payload,
        imex=True,
        transport=["ethernet"],
        gpus=8,
        assign=assignment,
        c=comment_text,
    )
    env_file = tmp_path / "m.env"
    env_file.write_text(text)
    for line in text.splitlines():
        assert line.startswith("#") or re.fullmatch(r"[A-Z_][A-Z0-9_]*=[A-Za-z0-9_@%+=:,./-]*", line), line
    got = _sourced(env_file, tmp_path)
    assert set(got) == {"NCCL_TOPO_FILE", "NCCL_IB_HCA", "NCCL_CROSS_NIC", "NCCL_IB_TC", "NCCL_MNNVL_ENABLE", "NCCL_CUMEM_ENABLE"}
    assert got["NCCL_IB_HCA"] == '"=mlx5_0:1,mlx5_1:1"'
    assert not (tmp_path / "CANARY").exists()


def test_assignment_checks_keys_and_quotes_values():
    from supernodeiac.util.shell import assignment

    assert assignment("NCCL_X", "=a:1,b:1") == "NCCL_X==a:1,b:1"
    assert assignment("NCCL_X", "a b;c") == "NCCL_X='a b;c'"
    for key in ("ld_preload", "1X", "X Y", "X=Y", "", "X;Y"):
        with pytest.raises(ValueError):
            assignment(key, "v")
    with pytest.raises(ValueError):
        assignment("X", "a\nb")


def _fake_mpirun(tmp_path: Path) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "mpibin"
    bin_dir.mkdir()
    calls = tmp_path / "mpicalls"
    calls.mkdir()
    mpirun = bin_dir / "mpirun"
    # One file per call, numbered: the script runs mpirun once at a time, in plan order.
    mpirun.write_text('#!/bin/bash\nshopt -s nullglob\nn=("$CALLS"/*)\nprintf "%s\\0" "$@" >"$CALLS/$(printf %06d ${#n[@]})"\n')
    mpirun.chmod(0o755)
    return {"PATH": "/usr/bin:/bin", "MPIRUN": str(mpirun), "CALLS": str(calls)}, calls


def test_nccl_tests_exports_only_key_value_pairs(tmp_path):
    """Every rank gets the env file's assignments as `-x KEY=value`, one argument each, and never
    the design busbw (an empty env cell no longer shifts the fields)."""
    out = _render(tmp_path, (BLUEPRINTS / "small-ib.yaml").read_text())
    script = out / "acceptance" / "nccl-tests.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    env, calls = _fake_mpirun(tmp_path)
    env["NCCL_ENV_FILE"] = str(out / "nccl" / "hgx-h100.env")
    r = subprocess.run(["bash", str(script), str(tmp_path / "results")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    runs = (out / "acceptance" / "nccl-tests.tsv").read_text().splitlines()[1:]
    argvs = [p.read_bytes().decode().split("\0")[:-1] for p in sorted(calls.iterdir())]
    assert len(argvs) == len(runs)
    planned = _sourced(out / "nccl" / "hgx-h100.env", tmp_path)
    file_pairs = [f"{k}={v.strip(chr(34))}" for k, v in planned.items()]
    for argv, run in zip(argvs, runs, strict=True):
        exported = [argv[i + 1] for i, a in enumerate(argv) if a == "-x"]
        cell = run.split("\t")[7]
        assert sorted(exported) == sorted(file_pairs + (cell.split(";") if cell else [])), (run, exported)
        assert argv[argv.index("-np") + 1] == run.split("\t")[5]


@pytest.mark.parametrize(
    "line",
    [
        "LD_PRELOAD=/tmp/evil.so; touch CANARY",
        "$(touch CANARY)",
        "touch CANARY",
        "ld_preload=/tmp/x.so",
        "X=`touch CANARY`",
        "450",
    ],
)
def test_nccl_tests_refuses_an_env_line_that_is_not_an_assignment(tmp_path, line):
    out = _render(tmp_path, (BLUEPRINTS / "small-ib.yaml").read_text())
    env_file = tmp_path / "edited.env"
    env_file.write_text((out / "nccl" / "hgx-h100.env").read_text() + line + "\n")
    env, calls = _fake_mpirun(tmp_path)
    env["NCCL_ENV_FILE"] = str(env_file)
    r = subprocess.run(
        ["bash", str(out / "acceptance" / "nccl-tests.sh"), str(tmp_path / "results")],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "refused" in r.stderr, r.stderr
    assert list(calls.iterdir()) == []
    assert not (tmp_path / "CANARY").exists()


# -- every free-text field of the schema, at once ---------------------------------------------------

CONTROL_PAYLOAD = "x\x1b[31m\x1fy\nLD_PRELOAD=/tmp/evil.so\r\u2028$(touch CANARY)"


def _typed_leaves(value, raw, path, out) -> None:
    """(model, field) -> raw data paths of every string value: the typed value and the raw data
    it was validated from are walked together (field aliases included)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        if not isinstance(raw, dict):
            return
        for name, info in type(value).model_fields.items():
            key = info.alias or name
            if key not in raw:
                continue
            sub, data = getattr(value, name), raw[key]
            field = (type(value).__name__, name)
            if isinstance(sub, str) and isinstance(data, str):
                out.setdefault(field, []).append((*path, key))
            elif isinstance(sub, list | tuple) and isinstance(data, list) and sub and all(isinstance(x, str) for x in sub):
                # A list of strings (a medium's cages, a port group's OS names and breakout modes).
                out.setdefault(field, []).extend((*path, key, j) for j, x in enumerate(data) if isinstance(x, str))
            elif isinstance(sub, dict) and isinstance(data, dict) and sub and all(isinstance(x, str) for x in sub.values()):
                # A mapping to strings (part numbers per stock length, metadata labels): its values.
                out.setdefault(field, []).extend((*path, key, k) for k, x in data.items() if isinstance(x, str))
            else:
                _typed_leaves(sub, data, (*path, key), out)
    elif isinstance(value, list | tuple) and isinstance(raw, list):
        for i, (v, r) in enumerate(zip(value, raw, strict=False)):
            _typed_leaves(v, r, (*path, i), out)
    elif isinstance(value, dict) and isinstance(raw, dict):
        for (k, v), r in zip(value.items(), raw.values(), strict=False):
            _typed_leaves(v, r, (*path, list(raw)[list(value).index(k)]), out)


def _payload_blueprint(name: str = "small-ib") -> tuple[dict, dict[tuple[str, str], list[tuple]]]:
    """A shipped blueprint with every catalogue entry it uses given in full as an override, and
    where each string field of the schema sits in it."""
    from ruamel.yaml import YAML

    from supernodeiac.catalog import merged
    from supernodeiac.catalog.host_topology import HostTopology, builtin_host_topology
    from supernodeiac.catalog.types import Asic, Cord, DeviceModel, Medium, PortMap, Transceiver
    from supernodeiac.model.blueprint import Blueprint

    doc = YAML(typ="safe", pure=True).load((BLUEPRINTS / f"{name}.yaml").read_text())
    doc["metadata"].setdefault("labels", {"team": "fabric"})  # free text that reaches the outputs' headers
    words = json.dumps(doc)
    base = merged(None)
    models = {"devices": DeviceModel, "media": Medium, "transceivers": Transceiver, "cords": Cord, "port_maps": PortMap}
    catalogue: dict = {}
    for section in models:
        used = {n: e for n, e in base[section].items() if f'"{n}"' in words or section in ("media", "transceivers", "cords")}
        catalogue[section] = {n: json.loads(json.dumps(e)) for n, e in used.items()}
    chips = {e.get("asic") for e in catalogue["devices"].values()}  # the switch chips of the devices used
    catalogue["asics"] = {n: json.loads(json.dumps(e)) for n, e in base["asics"].items() if n in chips}
    models["asics"] = Asic
    topo = builtin_host_topology()
    catalogue["host_topology"] = {n: json.loads(json.dumps(e)) for n, e in topo.items() if f'"{n}"' in words}
    doc["catalogue"] = catalogue
    where: dict[tuple[str, str], list[tuple]] = {}
    models["host_topology"] = HostTopology
    for section, entries in catalogue.items():
        for name, entry in entries.items():
            _typed_leaves(models[section].model_validate(entry), entry, ("catalogue", section, name), where)
    blueprint = Blueprint.model_validate({k: v for k, v in doc.items() if k != "catalogue"})
    _typed_leaves(blueprint, doc, (), where)
    return doc, where


def _set(doc, path, value):
    node = doc
    for part in path[:-1]:
        node = node[part]
    old = node[path[-1]]
    node[path[-1]] = value
    return old


def _converge(doc, where, payload_of) -> tuple[dict, list[tuple], list[tuple]]:
    """Every string leaf given its payload; each leaf a located error refuses is put back, until
    the blueprint compiles clean. (the blueprint, the leaves that carry a payload, those refused)."""
    from ruamel.yaml import YAML

    originals = {}
    for paths in where.values():
        for p in paths:
            originals[p] = _set(doc, p, payload_of(p, _get(doc, p)))
    refused: list[tuple] = []
    for _ in range(12):
        buf = io.StringIO()
        YAML(typ="safe", pure=True).dump(doc, buf)
        c = compile_text(buf.getvalue())
        errors = [f for f in c.findings if f.severity == "error"]
        if not errors:
            break
        before = set(refused)  # several errors of one round may name one entry (a medium's three modules)
        for f in errors:
            assert f.location is not None and f.location.line > 0, f  # refused at its line
            hit = [p for p in originals if p[: len(f.path)] == tuple(f.path) and p not in before]
            if not hit:  # an error about a leaf's consequence (a reference): the nearest leaves under its parent
                hit = [
                    p
                    for p in originals
                    if p[: max(len(f.path) - 1, 1)] == tuple(f.path)[: max(len(f.path) - 1, 1)] and p not in before
                ]
            assert hit, f
            for p in hit:
                if p not in refused:
                    _set(doc, p, originals[p])
                    refused.append(p)
    else:
        pytest.fail("payloads still refused after 12 rounds")
    carried = [p for p in originals if p not in refused]
    return doc, carried, refused


def _get(doc, path):
    for part in path:
        doc = doc[part]
    return doc


# Per blueprint: the fewest string fields its data holds (small-ib 94, roce-rail-2tier 105 today),
# and the scripts its render makes.
PAYLOAD_CASES = {
    "small-ib": (92, [
        "acceptance/ib/perftest.sh", "acceptance/ib/physical.sh", "acceptance/management/uplinks.sh",
        "acceptance/nccl-tests.sh", "acceptance/scaleup.sh",
    ]),
    "roce-rail-2tier": (103, [
        "acceptance/management/uplinks.sh", "acceptance/nccl-tests.sh", "acceptance/roce/perftest.sh",
        "acceptance/roce/physical.sh", "acceptance/scaleup.sh", "hosts/nic-qos/roce/hgx-h100-bf3.sh",
    ]),
}  # fmt: skip


@pytest.mark.slow  # a dozen compiles and two full renders per blueprint: about a minute each on an idle core
@pytest.mark.parametrize("name", PAYLOAD_BLUEPRINTS)
def test_every_free_text_field_carries_payloads_as_data(tmp_path, name):
    """Every string field of the schema (enumerated from the pydantic models) holds shell, XML
    and Markdown text in one blueprint, or is refused at its line; that blueprint renders, every
    generated script has the planned tokens (bash's own parse, compared with the payload-free
    render), every env file sources to exactly its planned variables in a clean bash, and
    running the scripts under fake ssh and mpirun never creates the canary. Control characters
    are refused by every field. Two blueprints: InfiniBand (small-ib) and RoCE (roce-rail-2tier:
    SONiC configs, RDMA device names in the host layout, SNMP, syslog, TACACS+, address pools,
    and a host-side NIC QoS script)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import fuzz
    from ruamel.yaml import YAML

    least, expected_scripts = PAYLOAD_CASES[name]
    doc, where = _payload_blueprint(name)
    fields = {
        (m, f) for m, f, _ in _str_fields(__import__("supernodeiac.model.blueprint", fromlist=["Blueprint"]).Blueprint, set())
    }
    from supernodeiac.catalog.host_topology import HostTopology
    from supernodeiac.catalog.types import Catalogue

    fields |= {(m, f) for m, f, _ in _str_fields(Catalogue, set()) + _str_fields(HostTopology, set())}
    # The fields the blueprint and its catalogue entries hold (a new field that the data holds is
    # covered without a change here); the others are only reached through the schema tests above.
    assert len(where) >= least, sorted(where)
    print(f"{name}: {len(where)} of {len(fields)} string fields in the data; not: {sorted(fields - set(where))}")

    # Control characters: refused everywhere, each at its line.
    _, carried, _ = _converge(json.loads(json.dumps(doc)), where, lambda p, old: CONTROL_PAYLOAD)
    assert carried == []

    # Printable payloads: a leaf keeps its text and gains the payload (a name stays a name
    # where the field allows only names, and is then refused).
    # The accelerator's model names it for the catalogue's vendor table (which collective library,
    # which test tool): it keeps its name, so the NCCL env and nccl-tests.sh are made and run with
    # the payloads everywhere else (a changed name is an unknown accelerator, whose NCCL outputs are
    # left out: this test would then see none of them).
    where = {k: v for k, v in where.items() if k != ("Accelerators", "model")}
    doc, carried, refused = _converge(doc, where, lambda p, old: f"{old} {PRINTABLE_PAYLOAD}")
    assert len(carried) >= 20, carried
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(doc, buf)
    out = _render(tmp_path, buf.getvalue())
    (tmp_path / "plain").mkdir()
    plain = _render(tmp_path / "plain", (BLUEPRINTS / f"{name}.yaml").read_text())
    scripts = sorted(p.relative_to(out) for p in out.rglob("*.sh"))
    assert [str(s) for s in scripts] == expected_scripts
    assert sorted(p.relative_to(plain) for p in plain.rglob("*.sh")) == scripts
    for rel in scripts:
        assert fuzz.script_shape((out / rel).read_text(), str(tmp_path)) == fuzz.script_shape(
            (plain / rel).read_text(), str(tmp_path)
        ), rel
    env_files = sorted(out.rglob("*.env"))
    assert env_files
    for env_file in env_files:
        assert set(_sourced(env_file, tmp_path)) == set(_sourced(plain / env_file.relative_to(out), tmp_path))
    assert any(
        "touch CANARY" in p.read_text(errors="replace")
        for p in out.rglob("*")
        if p.is_file() and p.suffix in (".md", ".csv", ".json", ".env", ".xml")
    )
    env, canary_dir = _fake_host(tmp_path)
    ran = []
    for rel in scripts:  # the acceptance scripts run, under a fake ssh; host-side scripts write /sys: shape only
        args, extra = {
            "perftest.sh": ([], {}),
            "physical.sh": ([], {"IBDIAG_DIR": str(tmp_path / "ibdiag")}),
            "uplinks.sh": ([], {"COUNT": "1"}),
            "scaleup.sh": (["before"], {"COUNT": "1"}),
        }.get(rel.name, (None, {}))
        if args is None:
            continue
        r = subprocess.run(
            ["bash", str(out / rel), str(tmp_path / "results"), *args],
            env={**env, **extra},
            capture_output=True,
            text=True,
            cwd=canary_dir,
        )
        assert r.returncode == 0, (rel, r.stderr)
        ran.append(rel.name)
    assert sorted(ran) == ["perftest.sh", "physical.sh", "scaleup.sh", "uplinks.sh"]
    menv, calls = _fake_mpirun(tmp_path)
    [env_file] = env_files  # the accelerator kept its vendor: one NCCL env for its host model
    menv["NCCL_ENV_FILE"] = str(env_file)
    r = subprocess.run(
        ["bash", str(out / "acceptance/nccl-tests.sh"), str(tmp_path / "results")],
        env=menv,
        capture_output=True,
        text=True,
        cwd=canary_dir,
    )
    assert r.returncode == 0, r.stderr
    assert list(calls.iterdir()), r.stdout + r.stderr  # nccl-tests ran, under the fake mpirun
    assert not list(tmp_path.rglob("CANARY"))
