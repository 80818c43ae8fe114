"""Build and run the MCP server: the Toolbox connects the servers, the Executor runs each program.

The server is the MCP SDK's ``MCPServer``; its ``execute_python`` description is the one ``%%agent``
offers (``agent.build_toolset``), so a host's model reads the same rules and typed stubs as ours.
"""

# No ``from __future__ import annotations``: the SDK reads execute_python's annotations, which name
# a local (its timeout text), so they must be evaluated where the function is defined.

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from ..agent import AgentOptions, build_toolset
from ..agent.prompt import CODE_PARAMETER, EXECUTE_PYTHON, TIMEOUT_PARAMETER
from ..config import CodeModeSettings, load_config, resolve_code_mode
from ..executor import Executor
from ..executor.result import format_result_text
from ..toolbox import Toolbox
from .http import run_http
from .passthrough import add_passthrough_tools
from .record import ExecutionRecord
from .resources import add_artifact_resources
from .selfref import without_self

__all__ = ["LOOPBACK_HOSTS", "Transport", "build_server", "host_refusal", "serve"]

Transport = Literal["stdio", "http"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts HTTP may bind without a bearer token (the only ones, until tokens exist)."""


def host_refusal(host: str) -> str:
    """Why ``host`` is refused: beyond loopback anyone could run programs, and no bearer token exists yet."""
    return (
        f"--host {host}: serving beyond this machine needs a bearer token, which is not implemented yet; "
        "bind 127.0.0.1 (the default), localhost or ::1"
    )


def build_server(toolbox: Toolbox, executor: Executor, settings: CodeModeSettings) -> MCPServer[Any]:
    """The MCP server offering ``execute_python`` over ``toolbox``'s tools, run by ``executor``."""
    toolset = build_toolset(toolbox.models, toolbox.hub.tool_specs(), settings, AgentOptions())
    definition = toolset.execute_python
    assert definition is not None  # settings.enabled is forced on by serve()
    timeout_text = TIMEOUT_PARAMETER.format(timeout=settings.timeout)

    async def execute_python(
        code: Annotated[str, Field(description=CODE_PARAMETER)],
        timeout: Annotated[float | None, Field(ge=1, le=300, description=timeout_text)] = None,
    ) -> Annotated[CallToolResult, ExecutionRecord]:
        result = await executor.arun(code, timeout=timeout)
        return CallToolResult(
            content=[TextContent(type="text", text=format_result_text(result))],
            structured_content=result.to_dict(),
            is_error=result.status not in ("ok", "pending"),
        )

    server: MCPServer[Any] = MCPServer(
        "codemode",
        title="Code Mode",
        instructions="Run Python programs that call the configured MCP servers' tools as typed functions.",
        log_level="WARNING",
    )
    server.add_tool(execute_python, name=EXECUTE_PYTHON, description=definition.description)
    add_passthrough_tools(server, toolbox, settings)
    add_artifact_resources(server, executor.artifacts)
    return server


def serve(
    config_path: str | None = None,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """Connect the configured servers, then serve until the client goes away (stdio) or an interrupt.

    Raises:
        ConfigError: the config cannot be used.
        ValueError: ``host`` is not loopback (no bearer token exists yet).
    """
    if transport == "http" and host not in LOOPBACK_HOSTS:
        raise ValueError(host_refusal(host))
    config, _itself = without_self(load_config(config_path))
    # Serving code mode is the point of this command, so it is on even if the config leaves it off.
    settings = resolve_code_mode(config, None).model_copy(update={"enabled": True})
    with Toolbox(config) as toolbox, Executor(toolbox, settings=settings) as executor:
        toolbox.wait_for_servers()  # the description lists every tool: wait for slow servers first
        server = build_server(toolbox, executor, settings)
        if transport == "stdio":
            server.run("stdio")
        else:
            run_http(server, host=host, port=port)
