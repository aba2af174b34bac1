"""Which accelerator or switch chip a scale-up or uplink port belongs to, read from the Fabric's models.

Used by the scale-up checks; it reads the Fabric only, so checks need not import the builder.
"""

from __future__ import annotations

from . import Fabric


class PortMap:
    """Accelerator and chip of a device port, from the catalogue (cached per model)."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self._cache: dict[str, tuple[range, int, range, int]] = {}

    def _entry(self, model_name: str) -> tuple[range, int, range, int]:
        found = self._cache.get(model_name)
        if found is None:
            model = self.fabric.models[model_name]
            layout = self.fabric.layouts[model_name]
            scaleup = layout.role_range("scaleup")
            uplink = layout.role_range("uplink")
            per = 0
            if model.accelerators is not None:
                per = model.accelerators.links
            elif model.switch_chips is not None:
                per = model.switch_chips.ports_per_chip
            chips = model.switch_chips.count if model.switch_chips is not None else 1
            up_per_chip = len(uplink) // chips if len(uplink) % chips == 0 else 0
            found = self._cache[model_name] = (scaleup, per, uplink, up_per_chip)
        return found

    def unit(self, device: int, port: int) -> int | None:
        """The accelerator (compute board) or chip (switch) a scale-up or uplink port belongs to."""
        scaleup, per, uplink, up_per_chip = self._entry(self.fabric.devices[device].model)
        if per and port in scaleup:
            return (port - scaleup.start) // per
        if up_per_chip and port in uplink:
            return (port - uplink.start) // up_per_chip
        return None
