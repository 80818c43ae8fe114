"""The hub against the official MCP conformance suite's ``auth`` client suite (14 scenarios).

The suite starts each scenario's resource and authorization servers and runs
tests/conformance_oauth_client.py (a real Toolbox whose person signs in through a loopback redirect that
tests/servers/oauth_browser.py follows): metadata discovery and its fallbacks, Client ID Metadata Documents,
dynamic registration, pre-registered credentials, PKCE, scope selection and step-up, the token endpoint's
authentication methods, the resource indicator. Every check must pass, with no warning.
"""

from __future__ import annotations

import sys

import pytest

from tests.conformance_support import list_scenarios, run_client_scenario
from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def test_every_check_of_the_auth_suite_passes() -> None:
    command = [sys.executable, "-P", "-m", "tests.conformance_oauth_client"]
    result = run_client_scenario(command, suite="auth", env={"PYTHONPATH": str(ROOT)})
    auth = [name for name in list_scenarios("client") if name.startswith("auth/")]
    assert set(result.scenarios) >= {
        "auth/basic-cimd",
        "auth/pre-registration",
        "auth/scope-step-up",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
    }, result.summary()
    assert len(result.scenarios) == 14, result.summary()
    assert set(result.scenarios) <= set(auth)
    checks = {(check.scenario, check.id) for check in result.successes}
    assert ("auth/scope-step-up", "scope-step-up-escalation") in checks, result.summary()
    assert ("auth/pre-registration", "pre-registration-auth") in checks, result.summary()
    assert result.passed, result.summary()
    assert not result.warnings, result.summary()
