"""Questions to clients on the 2026-07-28 protocol: the question ends the call, the retry answers it.

On 2026-07-28 a server cannot send a request in the middle of a call. It answers the call with an
``InputRequiredResult`` instead: here one ``input_requests`` entry, an elicitation (an approval's form,
``approval.py``, or a server's question forwarded, ``elicit.py``), and a ``request_state``; the client asks
its user and calls again with the same arguments, the answer in ``input_responses`` and the state echoed.
The work (``execute_python``'s program, or a direct call of an excluded tool) does not stop in between: it
waits in its question, as it does while a handshake-era client's elicitation is open, and the retry hands
it the answer and waits for its result or its next question. The wait is bounded as that one is (an
approval's by the call's timeout); a client that never calls again gets the denial there, and the work
ends unread.

The state names the waiting run by a random handle. The SDK seals every ``request_state`` (AES-GCM under a
key of this process, bound to the tool's arguments and the caller, expiring), so a client can neither read
nor alter it, nor use it for another call; it is valid only in the ``serve`` process that made it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    InputRequiredResult,
)

__all__ = ["GRACE_S", "AskByRound", "Question", "Rebindable", "Rounds", "WaitingRun"]

AskByRound = Callable[[ElicitRequestFormParams | ElicitRequestURLParams], Awaitable[Any]]
"""Asks a 2026-07-28 client an elicitation in a round of its own; gives its response as it came
(``WaitingRun.ask``: normally an ``ElicitResult``, but the client's word, so checked by the asker)."""

T = TypeVar("T")

GRACE_S = 60.0
"""How long a run that ended while its client was away keeps its result for a late retry."""

GONE = (
    "this call is no longer waiting for an answer (it ended, was stopped, or was started by another "
    "codemode serve process; a state lasts {grace:g} s after its work ends). Fix: make the call again "
    "without input_responses or request_state: it starts afresh (a program runs again from its start)"
)


class Rebindable(Protocol):
    """What sends a run's progress: each round points it at the request that waits now."""

    def rebind(self, ctx: Context[Any, Any]) -> None:
        """Send for ``ctx``'s request from now on."""


@dataclass
class Question:
    """One elicitation a run waits on: its key in ``input_requests``, what it asks, where the answer goes."""

    key: str
    params: ElicitRequestFormParams | ElicitRequestURLParams
    answer: asyncio.Future[Any]


class WaitingRun(Generic[T]):
    """One 2026-07-28 call's work, running across the client's rounds, and its open questions."""

    def __init__(
        self, handle: str, finish: Callable[[T], CallToolResult], relay: Rebindable | None = None
    ) -> None:
        self.handle = handle
        self.relay = relay
        """Sends the work's progress and output, if anything does."""
        self.finish = finish
        """Makes the call's result from the work's (the first round knows how)."""
        self.task: asyncio.Future[T] | None = None
        self.background: Any = None
        """What its caller keeps beside it (``execute_python``: its ``BackgroundRun``)."""
        self.stopped: Callable[[], str] = lambda: GONE.format(grace=GRACE_S)
        """What a call waiting on it is told when its work was cancelled before it ended (no result)."""
        self._asked: asyncio.Queue[Question] = asyncio.Queue()
        self._open: dict[str, Question] = {}
        self._count = 0

    async def ask(self, params: ElicitRequestFormParams | ElicitRequestURLParams) -> Any:
        """Put ``params`` to the client at its next round; its response as it came (on the server's loop).

        Cancelled when the wait ends (an approval's timeout, a stopped run): the question is withdrawn, and
        an answer to it later changes nothing.
        """
        self._count += 1
        question = Question(f"question-{self._count}", params, asyncio.get_running_loop().create_future())
        self._open[question.key] = question
        self._asked.put_nowait(question)
        try:
            return await question.answer
        finally:
            self._open.pop(question.key, None)

    def answer(self, key: str, response: Any) -> None:
        """Give the open question ``key`` the client's ``response`` (an ``ElicitResult``); else nothing."""
        question = self._open.get(key)
        if question is None or question.answer.done():
            return
        question.answer.set_result(response)

    def still_open(self, key: str) -> Question | None:
        """The question ``key`` if the run still waits on it."""
        return self._open.get(key)

    async def next(self) -> T | Question:
        """The work's result, or the next question still open, whichever comes first."""
        assert self.task is not None
        while True:
            if self.task.done():
                return self.task.result()
            getter: asyncio.Future[Question] = asyncio.ensure_future(self._asked.get())
            waiters: set[asyncio.Future[Any]] = {self.task, getter}
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                if getter.done() and not getter.cancelled():
                    self._asked.put_nowait(getter.result())  # taken as the wait was given up: ask it later
                raise
            finally:
                getter.cancel()
            if getter.done() and not getter.cancelled() and (question := getter.result()).key in self._open:
                return question


class Rounds:
    """The runs of 2026-07-28 calls that wait for their client's next round, by handle."""

    def __init__(self) -> None:
        self._runs: dict[str, WaitingRun[Any]] = {}

    def open(self, finish: Callable[[T], CallToolResult], relay: Rebindable | None = None) -> WaitingRun[T]:
        """A new waiting run: ``start`` it, then ``reply``."""
        waiting = WaitingRun(secrets.token_urlsafe(18), finish, relay)
        self._runs[waiting.handle] = waiting
        return waiting

    def start(self, waiting: WaitingRun[T], work: Coroutine[Any, Any, T]) -> None:
        """Run ``work`` as ``waiting``'s; once it ends, its entry lasts ``GRACE_S`` at most."""
        waiting.task = asyncio.ensure_future(work)
        waiting.task.add_done_callback(lambda _: self._forget_later(waiting.handle))

    async def retry(self, ctx: Context[Any, Any]) -> CallToolResult | InputRequiredResult:
        """Answer a retry (its ``request_state`` is set): hand over its answer, then ``reply``.

        Raises:
            ToolError: the run is gone (ended and collected, timed out, or another process's), with the fix.
        """
        assert ctx.request_state is not None
        waiting, unanswered = self.resume(ctx.request_state, ctx.input_responses)
        if waiting.relay is not None:
            waiting.relay.rebind(ctx)  # progress and output go to the request that waits now
        answer = await self.reply(waiting, unanswered)
        assert answer is not None  # without ``until`` a reply waits for the end or a question
        return answer

    def resume(self, state: str, responses: dict[str, Any] | None) -> tuple[WaitingRun[Any], Question | None]:
        """The run a retry's ``request_state`` names, its answers given; and its question left unanswered.

        Raises:
            ToolError: the run is gone (ended and collected, timed out, or another process's), with the fix.
        """
        try:
            parsed = json.loads(state)
            waiting = self._runs[parsed["run"]]
            key = str(parsed["question"])
        except (ValueError, KeyError, TypeError):
            raise ToolError(GONE.format(grace=GRACE_S)) from None
        if responses and key in responses:
            waiting.answer(key, responses[key])
            return waiting, None
        return waiting, waiting.still_open(key)  # retried without the answer: asked again

    async def reply(
        self,
        waiting: WaitingRun[Any],
        unanswered: Question | None = None,
        *,
        until: asyncio.Future[Any] | None = None,
        stop_on_cancel: bool = True,
    ) -> CallToolResult | InputRequiredResult | None:
        """The call's result (``CallToolResult``) when the work ends, or an ``InputRequiredResult``.

        ``until``: when it completes first, None: the work goes on, and a later call waits for it again (a
        program left running: ``background.py``). A client that closes the request (cancels) while the
        work runs stops it, unless ``stop_on_cancel`` is False (a later wait, which only gives up waiting).
        """
        assert waiting.task is not None
        if unanswered is not None:
            return _input_required(waiting, unanswered)
        following = asyncio.ensure_future(waiting.next())
        try:
            await asyncio.wait(
                {following, *([until] if until is not None else [])}, return_when="FIRST_COMPLETED"
            )
            if not following.done():
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await following
                return None
            if following.cancelled():  # the work was cancelled (not this call): it has no result to give
                raise ToolError(waiting.stopped())
            outcome = following.result()
        except asyncio.CancelledError:
            following.cancel()
            if stop_on_cancel:
                waiting.task.cancel()
                self._runs.pop(waiting.handle, None)
            raise
        except BaseException:
            self._runs.pop(waiting.handle, None)
            raise
        if isinstance(outcome, Question):
            return _input_required(waiting, outcome)
        self._runs.pop(waiting.handle, None)
        return waiting.finish(outcome)

    def _forget_later(self, handle: str) -> None:
        """A run that ended between rounds keeps its result ``GRACE_S`` for a retry, then is dropped."""
        with contextlib.suppress(RuntimeError):  # the loop is closing: nothing is kept anyway
            asyncio.get_running_loop().call_later(GRACE_S, self._runs.pop, handle, None)


def _input_required(waiting: WaitingRun[Any], question: Question) -> InputRequiredResult:
    return InputRequiredResult(
        input_requests={question.key: ElicitRequest(params=question.params)},
        request_state=json.dumps({"run": waiting.handle, "question": question.key}),
    )
