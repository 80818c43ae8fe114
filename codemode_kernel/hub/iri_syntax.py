"""jsonschema without the cost of rfc3987_syntax at import time.

When rfc3987_syntax is installed (jsonschema's ``format-nongpl`` extra, which JupyterLab's packages ask for),
``import jsonschema`` imports it for the "iri" formats, and it compiles some 35 Lark grammars as it loads:
0.8 s of CPU on these machines, paid by every kernel start, ``codemode run`` and ``codemode serve``, for a
format nothing here checks (upstream: python-jsonschema/jsonschema#1428). :func:`defer_iri_syntax` puts a
stand-in under that name before jsonschema loads; its ``is_valid_syntax`` loads the real module on its first
call, so an "iri" format check still gives the real answer and only then pays for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__all__ = ["defer_iri_syntax"]

_NAME = "rfc3987_syntax"


def defer_iri_syntax() -> None:
    """Install the stand-in, unless jsonschema or the real module is loaded already or it is not installed."""
    if _NAME in sys.modules or "jsonschema" in sys.modules or importlib.util.find_spec(_NAME) is None:
        return
    stand_in = types.ModuleType(_NAME, "Stands in for rfc3987_syntax until its first use: hub/iri_syntax.py")

    def is_valid_syntax(rule: str, value: str) -> bool:
        if sys.modules.get(_NAME) is stand_in:
            del sys.modules[_NAME]
        real = importlib.import_module(_NAME)
        return bool(real.is_valid_syntax(rule, value))

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    sys.modules[_NAME] = stand_in
