"""The physical-layer acceptance limits (data/link_health.yaml), typed: pre-FEC BER per lane
rate, post-FEC BER per transport, the counters a clean link keeps at zero, and the optical
modules' DOM ranges. ``facts/physical_plan.py`` applies them per port."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ruamel.yaml import YAML


@dataclass(frozen=True, slots=True)
class Signalling:
    lane_gbps: float
    modulation: str
    fec: str
    pre_fec_ber: float
    grade: str  # the weakest grade among its sources


@dataclass(frozen=True, slots=True)
class RxRange:
    min_dbm: float
    max_dbm: float
    grade: str


@dataclass(frozen=True, slots=True)
class LinkHealth:
    signalling: tuple[Signalling, ...]
    post_fec_ber: dict[str, float]  # transport -> limit
    symbol_errors_max: int
    link_down_max: int
    temperature_c_max: float
    rx_power: dict[str, RxRange]  # module pmd -> range

    def signalling_at(self, lane_gbps: float) -> Signalling | None:
        """The entry for a lane rate: the nearest rate listed at or above it (a 53G lane is the 50G
        family), or None above every rate listed."""
        for s in self.signalling:
            if lane_gbps <= s.lane_gbps * 1.1:
                return s
        return None


_ORDER = ("PRIMARY", "SECONDARY", "DERIVED", "ILLUSTRATIVE", "UNCONFIRMED")


def _grade(sources: list[dict]) -> str:
    return max((s.get("grade", "PRIMARY") for s in sources), key=_ORDER.index, default="UNCONFIRMED")


def _load() -> Any:
    return YAML(typ="safe").load((resources.files(__package__) / "data" / "link_health.yaml").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def link_health() -> LinkHealth:
    d = _load()
    signalling = tuple(
        sorted(
            (
                Signalling(
                    float(rate), v["modulation"], v["fec"], float(v["pre_fec_ber"]["value"]), _grade(v["pre_fec_ber"]["sources"])
                )
                for rate, v in d["signalling"].items()
            ),
            key=lambda s: s.lane_gbps,
        )
    )
    return LinkHealth(
        signalling=signalling,
        post_fec_ber={k: float(v["value"]) for k, v in d["post_fec_ber"].items()},
        symbol_errors_max=int(d["counters"]["symbol_errors_max"]["value"]),
        link_down_max=int(d["counters"]["link_down_max"]["value"]),
        temperature_c_max=float(d["dom"]["temperature_c_max"]["value"]),
        rx_power={
            pmd: RxRange(float(v["min"]), float(v["max"]), _grade(v["sources"])) for pmd, v in d["dom"]["rx_power_dbm"].items()
        },
    )
