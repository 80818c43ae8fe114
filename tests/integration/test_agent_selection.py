"""Tool pre-selection on a real large tool list: the GitHub MCP server's 117 tools (tests/fixtures).

The GitHub tools are the caller's own tools (``Agent.run(tools=...)``, answered here), beside the weather
and workspace servers; with that many tools the execute_python description turns compact, so the agent
first asks which tools the request needs. The model is the scripted OpenAI-compatible server: every
assertion reads the HTTP requests it received (the selection request, then execute_python's description),
and the programs run in real workers.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import EXECUTE_PYTHON, Agent, AgentEvent, AgentOptions, AgentResult, ToolsSelected
from codemode_kernel.config import load_config
from codemode_kernel.core.errors import ConfigError
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.executor import Executor
from codemode_kernel.executor.owned import OwnedTool, call_result
from codemode_kernel.llm import OpenAIChatModel, open_model
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedRequest, ScriptedToolCall, ScriptedTurn
from tests.integration.test_agent import workspace_config

pytestmark = pytest.mark.integration

GITHUB = Path(__file__).resolve().parent.parent / "fixtures" / "github_tools.json"
REQUEST = "List the open pull requests of octo/hello and tell me their titles."
PROGRAM = (
    'prs = list_pull_requests(owner="octo", repo="hello", state="open")\nprint([p["title"] for p in prs])'
)


async def _answer(arguments: dict[str, Any]) -> dict[str, Any]:
    return call_result(json.dumps([{"number": 7, "title": f"Fix the {arguments['repo']} build"}]))


def github_tools() -> list[OwnedTool]:
    tools = json.loads(GITHUB.read_text(encoding="utf-8"))["tools"]
    return [OwnedTool(ToolSpec.from_wire("github", tool), _answer) for tool in tools]


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(models=("scripted", "cheap")) as scripted:
        yield scripted


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory, server: ScriptedModelServer) -> Path:
    models = [
        {"ref": "main", "provider": "openai", "model": "scripted", "baseUrl": server.base_url},
        {
            "ref": "main-with-picker",
            "provider": "openai",
            "model": "scripted",
            "baseUrl": server.base_url,
            "codeMode": {"selectModel": "picker"},
        },
        {"ref": "picker", "provider": "openai", "model": "cheap", "baseUrl": server.base_url},
    ]
    return workspace_config(tmp_path_factory.mktemp("ws"), models=models)


@pytest.fixture(scope="module")
def executor(config_file: Path) -> Iterator[Executor]:
    with Toolbox(load_config(config_file)) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


def _run(agent: Agent, request: str = REQUEST) -> tuple[AgentResult, list[AgentEvent]]:
    events: list[AgentEvent] = []

    async def main() -> AgentResult:
        try:
            return await agent.run(request, tools=github_tools(), on_event=events.append)
        finally:
            for model in {id(agent.model): agent.model, id(agent.select_model): agent.select_model}.values():
                await model.aclose()  # type: ignore[attr-defined]

    return asyncio.run(main()), events


def _agent(executor: Executor, ref: str = "main", **options: Any) -> Agent:
    config = executor.toolbox.config
    model = open_model(config, ref, env={})
    return Agent(executor.toolbox, executor, model, options=AgentOptions(**options))


def _description(request: ScriptedRequest) -> str:
    (execute,) = [t for t in request.body["tools"] if t["function"]["name"] == EXECUTE_PYTHON]
    return str(execute["function"]["description"])


def _new_requests(server: ScriptedModelServer, before: int) -> list[ScriptedRequest]:
    return [r for r in server.requests[before:] if r.path.endswith("/chat/completions")]


def test_the_picked_tools_get_full_stubs_and_the_rest_stay_compact(
    executor: Executor, server: ScriptedModelServer
) -> None:
    before = len(server.requests)
    server.add(
        '```json\n["list_pull_requests", "pull_request_read", "get_pull_request"]\n```',
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": PROGRAM})]),
        "One open pull request: Fix the hello build.",
    )
    result, events = _run(_agent(executor))
    assert result.status == "answered" and result.answer == "One open pull request: Fix the hello build."

    selecting, coding, answering = _new_requests(server, before)
    # The selection request: the request and every tool compactly, no tools offered, the agent's model.
    assert selecting.model == "scripted" and not selecting.body.get("tools")
    asked = selecting.body["messages"][-1]["content"]
    assert REQUEST in asked and "JSON array" in asked
    assert "list_pull_requests(owner: str, repo: str" in asked and "create_branch(branch: str" in asked
    assert "get_weather(" in asked  # the servers' tools are in the list too
    # The next request: full stubs for the picked tools only, the compact listing for the others.
    described = _description(coding)
    assert "def list_pull_requests(" in described and "def pull_request_read(" in described
    assert "def create_branch(" not in described and "def get_weather(" not in described
    assert "\n  create_branch(branch: str, owner: str, repo: str" in described
    assert "The 2 tools picked for this request" in described
    assert result.selection is not None and result.selection.offered > 117  # GitHub's and the servers'
    assert f"The other {result.selection.offered - 2} tools" in described
    assert _description(answering) == described  # one toolset for the whole run
    assert coding.tool_results == [] and answering.tool_results[0].startswith("['Fix the hello build']\n")

    selection = result.selection
    assert selection is not None and selection.used and selection.model == "main"
    assert selection.tools == ["list_pull_requests", "pull_request_read"]
    assert selection.ignored == ["get_pull_request"]  # no tool of that name: ignored
    assert result.round_trips == 3 and result.usage.input_tokens >= selection.usage.input_tokens > 0
    assert [e for e in events if isinstance(e, ToolsSelected)] == [ToolsSelected(selection)]
    assert isinstance(events[0], ToolsSelected)  # before the first step


def test_select_model_is_asked_instead_of_the_agents_model(
    executor: Executor, server: ScriptedModelServer
) -> None:
    before = len(server.requests)
    server.add(
        "You will need list_pull_requests, and maybe search_pull_requests.",  # names in prose
        ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": PROGRAM})]),
        "Done.",
    )
    agent = _agent(executor, "main-with-picker")
    assert isinstance(agent.select_model, OpenAIChatModel) and agent.select_model.ref == "picker"
    result, _ = _run(agent)
    selecting, coding, _answering = _new_requests(server, before)
    assert selecting.model == "cheap" and coding.model == "scripted"
    assert result.selection is not None and result.selection.model == "picker"
    assert result.selection.tools == ["list_pull_requests", "search_pull_requests"]
    described = _description(coding)
    assert "def list_pull_requests(" in described and "def search_pull_requests(" in described


def test_a_garbled_selection_falls_back_to_the_compact_listing(
    executor: Executor, server: ScriptedModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    before = len(server.requests)
    server.add("Sure! Let me think about which GitHub features matter here.", "No tools were needed.")
    with caplog.at_level(logging.WARNING, logger="codemode_kernel.agent.selection"):
        result, events = _run(_agent(executor))
    assert result.status == "answered" and result.answer == "No tools were needed."
    _selecting, answering = _new_requests(server, before)
    described = _description(answering)
    assert "def " not in described.split("Rules:")[1]  # no stubs at all: the plain compact listing
    selection = result.selection
    assert selection is not None and f"{selection.offered} tools, by server" in described
    assert selection is not None and not selection.used and "named no tool" in (selection.fallback or "")
    assert selection.answer.startswith("Sure! Let me think")
    assert any(isinstance(e, ToolsSelected) and not e.selection.used for e in events)
    assert "named no tool" in caplog.text and "compact listing" in caplog.text


def test_a_failed_selection_request_does_not_fail_the_run(
    executor: Executor, server: ScriptedModelServer
) -> None:
    before = len(server.requests)
    server.add(ScriptedTurn(status=400, error="context length exceeded"), "Answered anyway.")
    result, _ = _run(_agent(executor))
    assert result.status == "answered" and result.answer == "Answered anyway."
    assert result.selection is not None and "request failed" in (result.selection.fallback or "")
    assert "context length exceeded" in (result.selection.fallback or "")
    assert len(_new_requests(server, before)) == 2


def test_selection_off_or_few_tools_sends_no_selection_request(
    executor: Executor, server: ScriptedModelServer
) -> None:
    before = len(server.requests)
    server.add("Off.")
    result, _ = _run(_agent(executor, select_tools=False))
    assert result.selection is None and result.round_trips == 1
    assert "def " not in _description(_new_requests(server, before)[0]).split("Rules:")[1]

    before = len(server.requests)
    server.add("Few.")
    agent = _agent(executor)

    async def main() -> AgentResult:
        try:
            return await agent.run("Weather?")  # only the servers' three tools: full stubs, no selection
        finally:
            await agent.model.aclose()  # type: ignore[attr-defined]

    result = asyncio.run(main())
    (only,) = _new_requests(server, before)
    assert result.selection is None and "def get_weather(" in _description(only)


def test_a_select_model_naming_no_model_is_a_config_error(tmp_path: Path) -> None:
    file = workspace_config(
        tmp_path, defaults={"codeMode": {"selectModel": "tiny"}}, models=[{"ref": "main"}]
    )
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    message = str(caught.value)
    assert (
        "defaults.codeMode.selectModel" in message and '"tiny"' in message and 'use one of "main"' in message
    )


def test_search_tools_in_a_program_ranks_the_github_list(executor: Executor) -> None:
    code = (
        'print([h["name"] for h in search_tools("list pull requests", limit=3)])\n'
        'print(search_tools("create a branch")[0]["signature"])\n'
        'len(search_tools("repository", limit=500))'
    )
    result = executor.run(code, timeout=60, tools=github_tools())
    assert result.status == "ok", result.error
    first, second = result.stdout.splitlines()
    assert first.startswith("['list_pull_requests', ")
    assert second.startswith("create_branch(branch: str, owner: str, repo: str")
    assert result.value == {"kind": "json", "data": 50}  # the maximum, whatever is asked
