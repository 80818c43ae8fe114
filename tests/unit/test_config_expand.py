"""${VAR} expansion and envFile: unit tests of the pieces, then through real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codemode_kernel.config import ServerConfig, load_config
from codemode_kernel.config.envfile import EnvFileError, parse_env_file
from codemode_kernel.config.expand import Expander
from codemode_kernel.config.jsonc import strip_jsonc
from codemode_kernel.core.errors import ConfigError


def expander(env: dict[str, str] | None = None, folder: str = "/proj") -> Expander:
    return Expander(env=env or {}, file="codemode.json", workspace_folder=Path(folder), base_dir=Path("/cfg"))


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("${A}", {"A": "1"}, "1"),
        ("x-${A}-${B}-y", {"A": "1", "B": "2"}, "x-1-2-y"),
        ("${A:-fallback}", {}, "fallback"),
        ("${A:-fallback}", {"A": ""}, "fallback"),
        ("${A:-fallback}", {"A": "set"}, "set"),
        ("${A:-}", {}, ""),
        ("${A:-a:-b c}", {}, "a:-b c"),
        ("${A}", {"A": ""}, ""),
        ("${env:A}", {"A": "1"}, "1"),
        ("${env:A:-d}", {}, "d"),
        ("${workspaceFolder}/x", {}, "/proj/x"),
        ("${userHome}/.cache", {"HOME": "/home/u"}, "/home/u/.cache"),
        ("$${A}", {}, "${A}"),
        ("$A and $$ stay", {}, "$A and $$ stay"),
        ("${A}", {"A": "${B}"}, "${B}"),  # one pass: values are not expanded again
        ("no variables", {}, "no variables"),
    ],
)
def test_expand(text: str, env: dict[str, str], expected: str) -> None:
    assert expander(env).expand(text, "p") == expected


@pytest.mark.parametrize(
    ("text", "message", "fix"),
    [
        ("${TOKEN}", "${TOKEN} is not set", "export TOKEN=... or write ${TOKEN:-default}"),
        ("${env:TOKEN}", "${TOKEN} is not set", "export TOKEN=..."),
        ("${input:api-key}", "${input:api-key}", "export API_KEY=..."),
        ("${config:editor.x}", 'unsupported variable "${config:editor.x}"', "${VAR:-default}"),
        ("${1BAD}", "unsupported variable", "$${ gives a literal ${"),
        ("${OPEN", 'has a "${" that is never closed', 'close it with "}"'),
        ("${userHome}", "HOME is not set", "export HOME=..."),
    ],
)
def test_expand_errors(text: str, message: str, fix: str) -> None:
    with pytest.raises(ConfigError) as info:
        expander().expand(text, "mcpServers.a.args[0]")
    assert (info.value.file, info.value.path) == ("codemode.json", "mcpServers.a.args[0]")
    assert message in info.value.reason
    assert info.value.fix is not None and fix in info.value.fix


def test_expand_path_resolves_home_and_relative_paths() -> None:
    x = expander({"HOME": "/home/u", "D": "data"})
    assert x.expand_path("~/a", "p") == Path("/home/u/a")
    assert x.expand_path("${D}/b", "p") == Path("/cfg/data/b")
    assert x.expand_path("/abs", "p") == Path("/abs")


@given(st.text().filter(lambda s: "$" not in s))
def test_text_without_dollar_is_unchanged(text: str) -> None:
    assert expander().expand(text, "p") == text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(json_values)
def test_jsonc_leaves_plain_json_alone(value: Any) -> None:
    text = json.dumps(value, indent=1)
    assert strip_jsonc(text) == text


def test_env_file_format() -> None:
    text = "\n".join(
        [
            "# a comment",
            "",
            "PLAIN=value",
            "export EXPORTED=1",
            "  SPACED = padded  ",
            "INLINE=kept # dropped",
            "HASH=a#b",
            "SINGLE='$NOT ${EXPANDED} # kept'",
            'DOUBLE="line\\nbreak \\"quoted\\" # kept"  # dropped',
            "EMPTY=",
            "URL=https://h.example/?a=b=c",
            "PLAIN=later wins",
        ]
    )
    assert parse_env_file(text) == {
        "PLAIN": "later wins",
        "EXPORTED": "1",
        "SPACED": "padded",
        "INLINE": "kept",
        "HASH": "a#b",
        "SINGLE": "$NOT ${EXPANDED} # kept",
        "DOUBLE": 'line\nbreak "quoted" # kept',
        "EMPTY": "",
        "URL": "https://h.example/?a=b=c",
    }


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("A=1\nno equals sign", 2, "expected KEY=VALUE"),
        ("1A=x", 1, "expected KEY=VALUE"),
        ('A="unclosed', 1, "never closed"),
        ("A='x' trailing", 1, "text after the closing quote"),
    ],
)
def test_env_file_errors(text: str, line: int, message: str) -> None:
    with pytest.raises(EnvFileError) as info:
        parse_env_file(text)
    assert info.value.line == line
    assert message in str(info.value)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load_server(
    tmp_path: Path, entry: dict[str, Any], env: dict[str, str], name: str = "codemode.json"
) -> ServerConfig:
    write(tmp_path / name, {"mcpServers": {"s": entry}})
    config = load_config(name, cwd=tmp_path, env=env, user_config_dir=tmp_path / "user")
    return config.servers["s"]


def test_expansion_in_every_field(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    env = {"BIN": "python", "PORT": "8080", "TOKEN": "t0k", "DIR": "run"}
    stdio = load_server(
        tmp_path,
        {
            "command": "${BIN}",
            "args": ["--port", "${PORT}", "--level=${LEVEL:-info}"],
            "env": {"API_TOKEN": "${TOKEN}", "MIXED": "pre-${env:PORT}-post"},
            "cwd": "${DIR}",
        },
        env,
    )
    assert stdio.command == "python"
    assert stdio.args == ["--port", "8080", "--level=info"]
    assert stdio.env == {"API_TOKEN": "t0k", "MIXED": "pre-8080-post"}
    assert stdio.cwd == tmp_path / "run"
    remote = load_server(
        tmp_path,
        {"url": "https://${HOST:-h.example}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        env,
    )
    assert remote.url == "https://h.example/mcp"
    assert remote.headers == {"Authorization": "Bearer t0k"}


def test_env_file_merges_under_explicit_env(tmp_path: Path) -> None:
    write(tmp_path / "conf" / ".env", "FROM_FILE=1\nBOTH=file\n")
    (tmp_path / "cwd").mkdir()
    write(
        tmp_path / "conf" / "codemode.json",
        {"mcpServers": {"s": {"command": "x", "envFile": ".env", "env": {"BOTH": "explicit", "OWN": "2"}}}},
    )
    # The working directory is elsewhere: envFile is relative to the config file's directory.
    config = load_config(
        tmp_path / "conf" / "codemode.json", cwd=tmp_path / "cwd", env={}, user_config_dir=tmp_path / "user"
    )
    server = config.servers["s"]
    assert server.env == {"FROM_FILE": "1", "BOTH": "explicit", "OWN": "2"}
    assert server.env_file == tmp_path / "conf" / ".env"


def test_env_file_path_is_expanded(tmp_path: Path) -> None:
    write(tmp_path / "secrets" / "prod.env", "KEY=v\n")
    server = load_server(tmp_path, {"command": "x", "envFile": "${SECRETS}/prod.env"}, {"SECRETS": "secrets"})
    assert server.env == {"KEY": "v"}


def test_vscode_env_file_with_workspace_folder(tmp_path: Path) -> None:
    write(tmp_path / ".env", "KEY=v\n")
    write(
        tmp_path / ".vscode" / "mcp.json",
        {"servers": {"s": {"type": "stdio", "command": "x", "envFile": "${workspaceFolder}/.env"}}},
    )
    config = load_config(".vscode/mcp.json", cwd=tmp_path, env={}, user_config_dir=tmp_path / "user")
    assert config.servers["s"].env == {"KEY": "v"}


def test_disabled_server_is_not_expanded(tmp_path: Path) -> None:
    server = load_server(
        tmp_path,
        {"command": "x", "disabled": True, "env": {"TOKEN": "${UNSET}"}, "envFile": "missing.env"},
        {},
    )
    assert server.disabled
    assert server.env == {"TOKEN": "${UNSET}"}


def test_expansion_reads_the_given_mapping_not_os_environ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONLY_IN_PROCESS_ENV", "leak")
    with pytest.raises(ConfigError, match="ONLY_IN_PROCESS_ENV"):
        load_server(tmp_path, {"command": "${ONLY_IN_PROCESS_ENV}"}, {})


def test_default_env_is_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEMODE_TEST_BIN", "from-os")
    write(tmp_path / "codemode.json", {"mcpServers": {"s": {"command": "${CODEMODE_TEST_BIN}"}}})
    config = load_config("codemode.json", cwd=tmp_path, user_config_dir=tmp_path / "user")
    assert config.servers["s"].command == "from-os"
