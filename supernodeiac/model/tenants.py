"""Tenants: who may talk to whom on the shared fabrics (InfiniBand partitions, for now)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema

from .base import Name, Strict

# The Default partition holds P_Key 0x7fff; a P_Key's low 15 bits name the partition (the top bit is
# the membership, set by the SM), so a tenant takes 0x0001-0x7ffe (opensm(8), PARTITION CONFIGURATION).
DEFAULT_PKEY = 0x7FFF
MAX_PKEY = 0xFFFF  # 16 bits


def _pkey(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("a P_Key is a number such as 0x8001 or 32769")
    if isinstance(value, str):
        try:
            value = int(value.strip(), 0)
        except ValueError:
            raise ValueError(f"{value!r} is not a P_Key such as 0x0101") from None
    if not isinstance(value, int):
        raise ValueError(f"{value!r} is not a P_Key such as 0x0101")
    if not 0 <= value <= MAX_PKEY:
        raise ValueError(f"P_Key {value:#x} is not a 16-bit number (0x0001-0xffff, the top bit the membership)")
    key = value & DEFAULT_PKEY  # the membership bit is the SM's business
    if not 1 <= key < DEFAULT_PKEY:
        raise ValueError(f"P_Key {value:#06x} is not between 0x0001 and 0x7ffe (0x7fff is the Default partition)")
    return key


PKey = Annotated[
    int,
    BeforeValidator(_pkey),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": MAX_PKEY},
                {"type": "string", "pattern": "^0[xX][0-9a-fA-F]{1,4}$"},
            ]
        }
    ),
]


class Tenant(Strict):
    """A tenant's hosts share an InfiniBand partition as full members; hosts of other tenants are
    not members of it, and every host is only a limited member of the Default partition."""

    name: Name
    pkey: PKey = Field(description="partition key, 0x0001-0x7ffe, unique among tenants")
    groups: list[Name] = Field(min_length=1, description="node groups or scale-up domains whose data ports join")
    ipoib: bool = Field(True, description="create the IPoIB broadcast group in the partition")
    mtu: Literal[2048, 4096] | None = Field(None, description="IPoIB multicast MTU in bytes; default: OpenSM's")
    sl: int | None = Field(None, ge=0, le=15, description="service level of the partition's multicast group")
