"""``codemode serve --transport http`` against the official MCP conformance suite, and what it asserts.

One real served process (the weather demo server behind it) is shared by every test. Each server scenario
of the suite that applies to serve runs as a test of its own and must pass every check; the scenarios that
do not apply (they call tools, prompts or resources of the suite's own test server) are listed with the
reason, as in docs/serve.md, and a suite that gains a scenario fails ``test_every_scenario_is_run_or_*``
until it is sorted into one list or the other. The suite checks only that ``logging/setLevel`` answers
``{}``, so the filtering it promises, the capabilities and the version are asserted here with the SDK's
client.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import LoggingLevel, LoggingMessageNotificationParams

from codemode_kernel._version import __version__
from tests.conformance_support import list_scenarios, run_server_scenario
from tests.integration.serve_support import demo_server, served_http, write_serve_config

pytestmark = pytest.mark.integration

SCENARIOS = [
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]
"""The suite's server scenarios that test serve's own behaviour: every check must pass."""

NOT_APPLICABLE = {
    **dict.fromkeys(
        [
            "tools-call-simple-text",
            "tools-call-image",
            "tools-call-audio",
            "tools-call-embedded-resource",
            "tools-call-mixed-content",
            "tools-call-with-logging",
            "tools-call-error",
            "tools-call-with-progress",
            "tools-call-sampling",
            "tools-call-elicitation",
            "json-schema-2020-12",
            "elicitation-sep1034-defaults",
            "elicitation-sep1330-enums",
            "server-sse-polling",
        ],
        "calls a tool of the suite's test server (test_simple_text, test_reconnection, ...); serve offers "
        "execute_python and the configured servers' excluded tools",
    ),
    **dict.fromkeys(
        ["resources-read-text", "resources-read-binary", "resources-templates-read"],
        "reads the suite's test resources (test://static-text, ...); serve's resources are artifacts",
    ),
    **dict.fromkeys(
        ["resources-subscribe", "resources-unsubscribe"],
        "serve offers no resource subscriptions (capability resources.subscribe is false)",
    ),
    **dict.fromkeys(
        [
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
        ],
        "serve offers no prompts (prompts/list is empty)",
    ),
    "completion-complete": "serve offers no completions (no completions capability)",
}
"""The suite's server scenarios that do not apply to serve, with the reason (as in docs/serve.md)."""

PROGRAM = 'import sys\nprint("to stdout")\nprint("to stderr", file=sys.stderr)\n"done"'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``codemode serve --transport http`` on loopback, no token: its /mcp URL."""
    root = tmp_path_factory.mktemp("conformance-serve")
    write_serve_config(root, {"weather": demo_server("weather")})
    with served_http(root, root / "serve.json") as (_, url):
        yield url


def test_every_scenario_is_run_or_said_not_to_apply() -> None:
    listed = list_scenarios("server")
    assert sorted(listed) == sorted([*SCENARIOS, *NOT_APPLICABLE]), (
        "the conformance suite's server scenarios changed: sort each new one into SCENARIOS or "
        f"NOT_APPLICABLE (with the reason, also in docs/serve.md); listed: {listed}"
    )


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes_every_check(served: str, scenario: str) -> None:
    result = run_server_scenario(served, scenario)
    assert result.scenarios == [scenario], result.summary()
    assert result.passed, result.summary()


def test_initialize_declares_what_serve_does_and_its_version(served: str) -> None:
    async def check() -> None:
        async with Client(streamable_http_client(served), mode="legacy") as client:
            info = client.server_info
            assert info is not None and (info.name, info.version) == ("codemode", __version__)
            capabilities = client.server_capabilities
            # It sends notifications/tools/list_changed when a server's tools change, and log messages.
            assert capabilities.tools is not None and capabilities.tools.list_changed is True
            assert capabilities.logging is not None
            # Artifacts come and go without notifications or subscriptions; nothing to complete.
            assert capabilities.resources is not None and not capabilities.resources.list_changed
            assert not capabilities.resources.subscribe and capabilities.completions is None

    anyio.run(check)


def test_set_level_filters_the_log_messages_of_the_clients_session_only(served: str) -> None:
    """Printed lines are logged at info (stdout) and warning (stderr); logging/setLevel sets the floor."""

    async def set_level(client: Client, level: LoggingLevel) -> None:
        with warnings.catch_warnings():  # deprecated by the 2026-07-28 protocol, the handshake's own method
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.set_logging_level(level)

    async def run(client: Client, logged: list[Any]) -> list[tuple[str, str | None, Any]]:
        logged.clear()
        result = await client.call_tool("execute_python", {"code": PROGRAM})
        assert result.structured_content is not None and result.structured_content["status"] == "ok"
        return list(logged)

    async def check() -> None:
        mine: list[tuple[str, str | None, Any]] = []
        other: list[tuple[str, str | None, Any]] = []

        async def on_mine(params: LoggingMessageNotificationParams) -> None:
            mine.append((params.level, params.logger, params.data))

        async def on_other(params: LoggingMessageNotificationParams) -> None:
            other.append((params.level, params.logger, params.data))

        both = [("info", "stdout", "to stdout\n"), ("warning", "stderr", "to stderr\n")]
        async with (
            Client(streamable_http_client(served), mode="legacy", logging_callback=on_mine) as client,
            Client(streamable_http_client(served), mode="legacy", logging_callback=on_other) as bystander,
        ):
            assert await run(client, mine) == both  # no level set: every level
            await set_level(client, "warning")
            assert await run(client, mine) == both[1:]
            await set_level(client, "error")
            assert await run(client, mine) == []
            await set_level(client, "debug")
            assert await run(client, mine) == both
            await set_level(client, "emergency")
            assert await run(bystander, other) == both  # another MCP session keeps its own level

    anyio.run(check)
