"""config_db.json -> SONiC YANG instance data, validated by libyang (the real SONiC models).

The mapping follows sonic-yang-mgmt's ``sonic_yang_ext.py`` (shared/reference/formats.md 2.3):
a module whose top container bears the module's name holds one container per table; a table's
entries go to the list whose key count matches the ``|``-separated key (or, for a table without
a list, to the inner container named by the key); "type 1" maps (a list holding a list, e.g.
DSCP_TO_TC_MAP) become inner lists of {key, value}; uint/int leaves become JSON numbers, booleans
JSON booleans, the few comma-separated leaf-lists JSON arrays, everything else stays a string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import libyang

MODELS = Path(__file__).resolve().parent.parent / "data" / "sonic-yang"

# Leaf-lists SONiC keeps as one comma-separated string in config_db (sonic_yang_ext.py).
SPLIT_LEAF_LISTS = {"adv_speeds", "adv_interface_types", "profile_list", "dhcp_servers", "dhcpv6_servers"}
_INTS = {libyang.Type.UINT8, libyang.Type.UINT16, libyang.Type.UINT32, libyang.Type.INT8, libyang.Type.INT16, libyang.Type.INT32}


@dataclass
class Table:
    module: str
    container: str
    lists: list[tuple[str, list[str], dict[str, object]]] = field(default_factory=list)  # (name, keys, leaves)
    inner: dict[str, dict[str, object]] = field(default_factory=dict)  # container tables: key -> leaves


def _leaf_kind(node: object) -> str:
    if isinstance(node, libyang.SLeafList):
        return "leaf-list"
    t = node.type()  # type: ignore[attr-defined]
    base = t.base()
    while base == libyang.Type.LEAFREF:  # a leafref's value is its target's (MCLAG_INTERFACE domain_id: uint16)
        t = t.leafref_type()
        base = t.base()
    if base in _INTS:
        return "int"
    if base == libyang.Type.BOOL:
        return "bool"
    if base == libyang.Type.UNION:
        bases = {u.base() for u in t.union_types()}
        if bases and bases <= _INTS:
            return "int"
    return "str"


@lru_cache(maxsize=1)
def context() -> tuple[libyang.Context, dict[str, Table]]:
    ctx = libyang.Context(str(MODELS))
    names = sorted(p.stem for p in MODELS.glob("*.yang"))
    for name in names:
        ctx.load_module(name)
    tables: dict[str, Table] = {}
    for name in names:  # schema nodes are read after every load (libyang 2 recompiles on each load)
        module = ctx.get_module(name)
        for top in module.children():
            if top.name() != name:
                continue
            for tbl in top.children():
                table = Table(name, tbl.name())
                for child in tbl.children():
                    if isinstance(child, libyang.SList):
                        leaves: dict[str, object] = {}
                        for leaf in child.children():
                            if isinstance(leaf, libyang.SList):  # a "type 1" map: list in a list
                                inner = {n.name(): _leaf_kind(n) for n in leaf.children()}
                                (inner_key,) = [k.name() for k in leaf.keys()]  # noqa: SIM118 - libyang's SList.keys()
                                (value,) = [n for n in inner if n != inner_key]
                                leaves[leaf.name()] = ("map", inner_key, inner[inner_key], value, inner[value])
                            else:
                                leaves[leaf.name()] = _leaf_kind(leaf)
                        table.lists.append((child.name(), [k.name() for k in child.keys()], leaves))  # noqa: SIM118
                    elif isinstance(child, libyang.SContainer):
                        table.inner[child.name()] = {leaf.name(): _leaf_kind(leaf) for leaf in child.children()}
                tables.setdefault(tbl.name(), table)
    return ctx, tables


class UnknownTable(ValueError):
    pass


def _value(kind: object, name: str, value: object) -> object:
    if kind == "int":
        return int(value)  # type: ignore[arg-type]
    if kind == "bool":
        return value in (True, "true", "True")
    if kind == "leaf-list":
        if isinstance(value, list):
            return value
        return str(value).split(",") if name in SPLIT_LEAF_LISTS else [value]
    return value


def to_yang(config: dict) -> dict:
    """The YANG instance document of a whole config_db (unknown tables raise UnknownTable)."""
    _, tables = context()
    out: dict[str, dict] = {}
    for table_name, entries in config.items():
        table = tables.get(table_name)
        if table is None:
            raise UnknownTable(table_name)
        top = out.setdefault(f"{table.module}:{table.module}", {})
        body = top.setdefault(table_name, {})
        for key, fields in entries.items():
            if table.inner:
                leaves = table.inner[key]
                body[key] = {k: _value(leaves[k], k, v) for k, v in fields.items()}
                continue
            parts = key.split("|")
            found = next((lst for lst in table.lists if len(lst[1]) == len(parts)), None)
            if found is None:
                raise ValueError(f"{table_name}: no list takes the key {key!r}")
            list_name, keys, leaves = found
            item: dict[str, object] = dict(zip(keys, parts))
            for k in keys:
                item[k] = _value(leaves.get(k, "str"), k, item[k])
            maps = [(n, spec) for n, spec in leaves.items() if isinstance(spec, tuple)]
            if maps:
                name, (_, inner_key, key_kind, inner_value, kind) = maps[0]
                item[name] = [
                    {inner_key: _value(key_kind, inner_key, k), inner_value: _value(kind, inner_value, v)}
                    for k, v in fields.items()
                ]
            else:
                for k, v in fields.items():
                    item[k] = _value(leaves.get(k, "str"), k, v)
            body.setdefault(list_name, []).append(item)
    return out


def validate(config: dict) -> None:
    """Raise libyang.LibyangError with libyang's message when the config breaks the SONiC models."""
    ctx, _ = context()
    tree = ctx.parse_data_mem(json.dumps(to_yang(config)), "json", strict=True, no_state=True, validate_present=True)
    if tree is not None:
        tree.free()
