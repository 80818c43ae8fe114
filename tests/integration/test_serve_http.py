"""``codemode serve --transport http`` guarded as the MCP spec asks: Host and Origin checks, a bearer token.

Two real served processes, each shared by its tests: one on loopback with no token (where DNS rebinding is
the threat) and one on 0.0.0.0, which must require a token and print the one it generated.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer

from codemode_kernel.serve.http import TOKEN_ENV, http_access, run_http
from tests.conftest import free_port
from tests.integration.serve_support import demo_server, served_http, write_serve_config
from tests.integration.test_serve import _check_listing, _check_two_servers

pytestmark = pytest.mark.integration

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOKEN_LINE = re.compile(r"^\s*Authorization: Bearer (\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Served:
    """One ``codemode serve --transport http`` process: its port and what it wrote on stderr."""

    port: int
    stderr_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def post(self, **headers: str) -> httpx2.Response:
        """An MCP initialize request, as a browser or a client would send it, with ``headers`` added."""
        extra = {name.replace("_", "-"): value for name, value in headers.items()}
        return httpx2.post(self.url, json=INITIALIZE, headers={**MCP_HEADERS, **extra}, timeout=30)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace of test_serve.py's ``project``: weather and workspace demo servers, a note, a home."""
    root = tmp_path_factory.mktemp("serve_http")
    (root / "note.txt").write_text("remember the umbrella\n")
    workspace = demo_server("workspace", "--root", str(root))
    write_serve_config(root, {"weather": demo_server("weather"), "workspace": workspace})
    return root


@contextmanager
def _serving(project: Path, name: str, *extra: str) -> Iterator[Served]:
    """Serve over HTTP with ``extra`` options; stopped with Ctrl-C, exit 0 (serve_env sets no token)."""
    log = f"serve-{name}.stderr.log"
    with served_http(project, project / "serve.json", *extra, log=log) as (_, url):
        yield Served(urlsplit(url).port or 0, project / log)


@pytest.fixture(scope="module")
def loopback(project: Path) -> Iterator[Served]:
    """The default bind (127.0.0.1, no token), with a reverse proxy's name and a web app's origin allowed."""
    allowed = ("--allow-host", "proxy.example", "--allow-origin", "https://App.example/")
    with _serving(project, "loopback", *allowed) as served:
        yield served


@pytest.fixture(scope="module")
def everywhere(project: Path) -> Iterator[Served]:
    """Bound to every interface with no token variable set: a token is generated."""
    with _serving(project, "everywhere", "--host", "0.0.0.0") as served:
        yield served


@asynccontextmanager
async def _client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, sending ``headers`` with every request."""
    timeout = httpx2.Timeout(30, read=300)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def _refusal(response: httpx2.Response, status: int, error: str) -> str:
    """Check ``response`` is the JSON refusal ``error`` with ``status``; its description."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error
    description: str = body["error_description"]
    return description


# -- loopback, no token: DNS rebinding and cross-origin pages are the threat ------------------------


def test_loopback_needs_no_token_and_answers_its_own_names(loopback: Served) -> None:
    assert "no token (loopback only)" in loopback.stderr()
    assert "Bearer" not in loopback.stderr()
    for host in (
        f"127.0.0.1:{loopback.port}",
        f"localhost:{loopback.port}",
        "proxy.example",
        "proxy.example:443",
    ):
        assert loopback.post(Host=host).status_code == 200, host

    async def session() -> None:
        async with Client(loopback.url) as client:  # no Origin, no token: a desktop host
            await _check_listing(client)

    anyio.run(session)


def test_loopback_refuses_a_rebound_name(loopback: Served) -> None:
    # A page at http://evil.example:PORT whose name now resolves to 127.0.0.1: same-origin to the
    # browser, so only the Host header shows the request is not meant for this server.
    rebound = loopback.post(
        Host=f"evil.example:{loopback.port}", Origin=f"http://evil.example:{loopback.port}"
    )
    description = _refusal(rebound, 421, "invalid_host")
    assert "evil.example" in description and "--allow-host" in description
    _refusal(loopback.post(Host=f"127.0.0.1:{loopback.port + 1}"), 421, "invalid_host")  # another port
    assert "invalid_host" in loopback.stderr()  # whoever runs the server sees why


def test_loopback_refuses_foreign_origins_and_takes_its_own(loopback: Served) -> None:
    description = _refusal(loopback.post(Origin="http://evil.example"), 403, "invalid_origin")
    assert "http://evil.example" in description and "--allow-origin" in description
    _refusal(loopback.post(Origin="null"), 403, "invalid_origin")  # a sandboxed frame or a file
    _refusal(loopback.post(Origin=f"http://localhost:{loopback.port}"), 403, "invalid_origin")  # not ours
    assert loopback.post(Origin=f"http://127.0.0.1:{loopback.port}").status_code == 200  # same origin
    assert loopback.post(Origin="https://app.example").status_code == 200  # --allow-origin


# -- every interface: a token is required, generated and printed -----------------------------------


def test_everywhere_prints_one_generated_token(everywhere: Served) -> None:
    tokens = TOKEN_LINE.findall(everywhere.stderr())
    assert len(tokens) == 1 and len(tokens[0]) >= 32
    assert "set $CODEMODE_SERVE_TOKEN to choose one" in everywhere.stderr()


def test_everywhere_refuses_requests_without_the_token(everywhere: Served) -> None:
    missing = everywhere.post()
    description = _refusal(missing, 401, "token_required")
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="codemode"'
    assert "Authorization: Bearer" in description and "printed when it started" in description
    wrong = everywhere.post(Authorization="Bearer not-the-token")
    _refusal(wrong, 401, "invalid_token")
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    token = TOKEN_LINE.findall(everywhere.stderr())[0]
    _refusal(everywhere.post(Authorization=f"Basic {token}"), 401, "token_required")
    # The Host check runs first, token or not: a rebound name stays refused.
    rebound = everywhere.post(Host=f"evil.example:{everywhere.port}", Authorization=f"Bearer {token}")
    _refusal(rebound, 421, "invalid_host")


def test_everywhere_serves_a_client_with_the_printed_token(everywhere: Served) -> None:
    token = TOKEN_LINE.findall(everywhere.stderr())[0]
    bearer = f"Bearer {token}"
    assert everywhere.post(Host=f"127.0.0.1:{everywhere.port}", Authorization=bearer).status_code == 200

    async def session() -> None:
        async with _client(everywhere.url, {"Authorization": bearer}) as client:
            await _check_listing(client)
            await _check_two_servers(client)

    anyio.run(session)


# -- the rules, without a server -------------------------------------------------------------------


def test_when_a_token_is_required_and_where_it_comes_from() -> None:
    assert http_access("127.0.0.1", environ={}).token is None  # loopback: none asked
    from_env = http_access("127.0.0.1", environ={TOKEN_ENV: " s3cret-from-env \n"})
    assert (from_env.token, from_env.generated) == ("s3cret-from-env", False)  # set: required even here
    named = http_access("localhost", token_env="MY_TOKEN", environ={"MY_TOKEN": "mine", TOKEN_ENV: "other"})
    assert (named.token, named.token_env) == ("mine", "MY_TOKEN")
    asked = http_access("::1", token_env="MY_TOKEN", environ={})  # asked for, but unset: made up
    assert asked.generated and asked.token is not None
    beyond = http_access("0.0.0.0", environ={TOKEN_ENV: ""})  # empty counts as unset
    assert beyond.generated and beyond.token is not None and len(beyond.token) >= 32
    assert http_access("0.0.0.0", environ={}).token != beyond.token


def test_allowed_hosts_and_origins_are_checked() -> None:
    access = http_access(
        "127.0.0.1", allow_hosts=["Proxy.Example:8443"], allow_origins=["HTTPS://App.example/"]
    )
    assert access.allow_hosts == ("proxy.example:8443",) and access.allow_origins == ("https://app.example",)
    with pytest.raises(ValueError, match=re.escape("--allow-host 'https://proxy.example'")):
        http_access("127.0.0.1", allow_hosts=["https://proxy.example"])
    with pytest.raises(ValueError, match=re.escape("--allow-origin 'app.example'")):
        http_access("127.0.0.1", allow_origins=["app.example"])
    with pytest.raises(ValueError, match="without a path"):
        http_access("127.0.0.1", allow_origins=["https://app.example/mcp"])


def test_run_http_will_not_serve_beyond_loopback_without_a_token() -> None:
    with pytest.raises(ValueError, match="requires a bearer token"):
        run_http(MCPServer("t"), host="0.0.0.0", port=free_port())
