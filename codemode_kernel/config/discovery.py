"""Where the config is looked for, and in which order.

1. the path given explicitly (``--config PATH``), else the ``CODEMODE_CONFIG`` environment variable;
2. in the working directory: ``codemode.json``, ``.mcp.json`` (Claude Code), ``.vscode/mcp.json`` (VS Code);
3. the user config, ``$XDG_CONFIG_HOME/codemode/config.json`` (``~/.config/codemode/config.json``);
4. nothing found: the built-in demo servers.

The first hit wins and is used alone: files are not merged, so what runs is what one file says. The working
directory, the environment and the user config directory are parameters, so tests never touch the real home.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .models import ConfigOrigin

__all__ = [
    "PROJECT_FILES",
    "USER_CONFIG_FILE",
    "find_config",
    "resolve_user_dir",
    "shadowed_config",
    "user_config_dir",
]

PROJECT_FILES = ("codemode.json", ".mcp.json", ".vscode/mcp.json")
"""Project-local files, in the order they are tried."""

USER_CONFIG_FILE = "config.json"
"""The user config's file name inside :func:`user_config_dir`."""

ENV_VAR = "CODEMODE_CONFIG"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Return the user's codemode directory: ``$XDG_CONFIG_HOME/codemode`` or ``~/.config/codemode``.

    It holds the user config and the trust store. A relative ``XDG_CONFIG_HOME`` is ignored, as the XDG
    specification asks.
    """
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "codemode"
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".config" / "codemode"


def find_config(
    path: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    user_config_dir: Path | None = None,
) -> tuple[Path | None, ConfigOrigin]:
    """Discovery only: the file that :func:`load_config` would read, and how it was found.

    Returns ``(None, "default")`` when no file is found. An explicit path (argument or ``CODEMODE_CONFIG``)
    is returned even if it does not exist, so that loading it reports the missing file instead of silently
    falling back to another one. Relative paths are taken from ``cwd``.
    """
    cwd = Path.cwd() if cwd is None else cwd
    env = os.environ if env is None else env
    if path is not None:
        return cwd / Path(path), "explicit"
    if env.get(ENV_VAR):
        return cwd / env[ENV_VAR], "env"
    for name in PROJECT_FILES:
        candidate = cwd / name
        if candidate.is_file():
            return candidate, "project"
    user_dir = resolve_user_dir(user_config_dir, env)
    if (user_dir / USER_CONFIG_FILE).is_file():
        return user_dir / USER_CONFIG_FILE, "user"
    return None, "default"


def shadowed_config(found: Path, cwd: Path, user_dir: Path) -> Path | None:
    """The config that would be used if the project file ``found`` were not there, if any.

    A project file that takes another's place changes which servers run even when it says nothing
    dangerous itself; a program could create one (a name that does not exist yet cannot be hidden).
    """
    names = [cwd / name for name in PROJECT_FILES]
    after = names[names.index(found) + 1 :] if found in names else []
    for candidate in [*after, user_dir / USER_CONFIG_FILE]:
        if candidate.is_file():
            return candidate
    return None


def resolve_user_dir(given: Path | None, env: Mapping[str, str] | None = None) -> Path:
    """``given``, or the default user config directory for ``env``.

    Callers take a parameter named ``user_config_dir``, which hides the function of that name inside them.
    """
    return given if given is not None else user_config_dir(env)
