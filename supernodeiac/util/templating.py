"""The jinja2 environment every text renderer shares: templates/ in the package, StrictUndefined
(a missing value is an error, never an empty string in a config), no autoescaping (not HTML)."""

from __future__ import annotations

from functools import lru_cache

import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("supernodeiac", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_template(name: str, **values: object) -> str:
    return environment().get_template(name).render(**values)
