"""The hub against the official MCP conformance suite's basic client scenarios.

``initialize`` (the handshake: protocol version, client name and version), ``tools_call`` (``add_numbers``
called with its arguments) and ``sse-retry`` (SEP-1699: the server closes the call's SSE stream after a
priming event with ``retry: 500``; the client must reconnect with GET after that many milliseconds and send
``Last-Event-ID``, and the answer arrives on the new stream). The suite's scenario server runs
``tests/conformance_hub_client.py``: a real Toolbox over Streamable HTTP.
"""

from __future__ import annotations

import sys

import pytest

from tests.conformance_support import run_client_scenario
from tests.conftest import ROOT

pytestmark = pytest.mark.integration

TOLERATED = {"client-sse-retry-timing"}
"""The one warning kept: "reconnected slightly late" (more than 200 ms after the 500 ms the server asked
for) is the machine's load, not the client's choice; reconnecting early or ignoring the field fails."""


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "sse-retry"])
def test_the_hub_passes_the_basic_client_scenarios(scenario: str) -> None:
    command = [sys.executable, "-P", "-m", "tests.conformance_hub_client"]
    result = run_client_scenario(command, scenario, env={"PYTHONPATH": str(ROOT)})
    assert result.successes and not result.failures, result.summary()
    assert {check.id for check in result.warnings} <= TOLERATED, result.summary()
    if scenario == "sse-retry":
        ids = {check.id for check in result.successes}
        assert {"client-sse-graceful-reconnect", "client-sse-last-event-id"} <= ids, result.summary()
    if scenario == "tools_call":
        assert "tool-add-numbers" in {check.id for check in result.successes}, result.summary()
