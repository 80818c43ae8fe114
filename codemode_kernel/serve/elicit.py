"""A server's question, during a call ``codemode serve`` runs, forwarded to serve's own client.

The hub asks the call's approver (``ClientApprover``) through its ``elicit``: this. The question goes to
the client of the ``execute_python`` request (or passthrough call) that made the call, over that request's
session, on the MCP server's loop, as an ``elicitation/create`` of its own: the message says which server
behind codemode asks, and the form is the schema as codemode read it (``elicitation.clean_schema``: only
the fields the spec allows, texts cut), so a hostile schema never reaches the client whole. A URL question
is forwarded in URL mode, to a client that declared it. A client on the 2026-07-28 protocol, where a
server cannot send a request in the middle of a call, is asked in a round of its own (``rounds.py``: the
call ends with the question, the client's retry answers it). A client that cannot be asked (no elicitation
capability for that mode, HTTP in JSON response mode, a 2026-07-28 call without rounds) gets nothing, and
the question is declined naming the server and the reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..elicitation import Answer, Question, clean_schema
from .rounds import AskByRound

__all__ = ["ClientElicitor", "client_cannot_ask"]

CLIENT = "the client"


class ClientElicitor:
    """Forwards a server's question to the client of one serve request; an ``Elicitor``."""

    def __init__(
        self, ctx: Context[Any, Any], loop: asyncio.AbstractEventLoop, by_round: AskByRound | None = None
    ) -> None:
        """``by_round`` asks a 2026-07-28 client in a round of its own (``rounds.WaitingRun.ask``)."""
        self._ctx = ctx
        self._loop = loop
        self._by_round = by_round

    async def __call__(self, question: Question) -> Answer:
        """Ask the client on serve's loop (called on the hub's); withdrawn when the wait is given up."""
        unable = self.cannot_ask(question)
        if unable is not None:
            note = (
                f"server {question.server!r} asked a question ({question.message[:120]!r}) and this client "
                f"cannot be asked ({unable}), so it was declined. Fix: use a client that answers MCP "
                f"{question.mode} elicitation requests"
            )
            return Answer("decline", by="nobody", note=note)
        asked = asyncio.run_coroutine_threadsafe(self._ask(question), self._loop)
        try:
            return await asyncio.wrap_future(asked)
        finally:
            asked.cancel()  # the call ended or timed out: the SDK withdraws the question at the client

    def cannot_ask(self, question: Question) -> str | None:
        """Why this request's client cannot be asked ``question``, or None when it can."""
        return client_cannot_ask(self._ctx, self._by_round, question.mode)

    async def _ask(self, question: Question) -> Answer:
        session = self._ctx.session
        message = f"The MCP server {question.about!r} (used by codemode) asks: {question.message}"
        if self._by_round is not None and session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._ask_by_round(question, message)
        if question.mode == "url":
            assert question.url is not None
            result = await session.elicit_url(
                message, question.url, question.elicitation_id or "", related_request_id=self._ctx.request_id
            )
        else:
            result = await session.elicit_form(
                message, clean_schema(question), related_request_id=self._ctx.request_id
            )
        content = dict(result.content) if result.content is not None else None
        return Answer(result.action, content if result.action == "accept" else None, by=CLIENT)

    async def _ask_by_round(self, question: Question, message: str) -> Answer:
        """The same question in a round of the client's own (2026-07-28); its response is checked."""
        assert self._by_round is not None
        params: ElicitRequestFormParams | ElicitRequestURLParams
        if question.mode == "url":
            assert question.url is not None
            params = ElicitRequestURLParams(
                message=message, url=question.url, elicitation_id=question.elicitation_id or ""
            )
        else:
            params = ElicitRequestFormParams(message=message, requested_schema=clean_schema(question))
        result = await self._by_round(params)
        if not isinstance(result, ElicitResult):
            note = (
                f"server {question.server!r} asked a question; the client's answer was not an elicitation "
                "result, so it counts as declined"
            )
            return Answer("decline", by=CLIENT, note=note)
        content = dict(result.content) if result.content is not None else None
        return Answer(result.action, content if result.action == "accept" else None, by=CLIENT)


def client_cannot_ask(ctx: Context[Any, Any], by_round: AskByRound | None, mode: str) -> str | None:
    """Why the client of this request cannot be asked a question in ``mode`` ("form" or "url"), or None.

    One rule for serve's own approval questions (a form) and the questions it forwards from a server.
    """
    session = ctx.session
    modern = session.protocol_version in MODERN_PROTOCOL_VERSIONS
    if modern and by_round is None:
        return f"it speaks MCP {session.protocol_version}, where a server cannot ask in the middle of a call"
    capabilities = session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if mode == "url" and (elicitation is None or elicitation.url is None):
        return "it did not declare URL-mode elicitation"
    if mode != "url" and (elicitation is None or (elicitation.form is None and elicitation.url is not None)):
        return "it did not declare MCP form elicitation"
    if not modern and not session.can_send_request:
        return "this response has no channel back to the client (HTTP in JSON response mode)"
    return None
