"""Reading a model's tool selection leniently, on the GitHub server's real tool list (tests/fixtures)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from codemode_kernel.agent import AgentOptions, build_toolset, compact_listing, parse_selection
from codemode_kernel.agent.selection import select_tools
from codemode_kernel.config import CodeModeSettings
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.llm import OpenAIChatModel
from codemode_kernel.llm.scripted import ScriptedModelServer
from codemode_kernel.typegen import ToolModel, build_tool_models

GITHUB = Path(__file__).resolve().parent.parent / "fixtures" / "github_tools.json"
SPECS = [ToolSpec.from_wire("github", t) for t in json.loads(GITHUB.read_text(encoding="utf-8"))["tools"]]


@pytest.fixture(scope="module")
def github() -> list[ToolModel]:
    return build_tool_models(SPECS, check=ArgumentValidator)


@pytest.mark.parametrize(
    ("answer", "picked", "ignored"),
    [
        ('["create_branch", "push_files"]', ["create_branch", "push_files"], []),
        ('```json\n["create_branch"]\n```', ["create_branch"], []),
        ('Here you go: ["list_commits", "nope"] hope it helps', ["list_commits"], ["nope"]),
        ('{"tools": ["get_me", "get_me"]}', ["get_me"], []),
        ('[{"name": "github/get_commit"}, "github.search_code"]', ["get_commit", "search_code"], []),
        ("[]", [], []),
        ("You need create_branch, then push_files.", ["create_branch", "push_files"], []),
        (
            "- `get_file_contents`\n- `create_or_update_file`",
            ["get_file_contents", "create_or_update_file"],
            [],
        ),
    ],
)
def test_answers_in_any_shape_give_the_tools_they_name(
    github: list[ToolModel], answer: str, picked: list[str], ignored: list[str]
) -> None:
    assert parse_selection(answer, github)[:2] == (picked, ignored)


@pytest.mark.parametrize("answer", ["", "I cannot tell.", '["kubectl_apply"]', "{not json"])
def test_an_answer_naming_no_tool_is_none(github: list[ToolModel], answer: str) -> None:
    parsed = parse_selection(answer, github)
    assert parsed.picked is None and parsed.problem == "the answer named no tool of the list"


@pytest.fixture(scope="module")
def web() -> list[ToolModel]:
    """Tools named like ordinary words (``search``, ``fetch``) beside one named like a function."""
    names = ["search", "fetch", "read", "web_scrape"]
    return build_tool_models(
        [ToolSpec.from_wire("web", {"name": n, "inputSchema": {}}) for n in names], check=ArgumentValidator
    )


@pytest.mark.parametrize(
    ("answer", "picked"),
    [
        ("I would search the docs, then fetch and read the page.", None),  # plain words: no pick
        ("Search the web first. Then fetch.", None),
        ("Use `fetch`, then web_scrape.", ["fetch", "web_scrape"]),
        ("Call 'search' and \"read\"; you may not need fetch.", ["search", "read"]),
        ("web/fetch, then web.search.", ["fetch", "search"]),
    ],
)
def test_words_in_prose_count_only_when_they_read_as_tool_names(
    web: list[ToolModel], answer: str, picked: list[str] | None
) -> None:
    assert parse_selection(answer, web).picked == picked


def test_an_answer_reciting_the_listing_is_garbled_not_a_pick(github: list[ToolModel]) -> None:
    recital = "Here are the tools:\n" + compact_listing(github)
    parsed = parse_selection(recital, github, limit=12)
    assert parsed.picked is None
    assert parsed.problem is not None and "named 117 tools" in parsed.problem and "12" in parsed.problem
    # Twelve names in prose are still a pick; a JSON array of more keeps its first twelve (select_tools).
    twelve = ", ".join(m.function_name for m in github[:12])
    assert parse_selection(f"You need {twelve}.", github, limit=12).picked == [
        m.function_name for m in github[:12]
    ]
    listed = json.dumps([m.function_name for m in github[:20]])
    assert parse_selection(listed, github, limit=12).picked == [m.function_name for m in github[:20]]


def test_a_recital_is_recorded_as_a_fallback(github: list[ToolModel]) -> None:
    """select_tools against a real (scripted) OpenAI-compatible server answering with the listing."""
    with ScriptedModelServer(["Sure. The tools are:\n" + compact_listing(github)]) as server:
        model = OpenAIChatModel(
            "scripted", ref="picker", base_url=server.base_url, env={"OPENAI_API_KEY": "k"}
        )
        selection = asyncio.run(select_tools(model, "List my pull requests.", github, AgentOptions()))
    assert not selection.used and selection.tools == []
    assert selection.fallback is not None and "named 117 tools" in selection.fallback
    assert selection.answer.startswith("Sure. The tools are:")


def test_selected_tools_are_full_stubs_and_the_rest_compact(github: list[ToolModel]) -> None:
    plain = build_toolset(github, SPECS, CodeModeSettings(), AgentOptions())
    picked = build_toolset(github, SPECS, CodeModeSettings(), AgentOptions(), selected=["create_branch"])
    assert plain.compact and plain.selected == () and "def " not in plain.definitions[0].description
    assert picked.compact and picked.selected == ("create_branch",)
    described = picked.definitions[0].description
    assert "def create_branch(" in described and described.count("\ndef ") == 1
    assert "\n  create_branch(" not in described and "\n  push_files(" in described
    forced = build_toolset(
        github, SPECS, CodeModeSettings(), AgentOptions(listing="compact"), selected=["get_me"]
    )
    assert forced.selected == ()  # a listing forced compact stays plain
