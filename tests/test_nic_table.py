"""The host NIC table (columns, rows made on first use or in bulk) reads as the plain
``host -> [Nic, ...]`` dict built NIC by NIC, whichever way its rows are made, and a row read
twice is one list."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from supernodeiac.facts.nic_table import GroupOf, Nic, NicTable, row_ids

NAMES = ["mlx5_0", "mlx5_1", "eth2"]
GBPS = [400.0, 200.0]

# NICs as (host, port, switch); the table's other columns follow from them.
nics = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(10, 13)), max_size=14, unique_by=lambda n: n[:2])


def _table(rows: list[tuple[int, int, int]]) -> tuple[NicTable, dict[int, list[Nic]]]:
    rows = sorted(rows)
    host, port, switch = (np.array([r[k] for r in rows], dtype=np.int64) for k in range(3))
    name_row, switch_port, link, spec = port % 3, port + 20, np.arange(len(rows), dtype=np.int64) * 7, port % 2
    rails = {s: (None if s == 13 else s - 10) for s in range(10, 14)}
    table = NicTable(host, port, name_row, switch, switch_port, link, spec, NAMES, rails, GBPS)
    plain: dict[int, list[Nic]] = {}
    for k, (h, p, s) in enumerate(rows):
        plain.setdefault(h, []).append(Nic(p, NAMES[p % 3], s, p + 20, rails[s], k * 7, GBPS[p % 2]))
    return table, plain


@settings(max_examples=300, deadline=None)
@given(nics, st.lists(st.integers(-1, 8), max_size=6), st.booleans())
def test_the_table_reads_as_the_plain_dict(rows, first_read, bulk):
    table, plain = _table(rows)
    if bulk:
        table.make_rows(first_read)
    early = {h: table[h] for h in first_read if h in plain}
    assert all(h in table for h in plain) and not any(h in table for h in (-1, 7, 8, "x"))
    assert [h for h in first_read if h in table] == [h for h in first_read if h in plain]
    assert len(table) == len(plain) and list(table) == sorted(plain)
    assert dict(table.items()) == plain and list(table.values()) == [plain[h] for h in sorted(plain)]
    assert table == plain and {h: table.get(h) for h in range(-1, 9)} == {h: plain.get(h) for h in range(-1, 9)}
    assert all(table[h] is row for h, row in early.items())  # made once, kept
    assert table.counts().tolist() == [len(plain[h]) for h in sorted(plain)]
    assert table.rails_known() == all(n.rail is not None for ns in plain.values() for n in ns)
    keys, switches = table.switch_rows()
    assert keys.tolist() == sorted(plain)
    assert [[s for s in row if s >= 0] for row in switches.tolist()] == [[n.switch for n in plain[h]] for h in sorted(plain)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(-1, 3), min_size=3, max_size=3), min_size=1, max_size=12))
def test_row_ids_are_equal_exactly_for_equal_rows(rows):
    ids = row_ids(np.array(rows, dtype=np.int64)).tolist()
    assert sorted(set(ids)) == list(range(len({tuple(r) for r in rows})))
    for a in range(len(rows)):
        for b in range(len(rows)):
            assert (ids[a] == ids[b]) == (rows[a] == rows[b])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), unique=True, max_size=5), max_size=6), st.lists(st.integers(-1, 41), max_size=5))
def test_group_of_reads_as_the_plain_dict(groups, first_read):
    groups = [g for k, g in enumerate(groups) if not set(g) & {h for other in groups[:k] for h in other}]  # disjoint
    members = [np.array(sorted(g), dtype=np.int64) for g in groups]
    plain = {h: k for k, g in enumerate(members) for h in g.tolist()}
    table = GroupOf(members)
    assert [table.get(h) for h in first_read] == [plain.get(h) for h in first_read]  # looked up, no dict made
    assert all(h in table for h in plain) and -1 not in table and "x" not in table and len(table) == len(plain)
    assert list(table.items()) == list(plain.items()) and list(table) == list(plain) and table == plain
    assert [table[h] for h in first_read if h in plain] == [plain[h] for h in first_read if h in plain]
