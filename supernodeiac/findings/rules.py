"""The rule catalogue: what every finding's rule id means, for SARIF rule metadata and docs/rules.md.

A finding carries only its rule id; tools that show findings away from the terminal (code
scanning, an editor) want a short and a full description and a page to read. The catalogue is
data, kept here beside the stages that emit the rules; ``docs/rules.md`` is generated from it
(``python -m supernodeiac.findings.rules > docs/rules.md``) and a test keeps the two, and the rule ids
the code emits, in step. A rule id missing here still works everywhere: it gets a generic
description (and the test names it, so it is added).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

DOCS_PAGE = "docs/rules.md"  # repository-relative: where the anchors below live


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    stage: str  # load | parse | build | check | config: what emits it
    short: str  # one line, no final full stop (SARIF shortDescription)
    full: str  # what it checks, why it matters, how to fix it (SARIF fullDescription and help)

    @property
    def anchor(self) -> str:
        """The Markdown heading anchor of the rule in docs/rules.md (GitHub's slug of the id)."""
        return self.id

    def help_uri(self, docs_url: str | None) -> str | None:
        """The rule's page: ``docs_url`` (the folder holding rules.md, or rules.md itself) + anchor."""
        if not docs_url:
            return None
        base = docs_url if docs_url.endswith(".md") else docs_url.rstrip("/") + "/rules.md"
        return f"{base}#{self.anchor}"


def _r(id: str, stage: str, short: str, full: str) -> Rule:  # noqa: A002 - the field's name
    return Rule(id, stage, short, " ".join(full.split()))


RULES: tuple[Rule, ...] = (
    # -- load: reading the file ------------------------------------------------------------------
    _r(
        "io",
        "load",
        "The blueprint (or a file it includes) cannot be read",
        """The path is missing, is a folder, is not readable or is not UTF-8 text (a file at a git
       revision for `snc diff --rev`: the revision or the path is not in the repository). Exit
       code 2. Give the path of a readable YAML file.""",
    ),
    _r(
        "yaml-syntax",
        "load",
        "The file is not valid YAML",
        """A syntax error (tabs, indentation, an unclosed bracket or quote), a duplicate key, or a
       YAML feature a blueprint does not use (application tags). The finding points at the
       position where the YAML parser stopped and the hint says where the construct opened.""",
    ),
    _r(
        "yaml-shape",
        "load",
        "The file is not a YAML mapping",
        """A blueprint (and an included file) is a mapping of sections (apiVersion, kind, metadata,
       site, ...); an empty file, a list or a scalar is not.""",
    ),
    _r(
        "yaml-limit",
        "load",
        "The file is larger, deeper or expands to more values than a blueprint may",
        """A blueprint (each file of a composed one, and a blob read by `snc diff --rev`) is at
       most 512 KiB, nests at most 64 levels, holds at most 100,000 values once its YAML aliases
       are expanded (an alias repeats everything its anchor holds: a few lines can stand for
       billions of values), and its numbers have at most 100 digits; a composed blueprint, all
       its files together, is held to the same size and value limits. An alias inside the value
       it names (a loop) is refused too. The finding points at the value that crosses the limit
       (the whole file for its size), so a hostile or broken file is a located error within a
       second rather than minutes and gigabytes.""",
    ),
    _r(
        "compose",
        "load",
        "An include or extends reference cannot be resolved",
        """`include:` and `extends:` name other YAML files relative to the including file. The
       named file is missing, outside the allowed folders, included twice in a cycle, nested too
       deeply, or of the wrong shape. The finding points at the reference in the including file;
       a problem inside the included file is reported at its own file and line.""",
    ),
    # -- parse: the blueprint language -------------------------------------------------------------
    _r(
        "schema",
        "parse",
        "A key, type or value the blueprint language does not allow",
        """Unknown keys (with the nearest allowed key), wrong types, out-of-range numbers, unknown
       `kind`s and missing required keys, each at the key that causes it. Types are strict: a
       quoted number (`count: "16"`), a float where a count is meant (`16.0`) or a boolean is an
       error, not converted; every number has both bounds, and NaN and infinities are refused.
       Exit code 2.""",
    ),
    _r(
        "names-unique",
        "parse",
        "Two things share a name that must be unique",
        """Node groups, scale-up domains, fabrics and CXL pools share one namespace, rows another;
       after the build, every device name and every cable ID must be unique too (a naming
       template that drops a coordinate makes names collide). Names are compared without case:
       they name files and folders, which collide on case-insensitive file systems.""",
    ),
    _r(
        "naming",
        "parse",
        "A naming template is malformed or uses a field it is not given",
        """Cable ID, cable label, end label, rack, device and port name templates (the blueprint's
       and the catalogue's printed port names) are format strings over the fields listed in
       docs/blueprint.md (naming). They are checked when the blueprint is read, without being
       formatted: plain fields only (no attribute, index or conversion), short zero-padded
       widths, literal text in the name's character set, and a first character that is a
       letter, a digit or a field, so that no name can start a spreadsheet formula or grow
       without bound. The hint lists the fields available.""",
    ),
    _r(
        "catalogue",
        "parse",
        "A catalogue override (or a catalogue entry a design needs) is incomplete",
        """Entries under `catalogue:` are validated like the built-in catalogue: a new entry needs
       every required key, an override only the keys it changes; numbers are bounded, and a
       physical port name template may use only the fields it is given. A device used as a
       compute board, switch board or level-2 switch must describe its accelerators or switch
       chips.""",
    ),
    _r(
        "unknown-catalogue-item",
        "parse",
        "A device or medium name is not in the catalogue",
        """Model and medium names are keys of the built-in catalogue or of the blueprint's own
       `catalogue:` section; the hint names the nearest ones.""",
    ),
    _r(
        "wrong-catalogue-kind",
        "build",
        "A catalogue device of the wrong kind for its place",
        """A switch where a node is expected, a compute board where a switch board is expected,
       and so on. The hint lists the catalogue entries of the right kind.""",
    ),
    _r(
        "unknown-row",
        "build",
        "A placement names a row the site does not have",
        """Every placement's `row` must be the name of one of `site.rows`.""",
    ),
    _r(
        "unknown-reference",
        "build",
        "An endpoint or host names a group that does not exist",
        """Fabric endpoints and CXL hosts name node groups or scale-up domains defined in the
       blueprint.""",
    ),
    _r(
        "size-limit",
        "build",
        "The blueprint builds more devices than snc accepts",
        """At most 2,000,000 devices per blueprint: a count with a digit too many is an error rather
       than a build that exhausts the machine. Split a larger deployment into several blueprints.""",
    ),
    # -- build: the design cannot be built -------------------------------------------------------------
    _r(
        "rack-space",
        "build",
        "Devices do not fit their racks, or two share a rack unit",
        """A placement runs out of racks or units, a device sticks out of the top of its rack, or
       two devices claim the same unit. Exit code 1.""",
    ),
    _r(
        "port-budget",
        "build",
        "A device needs more ports than it has, or a port carries two links",
        """The split of a switch's ports by the declared ratio, the endpoints a leaf takes, the
       uplinks of a rack switch: every link needs a free port of the right role on both ends. On
       the management network ports follow stable coordinates: a rack switch's port per rack unit
       (the 0U PDUs on the top ports), and aggregation ports for every planned rack position; a
       device whose unit has no port, or an aggregation layer too small for the planned racks, is
       named here.""",
    ),
    _r(
        "topology-too-big",
        "build",
        "The fabric asked for is larger than its switches can build",
        """A fat tree of the given tiers and switch radix reaches a bounded number of endpoints;
       the message names the largest size that fits and the hint the alternatives (more tiers, a
       larger switch, oversubscription).""",
    ),
    _r(
        "leaf-speed",
        "build",
        "A group's leaf model cannot run the down-port speed asked for it",
        """A fat tree's `leaves: {<group>: {switch, down_gbps}}` gives an endpoint group leaves of
       their own model; `down_gbps` is the speed their down ports must run, and a switch whose
       cages are split to another speed (128 x 400GbE asked to run 200G) cannot. The hint lists
       the catalogue switches of the fabric's transport whose down ports run that speed (or add
       one, with its cages split that way, under `catalogue: devices:`).""",
    ),
    _r(
        "chassis-slots",
        "build",
        "An OEX supernode does not fit its chassis",
        """The supernode's compute boards need as many front slots, and its switch boards as many
       rear slots, as its chassis has, and a compute board must fit a front slot's height; without
       `chassis:` the smallest catalogue chassis that holds them is used, and the hint lists the
       chassis there are.""",
    ),
    _r(
        "grow-to",
        "build",
        "A planned growth size is smaller than what is built",
        """`grow_to_sus` / `grow_to_groups` plan the upper tiers for future growth; they must be
       at least the size built now.""",
    ),
    _r(
        "pod-size",
        "build",
        "A pod is not a whole number of scalable units",
        """In a 3-tier fat tree, `leaves_per_pod` must hold whole SUs, and every pod's spines must
       reach every leaf of the pod.""",
    ),
    _r(
        "oversubscription",
        "build",
        "Measured oversubscription differs from the declared ratio",
        """Down versus up bandwidth of every Clos switch, measured on the built links, against the
       tier's declared `oversubscription` ratio; an info finding reports the end-to-end ratio and
       the designed ratio of each tier (down ports in use : uplinks cabled).""",
    ),
    _r(
        "ratio-intent",
        "check",
        "A Clos tier's designed ratio departs from the declared one",
        """Uplinks are sized from the down ports in use (ceil(used / ratio)) or given by an explicit
       `uplinks:` count; a designed down:up ratio more than `planning.ratio_tolerance` away from
       the declared one, in either direction, is a warning with both figures (rounding to whole
       ports is not). Declare the ratio you build, or drop the explicit count.""",
    ),
    _r(
        "nonblocking-upper-tiers",
        "check",
        "A tier above the leaves is oversubscribed",
        """The planning rule of the reference designs: oversubscribe at the leaves if at all, and
       keep the spine and core tiers non-blocking. A warning names the tier and its ratio;
       `planning.upper_tiers_nonblocking: false` accepts the design.""",
    ),
    _r(
        "no-data-ports",
        "build",
        "Endpoints of a scale-out fabric have no data ports",
        """A node group or domain named as endpoints has no port of role `data` in the catalogue.""",
    ),
    _r(
        "rails",
        "build",
        "Rail-optimised or rail-aligned endpoints cannot be laid out on rails",
        """A rail-optimised fat tree puts NIC i of every node on rail i: every endpoint needs the
       same number of data ports (one per rail). A Dragonfly's rail-aligned terminals (the
       default where it fits) need the routers per group to be a multiple of the ports per
       endpoint; otherwise give `terminal_order: consecutive`.""",
    ),
    _r(
        "transport",
        "build",
        "A switch of the wrong transport for its fabric",
        """An Ethernet switch in an InfiniBand fabric or the reverse; the hint lists the switches of
       the fabric's transport.""",
    ),
    _r(
        "dragonfly-radix",
        "build",
        "The Dragonfly does not fit the router radix",
        """p + (a - 1) + h ports are needed per router (terminals, local, global); Dragonfly+ leaves
       and spines likewise.""",
    ),
    _r(
        "dragonfly-groups",
        "build",
        "More Dragonfly groups than one global link per pair allows",
        """A Dragonfly with a routers of h global links joins at most a*h + 1 groups.""",
    ),
    _r(
        "dragonfly-endpoints",
        "build",
        "The Dragonfly groups asked for cannot take the endpoints",
        """The endpoints need more terminal ports than the groups asked for provide.""",
    ),
    _r(
        "scaleup-spread",
        "build",
        "Scale-up links do not spread evenly over the switch chips",
        """Every accelerator of a scale-up domain should reach every switch chip with the same
       number of links; uneven spreads make some pairs more than one hop apart.""",
    ),
    _r(
        "switch-bandwidth",
        "check",
        "A switch chip drives more than its ASIC switches",
        """Per chip, a switch's ports x speed (per direction, management port aside) must fit the
       catalogue ASIC it names (``asic:``, or ``switch_chips.model`` on a switch board), and its
       lanes the ASIC's SerDes where listed (catalog/data/asics.yaml, with sources). A switch that
       names no catalogue chip is held to the largest one there: 256 x 800G on one chip (204.8 Tb/s)
       is no chip anyone makes.""",
    ),
    _r(
        "scaleout-planes",
        "build",
        "A planed fat tree's endpoints or pools do not split over its planes",
        """With ``planes: P`` endpoint port i goes to plane i % P, so every endpoint needs a multiple
       of P ports of the fabric's role; each plane takes 1/P of every address pool (the plane-th of
       2^ceil(log2 P) equal subnets) and of the ASN range, which must be large enough to split.""",
    ),
    _r(
        "scaleup-planes",
        "build",
        "A planed second scale-up level joins supernodes of different shapes",
        """With ``planes: true`` level-2 plane c joins L1 chip c of every supernode, so every joined
       supernode must have the same number of L1 chips (switch boards x chips per board).""",
    ),
    _r(
        "scaleup-uplinks",
        "build",
        "Level-1 switch boards cannot spread their uplinks over their chips",
        """A two-level domain needs a whole number of uplink ports per level-1 chip.""",
    ),
    _r(
        "cxl-links",
        "build",
        "CXL host links do not spread evenly over the pool's switches",
        """Each host's `links` must divide evenly among the pool's switches.""",
    ),
    # -- checks: the built design measured ------------------------------------------------------------
    _r(
        "reach",
        "check",
        "A cable is longer than its medium reaches at its lane rate",
        """Reach as the data sheets state it: the routed length is rounded up to the medium's next
       stock length (a splitter at its longest leg, a transceiver link's fibre cord), which must
       be within the rated reach at the link's lane rate (for optics, the lesser of the two
       modules'), less the media policy's explicit derating (`margin_m`, `derate_pct`; none by
       default). Reported for a pinned medium that does not reach (naming its part), a length
       longer than any stock length, or no allowed medium that reaches.""",
    ),
    _r(
        "media-fit",
        "check",
        "A medium does not plug into the cages at both ends",
        """The chosen or pinned medium does not take the cage at one or both ends: its form factor
       (OSFP, QSFP112, RJ45, ...), its top (finned or flat), its lanes or its lane rate. Also
       reported when the blueprint is read, at the catalogue override, for a transceiver medium
       whose modules and fibre cord disagree on fibre or connector, or that names a module or
       cord the catalogue lacks.""",
    ),
    _r(
        "reach-margin",
        "check",
        "A copper cable is ordered at the edge of its rated reach",
        """A warning, not an error: a DAC or ACC whose ordered length is within
       `media.copper_warning_m` of its rated reach. Copper at the edge of its reach drops links
       under load; move the devices closer, allow optics, or set an explicit derating
       (`media.margin_m`, `derate_pct`).""",
    ),
    _r(
        "one-plug",
        "check",
        "A cage would hold two plugs",
        """A cage takes one plug: all its ports use one medium; a straight cable joins two cages
       port for port (a twin-port cage whose ports go to two devices needs a module, or a
       splitter); a splitter's head faces single-port leg cages, one leg each. The media policy
       never breaks this (after the build every cage is settled to one plug); a pin, a per-tier
       pin or a catalogue override can, and the finding names the cage as printed and where its
       ports go.""",
    ),
    _r(
        "management",
        "check",
        "A management port is uncabled or cabled outside the management network",
        """Every port of role `mgmt` (BMCs, switch management ports) is cabled, into the management
       network only. Without a `management:` section a warning names the unmanaged devices.""",
    ),
    _r(
        "management-islands",
        "check",
        "Rack management switches that reach no aggregation layer",
        """Every rack switch of the out-of-band network should uplink to the aggregation layer; a
       warning names the racks whose switches are islands (no `aggregation:` declared, or too few
       uplinks). Declare `management.aggregation`.""",
    ),
    _r(
        "management-loop",
        "check",
        "A layer-2 loop in the management network, or a switch managed through itself",
        """A cycle of bridged links in a VLAN (the ports the SONiC configs put in VLAN_MEMBER: in
       the `flat` design a rack switch with uplinks to two aggregation switches closes one): with
       no STP, a broadcast storm on first power-up takes out every BMC and switch management
       port (error, with the ring of switches; `design: routed` ends each rack's VLAN at its
       switch). Also an aggregation switch whose own management port is on a switch that uplinks
       through it: losing it loses the path to manage it (warning; the aggregation switches'
       management ports go to OOB switches of their own, `aggregation.oob_switch`).""",
    ),
    _r(
        "service-ha",
        "check",
        "An HA pair of service endpoints shares a leaf",
        """Service endpoints declared `ha: true` (a UFM pair) must have no leaf in common, so that
       losing one leaf leaves one member reachable; the finding names the shared leaf.""",
    ),
    _r(
        "inventory-mac-duplicate",
        "check",
        "Two inventory entries give the same MAC address",
        """A MAC address names one port; two entries with one MAC would key two DHCP reservations
       alike, so one device would boot with the other's address. The finding is at the second
       entry.""",
    ),
    _r(
        "inventory-device",
        "check",
        "An inventory entry names a device or port the design does not have",
        """`inventory:` keys are planned device names, or `device:port` for one management port;
       an unknown one is a typo, and that device keeps its placeholder DHCP key.""",
    ),
    _r(
        "service-address",
        "check",
        "A switch service's server lies outside every network the switches reach",
        """Every address under `services:` (NTP, syslog, DNS, TACACS+) must lie in the management
       network (`management.addressing.network`) or in one of `services.networks`, the site
       networks the management network reaches through its border: a server elsewhere is a typo
       or a route nobody planned, and the switches would boot without time, logs or logins.""",
    ),
    _r(
        "ztp-url",
        "check",
        "SONiC zero-touch provisioning has no provisioning server, or one the switches cannot reach",
        """Kea's reservation of a SONiC switch carries its ZTP URL (option 67, DHCPv6 option 59) and
       the ZTP JSON fetches the switch's config_db, both under `management.addressing.provisioning_url`:
       the site's HTTP server that serves the rendered `dhcp/ztp/` and `sonic/` folders. Without it
       a warning, and no ZTP option or file is written (the gateway is a router, not a file
       server). An error where the host cannot be reached or clashes: an address outside the
       management network and `services.networks`; in the management network, an address the plan
       gives a device, a switch or the gateway, or (routed design) one on no rack's subnet (block 0,
       a rack position the site lacks, the uplinks' and OOB switches' blocks); a name without
       `services.dns` to resolve it.""",
    ),
    _r(
        "secret-inline",
        "check",
        "A secret is given inline in the blueprint",
        """The TACACS+ key, SNMP communities and SNMPv3 passwords are named (`secret: <name>`, a key
       in the operator's secret store), never written into the blueprint: a blueprint lives in
       git and every output is copied around. `services/secrets.json` lists where each named
       secret goes.""",
    ),
    _r(
        "port-utilisation",
        "check",
        "A scale-out switch role uses few of its data ports",
        """Data ports in use per switch role, now and at the planned size, against the catalogue
       radix: a warning below `planning.port_utilisation_min` (a Dragonfly router using 15 of 64
       ports), otherwise an info finding.""",
    ),
    _r(
        "port-speed",
        "check",
        "Ports run below their speed",
        """A link runs at its slower end's rate (the fewer lanes, the lower lane rate), so a
       200 Gb/s NIC on a 400 Gb/s leaf port leaves half of that port, its optics and the uplinks
       sized for it idle. A warning per link shape with the count, the idle share and a cable ID:
       usually the wrong leaf model (a variant run as 2 x 200G per cage carries the same hosts on
       half the cages) or NICs of the wrong speed.""",
    ),
    _r(
        "rail-alignment",
        "check",
        "Rail alignment of a fabric's first switch tier",
        """Whether each leaf or router takes one NIC position (rail) of the nodes on it, as rail-
       optimised collectives expect; an info finding says which tier is or is not aligned.""",
    ),
    _r(
        "rack-budget",
        "check",
        "Rack loads against the declared budgets",
        """An info finding with the racks in use and the heaviest rack's maximum and typical power
       and units; without any declared budget (`site.budget` or a row's), it says so.""",
    ),
    _r(
        "rack-power",
        "check",
        "A rack draws more than its power budget",
        """The sum of the rack's devices' maximum power (catalogue `physical.power_max_w`, plus the
       modules in the cages of a device whose maximum leaves them out) against the budget's
       `power_kw`. The finding names the rack, the sum, the limit and the largest contributors.""",
    ),
    _r(
        "rack-cooling",
        "check",
        "A rack needs more cooling than its budget gives",
        """An air-cooled rack above the air-cooled limit, or holding a device that needs liquid
       cooling (`physical.cooling: liquid` or `hybrid`).""",
    ),
    _r(
        "rack-weight",
        "check",
        "A rack is heavier than its weight budget",
        """The sum of the devices' catalogue weights against the budget's `weight_kg` (devices
       without a weight are left out and counted in the message).""",
    ),
    _r(
        "rack-units",
        "check",
        "A rack's devices take more units than it has",
        """Units taken by the rack's devices (a chassis once, its boards not at all) against
       `site.rack_units`.""",
    ),
    _r(
        "rack-feed",
        "check",
        "A rack's power shelves or PDUs supply less than its load",
        """What the rack's power shelves and PDUs deliver (`physical.supply_w`) against the
       maximum power of its devices.""",
    ),
    _r(
        "rack-cables",
        "check",
        "More cable ends leave a rack than its cable management takes",
        """Cable ends leaving the rack against the budget's `cables_max` (default: the catalogue's
       facility figure): a warning.""",
    ),
    _r(
        "rack-mix",
        "check",
        "A rack holds compute and a fabric's core",
        """Compute (devices with accelerators) and a fabric's spines or cores in one rack: one
       failure domain, cooling zone and maintenance window for both. Place the upper tiers in
       network racks of their own.""",
    ),
    _r(
        "address-pool",
        "check",
        "An Ethernet address pool is too small",
        """Loopback, point-to-point and host pools must hold an address (block) per switch, per
       switch-to-switch link and per leaf down port (a host pool keeps a /31 for every down port,
       cabled or not, so growth renumbers nothing), for the built size (error) and for the planned
       growth (warning). The hint names the prefix that holds what is needed.""",
    ),
    _r(
        "host-addressing",
        "check",
        "An Ethernet fabric's host ports get no address",
        """A routed (RoCEv2 / Ethernet) fat tree without `hosts:` under `ethernet.addressing` gives
       its leaves' host-facing ports no address: no GPU NIC has a point-to-point address or a
       gateway, and no leaf advertises a host subnet, so no NIC reaches another. Published AI
       back-end designs route to the host: each NIC on its own /31 (/127) with its leaf port. Add
       a host pool apart from the loopback and point-to-point pools (the hint gives a prefix that
       holds one block per leaf down port at grow_to_sus).""",
    ),
    _r(
        "address-duplicate",
        "check",
        "An address or point-to-point block is used twice",
        """Loopbacks and link blocks must be unique across every fabric of the blueprint.""",
    ),
    _r(
        "asn-range",
        "check",
        "The BGP ASN range is too small or not private",
        """One ASN per leaf, one per pod of spines and one for the cores, inside one private range
       (RFC 6996).""",
    ),
    _r(
        "asn-duplicate",
        "check",
        "Two BGP speakers share an ASN they must not share",
        """ASNs are unique per leaf and per spine pod across the fabrics of the blueprint.""",
    ),
    _r(
        "lossless",
        "check",
        "A lossless (PFC) priority no DSCP reaches, or RoCE traffic not lossless",
        """Every PFC priority should be reached by a DSCP mapping, and the RoCE DSCP must map to a
       traffic class with PFC.""",
    ),
    _r(
        "dragonfly-global-links",
        "check",
        "Dragonfly group pairs do not each get their global links",
        """The global links per unordered group pair, counted on the built links, against the
       arrangement's promise.""",
    ),
    _r(
        "dragonfly-local",
        "check",
        "A Dragonfly router does not reach every router of its group",
        """Inside a group every router is joined to every other (all to all).""",
    ),
    _r(
        "dragonfly-balance",
        "check",
        "The Dragonfly is not balanced (a = 2p = 2h)",
        """A balanced Dragonfly loads global and local links evenly under uniform traffic.""",
    ),
    _r(
        "dragonfly-size",
        "check",
        "Dragonfly size report",
        """Groups, routers and endpoints built, the largest size the design grows to, and the
       group-to-group bandwidth ratio under minimal routing (for a Dragonfly+ too): the hard
       number behind an "end to end 1:1".""",
    ),
    _r(
        "scaleup-one-hop",
        "check",
        "Accelerators of a scale-up domain are more than one switch hop apart",
        """Every accelerator of a domain instance reaches every other through one switch chip.""",
    ),
    _r(
        "scaleup-bandwidth",
        "check",
        "Scale-up bandwidth per accelerator differs from the declared figure",
        """Measured on the built links against `per_accelerator_gbytes`.""",
    ),
    _r(
        "scaleup-class",
        "check",
        "Scale-up domain classification",
        """Which class of scale-up domain was built (its size, hops and bandwidth).""",
    ),
    _r(
        "scaleup-l2-reach",
        "check",
        "Level-1 chips do not reach every level-2 chip evenly",
        """In a two-level domain every level-1 chip reaches every level-2 chip with the same number
       of links.""",
    ),
    _r(
        "scaleup-taper",
        "check",
        "Measured level-1 taper differs from the declared taper",
        """Down versus up bandwidth of the level-1 chips against `taper`.""",
    ),
    _r(
        "scaleup-ratio",
        "check",
        "Scale-up bandwidth is too small against scale-out",
        """An accelerator's scale-up bandwidth against its share of the board's scale-out bandwidth,
       held to `planning.scaleup_to_scaleout_min` (warning) and `_floor` (error).""",
    ),
    _r(
        "cxl-capacity",
        "check",
        "A CXL pool cannot hold the capacity promised to its hosts",
        """The Type 3 memory behind the pool's switches against the sum of `promised_gb` and the
        shared regions' `size_gb` (each region counted once, however many hosts map it).""",
    ),
    _r(
        "site-route",
        "build",
        "A side-by-side cable route joins racks that are not neighbours",
        """A `site.routes` entry of type `side-by-side` bays consecutive racks of one row, so cables
        between them run sideways without the overhead tray; racks in two rows, with a gap between
        them, or in two routes cannot be bayed.""",
    ),
    _r(
        "cxl-granularity",
        "check",
        "A CXL pool's logical devices cannot serve every promise in whole LDs",
        """Capacity binds to hosts in whole logical devices: a single logical device (SLD) goes to one
        host, a multi-logical device (MLD) in `memory_gb / logical_devices` pieces. A host promised
        1,100 GB on 1 TB SLDs takes 2 devices, so the sum of GB can fit while the devices do not.
        Fix: more memory devices, promises of whole LDs, or an MLD with smaller LDs.""",
    ),
    _r(
        "cxl-shared",
        "check",
        "A CXL shared region names no host of its pool, or its memory devices cannot share",
        """A shared region is mapped by several hosts at once (CXL 3.x shared memory): its hosts must
        be hosts entries (a group) or host devices of the same pool, and the pool's memory device
        must support sharing (catalogue `memory_sharing`).""",
    ),
    _r(
        "cxl-lanes",
        "check",
        "A CXL link runs narrower than one of its ports",
        """A x16 port cabled to a x8 port runs x8: the wider end loses bandwidth.""",
    ),
    _r(
        "cxl-bandwidth",
        "check",
        "A host's bandwidth into the CXL pool is below the target",
        """Measured per host against `per_host_gbytes`.""",
    ),
    _r(
        "port-map",
        "check",
        "A switch's network-OS port map disagrees with its catalogue model",
        """A SONiC port map (`catalogue: port_maps:`) must describe the catalogue model it is for:
       the same port names (so configs, cabling list and `snc verify` name a port alike), lanes
       and speed, a breakout mode that splits each cage as the catalogue's cages are split (ports
       per cage x speed, one of the group's `breakout` modes), and only roles the model has. The
       catalogue model is the source of truth for cages; fix the map, or the model. No SerDes
       lane may belong to two ports and no alias name two ports (LLDP reports the alias): each
       is an error at the group's `lane_step` or `alias`. A group that lists each port's lanes
       (`ports:`, a board with swapped lanes) must list one entry per catalogue port, each with
       the catalogue group's lane count, and any name or index it gives must be the catalogue's:
       an error at the first wrong entry.""",
    ),
    _r(
        "ib-subnet-manager",
        "check",
        "The fabric's subnet managers and LID settings cannot work as written",
        """A fabric's `subnet_manager` names the machines that run OpenSM, each with its own
       `sm_priority` (one `opensm.<name>.conf` each; the highest priority is master, the others
       standby and take over when it stops answering), and its `lmc` (2^lmc LIDs per HCA port).
       Errors: `subnet_manager` on an Ethernet fabric; `lmc` above 0 with the ftree engine (OpenSM's
       fat-tree routing does not support LMC > 0 and routes with its default engine instead); more
       LIDs than one subnet's 49,151 unicast LIDs (HCA ports x 2^lmc plus one per switch; IBTA vol.
       1 sec. 4.1.3), on every InfiniBand fabric, with or without a `subnet_manager` section (lmc 0
       then): over it, split a fat tree into `planes` (each its own subnet) or the design into
       several fabrics. The blueprint's own checks reject priorities outside 0-15, equal priorities
       (OpenSM would then elect by port GUID, unknown before binding) and repeated names.""",
    ),
    _r(
        "acceptance-routes",
        "check",
        "The acceptance plan's tier tests follow no modelled route on this fabric",
        """On an InfiniBand fat tree routed by OpenSM's ftree, snc computes the routes the subnet
       manager programs and picks the tier tests' pairs on them, so each test crosses the cables
       it names. Where it cannot (another routing engine, such as updn on a Dragonfly or
       Dragonfly+; or a route table above 1,000,000 switch x HCA-port entries, such as one plane
       of a 131k-GPU design) the pairs come from the topology alone and the subnet manager picks
       the path: a test may not cross the cables it names, and coverage in the plan is not proof
       that each cable carried traffic (info). `snc check-results` then attributes a failure to the
       cables on the path `perftest.sh` records for each test (ibtracert), and names the cables a
       passing test's recorded path left untested. The checklist and perftest.sh say the same per
       fabric.""",
    ),
    _r(
        "ib-routing",
        "check",
        "The subnet manager's routing can deadlock the traffic NCCL sends",
        """NCCL puts every queue pair on one static service level (`NCCL_IB_SL`, default 0; it never
       asks the SA for a path record's SL), so on an InfiniBand fabric all its traffic shares one
       virtual lane. Engines that stay deadlock-free by spreading paths over VLs (dfsssp, lash)
       then leave cycles in the channel-dependency graph of their routes on a Dragonfly: a credit
       loop that stalls the fabric under load (error). The plan picks an engine deadlock-free on
       one VL: ftree on a fat tree, updn with the spines as roots on a Dragonfly+, nue with
       `nue_max_num_vls 1` on a Dragonfly, or on a Dragonfly too big for nue (its work,
       destinations x channel dependencies, above 1e8: minutes of route computation after every
       link failure) updn from one root router, and says which and why (info); an engine that
       balances paths by load (dfsssp, sssp) on a fat tree or Dragonfly+ is safe only where
       OpenSM logs "Virtual Lanes needed: 1" (warning), and so is nue named on a Dragonfly past
       that size (deadlock-free but slow). Fix: leave `routing_engine` out, or set it to `nue`.""",
    ),
    _r(
        "tenants",
        "check",
        "A tenant's partition cannot be made as declared",
        """Tenant names and P_Keys must be unique (OpenSM merges repeated keys into one
       partition), and every group a tenant names must be a node group or scale-up domain
       (error); a group without a port on an InfiniBand fabric joins no partition (warning).""",
    ),
    _r(
        "mgmt-addressing",
        "check",
        "The management network cannot address every rack",
        """`management.addressing` gives each rack position of the site a block of `per_rack`
       addresses (block 0 keeps the network address and the gateway): the network must hold a
       block for every rack position (and, routed, the uplinks' /31s), a block must hold the rack
       switch's access ports, its own address and a spare (routed: a power-of-two subnet with its
       network, gateway and broadcast addresses), and the gateway must lie in block 0 (routed:
       no gateway, each rack switch is its rack's) and be a device's address: the flat design's
       first aggregation switch carries it on the VLAN (MCLAG: both peers), so a flat network
       without aggregation switches is an error. `management.border`'s link addresses must hold
       every switch x router link, be of the management network's family (a session carries
       its own family) and lie outside the management network. The hint names the prefix needed.""",
    ),
    _r(
        "imex-addressing",
        "check",
        "A scale-up domain's in-band pool cannot address every compute tray",
        """`scaleup[].inband` gives each domain instance (an NVL72 rack) a block of `per_domain`
       addresses, its subnet, and tray b address b + 1 of it: the tray's in-band (front-end)
       address, which NVIDIA IMEX lists in `imex/<domain>/nodes_config.cfg`. A block must hold
       the trays and the subnet's network, gateway and broadcast addresses, and the network a
       block for every instance of the domain. The hint names the size needed.""",
    ),
    _r(
        "address-overlap",
        "check",
        "Two networks' address pools overlap",
        """The management network (and its `border` links), every Ethernet fabric's `loopbacks`, `p2p` and `hosts` pools
       and every scale-up domain's `inband` pool must be disjoint across networks (one fabric's own pools are compared when the
       blueprint is parsed): an overlap gives two interfaces the same address in the switch
       configs and the host address plan. The error is at the later pool, naming both ranges;
       give one of them a range outside the other.""",
    ),
    _r(
        "host-topology",
        "check",
        "A host PCI/NUMA layout disagrees with its device model",
        """A layout (`catalogue: host_topology:`, from which the NCCL topology files are made) lists
       GPUs or NICs the model does not have or misses some, repeats a NUMA id or a PCI bus id,
       gives another number of NVSwitch bus ids than the board has switch chips, or would make a
       file larger than NCCL's parser reads (256 elements). Only models some device uses are
       checked; the model gets no NCCL file until its layout fits. A value NCCL could not read
       (a bus id, a link speed) is a `schema` error when the blueprint is read.""",
    ),
    _r(
        "nic-placement",
        "check",
        "A NIC's printed port, the GPU beside it and its rail disagree",
        """Error: a host layout gives a NIC a vendor port (`port:`, e.g. the DGX H100's OSFP 1 port 1
       for GPU 7's NIC) that the catalogue's faceplate prints for another data port, so the
       cabling sheet would send its cable to another cage. Warning: on a rail-optimised fabric
       a rail is cabled to NICs beside different GPU indices on different hosts, or (one NIC per
       GPU) rail r reaches a NIC beside a GPU other than GPU r; rail-aligned collectives then
       cross rails inside the hosts. Make host_topology and the device's faceplate agree, and
       cable NIC j to rail j.""",
    ),
    _r(
        "kubernetes-labels",
        "check",
        "A host name or topology label would break Kubernetes syntax",
        """Node names must be DNS subdomains, label keys a DNS-subdomain prefix and a name of at most
       63 characters, label values at most 63 characters of letters, digits, '-', '_' and '.'.
       The finding is at the naming template, rack name or fabric name that makes the bad name,
       rather than a manifest the API server rejects.""",
    ),
    _r(
        "scheduler-topology",
        "check",
        "Scheduler topology levels do not nest",
        """Info: a scale-up domain split over two leaf groups (or a leaf group over two spine
       groups) cannot be a level of a strict tree, so the Kueue Topology and the Volcano
       HyperNodes leave that level out and keep the scale-up domain. Align scalable units with
       scale-up domains to keep every level.""",
    ),
    _r(
        "su-splits-domain",
        "check",
        "A scalable unit boundary cuts a scale-up domain",
        """Warning: a scale-up domain of several hosts (an NVL72 rack of 18 trays) whose hosts sit on
       two scalable units' leaves: its racks cable to two leaf groups, traffic between its hosts
       on one rail crosses the spines, and the schedulers cannot nest the domain inside an SU.
       The hint gives the rack-aligned `su_nodes`: whole domains per SU (or whole SUs per domain,
       where a domain is larger than an SU).""",
    ),
    _r(
        "workload-bandwidth",
        "check",
        "A declared workload needs more bandwidth than the design gives",
        """Per workload and parallel dimension, the bytes each accelerator moves per step over the
       communication budget (step time x `comm_budget`) against what the network carrying that
       dimension gives per accelerator (TP, EP: the scale-up domain; PP, DP: the host's scale-out
       NICs), both numbers in the message; a TP x EP group larger than the smallest scale-up
       domain is an error too. A workload that fits is an info finding with its numbers.""",
    ),
    # -- render: committed outputs -----------------------------------------------------------------------
    _r(
        "drift",
        "render",
        "A committed output differs from what the blueprint renders",
        """`snc render --check` renders in memory and compares with the committed output folder:
       a file that differs (with the JSON keys or CSV rows that differ), one the blueprint no
       longer renders, or one it renders that is missing. Render again and commit the result,
       or fix the hand edit. Exit code 1.""",
    ),
    # -- project configuration ---------------------------------------------------------------------------
    _r(
        "config",
        "config",
        "The snc configuration ([tool.snc] or .snc.toml) is invalid",
        """An unknown key, a wrong type, an unknown severity, an ignore without a reason, or a rule
       of the load and parse stages (which cannot be turned off). Exit code 2.""",
    ),
)

BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """The catalogue entry of ``rule_id``, or a generic one for an id the catalogue lacks."""
    found = BY_ID.get(rule_id)
    if found is None:
        found = Rule(rule_id, "check", f"snc rule {rule_id}", f"Findings of the snc rule {rule_id}.")
    return found


def markdown() -> str:
    """docs/rules.md: every rule by stage, with its anchor, short and full description."""
    stages = {
        "load": "Loading (exit 2)",
        "parse": "The blueprint language (exit 2)",
        "build": "Building the design (exit 1)",
        "check": "Checks on the built Fabric",
        "render": "Committed outputs (`snc render --check`, exit 1)",
        "config": "Project configuration (exit 2)",
    }
    lines = [
        "# Rules",
        "",
        "<!-- Generated by `python -m supernodeiac.findings.rules > docs/rules.md`; a test keeps it in step. -->",
        "",
        "Every finding names its rule, like `blueprints/x.yaml:42:7: error[reach]: ...`. This page",
        "is where SARIF rule help and pull-request annotations point. Severity per rule can be",
        "changed, and design rules ignored with a reason, in `[tool.snc]` (see docs/gitops.md).",
        "",
    ]
    for stage, title in stages.items():
        lines += [f"## {title}", ""]
        for r in sorted((r for r in RULES if r.stage == stage), key=lambda r: r.id):
            lines += [f"### {r.id}", "", f"**{r.short}.** {r.full}", ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - the generator of docs/rules.md
    sys.stdout.write(markdown())
