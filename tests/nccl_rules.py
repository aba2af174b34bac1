"""A checker of NCCL's topology-file parser rules (src/graph/xml.cc, xml.h; shared/reference/formats.md 1.2-1.3).

NCCL reads its topology XML with a hand-written tokenizer, not an XML library, so a file any
XML parser accepts can still fail in NCCL. This follows that tokenizer:

* no prolog and no DOCTYPE (``<?`` / ``<!`` other than a comment): "expected >, got '?'";
* between elements only space, newline and carriage return (a TAB fails);
* a whole tag on one line; attributes ``name="value"`` (or single quotes), one space apart;
* at most 16 attributes per element, 255 characters per name or value, 640 children per
  element, 256 elements in the file;
* the element hierarchy NCCL's handlers accept and the attributes it requires.

It returns the tree as nested ``(name, attrs, children)`` tuples for structural tests.

:func:`check_nets` adds what NCCL's loader does with a file's ``<net>`` entries once it has
parsed them (src/graph/topo.cc, ncclTopoPopulateNics and ncclTopoAddNet, NCCL 2.2x):

* an entry is found by ``name`` (the network plugin's device name, e.g. ``mlx5_3``): without it
  NCCL never matches the entry and trims it;
* ``dev`` is replaced by the plugin's device index (a warning when they differ), so a file's
  ``dev`` values must be distinct;
* ``rail``/``plane`` present in the file must equal what NCCL derives from the plugin (a hash of
  the GUID, with bit 16 set) or NCCL stops with "Inconsistent rail/plane": a file cannot set
  them, so a generated one must leave them out;
* ``guid`` is overwritten, ``speed``, ``port``, ``latency``, ``maxconn``, ``gdr``, ``coll`` kept
  where the file gives them; anything else is never read.

:func:`check_busids` refuses PCI bus ids only a VM shows (a virtual ``ffff`` domain, Azure's
``01xx`` NIC domains): NCCL trims a file's entries the running host does not have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_ATTRS = 16
MAX_STR = 255
MAX_SUBS = 640
MAX_NODES = 256

CHILDREN = {
    "system": {"cpu"},
    "cpu": {"pci", "nic"},
    "pci": {"pci", "gpu", "nic", "pcilink"},
    "gpu": {"nvlink", "c2c"},
    "nic": {"net"},
    "net": set(),
    "nvlink": set(),
    "c2c": set(),
    "pcilink": set(),
}
REQUIRED = {
    "system": ("version",),
    "cpu": ("numaid", "arch"),
    "pci": ("busid",),
    "gpu": ("dev", "sm", "rank", "gdr"),
    "nvlink": ("target", "count", "tclass"),
    "c2c": ("bw", "count"),
    "net": ("dev",),
    "pcilink": ("target",),
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VALUE = re.compile(r"""("([^"\n]*)"|'([^'\n]*)')""")


class NcclXmlError(ValueError):
    pass


@dataclass
class Node:
    name: str
    attrs: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)

    def find_all(self, name: str) -> list[Node]:
        out = [self] if self.name == name else []
        for c in self.children:
            out.extend(c.find_all(name))
        return out


def parse(text: str) -> Node:
    """Parse like NCCL; raise NcclXmlError naming the line on the first rule broken."""
    pos, line, n = 0, 1, len(text)
    stack: list[Node] = []
    root: Node | None = None
    count = 0

    def fail(msg: str) -> NcclXmlError:
        return NcclXmlError(f"line {line}: {msg}")

    while True:
        while pos < n and text[pos] in " \n\r":
            line += text[pos] == "\n"
            pos += 1
        if pos >= n:
            break
        if text[pos] != "<":
            raise fail(f"expecting '<', got {text[pos]!r}")
        if text.startswith("<!--", pos):
            end = text.find("-->", pos)
            if end < 0:
                raise fail("unterminated comment")
            line += text.count("\n", pos, end)
            pos = end + 3
            continue
        end = text.find(">", pos)
        if end < 0 or "\n" in text[pos:end]:
            raise fail("a tag must be on one line")
        tag = text[pos + 1 : end]
        pos = end + 1
        if tag.startswith("/"):
            name = tag[1:]
            if not stack or stack[-1].name != name:
                raise fail(f"closing </{name}> does not match")
            stack.pop()
            continue
        if tag[:1] in ("?", "!"):
            raise fail(f"expected >, got {tag[:1]!r} (no prolog or DOCTYPE)")
        selfclose = tag.endswith("/")
        if selfclose:
            tag = tag[:-1]
        m = _NAME.match(tag)
        if m is None:
            raise fail(f"bad element name in <{tag}>")
        name, rest = m.group(0), tag[m.end() :]
        attrs: dict[str, str] = {}
        while rest:
            if not rest.startswith(" ") or rest.startswith("  "):
                raise fail(f"attributes of <{name}> must be separated by one space")
            rest = rest[1:]
            am = _NAME.match(rest)
            if am is None:
                raise fail(f"bad attribute in <{name}> near {rest[:20]!r}")
            key = am.group(0)
            rest = rest[am.end() :]
            if not rest.startswith("="):
                raise fail(f"attribute {key} of <{name}> has no value")
            vm = _VALUE.match(rest[1:])
            if vm is None:
                raise fail(f"attribute {key} of <{name}> is not quoted")
            value = vm.group(2) if vm.group(2) is not None else vm.group(3)
            rest = rest[1 + vm.end() :]
            if len(key) > MAX_STR or len(value) > MAX_STR:
                raise fail(f"attribute {key} of <{name}> is longer than {MAX_STR} characters")
            attrs[key] = value
        if len(attrs) > MAX_ATTRS:
            raise fail(f"<{name}> has {len(attrs)} attributes; NCCL reads {MAX_ATTRS}")
        node = Node(name, attrs, line)
        count += 1
        if count > MAX_NODES:
            raise fail(f"more than {MAX_NODES} elements")
        if stack:
            parent = stack[-1]
            if name not in CHILDREN.get(parent.name, set()):
                raise fail(f"<{name}> is not accepted under <{parent.name}>")
            parent.children.append(node)
            if len(parent.children) > MAX_SUBS:
                raise fail(f"<{parent.name}> has more than {MAX_SUBS} children")
        elif root is None:
            if name != "system":
                raise fail(f"the root must be <system>, not <{name}>")
            root = node
        else:
            raise fail("a second root element")
        if not selfclose:
            stack.append(node)
    if stack:
        raise NcclXmlError(f"<{stack[-1].name}> is not closed")
    if root is None:
        raise NcclXmlError("no <system> element")
    _required(root)
    return root


def _required(node: Node) -> None:
    for key in REQUIRED.get(node.name, ()):
        if key not in node.attrs:
            raise NcclXmlError(f"line {node.line}: attribute {key} of <{node.name}> not found")
    if node.name == "system" and node.attrs["version"] != "1":
        raise NcclXmlError("XML Topology has wrong version")
    if node.name == "cpu" and node.attrs["arch"] == "x86_64":
        if "vendor" not in node.attrs:
            raise NcclXmlError(f"line {node.line}: attribute vendor of <cpu> not found (x86_64)")
        if node.attrs["vendor"] == "GenuineIntel" and not {"familyid", "modelid"} <= node.attrs.keys():
            raise NcclXmlError(f"line {node.line}: Intel <cpu> needs familyid and modelid")
    for c in node.children:
        _required(c)


# <net> attributes NCCL reads from a topology file (topo.cc ncclTopoAddNet, ncclTopoPopulateNics).
NET_READ = {"name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr", "coll", "net", "gin", "rma", "keep"}
# Read, but NCCL refuses a file whose values differ from its own derivation.
NET_DERIVED = {"rail", "plane"}
_VIRTUAL_BUSID = re.compile(r"^(ffff|01[0-9a-f]{2}):", re.IGNORECASE)


def check_nets(root: Node) -> list[str]:
    """The NIC names in dev order, after NCCL's loader rules for ``<net>`` (raises NcclXmlError)."""
    devs: dict[int, str] = {}
    for net in root.find_all("net"):
        where = f"line {net.line}: <net>"
        if "name" not in net.attrs:
            raise NcclXmlError(f"{where} has no name: NCCL finds an entry by its device name and trims it otherwise")
        derived = NET_DERIVED & net.attrs.keys()
        if derived:
            raise NcclXmlError(f"{where} sets {sorted(derived)}: NCCL derives them and refuses a file that differs")
        unread = net.attrs.keys() - NET_READ
        if unread:
            raise NcclXmlError(f"{where} has attributes NCCL never reads: {sorted(unread)}")
        dev = int(net.attrs["dev"])
        if dev in devs:
            raise NcclXmlError(f"{where} repeats dev {dev} ({devs[dev]})")
        devs[dev] = net.attrs["name"]
    if sorted(devs) != list(range(len(devs))):
        raise NcclXmlError(f"<net> dev numbers {sorted(devs)} are not 0..{len(devs) - 1}")
    return [devs[d] for d in sorted(devs)]


def check_busids(root: Node) -> None:
    for pci in root.find_all("pci"):
        if _VIRTUAL_BUSID.match(pci.attrs["busid"]):
            raise NcclXmlError(f"line {pci.line}: bus id {pci.attrs['busid']} is a VM's; no bare-metal host has it")
