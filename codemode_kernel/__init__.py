"""codemode-kernel: every MCP tool as a typed Python function, for people and LLMs in Jupyter."""

from .errors import (
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
from .toolspec import ToolSpec

__version__ = "0.1.0"

__all__ = [
    "CodeModeError",
    "ConfigError",
    "ServerError",
    "ToolArgumentError",
    "ToolError",
    "ToolNameCollisionError",
    "ToolSpec",
    "ToolTimeoutError",
    "UnknownToolError",
    "UntrustedConfigError",
]
