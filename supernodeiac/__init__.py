"""supernodeiac: a declarative infrastructure-as-code compiler for AI supernode deployments."""

__version__ = "0.1.0"
