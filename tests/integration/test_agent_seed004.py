"""Seed 004 in the agent: complete(), llm_json(strict=False), execute_python in classic mode with the
artifacts as tools, and the importable modules in the description. Real workers and the weather server;
the model is the scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import Agent, AgentResult
from codemode_kernel.config import CodeModeSettings, load_config
from codemode_kernel.executor import Executor
from codemode_kernel.llm import OpenAIChatModel, answer_request
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from tests.integration.test_agent import workspace_config

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolbox]:
    with Toolbox(load_config(workspace_config(tmp_path_factory.mktemp("ws")))) as tb:
        yield tb


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


def _ask(
    toolbox: Toolbox, server: ScriptedModelServer, request: str, settings: CodeModeSettings | None = None
) -> AgentResult:
    model = OpenAIChatModel("scripted", base_url=server.base_url, env={})

    async def llm(question: dict[str, Any]) -> str:
        return await answer_request(model, question)

    async def main() -> AgentResult:
        with Executor(toolbox, llm=llm, settings=settings) as executor:
            try:
                return await Agent(toolbox, executor, model, settings).run(request)
            finally:
                await model.aclose()

    return asyncio.run(main())


def test_complete_ends_the_run_with_the_programs_answer_and_data(
    toolbox: Toolbox, server: ScriptedModelServer
) -> None:
    program = (
        'w = get_weather(city="Lima", unit="celsius")\n'
        'complete(f"**Lima** is at {w.temperature} C", city="Lima", temperature=w.temperature)\n'
        'print("never printed")'
    )
    server.add(
        ScriptedTurn(
            tool_calls=[
                ScriptedToolCall("execute_python", {"code": program}),
                ScriptedToolCall("execute_python", {"code": "print('second')"}),
            ]
        )
    )
    result = _ask(toolbox, server, "How warm is Lima?")
    assert result.status == "answered" and len(server.requests) == 1  # no second model request
    assert result.answer.startswith("**Lima** is at ") and result.answer.endswith(" C")
    assert result.data["city"] == "Lima" and isinstance(result.data["temperature"], float)
    (execution,) = result.executions  # the second program of the turn was not run
    assert execution.completed and "never printed" not in execution.stdout


def test_llm_json_strict_false_returns_the_text_when_it_is_not_json(
    toolbox: Toolbox, server: ScriptedModelServer
) -> None:
    program = (
        'loose = llm_json("Rate Lima", strict=False)\n'
        "try:\n    llm_json('Rate Lima')\nexcept ValueError as e:\n    strict = str(e)[:40]\n"
        "print(repr(loose)); print(strict)"
    )
    server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        "Pretty warm, I would say",  # the first llm_json question
        "Warm.",  # the second
        "Done.",
    )
    result = _ask(toolbox, server, "Rate Lima")
    (execution,) = result.executions
    assert execution.stdout == "'Pretty warm, I would say'\nllm_json: the model's answer is not JSON\n"


READ_BACK = (
    'c = get_artifact("cities")["cities"]\n'
    'print(max(c, key=lambda x: get_weather(city=x, unit="celsius").temperature))'
)


def test_classic_mode_may_offer_execute_python_and_the_artifacts_as_tools(
    toolbox: Toolbox, server: ScriptedModelServer
) -> None:
    settings = CodeModeSettings(enabled=False, offer_in_classic=True)
    server.add(
        ScriptedTurn(
            tool_calls=[
                ScriptedToolCall("store_artifact", {"data": {"cities": ["Oslo", "Lima"]}, "name": "cities"})
            ]
        ),
        ScriptedTurn(
            tool_calls=[
                ScriptedToolCall(
                    "execute_python",
                    {"code": READ_BACK},
                )
            ]
        ),
        "Lima is warmer.",
    )
    result = _ask(toolbox, server, "Which is warmer?", settings)
    assert result.answer == "Lima is warmer." and not result.code_mode
    offered = [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert offered[0] == "execute_python" and {"get_weather", "read_file"} <= set(offered)
    assert offered[-3:] == ["store_artifact", "list_artifacts", "get_artifact"]
    assert "run one Python program with execute_python" in server.requests[0].body["messages"][0]["content"]
    stored, ran = (s.actions[0] for s in result.steps[:2])
    assert not stored.is_error and '"name": "cities"' in stored.text
    assert ran.execution is not None and ran.execution.stdout == "Lima\n"


def test_the_description_lists_the_modules_a_program_can_import(
    toolbox: Toolbox, server: ScriptedModelServer
) -> None:
    import importlib.util

    server.add("Nothing to run.")
    _ask(toolbox, server, "Hi", CodeModeSettings(preload=["colorsys", "json"]))
    description = server.requests[0].body["tools"][0]["function"]["description"]
    installed = [m for m in ("numpy", "pandas") if importlib.util.find_spec(m) is not None]
    assert installed, "the test environment has pandas (pyproject's test extra)"
    line = next(t for t in description.splitlines() if "these modules can be imported" in t)
    assert all(name in line for name in installed) and "colorsys" not in line
