"""Config files that are valid JSON, or nearly, but that a lenient reader would misread (issue 9).

Each case is a real file on disk loaded with ``load_config``: what a user wrote, and what they are told.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.config import Config, load_config
from codemode_kernel.core.errors import ConfigError

CONFIG_MAX_DEPTH = 100


def load_text(tmp_path: Path, text: str | bytes, name: str = "codemode.json") -> Config:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return load_config(name, cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")


def error_text(tmp_path: Path, text: str | bytes, name: str = "codemode.json") -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_text(tmp_path, text, name)
    return info.value


# -- nesting ------------------------------------------------------------------------------------------


def test_deeply_nested_config_is_a_config_error_with_the_limit(tmp_path: Path) -> None:
    depth = 100_000
    text = '{"mcpServers": {"a": {"command": "x", "args": ' + "[" * depth + "]" * depth + "}}}"
    exc = error_text(tmp_path, text)
    assert exc.file == "codemode.json"
    assert "nested too deeply" in exc.reason and f"more than {CONFIG_MAX_DEPTH} levels" in exc.reason
    assert "line 1, column" in exc.reason
    assert exc.fix is not None and str(CONFIG_MAX_DEPTH) in exc.fix


def test_nesting_at_the_limit_still_loads_and_brackets_in_strings_do_not_count(tmp_path: Path) -> None:
    # The file itself is 4 levels deep down to "args"'s list; fill the rest up to exactly the limit.
    inner = CONFIG_MAX_DEPTH - 4
    text = (
        '{"mcpServers": {"a": {"command": "x", "args": ["[[[[{{{{", "' + "[" * 500 + '"], '
        '"disabled": true, "x-deep": ' + "[" * inner + "]" * inner + "}}}"
    )
    config = load_text(tmp_path, text)
    assert config.servers["a"].args == ["[[[[{{{{", "[" * 500]


def test_deeply_nested_user_config_names_the_user_file(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.json").write_text('{"models": ' + "[" * 5000 + "]" * 5000 + "}")
    (tmp_path / "claude.json").write_text('{"mcpServers": {}}')
    with pytest.raises(ConfigError) as info:
        load_config("claude.json", cwd=tmp_path, env={}, user_config_dir=user)
    assert info.value.file == "user/config.json"  # shown relative to the working directory
    assert "nested too deeply" in info.value.reason


# -- null instead of the servers object ----------------------------------------------------------------


@pytest.mark.parametrize(("key", "name"), [("mcpServers", ".mcp.json"), ("servers", ".vscode/mcp.json")])
def test_null_servers_object_is_an_error_with_the_fix(tmp_path: Path, key: str, name: str) -> None:
    exc = error_text(tmp_path, json.dumps({key: None}), name=name)
    assert exc.file == name and exc.path == key
    assert "null" in exc.reason
    assert exc.fix is not None and f'"{key}": {{}}' in exc.fix


def test_null_workspace_is_an_error(tmp_path: Path) -> None:
    exc = error_text(tmp_path, '{"workspace": null}')
    assert exc.path == "workspace" and "null" in exc.reason


# -- duplicate keys ------------------------------------------------------------------------------------


def test_duplicate_server_name_is_an_error_naming_the_server(tmp_path: Path) -> None:
    text = (
        '{"mcpServers": {\n "gh": {"command": "old"},\n "web": {"url": "https://h.example/mcp"},\n'
        ' "gh": {"command": "new"}\n}}'
    )
    exc = error_text(tmp_path, text, name=".mcp.json")
    assert exc.file == ".mcp.json" and exc.path == "mcpServers.gh"
    assert "more than once" in exc.reason and "line 4" in exc.reason
    assert exc.fix is not None and "own name" in exc.fix


def test_servers_object_written_twice_is_an_error(tmp_path: Path) -> None:
    text = '{"mcpServers": {"a": {"command": "x"}}, "mcpServers": {"b": {"command": "y"}}}'
    exc = error_text(tmp_path, text, name=".mcp.json")
    assert exc.path == "mcpServers" and "more than once" in exc.reason
    assert exc.fix is not None and "one" in exc.fix


def test_duplicate_key_inside_an_entry_is_a_warning_and_the_last_wins(tmp_path: Path) -> None:
    text = (
        '{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "1", "TOKEN": "2"},\n'
        ' "args": [], "args": ["b"]}},\n'
        ' "defaults": {"codeMode": {"timeout": 10, "timeout": 20}}}'
    )
    config = load_text(tmp_path, text)
    assert config.servers["a"].env == {"TOKEN": "2"} and config.servers["a"].args == ["b"]
    warnings = "\n".join(config.warnings)
    for path in ("mcpServers.a.env.TOKEN", "mcpServers.a.args", "defaults.codeMode.timeout"):
        assert f"codemode.json: {path}: written more than once" in warnings, warnings
    assert "the last one is used" in warnings


def test_duplicate_keys_outside_the_servers_of_another_tools_file_are_not_ours(tmp_path: Path) -> None:
    text = '{"inputs": [{"id": "a", "id": "b"}], "servers": {"s": {"url": "https://h.example/mcp"}}}'
    config = load_text(tmp_path, text, name=".vscode/mcp.json")
    assert config.warnings == []


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}}',  # a bracket closing nothing
        '"a": 1',  # a key outside any object
        '[1, "a": 2]',  # a key inside a list
        ']]{"a": 1, "a": 2',  # unbalanced both ways
        '{"a\\x": 1, "a\\x": 2}',  # an escape JSON does not have, written twice
        '{"a": "unterminated}',
    ],
)
def test_broken_json_is_a_syntax_error_whatever_the_key_scan_met(tmp_path: Path, text: str) -> None:
    # Nesting and repeated keys are found by one scan before the parser runs: it must not trip on text
    # the parser then rejects with the position.
    exc = error_text(tmp_path, text)
    assert exc.file == "codemode.json" and "not valid JSON at line 1, column" in exc.reason, exc


# -- numbers that are not numbers ------------------------------------------------------------------------


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "NaN", "Infinity"])
def test_server_timeout_must_be_a_finite_number(tmp_path: Path, literal: str) -> None:
    exc = error_text(tmp_path, '{"mcpServers": {"a": {"command": "x", "timeout": ' + literal + "}}}")
    assert exc.path == "mcpServers.a.timeout"
    assert "finite number" in exc.reason
    assert exc.fix is not None and "30" in exc.fix


@pytest.mark.parametrize("literal", ["1e400", "NaN"])
def test_code_mode_timeout_must_be_a_finite_number(tmp_path: Path, literal: str) -> None:
    exc = error_text(tmp_path, '{"defaults": {"codeMode": {"grace": ' + literal + "}}}")
    assert exc.path == "defaults.codeMode.grace" and "finite number" in exc.reason


# -- environment variable names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shown"),
    [("A=B", '"A=B"'), ("", '""'), ("NUL\u0000", '"NUL\\u0000"')],
)
def test_env_name_the_system_cannot_pass_is_refused_at_load(tmp_path: Path, name: str, shown: str) -> None:
    entry = {"command": "x", "env": {"GOOD": "1", name: "secret"}}
    exc = error_text(tmp_path, json.dumps({"mcpServers": {"github": entry}}), name=".mcp.json")
    assert exc.file == ".mcp.json"
    assert exc.path is not None and exc.path.startswith("mcpServers.github.env")
    assert shown in str(exc)
    assert "environment variable name" in exc.reason
    assert "secret" not in str(exc)


def test_env_name_is_checked_on_a_disabled_server_too(tmp_path: Path) -> None:
    entry = {"command": "x", "disabled": True, "env": {"A=B": "1"}}
    exc = error_text(tmp_path, json.dumps({"mcpServers": {"s": entry}}))
    assert exc.path is not None and exc.path.startswith("mcpServers.s.env")


def test_env_value_with_a_nul_byte_is_refused_without_showing_it(tmp_path: Path) -> None:
    entry = {"command": "x", "env": {"TOKEN": "sec\u0000ret"}}
    exc = error_text(tmp_path, json.dumps({"mcpServers": {"s": entry}}))
    assert exc.path == "mcpServers.s.env.TOKEN" and "NUL" in exc.reason
    assert "sec" not in str(exc)


def test_env_name_a_shell_cannot_use_is_a_warning(tmp_path: Path) -> None:
    entry = {"command": "x", "env": {"MY TOKEN": "1", "OK_NAME": "2"}}
    config = load_text(tmp_path, json.dumps({"mcpServers": {"s": entry}}))
    assert config.servers["s"].env == {"MY TOKEN": "1", "OK_NAME": "2"}
    assert len(config.warnings) == 1
    assert 'codemode.json: mcpServers.s.env["MY TOKEN"]:' in config.warnings[0]


def test_env_file_line_with_a_nul_byte_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "secrets.env").write_bytes(b"GOOD=1\nTOKEN=sec\x00ret\n")
    entry = {"command": "x", "envFile": "secrets.env"}
    exc = error_text(tmp_path, json.dumps({"mcpServers": {"s": entry}}))
    assert exc.path == "mcpServers.s.envFile"
    assert "secrets.env, line 2" in exc.reason and "NUL" in exc.reason
    assert "sec" not in exc.reason.replace("secrets.env", "")
