"""codemode-kernel: every MCP tool as a typed Python function, for people and LLMs in Jupyter.

The public API is the names below; every module path may change.
"""

from typing import TYPE_CHECKING

from .core.errors import (
    AgentError,
    ArtifactError,
    ArtifactNotFoundError,
    CodeModeError,
    ConfigError,
    LLMAuthError,
    LLMError,
    LLMModelNotFoundError,
    LLMUnreachableError,
    ServerError,
    ToolArgumentError,
    ToolError,
    ToolNameCollisionError,
    ToolTimeoutError,
    UnknownToolError,
    UntrustedConfigError,
)

if TYPE_CHECKING:
    from ._version import __version__ as __version__
    from .artifacts import Artifact, ArtifactStore
    from .calllog import CallLog, CallRecord
    from .config import CodeModeSettings, Config, ServerConfig, load_config, resolve_code_mode
    from .core.results import Audio, Image, Resource, ResourceLink, ToolResult
    from .core.toolspec import ToolSpec
    from .executor import ExecutionResult, Executor
    from .hub import ServerStatus, ToolHub
    from .toolbox import Toolbox, ToolNamespace

# Imported on first use: a worker process imports this package too, and must not pay for the hub, the
# MCP SDK and pydantic it never uses (docs/architecture.md).
_LAZY = {
    "__version__": "_version",  # a worker needs no version: one module fewer in every prepared worker
    "Artifact": "artifacts",
    "ArtifactStore": "artifacts",
    "CallLog": "calllog",
    "CallRecord": "calllog",
    "CodeModeSettings": "config",
    "Config": "config",
    "ServerConfig": "config",
    "load_config": "config",
    "resolve_code_mode": "config",
    "ExecutionResult": "executor",
    "Executor": "executor",
    "ServerStatus": "hub",
    "ToolHub": "hub",
    "Audio": "core.results",
    "Image": "core.results",
    "Resource": "core.results",
    "ResourceLink": "core.results",
    "ToolResult": "core.results",
    "Toolbox": "toolbox",
    "ToolNamespace": "toolbox",
    "ToolSpec": "core.toolspec",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext codemode_kernel``: the tools and the ``%%codemode`` magics in any IPython shell."""
    from .kernel.extension import attach

    attach(ipython)


__all__ = [
    "AgentError",
    "Artifact",
    "ArtifactError",
    "ArtifactNotFoundError",
    "ArtifactStore",
    "Audio",
    "CallLog",
    "CallRecord",
    "CodeModeError",
    "CodeModeSettings",
    "Config",
    "ConfigError",
    "ExecutionResult",
    "Executor",
    "Image",
    "LLMAuthError",
    "LLMError",
    "LLMModelNotFoundError",
    "LLMUnreachableError",
    "Resource",
    "ResourceLink",
    "ServerConfig",
    "ServerError",
    "ServerStatus",
    "ToolArgumentError",
    "ToolError",
    "ToolHub",
    "ToolNameCollisionError",
    "ToolNamespace",
    "ToolResult",
    "ToolSpec",
    "ToolTimeoutError",
    "Toolbox",
    "UnknownToolError",
    "UntrustedConfigError",
    "load_config",
    "load_ipython_extension",
    "resolve_code_mode",
]
