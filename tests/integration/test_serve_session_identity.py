"""Sessions and session approvals of ``codemode serve`` belong to the client the server issued them to.

One real ``codemode serve --transport http`` with a bearer token (every client holds the same one, as
beyond loopback), npm server-memory behind it (``delete_entities`` says ``destructiveHint: true``) and the
MCP SDK's client. Client A speaks the handshake protocol: it keeps a global in its session ``work`` and
allows ``delete_entities`` for its MCP session. Client B plays the attacker: it knows A's ``Mcp-Session-Id``
and A's session name and tries them on the 2026-07-28 protocol, on the handshake protocol, and after A has
gone. What is checked is what either user would see: B's result, whether A's entity still exists, and who
the record says decided.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

from tests.integration.serve_support import serve_env, served_http, write_serve_config

pytestmark = pytest.mark.integration

TOKEN = secrets.token_urlsafe(24)
SECRET = "secret = 'known only to A'"
PLANT = (
    'create_entities(entities=[{{"name": n, "entityType": "city", "observations": []}} for n in {names!r}])'
)
DELETE = """
try:
    delete_entities(entityNames=[{name!r}])
    outcome = "deleted"
except ToolError as e:
    outcome = str(e)
outcome
"""
LIST = 'sorted(e["name"] for e in read_graph().entities)'


class Answers:
    """An elicitation callback that answers with ``decisions`` in turn and counts the questions."""

    def __init__(self, *decisions: str) -> None:
        self.decisions = list(decisions)
        self.asked = 0

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        assert isinstance(params, ElicitRequestFormParams)
        self.asked += 1
        return ElicitResult(action="accept", content={"decision": self.decisions.pop(0)})


class SessionIds:
    """An httpx2 response hook remembering the ``Mcp-Session-Id`` the server issued to one client."""

    def __init__(self) -> None:
        self.issued: str | None = None

    async def __call__(self, response: httpx2.Response) -> None:
        issued = response.headers.get("mcp-session-id")
        if issued:
            self.issued = issued


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, memory_server_bin: str) -> Iterator[str]:
    """One ``codemode serve --transport http`` holding a bearer token; its URL."""
    root = tmp_path_factory.mktemp("serve-identity")
    memory = {"command": memory_server_bin, "env": {"MEMORY_FILE_PATH": str(root / "memory.jsonl")}}
    config = write_serve_config(root, {"memory": memory}, defaults={"serve": {"sessionIdle": 120}})
    env = dict(serve_env(root), CODEMODE_SERVE_TOKEN=TOKEN)
    with served_http(root, config, env=env) as (_, url):
        yield url


@asynccontextmanager
async def _client(
    url: str,
    mode: str,
    *,
    elicit: ElicitationFnT | None = None,
    session_id: str | None = None,
    ids: SessionIds | None = None,
) -> AsyncIterator[Client]:
    """The SDK's client with the token, sending ``session_id`` as ``Mcp-Session-Id`` if given."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    hooks: dict[str, list[Callable[..., Any]]] = {"response": [ids]} if ids is not None else {}
    timeout = httpx2.Timeout(30, read=120)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks=hooks) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=elicit) as c,
    ):
        yield c


async def _run(client: Client, code: str, session: str | None = None) -> CallToolResult:
    arguments = {"code": code} if session is None else {"code": code, "session": session}
    with anyio.fail_after(60):
        return await client.call_tool("execute_python", arguments)


def _record(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, _text(result)
    return dict(result.structured_content)


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _approval(result: CallToolResult) -> dict[str, Any] | None:
    calls = [c for c in _record(result)["tool_calls"] if c["tool"] == "delete_entities"]
    return calls[0].get("approval") if calls else None


@asynccontextmanager
async def _client_a(url: str, cities: tuple[str, ...], ids: SessionIds) -> AsyncIterator[Client]:
    """Client A: plants ``cities``, keeps SECRET in session ``work``, deletes the first city and allows
    ``delete_entities`` for the rest of its MCP session; ``ids`` learns its ``Mcp-Session-Id``."""
    answers = Answers("allow this tool for this session")
    async with _client(url, "legacy", elicit=answers, ids=ids) as a:
        await _run(a, PLANT.format(names=list(cities)))
        await _run(a, SECRET, session="work")
        first = await _run(a, DELETE.format(name=cities[0]))
        assert _record(first)["value"]["text"] == "deleted" and answers.asked == 1
        assert ids.issued is not None
        yield a


async def _left(client: Client, cities: tuple[str, ...]) -> list[str]:
    """Which of ``cities`` the memory server still has."""
    names = _record(await _run(client, LIST))["value"]["data"]
    return [name for name in cities if name in names]


def _refused_for_the_session_id(result: CallToolResult) -> None:
    """B's call was refused with the rule and the fix, and ran nothing."""
    text = _text(result)
    assert result.is_error, text
    assert "Mcp-Session-Id" in text and "2026-07-28" in text, text
    assert "leave out the Mcp-Session-Id header" in text, text
    assert "known only to A" not in text


def test_on_the_2026_protocol_another_clients_session_id_reaches_neither_its_globals_nor_its_approvals(
    served: str,
) -> None:
    ids = SessionIds()
    cities = ("Oslo", "Lima", "Quito")

    async def scenario() -> None:
        async with _client_a(served, cities, ids) as a:
            assert ids.issued is not None
            async with _client(served, "2026-07-28", session_id=ids.issued) as b:
                _refused_for_the_session_id(await _run(b, "secret", session="work"))
                _refused_for_the_session_id(await _run(b, DELETE.format(name="Lima")))
            async with _client(served, "2026-07-28") as plain:  # the same client without the header
                fresh = await _run(plain, "secret", session="work")
                assert _record(fresh)["error"]["type"] == "NameError"
                assert _record(fresh)["session"].startswith("work~")
                denied = _record(await _run(plain, DELETE.format(name="Lima")))["value"]["text"]
                # Not allowed by A's allowance: asked itself, and it declared no elicitation to answer with.
                assert "cannot answer approval questions (it did not declare MCP form elicitation)" in denied
            assert await _left(a, cities) == ["Lima", "Quito"]  # only A's own deletion happened
            mine = await _run(a, "secret", session="work")
            assert _record(mine)["value"]["text"] == "known only to A"

    anyio.run(scenario)


def test_on_the_handshake_protocol_a_second_client_gets_its_own_session_and_is_asked_itself(
    served: str,
) -> None:
    ids = SessionIds()
    cities = ("Bern", "Rome", "Kyiv")

    async def scenario() -> None:
        async with _client_a(served, cities, ids):
            answers = Answers("deny")
            async with _client(served, "legacy", elicit=answers) as b:
                same_name = await _run(b, "secret", session="work")
                assert _record(same_name)["error"]["type"] == "NameError"
                assert _record(same_name)["session"] == "work"
                denied = await _run(b, DELETE.format(name="Rome"))
                assert _record(denied)["value"]["text"].endswith("was denied by the client; nothing was sent")
                assert answers.asked == 1  # B is asked itself: A's allowance is not B's
                approval = _approval(denied)
                assert approval is not None and approval["by"] == "the client"
                assert approval["decision"] == "denied"
                assert await _left(b, cities) == ["Rome", "Kyiv"]

    anyio.run(scenario)


def test_an_ended_mcp_sessions_id_reaches_nothing_afterwards(served: str) -> None:
    ids = SessionIds()
    cities = ("Lund", "Oulu")

    async def scenario() -> None:
        async with _client_a(served, cities, ids):
            pass  # leaving the client ends its MCP session (DELETE)
        gone = ids.issued
        assert gone is not None
        # The handshake path: the SDK forgot the id when A ended its session.
        headers = {
            "Authorization": f"Bearer {TOKEN}",
            "Mcp-Session-Id": gone,
            "MCP-Protocol-Version": "2025-11-25",
            "Accept": "application/json, text/event-stream",
        }
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "execute_python", "arguments": {"code": "secret", "session": "work"}},
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(served, json=call, headers=headers)
        assert response.status_code == 404, response.text
        # The 2026-07-28 path: refused, never matched to what A left behind.
        async with _client(served, "2026-07-28", session_id=gone) as late:
            _refused_for_the_session_id(await _run(late, "secret", session="work"))
            _refused_for_the_session_id(await _run(late, DELETE.format(name="Oulu")))
        async with _client(served, "legacy", elicit=Answers("deny")) as newcomer:
            fresh = await _run(newcomer, "secret", session="work")
            assert _record(fresh)["error"]["type"] == "NameError"
            assert await _left(newcomer, cities) == ["Oulu"]

    anyio.run(scenario)


@pytest.fixture(scope="module")
def short_lived(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``codemode serve --transport http`` whose sessions end after 3 s unused; its URL."""
    root = tmp_path_factory.mktemp("serve-identity-idle")
    config = write_serve_config(root, {}, defaults={"serve": {"sessionIdle": 3}})
    env = dict(serve_env(root), CODEMODE_SERVE_TOKEN=TOKEN)
    with served_http(root, config, env=env) as (_, url):
        yield url


def test_on_the_2026_protocol_only_an_issued_name_of_a_live_session_reaches_it(short_lived: str) -> None:
    async def scenario() -> None:
        async with _client(short_lived, "2026-07-28") as a, _client(short_lived, "2026-07-28") as b:
            made = _record(await _run(a, "total = 42", session="calc"))["session"]
            assert made.startswith("calc~")
            kept = await _run(a, "total", session=made)
            assert _record(kept)["value"]["data"] == 42 and _record(kept)["session"] == made
            for name in ("calc", made[:-1] + ("A" if made[-1] != "A" else "B")):  # A's word, a near miss
                other = await _run(b, "total", session=name)
                assert _record(other)["error"]["type"] == "NameError"
                assert _record(other)["session"] not in (made, name)
            await anyio.sleep(5)  # the session ends unused
            late = await _run(a, "total", session=made)
            assert _record(late)["error"]["type"] == "NameError"
            assert _record(late)["session"] != made and "(new: no globals from earlier calls)" in _text(late)

    anyio.run(scenario)
