"""The hub against the official MCP conformance suite's ``elicitation-sep1034-client-defaults`` scenario.

The suite starts its scenario server and runs ``tests/conformance_hub_client.py`` (a real Toolbox over
Streamable HTTP, with a person who presses Enter at every question); its tool elicits five fields (string,
integer, number, enum, boolean), each with a default, and checks that the client accepted with every
default filled in (SEP-1034).
"""

from __future__ import annotations

import sys

import pytest

from tests.conformance_support import run_client_scenario
from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def test_the_hub_fills_every_default_the_person_left_empty() -> None:
    command = [sys.executable, "-P", "-m", "tests.conformance_hub_client"]
    scenario = "elicitation-sep1034-client-defaults"
    result = run_client_scenario(command, scenario, env={"PYTHONPATH": str(ROOT)})
    ids = {check.id for check in result.successes}
    assert {
        "client-elicitation-sep1034-string-default",
        "client-elicitation-sep1034-integer-default",
        "client-elicitation-sep1034-number-default",
        "client-elicitation-sep1034-enum-default",
        "client-elicitation-sep1034-boolean-default",
    } <= ids, result.summary()
    assert result.passed, result.summary()
    assert not result.warnings, result.summary()
