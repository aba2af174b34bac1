"""The hostile-input corpus (tests/hostile/, one file per defect the campaign of issue 7 found):
every file is a located error (exit 2), never an internal error (exit 3), a hang or a memory
blow-up; and every naming template refuses what would make a formula, a huge field or a name
other formats cannot take, at the template's line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing

import pytest
from conftest import BLUEPRINTS, ROOT, compile_text
from helpers.peak_rss import run_measured
from pydantic import BaseModel

from supernodeiac.catalog.host_topology import HostLayouts
from supernodeiac.catalog.types import Catalogue
from supernodeiac.load.source import MAX_FILE_BYTES
from supernodeiac.model.blueprint import Blueprint

HOSTILE = ROOT / "tests" / "hostile"

# file -> (rule, line, words in the message)
EXPECTED = {
    "alias-bomb.yaml": ("yaml-limit", 12, "alias *lol3 expands to"),
    "alias-loop.yaml": ("yaml-limit", 6, "alias *s refers to a value that contains it"),
    "merge-bomb.yaml": ("yaml-limit", 10, "alias *m3 expands to"),
    "deep-flow.yaml": ("yaml-limit", 6, "nests more than 64 levels"),
    "deep-block.yaml": ("yaml-limit", 70, "nests more than 64 levels"),
    "long-number.yaml": ("yaml-limit", 22, "a number with 5,000 digits"),
    "formula-cable-id.yaml": ("naming", 12, "has '=', which a cable ID may not contain"),
    "formula-cable-label.yaml": ("naming", 12, "makes cable labels that start with '+'"),
    "formula-device-name.yaml": ("naming", 12, "has '@', which a device name may not contain"),
    "formula-node-naming.yaml": ("naming", 23, "which a device name may not contain"),
    "formula-rack-name.yaml": ("naming", 12, "has '=', which a rack name may not contain"),
    "formula-cxl-hosts-naming.yaml": ("naming", 38, "has '\\t'"),
    "formula-port-name.yaml": ("schema", 15, "has '=', which a port name may not contain"),
    "format-width.yaml": ("naming", 12, "formats {a} with '>20000000'"),
    "format-attribute.yaml": ("naming", 12, "a field with an attribute or index"),
    "ratio-tiny.yaml": ("schema", 36, "0.0001 is the ratio 10000:1, beyond 1000:1"),
    "cxl-promised-huge.yaml": ("schema", 34, "promised_gb: input should be less than or equal to 1000000000"),
    "rack-pitch-inf.yaml": ("schema", 12, "rack_pitch_m: input should be a finite number (got inf)"),
    "slack-nan.yaml": ("schema", 15, "slack_m: input should be a finite number (got nan)"),
    "quoted-count.yaml": ("schema", 22, "count: expected a whole number, got '16'"),
    "two-documents.yaml": ("yaml-syntax", 52, "a blueprint is one YAML document, and a second one starts here"),
    "list-beside-key.yaml": ("yaml-syntax", 8, "expected the end of the block, but found a key"),
    "cage-unit-separator.yaml": ("schema", 14, "has '\\x1f', which a form factor may not contain"),
    "catalogue-role-list.yaml": ("schema", 13, "role: a list is not allowed"),
    "transceiver-no-reach.yaml": ("schema", 12, "reach_m: dictionary should have at least 1 item"),
}


def test_the_corpus_is_all_listed():
    assert sorted(p.name for p in HOSTILE.glob("*.yaml")) == sorted(EXPECTED)


@pytest.fixture(scope="module")
def validated(tmp_path_factory) -> tuple[dict[str, dict], int]:
    """Every corpus file through `snc validate --format json`, in one process: its report per
    file and the process's peak memory (KB)."""
    big = tmp_path_factory.mktemp("big") / "huge.yaml"
    big.write_text("# padding\n" * (MAX_FILE_BYTES // 10 + 1) + "apiVersion: supernodeiac/v1\n")
    files = [str(HOSTILE / name) for name in sorted(EXPECTED)] + [str(big), "/dev/zero"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path_factory.mktemp("out") / "report.json"
    command = [sys.executable, "-m", "supernodeiac", "validate", "--format", "json", *files]
    with open(out, "wb") as stdout:
        try:
            measured = run_measured(command, env=env, stdout=stdout, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.fail("snc validate hung on the hostile corpus")
    assert measured.exit_code == 2
    return {os.path.basename(r["file"]): r for r in json.loads(out.read_bytes())}, measured.peak_kb


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_hostile_file_is_a_located_error(validated, name):
    reports, _ = validated
    report = reports[name]
    rule, line, words = EXPECTED[name]
    assert report["exit_code"] == 2 and report["stage"] == "unreadable", report
    [finding] = report["findings"]
    assert finding["rule"] == rule and finding["line"] == line, finding
    assert words in finding["message"], finding["message"]
    assert finding["hint"] or rule == "schema"


def test_huge_files_are_refused_unread(validated):
    reports, _ = validated
    [finding] = reports["huge.yaml"]["findings"]
    assert reports["huge.yaml"]["exit_code"] == 2 and finding["rule"] == "yaml-limit"
    assert f"{MAX_FILE_BYTES:,} bytes" in finding["message"]
    [finding] = reports["zero"]["findings"]  # a device is not opened at all
    assert reports["zero"]["exit_code"] == 2 and finding["rule"] == "io"
    assert "it is a character device, not a file" in finding["message"]


def test_the_corpus_stays_small_in_memory(validated):
    """A few hundred MB at most for the whole corpus (the alias bomb alone took 700 MB and
    growing before); the baseline of an `snc validate` is about 60 MB."""
    _, peak_kb = validated
    assert peak_kb < 400 * 1024


# -- every naming template ---------------------------------------------------------------------------

SMALL = (BLUEPRINTS / "small-ib.yaml").read_text()
CXL = (BLUEPRINTS / "cxl-pool.yaml").read_text()


def _at(text: str, path: tuple, q: str) -> tuple[str, tuple, int]:
    """(text, path, the line the template sits on): lines counted, so that shipped blueprints may change."""
    return text, path, text[: text.index(q)].count("\n") + 1


def _with(template: str, field: str) -> tuple[str, tuple, int]:
    """A shipped blueprint with ``template`` in ``field``: (text, path of the finding, its line)."""
    q = json.dumps(template)
    if field == "naming.cable_id":
        return _at(SMALL.replace("\nsite:", f"\nnaming: {{cable_id: {q}}}\nsite:", 1), ("naming", "cable_id"), q)
    if field == "naming.cable_label":
        return _at(SMALL.replace("\nsite:", f"\nnaming: {{cable_label: {q}}}\nsite:", 1), ("naming", "cable_label"), q)
    if field == "naming.end_label":
        return _at(SMALL.replace("\nsite:", f"\nnaming: {{end_label: {q}}}\nsite:", 1), ("naming", "end_label"), q)
    if field == "naming.short_label":
        text = SMALL.replace("\nsite:", f"\nnaming: {{short_label: [{q}]}}\nsite:", 1)
        return _at(text, ("naming", "short_label", 0), q)
    if field == "naming.devices":
        text = SMALL.replace("\nsite:", f"\nnaming: {{devices: {{spine: {q}}}}}\nsite:", 1)
        return _at(text, ("naming", "devices", "spine"), q)
    if field == "site.rack_name":
        return _at(SMALL.replace("site:\n", f"site:\n  rack_name: {q}\n", 1), ("site", "rack_name"), q)
    if field == "nodes.naming":
        return _at(SMALL.replace("    count: 16\n", f"    count: 16\n    naming: {q}\n", 1), ("nodes", 0, "naming"), q)
    if field == "cxl.hosts.naming":
        text = CXL.replace("        count: 2\n", f"        count: 2\n        naming: {q}\n", 1)
        return _at(text, ("cxl", 0, "hosts", 1, "naming"), q)
    if field == "catalogue.port_maps.alias":
        override = (
            "\ncatalogue:\n  port_maps:\n    sn2201:\n      groups:\n"
            f"        - {{role: data, name_step: 1, lane_step: 4, alias: {q}}}\nsite:"
        )
        return _at(SMALL.replace("\nsite:", override, 1), ("catalogue", "port_maps", "sn2201", "groups", 0, "alias"), q)
    if field == "catalogue.host_topology.nic.rdma_device":
        override = f"\ncatalogue: {{host_topology: {{hgx-h100: {{nic: {{rdma_device: {q}}}}}}}}}\nsite:"
        path = ("catalogue", "host_topology", "hgx-h100", "nic", "rdma_device")
        return _at(SMALL.replace("\nsite:", override, 1), path, q)
    assert field in ("catalogue.ports.name", "catalogue.ports.physical")
    key = field.rsplit(".", 1)[1]
    port = f"name: {q}" if key == "name" else f"name: 'IB1/{{cage}}/{{sub}}', physical: {q}"
    override = (
        "\ncatalogue:\n  devices:\n    qm9700:\n      ports:\n"
        f"        - {{role: data, count: 64, speed_gbps: 400, lanes: 4, cage: osfp, ports_per_cage: 2, {port}}}\n"
        "        - {role: mgmt, count: 1, speed_gbps: 1, lanes: 1, cage: rj45, name: mgmt0}\nsite:"
    )
    return _at(SMALL.replace("\nsite:", override, 1), ("catalogue", "devices", "qm9700", "ports", 0, key), q)


TEMPLATE_FIELDS = [
    "naming.cable_id",
    "naming.cable_label",
    "naming.end_label",
    "naming.short_label",
    "naming.devices",
    "site.rack_name",
    "nodes.naming",
    "cxl.hosts.naming",
    "catalogue.ports.name",
    "catalogue.ports.physical",
    "catalogue.port_maps.alias",
    "catalogue.host_topology.nic.rdma_device",
]
# What a spreadsheet runs (each start), what cannot be formatted small, what other formats cannot hold.
HOSTILE_TEMPLATES = ["={index}", "+{index}", "-{index}", "@{index}", "\t{index}", "\r{index}", "{index:>9999999}", "{index!r}"]


@pytest.mark.parametrize("field", TEMPLATE_FIELDS)
@pytest.mark.parametrize("template", HOSTILE_TEMPLATES)
def test_every_naming_template_refuses_hostile_text_at_its_line(field, template):
    text, path, line = _with(template, field)
    c = compile_text(text)
    assert c.exit_code == 2, [f.message for f in c.findings]
    [finding] = c.findings
    assert finding.path[: len(path)] == path and finding.location.line == line, (finding.path, finding.location)
    assert finding.rule in ("naming", "schema") and "naming template" in finding.message


def _template_fields(model: type[BaseModel], prefix: str, seen: set) -> typing.Iterator[str]:
    """Model fields that hold a naming template: a default with a {field}, or a description
    that lists the fields it takes."""
    if model in seen:
        return
    seen.add(model)
    for name, f in model.model_fields.items():
        default = f.default if isinstance(f.default, str) else ""
        description = f.description or ""
        text = str in _types_in(f.annotation)
        if text and ("{" in default or "{" in description or "template" in description):
            yield f"{prefix}{name}"
        for tp in _models_in(f.annotation):
            yield from _template_fields(tp, f"{prefix}{name}.", seen)


def _types_in(tp) -> set:
    return {tp} | {t for arg in typing.get_args(tp) for t in _types_in(arg)}


def _models_in(tp) -> typing.Iterator[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        yield tp
    for arg in typing.get_args(tp):
        yield from _models_in(arg)


def test_every_template_field_is_covered():
    """A new template field (a default or a description with {fields}) must be added above."""
    found = set(_template_fields(Blueprint, "", set())) | set(_template_fields(Catalogue, "catalogue.", set()))
    found |= set(_template_fields(HostLayouts, "catalogue.", set()))
    covered = {
        "naming.cable_id",
        "naming.cable_label",
        "naming.end_label",
        "naming.short_label",
        "naming.devices",
        "site.rack_name",
        "nodes.naming",
        "cxl.hosts.naming",
        "catalogue.devices.ports.name",
        "catalogue.devices.ports.physical",
        "catalogue.port_maps.groups.alias",
        "catalogue.host_topology.nic.rdma_device",
        # Literal OS names, not a template (its description says so): held to a port name's
        # characters at their line, test_literal_port_names_refuse_hostile_text_at_their_line.
        "catalogue.devices.ports.names",
    }
    assert found == covered, found ^ covered


@pytest.mark.parametrize("bad", ["=cmd", "a;id", "x\\ty", "$(id)", "a b", "mlx5_0\\u2028x"])
def test_literal_port_names_refuse_hostile_text_at_their_line(bad):
    names = ", ".join(f"'p{i}'" for i in range(63)) + f', "{bad}"'
    override = (
        "\ncatalogue:\n  devices:\n    qm9700:\n      ports:\n"
        f"        - {{role: data, count: 64, speed_gbps: 400, lanes: 4, cage: osfp, ports_per_cage: 2, names: [{names}]}}\n"
        "        - {role: mgmt, count: 1, speed_gbps: 1, lanes: 1, cage: rj45, name: mgmt0}\nsite:"
    )
    c = compile_text(SMALL.replace("\nsite:", override, 1))
    assert c.exit_code == 2, [f.message for f in c.findings]
    assert any(f.path[:6] == ("catalogue", "devices", "qm9700", "ports", 0, "names") for f in c.findings), [
        (f.path, f.message) for f in c.findings
    ]


# -- numbers -----------------------------------------------------------------------------------------


def _unbounded(schema: dict, node: object, path: str, seen: set) -> typing.Iterator[str]:
    """Paths of numeric fields in a JSON schema without both a lower and an upper bound."""
    if isinstance(node, list):
        for item in node:
            yield from _unbounded(schema, item, path, seen)
        return
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if (name, path) not in seen:
            seen.add((name, path))
            yield from _unbounded(schema, schema["$defs"][name], path, seen)
        return
    if node.get("type") in ("integer", "number") and "enum" not in node and "const" not in node:
        low = "minimum" in node or "exclusiveMinimum" in node
        high = "maximum" in node or "exclusiveMaximum" in node
        if not (low and high):
            yield path
    for key, value in node.items():
        if key == "properties":
            for name, sub in value.items():
                yield from _unbounded(schema, sub, f"{path}.{name}", seen)
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems"):
            yield from _unbounded(schema, value, f"{path}[]" if key != "anyOf" else path, seen)


@pytest.mark.parametrize("model", [Blueprint, Catalogue, HostLayouts], ids=lambda m: m.__name__)
def test_every_number_in_the_schema_is_bounded(model):
    """No number a blueprint (or a catalogue override) gives can be infinite or unboundedly large:
    each has a minimum and a maximum in the schema, which the compiler enforces too."""
    schema = model.model_json_schema(by_alias=True)
    assert list(_unbounded(schema, schema, model.__name__, set())) == []


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("count: 16", 'count: "16"', "expected a whole number, got '16'"),
        ("count: 16", "count: 16.0", "expected a whole number, got 16.0"),
        ("count: 16", "count: true", "expected a whole number, got True"),
        ("rail_optimized: true", "rail_optimized: 1", "expected true or false, got 1"),
        ("rack_pitch_m: 0.6", 'rack_pitch_m: "0.6"', "expected a number, got '0.6'"),
        ("tiers: 2", 'tiers: "2"', "'2' is not allowed"),
    ],
)
def test_no_silent_coercion(old, new, words):
    """The docs call a wrong type an error: a quoted number is text, not a number."""
    c = compile_text(SMALL.replace(old, new, 1))
    assert c.exit_code == 2 and words in c.findings[0].message, [f.message for f in c.findings]
