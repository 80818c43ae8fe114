"""codeMode resolution (override, not merge), excluded tools, unknown-key warnings, and the public API."""

from __future__ import annotations

import json
import logging
import re
import types
from pathlib import Path
from typing import Any

import pytest

import codemode_kernel.config as config_package
from codemode_kernel.config import (
    CodeModeSettings,
    Config,
    Defaults,
    ModelConfig,
    load_config,
    resolve_code_mode,
)
from codemode_kernel.core.errors import ConfigError


def make(defaults: CodeModeSettings | None, *models: ModelConfig) -> Config:
    return Config(defaults=Defaults(code_mode=defaults), models=list(models), workspace=Path("."))


def test_model_code_mode_replaces_defaults_entirely() -> None:
    config = make(
        CodeModeSettings(excluded_tools=["a", "b"], timeout=90),
        ModelConfig(ref="m", code_mode=CodeModeSettings(excluded_tools=["c"])),
    )
    settings = resolve_code_mode(config, "m")
    assert settings.excluded_tools == ["c"]
    assert settings.timeout == 30  # the model's own (default) timeout, not the defaults' 90


def test_model_without_code_mode_inherits_defaults() -> None:
    defaults = CodeModeSettings(excluded_tools=["a"])
    assert resolve_code_mode(make(defaults, ModelConfig(ref="m")), "m") == defaults


def test_no_model_chosen_gives_defaults() -> None:
    defaults = CodeModeSettings(timeout=5)
    assert resolve_code_mode(make(defaults, ModelConfig(ref="m"))) == defaults


def test_neither_means_on_with_the_defaults() -> None:
    # A deliberate difference from the Go design (where neither means off): code mode is the product.
    assert resolve_code_mode(make(None, ModelConfig(ref="m")), "m") == CodeModeSettings()
    assert resolve_code_mode(make(None)) == CodeModeSettings()


def test_model_can_disable_code_mode() -> None:
    config = make(CodeModeSettings(), ModelConfig(ref="tiny", code_mode=CodeModeSettings(enabled=False)))
    assert not resolve_code_mode(config, "tiny").enabled
    assert resolve_code_mode(config).enabled


def test_model_can_enable_code_mode_without_defaults() -> None:
    config = make(None, ModelConfig(ref="m", code_mode=CodeModeSettings()))
    assert resolve_code_mode(config, "m").enabled


def test_unknown_ref_lists_known_refs() -> None:
    config = make(None, ModelConfig(ref="sonnet"), ModelConfig(ref="tiny"))
    with pytest.raises(ConfigError) as info:
        resolve_code_mode(config, "opus")
    assert info.value.path == "models"
    assert 'no model with ref "opus"' in info.value.reason
    assert info.value.fix is not None and '"sonnet", "tiny"' in info.value.fix


def test_unknown_ref_without_models_says_how_to_add_one() -> None:
    with pytest.raises(ConfigError, match=re.escape('add {"ref": "opus"')):
        resolve_code_mode(make(None), "opus")


def test_resolution_from_the_go_design_example(tmp_path: Path) -> None:
    (tmp_path / "codemode.json").write_text(
        json.dumps(
            {
                "defaults": {"codeMode": {"enabled": True, "excludedTools": ["some_tool", "another_tool"]}},
                "models": [
                    {"ref": "sonnet"},
                    {
                        "ref": "small-model",
                        "codeMode": {
                            "enabled": True,
                            "excludedTools": ["some_tool", "another_tool", "another_tool_2"],
                        },
                    },
                    {"ref": "tiny-model", "codeMode": {"enabled": False}},
                ],
            }
        )
    )
    config = load_config("codemode.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    assert resolve_code_mode(config, "sonnet").excluded_tools == ["some_tool", "another_tool"]
    assert resolve_code_mode(config, "small-model").excluded_tools == [
        "some_tool",
        "another_tool",
        "another_tool_2",
    ]
    assert not resolve_code_mode(config, "tiny-model").enabled
    with pytest.raises(ConfigError) as info:
        resolve_code_mode(config, "gpt")
    assert info.value.file == str(tmp_path / "codemode.json")


def test_code_mode_settings_defaults() -> None:
    settings = CodeModeSettings()
    assert (settings.enabled, settings.excluded_tools, settings.timeout) == (True, [], 30)


def test_is_excluded_by_tool_or_server_and_tool() -> None:
    settings = CodeModeSettings(excluded_tools=["get_weather", "github/create_issue"])
    assert settings.is_excluded("weather", "get_weather")
    assert settings.is_excluded("other", "get_weather")
    assert settings.is_excluded("github", "create_issue")
    assert not settings.is_excluded("gitlab", "create_issue")
    assert not settings.is_excluded("github", "list_issues")


# maxTimeout: how long a program may ask to run (issue 27).


def load_error(tmp_path: Path, data: Any) -> ConfigError:
    (tmp_path / "codemode.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config("codemode.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    return info.value


def test_max_timeout_above_an_hour_is_refused_naming_the_field(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"defaults": {"codeMode": {"maxTimeout": 3601}}})
    assert (error.file, error.path) == ("codemode.json", "defaults.codeMode.maxTimeout")
    assert "at most 3600" in str(error)


def test_a_timeout_above_max_timeout_is_refused_naming_both(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"models": [{"ref": "m", "codeMode": {"timeout": 900, "maxTimeout": 600}}]})
    assert error.path == "models[0].codeMode.timeout"
    assert error.reason == "900 seconds is above maxTimeout (600)"
    assert error.fix == 'lower "timeout" to 600 or less, or raise "maxTimeout" to 900 or more (up to 3600)'
    default = load_error(tmp_path, {"defaults": {"codeMode": {"timeout": 301}}})
    assert default.path == "defaults.codeMode.timeout" and "above maxTimeout (300)" in default.reason


def test_lowering_max_timeout_alone_lowers_the_default_timeout_with_it(tmp_path: Path) -> None:
    (tmp_path / "codemode.json").write_text(json.dumps({"defaults": {"codeMode": {"maxTimeout": 10}}}))
    config = load_config("codemode.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    assert (resolve_code_mode(config).timeout, resolve_code_mode(config).max_timeout) == (10, 10)


def test_a_max_timeout_of_the_wrong_type_is_one_problem_not_two(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"defaults": {"codeMode": {"maxTimeout": "600"}}})
    assert error.path == "defaults.codeMode.maxTimeout"
    assert error.reason == "must be a number, not a string"  # not "(and 1 more problem)": the default


def test_a_long_timeout_loads_once_max_timeout_allows_it(tmp_path: Path) -> None:
    (tmp_path / "codemode.json").write_text(
        json.dumps({"defaults": {"codeMode": {"timeout": 1200, "maxTimeout": 1800}}}), encoding="utf-8"
    )
    config = load_config("codemode.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    settings = resolve_code_mode(config)
    assert (settings.timeout, settings.max_timeout) == (1200, 1800)


# Unknown keys: warnings with the file, the JSON path and the nearest key.


def load_with_warnings(tmp_path: Path, name: str, data: Any) -> list[str]:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return load_config(name, cwd=tmp_path, env={}, user_config_dir=tmp_path / "user").warnings


def test_unknown_key_names_the_nearest_key(tmp_path: Path) -> None:
    warnings = load_with_warnings(
        tmp_path, "codemode.json", {"mcpServers": {"weather": {"comand": "x", "command": "x"}}}
    )
    assert warnings == ['codemode.json: mcpServers.weather.comand: unknown key; did you mean "command"?']


def test_unknown_keys_at_every_level(tmp_path: Path) -> None:
    warnings = load_with_warnings(
        tmp_path,
        "codemode.json",
        {
            "mcpServer": {},
            "defaults": {"codeMode": {"exludedTools": []}},
            "models": [{"ref": "m", "provder": "openai", "codeMode": {"timout": 5}}],
        },
    )
    assert warnings == [
        'codemode.json: mcpServer: unknown key; did you mean "mcpServers"?',
        'codemode.json: defaults.codeMode.exludedTools: unknown key; did you mean "excludedTools"?',
        'codemode.json: models[0].provder: unknown key; did you mean "provider"?',
        'codemode.json: models[0].codeMode.timout: unknown key; did you mean "timeout"?',
    ]


def test_snake_case_key_points_at_camel_case(tmp_path: Path) -> None:
    warnings = load_with_warnings(
        tmp_path, "codemode.json", {"defaults": {"codeMode": {"excluded_tools": ["a"]}}}
    )
    assert warnings == [
        'codemode.json: defaults.codeMode.excluded_tools: unknown key; did you mean "excludedTools"? '
        "(keys are camelCase)"
    ]


def test_unknown_key_without_a_near_one_lists_the_known_keys(tmp_path: Path) -> None:
    warnings = load_with_warnings(
        tmp_path, ".mcp.json", {"mcpServers": {"a": {"url": "https://h.example/mcp", "zzz": 1}}}
    )
    assert len(warnings) == 1
    assert warnings[0].startswith(
        ".mcp.json: mcpServers.a.zzz: unknown key; ignored (known keys: args, command"
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [
        (
            ".vscode/mcp.json",
            {"inputs": [], "servers": {"a": {"type": "http", "url": "https://h.example/mcp"}}},
        ),
        ("claude_desktop_config.json", {"mcpServers": {}, "globalShortcut": "x", "preferences": {}}),
        (".mcp.json", {"mcpServers": {"a": {"command": "x", "autoApprove": [], "alwaysAllow": []}}}),
        (".vscode/mcp.json", {"servers": {"a": {"type": "stdio", "command": "x", "dev": {"watch": "*.ts"}}}}),
    ],
)
def test_other_tools_keys_do_not_warn(tmp_path: Path, name: str, data: Any) -> None:
    assert load_with_warnings(tmp_path, name, data) == []


def test_warnings_are_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="codemode_kernel.config"):
        warnings = load_with_warnings(tmp_path, "codemode.json", {"mcpServers": {}, "modles": []})
    assert warnings == ['codemode.json: modles: unknown key; did you mean "models"?']
    assert [record.getMessage() for record in caplog.records] == warnings


def test_public_api_is_exactly_all() -> None:
    public = {
        name
        for name, value in vars(config_package).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(config_package.__all__)
    assert config_package.__all__ == sorted(config_package.__all__)
