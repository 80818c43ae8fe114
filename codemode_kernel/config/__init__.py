"""Configuration: the MCP servers to connect to, code-mode settings, models, and where they came from.

It reads the files users already have (Claude Desktop, Cursor, Claude Code ``.mcp.json``, VS Code
``.vscode/mcp.json``) as well as codemode's own ``codemode.json``; docs/configuration.md is the reference.
Only the names below are public; the modules of this package are not.
"""

from .builtin import default_config
from .codemode import resolve_code_mode
from .discovery import find_config, user_config_dir
from .loader import ProjectConfig, is_trusted, load_config, project_config, trust_config
from .models import (
    CodeModeSettings,
    Config,
    ConfigOrigin,
    Defaults,
    ModelConfig,
    OAuthSettings,
    Relaxation,
    SandboxSettings,
    ServerConfig,
    ServeSettings,
    Transport,
)
from .relaxations import relaxations_report

__all__ = [
    "CodeModeSettings",
    "Config",
    "ConfigOrigin",
    "Defaults",
    "ModelConfig",
    "OAuthSettings",
    "ProjectConfig",
    "Relaxation",
    "SandboxSettings",
    "ServeSettings",
    "ServerConfig",
    "Transport",
    "default_config",
    "find_config",
    "is_trusted",
    "load_config",
    "project_config",
    "relaxations_report",
    "resolve_code_mode",
    "trust_config",
    "user_config_dir",
]
