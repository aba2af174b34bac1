"""One scale-out fabric's host NICs as columns, read as ``host -> [Nic, ...]``; and its hosts'
leaf groups, read as ``host -> group``.

A Dragonfly+ has 10^6 hosts with a NIC each: a ``Nic`` tuple and a list per host cost about
0.3 KB and a second of CPU per 10^6, and a validate reads a few of them (one host per group of
alike hosts). The table keeps the columns (sorted by host, then port) and makes a host's row on
first use; the readers that walk every host get every row made in one bulk pass.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from typing import NamedTuple

import numpy as np


class Nic(NamedTuple):
    """One data port of a host cabled to a scale-out fabric (a named tuple: 10^5 of them are made
    per render, twice as fast as a frozen dataclass)."""

    port: int  # port index on the host
    name: str  # the port's (OS) name, e.g. mlx5_0
    switch: int  # device index of the switch at the other end
    switch_port: int
    rail: int | None  # the switch's rail coordinate (rail-optimised fat trees)
    link: int  # position in the Fabric's link table
    gbps: float


class NicTable(Mapping[int, list[Nic]]):
    """host -> its NICs on one fabric, in port order (rows made on first use and kept; read
    them, do not change them)."""

    __slots__ = ("host", "switch", "_starts", "_keys", "_cols", "_names", "_rails", "_gbps", "_rows", "_whole")

    def __init__(
        self,
        host: np.ndarray,  # per NIC, sorted (then by port)
        port: np.ndarray,
        name_row: np.ndarray,  # per NIC: index into names
        switch: np.ndarray,
        switch_port: np.ndarray,
        link: np.ndarray,
        spec: np.ndarray,  # per NIC: index into gbps
        names: list[str],
        rails: dict[int, int | None],  # switch -> its rail coordinate
        gbps: list[float],
    ) -> None:
        self.host, self.switch = host, switch
        first = np.concatenate(([True], host[1:] != host[:-1])) if len(host) else np.zeros(0, dtype=bool)
        self._starts = np.append(np.flatnonzero(first), len(host))
        self._keys = host[first]  # the hosts, ascending
        self._cols = (port, name_row, switch, switch_port, link, spec)
        self._names, self._rails, self._gbps = names, rails, gbps
        self._rows: dict[int, list[Nic]] = {}
        self._whole = False

    def _make(self, at: slice | np.ndarray) -> list[Nic]:
        """The Nic tuples of the NIC rows ``at``."""
        port, name_row, switch, switch_port, link, spec = (c[at].tolist() for c in self._cols)
        names, rails, gbps = self._names, self._rails, self._gbps
        return list(
            map(
                Nic._make,
                zip(
                    port,
                    [names[r] for r in name_row],
                    switch,
                    switch_port,
                    [rails[s] for s in switch],
                    link,
                    [gbps[s] for s in spec],
                    strict=True,
                ),
            )
        )

    def __getitem__(self, host: int) -> list[Nic]:
        row = self._rows.get(host)
        if row is None:
            i = sorted_index(self._keys, host)
            row = self._rows[host] = self._make(slice(int(self._starts[i]), int(self._starts[i + 1])))
        return row

    def make_rows(self, hosts: list[int]) -> None:
        """Make the rows of ``hosts`` (those on this fabric and not made yet) in one pass: for a
        reader about to read 10^4 of them."""
        want = np.array(hosts, dtype=np.int64)
        i = np.searchsorted(self._keys, want)
        found = i < len(self._keys)
        i = i[found]
        i = np.unique(i[self._keys[i] == want[found]])
        rows = self._rows
        i = i[np.fromiter((h not in rows for h in self._keys[i].tolist()), dtype=bool, count=len(i))]
        if not len(i):
            return
        lo, counts = self._starts[i], self._starts[i + 1] - self._starts[i]
        ends = np.cumsum(counts)
        made = self._make(np.repeat(lo - (ends - counts), counts) + np.arange(int(ends[-1])))
        for h, x, y in zip(self._keys[i].tolist(), (ends - counts).tolist(), ends.tolist(), strict=True):
            rows[h] = made[x:y]

    def __contains__(self, host: object) -> bool:
        if host in self._rows:
            return True
        try:
            sorted_index(self._keys, host)  # type: ignore[arg-type]
        except (KeyError, TypeError):
            return False
        return True

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys.tolist())

    def __len__(self) -> int:
        return len(self._keys)

    def counts(self) -> np.ndarray:
        """NICs per host (as the hosts iterate)."""
        return np.diff(self._starts)

    def switch_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(the hosts, ascending; per host a row of the switches its NICs reach in port order,
        padded with -1 to the most NICs a host has)."""
        return self._keys, padded_rows(self.counts(), self.switch)

    def rails_known(self) -> bool:
        """Whether every NIC's switch has a rail coordinate."""
        return all(self._rails[s] is not None for s in np.unique(self.switch).tolist())

    def _all(self) -> dict[int, list[Nic]]:
        """Every host's row, made in one pass (those made before are kept, so a row read twice is
        one list)."""
        if not self._whole:
            made = self._make(slice(None))
            rows = self._rows
            starts = self._starts.tolist()
            for k, h in enumerate(self._keys.tolist()):
                if h not in rows:
                    rows[h] = made[starts[k] : starts[k + 1]]
            self._rows = {h: rows[h] for h in self._keys.tolist()}  # in host order, as iterated
            self._whole = True
        return self._rows

    def items(self) -> ItemsView[int, list[Nic]]:
        return self._all().items()

    def values(self) -> ValuesView[list[Nic]]:
        return self._all().values()


def sorted_index(keys: np.ndarray, key: int) -> int:
    """The place of ``key`` in the ascending ``keys``; KeyError when it is not there."""
    i = int(np.searchsorted(keys, key))
    if i == len(keys) or keys[i] != key:
        raise KeyError(key)
    return i


def padded_rows(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (row after row, ``counts[r]`` for row r) as a 2-d table, each row padded with -1
    to the longest."""
    table = np.full((len(counts), int(counts.max()) if len(counts) else 0), -1, dtype=np.int64)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    table[np.repeat(np.arange(len(counts)), counts), np.arange(len(values)) - starts] = values
    return table


def row_ids(table: np.ndarray) -> np.ndarray:
    """Per row of a 2-d int table: a compact id (0..), the same for equal rows (a unique per
    column: faster than one over the rows)."""
    key = np.zeros(len(table), dtype=np.int64)
    for column in table.T:
        _, column = np.unique(column, return_inverse=True)
        _, key = np.unique(key * (int(column.max()) + 1) + column, return_inverse=True)
    return key.reshape(-1)


class GroupOf(Mapping[int, int]):
    """host -> its leaf group's index, from each group's hosts: looked up in the sorted hosts; the
    dict of every host (10^6 entries, about 0.1 KB each) is made only for a reader that walks it."""

    __slots__ = ("_hosts", "_groups", "_sorted", "_sorted_groups", "_dict")

    def __init__(self, members: list[np.ndarray]) -> None:
        self._hosts = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)  # group by group
        self._groups = np.repeat(np.arange(len(members), dtype=np.int64), [len(m) for m in members])
        order = np.argsort(self._hosts, kind="stable")
        self._sorted, self._sorted_groups = self._hosts[order], self._groups[order]
        self._dict: dict[int, int] | None = None

    def __getitem__(self, host: int) -> int:
        if self._dict is not None:
            return self._dict[host]
        return int(self._sorted_groups[sorted_index(self._sorted, host)])

    def __contains__(self, host: object) -> bool:
        try:
            self[host]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def _all(self) -> dict[int, int]:
        if self._dict is None:  # in group order, then host order: as the groups list them
            self._dict = dict(zip(self._hosts.tolist(), self._groups.tolist(), strict=True))
        return self._dict

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._hosts)

    def items(self) -> ItemsView[int, int]:
        return self._all().items()

    def values(self) -> ValuesView[int]:
        return self._all().values()
