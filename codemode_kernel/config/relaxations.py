"""Which settings loosen a protection, and what each one lets happen.

Settings are as dangerous as commands: a project file that sets ``workspace: "/"`` makes the home
writable, ``autoApprove: ["*/*"]`` runs destructive tools unasked, and a model whose ``baseUrl`` is someone
else's and whose ``apiKeyEnv`` names ``GITHUB_TOKEN`` sends that token to them with every ``llm()``, and an
``executor`` on a Ray cluster sends every program and its tool results to that cluster's machines. So a
project config with any of these is used only once trusted (trust.py), and ``codemode doctor`` and
``%codemode status`` list every one in force, with the file it comes from.

Only loosening counts: ``approve`` and ``hidden`` can only add questions and hidden paths, and a timeout
within the default bound is a resource, not a protection; a ``maxTimeout`` above that bound is one, since
every worker's CPU-time limit follows it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..core.limits import MAX_TIMEOUT
from .jsonpath import join
from .models import CodeModeSettings, ExecutorSettings, ModelConfig, Relaxation, SandboxSettings, ServerConfig

__all__ = ["relaxations_report", "server_relaxations", "server_risks", "settings_relaxations"]

_LIMITS = (
    ("memory_mb", "memoryMb", "MiB of address space"),
    ("file_size_mb", "fileSizeMb", "MiB per file"),
    ("open_files", "openFiles", "open files"),
    ("max_processes", "maxProcesses", "processes and threads"),
)
_SAFE = SandboxSettings()


def settings_relaxations(
    *,
    file: str,
    folder: Path,
    workspace: Path | None,
    code_mode: CodeModeSettings | None,
    models: Iterable[ModelConfig],
    executor: ExecutorSettings | None = None,
) -> list[Relaxation]:
    """The relaxations of one file's settings; ``folder`` is where the file is (its project)."""
    found: list[Relaxation] = []

    def add(setting: str, effect: str) -> None:
        found.append(Relaxation(file=file, setting=setting, effect=effect))

    if workspace is not None and not _within(workspace, folder):
        add("workspace", f"programs may write {workspace}, outside the project folder {folder}")
    if code_mode is not None:
        for setting, effect in _code_mode(code_mode):
            add(join("defaults.codeMode", *setting), effect)
    for index, model in enumerate(models):
        where = join("models", index)
        destination = model.base_url or f"{model.provider or 'the provider'}'s API"
        if model.base_url is not None:
            effect = f'model "{model.ref}" sends prompts (and its key) to {model.base_url}'
            add(join(where, "baseUrl"), effect)
        if model.api_key_env is not None:
            add(
                join(where, "apiKeyEnv"),
                f'model "{model.ref}" sends ${model.api_key_env} as its key to {destination}',
            )
        if model.code_mode is not None:
            for setting, effect in _code_mode(model.code_mode):
                add(join(where, "codeMode", *setting), f'model "{model.ref}": {effect}')
    if executor is not None and (elsewhere := _executor(executor)) is not None:
        add("executor", elsewhere)
    return found


def relaxations_report(relaxations: Iterable[Relaxation]) -> str:
    """The lines ``codemode doctor`` and ``%codemode status`` show: every loosened protection and its file."""
    lines = [relaxation.describe() for relaxation in relaxations]
    if not lines:
        return "loosened protections: none"
    return "\n".join(
        [f"loosened protections ({len(lines)}, by your settings):", *(f"  {line}" for line in lines)]
    )


def server_relaxations(*, file: str, servers: Mapping[str, ServerConfig], key: str) -> list[Relaxation]:
    """The relaxations of a file's server entries: a server allowed to use the model unasked (sampling).

    ``key`` is where the file lists its servers (``mcpServers``, ``servers``).
    """
    return [
        Relaxation(
            file=file,
            setting=join(key, name, "sampling"),
            effect=f'server "{name}" asks the configured model (on your key) without asking you',
        )
        for name, server in servers.items()
        if not server.disabled and server.sampling == "allow"
    ]


def server_risks(servers: Mapping[str, ServerConfig]) -> list[str]:
    """What a file's enabled servers do on the user's behalf: the commands they start, where they connect."""
    risks = []
    for name, server in servers.items():
        if server.disabled:
            continue
        if server.transport == "stdio":
            risks.append(f'server "{name}" starts {shlex.join([server.command or "", *server.args])}')
        else:
            headers = f" with the headers {', '.join(sorted(server.headers))}" if server.headers else ""
            risks.append(f'server "{name}" connects to {server.url}{headers}')
    return risks


def _code_mode(settings: CodeModeSettings) -> Iterable[tuple[tuple[str | int, ...], str]]:
    sandbox = settings.sandbox
    if sandbox.network:
        yield ("sandbox", "network"), "programs may use the network"
    for index, path in enumerate(sandbox.writable):
        yield ("sandbox", "writable", index), f"programs may write {path}"
    for field, key, unit in _LIMITS:
        value, safe = getattr(sandbox, field), getattr(_SAFE, field)
        if value is None:
            yield ("sandbox", key), f"no limit on {unit} (default {safe})"
        elif value > safe:
            yield ("sandbox", key), f"{value} {unit} (default {safe})"
    if settings.max_timeout > MAX_TIMEOUT:
        yield (
            ("maxTimeout",),
            f"programs may run up to {settings.max_timeout:g} s, and every worker's CPU-time limit follows "
            f"(default {MAX_TIMEOUT:g})",
        )
    for index, pattern in enumerate(settings.auto_approve):
        yield ("autoApprove", index), f"{pattern} runs without asking, destructive or not"
    for index, module in enumerate(settings.preload):
        yield ("preload", index), f"the pre-started worker process imports {module} before its sandbox"


def _executor(executor: ExecutorSettings) -> str | None:
    """Where programs go, when it is not this machine; an address alone counts (a switch to ray uses it)."""
    where = f"the Ray cluster at {executor.address or 'auto'}"
    if executor.backend == "ray":
        return f"programs and their tool results go to the machines of {where}"
    if executor.address is not None:
        return f"programs and their tool results go to the machines of {where} once switched to ray"
    return None


def _within(path: Path, folder: Path) -> bool:
    resolved, root = os.path.realpath(path), os.path.realpath(folder)
    return resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep)
