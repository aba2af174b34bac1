"""The collective-bandwidth model's figures (data/collectives.yaml) and its calibration table
(data/collective_calibration.yaml), typed. The model itself is ``facts/collectives.py``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ruamel.yaml import YAML


@dataclass(frozen=True)
class Vendor:
    name: str
    tool: str  # nccl-tests, rccl-tests; "" where snc runs none (see collective_test)
    library: str  # the collective library its accelerators run: NCCL, RCCL, HCCL
    models: tuple[str, ...]
    nvls: dict[str, str]  # accelerator model -> NVLS generation (a key of ModelFigures.nvls)
    link_tool: str = ""  # the scale-up link check: nvidia-smi, amd-smi, acl-topo ("" where none is known)
    copy_tool: str = ""  # the GPU-to-GPU copy test over a switchless mesh: TransferBench ("" where none is known)
    # The vendor's own collective test where snc's nccl-tests.sh runs none (tool ""): hccl_test for
    # Ascend; named in the acceptance checklist, not run by snc.
    collective_test: str = ""


@dataclass(frozen=True)
class ModelFigures:
    scaleup_ring: float
    # generation -> scale-up domain shape (facts/hosts.py domain_kind: board, switched) -> algbw as a
    # fraction of the per-direction NVLink rate
    nvls: dict[str, dict[str, float]]
    nic: float
    half_bytes: float
    vendors: tuple[Vendor, ...]

    def vendor_of(self, accelerator_model: str) -> Vendor | None:
        return next((v for v in self.vendors if accelerator_model in v.models), None)

    def nvls_fraction(self, generation: str | None, shape: str) -> float:
        """NVLS algbw over the NVLink rate for one generation in one domain shape; 0 without NVLS.
        A shape the generation has no reading for takes its lowest figure: no promise above what a
        measured shape reached."""
        by_shape = self.nvls.get(generation or "")
        if not by_shape:
            return 0.0
        return by_shape.get(shape, min(by_shape.values()))


@dataclass(frozen=True)
class Reading:
    """One published nccl-tests measurement (a row of collective_calibration.yaml)."""

    id: str
    accelerator: str  # devices.yaml accelerators.model of the system read (B300 rows stand for NVLink 5 HGX)
    collective: str
    algorithm: str
    ranks: int
    domains: int
    scaleup_gbytes: float
    nic_gbytes: float
    busbw: float
    source: str
    grade: str
    nvls: str | None = None
    # The scale-up domain's shape (facts/hosts.py domain_kind: board, switched) for nvls/tree rows:
    # which NVLS figure the row reads.
    domain_kind: str = ""
    bytes: float | None = None
    fitted: bool = False
    # The scale-out network between the domains: ib, roce, or "" (inside one domain, or the source
    # does not say); the calibration test requires readings of both kinds.
    transport: str = ""


def _load(name: str) -> Any:
    return YAML(typ="safe").load((resources.files(__package__) / "data" / name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def model_figures() -> ModelFigures:
    d = _load("collectives.yaml")
    eff = d["efficiency"]
    vendors = tuple(
        Vendor(
            name,
            v["tool"],
            v["library"],
            tuple(v["models"]),
            dict(v.get("nvls") or {}),
            str(v.get("link_tool") or ""),
            str(v.get("copy_tool") or ""),
            str(v.get("collective_test") or ""),
        )
        for name, v in d["vendors"].items()
    )
    return ModelFigures(
        scaleup_ring=float(eff["scaleup_ring"]["value"]),
        nvls={g: {shape: float(v["value"]) for shape, v in shapes.items()} for g, shapes in eff["nvls"].items()},
        nic=float(eff["nic"]["value"]),
        half_bytes=float(d["size"]["half_bytes"]),
        vendors=vendors,
    )


@lru_cache(maxsize=1)
def calibration() -> tuple[Reading, ...]:
    return tuple(Reading(**row) for row in _load("collective_calibration.yaml"))
