"""Approvals in ``codemode serve``: the client decides, through an MCP elicitation request.

A program's call that needs approval (``approvals.py``) waits while the client is asked, over the session of
the ``execute_python`` request that runs the program, with a form of one field, ``decision``: allow this
call, allow this tool for the rest of the client's session, or deny. The hub asks on its own thread and
bounds the wait by the call's timeout; the question is sent from the MCP server's loop, and a wait that is
given up (timeout, a cancelled request) withdraws it: the SDK sends the client ``notifications/cancelled``.

A client on the 2026-07-28 protocol, where a server cannot send a request in the middle of a call, is
asked in a round of its own: the question ends the call and the client's retry answers it (``rounds.py``).

A client that cannot be asked is refused at once, with the fix, rather than sent a question it cannot
answer: one that did not declare form elicitation, a 2026-07-28 call without rounds to ask in, and a
response that has no channel back (HTTP in JSON mode).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Final, Literal

from mcp.server.elicitation import AcceptedElicitation, DeclinedElicitation, render_elicitation_schema
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitRequestFormParams, ElicitResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from ..approvals import ApprovalRequest, Decision
from .elicit import ClientElicitor, client_cannot_ask
from .rounds import AskByRound

__all__ = [
    "ALLOW_ONCE",
    "ALLOW_SESSION",
    "CLIENT",
    "DENY",
    "Allowances",
    "ApprovalForm",
    "ClientApprover",
    "message",
    "refusal",
]

ALLOW_ONCE: Final = "allow once"
ALLOW_SESSION: Final = "allow this tool for this session"
DENY: Final = "deny"

CLIENT = "the client"
"""Who decided, in the call's record, when the client answered."""


class ApprovalForm(BaseModel):
    """The form the client fills in: one choice."""

    decision: Literal["allow once", "allow this tool for this session", "deny"] = Field(
        DENY,
        title="Decision",
        description=(
            f"{ALLOW_ONCE}: send this call; {ALLOW_SESSION}: send it and later calls of this tool without "
            f"asking until the client disconnects; {DENY}: the program gets a ToolError and nothing is sent"
        ),
    )


class Allowances:
    """The tools each client session allowed for the session, by scope (``sessions.client_scope``).

    The scope is the stdio client, or an MCP session whose id the server issued and checks, never a
    header alone. A request without a scope (HTTP without MCP sessions) gets a set of its own: an
    allowance lasts that request. Only the ``LIMIT`` most recent scopes are kept, so ended HTTP sessions
    do not pile up.
    """

    LIMIT = 1000

    def __init__(self) -> None:
        self._sets: dict[str, set[str]] = {}

    def of(self, scope: str | None) -> set[str]:
        """The allowed ``server/tool`` names of ``scope``'s session (live: the approver adds to it)."""
        if scope is None:
            return set()
        allowed = self._sets.pop(scope, set())
        self._sets[scope] = allowed  # most recent last
        while len(self._sets) > self.LIMIT:
            del self._sets[next(iter(self._sets))]
        return allowed


class ClientApprover:
    """Asks the client of one ``execute_python`` request; an ``Approver`` for that request's run.

    ``allowed`` is the client session's set of tools allowed with ``allow this tool for this session``
    (``server/tool``), shared by the session's requests. Called on the hub's thread; ``loop`` is the MCP
    server's, where the question is sent. ``by_round`` asks a 2026-07-28 client in a round of its own
    (``rounds.WaitingRun.ask``); without it such a client cannot be asked.
    """

    def __init__(
        self,
        ctx: Context[Any, Any],
        loop: asyncio.AbstractEventLoop,
        allowed: set[str],
        by_round: AskByRound | None = None,
    ) -> None:
        self._ctx = ctx
        self._loop = loop
        self.allowed = allowed
        self._by_round = by_round
        self._one_at_a_time: asyncio.Lock | None = None
        self.elicit = ClientElicitor(ctx, loop, by_round)
        """Forwards a server's question during one of this request's calls to the client (``elicit.py``)."""

    def rebind(self, ctx: Context[Any, Any], by_round: AskByRound | None) -> None:
        """Ask through ``ctx``'s request from now on (a program left running, waited on by a later call)."""
        self._ctx = ctx
        self._by_round = by_round
        self.elicit = ClientElicitor(ctx, self._loop, by_round)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        """Allow a tool allowed earlier in this session; refuse when the client cannot answer; else ask.

        One question at a time: a parallel batch of calls that need approval is asked about in turn.
        """
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()  # on the hub's loop, where the approver is awaited
        async with self._one_at_a_time:
            if request.qualified_name in self.allowed:
                return Decision(True, f"{CLIENT} (allowed earlier for this session)", scope="session")
            unable = self.cannot_ask()
            if unable is not None:
                return Decision(False, f"nobody ({unable})", message=refusal(request, unable))
            modern = self._ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS
            ask = self._ask_by_round if modern and self._by_round is not None else self._ask
            asked = asyncio.run_coroutine_threadsafe(_coroutine(ask(request)), self._loop)
            try:
                decision = await asyncio.wrap_future(asked)
            finally:
                asked.cancel()  # given up (timeout, cancelled run): withdraw the question at the client
            if decision.allowed and decision.scope == "session":
                self.allowed.add(request.qualified_name)
            return decision

    def cannot_ask(self) -> str | None:
        """Why this request's client cannot be asked a question, or None when it can."""
        return client_cannot_ask(self._ctx, self._by_round, "form")

    async def _ask_by_round(self, request: ApprovalRequest) -> Decision:
        """Ask in a round of the client's own (2026-07-28, ``rounds.py``): the same form, the same choices."""
        assert self._by_round is not None
        form = ElicitRequestFormParams(
            message=message(request), requested_schema=render_elicitation_schema(ApprovalForm)
        )
        return decision_of(request, await self._by_round(form))

    async def _ask(self, request: ApprovalRequest) -> Decision:
        """Send the question on the MCP server's loop and turn the answer into a decision."""
        try:
            answer = await self._ctx.elicit(message(request), ApprovalForm)
        except (MCPError, ValueError) as exc:  # the client failed, or filled in something else
            unable = f"its answer to the approval question was an error: {exc}"
            return Decision(False, CLIENT, message=refusal(request, unable))
        if isinstance(answer, AcceptedElicitation):
            choice = answer.data.decision
            if choice == ALLOW_SESSION:
                self.allowed.add(request.qualified_name)
                return Decision(True, CLIENT, scope="session")
            return Decision(choice == ALLOW_ONCE, CLIENT)
        if isinstance(answer, DeclinedElicitation):
            return Decision(False, CLIENT)
        return Decision(False, f"{CLIENT} (the question was dismissed)")


async def _coroutine(awaitable: Awaitable[Decision]) -> Decision:
    return await awaitable


def decision_of(request: ApprovalRequest, response: Any) -> Decision:
    """The decision a client's elicitation response carries (``ElicitResult``; anything else denies).

    ``scope="session"`` says to allow the tool for the rest of the session: the approver records that.
    """
    if not isinstance(response, ElicitResult):
        unable = "its answer to the approval question was not an elicitation result"
        return Decision(False, CLIENT, message=refusal(request, unable))
    if response.action == "decline":
        return Decision(False, CLIENT)
    if response.action == "cancel":
        return Decision(False, f"{CLIENT} (the question was dismissed)")
    try:
        choice = ApprovalForm.model_validate(response.content or {}).decision
    except ValidationError as exc:
        unable = f"its answer to the approval question was an error: {exc}"
        return Decision(False, CLIENT, message=refusal(request, unable))
    if choice == ALLOW_SESSION:
        return Decision(True, CLIENT, scope="session")
    return Decision(choice == ALLOW_ONCE, CLIENT)


def message(request: ApprovalRequest) -> str:
    """What the client shows its user: the call, why it is asked, and the choices."""
    who = "the program" if request.origin == "program" else "the caller"
    first = (
        f"A program run by codemode wants to call {request.summary()}.\n"
        if request.origin == "program"
        else f"codemode was asked to call {request.summary()}.\nFrom: {request.caller}.\n"
    )
    return (
        f"{first}It needs approval: {request.reason}.\n"
        f"Decide: {ALLOW_ONCE}, {ALLOW_SESSION}, or {DENY} ({who} gets a ToolError; nothing is sent)."
    )


def refusal(request: ApprovalRequest, unable: str) -> str:
    """The ToolError a program gets when its client cannot be asked: what happened and the fix."""
    name = request.qualified_name
    return (
        f"{name} needs approval ({request.reason}) and this client cannot answer approval questions "
        f"({unable}), so it was denied; nothing was sent. Fix: list it in codeMode.autoApprove in the config "
        f'codemode serve runs with (e.g. "autoApprove": ["{name}"]), or use a client that answers MCP '
        "form elicitation requests"
    )
