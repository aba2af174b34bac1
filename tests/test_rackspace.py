"""Rack space: overlapping devices are errors located at the device group's entry."""

from __future__ import annotations

from conftest import compile_text

BASE = """\
apiVersion: supernodeiac/v1
kind: Blueprint
metadata: {name: rack-test}
site:
  rack_units: 42
  rows:
    - {name: A, racks: 1}
nodes:
  - name: gpu
    model: hgx-h100
    count: 2
    placement: {row: A, per_rack: 2, first_u: 1}
  - name: stor
    model: storage-node
    count: 1
    placement: {row: A, first_u: FIRST}
"""


def _findings(first_u: int):
    c = compile_text(BASE.replace("FIRST", str(first_u)))
    return c, [f for f in c.findings if f.rule == "rack-space"]


def test_free_units_are_fine():
    c, found = _findings(17)  # nodes take U1-U16
    assert found == [] and c.exit_code == 0


def test_overlap_is_an_error_at_the_group():
    c, found = _findings(16)
    assert len(found) == 1
    assert "stor-0001 (U16-U17) overlaps gpu-0002" in found[0].message
    assert (found[0].location.line, found[0].location.col) == (13, 5)  # '- name: stor'
    assert c.exit_code == 1


def test_management_switch_overlap_is_reported():
    text = BASE.replace("FIRST", "41") + "management: {switch: sn2201}\n"
    c = compile_text(text)  # storage U41-U42, management switch defaults to U42
    assert any(f.rule == "rack-space" and "mgmt-A01" in f.message for f in c.findings)
