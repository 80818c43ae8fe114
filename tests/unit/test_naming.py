"""Tool and property names to Python identifiers, and the collision report."""

from __future__ import annotations

import keyword

import pytest

from codemode_kernel.core.errors import ToolNameCollisionError
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.typegen import (
    assign_function_names,
    assign_parameter_names,
    function_name,
    parameter_name,
    type_name,
)

RESERVED = ("execute_python", "parallel", "search_tools", "tool_schema")


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("get_weather", "get_weather"),
        ("get-weather", "get_weather"),
        ("files.read", "files_read"),
        ("getWeather", "get_weather"),
        ("GetWeather", "get_weather"),
        ("get_Weather", "get_weather"),
        ("getHTTPResponse", "get_http_response"),
        ("HTTPServer", "http_server"),
        ("get2Items", "get2_items"),
        ("getV2", "get_v2"),
        ("API_v2.list-Items", "api_v2_list_items"),
        ("ALLCAPS", "allcaps"),
        ("search issues", "search_issues"),
        ("a--b__c", "a_b_c"),
        ("__init__", "init"),
        ("café_au_lait", "cafe_au_lait"),  # accents transliterated
        ("İstanbul", "istanbul"),  # lower-casing must not leave a combining mark behind
        ("ﬁle", "file"),  # NFKD: the ligature becomes two letters
        ("天气", "天气"),  # letters without case are valid identifiers and stay
        ("x\ud800y", "x_y"),  # a lone surrogate is dropped, not a crash
        ("3d_render", "t_3d_render"),
        ("①st", "t_1st"),
        ("class", "class_"),
        ("from", "from_"),
        ("list", "list_"),  # builtins are protected: a tool must not shadow them in a notebook
        ("print", "print_"),
        ("match", "match"),  # soft keywords are legal names
        ("None", "none"),
    ],
)
def test_function_name(tool: str, expected: str) -> None:
    assert function_name(tool) == expected


@pytest.mark.parametrize("tool", ["", "🌤️", "!!!", "---", "\u200b"])
def test_function_name_never_empty(tool: str) -> None:
    name = function_name(tool)
    assert name.startswith("tool_")
    assert name.isidentifier()
    assert function_name(tool) == name  # stable: a hash, not a counter


def test_function_name_is_always_an_identifier() -> None:
    for tool in ["a b", "1", "-", "é", "x.y.z", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ǅemal", "ＡＢＣ", "a\u0301"]:
        name = function_name(tool)
        assert name.isidentifier(), tool
        assert not keyword.iskeyword(name), tool


@pytest.mark.parametrize(
    ("prefix", "tool", "expected"),
    [
        ("gh_", "getIssue", "gh_get_issue"),
        ("gh", "getIssue", "gh_get_issue"),
        ("GitHub", "list", "git_hub_list"),
        ("gh_", "3d", "gh_3d"),
        ("gh_", "🌤️", "gh_tool_aeadf907"),
    ],
)
def test_function_name_with_prefix(prefix: str, tool: str, expected: str) -> None:
    assert function_name(tool, prefix) == expected


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ("city", "city"),
        ("userId", "userId"),  # identifiers keep the wire name the tool documents
        ("_meta", "_meta"),
        ("user-id", "user_id"),
        ("a b", "a_b"),
        ("class", "class_"),
        ("from", "from_"),
        ("2fa", "p_2fa"),
        ("ﬁle", "file"),  # Python would read the ligature as "file" anyway
        ("", "arg1"),
        ("🌤️", "arg1"),
    ],
)
def test_parameter_name(prop: str, expected: str) -> None:
    assert parameter_name(prop) == expected


def test_parameter_names_are_unique_and_identifiers_keep_theirs() -> None:
    names = assign_parameter_names(["user-id", "user_id", "class", "class_", "", "🌤️"])
    assert names == {
        "user-id": "user_id_2",
        "user_id": "user_id",
        "class": "class__2",
        "class_": "class_",
        "": "arg5",
        "🌤️": "arg6",
    }
    assert len(set(names.values())) == len(names)


def test_parameter_names_avoid_taken() -> None:
    assert assign_parameter_names(["kwargs"], taken={"kwargs"}) == {"kwargs": "kwargs_2"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("get_weather", "GetWeather"),
        ("t_3d_render", "T3dRender"),
        ("2fa", "T2fa"),
        ("", "Type"),
        ("天气", "天气"),
    ],
)
def test_type_name(name: str, expected: str) -> None:
    assert type_name(name) == expected


def _spec(server: str, name: str) -> ToolSpec:
    return ToolSpec(server=server, name=name)


def test_assign_function_names_keys_by_server_and_tool() -> None:
    names = assign_function_names(
        [_spec("github", "getIssue"), _spec("weather", "get-weather"), _spec("gitlab", "getIssue")],
        prefixes={"github": "gh_", "gitlab": "gl_"},
        reserved=RESERVED,
    )
    assert names == {
        ("github", "getIssue"): "gh_get_issue",
        ("weather", "get-weather"): "get_weather",
        ("gitlab", "getIssue"): "gl_get_issue",
    }


def test_collision_lists_every_collision_with_both_names_and_the_fix() -> None:
    specs = [
        _spec("weather", "get_weather"),
        _spec("weather", "get-Weather"),
        _spec("other", "getWeather"),
        _spec("files", "read"),
        _spec("docs", "read"),
        _spec("fine", "unique_tool"),
    ]
    with pytest.raises(ToolNameCollisionError) as info:
        assign_function_names(specs, reserved=RESERVED)
    message = str(info.value)
    for qualified in [
        "weather/get_weather",
        "weather/get-Weather",
        "other/getWeather",
        "files/read",
        "docs/read",
    ]:
        assert qualified in message
        assert qualified in info.value.tools
    assert "fine/unique_tool" not in message
    assert "2 tool name collisions" in message
    assert "get_weather()" in message and "read()" in message
    assert "excludedTools" in message
    assert "prefix" in message


def test_collision_across_servers_is_fixed_by_a_prefix() -> None:
    specs = [_spec("files", "read"), _spec("docs", "read")]
    with pytest.raises(ToolNameCollisionError, match=r"files/read and docs/read"):
        assign_function_names(specs)
    names = assign_function_names(specs, prefixes={"docs": "docs_"})
    assert names[("docs", "read")] == "docs_read"


def test_a_reserved_name_gets_a_trailing_underscore_like_a_keyword() -> None:
    names = assign_function_names(
        [_spec("runner", "execute-python"), _spec("exec", "python"), _spec("x", "parallel")],
        prefixes={"exec": "exec_"},
        reserved={*RESERVED, "parallel"},
    )
    assert names == {
        ("runner", "execute-python"): "execute_python_",
        ("exec", "python"): "exec_python",
        ("x", "parallel"): "parallel_",
    }
