"""The class of a scale-up system (snc's three classes, by coupling more than size), one rule for the ``scaleup`` check's text
and the Kubernetes ``system-class`` label: SuperNode from 16 accelerators (8 is the mature
baseline), SuperPoD "hundreds" in one scale-up network (we start at 256: ZTE's X128 and NVL72 are
called supernodes), SuperCluster = several scale-up levels. Definitions of terms, not hardware
figures."""

from __future__ import annotations

from typing import Literal

SUPERNODE_MIN = 16
SUPERPOD_MIN = 256

SystemClass = Literal["supercluster", "superpod", "supernode", "server"]


def system_class_of(accelerators: int, levels: int) -> SystemClass:
    if levels >= 2:
        return "supercluster"
    if accelerators >= SUPERPOD_MIN:
        return "superpod"
    if accelerators >= SUPERNODE_MIN:
        return "supernode"
    return "server"
