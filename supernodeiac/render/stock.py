"""Stock lengths: what a cable is ordered as."""

from __future__ import annotations

from ..catalog.types import Catalogue


def ordered_length(catalogue: Catalogue, medium_name: str, length_m: float) -> float:
    """A routed length rounded up to the medium's next stock length (the routed length if none)."""
    medium = catalogue.media.get(medium_name)
    if medium is None:
        return round(length_m, 2)
    stock = medium.stock_length(length_m)
    return stock if stock is not None else round(length_m, 2)
