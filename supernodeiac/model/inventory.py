"""The site's inventory: what is known of each physical device before it boots (its management
port's MAC address, its serial number), keyed by the device's planned name, or ``device:port`` for
one management port of a device with several. The DHCP reservations use the MAC where given."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from .base import Strict

_MAC = re.compile(r"[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(\1[0-9A-Fa-f]{2}){4}")


def _mac(value: str) -> str:
    if not _MAC.fullmatch(value):
        raise ValueError(f"{value!r} is not a MAC address (six hex pairs with ':' or '-')")
    return value.replace("-", ":").lower()


Mac = Annotated[str, AfterValidator(_mac)]
InventoryKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9][A-Za-z0-9 ._/-]*)?$")]


class InventoryEntry(Strict):
    mac: Mac | None = Field(None, description="MAC address of the management port (BMC, switch eth0, PDU)")
    serial: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$")] | None = None
