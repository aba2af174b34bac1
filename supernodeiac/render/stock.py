"""Stock lengths: what a cable is ordered as."""

from __future__ import annotations

from ..catalog.types import Catalogue
from ..fabric import Link


def ordered_length(catalogue: Catalogue, link: Link) -> float:
    """The routed length rounded up to the medium's next stock length (the routed length if none)."""
    medium = catalogue.media.get(link.medium)
    if medium is None:
        return round(link.length_m, 2)
    stock = medium.stock_length(link.length_m)
    return stock if stock is not None else round(link.length_m, 2)
