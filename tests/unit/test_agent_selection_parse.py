"""Reading a model's tool selection leniently, on the GitHub server's real tool list (tests/fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.agent import AgentOptions, build_toolset, parse_selection
from codemode_kernel.config import CodeModeSettings
from codemode_kernel.toolspec import ToolSpec
from codemode_kernel.typegen import ToolModel, build_tool_models

GITHUB = Path(__file__).resolve().parent.parent / "fixtures" / "github_tools.json"
SPECS = [ToolSpec.from_wire("github", t) for t in json.loads(GITHUB.read_text(encoding="utf-8"))["tools"]]


@pytest.fixture(scope="module")
def github() -> list[ToolModel]:
    return build_tool_models(SPECS)


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
    assert parse_selection(answer, github) == (picked, ignored)


@pytest.mark.parametrize("answer", ["", "I cannot tell.", '["kubectl_apply"]', "{not json"])
def test_an_answer_naming_no_tool_is_none(github: list[ToolModel], answer: str) -> None:
    assert parse_selection(answer, github)[0] is None


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
