"""``codemode serve`` leaves out the entries of its config that are ``codemode serve`` itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel.config import Config, ServerConfig, load_config
from codemode_kernel.serve.selfref import is_codemode_serve, self_reference_note, without_self

WEATHER = {"command": "python3", "args": ["-m", "codemode_kernel.servers.weather"]}


def _load(tmp_path: Path, servers: dict[str, Any], name: str = ".mcp.json") -> Config:
    """A config file as a host's users write it, loaded as ``codemode serve --config FILE`` loads it."""
    path = tmp_path / name
    path.write_text(json.dumps({"mcpServers": servers}))
    return load_config(path, cwd=tmp_path, env={}, user_config_dir=tmp_path / "no-user-config")


def test_a_project_mcp_json_naming_codemode_serve_loses_that_entry(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        {
            "weather": WEATHER,
            "codemode": {"command": "codemode", "args": ["serve", "--config", "codemode.json"]},
            "workspace": {"command": "python3", "args": ["-m", "codemode_kernel.servers.workspace"]},
        },
    )
    kept, itself = without_self(config)
    assert itself == ["codemode"]
    assert list(kept.servers) == ["weather", "workspace"]
    assert kept.source == config.source and kept.workspace == config.workspace
    assert list(config.servers) == ["weather", "codemode", "workspace"]  # a copy: the original is whole


def test_a_config_without_itself_comes_back_as_it_is(tmp_path: Path) -> None:
    config = _load(tmp_path, {"weather": WEATHER, "remote": {"url": "http://127.0.0.1:8000/mcp"}})
    assert without_self(config) == (config, [])
    assert without_self(config)[0] is config


def test_every_entry_that_is_serve_is_named_in_config_order(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        {
            "cm-module": {"command": "python", "args": ["-m", "codemode_kernel.cli", "serve"]},
            "weather": WEATHER,
            "cm-script": {"command": "/home/me/project/.venv/bin/codemode", "args": ["serve"]},
            "cm-off": {"command": "codemode", "args": ["serve"], "disabled": True},
        },
    )
    kept, itself = without_self(config)
    assert itself == ["cm-module", "cm-script"]
    assert list(kept.servers) == ["weather", "cm-off"]  # a disabled entry is never started: kept as written


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("codemode", ["serve"]),
        ("/home/me/.venv/bin/codemode", ["serve", "--transport", "stdio"]),
        ("C:\\Users\\me\\venv\\Scripts\\codemode.exe", ["serve"]),
        ("python3", ["-m", "codemode_kernel.cli", "serve", "--config", "x.json"]),
        ("/usr/bin/python3.11", ["-u", "-X", "dev", "-m", "codemode_kernel.cli", "serve"]),
        ("python", ["-mcodemode_kernel.cli", "serve"]),
        ("uv", ["run", "--project", "/home/me/cm", "codemode", "serve"]),
        ("uvx", ["--from", "codemode-kernel", "codemode", "serve"]),
        ("sh", ["-c", "cd /srv && exec codemode serve --config codemode.json"]),
        ("bash", ["-lc", "python -m codemode_kernel.cli serve"]),
    ],
)
def test_spellings_of_codemode_serve(command: str, args: list[str]) -> None:
    assert is_codemode_serve(ServerConfig(name="x", command=command, args=args))


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("codemode", ["run", "program.py"]),  # other subcommands are not servers anyway, but not serve
        ("codemode", ["tools"]),
        ("python", ["-m", "codemode_kernel"]),  # the kernel
        ("python", ["-m", "codemode_kernel.servers.weather"]),
        ("python", ["-m", "codemode_kernel.cli", "doctor"]),
        ("/opt/codemode-helper", ["serve"]),
        ("npx", ["-y", "some-mcp-server", "serve"]),
        ("node", ["server.js", "--name", "codemode", "--mode", "serve-all"]),
        ("sh", ["-c", "echo 'unbalanced"]),
    ],
)
def test_other_commands_are_not_codemode_serve(command: str, args: list[str]) -> None:
    assert not is_codemode_serve(ServerConfig(name="x", command=command, args=args))


def test_the_note_names_the_entries_and_the_file() -> None:
    one = self_reference_note(["codemode"], Path("/srv/app/.mcp.json"))
    assert one == (
        'codemode serve: not starting the server "codemode" in /srv/app/.mcp.json: it runs codemode serve '
        "itself, which would start itself again"
    )
    two = self_reference_note(["a", "b"])
    assert two == (
        'codemode serve: not starting the servers "a", "b": they run codemode serve itself, which would '
        "start itself again"
    )
