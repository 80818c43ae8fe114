"""A server's schema that points ``$ref`` at a file or an address: the kernel neither reads nor fetches it.

jsonschema, left to its defaults, retrieves a ``$ref`` it cannot find in the schema with ``urlopen``: a
file on the kernel's host (whose content then shows in a validation message) or any address, with no
timeout, on the hub's event loop. The kernel checks servers' schemas with an empty registry instead, so
only references inside the schema resolve. The server (tests/servers/remote_refs_server.py) is real and
so are its calls, through the toolbox and a program; a listener counts the requests it gets.

jsonschema's retrieval warns (DeprecationWarning) after it has read; outside the test suite nothing
turns that warning into an error, so it is ignored here too, as it would be for a user.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Automatically retrieving remote references:DeprecationWarning"),
]

SERVER = Path(__file__).parents[1] / "servers" / "remote_refs_server.py"
SECRET = "secret-token-xyz"
SECRET_SCHEMA = {"type": "object", "required": [SECRET]}
"""What the referenced file and address hold: read, it would show the secret in a validation message."""


class SchemaListener:
    """An HTTP server on 127.0.0.1 that answers every GET with a schema and remembers the paths asked."""

    def __init__(self) -> None:
        requests: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                body = json.dumps(SECRET_SCHEMA).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.requests = requests
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/schema.json"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> SchemaListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def listener() -> Iterator[SchemaListener]:
    with SchemaListener() as running:
        yield running


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host") / "secret.json"
    path.write_text(json.dumps(SECRET_SCHEMA))
    return path


@pytest.fixture(scope="module")
def toolbox(
    tmp_path_factory: pytest.TempPathFactory, secret_file: Path, listener: SchemaListener
) -> Iterator[Toolbox]:
    workspace = tmp_path_factory.mktemp("refs")
    servers = {"refs": {"command": sys.executable, "args": [str(SERVER), secret_file.as_uri(), listener.url]}}
    config = workspace / "codemode.json"
    config.write_text(json.dumps({"mcpServers": servers, "workspace": str(workspace)}))
    with Toolbox(load_config(config)) as tb:
        yield tb


def test_calling_a_tool_whose_input_schema_refers_outside_it_reads_no_file_and_fetches_nothing(
    toolbox: Toolbox, secret_file: Path, listener: SchemaListener, caplog: pytest.LogCaptureFixture
) -> None:
    tools = toolbox.tools
    with caplog.at_level(logging.WARNING, logger="codemode_kernel.hub.validation"):
        assert tools.file_ref(x={}) == {"x": {}}  # sent unchecked: the server still checks its own input
        assert tools.http_ref(x={}) == {"x": {}}
    logged = [record.getMessage() for record in caplog.records]
    assert (
        f'refs/file_ref: inputSchema cannot be used for validation ($ref "{secret_file.as_uri()}" is not '
        "inside the schema: references are resolved only within it, never fetched from a file or the "
        "network); some arguments could not be checked"
    ) in logged, logged
    assert any(
        f'refs/http_ref: inputSchema cannot be used for validation ($ref "{listener.url}"' in m
        for m in logged
    )
    with Executor(toolbox, grace=1.0) as executor:
        result = executor.run("{'file': file_ref(x={'a': 1}), 'http': http_ref(x={'b': 2})}")
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": {"file": {"x": {"a": 1}}, "http": {"x": {"b": 2}}}}
    assert listener.requests == []
    assert SECRET not in json.dumps(result.to_dict())
    # The tool's model says so too, from the listing on.
    warnings = {m.spec.name: m.validator.warning for m in toolbox.models if m.validator is not None}
    assert warnings["file_ref"] == (
        f'refs/file_ref: inputSchema: $ref "{secret_file.as_uri()}" is not inside the schema: references '
        "are resolved only within it, never fetched from a file or the network; arguments that reach it "
        "are sent unchecked"
    )
    assert warnings["http_ref"] is not None and f'"{listener.url}"' in warnings["http_ref"]


def test_a_result_checked_against_an_output_schema_that_refers_outside_it_reads_no_file(
    toolbox: Toolbox, secret_file: Path, listener: SchemaListener
) -> None:
    with Executor(toolbox, grace=1.0) as executor:
        result = executor.run("output_refs(y={}, z={})")
    assert result.status == "ok", result.error
    assert listener.requests == []
    assert SECRET not in json.dumps(result.to_dict())
    (call,) = result.tool_calls
    (warning,) = call["warnings"]
    # The first reference the check reaches is named (y's, the file: properties are checked in order).
    assert warning == (
        f'refs/output_refs: its outputSchema could not be checked ($ref "{secret_file.as_uri()}" is not '
        "inside the schema: references are resolved only within it, never fetched from a file or the network)"
    )
