"""What hosts and schedulers are told about the topology: Kubernetes labels, the acceptance plan.

Intent only: which label prefix to use, which coordinate is the zone, the pass thresholds the
acceptance plan applies. The topology itself (rows, racks, domains, leaves, spines) is read
from the Fabric by the renderers.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from .base import Strict

# Kubernetes label-key prefix: a DNS subdomain, at most 253 characters
# (kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _dns_subdomain(value: str) -> str:
    if len(value) > 253 or not DNS_SUBDOMAIN.match(value):
        raise ValueError(
            f"{value!r} is not a DNS subdomain (lower-case letters, digits, '-' and '.', "
            "each part starting and ending with a letter or digit, at most 253 characters)"
        )
    return value


DnsSubdomain = Annotated[str, AfterValidator(_dns_subdomain)]
Fraction01 = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


class Kubernetes(Strict):
    """Node labels and the scheduler objects that read them (snc render: kubernetes/)."""

    label_prefix: DnsSubdomain = Field(
        "topology.supernodeiac.io", description="prefix of our own label keys (a DNS subdomain you control)"
    )
    zone: Literal["row", "rack", "su", "pod", "scaleup-domain", "none"] = Field(
        "row", description="which coordinate becomes topology.kubernetes.io/zone (none: leave it to the cloud provider)"
    )
    nvidia_topology_labels: bool = Field(
        False,
        description="also write the keys NVIDIA Topograph writes (topograph_keys names the set), "
        "so designed and discovered topology can be compared",
    )
    topograph_keys: Literal["v1", "v0"] = Field(
        "v1",
        description="v1: Topograph 1.x keys, accelerator.topograph.run/domain and fabric.topograph.run/tier-N "
        "(tier 0 the leaf); v0: the pre-1.0 network.topology.nvidia.com/{accelerator,leaf,spine,core}",
    )
    topology_name: DnsSubdomain | None = Field(
        None, description="name of the Kueue Topology and ResourceFlavor; default: the blueprint's"
    )


class Acceptance(Strict):
    """Pass thresholds of the acceptance plan (snc render: acceptance/; snc check-results)."""

    perftest_min_fraction: Fraction01 = Field(
        0.6, description="a link below this fraction of its line rate is a fault (default 60 %, docs/acceptance.md)"
    )
    collective_min_fraction: Fraction01 = Field(
        0.8, description="nccl-tests must reach this fraction of the design's bus bandwidth (default 80 %, docs/acceptance.md)"
    )
    storage_min_fraction: Fraction01 = Field(
        0.6,
        description="the same for the links of storage and in-band fabrics (endpoints on their storage/inband ports; "
        "default 60 %, docs/acceptance.md)",
    )
    scaleup_link_min_fraction: Fraction01 = Field(
        1.0,
        description="every scale-up link (NVLink) of an accelerator must report at least this fraction of the "
        "catalogue's per-link rate (default 100 %: a link trained slower or down is a fault, docs/acceptance.md)",
    )
    scaleup_copy_min_fraction: Fraction01 = Field(
        0.7,
        description="every GPU pair of a switchless mesh (xGMI) must copy at least this fraction of its links' "
        "per-direction rate in TransferBench's p2p test (default 70 %, docs/acceptance.md)",
    )
    uplink_max_loss: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = Field(
        0.0, description="share of the pings over a management uplink that may be lost (default 0, docs/acceptance.md)"
    )
    perftest_seconds: Annotated[int, Field(gt=0, le=3600)] = Field(
        10, description="duration of each ib_write_bw run (-D), at most an hour"
    )
    nccl_max_bytes: str = Field(
        "8G",
        pattern=r"^[1-9][0-9]{0,3}[KMG]?$",
        description="largest message size of the nccl-tests runs (-e): 1-9999, K, M or G",
    )
