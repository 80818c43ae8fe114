"""Discovery order: each level beats the next, and the loaded Config says where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.config import find_config, load_config, trust_config, user_config_dir
from codemode_kernel.core.errors import UntrustedConfigError

LEVELS = ["explicit", "env", "codemode.json", ".mcp.json", ".vscode/mcp.json", "user"]


def server_name(level: str) -> str:
    return level.replace("/", "_")


def setup_levels(tmp_path: Path, levels: list[str]) -> tuple[str | None, dict[str, str], Path]:
    """Create a config file for each level; each names one remote server after its level."""
    user = tmp_path / "user"

    def write(path: Path, level: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = "servers" if path.name == "mcp.json" else "mcpServers"
        path.write_text(json.dumps({key: {server_name(level): {"url": "https://h.example/mcp"}}}))

    explicit = None
    env: dict[str, str] = {}
    for level in levels:
        if level == "explicit":
            write(tmp_path / "explicit.json", level)
            explicit = "explicit.json"
        elif level == "env":
            write(tmp_path / "from-env.json", level)
            env["CODEMODE_CONFIG"] = "from-env.json"
        elif level == "user":
            write(user / "config.json", level)
        else:
            write(tmp_path / level, level)
            trust_config(tmp_path / level, user_config_dir=user)  # a remote server needs trust too
    return explicit, env, user


@pytest.mark.parametrize("index", range(len(LEVELS)))
def test_each_level_beats_the_next(tmp_path: Path, index: int) -> None:
    explicit, env, user = setup_levels(tmp_path, LEVELS[index:])
    config = load_config(explicit, cwd=tmp_path, env=env, user_config_dir=user)
    assert list(config.servers) == [server_name(LEVELS[index])]
    expected_origin = {"explicit": "explicit", "env": "env", "user": "user"}.get(LEVELS[index], "project")
    assert config.origin == expected_origin


@pytest.mark.parametrize(
    ("levels", "path", "origin"),
    [
        (["explicit", "env"], "explicit.json", "explicit"),
        (["env", "codemode.json"], "from-env.json", "env"),
        (["codemode.json", ".mcp.json"], "codemode.json", "project"),
        ([".mcp.json", ".vscode/mcp.json"], ".mcp.json", "project"),
        ([".vscode/mcp.json", "user"], ".vscode/mcp.json", "project"),
        (["user"], "user/config.json", "user"),
    ],
)
def test_find_config_reports_path_and_origin(
    tmp_path: Path, levels: list[str], path: str, origin: str
) -> None:
    explicit, env, user = setup_levels(tmp_path, levels)
    assert find_config(explicit, cwd=tmp_path, env=env, user_config_dir=user) == (tmp_path / path, origin)


def test_nothing_found_gives_the_demo_servers(tmp_path: Path) -> None:
    user = tmp_path / "user"
    assert find_config(cwd=tmp_path, env={}, user_config_dir=user) == (None, "default")
    config = load_config(cwd=tmp_path, env={}, user_config_dir=user)
    assert config.origin == "default"
    assert config.source is None
    assert list(config.servers) == ["weather", "workspace", "sqlite"]
    assert config.servers["workspace"].args[-2:] == ["--root", str(tmp_path.resolve())]


def test_empty_env_var_is_ignored(tmp_path: Path) -> None:
    assert find_config(cwd=tmp_path, env={"CODEMODE_CONFIG": ""}, user_config_dir=tmp_path / "u") == (
        None,
        "default",
    )


def test_a_directory_named_like_a_project_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "codemode.json").mkdir()
    assert find_config(cwd=tmp_path, env={}, user_config_dir=tmp_path / "u") == (None, "default")


def test_explicit_absolute_path(tmp_path: Path) -> None:
    target = tmp_path / "abs.json"
    assert find_config(target, cwd=Path("/"), env={}, user_config_dir=tmp_path) == (target, "explicit")


def test_user_config_file_is_codemode_format(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.json").write_text(
        json.dumps({"mcpServers": {}, "models": [{"ref": "m"}], "theme": "dark", "defaults": {}})
    )
    config = load_config(cwd=tmp_path, env={}, user_config_dir=user)
    assert config.origin == "user"
    assert [model.ref for model in config.models] == ["m"]
    # The user config is codemode's own format, so its unknown keys are reported.
    assert config.warnings == [
        "user/config.json: theme: unknown key; ignored "
        "(known keys: $schema, defaults, executor, mcpServers, models, servers, workspace)"
    ]


def test_user_config_dir_follows_xdg_then_home() -> None:
    assert user_config_dir({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == Path("/x/codemode")
    assert user_config_dir({"HOME": "/h"}) == Path("/h/.config/codemode")
    # A relative XDG_CONFIG_HOME is ignored, as the XDG specification says.
    assert user_config_dir({"XDG_CONFIG_HOME": "rel", "HOME": "/h"}) == Path("/h/.config/codemode")


def test_user_config_dir_from_env_is_used_by_discovery(tmp_path: Path) -> None:
    (tmp_path / "xdg" / "codemode").mkdir(parents=True)
    (tmp_path / "xdg" / "codemode" / "config.json").write_text('{"mcpServers": {}}')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert find_config(cwd=tmp_path / "cwd", env=env) == (
        tmp_path / "xdg" / "codemode" / "config.json",
        "user",
    )


def test_untrusted_project_file_is_not_skipped_for_the_user_config(tmp_path: Path) -> None:
    # An untrusted project file is an error, never a silent fall-through to the user config.
    user = tmp_path / "user"
    setup_levels(tmp_path, ["user"])
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": "x"}}}))
    with pytest.raises(UntrustedConfigError, match="codemode trust"):
        load_config(cwd=tmp_path, env={}, user_config_dir=user)
    trust_config(tmp_path / ".mcp.json", user_config_dir=user)
    assert list(load_config(cwd=tmp_path, env={}, user_config_dir=user).servers) == ["local"]
