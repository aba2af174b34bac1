"""supernodeiac: a declarative infrastructure-as-code compiler for AI supernode deployments.

The Python API, typed (the package ships ``py.typed``) and stable across releases of the ``snc``
command it drives::

    import supernodeiac as snc

    compiled = snc.compile_file("blueprints/small-ib.yaml")      # load (with includes), parse, build, check
    for f in compiled.findings:                                   # snc.Finding: rule, severity, message, location, hint
        print(f.location, f.severity.value, f.rule, f.message)
    if compiled.exit_code == 0:
        files, notices = snc.render(compiled)                     # {relative path: bytes}, nothing written
        snc.write(files, Path("out/small-ib"), compiled.blueprint.metadata.name)   # atomic, with a manifest

    change = snc.diff(snc.compile_file("old.yaml"), snc.compile_file("new.yaml"))
    print(snc.diff_markdown(change))                              # or diff_text, diff_json; change.fabric.cables ...

Names are imported on first use, so ``import supernodeiac`` stays cheap for tools that only
need one part.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .compare import Diff, diff
    from .compare.drift import drift_findings
    from .compare.report import to_json as diff_json
    from .compare.report import to_markdown as diff_markdown
    from .compare.report import to_text as diff_text
    from .config import Config, ConfigError
    from .config import find as find_config
    from .config import load as load_config
    from .fabric import Device, Fabric, Link
    from .findings import Finding, Location, Severity
    from .findings.rules import RULES, Rule
    from .findings.sarif import sarif_log
    from .pipeline import Compiled, Stage, compile_document, compile_file, compile_text, render
    from .writer import write

# name -> (module, attribute): what `from supernodeiac import X` gives.
_EXPORTS: dict[str, tuple[str, str]] = {
    "compile_file": ("pipeline", "compile_file"),
    "compile_text": ("pipeline", "compile_text"),
    "compile_document": ("pipeline", "compile_document"),
    "render": ("pipeline", "render"),
    "Compiled": ("pipeline", "Compiled"),
    "Stage": ("pipeline", "Stage"),
    "write": ("writer", "write"),
    "diff": ("compare", "diff"),
    "Diff": ("compare", "Diff"),
    "diff_text": ("compare.report", "to_text"),
    "diff_markdown": ("compare.report", "to_markdown"),
    "diff_json": ("compare.report", "to_json"),
    "drift_findings": ("compare.drift", "drift_findings"),
    "Finding": ("findings", "Finding"),
    "Location": ("findings", "Location"),
    "Severity": ("findings", "Severity"),
    "Fabric": ("fabric", "Fabric"),
    "Device": ("fabric", "Device"),
    "Link": ("fabric", "Link"),
    "Config": ("config", "Config"),
    "ConfigError": ("config", "ConfigError"),
    "find_config": ("config", "find"),
    "load_config": ("config", "load"),
    "sarif_log": ("findings.sarif", "sarif_log"),
    "Rule": ("findings.rules", "Rule"),
    "RULES": ("findings.rules", "RULES"),
}

__all__ = [  # the names of _EXPORTS (a test keeps the two equal), spelled out for linters and type checkers
    "RULES",
    "Compiled",
    "Config",
    "ConfigError",
    "Device",
    "Diff",
    "Fabric",
    "Finding",
    "Link",
    "Location",
    "Rule",
    "Severity",
    "Stage",
    "__version__",
    "compile_document",
    "compile_file",
    "compile_text",
    "diff",
    "diff_json",
    "diff_markdown",
    "diff_text",
    "drift_findings",
    "find_config",
    "load_config",
    "render",
    "sarif_log",
    "write",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'supernodeiac' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    globals()[name] = value  # once imported, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
