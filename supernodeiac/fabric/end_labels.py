"""Each cable end's label text (``naming.end_label``, TIA-606 practice: the local end, then the far
end), formatted the same way wherever a cable end is named: the cabling list, the point-to-point
sheets and ``snc verify``'s fixes.

The default template (and any like it) is near[device] + port + far[far device] + far port +
suffix: the device parts are formatted once per device, so 10^6 labels cost a few concatenations
each; any other template is formatted per end with positional fields.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from ..model.blueprint import Blueprint
from ..model.common import END_LABEL_FIELDS
from . import Fabric
from .cable_naming import end_label_affixes, positional_format

# naming.end_label fields: the local end's, then the far end's (far_ + name).
LABEL_FIELDS = END_LABEL_FIELDS + tuple("far_" + x for x in END_LABEL_FIELDS)


class EndLabels:
    """Label texts of cable ends of one Fabric (per-device parts made once)."""

    def __init__(self, blueprint: Blueprint, fabric: Fabric) -> None:
        self.fabric = fabric
        self.site = blueprint.site.name or blueprint.metadata.name
        racks = fabric.racks
        # (row, rack, U, device) of every device
        self.ends: list[tuple[str, str, int, str]] = []
        for d in fabric.devices:
            r = racks[d.rack] if d.rack >= 0 else None
            self.ends.append((r.row, r.name, d.u, d.name) if r else ("", "", d.u, d.name))
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None  # near and far as arrays, for columns()
        template = blueprint.naming.end_label
        self._format = positional_format(template, LABEL_FIELDS)
        self.affixes = end_label_affixes(template)
        if self.affixes is not None:
            near_tpl, near_port, far_tpl, far_port, self.suffix = self.affixes
            fields = [dict(site=self.site, row=e[0], rack=e[1], u=e[2], device=e[3]) for e in self.ends]
            self.near = [near_tpl.format(**x) for x in fields]
            self.far = [far_tpl.format(**x) for x in fields]
            self.pick_near, self.pick_far = (1 if near_port == "port" else 0), (1 if far_port == "port" else 0)

    def pair(self, a: int, a_port: str, a_physical: str, b: int, b_port: str, b_physical: str, cable: str) -> tuple[str, str]:
        """(A end's label, B end's label) of a cable; ports by OS name and printed name."""
        if self.affixes is not None:
            a_ends, b_ends = (a_port, a_physical), (b_port, b_physical)
            return (
                self.near[a] + a_ends[self.pick_near] + self.far[b] + b_ends[self.pick_far] + self.suffix,
                self.near[b] + b_ends[self.pick_near] + self.far[a] + a_ends[self.pick_far] + self.suffix,
            )
        ea, eb = self.ends[a], self.ends[b]
        a_fields = (self.site, ea[0], ea[1], ea[2], ea[3], a_physical, a_port, cable)
        b_fields = (self.site, eb[0], eb[1], eb[2], eb[3], b_physical, b_port, cable)
        return self._format(*a_fields, *b_fields), self._format(*b_fields, *a_fields)

    def columns(
        self,
        a: np.ndarray,
        a_port: list[str],
        a_physical: list[str],
        b: np.ndarray,
        b_port: list[str],
        b_physical: list[str],
        cable: list[str],
    ) -> tuple[list[str], list[str]]:
        """:meth:`pair` of many cables at once (devices as int arrays, the rest as columns): the
        A ends' labels, then the B ends', each column joined in C."""
        if self.affixes is not None:
            if self._arrays is None:
                self._arrays = (np.array(self.near, dtype=object), np.array(self.far, dtype=object))
            near, far = self._arrays
            a_near, a_far = (a_physical if self.pick_near else a_port), (a_physical if self.pick_far else a_port)
            b_near, b_far = (b_physical if self.pick_near else b_port), (b_physical if self.pick_far else b_port)
            tail = repeat(self.suffix)
            return (
                list(map("".join, zip(near[a].tolist(), a_near, far[b].tolist(), b_far, tail))),
                list(map("".join, zip(near[b].tolist(), b_near, far[a].tolist(), a_far, tail))),
            )
        row, rack, u, name = (np.array([e[k] for e in self.ends], dtype=object) for k in range(4))
        site = repeat(self.site)
        a_end = (row[a].tolist(), rack[a].tolist(), u[a].tolist(), name[a].tolist(), a_physical, a_port, cable)
        b_end = (row[b].tolist(), rack[b].tolist(), u[b].tolist(), name[b].tolist(), b_physical, b_port, cable)
        return list(map(self._format, site, *a_end, site, *b_end)), list(map(self._format, site, *b_end, site, *a_end))

    def of_link(self, position: int) -> tuple[str, str]:
        """The two labels of the link at ``position`` of the link table."""
        f, t = self.fabric, self.fabric.links
        a, b, ap, bp = t.a[position], t.b[position], t.a_port[position], t.b_port[position]
        la, lb = f.layouts[f.devices[a].model], f.layouts[f.devices[b].model]
        return self.pair(a, la.names[ap], la.physical_names[ap], b, lb.names[bp], lb.physical_names[bp], t.id_of(position))
