"""Loading a config file: read, parse (JSONC), validate, expand, check trust, and build a :class:`Config`.

Two families of files are read. codemode's own format (``codemode.json``, the user config, or any file
with ``defaults``, ``models``, ``executor`` or ``workspace``) holds servers and settings. Other tools' files
(``.mcp.json``, ``.vscode/mcp.json``, Claude Desktop's file) are read for their servers only; their other
top-level keys are left alone, and ``defaults`` / ``models`` / ``executor`` then come from the user config.

Any mistake fails the whole load with a ConfigError that names the file, the JSON path and the fix: a
kernel that starts with half the servers is harder to understand than one that says what to change.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ..core.errors import ConfigError, UntrustedConfigError
from .builtin import default_config
from .codemode import check_select_models
from .discovery import USER_CONFIG_FILE, find_config, resolve_user_dir, shadowed_config
from .entries import load_server
from .executor_choice import ADDRESS_FORMS, address_problem
from .expand import Expander
from .jsonpath import join
from .jsontext import DuplicateKey, load_json_bytes
from .models import (
    Config,
    ConfigModel,
    ConfigOrigin,
    Defaults,
    ExecutorSettings,
    ModelConfig,
    Relaxation,
    ServerConfig,
)
from .relaxations import server_relaxations, server_risks, settings_relaxations
from .trust import TrustRecord, check_trust, make_record, remember_trust, trust_key
from .validation import json_kind, unknown_key_warnings, validate

__all__ = ["ProjectConfig", "is_trusted", "load_config", "project_config", "trust_config"]

logger = logging.getLogger("codemode_kernel.config")

_SETTINGS_KEYS = ("defaults", "models", "executor", "workspace")
# What another tool's file takes from the user config: every setting but the workspace.
_USER_SETTINGS_KEYS = ("defaults", "models", "executor")
_TOP_LEVEL_KEYS = ("mcpServers", "servers", *_SETTINGS_KEYS, "$schema")

# Top-level keys whose null would otherwise read as "not set"; a null there is more likely a mistake.
_NULL_FIXES = {
    "mcpServers": 'write "mcpServers": {} for no servers, or name them: {"weather": {"command": "..."}}',
    "servers": 'write "servers": {} for no servers, or name them: {"weather": {"command": "..."}}',
    "workspace": 'remove "workspace" to use the working directory, or write the path of a directory',
}


class _FileLayout(ConfigModel):
    """The top level of a config file, for validation and for the unknown-key check of codemode's format."""

    mcp_servers: dict[str, Any] | None = None
    servers: dict[str, Any] | None = None
    defaults: Defaults = Defaults()
    models: list[ModelConfig] = Field(default_factory=list)
    executor: ExecutorSettings = ExecutorSettings()
    workspace: str | None = None
    schema_: str | None = Field(default=None, validation_alias="$schema")


@dataclass(frozen=True)
class _Document:
    """A config file as read: its path, the name messages use for it, its bytes and its JSON object.

    ``duplicates`` lists the keys written more than once (JSON keeps the last; see ``_check_duplicates``).
    """

    path: Path
    display: str
    content: bytes
    data: dict[str, Any]
    duplicates: tuple[DuplicateKey, ...] = ()


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    user_config_dir: Path | None = None,
) -> Config:
    """Find and load the configuration (see :func:`find_config` for the search order).

    With no file found, the built-in demo servers. ``cwd``, ``env`` and ``user_config_dir`` default to the
    process's working directory, ``os.environ`` and ``$XDG_CONFIG_HOME/codemode``. Raises ConfigError for
    any mistake, and UntrustedConfigError for a project file that would start commands and is not trusted.
    """
    cwd = (Path.cwd() if cwd is None else cwd).absolute()
    env = os.environ if env is None else env
    user_dir = resolve_user_dir(user_config_dir, env)
    found, origin = find_config(path, cwd=cwd, env=env, user_config_dir=user_dir)
    if found is None:
        return default_config(cwd)
    config, _ = _load_file(found, origin, cwd=cwd, env=env, user_dir=user_dir)
    for warning in config.warnings:
        logger.warning("%s", warning)
    return config


@dataclass(frozen=True)
class ProjectConfig:
    """A project config as a kernel in its folder would load it, and what trusting it would allow.

    ``risks`` lists the commands it starts, the remote servers it connects to and the protections it
    loosens; ``record`` is what the trust store would remember (trust.py).
    """

    config: Config
    key: Path
    record: TrustRecord
    risks: list[str]

    def trust(self, *, user_config_dir: Path | None = None) -> Path:
        """Remember exactly what was loaded (and shown) as trusted; returns the trust store's path."""
        return remember_trust(self.key, self.record, user_config_dir=user_config_dir)


def project_config(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    user_config_dir: Path | None = None,
) -> ProjectConfig:
    """Load the project config at ``path`` without checking trust, for ``codemode trust`` to show and trust.

    A file with mistakes is a ConfigError: it is reported, never trusted.
    """
    key = trust_key(path)
    if not key.is_file():
        raise ConfigError(
            "file not found" if not key.exists() else "is not a file",
            file=str(key),
            fix="check the path: only an existing config file can be trusted",
        )
    env = os.environ if env is None else env
    user_dir = resolve_user_dir(user_config_dir, env)
    folder = _workspace_folder(key)
    config, record = _load_file(key, "project", cwd=folder, env=env, user_dir=user_dir, check=False)
    assert record is not None
    display = _display(key, folder)
    risks = server_risks(config.servers) + [
        f"{r.setting}: {r.effect}" for r in config.relaxations if r.file == display
    ]
    return ProjectConfig(config, key, record, risks)


def trust_config(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    user_config_dir: Path | None = None,
) -> Path:
    """Trust the config file at ``path`` as it is now; returns the trust store it was written to.

    What is trusted is what the loader checks (trust.py): the file's bytes, where it really is, and the
    project files its servers run. Trusting again after a change replaces the old entry.
    """
    return project_config(path, env=env, user_config_dir=user_config_dir).trust(
        user_config_dir=user_config_dir
    )


def is_trusted(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    user_config_dir: Path | None = None,
) -> bool:
    """Whether the project config at ``path`` would be used as it is now (trusted, nothing changed)."""
    project = project_config(path, env=env, user_config_dir=user_config_dir)
    return check_trust(project.key, project.record, user_config_dir=user_config_dir).trusted


def _load_file(
    path: Path,
    origin: ConfigOrigin,
    *,
    cwd: Path,
    env: Mapping[str, str],
    user_dir: Path,
    check: bool = True,
) -> tuple[Config, TrustRecord | None]:
    """Load one file; for a project file, also the record trust compares (checked unless ``check=False``)."""
    doc = _read(path, origin, cwd)
    user_file = user_dir / USER_CONFIG_FILE
    own_format = _is_codemode_format(doc, user_file)
    expander = Expander(
        env=env, file=doc.display, workspace_folder=_workspace_folder(path), base_dir=path.parent
    )
    servers_key = _servers_key(doc)
    keys = _TOP_LEVEL_KEYS if own_format else (servers_key,) if servers_key else ()
    duplicates = _check_duplicates(doc, keys=keys, servers_key=servers_key)
    layout, warnings = _read_layout(doc, keys=keys, warn_unknown=own_format)
    warnings = duplicates + warnings
    if not own_format and servers_key is None:
        warnings.append(f'{doc.display}: no "mcpServers" or "servers" object; no servers are configured')
    raw_servers = (layout.mcp_servers if servers_key == "mcpServers" else layout.servers) or {}
    servers = {}
    for name, raw in raw_servers.items():
        server, server_warnings = load_server(name, raw, join(servers_key or "", name), expander)
        servers[name] = server
        warnings += server_warnings

    defaults, models, executor, workspace = layout.defaults, layout.models, layout.executor, cwd
    settings_source: Path | None = path
    relaxations: list[Relaxation] = []
    if own_format:
        if layout.workspace is not None:
            workspace = _workspace(layout.workspace, doc, expander)
        relaxations = settings_relaxations(
            file=doc.display,
            folder=_workspace_folder(path),
            workspace=workspace if layout.workspace is not None else None,
            code_mode=defaults.code_mode,
            models=models,
            executor=executor,
        )
    elif user_file.is_file():
        # Another tool's file names the servers; code-mode settings still come from the user's own config.
        user_doc = _read(user_file, "user", cwd)
        user_keys = _USER_SETTINGS_KEYS
        user_warnings = _check_duplicates(user_doc, keys=user_keys, servers_key=None)
        user_layout, layout_warnings = _read_layout(user_doc, keys=user_keys, warn_unknown=True)
        defaults, models, settings_source = user_layout.defaults, user_layout.models, user_file
        executor = user_layout.executor
        warnings += user_warnings + layout_warnings
        relaxations = settings_relaxations(
            file=user_doc.display,
            folder=user_dir,
            workspace=None,
            code_mode=defaults.code_mode,
            models=models,
            executor=executor,
        )
    else:
        settings_source = None
    relaxations += server_relaxations(file=doc.display, servers=servers, key=servers_key or "mcpServers")

    record = None
    if origin == "project":
        own = [relaxation for relaxation in relaxations if relaxation.file == doc.display]
        record = make_record(path, doc.content, servers, cwd=cwd, roots=(_workspace_folder(path), workspace))
        if check:
            replaced = shadowed_config(path, cwd, user_dir)
            _check_trust(
                doc, servers, own, record, user_dir, replaced=_display(replaced, cwd) if replaced else None
            )
    config = Config(
        servers=servers,
        defaults=defaults,
        models=models,
        executor=executor,
        workspace=workspace,
        source=path,
        settings_source=settings_source,
        origin=origin,
        warnings=warnings,
        relaxations=relaxations,
    )
    check_select_models(config, file=doc.display if settings_source == path else None)
    return config, record


def _read(path: Path, origin: ConfigOrigin, cwd: Path) -> _Document:
    """Read and parse one file; every way this fails is a ConfigError that says what to do."""
    display = _display(path, cwd)
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        fix = {
            "explicit": "check the path given with --config",
            "env": "check the path in CODEMODE_CONFIG, or unset it to search the usual places",
        }.get(origin, "check that the file exists")
        raise ConfigError("file not found", file=display, fix=fix) from None
    except IsADirectoryError:
        raise ConfigError("is a directory", file=display, fix="name the JSON file inside it") from None
    except OSError as exc:
        raise ConfigError(
            f"cannot be read ({exc.strerror or exc})", file=display, fix="check its permissions"
        ) from None
    document = load_json_bytes(
        content,
        file=display,
        fix="correct the JSON at that position (comments and trailing commas are allowed)",
        empty_fix='write {"mcpServers": {}} or delete the file',
        comments=True,
    )
    data = document.data
    if not isinstance(data, dict):
        raise ConfigError(
            f"must be a JSON object, not {json_kind(data)}",
            file=display,
            fix='write the servers as {"mcpServers": {"name": {"command": "...", "args": []}}}',
        )
    return _Document(path=path, display=display, content=content, data=data, duplicates=document.duplicates)


def _is_codemode_format(doc: _Document, user_file: Path) -> bool:
    return (
        doc.path.name == "codemode.json"
        or doc.path.resolve() == user_file.resolve()
        or any(key in doc.data for key in _SETTINGS_KEYS)
    )


def _servers_key(doc: _Document) -> str | None:
    if "mcpServers" in doc.data and "servers" in doc.data:
        raise ConfigError(
            'has both "mcpServers" and "servers"',
            file=doc.display,
            path="servers",
            fix='keep one: "mcpServers" (Claude, Cursor) or "servers" (VS Code)',
        )
    return next((key for key in ("mcpServers", "servers") if key in doc.data), None)


def _check_duplicates(doc: _Document, *, keys: tuple[str, ...], servers_key: str | None) -> list[str]:
    """Refuse a server written twice; return warnings for the other keys of ``keys`` written twice.

    JSON keeps the last of two equal keys, here and in the JavaScript tools that write these files. A
    server lost that way is refused, since nothing would show where it went; a key repeated inside an
    entry or a setting is a warning, so the file still means here what it means to those tools.
    """
    warnings = []
    for duplicate in doc.duplicates:
        parts = duplicate.parts
        if parts[0] not in keys:
            continue
        path = join("", *parts)
        again = f"line {duplicate.line}, column {duplicate.column}"
        if parts[0] == servers_key and len(parts) <= 2:
            raise ConfigError(
                f"is written more than once (again at {again}); only the last would be used",
                file=doc.display,
                path=path,
                fix=f'put every server in one "{servers_key}" object'
                if len(parts) == 1
                else "give each server its own name, or delete the entry you do not want",
            )
        warnings.append(
            f"{doc.display}: {path}: written more than once (again at {again}); the last one is used"
        )
    return warnings


def _read_layout(
    doc: _Document, *, keys: tuple[str, ...], warn_unknown: bool
) -> tuple[_FileLayout, list[str]]:
    """Validate the top-level ``keys`` of a file; warn about unknown keys when it is in codemode's format.

    Other tools' files carry settings of their own, so only their servers key is read and nothing is said
    about the rest.
    """
    warnings = []
    if warn_unknown:
        warnings = unknown_key_warnings(doc.data, _FileLayout, file=doc.display, path="")
        models = doc.data.get("models")
        for index, entry in enumerate(models if isinstance(models, list) else []):
            if isinstance(entry, dict):
                warnings += unknown_key_warnings(
                    entry, ModelConfig, file=doc.display, path=join("models", index)
                )
    for key in keys:
        if key in _NULL_FIXES and key in doc.data and doc.data[key] is None:
            raise ConfigError("is null", file=doc.display, path=key, fix=_NULL_FIXES[key])
    data = {key: doc.data[key] for key in keys if key in doc.data}
    layout = validate(_FileLayout, data, file=doc.display, path="")
    _check_unique_refs(layout.models, doc)
    _check_executor_address(layout.executor, doc)
    return layout, warnings


def _check_unique_refs(models: list[ModelConfig], doc: _Document) -> None:
    seen: dict[str, int] = {}
    for index, model in enumerate(models):
        if model.ref in seen:
            raise ConfigError(
                f'duplicate ref "{model.ref}" (models[{seen[model.ref]}] has it too)',
                file=doc.display,
                path=join("models", index, "ref"),
                fix="give every model its own ref",
            )
        seen[model.ref] = index


def _check_executor_address(executor: ExecutorSettings, doc: _Document) -> None:
    """A Ray address is checked when the file is read, not when the first program is sent there."""
    problem = None if executor.address is None else address_problem(executor.address)
    if problem is not None:
        raise ConfigError(
            problem, file=doc.display, path="executor.address", fix=f"write {ADDRESS_FORMS}, or remove it"
        )


def _workspace(value: str, doc: _Document, expander: Expander) -> Path:
    workspace = expander.expand_path(value, "workspace")
    if not workspace.is_dir():
        raise ConfigError(
            f"directory {workspace} does not exist",
            file=doc.display,
            path="workspace",
            fix=f"create it (mkdir -p {shlex.quote(str(workspace))}), or correct the path "
            f"(a relative path starts at the directory of {doc.display})",
        )
    return workspace.resolve()


def _check_trust(
    doc: _Document,
    servers: dict[str, ServerConfig],
    relaxations: list[Relaxation],
    record: TrustRecord,
    user_dir: Path,
    *,
    replaced: str | None = None,
) -> None:
    """Refuse a project file that would act for the user, unless it is trusted as it is now.

    Acting for the user: starting commands, connecting to remote servers (a URL and headers of the file's
    choosing decide where a secret goes), or loosening a protection (relaxations.py). A file that does none
    of these (no servers, harmless settings) is used as it is, unless it takes the place of another config
    (``replaced``): then the servers the user chose would silently vanish.
    """
    starters = [n for n, s in servers.items() if s.transport == "stdio" and not s.disabled]
    remotes = [n for n, s in servers.items() if s.transport != "stdio" and not s.disabled]
    if not starters and not remotes and not relaxations and replaced is None:
        return
    check = check_trust(trust_key(doc.path), record, user_config_dir=user_dir)
    if check.trusted:
        return
    if check.state == "changed":
        what = f"has changed since you trusted it ({'; '.join(check.changes)})"
    else:
        what = "is not trusted yet"
    risks = []
    if starters:
        risks.append(f"start commands (servers {', '.join(map(_quoted, starters))})")
    if remotes:
        risks.append(f"connect to remote servers ({', '.join(map(_quoted, remotes))})")
    if relaxations:
        loosened = "; ".join(f"{r.setting}: {r.effect}" for r in relaxations)
        risks.append(f"loosen protections ({loosened})")
    if replaced is not None:
        risks.append(f"be used instead of {replaced}")
    raise UntrustedConfigError(
        f"{what}; it would {' and '.join(risks)}",
        file=doc.display,
        fix=f"read the file, then run: codemode trust {shlex.quote(str(trust_key(doc.path)))}",
    )


def _quoted(name: str) -> str:
    return f'"{name}"'


def _workspace_folder(path: Path) -> Path:
    """Return what ``${workspaceFolder}`` means: the folder holding ``.vscode/``, else the file's folder."""
    return path.parent.parent if path.parent.name == ".vscode" else path.parent


def _display(path: Path, cwd: Path) -> str:
    """Name the file for messages: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
