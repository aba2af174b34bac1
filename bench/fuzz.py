"""Structure-aware fuzzing of the compiler: mutants of the shipped blueprints, each one loaded,
parsed, built, checked and (when clean) rendered in memory. Every outcome must be a located
finding (exit 1 or 2) or a valid render (exit 0); anything else is a bug in snc:

* ``internal``: an exception escaped (what the CLI reports as exit 3);
* ``unlocated``: an error finding without a file:line:col;
* ``bad-render``: a rendered CSV cell a spreadsheet would run as a formula, or an artifact path
  that could leave the output folder;
* ``slow``: a mutant that took longer than ``--timeout`` seconds (a hang, or an accepted size
  far beyond the shipped blueprints: look at it).

Mutant ``i`` of seed ``s`` is the same on every machine and worker count (its own random
generator), so a failure is reproduced with ``--only i`` and saved as YAML with
``--save DIR``. The tests (tests/test_fuzz.py) draw the same mutations through hypothesis for a
bounded number of examples; this script is the long run, for nightly use:

    python bench/fuzz.py --mutants 10000 --seed 1 --workers 2 --save /tmp/fuzz-failures

Without Graphviz in the loop: diagrams are laid out as DOT text only (``dot`` is slow and not
what is being fuzzed).
"""

from __future__ import annotations

import argparse
import copy
import functools
import io
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))

# Values a careless or hostile author leaves in a blueprint. Sizes stay below what would make a
# legitimate but huge design (counts up to 1000), or are far beyond every ceiling.
NUMBERS: list[Any] = [0, 1, 2, 3, 7, 16, 64, 1000, -1, -1000, 10**7, 2**31, 10**12, 10**100, 2**64]
FLOATS: list[Any] = [0.0, 0.0001, 0.5, 1.5, 2.5, -0.5, 1e-300, 1e308, -1e308, math.nan, math.inf, -math.inf]
TEXTS: list[Any] = [
    "",
    "x",
    "16",
    "1.5",
    "1e400",
    "0x10",
    ".inf",
    "true",
    "1:0",
    "0:1",
    "1:1000000",
    "3:4",
    "2 : 1",
    "1:1:1",
    "=1+1",
    "+cmd",
    "-2+3",
    "@SUM(A1)",
    "\t=x",
    "a,b",
    'q"uote',
    "line\nbreak",
    "{a:>999999999}",
    "{a.__class__}",
    "{index!r}",
    "{}",
    "{{",
    "}",
    "{index:099d}",
    "{nope}",
    "a" * 300,
    "ü-ñ",
    "../../etc/passwd",
    "/abs",
    "fat-tree",
    "dragonfly",
    "dragonfly-plus",
    "orthogonal",
    "switched",
    "two-level",
    "cxl-pool",
    "qm9700",
    "q3400",
    "sn5600",
    "sn2201",
    "hgx-h100",
    "dac",
    "aoc",
    "A",
    "N",
    "gpu",
    "ib",
    "mgmt",
    "ethernet",
    "infiniband",
    "unnumbered",
    "10.0.0.0/8",
    "10.0.0.1/32",
    "::/0",
]
SHAPES: list[Any] = [None, True, False, [], {}, [1, 2], {"k": "v"}, [{}], {"name": "x"}]
KEYS = ["name", "kind", "count", "model", "placement", "row", "per_rack", "first_u", "first_rack", "naming", "media", "x", "Name"]
# Template pieces: fields every template kind knows or none does, specs from harmless to hostile.
FIELDS = ["a", "a_port", "b", "b_port", "fabric", "group", "index", "row", "rack", "su", "leaf", "spine", "n", "i", "nope", ""]
SPECS = ["", ":d", ":02d", ":04d", ":016d", ":017d", ":>20", ":>99999999", ":x", ":+d", "!r", ":,", ".real", "[0]"]
LITERALS = ["", "-", "_", ".", ":", "/", "#", " ", "=", "+", "@", "\t", "|", ",", "x", "{{", "}}"]
TEMPLATE_KEYS = [("naming", "cable_id"), ("naming", "cable_label"), ("site", "rack_name"), ("naming", "devices")]
ROLES = ["leaf", "spine", "core", "router", "mgmt", "mgmt-agg", "compute-board", "cxl-switch"]


# -- mutations ------------------------------------------------------------------------------------


def _paths(node: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


def _value(rng: random.Random, old: Any, doc: Any, path: tuple = ()) -> Any:
    """A replacement for ``old``: often a plausible one of the same kind (so that the mutant
    gets past the schema into the build, the checks and the renderers), sometimes another
    value of the same blueprint (a name in the wrong place), often a hostile one. A copy: a
    later mutation edits the value in place, and SHAPES' lists and dicts are shared by every
    mutant (hypothesis saw a replay draw differently once an earlier example had edited one)."""
    return copy.deepcopy(_pick(rng, old, doc, path))


def _pick(rng: random.Random, old: Any, doc: Any, path: tuple) -> Any:
    roll = rng.random()
    if roll < 0.35:
        if isinstance(old, bool):
            return not old
        if isinstance(old, int):
            return rng.choice([old + 1, old - 1, old * 2, max(1, old // 2), rng.randint(0, 2 * abs(old) + 2)])
        if isinstance(old, float):
            return old * rng.choice([0.0, 0.5, 2.0, 10.0, 100.0])
    if roll < 0.5:
        leaves = [v for p in _paths(doc) if not isinstance(v := _get(doc, p), dict | list) and type(v) is type(old)]
        if leaves:
            return rng.choice(leaves)
    if roll < 0.8:  # hostile, of a kind that fits: a number for a number, text or a number for text
        if isinstance(old, bool):
            return rng.choice(SHAPES + ["yes", 1, 0])
        if isinstance(old, int | float):
            return rng.choice([*NUMBERS, *FLOATS, str(old)])
        if isinstance(old, str):
            key = str(path[-1]) if path else ""
            return rng.choice([*TEXTS, *FLOATS, 0, 2, old + "x", old[:-1], old.upper(), _template(rng, key)])
    return rng.choice(NUMBERS + FLOATS + TEXTS + SHAPES)


# The fields each template is filled with (a template of known fields gets past the field check
# to what its specs and text do).
TEMPLATE_FIELDS = {
    "cable_id": ["a", "a_port", "b", "b_port", "fabric"],
    "cable_label": ["a", "a_port", "b", "b_port", "fabric"],
    "rack_name": ["row", "rack"],
    "devices": ["fabric", "index", "su", "leaf", "spine", "group", "rack"],
    "naming": ["group", "index"],
}


def _template(rng: random.Random, key: str = "") -> str:
    known = TEMPLATE_FIELDS.get(key, [])
    parts = []
    for _ in range(rng.randint(1, 4)):
        parts.append(rng.choice(LITERALS))
        name = rng.choice(known) if known and rng.random() < 0.8 else rng.choice(FIELDS)
        spec = rng.choice(SPECS) if rng.random() < 0.4 else ""
        parts.append("{" + name + spec + "}")
    parts.append(rng.choice(LITERALS))
    return "".join(parts)


def _mutate_once(rng: random.Random, doc: dict) -> str:
    """Apply one mutation to ``doc`` in place; its description."""
    paths = [p for p in _paths(doc) if p]
    op = rng.choice(["set"] * 8 + ["delete", "typo", "add", "duplicate", "copy", "template", "clear"])
    leaves = [p for p in paths if not isinstance(_get(doc, p), dict | list)]
    path = rng.choice(leaves if op == "set" and leaves and rng.random() < 0.85 else paths)
    parent, key = _get(doc, path[:-1]), path[-1]
    if op == "set":
        parent[key] = _value(rng, parent[key], doc, path)
    elif op == "delete":
        del parent[key]
    elif op == "typo" and isinstance(parent, dict):
        word = str(key)
        i = rng.randrange(len(word)) if word else 0
        new = rng.choice([word[:i] + word[i + 1 :], word[:i] + word[i : i + 2][::-1] + word[i + 2 :], word + "s", word.upper()])
        parent[new or "x"] = parent.pop(key)
    elif op == "add":
        target = _get(doc, rng.choice([p for p in _paths(doc) if isinstance(_get(doc, p), dict)]))
        target[rng.choice(KEYS)] = _value(rng, rng.choice(NUMBERS + TEXTS), doc)
    elif op == "duplicate" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(parent[key]))
    elif op == "copy":
        other = _get(doc, rng.choice(paths))
        parent[key] = copy.deepcopy(other)
    elif op == "template":
        where = rng.choice(TEMPLATE_KEYS)
        section = doc.setdefault(where[0], {})
        if not isinstance(section, dict):
            return "template (skipped)"
        if where[1] == "devices":
            section.setdefault("devices", {})
            if isinstance(section["devices"], dict):
                section["devices"][rng.choice(ROLES)] = _template(rng, "devices")
        else:
            section[where[1]] = _template(rng, where[1])
        return f"template {'.'.join(where)}"
    elif op == "clear" and isinstance(parent[key], dict | list):
        parent[key] = type(parent[key])()
    else:
        parent[key] = _value(rng, parent[key], doc)
        op = "set"
    return f"{op} {'.'.join(map(str, path))}"


def _text_mutation(rng: random.Random, text: str) -> tuple[str, str]:
    """A mutation of the YAML text itself: lines lost, repeated, re-indented; stray characters."""
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    op = rng.choice(["drop", "repeat", "indent", "dedent", "char", "truncate", "swap"])
    if op == "drop":
        del lines[i]
    elif op == "repeat":
        lines.insert(i, lines[i])
    elif op == "indent":
        lines[i] = "  " + lines[i]
    elif op == "dedent":
        lines[i] = lines[i][2:] if lines[i].startswith("  ") else lines[i]
    elif op == "char":
        j = rng.randrange(len(lines[i]) or 1)
        stray = rng.choice(["{", "}", "[", "]", ":", "-", "&a", "*a", "!x", "\t", "'", '"', "#", "\x00", "%"])
        lines[i] = lines[i][:j] + stray + lines[i][j:]
    elif op == "truncate":
        lines = lines[:i]
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines), f"text {op} line {i + 1}"


def mutant(seed: int, index: int, strategy: str = "blueprint") -> tuple[str, str, str]:
    """(blueprint name, what was done, YAML text) of mutant ``index`` of ``seed``: structural
    mutations of the blueprint (``blueprint``), or a type-confused catalogue override
    (``catalogue``, one time in five with a structural mutation as well)."""
    from ruamel.yaml import YAML

    rng = random.Random(f"{seed}:{index}" if strategy == "blueprint" else f"{strategy}:{seed}:{index}")
    source = rng.choice(BLUEPRINTS)
    yaml = YAML(typ="safe", pure=True)
    doc = yaml.load(source.read_text())
    if strategy == "catalogue":
        steps = [_catalogue_mutation(rng, doc)]
        if rng.random() < 0.2:
            steps.append(_mutate_once(rng, doc))
    else:
        steps = [_mutate_once(rng, doc) for _ in range(rng.choice([1, 1, 2, 3]))]
    buf = io.StringIO()
    yaml.default_flow_style = False
    yaml.dump(doc, buf)
    text = buf.getvalue()
    if strategy == "blueprint" and rng.random() < 0.1:
        text, step = _text_mutation(rng, text)
        steps.append(step)
    return source.stem, "; ".join(steps), text


# -- type confusion in catalogue overrides ---------------------------------------------------------

# Free text that must stay data wherever it lands: shell, XML, Markdown, control characters.
PAYLOADS = [
    "$(touch CANARY)",
    "`touch CANARY`",
    "x;touch CANARY;#",
    "osfp\x1fgpu-0009\x1fx;id>PWNED;#",
    "a\nLD_PRELOAD=/tmp/evil.so",
    "<x>&amp;</x>]]>",
    "**bold** [l](javascript:x) <img src=x>",
    "\x1b[31mred\x1b[0m",
    "\x00\x7f\x85\u2028",
    "'\"\\",
]
SECTIONS = ["devices"] * 4 + ["media"] * 2 + ["transceivers", "cords", "port_maps", "host_topology", "facility", "lines"]


def _confused(rng: random.Random, old: Any) -> Any:
    """A value of another type than ``old``, or of its type and absurd: what a careless override
    holds (a list where a mapping belongs, a number as text, null, a bool, a huge int)."""
    common = [None, True, False, 0, -1, 10**30, 2**63, 1e308, math.nan, "", "16", "1e400", rng.choice(PAYLOADS)]
    extra: list[Any]
    if isinstance(old, dict):
        extra = [list(old.values()), [old], list(old), {"nested": {"deep": old}}, {}, {**old, "unknown_key": 1}]
    elif isinstance(old, list):
        extra = [
            {str(i): v for i, v in enumerate(old)},
            old[0] if old else [],
            [old],
            [],
            old * 50,
            [None],
            ",".join(map(str, old)),
        ]
    elif isinstance(old, bool):
        extra = ["true", "yes", 1, 0, [old]]
    elif isinstance(old, int):
        extra = [str(old), float(old), old + 0.5, -old, old * 10**12, [old], {"value": old}]
    elif isinstance(old, float):
        extra = [str(old), int(old) if math.isfinite(old) else 0, math.inf, -old, [old], {"value": old}]
    elif isinstance(old, str):
        extra = [0, 2, [old], {old: old}, old * 100, old + rng.choice(PAYLOADS), rng.choice(PAYLOADS), old.upper()]
    else:
        extra = [{}, [], 0, "x"]
    return copy.deepcopy(rng.choice(extra if rng.random() < 0.7 else common))


def _confuse_entry(rng: random.Random, entry: Any) -> list[str]:
    """1 to 4 type confusions at random places in ``entry`` (in place); what was done."""
    done = []
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        paths = [p for p in _paths(entry) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _get(entry, path[:-1]), path[-1]
        op = rng.choice(["confuse"] * 6 + ["delete", "add"])
        if op == "delete":
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[rng.choice(["x", "Name", "extra", str(key) + "s"])] = _confused(rng, parent[key])
        else:
            parent[key] = _confused(rng, parent[key])
            op = "confuse"
        done.append(f"{op} {'.'.join(map(str, path))}")
    return done


def _catalogue_mutation(rng: random.Random, doc: dict) -> str:
    """A ``catalogue:`` override of an entry the blueprint uses (most often), made from the
    built-in entry and confused: the whole entry, or only the keys that changed (the usual
    partial override), sometimes under a new name that the blueprint then refers to."""
    from supernodeiac.catalog import merged
    from supernodeiac.catalog.host_topology import builtin_host_topology

    section = rng.choice(SECTIONS)
    pool: dict[str, Any] = builtin_host_topology() if section == "host_topology" else merged(None)[section]
    words = {v for p in _paths(doc) if isinstance(v := _get(doc, p), str)}
    catalogue = doc.setdefault("catalogue", {})
    if not isinstance(catalogue, dict):
        return "catalogue (skipped)"
    if section == "facility":
        entry = copy.deepcopy(pool)
        steps = _confuse_entry(rng, entry)
        catalogue["facility"] = entry
        return f"catalogue facility: {'; '.join(steps)}"
    used = sorted(n for n in pool if n in words)
    name = rng.choice(used if used and rng.random() < 0.85 else sorted(pool))
    entry = copy.deepcopy(pool[name])
    steps = _confuse_entry(rng, entry)
    if section != "lines" and rng.random() < 0.5 and isinstance(entry, dict):
        original = pool[name]
        entry = {k: v for k, v in entry.items() if k not in original or original[k] != v} or entry
    if section in ("devices", "media") and rng.random() < 0.15 and name in words:
        new = name + "-x"  # a new entry: the whole of it counts, the built-in one is not beneath
        for p in [p for p in _paths(doc) if p and _get(doc, p) == name]:
            _get(doc, p[:-1])[p[-1]] = new
        name, entry = new, {**copy.deepcopy(pool[name]), **entry}
    target = catalogue.setdefault(section, {})
    if not isinstance(target, dict):
        return "catalogue (skipped)"
    target[name] = entry
    return f"catalogue {section}.{name}: {'; '.join(steps) or 'as built in'}"


STRATEGIES = ("blueprint", "catalogue")


# -- read-back oracle -------------------------------------------------------------------------------

# Bash parses the script (as the body of a function it is told to print, never to run) and prints
# it in its own canonical form, without comments; every run of word characters is then one `w`.
# What is left is the script's shape: its operators, quotes, expansions and line structure, which
# data inside one word cannot change. A payload that became code changes it.
_SHAPE_SCRIPT = "f() {\n%s\n}\ndeclare -f f\n"
_WORD = re.compile(r"[A-Za-z0-9_.:/=+%@,^-]+")
_SOURCE_ENV = 'set -a; . "$1"; set +a; for k in $(compgen -v); do printf "%s\\0%s\\0" "$k" "${!k}"; done'
_ENV_LINE = re.compile(r"#[^\n]*|[A-Z_][A-Z0-9_]*=[A-Za-z0-9_@%+=:,./-]*")
BASH = shutil.which("bash") or "/bin/bash"
_KNOWN_SHAPES: dict[str, set[str]] = {}  # script file name -> the shapes the shipped blueprints give it
_SHELL_OWN: dict[str, str] = {}  # what a clean bash holds after sourcing an empty file


def _bash(script: str, *args: str, cwd: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/nonexistent", "LC_ALL": "C"}  # no command can be found: a payload cannot run one
    return subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", script, "_", *args], env=env, cwd=cwd, capture_output=True, timeout=20
    )


def script_shape(text: str, cwd: str) -> str | None:
    """The shape of a bash script (None: bash cannot parse it)."""
    if subprocess.run(["bash", "-n"], input=text.encode(), capture_output=True, timeout=20).returncode != 0:
        return None
    r = _bash(_SHAPE_SCRIPT % text, cwd=cwd)
    return _WORD.sub("w", r.stdout.decode(errors="replace")) if r.returncode == 0 else None


def sourced(path: str, cwd: str) -> dict[str, str]:
    r = _bash(_SOURCE_ENV, path, cwd=cwd)
    items = r.stdout.decode(errors="surrogateescape").split("\0")
    return dict(zip(items[0:-1:2], items[1:-1:2], strict=True))


def learn_shapes() -> None:
    """The script shapes of the shipped blueprints' renders, as the oracle's reference."""
    from supernodeiac.pipeline import compile_file, render

    with tempfile.TemporaryDirectory() as cwd:
        _SHELL_OWN.update(sourced("/dev/null", cwd))
        for path in BLUEPRINTS:
            artifacts, _ = render(compile_file(str(path)), ["acceptance"])
            for name, data in artifacts.items():
                if name.endswith(".sh"):
                    shape = script_shape(_text(data), cwd)
                    assert shape is not None, name
                    _KNOWN_SHAPES.setdefault(Path(name).name, set()).add(shape)


@functools.cache
def _env_keys() -> set[str]:
    """The keys the env templates assign (``assign("NCCL_IB_HCA", ...)``): the planned ones."""
    return {k for t in (ROOT / "templates").rglob("*.j2") for k in re.findall(r'assign\("([A-Z_][A-Z0-9_]*)"', t.read_text())}


def _text(data: Any) -> str:
    return data.decode("utf-8", errors="surrogateescape") if isinstance(data, bytes) else str(data)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def read_back(artifacts: dict[str, Any]) -> str | None:
    """What is wrong with a render when read back as its consumers read it (None: nothing):
    every script parsed by bash to its planned shape, every env file sourced by a clean bash to
    exactly its `KEY=value` lines, every TSV row as wide as its header, every JSON document
    without duplicate keys, every SVG and XML file well-formed; and nothing any of that ran
    left a file behind (the canary)."""
    import xml.etree.ElementTree as ET

    with tempfile.TemporaryDirectory() as cwd:
        if not _SHELL_OWN:
            _SHELL_OWN.update(sourced("/dev/null", cwd))
        for name, data in sorted(artifacts.items()):
            text = _text(data)
            base = Path(name).name
            if name.endswith(".sh"):
                shape = script_shape(text, cwd)
                if shape is None:
                    return f"{name}: bash cannot parse it"
                if _KNOWN_SHAPES and shape not in _KNOWN_SHAPES.get(base, {shape}):
                    return f"{name}: not the planned tokens (a shape no shipped blueprint gives)"
            elif name.endswith(".env"):
                planned = {}
                for n, line in enumerate(text.splitlines(), 1):
                    if not _ENV_LINE.fullmatch(line):
                        return f"{name}:{n}: neither a comment nor KEY=value"
                    if not line.startswith("#"):
                        key, _, value = line.partition("=")
                        planned[key] = value
                file = Path(cwd) / "x.env"
                file.write_text(text, encoding="utf-8", errors="surrogateescape")
                # The shell's own variables (some change on every read: RANDOM, BASHPID) are left out.
                got = {k: v for k, v in sourced(str(file), cwd).items() if k not in _SHELL_OWN and k != "_"}
                planned = {k: v for k, v in planned.items() if k not in _SHELL_OWN}
                file.unlink()
                if stray := sorted(set(planned) - _env_keys()):
                    return f"{name}: sets {stray}, which no template assigns"
                if got != planned:
                    return f"{name}: sources to {sorted(set(got) ^ set(planned)) or 'other values'}, not its lines"
            elif name.endswith(".tsv"):
                rows = text.split("\n")
                if rows and rows[-1] == "":
                    rows.pop()
                widths = {len(r.split("\t")) for r in rows}
                if len(widths) > 1:
                    return f"{name}: rows of {sorted(widths)} columns"
            elif name.endswith(".json"):
                try:
                    json.loads(text, object_pairs_hook=_no_duplicate_keys)
                except ValueError as exc:
                    return f"{name}: {exc}"
            elif name.endswith(".jsonl"):
                for n, line in enumerate(text.splitlines(), 1):
                    try:
                        json.loads(line, object_pairs_hook=_no_duplicate_keys)
                    except ValueError as exc:
                        return f"{name}:{n}: {exc}"
            elif name.endswith((".svg", ".xml")):
                try:
                    ET.fromstring(data if isinstance(data, bytes) else text.encode())
                except ET.ParseError as exc:
                    return f"{name}: not well-formed XML: {exc}"
        if left := sorted(os.listdir(cwd)):
            return f"a generated file ran: it left {left[:3]} behind"
    return None


# -- outcomes -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    kind: str  # located | rendered | internal | unlocated | bad-render | slow
    exit_code: int | None = None
    detail: str = ""


# Output families left out with --skip (what the read-back oracle cannot read anyway, and where a
# small render spends most of its time: the workbook and the label PDFs).
SKIP: set[str] = set()


def check(text: str, name: str = "mutant.yaml") -> Outcome:
    """Compile ``text`` (and render it when clean) in this process; the outcome, never raising
    for a bug in snc (that is the ``internal`` outcome)."""
    from supernodeiac.load.source import LoadError, load_text
    from supernodeiac.outputs.csv_safe import live_formulas
    from supernodeiac.pipeline import compile_document, render
    from supernodeiac.writer import WriteError, _safe_relpath, manifest

    try:
        try:
            doc = load_text(text, name)
        except LoadError as exc:
            if exc.finding.location is None:
                return Outcome("unlocated", 2, exc.finding.message)
            return Outcome("located", 2)
        compiled = compile_document(doc)
        unlocated = [f for f in compiled.findings if f.location is None]
        if unlocated:
            return Outcome("unlocated", compiled.exit_code, unlocated[0].message)
        if compiled.exit_code != 0:
            return Outcome("located", compiled.exit_code)
        with mock.patch("shutil.which", return_value=None):  # DOT text only, no `dot` run
            import supernodeiac.outputs  # noqa: F401 - registers the renderers
            from supernodeiac.outputs.base import RENDERERS

            artifacts, _ = render(compiled, [n for n, _ in RENDERERS.items() if n not in SKIP] if SKIP else None)
        for path, data in artifacts.items():
            try:
                _safe_relpath(path)
            except WriteError as exc:
                return Outcome("bad-render", 0, str(exc))
            if path.endswith(".csv") and (cells := live_formulas(data)):
                return Outcome("bad-render", 0, f"{path}: formula cell {cells[0]!r}")
        if problem := read_back(artifacts):
            return Outcome("bad-render", 0, problem)
        manifest(artifacts, compiled.blueprint.metadata.name)
        return Outcome("rendered", 0)
    except _Timeout:
        raise
    except BaseException as exc:  # noqa: BLE001 - exactly what the fuzzer looks for
        if isinstance(exc, KeyboardInterrupt):
            raise
        frames = traceback.extract_tb(exc.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(frames) if "supernodeiac" in f.filename), "?")
        return Outcome("internal", 3, f"{type(exc).__name__} at {where}: {str(exc)[:200]}")


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _init_worker(memory_mb: int) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    if memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))


def run_one(args: tuple[int, int, float, str]) -> tuple[int, str, str, Outcome, float]:
    seed, index, timeout, strategy = args
    source, steps, text = mutant(seed, index, strategy)
    start = time.process_time()
    # The limit is CPU time (on a shared machine the wall clock says more about the neighbours),
    # and ten times as much wall-clock time for a mutant that blocks without computing.
    signal.setitimer(signal.ITIMER_PROF, timeout)
    signal.setitimer(signal.ITIMER_REAL, 10 * timeout)
    try:
        outcome = check(text, f"{source}-{index}.yaml")
    except _Timeout:
        outcome = Outcome("slow", None, f"over {timeout:g} s of CPU or {10 * timeout:g} s")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
    return index, source, steps, outcome, time.process_time() - start


BUGS = ("internal", "unlocated", "bad-render", "slow")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--strategy", choices=STRATEGIES, default="blueprint", help="what to mutate (default blueprint)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=30.0, help="CPU seconds one mutant may take (default 30)")
    parser.add_argument("--memory-mb", type=int, default=3072, help="address-space limit per worker (0: none)")
    parser.add_argument("--skip", nargs="*", default=[], help="output families not to render (e.g. workbook labels)")
    parser.add_argument("--only", type=int, nargs="*", help="run these mutant indices only (to reproduce)")
    parser.add_argument("--save", type=Path, help="write every failing mutant here as YAML")
    parser.add_argument("--json", type=Path, help="write the summary here as JSON")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    indices = args.only if args.only else list(range(args.mutants))
    jobs = [(args.seed, i, args.timeout, args.strategy) for i in indices]
    SKIP.update(args.skip)
    learn_shapes()  # before the workers fork: each inherits the reference shapes
    counts: Counter[str] = Counter()
    by_exit: Counter[str] = Counter()
    failures = []
    started = time.perf_counter()
    slowest = (0.0, -1)
    if args.workers > 1:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        with context.Pool(args.workers, _init_worker, (args.memory_mb,), maxtasksperchild=200) as pool:
            results = pool.imap_unordered(run_one, jobs, chunksize=4)
            for n, result in enumerate(results, 1):
                slowest = _tally(result, counts, by_exit, failures, args.save, args.seed, args.strategy, slowest)
                if n % 500 == 0:
                    print(f"{n:,} mutants, {dict(counts)}", file=sys.stderr, flush=True)
    else:
        _init_worker(args.memory_mb)
        for n, job in enumerate(jobs, 1):
            slowest = _tally(run_one(job), counts, by_exit, failures, args.save, args.seed, args.strategy, slowest)
            if n % 500 == 0:
                print(f"{n:,} mutants, {dict(counts)}", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    bugs = sum(counts[k] for k in BUGS)
    summary = {
        "seed": args.seed,
        "strategy": args.strategy,
        "skipped_outputs": sorted(SKIP),
        "mutants": len(jobs),
        "outcomes": dict(sorted(counts.items())),
        "exit_codes": dict(sorted(by_exit.items())),
        "bugs": bugs,
        "seconds": round(elapsed, 1),
        "slowest": {"index": slowest[1], "cpu_seconds": round(slowest[0], 2)},
        "failures": failures[:50],
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if bugs else 0


def _tally(result, counts, by_exit, failures, save: Path | None, seed: int, strategy: str, slowest):
    index, source, steps, outcome, seconds = result
    counts[outcome.kind] += 1
    by_exit[str(outcome.exit_code)] += 1
    if outcome.kind in BUGS:
        failures.append(
            {"index": index, "blueprint": source, "mutation": steps, "outcome": outcome.kind, "detail": outcome.detail}
        )
        print(f"mutant {index} ({source}: {steps}): {outcome.kind}: {outcome.detail}", file=sys.stderr, flush=True)
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            (save / f"{strategy}-seed{seed}-{index}.yaml").write_text(mutant(seed, index, strategy)[2])
    return max(slowest, (seconds, index))


if __name__ == "__main__":
    sys.exit(main())
