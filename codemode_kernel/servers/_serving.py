"""What every demo server shares: its command line, its transports and how it documents its tools.

The three demo servers are started like any third-party MCP server (``python -m ... --transport stdio``),
so the kernel exercises the same code path for them as for the servers a user configures.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

from mcp.server import MCPServer

__all__ = ["DEFAULT_HOST", "HTTP_PATH", "Transport", "build_parser", "run_main", "serve", "tool_description"]

Transport = Literal["stdio", "http"]

DEFAULT_HOST = "127.0.0.1"
HTTP_PATH = "/mcp"


def build_parser(prog: str, description: str, default_port: int) -> argparse.ArgumentParser:
    """Return an argument parser that already knows ``--transport``, ``--host`` and ``--port``.

    Each server adds its own options (``--root``, ``--db``) to the parser it gets back, so the transport
    options are spelled the same way everywhere.

    Args:
        prog: The program name shown by ``--help`` (``python -m codemode_kernel.servers.weather``).
        description: One paragraph on what the server offers.
        default_port: The HTTP port used when ``--port`` is not given; each server has its own, so all
            three can run over HTTP side by side.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default) talks JSON-RPC over stdin/stdout; http serves Streamable HTTP on HOST:PORT/mcp",
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"HTTP interface to bind (default {DEFAULT_HOST})"
    )
    parser.add_argument("--port", type=int, default=default_port, help=f"HTTP port (default {default_port})")
    return parser


def serve(server: MCPServer[Any], transport: Transport, host: str, port: int) -> None:
    """Run ``server`` until its client goes away (stdio) or it is interrupted (http).

    Over stdio the server returns when stdin reaches end of file, so a client that closes the pipe or dies
    does not leave an orphan behind. Nothing but JSON-RPC may go to stdout there; the address line for HTTP
    goes to stderr for the same reason.

    Args:
        server: The server to run.
        transport: ``"stdio"`` or ``"http"`` (Streamable HTTP at ``http://HOST:PORT/mcp``).
        host: Interface to bind for HTTP.
        port: Port to bind for HTTP.
    """
    if transport == "stdio":
        server.run("stdio")
        return
    print(
        f"{server.name}: serving MCP over Streamable HTTP at http://{host}:{port}{HTTP_PATH}", file=sys.stderr
    )
    # Ctrl-C is how a person stops a server started by hand; a traceback would suggest a crash.
    with contextlib.suppress(KeyboardInterrupt):
        server.run("streamable-http", host=host, port=port, streamable_http_path=HTTP_PATH)


def tool_description(fn: Callable[..., Any]) -> str:
    """Return the function's docstring without its source indentation, as the tool description.

    The SDK publishes ``__doc__`` verbatim; a model (and the generated Python stubs) should not see
    the four-space indentation of the source file.

    Args:
        fn: A tool function whose docstring is written for the model that will call it.
    """
    return inspect.cleandoc(fn.__doc__ or "")


def run_main(
    build: Callable[[argparse.Namespace], MCPServer[Any]],
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
) -> None:
    """Parse ``argv``, build the server from the options and serve it: the body of every ``main()``.

    Args:
        build: Makes the server from the parsed options; it may call ``parser.error`` for bad ones.
        parser: The parser from :func:`build_parser`, with the server's own options added.
        argv: The arguments without the program name; ``None`` means ``sys.argv[1:]``.
    """
    args = parser.parse_args(argv)
    server = build(args)
    serve(server, args.transport, args.host, args.port)
