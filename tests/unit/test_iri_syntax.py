"""The kernel side imports jsonschema without compiling rfc3987_syntax's grammars (hub/iri_syntax.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = r"""
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
import jsonschema
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
loaded_before = "lark" in sys.modules
values = ("https://example.org/ümlaut", "http://[::1", "no scheme")
answers = {value: checker.conforms(value, "iri") for value in values}
print(json.dumps({"lark_before_use": loaded_before, "iri": answers}))
"""


def _probe(*modules: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *modules], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "entry", ["codemode_kernel.kernel.kernel", "codemode_kernel.cli", "codemode_kernel.serve.app"]
)
def test_an_entry_point_loads_jsonschema_without_the_iri_grammars_and_iri_checks_still_answer(
    entry: str,
) -> None:
    ours = _probe(entry)
    assert ours["lark_before_use"] is False, f"importing {entry} compiled rfc3987_syntax's grammars"
    plain = _probe()  # jsonschema alone, as its authors ship it
    assert plain["lark_before_use"] is True, "rfc3987_syntax is not installed: this test checks nothing"
    assert ours["iri"] == plain["iri"] and list(plain["iri"].values()) == [True, False, False]
