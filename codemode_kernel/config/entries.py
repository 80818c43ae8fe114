"""One server entry of a config file: shape check, then ``${VAR}`` expansion, ``envFile`` and paths.

The shape is checked for every entry; expansion, the env file and the ``cwd`` check happen only for enabled
servers, so a disabled entry may refer to variables that are not set (that is often why it is disabled).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from .envfile import EnvFileError, parse_env_file
from .expand import Expander
from .jsonpath import join
from .models import ServerConfig
from .validation import json_kind, unknown_key_warnings, validate

__all__ = ["load_server"]

# Per-server keys other tools write that mean nothing here; ignored without a warning.
_FOREIGN_SERVER_KEYS = frozenset({"dev", "gallery", "autoApprove", "alwaysAllow"})

# A name every shell can set and read; others still reach the server, with a warning.
_PORTABLE_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def load_server(name: str, raw: Any, path: str, expander: Expander) -> tuple[ServerConfig, list[str]]:
    """Validate and (when enabled) expand the entry ``raw`` found at JSON ``path`` of ``expander.file``."""
    file = expander.file
    if not name or "/" in name:
        raise ConfigError(
            'a server name must be non-empty and without "/"',
            file=file,
            path=path,
            fix='rename the server ("/" separates server and tool in excludedTools)',
        )
    if not isinstance(raw, dict):
        raise ConfigError(
            f"must be an object, not {json_kind(raw)}",
            file=file,
            path=path,
            fix='write {"command": "...", "args": [...]} to start a server, or {"url": "https://..."}',
        )
    warnings = unknown_key_warnings(
        raw,
        ServerConfig,
        file=file,
        path=path,
        exclude=frozenset({"name"}),
        silent=_FOREIGN_SERVER_KEYS,
    )
    server = validate(ServerConfig, {**raw, "name": name}, file=file, path=path)
    warnings += _check_env(server.env, join(path, "env"), file=file)
    if server.disabled:
        return server, warnings
    return _expand_server(server, path, expander), warnings


def _expand_server(server: ServerConfig, path: str, expander: Expander) -> ServerConfig:
    """Expand variables, read ``envFile``, resolve relative paths: what only an enabled server needs."""
    file = expander.file

    def text(value: str, *parts: str | int) -> str:
        return expander.expand(value, join(path, *parts))

    update: dict[str, Any] = {
        "args": [text(arg, "args", index) for index, arg in enumerate(server.args)],
        "env": {key: text(value, "env", key) for key, value in server.env.items()},
        "headers": {key: text(value, "headers", key) for key, value in server.headers.items()},
    }
    if server.command is not None:
        update["command"] = text(server.command, "command")
        if not update["command"]:
            raise ConfigError(
                "is empty once its variables are expanded",
                file=file,
                path=join(path, "command"),
                fix="set the variable it uses to the program that starts the server",
            )
    if server.url is not None:
        update["url"] = text(server.url, "url")
        if not update["url"].startswith(("http://", "https://")):
            raise ConfigError(
                "must start with http:// or https://",
                file=file,
                path=join(path, "url"),
                fix='write the full address of the MCP endpoint, e.g. "https://example.com/mcp"',
            )
    if server.oauth is not None:
        # The client's id and secret come from the environment (${VAR}), as a header's token does.
        oauth = server.oauth
        update["oauth"] = oauth.model_copy(
            update={
                key: text(value, "oauth", alias)
                for key, alias, value in (
                    ("client_id", "clientId", oauth.client_id),
                    ("client_secret", "clientSecret", oauth.client_secret),
                )
                if value is not None
            }
        )
    if server.cwd is not None:
        cwd = expander.expand_path(str(server.cwd), join(path, "cwd"))
        if not cwd.is_dir():
            raise ConfigError(
                f"directory {cwd} does not exist",
                file=file,
                path=join(path, "cwd"),
                fix=_missing_path_fix(file),
            )
        update["cwd"] = cwd
    if server.env_file is not None:
        env_file = expander.expand_path(str(server.env_file), join(path, "envFile"))
        # Explicit "env" entries win over the file's.
        update["env"] = {**_read_env_file(env_file, join(path, "envFile"), file=file), **update["env"]}
        update["env_file"] = env_file
    return server.model_copy(update=update)


def _check_env(env: dict[str, str], path: str, *, file: str) -> list[str]:
    """Refuse what no process environment can hold (it would fail only at connect); warn about odd names.

    Checked as written, so a disabled server is checked too: names are never expanded.
    """
    warnings = []
    for key, value in env.items():
        where = join(path, key)
        problem = _unusable_name(key)
        if problem:
            raise ConfigError(
                f"{json.dumps(key)} is not a usable environment variable name: {problem}",
                file=file,
                path=where,
                fix='rename it with letters, digits and "_" only, e.g. "API_TOKEN"',
            )
        if "\0" in value:
            # The value is not shown: env values are often secrets.
            raise ConfigError(
                "the value contains a NUL character, which no environment variable can hold",
                file=file,
                path=where,
                fix="remove the NUL character (\\u0000) from the value",
            )
        if not _PORTABLE_ENV_NAME.fullmatch(key):
            warnings.append(
                f"{file}: {where}: not a portable environment variable name (letters, digits and _, not "
                "starting with a digit); the server gets it as written, but a shell cannot set or read it"
            )
    return warnings


def _unusable_name(key: str) -> str | None:
    """Why ``key`` cannot work as a variable name (no program could read it, or exec refuses it), or None."""
    if not key:
        return "it is empty"
    if "=" in key:
        return 'it contains "=", which ends a name'
    if "\0" in key:
        return "it contains a NUL character"
    return None


def _read_env_file(env_file: Path, path: str, *, file: str) -> dict[str, str]:
    try:
        return parse_env_file(env_file.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError(
            f"env file {env_file} does not exist",
            file=file,
            path=path,
            fix=_missing_path_fix(file),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"env file {env_file} cannot be read ({exc})", file=file, path=path, fix="check the file"
        ) from None
    except EnvFileError as exc:
        raise ConfigError(f"env file {env_file}, {exc}", file=file, path=path, fix=exc.fix) from None


def _missing_path_fix(file: str) -> str:
    return f"create it, or correct the path (relative paths start at the directory of {file})"
