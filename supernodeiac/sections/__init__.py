"""Sections of ``snc explain`` (see ``supernodeiac/explain.py``): each module registers fabric
sections (``SECTIONS``, by fabric kind) or deployment sections (``DEPLOYMENT``)."""

from . import clos, dragonfly, ports, racks, rails  # noqa: F401
