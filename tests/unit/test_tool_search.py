"""search_tools' ranking on a real, large tool list: the GitHub MCP server's 117 tools (tests/fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.typegen import ToolModel, build_tool_models
from codemode_kernel.typegen.search import DEFAULT_LIMIT, MAX_LIMIT, rank_tools, words

GITHUB = Path(__file__).resolve().parent.parent / "fixtures" / "github_tools.json"


@pytest.fixture(scope="module")
def github() -> list[ToolModel]:
    tools = json.loads(GITHUB.read_text(encoding="utf-8"))["tools"]
    return build_tool_models([ToolSpec.from_wire("github", tool) for tool in tools], check=ArgumentValidator)


def _names(models: list[ToolModel], query: str, limit: int = DEFAULT_LIMIT) -> list[str]:
    return [hit.model.function_name for hit in rank_tools(models, query, limit)]


def test_the_fixture_is_the_whole_github_list(github: list[ToolModel]) -> None:
    assert len(github) == 117
    assert {"list_pull_requests", "create_branch", "get_file_contents", "search_code"} <= {
        m.function_name for m in github
    }


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("list pull requests", "list_pull_requests"),
        ("create a branch", "create_branch"),
        ("get the contents of a file", "get_file_contents"),
        ("star a repository", "star_repository"),
        ("merge PR", "merge_pull_request"),
        ("search code", "search_code"),
        ("add a comment to an issue", "add_issue_comment"),
        ("release by tag", "get_release_by_tag"),
        ("list_commits", "list_commits"),
        ("listCommits", "list_commits"),
    ],
)
def test_the_tool_a_request_names_ranks_first(github: list[ToolModel], query: str, first: str) -> None:
    assert _names(github, query)[0] == first


def test_a_name_outweighs_an_argument_which_outweighs_the_description(github: list[ToolModel]) -> None:
    by_name = {hit.model.function_name: hit.score for hit in rank_tools(github, "branch", limit=MAX_LIMIT)}
    # "branch" in the name (create_branch), only an argument (delete_file's branch), only in the description
    # (list_commits: "SHA or Branch name").
    assert "branch" in words(_model(github, "create_branch").function_name)
    assert "branch" in {w for p in _model(github, "delete_file").params for w in words(p.name)}
    assert "branch" not in words(_model(github, "delete_file").spec.description)
    assert "branch" in words(_model(github, "list_commits").spec.description)
    assert by_name["create_branch"] > by_name["delete_file"] > by_name["list_commits"] > 0
    assert max(by_name, key=by_name.__getitem__) == "create_branch"


def _model(models: list[ToolModel], name: str) -> ToolModel:
    return next(m for m in models if m.function_name == name)


def test_words_split_snake_camel_and_plural() -> None:
    assert words("list_pull_requests") == ["list", "pull", "request"]
    assert words("perPage getFileContents") == ["per", "page", "get", "file", "content"]
    assert words("Branches, repositories") == ["branch", "repository"]


def test_the_limit_has_a_default_and_a_maximum(github: list[ToolModel]) -> None:
    assert len(_names(github, "repository")) == DEFAULT_LIMIT == 10
    assert len(_names(github, "repository", limit=3)) == 3
    assert len(rank_tools(github, "owner", limit=1000)) == MAX_LIMIT == 50
    with pytest.raises(ValueError, match="at least 1"):
        rank_tools(github, "x", limit=0)


def test_nothing_matching_is_an_empty_list_and_no_words_lists_by_name(github: list[ToolModel]) -> None:
    assert rank_tools(github, "kubernetes helm chart") == []
    assert _names(github, "", limit=3) == sorted(m.function_name for m in github)[:3]
    only_filler = _names(github, "get", limit=5)  # a query of filler words only: they are kept
    assert all("get" in words(name) for name in only_filler) and "actions_get" in only_filler
