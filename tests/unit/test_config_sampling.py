"""A server entry's "sampling": ask (default), allow (a loosened protection, listed with its file) or deny."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.config import load_config
from codemode_kernel.core.errors import ConfigError


def _write(path: Path, servers: dict[str, object], key: str = "mcpServers") -> Path:
    file = path / "servers.json"
    file.write_text(json.dumps({key: servers}))
    return file


def test_ask_is_the_default_and_loosens_nothing(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, {"a": {"command": "x"}}))
    assert config.servers["a"].sampling == "ask" and config.relaxations == []


def test_allow_is_listed_as_a_loosened_protection_with_its_place(tmp_path: Path) -> None:
    servers = {
        "a": {"command": "x", "sampling": "allow"},
        "off": {"command": "y", "sampling": "allow", "disabled": True},
    }
    config = load_config(_write(tmp_path, servers, key="servers"))
    (relaxation,) = config.relaxations
    assert relaxation.file.endswith("servers.json") and relaxation.setting == "servers.a.sampling"
    assert relaxation.effect == 'server "a" asks the configured model (on your key) without asking you'


def test_an_unknown_value_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'mcpServers\.a\.sampling: unknown value "yes"') as caught:
        load_config(_write(tmp_path, {"a": {"command": "x", "sampling": "yes"}}))
    assert 'write one of "ask", "allow" or "deny"' in str(caught.value)
