"""Shared pydantic base for blueprint and catalogue models."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema


class Strict(BaseModel):
    """Blueprint models reject unknown keys: a typo must never be silently ignored.

    Types are strict: ``count: "16"`` or ``count: 16.0`` is an error rather than a silent
    conversion (a whole number may still be given where a decimal is expected).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


# A declared ratio N (as in N:1, down:up) lies in [1, MAX_RATIO] and is a fraction of small whole numbers:
# 1000:1 is already three orders beyond any oversubscription built; '4/3:1' is kept exact.
MAX_RATIO = 1000
_RATIO_SIDE = re.compile(r"^[0-9]{1,9}(\.[0-9]{1,6})?$")


def _parse_ratio(value: object) -> str:
    """Accept '3:1', '1:3' or a number; normalise to 'N:1' (down:up, N = down/up >= 1), exactly,
    the way engineers write and read an oversubscription (3:1: three times as much down as up).

    Operators write oversubscription both ways round ("1:2" and "2:1" both mean twice as
    much bandwidth down as up), so the order does not matter; undersubscription is not a
    thing the tool plans. A number is read as the decimal it is written as (0.25 is 1:4), never
    rounded: a tiny number is a ratio too large to build, and says so, rather than becoming 0.
    A number N is N:1 (0.25 is read as 4:1, since the order does not matter).
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not value > 0:  # also NaN
            raise ValueError(f"a ratio given as a number must be positive, not {value!r}")
        if value == float("inf"):
            raise ValueError("a ratio must be finite")
        n = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    elif isinstance(value, str) and value.count(":") == 1:
        left, right = (part.strip() for part in value.split(":"))
        if not (_RATIO_SIDE.match(left) and _RATIO_SIDE.match(right)):
            raise ValueError(f"{value!r} is not a ratio like '1:1' or '1:3'")
        a, b = Fraction(left), Fraction(right)
        if a <= 0 or b <= 0:
            raise ValueError("both sides of a ratio must be positive")
        n = max(a, b) / min(a, b)
    else:
        raise ValueError(f"{value!r} is not a ratio like '1:1' or '1:3'")
    if n < 1:
        n = 1 / n
    if n > MAX_RATIO:
        raise ValueError(f"{value!r} is the ratio {float(n):.6g}:1, beyond {MAX_RATIO}:1")
    if n.denominator > MAX_RATIO:
        raise ValueError(f"{value!r} is not a ratio of small whole numbers ({float(n):.6g}:1): write it as 'down:up', e.g. '3:1'")
    return f"{format_fraction(n)}:1"


def format_fraction(n: Fraction) -> str:
    """A ratio's N as text that reads back exactly: '3', '1.5', or '4/3' when no short decimal is."""
    if n.denominator == 1:
        return str(n.numerator)
    short = f"{float(n):g}"
    return short if Fraction(short) == n else f"{n.numerator}/{n.denominator}"


def ratio_value(ratio: str) -> Fraction:
    """The N (down/up) of a normalised 'N:1' ratio."""
    return Fraction(ratio.split(":")[0])


# The schema says what the validator takes (a 'down:up' text or a number), not the 'N:1' it keeps.
RATIO_SCHEMA = {
    "anyOf": [
        {"type": "string", "pattern": r"^\s*[0-9]{1,9}(\.[0-9]{1,6})?\s*:\s*[0-9]{1,9}(\.[0-9]{1,6})?\s*$"},
        {"type": "number", "minimum": 1 / MAX_RATIO, "maximum": MAX_RATIO},
    ]
}
Ratio = Annotated[str, BeforeValidator(_parse_ratio), WithJsonSchema(RATIO_SCHEMA)]

# Every number in a blueprint or catalogue entry is bounded, so that no figure, however
# mistyped, reaches the build as an infinity, a NaN or a size that exhausts the machine.
# The most devices one blueprint may ask for: 2,000,000 is seven times the largest benchmark
# (279,072 devices) and ten times a 200k-accelerator deployment of 8-GPU nodes. A count typed with
# extra digits is a located error here rather than a build that fills the machine's memory.
MAX_DEVICES = 2_000_000
# Any other count (switches per group, SUs, a U position, ...) is at most the device ceiling.
MAX_COUNT = MAX_DEVICES
# Ports in one port group and ports per switch chip: the largest switch built has 512 ports.
MAX_PORTS = 4096
# Any measured figure (metres, GB, GB/s, W, relative cost): finite and at most 10^9.
MAX_FIGURE = 1e9
DeviceCount = Annotated[int, Field(gt=0, le=MAX_DEVICES)]
MAX_RACKS = 100_000
RackCount = Annotated[int, Field(gt=0, le=MAX_RACKS)]
PositiveInt = Annotated[int, Field(gt=0, le=MAX_COUNT)]
NonNegInt = Annotated[int, Field(ge=0, le=MAX_COUNT)]
PortCount = Annotated[int, Field(gt=0, le=MAX_PORTS)]
# Floats: YAML's .inf and .nan are floats too, and pydantic takes them unless told not to.
FiniteFloat = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_FIGURE, le=MAX_FIGURE)]
PositiveFloat = Annotated[float, Field(gt=0, le=MAX_FIGURE, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, le=MAX_FIGURE, allow_inf_nan=False)]
# Catalogue dicts keyed by a lane rate (Gb/s) or a stock length (m): YAML keys may arrive as text
# ("53.125") from a blueprint, so the key alone is read as a number from text too.
LaneRate = Annotated[float, Field(gt=0, le=MAX_FIGURE, allow_inf_nan=False, strict=False)]
StockLength = Annotated[float, Field(ge=0, le=MAX_FIGURE, allow_inf_nan=False, strict=False)]
# A product line's lane rate: 0 stands for every rate.
LineRate = Annotated[float, Field(ge=0, le=MAX_FIGURE, allow_inf_nan=False, strict=False)]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=63)]
