"""Cabling list, cable routes and the management network, checked against the blueprint's geometry."""

from __future__ import annotations

import csv
import io

from supernodeiac.outputs import RenderContext
from supernodeiac.outputs.cabling import render_cabling


def _rows(c):
    data = render_cabling(RenderContext(c.blueprint, c.catalogue, c.fabric))["cabling/links.csv"]  # the per-link view
    return list(csv.DictReader(io.StringIO(data.decode())))


def test_every_cable_matches_both_ends(small_ib):
    f = small_ib.fabric
    rows = _rows(small_ib)
    by_id = {link.id: link for link in f.links}
    assert len(rows) == len(f.links) == len(by_id)
    for row in rows:
        link = by_id[row["cable_id"]]
        for end, dev, port in (("a", link.a, link.a_port), ("b", link.b, link.b_port)):
            d = f.devices[dev]
            assert row[f"{end}_device"] == d.name
            assert row[f"{end}_port"] == f.port_name(dev, port)
            assert row[f"{end}_rack"] == f.racks[d.rack].name
            assert row[f"{end}_u"] == (str(d.u) if d.u else "")  # a 0U device (a rear PDU) has no U
            layout = f.layouts[d.model]
            cage = layout.cage_of(port)
            assert row[f"{end}_physical"] == layout.physical_name(port)
            assert row[f"{end}_cage"] == layout.cage_label(cage)
            assert port in layout.cage_ports(cage)
        # ordered length is a stock length of the assembly (or of a transceiver link's fibre
        # cord), never shorter than the route; the part is orderable at that length
        cat = small_ib.catalogue
        medium = cat.media[row["medium"]]
        stock = cat.cords[medium.cord].stock_lengths_m if medium.shape == "transceiver" else medium.stock_lengths_m
        assert float(row["length_m"]) in stock
        assert float(row["length_m"]) >= float(row["routed_m"])
        assert row["part"]
        if medium.shape == "transceiver":
            assert row["a_transceiver"] == cat.transceivers[link.a_module].part.number
            assert row["b_transceiver"] == cat.transceivers[link.b_module].part.number
            assert row["fibres"] == "1"  # one fibre per 400G port


def test_route_length_formula(small_ib):
    """Node in rack A01 to a leaf in rack N01: up, along the tray, across rows, down, + slack."""
    bp, f = small_ib.blueprint, small_ib.fabric
    site = bp.site
    node = f.device("gpu-0001")  # A01, U2, 8U
    link = next(k for k in f.links if k.a == node.index and k.fabric == "ib")
    leaf = f.devices[link.b]
    top = site.rack_units * site.unit_height_m
    ya = (node.u - 1 + node.height_u / 2) * site.unit_height_m
    yb = (leaf.u - 1 + leaf.height_u / 2) * site.unit_height_m
    ra, rb = f.racks[node.rack], f.racks[leaf.rack]
    assert (ra.name, rb.name) == ("A01", "N01")
    across = site.row_pitch_m * 1  # rows A and N are adjacent
    along = abs(ra.position - rb.position) * site.rack_pitch_m
    expected = (top - ya) + (top - yb) + 2 * site.tray_height_m + along + across + site.slack_m
    assert abs(link.length_m - expected) < 1e-9


def test_rail_optimised_cabling(small_ib):
    """NIC r of every node lands on a leaf of rail r; each leaf serves one rail."""
    f = small_ib.fabric
    checked = 0
    for link in f.links:
        a, b = f.devices[link.a], f.devices[link.b]
        if a.group == "gpu" and link.fabric == "ib":
            # NIC r is data port r (named as a DGX H100 enumerates it: mlx5_0, 3, 4, ...).
            rail = f.layouts[a.model].ports_of("data").index(link.a_port)
            assert b.role == "leaf" and b.coord("rail") == rail
            checked += 1
    assert checked == 16 * small_ib.catalogue.devices["hgx-h100"].port_count("data")  # every NIC of the 16 nodes


def test_every_management_port_is_cabled_to_its_rack_switch(small_ib):
    """Every BMC to its rack's switch; the aggregation switches' own management ports to the OOB
    switch, which does not uplink through them (no switch is managed through itself)."""
    f = small_ib.fabric
    mgmt_ports = {(d.index, p) for d in f.devices for p in f.layout(d).ports_of("mgmt")}
    cabled = {}
    for link in f.links:
        if link.fabric == "mgmt" and (link.a, link.a_port) in mgmt_ports:
            cabled[(link.a, link.a_port)] = link.b
    assert set(cabled) == mgmt_ports
    [oob] = [d.index for d in f.devices if d.role == "mgmt-oob"]
    aggs = {d.index for d in f.devices if d.role == "mgmt-agg"}
    assert len(aggs) == 2
    for (dev, _), switch in cabled.items():
        if dev in aggs:
            assert switch == oob
            continue
        assert f.devices[switch].role == "mgmt"
        assert f.devices[switch].rack == f.devices[dev].rack  # in-rack management cabling
    # The only links between the OOB switch and the aggregation switches are their management ports.
    for link in f.links:
        if {link.a, link.b} & aggs and oob in (link.a, link.b):
            agg, port = (link.a, link.a_port) if link.a in aggs else (link.b, link.b_port)
            assert (agg, port) in mgmt_ports
    racks_with_devices = {d.rack for d in f.devices if d.role != "mgmt"}
    assert sum(1 for d in f.devices if d.role == "mgmt") == len(racks_with_devices)


def test_a_short_label_field_holding_a_nul_is_formatted_line_by_line(small_ib):
    """cable_rows formats a short label's lines in one call split at NUL; a rack name holding a
    NUL must give the same lines as any other character in its place (here '#', which nothing
    else in the labels holds), not lines split inside the name."""
    import dataclasses

    from supernodeiac.outputs.cabling import CABLE_COLUMNS, cable_rows

    def rows(mark: str) -> list[list[str]]:
        racks = [dataclasses.replace(r, name=f"R{mark}{r.name}") for r in small_ib.fabric.racks]
        fabric = dataclasses.replace(small_ib.fabric, racks=racks)
        return [r.text for r in cable_rows(RenderContext(small_ib.blueprint, small_ib.catalogue, fabric), with_ends=False)]

    plain, nul = rows("#"), rows("\0")
    assert len(plain) == len(nul) > 0
    short = [CABLE_COLUMNS.index("a_short_label"), CABLE_COLUMNS.index("b_short_label")]
    for p, n in zip(plain, nul, strict=True):
        for k in short:
            assert "#" in p[k] and n[k] == p[k].replace("#", "\0")
            assert n[k].count(" | ") == p[k].count(" | ")  # as many lines either way
