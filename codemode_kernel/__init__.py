"""codemode-kernel: every MCP tool as a typed Python function, for people and LLMs in Jupyter.

The public API is the names below; every module path may change.
"""

from .artifacts import Artifact, ArtifactStore
from .calllog import CallLog, CallRecord
from .config import CodeModeSettings, Config, ServerConfig, load_config, resolve_code_mode
from .errors import (
    ArtifactError,
    ArtifactNotFoundError,
    CodeModeError,
    ConfigError,
    ServerError,
    ToolArgumentError,
    ToolError,
    ToolNameCollisionError,
    ToolTimeoutError,
    UnknownToolError,
    UntrustedConfigError,
)
from .executor import ExecutionResult, Executor
from .hub import ServerStatus, ToolHub
from .results import Audio, Image, Resource, ResourceLink, ToolResult
from .toolbox import Toolbox, ToolNamespace
from .toolspec import ToolSpec

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext codemode_kernel``: the tools and the ``%%codemode`` magics in any IPython shell."""
    from .kernel.extension import attach

    attach(ipython)


__all__ = [
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
