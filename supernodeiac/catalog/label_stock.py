"""Label sheet stock (``data/label_stock.yaml``): the sheet, its grid and each label's size."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ruamel.yaml import YAML

DEFAULT_STOCK = "avery-5160"


@dataclass(frozen=True, slots=True)
class LabelStock:
    key: str
    description: str
    sheet_mm: tuple[float, float]
    label_mm: tuple[float, float]
    columns: int
    rows: int
    margin_mm: tuple[float, float]  # left, top
    pitch_mm: tuple[float, float]  # across, down
    padding_mm: float
    source: str
    grade: str

    @property
    def per_sheet(self) -> int:
        return self.columns * self.rows


@lru_cache(maxsize=1)
def label_stocks() -> dict[str, LabelStock]:
    text = (resources.files("supernodeiac.catalog") / "data" / "label_stock.yaml").read_text(encoding="utf-8")
    data = YAML(typ="safe").load(text) or {}
    out = {}
    for key, x in data.items():
        out[key] = LabelStock(
            key,
            x["description"],
            (float(x["sheet_mm"][0]), float(x["sheet_mm"][1])),
            (float(x["label_mm"][0]), float(x["label_mm"][1])),
            int(x["columns"]),
            int(x["rows"]),
            (float(x["margin_mm"][0]), float(x["margin_mm"][1])),
            (float(x["pitch_mm"][0]), float(x["pitch_mm"][1])),
            float(x["padding_mm"]),
            x["source"],
            x["grade"],
        )
    return out
