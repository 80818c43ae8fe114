"""Every mistake in a config file is a ConfigError naming the file, the JSON path and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel.config import Config, load_config
from codemode_kernel.core.errors import ConfigError


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load(tmp_path: Path, data: Any, name: str = "codemode.json", env: dict[str, str] | None = None) -> Config:
    write(tmp_path / name, data)
    return load_config(name, cwd=tmp_path, env=env or {}, user_config_dir=tmp_path / "user")


def error(
    tmp_path: Path, data: Any, name: str = "codemode.json", env: dict[str, str] | None = None
) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, data, name, env)
    return info.value


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


# (file content, JSON path, a piece of the message, a piece of the fix)
CASES: dict[str, tuple[Any, str | None, str, str]] = {
    "unknown type": (
        servers(a={"type": "websocket", "url": "wss://x"}),
        "mcpServers.a.type",
        'unknown value "websocket"',
        '"stdio"',
    ),
    "missing command": (servers(a={"args": ["x"]}), "mcpServers.a.command", "missing", 'add "command"'),
    "missing url": (servers(a={"type": "sse"}), "mcpServers.a.url", "missing", 'add "url"'),
    "both command and url": (
        servers(a={"command": "x", "url": "https://h.example/mcp"}),
        "mcpServers.a",
        'has both "command" and "url"',
        "not both",
    ),
    "args not a list": (
        servers(a={"command": "x", "args": "--port 8080"}),
        "mcpServers.a.args",
        "must be a list (JSON array), not a string",
        '"args": ["--port", "8080"]',
    ),
    "args item not a string": (
        servers(a={"command": "x", "args": ["--port", 8080]}),
        "mcpServers.a.args[1]",
        "must be a string, not a number",
        "JSON array of strings",
    ),
    "env value not a string": (
        servers(a={"command": "x", "env": {"PORT": 8080}}),
        "mcpServers.a.env.PORT",
        "must be a string, not a number",
        "double quotes",
    ),
    "env not an object": (
        servers(a={"command": "x", "env": ["A=1"]}),
        "mcpServers.a.env",
        "must be an object, not a list",
        '{"KEY": "value"}',
    ),
    "timeout negative": (
        servers(a={"command": "x", "timeout": -5}),
        "mcpServers.a.timeout",
        "must be greater than 0 (got -5)",
        "greater than 0",
    ),
    "timeout as a string": (
        servers(a={"command": "x", "timeout": "30"}),
        "mcpServers.a.timeout",
        "must be a number, not a string",
        "without quotes",
    ),
    "disabled as a string": (
        servers(a={"command": "x", "disabled": "yes"}),
        "mcpServers.a.disabled",
        "must be true or false",
        "without quotes",
    ),
    "empty command": (
        servers(a={"command": ""}),
        "mcpServers.a.command",
        "must not be empty",
        "write a value",
    ),
    "command expands to nothing": (
        servers(a={"command": "${CMD:-}"}),
        "mcpServers.a.command",
        "empty once its variables are expanded",
        "set the variable",
    ),
    "headers on a stdio server": (
        servers(a={"command": "x", "headers": {"A": "b"}}),
        "mcpServers.a.headers",
        'only applies to "http" and "sse" servers',
        'remove "headers"',
    ),
    "args on a remote server": (
        servers(a={"url": "https://h.example/mcp", "args": ["x"]}),
        "mcpServers.a.args",
        'only applies to stdio servers (this one is "http")',
        'remove "args"',
    ),
    "url without scheme": (
        servers(a={"url": "localhost:8000/mcp"}),
        "mcpServers.a.url",
        "must start with http:// or https://",
        "https://example.com/mcp",
    ),
    "unknown protocol": (
        servers(a={"command": "x", "protocol": "2027-01-01"}),
        "mcpServers.a.protocol",
        'unknown protocol "2027-01-01"',
        '"legacy", "auto" or one of "2026-07-28"',
    ),
    "handshake-era protocol": (
        servers(a={"command": "x", "protocol": "2025-06-18"}),
        "mcpServers.a.protocol",
        "initialize handshake",
        'write "legacy"',
    ),
    "server entry not an object": (
        servers(a="npx server"),
        "mcpServers.a",
        "must be an object, not a string",
        '{"command": "...", "args": [...]}',
    ),
    "server name with a slash": (
        servers(**{"a/b": {"command": "x"}}),
        'mcpServers["a/b"]',
        'without "/"',
        "rename the server",
    ),
    "mcpServers not an object": (
        {"mcpServers": [{"command": "x"}]},
        "mcpServers",
        "must be an object, not a list",
        "maps each server name to its entry",
    ),
    "both servers keys": (
        {"mcpServers": {}, "servers": {}},
        "servers",
        'has both "mcpServers" and "servers"',
        "keep one",
    ),
    "codeMode timeout too long": (
        {"defaults": {"codeMode": {"timeout": 301}}},
        "defaults.codeMode.timeout",
        "301 seconds is above maxTimeout (300)",
        'lower "timeout" to 300 or less, or raise "maxTimeout" to 301 or more (up to 3600)',
    ),
    "codeMode maxTimeout too long": (
        {"defaults": {"codeMode": {"maxTimeout": 3601}}},
        "defaults.codeMode.maxTimeout",
        "must be at most 3600 (got 3601)",
        "at most 3600",
    ),
    "codeMode timeout too short": (
        {"defaults": {"codeMode": {"timeout": 0.5}}},
        "defaults.codeMode.timeout",
        "must be at least 1 (got 0.5)",
        "at least 1",
    ),
    "codeMode not an object": (
        {"defaults": {"codeMode": True}},
        "defaults.codeMode",
        "must be an object, not true/false",
        "JSON object",
    ),
    "excludedTools entry malformed": (
        {"defaults": {"codeMode": {"excludedTools": ["ok", "a/b/c"]}}},
        "defaults.codeMode.excludedTools[1]",
        '"a/b/c" is not a tool name',
        '"server/tool"',
    ),
    "excludedTools not a list": (
        {"models": [{"ref": "m", "codeMode": {"excludedTools": "a"}}]},
        "models[0].codeMode.excludedTools",
        "must be a list",
        '["get_weather", "github/create_issue"]',
    ),
    "model without ref": (
        {"models": [{"ref": "a"}, {"provider": "openai"}]},
        "models[1].ref",
        "missing",
        '"ref": "sonnet"',
    ),
    "duplicate model ref": (
        {"models": [{"ref": "a"}, {"ref": "a"}]},
        "models[1].ref",
        'duplicate ref "a" (models[0] has it too)',
        "its own ref",
    ),
    "unknown provider": (
        {"models": [{"ref": "a", "provider": "google"}]},
        "models[0].provider",
        'unknown value "google"',
        '"openai" or "anthropic"',
    ),
    "apiKeyEnv holding a key": (
        {"models": [{"ref": "a", "apiKeyEnv": "sk-secret-123"}]},
        "models[0].apiKeyEnv",
        "not the name of an environment variable",
        '"OPENAI_API_KEY"',
    ),
    "models not a list": (
        {"models": {"ref": "a"}},
        "models",
        "must be a list (JSON array), not an object",
        '[{"ref": "sonnet"',
    ),
    "not an object": ([{"command": "x"}], None, "must be a JSON object, not a list", '{"mcpServers"'),
    "empty file": ("", None, "is empty", '{"mcpServers": {}}'),
    "missing workspace": ({"workspace": "nowhere"}, "workspace", "does not exist", "mkdir -p"),
    "missing cwd": (
        servers(a={"command": "x", "cwd": "nowhere"}),
        "mcpServers.a.cwd",
        "does not exist",
        "relative paths start at the directory of codemode.json",
    ),
    "missing envFile": (
        servers(a={"command": "x", "envFile": "missing.env"}),
        "mcpServers.a.envFile",
        "missing.env does not exist",
        "relative paths start at the directory of codemode.json",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_mistake_names_file_path_and_fix(tmp_path: Path, case: str) -> None:
    data, path, message, fix = CASES[case]
    exc = error(tmp_path, data)
    text = str(exc)
    assert text.startswith("codemode.json: ")
    assert exc.file == "codemode.json"
    assert exc.path == path
    if path is not None:
        assert f"codemode.json: {path}: " in text
    assert message in exc.reason
    assert exc.fix is not None and fix in exc.fix
    assert f"\n  fix: {exc.fix}" in text


def test_bad_json_has_line_and_column(tmp_path: Path) -> None:
    exc = error(tmp_path, '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n  }\n}')
    assert "not valid JSON at line 4, column 5" in str(exc)
    assert "Expecting ',' delimiter" in str(exc)
    assert exc.fix is not None and "correct the JSON" in exc.fix


def test_bad_json_position_counts_lines_after_comments(tmp_path: Path) -> None:
    # Comments are blanked, not removed, so the position still matches the file.
    exc = error(tmp_path, '{\n  /* a\n  comment */ "mcpServers": {\n    "a": {"command": "x"} oops\n  }\n}')
    assert "line 4, column 27" in str(exc)


def test_unset_variable_names_variable_path_and_fix(tmp_path: Path) -> None:
    exc = error(tmp_path, servers(github={"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}))
    assert exc.path == "mcpServers.github.env.GITHUB_TOKEN"
    assert exc.fix == "export GITHUB_TOKEN=... or write ${GITHUB_TOKEN:-default}"
    assert str(exc) == (
        "codemode.json: mcpServers.github.env.GITHUB_TOKEN: ${GITHUB_TOKEN} is not set\n"
        "  fix: export GITHUB_TOKEN=... or write ${GITHUB_TOKEN:-default}"
    )


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({"command": "${CMD}"}, "mcpServers.s.command"),
        ({"command": "x", "args": ["ok", "--token=${T}"]}, "mcpServers.s.args[1]"),
        ({"command": "x", "cwd": "${DIR}"}, "mcpServers.s.cwd"),
        ({"command": "x", "envFile": "${ENV_FILE}"}, "mcpServers.s.envFile"),
        ({"url": "${BASE}/mcp"}, "mcpServers.s.url"),
        (
            {"url": "https://h.example/mcp", "headers": {"Authorization": "Bearer ${T}"}},
            "mcpServers.s.headers.Authorization",
        ),
    ],
)
def test_unset_variable_in_every_expanded_field(tmp_path: Path, entry: dict[str, Any], path: str) -> None:
    assert error(tmp_path, servers(s=entry)).path == path


def test_vscode_input_variable_cannot_be_prompted(tmp_path: Path) -> None:
    exc = error(
        tmp_path,
        {"servers": {"gh": {"type": "stdio", "command": "x", "env": {"TOKEN": "${input:github-token}"}}}},
        name=".vscode/mcp.json",
    )
    assert exc.file == ".vscode/mcp.json"
    assert exc.path == "servers.gh.env.TOKEN"
    assert "${input:github-token}" in exc.reason and "cannot prompt" in exc.reason
    assert exc.fix is not None and "export GITHUB_TOKEN=..." in exc.fix and "${GITHUB_TOKEN}" in exc.fix


def test_broken_entry_among_good_ones_is_named(tmp_path: Path) -> None:
    exc = error(
        tmp_path,
        servers(
            good={"command": "x"},
            broken={"command": "x", "timeout": -1},
            also_good={"url": "https://h.example/mcp"},
        ),
    )
    assert exc.path == "mcpServers.broken.timeout"


def test_several_problems_in_one_entry_are_counted(tmp_path: Path) -> None:
    exc = error(tmp_path, servers(a={"command": 1, "args": "x", "timeout": "y"}))
    assert exc.path == "mcpServers.a.command"
    assert "(and 2 more problems in this entry)" in exc.reason


def test_json_path_quotes_keys_with_dots(tmp_path: Path) -> None:
    exc = error(tmp_path, servers(**{"my.server": {"command": 5}}))
    assert exc.path == 'mcpServers["my.server"].command'


def test_envfile_syntax_error_names_env_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / "secrets.env", "# comment\nGOOD=1\nthis line is wrong\n")
    exc = error(tmp_path, servers(a={"command": "x", "envFile": "secrets.env"}))
    assert exc.path == "mcpServers.a.envFile"
    assert "secrets.env, line 3: expected KEY=VALUE" in exc.reason
    assert "this line is wrong" not in str(exc)  # env files hold secrets: lines are not echoed
    assert exc.fix is not None and "KEY=VALUE" in exc.fix


def test_explicit_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config("nope.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    assert str(info.value) == "nope.json: file not found\n  fix: check the path given with --config"


def test_env_var_file_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, env={"CODEMODE_CONFIG": "gone.json"}, user_config_dir=tmp_path / "user")
    assert info.value.file == "gone.json"
    assert info.value.fix is not None and "CODEMODE_CONFIG" in info.value.fix


def test_explicit_path_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    with pytest.raises(ConfigError, match="is a directory"):
        load_config("conf", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")


def test_file_outside_the_working_directory_is_named_in_full(tmp_path: Path) -> None:
    elsewhere = write(tmp_path / "elsewhere" / "c.json", servers(a={"command": 3}))
    (tmp_path / "cwd").mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(elsewhere, cwd=tmp_path / "cwd", env={}, user_config_dir=tmp_path / "user")
    assert info.value.file == str(elsewhere)


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "codemode.json").write_bytes(b'{"mcpServers": {"a": {"command": "caf\xe9"}}}')
    exc = error_from_existing(tmp_path)
    assert "not UTF-8" in exc.reason and exc.fix == "save the file as UTF-8"


def error_from_existing(tmp_path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config("codemode.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    return info.value
