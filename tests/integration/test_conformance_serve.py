"""``codemode serve --transport http`` against the official MCP conformance suite, and what it asserts.

One real served process is shared by every test, with the weather demo server and
tests/servers/conformance_tools_server.py behind it: the tools the suite's ``tools-call-*`` scenarios call,
every one excluded from code mode, so serve offers them under their own names and those scenarios check
its passthrough. Each server scenario of the suite that applies to serve runs as a test of its own and must
pass every check; the scenarios left out (they need prompts, resources or forwarding serve does not have)
are listed with the reason, as in docs/serve.md, and a suite that gains a scenario fails
``test_every_scenario_is_run_or_*`` until it is sorted into one list or the other. The suite checks only
that ``logging/setLevel`` answers ``{}``, so the filtering it promises, the capabilities and the version
are asserted here with the SDK's client.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ResourceListChangedNotification,
    ResourceTemplateReference,
)

from codemode_kernel._version import __version__
from tests.conformance_support import list_scenarios, run_server_scenario
from tests.conftest import ROOT
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
    "completion-complete",
    # Through the passthrough of conformance_tools_server.py's excluded tools:
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
    # ... whose questions serve forwards to its own client:
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
]
"""The suite's server scenarios that test serve's own behaviour: every check must pass."""

PASSTHROUGH_TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "json_schema_2020_12_tool",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
]

LEFT_OUT = {
    "tools-call-with-logging": (
        "serve does not forward an upstream server's log messages (notifications/message) to its client"
    ),
    "tools-call-sampling": (
        "the tool asks the client for a completion (sampling/createMessage): serve does not forward it, "
        "its own configured model answers an upstream server's sampling once the client allows it"
    ),
    "server-sse-polling": (
        "calls test_reconnection, which must close the SSE stream mid-call so the client polls (SEP-1699); "
        "serve keeps no event store for resuming streams"
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
        [f"prompts-get-{name}" for name in ("simple", "with-args", "embedded-resource", "with-image")],
        "serve offers no prompts (prompts/list is empty)",
    ),
}
"""The suite's server scenarios not run against serve, with the reason (as in docs/serve.md)."""

PROGRAM = 'import sys\nprint("to stdout")\nprint("to stderr", file=sys.stderr)\n"done"'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ``codemode serve --transport http`` on loopback, no token, the suite's tools passed through."""
    root = tmp_path_factory.mktemp("conformance-serve")
    tools = {
        "command": sys.executable,
        "args": [str(ROOT / "tests" / "servers" / "conformance_tools_server.py")],
    }
    excluded = [f"conformance/{name}" for name in PASSTHROUGH_TOOLS]
    servers = {"weather": demo_server("weather"), "conformance": tools}
    write_serve_config(root, servers, defaults={"codeMode": {"excludedTools": excluded}})
    with served_http(root, root / "serve.json") as (_, url):
        yield url


def test_every_scenario_is_run_or_left_out_with_a_reason() -> None:
    listed = list_scenarios("server")
    assert sorted(listed) == sorted([*SCENARIOS, *LEFT_OUT]), (
        "the conformance suite's server scenarios changed: sort each new one into SCENARIOS or "
        f"LEFT_OUT (with the reason, also in docs/serve.md); listed: {listed}"
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
            # A program storing an artifact adds a resource (list_changed); no subscriptions.
            assert capabilities.resources is not None and capabilities.resources.list_changed is True
            assert not capabilities.resources.subscribe
            assert capabilities.completions is not None  # the artifact template's id_or_name

    anyio.run(check)


def test_a_stored_artifact_is_announced_to_the_clients_and_its_name_completes(served: str) -> None:
    async def check() -> None:
        changed = anyio.Event()
        seen: list[Any] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, ResourceListChangedNotification):
                seen.append(message)
                changed.set()

        async with Client(
            streamable_http_client(served), mode="legacy", message_handler=on_message
        ) as client:
            plain = await client.call_tool("execute_python", {"code": "1 + 1"})
            stored = await client.call_tool(
                "execute_python", {"code": 'store_artifact({"n": 1}, name="note")'}
            )
            assert stored.structured_content is not None and stored.structured_content["artifacts"]
            with anyio.fail_after(10):
                await changed.wait()
            assert plain.structured_content is not None and not plain.structured_content["artifacts"]
            listed = await client.list_resources()
            assert any(resource.name == "note" for resource in listed.resources)
            assert len(seen) == 1  # the program that stored nothing changed nothing
            # A host completing the artifact template's argument is offered the name.
            template = ResourceTemplateReference(type="ref/resource", uri="artifact://{id_or_name}")
            offered = await client.complete(template, {"name": "id_or_name", "value": "NO"})
            assert "note" in offered.completion.values
            elsewhere = await client.complete(template, {"name": "id_or_name", "value": "zz-nothing"})
            assert elsewhere.completion.values == []

    anyio.run(check)


def test_a_client_on_the_2026_protocol_answers_a_servers_question_in_a_round_of_its_own(served: str) -> None:
    """The upstream's question ends serve's call in an InputRequiredResult; the retry carries the answer."""
    asked: list[ElicitRequestParams] = []

    async def answer(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    async def check() -> CallToolResult:
        async with Client(streamable_http_client(served), elicitation_callback=answer) as client:
            assert client.protocol_version == "2026-07-28"
            with anyio.fail_after(30):
                return await client.call_tool("test_elicitation", {"message": "Who are you?"})

    result = anyio.run(check)
    assert not result.is_error, result.content
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert "action=accept" in text and "ada@example.com" in text  # what the upstream got back
    (params,) = asked
    assert (
        params.message
        == "The MCP server 'conformance/test_elicitation' (used by codemode) asks: Who are you?"
    )


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
