"""The blueprint: a deployment's intent, typed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from .base import LineRate, Name, NonNegFloat, PositiveFloat, Strict
from .common import MediaPolicy, Naming
from .cxl import CxlPool
from .hosts import Acceptance, Kubernetes
from .inventory import InventoryEntry, InventoryKey
from .management import Management
from .name_rules import MAX_TEXT, TEXT, name_problem
from .nodes import NodeGroup
from .scaleout import ScaleoutFabric, fabric_names
from .scaleup import ScaleupDomain
from .services import Services
from .site import Site
from .tenants import Tenant
from .workloads import Workload

API_VERSION = "supernodeiac/v1"


def _text(value: str) -> str:
    problem = name_problem(value, TEXT, MAX_TEXT) if value else None
    if problem is not None:
        raise ValueError(problem)
    return value


# Free text the outputs quote (README, checklists, file headers): printable, one line, bounded.
Text = Annotated[str, AfterValidator(_text)]


class Metadata(Strict):
    name: Name
    description: Text = ""
    labels: dict[Text, Text] = Field(default_factory=dict)


class CatalogueOverrides(Strict):
    """Entries laid over the built-in catalogue (same name: the keys given replace the built-in ones)."""

    devices: dict[Name, dict[str, Any]] = Field(default_factory=dict)
    media: dict[Name, dict[str, Any]] = Field(default_factory=dict)
    transceivers: dict[Name, dict[str, Any]] = Field(default_factory=dict)
    cords: dict[Name, dict[str, Any]] = Field(default_factory=dict)
    facility: dict[str, Any] = Field(
        default_factory=dict, description="site defaults for rack budgets (air_cooled_limit_kw, cables_max)"
    )
    lines: dict[Name, dict[LineRate, list[str]]] = Field(
        default_factory=dict, description="media the default policy offers, per transport and lane rate"
    )
    port_maps: dict[Name, dict[str, Any]] = Field(
        default_factory=dict, description="network-OS port maps by device model (hwsku, platform, port names and lanes)"
    )
    asics: dict[Name, dict[str, Any]] = Field(
        default_factory=dict, description="switch chips and their capacity per direction (catalog/data/asics.yaml)"
    )
    host_topology: dict[Name, dict[str, Any]] = Field(
        default_factory=dict, description="host PCI/NUMA layouts by node model (catalog/data/host_topology.yaml)"
    )


SpareClass = Literal["switch", "node", "facility", "transceiver", "cable", "fibre", "connector", "cartridge"]


class BomSettings(Strict):
    """How the bill of materials orders."""

    spares_pct: dict[SpareClass, Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]] = Field(
        default_factory=dict, description="spares to order per part class, in percent of the count (rounded up)"
    )
    cost_unit: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9 ._/-]{0,23}$")] | None = Field(
        None,
        description="the unit of the prices given (USD, EUR, kUSD ...); without it costs are the catalogue's "
        "relative_cost, in relative units for comparing designs, not money",
    )
    prices: dict[Name, NonNegFloat] = Field(
        default_factory=dict,
        description="price per unit in cost_unit, by catalogue item (device model, medium per assembly, "
        "transceiver, cord); replaces the item's relative_cost in the BOM and snc explain",
    )

    @model_validator(mode="after")
    def _prices_have_a_unit(self) -> BomSettings:
        if self.prices and self.cost_unit is None:
            raise ValueError("prices need a cost_unit (e.g. cost_unit: USD): relative units and money do not add up")
        return self


class Planning(Strict):
    """Planning targets the checks hold the design to."""

    scaleup_to_scaleout_min: PositiveFloat = Field(
        5, description="warn when per-accelerator scale-up bandwidth is below this multiple of its scale-out"
    )
    scaleup_to_scaleout_floor: PositiveFloat | None = Field(
        None, description="error (not a warning) when scale-up is below this multiple of scale-out"
    )
    ratio_tolerance: Annotated[float, Field(ge=0, le=1)] = Field(
        0.1,
        description="warn when a tier's designed down:up ratio departs from the declared one by more than this fraction "
        "(either direction; rounding to whole ports never warns)",
    )
    upper_tiers_nonblocking: bool = Field(
        True, description="warn when a tier above the leaves is oversubscribed (the seeds' rule: upper tiers stay 1:1)"
    )
    port_utilisation_min: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="warn when a scale-out switch role uses less than this fraction of its data ports"
    )


class Blueprint(Strict):
    api_version: Literal["supernodeiac/v1"] = Field(alias="apiVersion")
    kind: Literal["Blueprint"]
    metadata: Metadata
    catalogue: CatalogueOverrides = Field(default_factory=CatalogueOverrides)
    site: Site
    naming: Naming = Field(default_factory=Naming)
    media: MediaPolicy = Field(default_factory=MediaPolicy)
    planning: Planning = Field(default_factory=Planning)
    bom: BomSettings = Field(default_factory=BomSettings)
    nodes: list[NodeGroup] = Field(default_factory=list)
    scaleup: list[ScaleupDomain] = Field(default_factory=list)
    scaleout: list[ScaleoutFabric] = Field(default_factory=list)
    cxl: list[CxlPool] = Field(default_factory=list)
    management: Management | None = None
    inventory: dict[InventoryKey, InventoryEntry] = Field(
        default_factory=dict, description="device (or device:port) -> management MAC and serial, for the DHCP reservations"
    )
    services: Services | None = Field(None, description="switch services: NTP, syslog, DNS, TACACS+, SNMP, management VRF")
    tenants: list[Tenant] = Field(default_factory=list, description="tenants: InfiniBand partitions (partitions.conf)")
    kubernetes: Kubernetes = Field(default_factory=Kubernetes)
    acceptance: Acceptance = Field(default_factory=Acceptance)
    workloads: list[Workload] = Field(default_factory=list, description="workloads the design must carry (sizing checks)")


def built_fabrics(blueprint: Blueprint) -> Iterator[tuple[int, ScaleoutFabric, str]]:
    """(index in scaleout:, entry, fabric name) of every fabric the scale-out entries build, in order:
    a planed fat tree gives one row per plane, all at its index (its findings point at the entry)."""
    for i, spec in enumerate(blueprint.scaleout):
        for name in fabric_names(spec):
            yield i, spec, name
