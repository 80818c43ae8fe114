"""The file formats users already have, read from real files: Claude Desktop, Cursor, Claude Code, VS Code,
and codemode's own codemode.json."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel.config import (
    CodeModeSettings,
    Config,
    ServerConfig,
    default_config,
    load_config,
    trust_config,
)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load(tmp_path: Path, name: str, data: Any, env: dict[str, str] | None = None) -> Config:
    """Load a file named explicitly (trusted, no discovery) with an isolated env and user dir."""
    write(tmp_path / name, data)
    return load_config(name, cwd=tmp_path, env=env or {}, user_config_dir=tmp_path / "user")


def test_claude_desktop_file_with_other_settings(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        "claude_desktop_config.json",
        {
            "globalShortcut": "Ctrl+Space",
            "preferences": {"menuBarEnabled": True},
            "mcpServers": {
                "filesystem": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                    "env": {"DEBUG": "1"},
                }
            },
        },
    )
    server = config.servers["filesystem"]
    assert server == ServerConfig(
        name="filesystem",
        transport="stdio",
        command="npx",
        args=["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        env={"DEBUG": "1"},
    )
    assert config.warnings == []
    assert config.origin == "explicit"
    assert config.source == tmp_path / "claude_desktop_config.json"


def test_claude_code_mcp_json_remote_servers(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        ".mcp.json",
        {
            "mcpServers": {
                "plain": {"url": "https://a.example/mcp"},
                "http": {"type": "http", "url": "https://b.example/mcp", "headers": {"X-Key": "k"}},
                "sse": {"type": "sse", "url": "http://localhost:8000/sse"},
                "dashed": {"type": "streamable-http", "url": "https://c.example/mcp"},
                "camel": {"type": "streamableHttp", "url": "https://d.example/mcp"},
            }
        },
    )
    transports = {name: server.transport for name, server in config.servers.items()}
    assert transports == {"plain": "http", "http": "http", "sse": "sse", "dashed": "http", "camel": "http"}
    assert config.servers["http"].headers == {"X-Key": "k"}
    assert config.servers["sse"].command is None


def test_vscode_file_with_servers_inputs_comments_and_trailing_commas(tmp_path: Path) -> None:
    text = """{
      // VS Code writes JSONC
      "inputs": [{"type": "promptString", "id": "token", "password": true}],
      "servers": {
        "local": {
          "type": "stdio",
          "command": "node",
          "args": ["${workspaceFolder}/server.js",], /* trailing comma above */
          "dev": {"watch": "src/**/*.ts"},
        },
        "remote": {"type": "http", "url": "https://e.example/mcp"},
      },
    }"""
    config = load(tmp_path, ".vscode/mcp.json", text)
    assert list(config.servers) == ["local", "remote"]
    # ${workspaceFolder} is the folder that holds .vscode/, not .vscode/ itself.
    assert config.servers["local"].args == [f"{tmp_path}/server.js"]
    assert config.servers["remote"].transport == "http"
    assert config.warnings == []


def test_per_server_settings(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    config = load(
        tmp_path,
        "codemode.json",
        {
            "mcpServers": {
                "a": {
                    "command": "srv",
                    "disabled": True,
                    "timeout": 12.5,
                    "prefix": "gh_",
                    "protocol": "auto",
                    "cwd": "work",
                },
                "b": {"command": "srv", "protocol": "2026-07-28", "cwd": "work", "timeout": 3},
                "c": {"url": "https://f.example/mcp"},
            }
        },
    )
    a, b, c = config.servers.values()
    assert (a.disabled, a.timeout, a.prefix, a.protocol) == (True, 12.5, "gh_", "auto")
    assert (b.protocol, b.cwd, b.timeout) == ("2026-07-28", tmp_path / "work", 3.0)
    assert (c.disabled, c.timeout, c.prefix, c.protocol) == (False, None, "", "legacy")
    assert list(config.enabled_servers) == ["b", "c"]


def test_servers_keep_file_order(tmp_path: Path) -> None:
    names = ["zeta", "alpha", "mid", "beta"]
    config = load(tmp_path, ".mcp.json", {"mcpServers": {name: {"command": "x"} for name in names}})
    assert list(config.servers) == names


def test_codemode_json_may_use_the_vscode_servers_key(tmp_path: Path) -> None:
    config = load(tmp_path, "codemode.json", {"servers": {"a": {"type": "stdio", "command": "x"}}})
    assert config.servers["a"].command == "x"
    assert config.warnings == []


def test_codemode_json_settings_and_workspace(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    config = load(
        tmp_path,
        "codemode.json",
        {
            "$schema": "https://example.com/codemode.schema.json",
            "workspace": "data",
            "defaults": {"codeMode": {"enabled": True, "excludedTools": ["a", "srv/b"], "timeout": 60}},
            "models": [
                {
                    "ref": "sonnet",
                    "provider": "anthropic",
                    "model": "claude-sonnet",
                    "baseUrl": "http://localhost:9000",
                    "apiKeyEnv": "ANTHROPIC_API_KEY",
                },
                {"ref": "tiny", "provider": "openai", "codeMode": {"enabled": False}},
            ],
        },
    )
    assert config.workspace == tmp_path / "data"
    assert config.defaults.code_mode == CodeModeSettings(
        enabled=True, excluded_tools=["a", "srv/b"], timeout=60
    )
    sonnet, tiny = config.models
    assert (sonnet.ref, sonnet.provider, sonnet.model) == ("sonnet", "anthropic", "claude-sonnet")
    assert (sonnet.base_url, sonnet.api_key_env, sonnet.code_mode) == (
        "http://localhost:9000",
        "ANTHROPIC_API_KEY",
        None,
    )
    assert tiny.code_mode == CodeModeSettings(enabled=False)
    assert config.servers == {}
    assert config.settings_source == tmp_path / "codemode.json"
    assert config.warnings == []


def test_workspace_defaults_to_the_working_directory(tmp_path: Path) -> None:
    config = load(tmp_path, ".mcp.json", {"mcpServers": {}})
    assert config.workspace == tmp_path


def test_other_tools_file_takes_settings_from_the_user_config(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write(
        user / "config.json",
        {
            "mcpServers": {"ignored": {"command": "${NOT_SET_ANYWHERE}"}},
            "defaults": {"codeMode": {"excludedTools": ["x"]}},
            "models": [{"ref": "m", "provider": "openai"}],
            "workspace": "/somewhere/else",
        },
    )
    write(tmp_path / ".mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    trust_config(tmp_path / ".mcp.json", user_config_dir=user)
    config = load_config(cwd=tmp_path, env={}, user_config_dir=user)
    assert list(config.servers) == ["a"]
    assert config.defaults.code_mode == CodeModeSettings(excluded_tools=["x"])
    assert [model.ref for model in config.models] == ["m"]
    # The user config's servers and workspace belong to it; the project's file decides those.
    assert config.workspace == tmp_path
    assert config.source == tmp_path / ".mcp.json"
    assert config.settings_source == user / "config.json"


def test_other_tools_file_without_user_config_has_no_settings(tmp_path: Path) -> None:
    config = load(tmp_path, ".mcp.json", {"mcpServers": {"a": {"url": "https://g.example/mcp"}}})
    assert config.defaults.code_mode is None
    assert config.models == []
    assert config.settings_source is None


def test_other_tools_file_with_our_keys_is_read_as_ours(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        ".mcp.json",
        {"mcpServers": {}, "models": [{"ref": "m"}], "defualts": {}},
    )
    assert [model.ref for model in config.models] == ["m"]
    assert config.warnings == ['.mcp.json: defualts: unknown key; did you mean "defaults"?']


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {}}).encode())
    config = load_config(".mcp.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    assert config.servers == {}


def test_file_without_servers_warns(tmp_path: Path) -> None:
    config = load(tmp_path, "claude_desktop_config.json", {"globalShortcut": "x"})
    assert config.servers == {}
    assert config.warnings == [
        'claude_desktop_config.json: no "mcpServers" or "servers" object; no servers are configured'
    ]


def test_default_config_is_the_demo_servers(tmp_path: Path) -> None:
    config = default_config(tmp_path)
    assert list(config.servers) == ["weather", "workspace", "sqlite"]
    assert config.servers["weather"].command == sys.executable
    assert config.servers["weather"].args == ["-P", "-m", "codemode_kernel.servers.weather"]
    assert config.servers["workspace"].args == [
        "-P",
        "-m",
        "codemode_kernel.servers.workspace",
        "--root",
        str(tmp_path.resolve()),
    ]
    assert config.servers["sqlite"].args == ["-P", "-m", "codemode_kernel.servers.sqlite"]
    assert all(server.transport == "stdio" for server in config.servers.values())
    assert (config.origin, config.source, config.workspace) == ("default", None, tmp_path.resolve())
    assert config.defaults.code_mode == CodeModeSettings()


def test_server_config_built_in_python_infers_transport() -> None:
    assert ServerConfig(name="a", command="x").transport == "stdio"
    assert ServerConfig(name="a", url="https://h.example/mcp").transport == "http"
    assert ServerConfig(name="a", transport="sse", url="https://h.example/sse").transport == "sse"
    assert ServerConfig(name="a", command="x").model_dump(by_alias=True)["type"] == "stdio"


def test_models_are_frozen(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="frozen"):
        ServerConfig(name="a", command="x").command = "y"
    with pytest.raises(ValueError, match="frozen"):
        default_config(tmp_path).workspace = Path("/")


DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def doc_examples() -> list[tuple[str, str]]:
    """The JSON and JSONC examples of docs/configuration.md, as (language, text)."""
    text = DOCS.read_text(encoding="utf-8")
    return re.findall(r"```(jsonc?)\n(.*?)```", text, flags=re.DOTALL)


@pytest.mark.parametrize(("language", "text"), doc_examples())
def test_documented_examples_load(tmp_path: Path, language: str, text: str) -> None:
    (tmp_path / "notebooks" / "work").mkdir(parents=True)
    name = ".vscode/mcp.json" if language == "jsonc" else "codemode.json"
    config = load(
        tmp_path, name, text, env={"GITHUB_TOKEN": "t", "DOCS_TOKEN": "d", "GITHUB_OAUTH_SECRET": "s"}
    )
    assert config.warnings == []


def test_docs_have_examples() -> None:
    assert len(doc_examples()) >= 5


def test_a_stray_transport_key_does_not_change_the_type(tmp_path: Path) -> None:
    config = load(
        tmp_path, ".mcp.json", {"mcpServers": {"a": {"transport": "sse", "url": "https://h.example/mcp"}}}
    )
    assert config.servers["a"].transport == "http"
    assert len(config.warnings) == 1 and config.warnings[0].startswith(
        ".mcp.json: mcpServers.a.transport: unknown key"
    )
