"""Planned links against discovered ones: every difference with both ends, the cable's ID and
label, and the fix.

Ends are (device index, port index) of the plan; a discovered end the plan does not know (an
unknown node, a port the model lacks) is a text. The classification, for the links that do not
match the plan exactly:

* **swapped**: two planned cables a-a' and b-b' found as a-b and a'-b' (two plugs exchanged);
* **miscabled**: a planned cable's one end found where the plan has nothing (the right device's
  wrong port, or a wrong device), or two planned ends joined that belong to different cables;
* **missing**: a planned cable not found, its ends free (or not seen);
* **unexpected**: a cable joining ends the plan does not use;
* **unverified**: a planned cable whose far end does not announce itself (an LLDP table shows
  nothing on the port, and the peer is not a switch: BMCs and hosts often run no LLDP agent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..fabric import Fabric
from ..fabric.cable_naming import cable_id_format
from ..fabric.end_labels import EndLabels

End = tuple[int, int]
AnyEnd = End | str
SEVERITY = {"swapped": "error", "miscabled": "error", "missing": "error", "unexpected": "error", "unverified": "warning"}
ORDER = {"swapped": 0, "miscabled": 1, "missing": 2, "unexpected": 3, "unverified": 4}


@dataclass(frozen=True)
class Seen:
    """A discovered link between two ends, and where the input said so."""

    a: AnyEnd
    b: AnyEnd
    where: str


@dataclass
class Discrepancy:
    kind: str
    message: str
    fix: str
    cables: list[dict[str, str]] = field(default_factory=list)  # planned cables involved
    found: list[dict[str, str]] = field(default_factory=list)  # discovered links involved

    @property
    def severity(self) -> str:
        return SEVERITY[self.kind]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
            "cables": self.cables,
            "found": self.found,
        }


class Comparison:
    """The comparison of some planned links (by position in the link table) with what was seen."""

    def __init__(
        self,
        fabric: Fabric,
        cable_label: str,
        planned: list[int],
        describe: Callable[[AnyEnd], str],
        end_labels: EndLabels | None = None,
    ) -> None:
        self.fabric = fabric
        self.describe = describe
        self.end_labels = end_labels
        self._label = cable_id_format(cable_label)
        t = fabric.links
        self.planned = planned
        self.peer: dict[End, tuple[End, int]] = {}
        for i in planned:
            a, b = (t.a[i], t.a_port[i]), (t.b[i], t.b_port[i])
            self.peer[a] = (b, i)
            self.peer[b] = (a, i)

    # -- text ---------------------------------------------------------------------------------
    def cable(self, position: int) -> dict[str, str]:
        t, f = self.fabric.links, self.fabric
        a, b = (t.a[position], t.a_port[position]), (t.b[position], t.b_port[position])
        spec = t.specs[t.spec[position]]
        names = (f.devices[a[0]].name, f.physical_name(*a), f.devices[b[0]].name, f.physical_name(*b))
        out = {
            "id": t.id_of(position),
            "label": self._label(spec.fabric, *names),
            "fabric": spec.fabric,
            "a": self.describe(a),
            "b": self.describe(b),
        }
        if self.end_labels is not None:  # what is printed on each end (naming.end_label, as cables.csv)
            out["a_label"], out["b_label"] = self.end_labels.of_link(position)
        return out

    def _end_label(self, cable: dict[str, str], position: int, end: End) -> str:
        """The label on the cable's end at ``end`` (a planned end of the cable at ``position``)."""
        t = self.fabric.links
        key = "a_label" if (t.a[position], t.a_port[position]) == end else "b_label"
        return cable.get(key, cable["label"])

    def _found(self, s: Seen) -> dict[str, str]:
        return {"a": self.describe(s.a), "b": self.describe(s.b), "where": s.where}

    def _same_device(self, x: AnyEnd, y: AnyEnd) -> bool:
        return isinstance(x, tuple) and isinstance(y, tuple) and x[0] == y[0]

    def _port_only(self, end: AnyEnd) -> str:
        """'port IB1/9/1 (17)' of a described end: the part after the device name."""
        text = self.describe(end)
        if isinstance(end, tuple):
            name = self.fabric.devices[end[0]].name
            if text.startswith(name + " "):
                return text[len(name) + 1 :]
        return text

    # -- the comparison ---------------------------------------------------------------------
    def run(
        self,
        seen: list[Seen],
        observed: Callable[[End], bool],
        announces: Callable[[End], bool],
        silent: Callable[[End], bool] = lambda e: False,
    ) -> list[Discrepancy]:
        """``observed(end)``: the input could have shown a link on this end; ``announces(end)``: a
        link on it would be seen even from the other side (a switch port, or an end whose own
        table was given); ``silent(end)``: the end's own table lists no neighbour at all, so
        each of its cables is missing (unplugged, or LLDP not converged), whatever the far end."""
        out: list[Discrepancy] = []
        accounted: set[int] = set()
        rest: list[Seen] = []
        for s in seen:
            hit = self.peer.get(s.a) if isinstance(s.a, tuple) else None
            if hit is not None and hit[0] == s.b:
                accounted.add(hit[1])
            else:
                rest.append(s)
        by_pair = {frozenset((s.a, s.b)): s for s in rest}
        done: set[int] = set()  # indices into rest already reported
        index = {id(s): k for k, s in enumerate(rest)}
        for k, s in enumerate(rest):
            if k in done:
                continue
            pa = self.peer.get(s.a) if isinstance(s.a, tuple) else None
            pb = self.peer.get(s.b) if isinstance(s.b, tuple) else None
            if pa is not None and pb is not None:
                other = by_pair.get(frozenset((pa[0], pb[0])))
                if other is not None and index[id(other)] not in done and other is not s:
                    done.update((k, index[id(other)]))
                    accounted.update((pa[1], pb[1]))
                    out.append(self._swapped(s, other, pa, pb))
                    continue
                done.add(k)
                accounted.update((pa[1], pb[1]))
                cables = [self.cable(pa[1]), self.cable(pb[1])]
                out.append(
                    Discrepancy(
                        "miscabled",
                        f"{self.describe(s.a)} is cabled to {self.describe(s.b)}; the plan joins "
                        f"{self.describe(s.a)} to {self.describe(pa[0])} and {self.describe(s.b)} to {self.describe(pb[0])}",
                        f"connect {self.describe(s.a)} to {self.describe(pa[0])} (cable {cables[0]['id']}) and "
                        f"{self.describe(s.b)} to {self.describe(pb[0])} (cable {cables[1]['id']})",
                        cables,
                        [self._found(s)],
                    )
                )
                continue
            if pa is None and pb is not None:
                s = Seen(s.b, s.a, s.where)
                pa, pb = pb, None
            done.add(k)
            if pa is not None:
                accounted.add(pa[1])
                out.append(self._misplaced(s, pa))
            else:
                out.append(
                    Discrepancy(
                        "unexpected",
                        f"a cable joins {self.describe(s.a)} and {self.describe(s.b)}, which the plan leaves free",
                        f"remove the cable between {self.describe(s.a)} and {self.describe(s.b)}",
                        [],
                        [self._found(s)],
                    )
                )
        for i in self.planned:
            if i in accounted:
                continue
            t = self.fabric.links
            a, b = (t.a[i], t.a_port[i]), (t.b[i], t.b_port[i])
            if not (observed(a) or observed(b)):
                continue  # out of the input's sight (e.g. an LLDP table of another switch)
            cable = self.cable(i)
            if silent(a) or silent(b):
                quiet = self.fabric.devices[a[0] if silent(a) else b[0]].name
                out.append(
                    Discrepancy(
                        "missing",
                        f"cable {cable['id']} between {cable['a']} and {cable['b']} is not there: {quiet}'s table "
                        "lists no neighbour (unplugged, LLDP not running, or not converged yet)",
                        f"connect {cable['a']} to {cable['b']} with cable {cable['id']} (label '{cable['label']}'), "
                        f"or take {quiet}'s table again once LLDP has run",
                        [cable],
                    )
                )
            elif announces(a) and announces(b) or observed(a) and observed(b):
                out.append(
                    Discrepancy(
                        "missing",
                        f"cable {cable['id']} between {cable['a']} and {cable['b']} is not there",
                        f"connect {cable['a']} to {cable['b']} with cable {cable['id']} (label '{cable['label']}'"
                        + (f"; end labels '{cable['a_label']}' and '{cable['b_label']}')" if "a_label" in cable else ")"),
                        [cable],
                    )
                )
            else:
                out.append(
                    Discrepancy(
                        "unverified",
                        f"cable {cable['id']} between {cable['a']} and {cable['b']} is not seen (the far end may run no LLDP)",
                        f"check cable {cable['id']} by hand, or give the far end's LLDP table",
                        [cable],
                    )
                )
        return sorted(out, key=lambda d: (ORDER[d.kind], d.message))

    def _swapped(self, s: Seen, other: Seen, pa: tuple[End, int], pb: tuple[End, int]) -> Discrepancy:
        # Planned a-a' and b-b'; found a-b and a'-b'. Name the two plugs to exchange on one
        # device when they share one (the usual case: two ports of one switch).
        a, b = s.a, s.b
        a2, b2 = pa[0], pb[0]
        cables = [self.cable(pa[1]), self.cable(pb[1])]
        if self._same_device(b, a2):
            x, y = b, a2
        elif self._same_device(a, b2):
            x, y = a, b2
        else:
            x, y = b, a2
        if self._same_device(x, y):
            assert isinstance(x, tuple) and isinstance(y, tuple)
            x, y = min(x, y), max(x, y)  # in port order, as an installer walks the panel
            where = f"on {self.fabric.devices[x[0]].name}, exchange the plugs in {self._port_only(x)} and {self._port_only(y)}"
        else:
            where = f"exchange the plugs in {self.describe(x)} and {self.describe(y)}"
        return Discrepancy(
            "swapped",
            f"cables {cables[0]['id']} and {cables[1]['id']} are swapped: found {self.describe(a)} to {self.describe(b)} "
            f"and {self.describe(a2)} to {self.describe(b2)}",
            f"{where} (cables {cables[0]['id']} and {cables[1]['id']}: labels '{cables[0]['label']}', '{cables[1]['label']}')",
            cables,
            [self._found(s), self._found(other)],
        )

    def _misplaced(self, s: Seen, pa: tuple[End, int]) -> Discrepancy:
        """One planned end right, the other on a port the plan leaves free (or unknown)."""
        right, wrong, planned = s.a, s.b, pa[0]
        cable = self.cable(pa[1])
        if self._same_device(wrong, planned):
            assert isinstance(planned, tuple)
            dev = self.fabric.devices[planned[0]].name
            what = f"on the right device ({dev}) but the wrong port"
            fix = f"move cable {cable['id']} from {dev} {self._port_only(wrong)} to {self._port_only(planned)}"
        else:
            what = "on the wrong device"
            fix = f"move cable {cable['id']} from {self.describe(wrong)} to {self.describe(planned)}"
        return Discrepancy(
            "miscabled",
            f"cable {cable['id']} from {self.describe(right)} ends {what}: found at {self.describe(wrong)}, planned at "
            f"{self.describe(planned)}",
            f"{fix} (label '{cable['label']}'"
            + (f"; the end labelled '{self._end_label(cable, pa[1], planned)}')" if "a_label" in cable else ")"),
            [cable],
            [self._found(s)],
        )
