"""su-splits-domain: a scalable unit boundary that cuts a multi-host scale-up domain is a warning
whose hint is the rack-aligned su_nodes."""

from __future__ import annotations

from conftest import BLUEPRINTS, compile_text

SHIPPED = (BLUEPRINTS / "nvl72-pod.yaml").read_text()


def _split(su_nodes: int | None) -> str:
    text = SHIPPED.replace("    su_nodes: 18\n", "" if su_nodes is None else f"    su_nodes: {su_nodes}\n")
    # The default SU's 20 leaves in two network racks; declared SUs keep the shipped 16 per rack.
    return text.replace("leaf: {row: N, per_rack: 16", "leaf: {row: N, per_rack: 10") if su_nodes is None else text


def test_nvl72_su_of_32_trays_warns_with_the_rack_aligned_size():
    c = compile_text(_split(None))  # default SU: the QM9700's 32 down ports
    (w,) = [f for f in c.findings if f.rule == "su-splits-domain"]
    assert w.severity.value == "warning" and c.exit_code == 0
    # 144 trays in SUs of 32: the boundaries at 32, 64, 96, 128 fall inside racks 2, 4, 6 and 8.
    assert "split 4 of 8 scale-up domains" in w.message and "nvl-02: 18 hosts over SUs 1, 2" in w.message
    assert "each domain is one rack" in w.message
    assert w.hint.startswith("su_nodes: 18 (1 whole scale-up domain per SU, rack-aligned)")
    assert w.path == ("scaleout", 0)


def test_declared_su_is_the_location_and_aligned_sizes_are_quiet():
    c = compile_text(_split(24))
    (w,) = [f for f in c.findings if f.rule == "su-splits-domain"]
    assert w.path == ("scaleout", 0, "su_nodes") and "su_nodes: 18" in w.hint
    assert not [f for f in compile_text(SHIPPED).findings if f.rule == "su-splits-domain"]
    # Servers (an HGX board is its own domain) have nothing to split.
    assert not [f for f in compile_text((BLUEPRINTS / "small-ib.yaml").read_text()).findings if f.rule == "su-splits-domain"]


def test_a_domain_on_whole_sus_of_its_own_is_aligned():
    # supercluster-2level: one 64-host two-level domain over two SUs of 32, nothing else on them.
    c = compile_text((BLUEPRINTS / "supercluster-2level.yaml").read_text())
    assert not [f for f in c.findings if f.rule == "su-splits-domain"]
