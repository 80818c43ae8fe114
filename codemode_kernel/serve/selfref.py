"""Keep ``codemode serve`` from starting itself when the config it reads lists ``codemode serve``.

A project's ``.mcp.json`` is written for MCP hosts, so it often names ``codemode serve`` next to the servers
it fronts. ``codemode serve`` reads the same file: were it to start that entry, the child would read the
file again and start another, and so on. Such entries are left out and named (``self_reference_note``).

An entry is this command when its command line, after any wrapper (``uv run``, ``uvx``, ``sh -c "..."``),
runs ``codemode serve`` (``codemode`` by name or path) or ``python -m codemode_kernel.cli serve``.
Disabled entries are never started, so they are kept as they are.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import PurePath, PurePosixPath, PureWindowsPath

from ..config import Config, ServerConfig

__all__ = ["is_codemode_serve", "self_reference_note", "without_self"]

_SCRIPT_NAMES = frozenset({"codemode", "codemode.exe", "codemode-script.py"})
_CLI_MODULE = "codemode_kernel.cli"
_SUBCOMMAND = "serve"


def without_self(config: Config) -> tuple[Config, list[str]]:
    """``config`` without the enabled servers that are ``codemode serve`` itself, and their names.

    The config is returned unchanged (the same object) when it lists none.
    """
    itself = [
        name
        for name, server in config.servers.items()
        if not server.disabled and server.transport == "stdio" and is_codemode_serve(server)
    ]
    if not itself:
        return config, []
    servers = {name: server for name, server in config.servers.items() if name not in itself}
    return config.model_copy(update={"servers": servers}), itself


def is_codemode_serve(server: ServerConfig) -> bool:
    """Whether this stdio server's command line runs ``codemode serve``."""
    if server.command is None:
        return False
    words = _words([server.command, *server.args])
    for i, word in enumerate(words):
        rest = words[i + 1 :]
        if _basename(word) in _SCRIPT_NAMES and rest[:1] == [_SUBCOMMAND]:
            return True
        if word == "-m" and rest[:2] == [_CLI_MODULE, _SUBCOMMAND]:
            return True
        if word == f"-m{_CLI_MODULE}" and rest[:1] == [_SUBCOMMAND]:
            return True
    return False


def self_reference_note(names: Sequence[str], source: PurePath | str | None = None) -> str:
    """The line ``serve`` prints on stderr when it left out ``names`` (those ``without_self`` returned)."""
    quoted = ", ".join(f'"{name}"' for name in names)
    plural = len(names) != 1
    where = f" in {source}" if source is not None else ""
    return (
        f"codemode serve: not starting the server{'s' if plural else ''} {quoted}{where}: "
        f"{'they run' if plural else 'it runs'} codemode serve itself, which would start itself again"
    )


def _words(argv: list[str]) -> list[str]:
    """The command line as words, with each argument holding a whole command (``sh -c "..."``) split."""
    words: list[str] = []
    for arg in argv:
        if any(space in arg for space in (" ", "\t")):
            try:
                words.extend(shlex.split(arg))
                continue
            except ValueError:  # unbalanced quotes: not a command line, just an argument with spaces
                pass
        words.append(arg)
    return words


def _basename(word: str) -> str:
    """The file name of a command, for POSIX and Windows paths alike, lower case."""
    name = PureWindowsPath(word).name if "\\" in word else PurePosixPath(word).name
    return name.lower()
