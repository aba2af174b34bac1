"""Shared pydantic base for blueprint and catalogue models."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema


class Strict(BaseModel):
    """Blueprint models reject unknown keys: a typo must never be silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _parse_ratio(value: object) -> str:
    """Accept '1:2', '2:1' or a number; normalise to '1:N' (N = down/up, >= 1).

    Operators write oversubscription both ways round ("1:2" and "2:1" both mean twice as
    much bandwidth down as up), so the order does not matter; undersubscription is not a
    thing the tool plans.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not value > 0:  # also NaN
            raise ValueError(f"a ratio given as a number must be positive, not {value!r}")
        if value == float("inf"):
            raise ValueError("a ratio must be finite")
        n = Fraction(value).limit_denominator(1000)
    elif isinstance(value, str) and value.count(":") == 1:
        left, right = (part.strip() for part in value.split(":"))
        try:
            a, b = Fraction(left), Fraction(right)
        except ValueError:
            raise ValueError(f"{value!r} is not a ratio like '1:1' or '1:3'") from None
        if a <= 0 or b <= 0:
            raise ValueError("both sides of a ratio must be positive")
        n = max(a, b) / min(a, b)
    else:
        raise ValueError(f"{value!r} is not a ratio like '1:1' or '1:3'")
    if n < 1:
        n = 1 / n
    return f"1:{format_fraction(n)}"


def format_fraction(n: Fraction) -> str:
    return str(n.numerator) if n.denominator == 1 else f"{float(n):g}"


def ratio_value(ratio: str) -> Fraction:
    """The N of a normalised '1:N' ratio."""
    return Fraction(ratio.split(":")[1])


# The schema says what the validator takes (a 'down:up' text or a number), not the '1:N' it keeps.
RATIO_SCHEMA = {
    "anyOf": [
        {"type": "string", "pattern": r"^\s*[0-9]+(\.[0-9]+)?\s*:\s*[0-9]+(\.[0-9]+)?\s*$"},
        {"type": "number", "exclusiveMinimum": 0},
    ]
}
Ratio = Annotated[str, BeforeValidator(_parse_ratio), WithJsonSchema(RATIO_SCHEMA)]
PositiveInt = Annotated[int, Field(gt=0)]
# The most devices one blueprint may ask for: 2,000,000 is seven times the largest benchmark
# (279,072 devices) and ten times a 200k-accelerator deployment of 8-GPU nodes. A count typed with
# extra digits is a located error here rather than a build that fills the machine's memory.
MAX_DEVICES = 2_000_000
DeviceCount = Annotated[int, Field(gt=0, le=MAX_DEVICES)]
MAX_RACKS = 100_000
RackCount = Annotated[int, Field(gt=0, le=MAX_RACKS)]
NonNegInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=63)]
