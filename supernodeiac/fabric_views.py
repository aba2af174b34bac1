"""Read-only views of a Fabric that several consumers share (the diagrams, ``snc explain``).

They live here rather than in one consumer so that a report does not import a renderer.
"""

from __future__ import annotations

from .fabric import Fabric, Link


def links_by_fabric(f: Fabric) -> dict[str, list[Link]]:
    """The links of every fabric, in one pass (each fabric's in Fabric order)."""
    out: dict[str, list[Link]] = {}
    for link in f.links:
        bucket = out.get(link.fabric)
        if bucket is None:
            bucket = out[link.fabric] = []
        bucket.append(link)
    return out


def local_tiers(f: Fabric, name: str, links: list[Link]) -> dict[int, int]:
    """Every member device of a fabric -> its tier in that fabric.

    A device keeps its own tier in the fabric that built it (``Device.group`` is the fabric's
    name) and is an endpoint (tier 0) of every other fabric it is cabled to. A fabric that built
    none of its devices keeps their tiers as they are.
    """
    devices = f.devices
    members = {k.a for k in links} | {k.b for k in links}
    own = any(devices[i].group == name for i in members)
    return {i: devices[i].tier if (not own or devices[i].group == name) else 0 for i in members}
