"""Workloads a design must carry: bytes each accelerator moves per step, per parallel dimension.

The sizing rule snc applies (docs/blueprint.md, ``workloads``): needed bandwidth = bytes to move per step / the share of
the step time the workload can spend communicating (7B MoE, ~28 GB per step in 400 ms ->
~70 GB/s). Tensor and expert parallelism (TP, EP) run on the scale-up domain, pipeline and data
parallelism (PP, DP) on the scale-out network; the checks compare each with what the design gives.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, Field, model_validator

from .base import Name, PositiveFloat, PositiveInt, Strict

_UNITS = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "b": 1e9, "t": 1e12, "p": 1e15}
_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*([kKmMgGbBtTpP]?)(?:B|bytes?)?\s*$")


def _quantity(value: object) -> object:
    """7e9, '7B' (parameters: billions), '28GB', '28 GB', '1.5T': decimal units."""
    if isinstance(value, str):
        m = _QUANTITY.match(value)
        if m is None:
            raise ValueError(f"{value!r} is not a quantity like 28e9, '28 GB', '7B' or '1.5T'")
        return float(m.group(1)) * _UNITS[m.group(2).lower()]
    return value


# Parameters and bytes per step exceed the 10^9 ceiling of other figures (a 7B model is 7e9): a
# quantity is bounded at 10^16 (10 PB per step per accelerator, ten quadrillion parameters), far
# past any model built, so that a mistyped exponent is a located error, not an infinity.
MAX_QUANTITY = 1e16
Quantity = Annotated[float, Field(gt=0, le=MAX_QUANTITY, allow_inf_nan=False), BeforeValidator(_quantity)]
DIMENSIONS = ("tp", "ep", "pp", "dp")
SCALEUP_DIMENSIONS = ("tp", "ep")  # every layer, every step: inside the scale-up domain
SCALEOUT_DIMENSIONS = ("pp", "dp")


class Parallelism(Strict):
    tp: PositiveInt = 1
    ep: PositiveInt = 1
    pp: PositiveInt = 1
    dp: PositiveInt = 1


class StepBytes(Strict):
    """Bytes each accelerator sends per step for each parallel dimension (decimal units)."""

    tp: Quantity | None = None
    ep: Quantity | None = None
    pp: Quantity | None = None
    dp: Quantity | None = Field(
        None,
        description="default: a ring all-reduce of the gradients each accelerator holds, "
        "2 x parameters x bytes_per_parameter / (tp x pp)",
    )


class Workload(Strict):
    name: Name
    parameters: Quantity | None = Field(None, description="model parameters (7e9 or '7B'); gives the DP default")
    bytes_per_parameter: PositiveFloat = Field(2, description="2 for BF16/FP16 gradients, 4 for FP32")
    parallelism: Parallelism = Field(default_factory=Parallelism)
    bytes_per_step: StepBytes = Field(default_factory=StepBytes)
    step_time_s: PositiveFloat = Field(description="time of one training step")
    comm_budget: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] = Field(
        0.2, description="share of the step time communication may take (not hidden behind compute)"
    )

    @model_validator(mode="after")
    def _something(self) -> Workload:
        given = self.bytes_per_step
        if self.parameters is None and all(getattr(given, d) is None for d in DIMENSIONS):
            raise ValueError("a workload needs bytes_per_step for at least one dimension, or parameters (for the DP default)")
        return self

    @property
    def budget_s(self) -> float:
        return self.step_time_s * self.comm_budget

    def step_bytes(self, dim: str) -> float | None:
        """Bytes per accelerator per step for one dimension (the DP default from parameters)."""
        given = getattr(self.bytes_per_step, dim)
        if given is not None:
            return given
        if dim == "dp" and self.parameters is not None:
            return 2 * self.parameters * self.bytes_per_parameter / (self.parallelism.tp * self.parallelism.pp)
        return None

    def needed_gbytes_s(self, dim: str) -> float | None:
        """GB/s per accelerator the dimension needs: its bytes per step over the communication budget."""
        b = self.step_bytes(dim)
        return None if b is None else b / self.budget_s / 1e9
