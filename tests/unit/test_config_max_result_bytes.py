"""The ``maxResultBytes`` server key: read from a file, checked, and refused where it cannot apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.config import Config, load_config
from codemode_kernel.core.errors import ConfigError


def load(tmp_path: Path, entry: dict[str, object]) -> Config:
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": {"files": entry}}))
    return load_config("codemode.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")


def test_max_result_bytes_is_read_per_server(tmp_path: Path) -> None:
    config = load(tmp_path, {"command": "files-server", "maxResultBytes": 100_000_000})
    assert config.servers["files"].max_result_bytes == 100_000_000
    assert load(tmp_path, {"command": "files-server"}).servers["files"].max_result_bytes is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (100, "must be at least 4096 (got 100)"),
        ("64MB", "must be a whole number, not a string"),
        (1.5e7, "must be a whole number, not a number"),
    ],
)
def test_a_bad_max_result_bytes_is_an_error_naming_the_key(tmp_path: Path, value: object, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"command": "files-server", "maxResultBytes": value})
    assert "mcpServers.files.maxResultBytes" in str(info.value) and says in str(info.value)


def test_max_result_bytes_on_a_remote_server_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, {"url": "https://example.com/mcp", "maxResultBytes": 100_000_000})
    text = str(info.value)
    assert "maxResultBytes" in text and "only applies to stdio servers" in text
