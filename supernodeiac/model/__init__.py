"""Pydantic models of the blueprint (intent)."""

from .blueprint import API_VERSION, Blueprint

__all__ = ["API_VERSION", "Blueprint"]
