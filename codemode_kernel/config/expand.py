"""``${VAR}`` expansion in config values, the way Claude Code and VS Code files write it.

Supported: ``${VAR}``, ``${VAR:-default}`` (default when unset or empty), ``${env:VAR}`` (VS Code's spelling,
also with ``:-default``), ``${workspaceFolder}``, ``${userHome}``, and ``$${`` for a literal ``${``. An unset
variable without a default is an error rather than an empty string: a server started with an empty token
fails later, far from the cause. ``${input:...}`` needs VS Code's prompt, which a kernel cannot show.

Variables are looked up in a mapping handed in by the caller (``os.environ`` by default), so tests and
callers never have to change the process environment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ConfigError

__all__ = ["Expander"]

# One pass over the text: an escaped "$${", a complete "${...}", or an opening "${" never closed.
_TOKEN = re.compile(r"\$\$\{|\$\{([^{}]*)\}|\$\{")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VARIABLE = re.compile(rf"(?:env:)?({_NAME})(?::-(.*))?", re.DOTALL)

_SUPPORTED = "${VAR}, ${VAR:-default}, ${env:VAR}, ${workspaceFolder} or ${userHome}"


@dataclass(frozen=True)
class Expander:
    """Expands variables in the values of one config file; errors name ``file`` and the value's JSON path.

    ``workspace_folder`` is what ``${workspaceFolder}`` means: the directory that holds ``.vscode/`` for a
    VS Code file, the config file's directory otherwise. ``base_dir`` is where relative paths start: the
    config file's directory.
    """

    env: Mapping[str, str]
    file: str
    workspace_folder: Path
    base_dir: Path

    def expand(self, text: str, path: str) -> str:
        """``text`` with every variable replaced; a ConfigError at ``path`` for an unset or unknown one."""
        return _TOKEN.sub(lambda match: self._replace(match, path), text)

    def expand_path(self, text: str, path: str) -> Path:
        """Expand a path value, then resolve ``~`` (from HOME) and relative paths (against ``base_dir``)."""
        expanded = self.expand(text, path)
        if expanded == "~" or expanded.startswith("~/"):
            expanded = str(self._home(path)) + expanded[1:]
        return self.base_dir / expanded

    def _replace(self, match: re.Match[str], path: str) -> str:
        token = match.group(0)
        if token == "$${":
            return "${"
        inner = match.group(1)
        if inner is None:
            raise ConfigError(
                'has a "${" that is never closed',
                file=self.file,
                path=path,
                fix='close it with "}", or write "$${" for a literal "${"',
            )
        if inner == "workspaceFolder":
            return str(self.workspace_folder)
        if inner == "userHome":
            return str(self._home(path))
        if inner.startswith("input:"):
            raise self._input_error(inner.removeprefix("input:"), path)
        variable = _VARIABLE.fullmatch(inner)
        if variable is None:
            raise ConfigError(
                f'unsupported variable "${{{inner}}}"',
                file=self.file,
                path=path,
                fix=f"write {_SUPPORTED}; $${{ gives a literal ${{",
            )
        name, default = variable.group(1), variable.group(2)
        value = self.env.get(name)
        if value is not None and (value or default is None):
            return value
        if default is not None:
            return default
        raise ConfigError(
            f"${{{name}}} is not set",
            file=self.file,
            path=path,
            fix=f"export {name}=... or write ${{{name}:-default}}",
        )

    def _input_error(self, input_id: str, path: str) -> ConfigError:
        # Suggest an environment variable named after the input, in the usual spelling.
        suggested = re.sub(r"[^A-Za-z0-9]+", "_", input_id).strip("_").upper() or "VALUE"
        return ConfigError(
            f'"${{input:{input_id}}}" asks VS Code to prompt for a value; codemode cannot prompt',
            file=self.file,
            path=path,
            fix=f"use an environment variable instead: write ${{{suggested}}} here, export {suggested}=...",
        )

    def _home(self, path: str) -> Path:
        home = self.env.get("HOME")
        if not home:
            raise ConfigError(
                "refers to the home directory, but HOME is not set",
                file=self.file,
                path=path,
                fix="export HOME=..., or write the path in full",
            )
        return Path(home)
