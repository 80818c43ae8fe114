"""Which modules beyond the standard library a program can import, for the execute_python description.

A worker runs the kernel's own Python, so whatever is installed there can be imported; a model that is not
told so either avoids pandas or guesses. Only well-known data and text libraries are looked for (by
``importlib.util.find_spec``, which imports nothing), plus the settings' ``preload`` modules.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Iterable

__all__ = ["KNOWN_MODULES", "importable_modules"]

KNOWN_MODULES = (
    "numpy",
    "pandas",
    "polars",
    "pyarrow",
    "scipy",
    "sklearn",
    "statsmodels",
    "matplotlib",
    "PIL",
    "bs4",
    "lxml",
    "yaml",
    "dateutil",
    "regex",
    "networkx",
    "sympy",
)
"""Looked for in every description: the libraries a model reaches for when it processes data."""


def importable_modules(preload: Iterable[str] = ()) -> list[str]:
    """The known modules installed for this Python, then the ``preload`` ones (top-level names, once)."""
    found = list(_installed())
    for name in preload:
        top = name.split(".")[0]
        if top not in found and top not in sys.stdlib_module_names:
            found.append(top)
    return found


@functools.cache
def _installed() -> tuple[str, ...]:
    return tuple(name for name in KNOWN_MODULES if importlib.util.find_spec(name) is not None)
