"""What a server asks its client during a tool call: ``roots/list``, ``elicitation/create``, sampling.

The MCP SDK's ``Client`` calls these callbacks on the hub's loop. Each connection has one
``ServerRequests``; the hub tells it which calls are running (``during``), so a question is asked of the
person behind the call (the call's ``ApprovalCheck.approver``: the kernel, serve's client, the terminal)
and goes into that call's record. On the handshake protocols a server's request does not say which call
it belongs to: with one call running it is that one; with several, the oldest (said in the record).

- ``roots/list``: the workspace, as one ``file://`` root.
- ``elicitation/create``: asked through the front door's ``Elicitor`` (``elicitation.py``); with nobody to
  ask it is declined, and the server gets a message naming it. The answer is checked against the
  requested schema; a schema outside the spec's subset is refused with an error naming the field.
- ``sampling/createMessage``: the server's entry says ``"sampling"``: ``"ask"`` (the default: the person
  allows each request, through the approval machinery), ``"allow"`` (a loosened protection: listed by
  ``doctor``, and needs trust in a project config) or ``"deny"``. Then the configured model answers; with
  no model configured it is refused, saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types

from ..approvals import ApprovalCheck, ApprovalRequest, Approver
from ..calllog import CallLog
from ..config import ServerConfig
from ..core.errors import CodeModeError
from ..elicitation import (
    Answer,
    Elicitor,
    QuestionRefused,
    check_content,
    fill_defaults,
    nobody,
    parse_question,
)

__all__ = ["AskContext", "ServerRequests", "elicitor_of"]

log = logging.getLogger(__name__)

SAMPLING_TOOL = "sampling/createMessage"
"""The name a sampling request is approved under: ``server/sampling/createMessage`` (``a`` allows it on)."""
_MAX_SAMPLING_CHARS = 200_000
"""Characters of text one sampling request may send the model (a server must not run up a bill)."""
_MAX_SAMPLING_TOKENS = 16_000


@dataclass
class AskContext:
    """What every connection's ``ServerRequests`` shares, set by the hub and its front door."""

    call_log: CallLog
    workspace: Path | None = None
    """The root ``roots/list`` answers (None: the current directory)."""
    person: Approver | None = None
    """Whom to ask when the call's own check has nobody (the person's own calls in the kernel, a script):
    the front door's approver; its ``elicit`` answers questions."""
    model: Callable[[], Any] | None = None
    """Opens the configured chat model (``llm.open_model``) for sampling; raises ConfigError without one."""
    sign_in: Callable[[ServerConfig], Any] | None = None
    """Opens the person's side of an OAuth sign-in for a remote server (a ``hub.auth.SignIn``); None: a
    server that wants one settles in state ``signin``, naming ``codemode login NAME``."""


@dataclass(frozen=True)
class _Running:
    record_id: str
    tool: str
    check: ApprovalCheck


def elicitor_of(approver: Any) -> Elicitor | None:
    """The ``Elicitor`` of a front door's approver (its ``elicit``), or None when it has none."""
    elicit = getattr(approver, "elicit", None)
    return elicit if callable(elicit) else None


class ServerRequests:
    """The client callbacks of one server's connection, and the calls running on it."""

    def __init__(self, config: ServerConfig, context: AskContext) -> None:
        self.config = config
        self.server = config.name
        self.context = context
        self._running: dict[str, _Running] = {}
        self._model: Any = None

    @contextmanager
    def during(self, record_id: str, tool: str, check: ApprovalCheck) -> Iterator[None]:
        """Mark a call as running on this connection while the block runs."""
        self._running[record_id] = _Running(record_id, tool, check)
        try:
            yield
        finally:
            self._running.pop(record_id, None)

    def client_callbacks(self) -> dict[str, Any]:
        """The keyword arguments of ``mcp.Client`` that make it answer (and advertise) the three requests."""
        return {
            "list_roots_callback": self.list_roots,
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
        }

    # -- roots ------------------------------------------------------------------------------------

    async def list_roots(self, context: Any) -> types.ListRootsResult:
        """The workspace as the one root."""
        root = (self.context.workspace or Path.cwd()).resolve()
        return types.ListRootsResult.model_validate(
            {"roots": [{"uri": root.as_uri(), "name": root.name or str(root)}]}
        )

    # -- elicitation ------------------------------------------------------------------------------

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult | types.ErrorData:
        """Ask the person behind the call; decline when nobody can be asked; check the answer."""
        running = self._current()
        try:
            wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            question = parse_question(self.server, wire, tool=running.tool if running else None)
        except (QuestionRefused, RecursionError, ValueError, TypeError) as exc:
            message = f"{self.server}: the question cannot be asked: {exc}"
            self._note(running, {"kind": "elicitation", "refused": str(exc)[:500]})
            return types.ErrorData(code=types.INVALID_PARAMS, message=message[:1000])
        elicitor = self._elicitor(running)
        if elicitor is None:
            answer = nobody(question)
        else:
            try:
                answer = await elicitor(question)
            except Exception as exc:  # a front door's failure declines; it never breaks the connection
                log.warning("server %r: asking its question failed: %s", self.server, exc)
                answer = Answer("cancel", by="nobody", note=f"asking failed: {type(exc).__name__}: {exc}")
        if answer.action == "accept" and question.mode == "form":
            try:
                # SEP-1034: a field the answer leaves out takes its default, whoever answered.
                content = check_content(question, fill_defaults(question, answer.content or {}))
            except QuestionRefused as exc:
                answer = Answer("cancel", by=answer.by, note=f"the answer did not fit the question: {exc}")
            else:
                answer = Answer("accept", content, by=answer.by)
        elif answer.action == "accept":
            answer = Answer("accept", by=answer.by)  # URL mode carries no content
        self._note(
            running, {"kind": "elicitation", "question": question.to_json(), "answer": answer.to_json()}
        )
        if answer.action == "accept":
            return types.ElicitResult(action="accept", content=answer.content)
        return types.ElicitResult(action=answer.action)

    def _elicitor(self, running: _Running | None) -> Elicitor | None:
        if running is not None and (found := elicitor_of(running.check.approver)) is not None:
            return found
        return elicitor_of(self.context.person)

    # -- sampling ---------------------------------------------------------------------------------

    async def sample(self, context: Any, params: Any) -> types.CreateMessageResult | types.ErrorData:
        """Answer with the configured model once allowed (the server's ``sampling`` setting, or a person)."""
        running = self._current()
        setting = self.config.sampling
        summary = _sampling_summary(params)
        entry: dict[str, Any] = {"kind": "sampling", "request": summary}

        def refuse(message: str, code: int = types.INVALID_REQUEST) -> types.ErrorData:
            self._note(running, {**entry, "refused": message})
            return types.ErrorData(code=code, message=message)

        if setting == "deny":
            return refuse(
                f'{self.server}: sampling is switched off for this server ("sampling": "deny" in its config '
                "entry)"
            )
        problem = _unsupported(params)
        if problem is not None:
            return refuse(f"{self.server}: {problem}", types.INVALID_PARAMS)
        try:
            model = self._open_model()
        except CodeModeError as exc:
            return refuse(
                f"{self.server} asked for a model completion (sampling), and no model is configured here: "
                f"{exc}. Fix: add a model to the config's models list"
            )
        if setting == "allow":
            entry["allowed"] = {"by": f'the config ("sampling": "allow" for {self.server})'}
        else:
            check = running.check if running is not None else None
            approver = (check.approver if check is not None else None) or self.context.person
            request = ApprovalRequest(
                self.server,
                SAMPLING_TOOL,
                summary,
                f"the server asks the configured model ({model.ref}) for a completion (sampling)",
                origin=check.origin if check is not None else "unstated",
                through=check.through if check is not None else "",
            )
            if approver is None:
                return refuse(
                    f"{self.server} asked for a model completion (sampling) and nobody can be asked to allow "
                    f'it here, so it was refused. Fix: "sampling": "allow" in the server\'s config entry'
                )
            decision = await approver(request)
            entry["allowed" if decision.allowed else "denied"] = {"by": decision.by, "scope": decision.scope}
            if not decision.allowed:
                return refuse(f"{self.server}: sampling was denied by {decision.by}")
        from ..llm import Message

        messages = [
            Message("assistant" if m.role == "assistant" else "user", _text_of(m)) for m in params.messages
        ]
        try:
            turn = await model.complete(
                messages,
                system=params.system_prompt,
                max_tokens=min(params.max_tokens, _MAX_SAMPLING_TOKENS),
            )
        except CodeModeError as exc:
            return refuse(f"{self.server}: the model failed: {exc}", types.INTERNAL_ERROR)
        self._note(
            running, {**entry, "answer": {"model": turn.model or model.model, "chars": len(turn.text)}}
        )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text=turn.text),
            model=turn.model or model.model,
            stop_reason="maxTokens" if turn.stop_reason in ("length", "max_tokens") else "endTurn",
        )

    def _open_model(self) -> Any:
        if self._model is None:
            from ..core.errors import ConfigError

            if self.context.model is None:
                raise ConfigError("this front door has no models")
            self._model = self.context.model()
        return self._model

    # -- the call a request belongs to ------------------------------------------------------------

    def _current(self) -> _Running | None:
        """The call a server's request belongs to: the only one running, else the oldest (noted)."""
        return next(iter(self._running.values()), None)

    def _note(self, running: _Running | None, entry: dict[str, Any]) -> None:
        if running is None:
            log.info("server %r asked outside a tool call: %s", self.server, entry.get("kind"))
            return
        if len(self._running) > 1:
            entry = {**entry, "during": f"one of {len(self._running)} calls running on {self.server}"}
        self.context.call_log.asked(running.record_id, entry)


def _text_of(message: Any) -> str:
    blocks = message.content if isinstance(message.content, list) else [message.content]
    return "\n".join(block.text for block in blocks if isinstance(block, types.TextContent))


def _unsupported(params: Any) -> str | None:
    """Why a sampling request cannot be answered here, or None."""
    if params.tools:
        return "sampling with tools is not supported by this client (it does not advertise sampling.tools)"
    size = 0
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        for block in blocks:
            if not isinstance(block, types.TextContent):
                return f"only text can be sampled here, not {getattr(block, 'type', '?')} content"
            size += len(block.text)
    size += len(params.system_prompt or "")
    if size > _MAX_SAMPLING_CHARS:
        return f"the request holds {size:,} characters; at most {_MAX_SAMPLING_CHARS:,} are sent to the model"
    return None


def _sampling_summary(params: Any) -> dict[str, Any]:
    """What the person is shown and the record keeps: the last message cut short, counts, max tokens."""
    last = _text_of(params.messages[-1]) if params.messages else ""
    summary: dict[str, Any] = {
        "messages": len(params.messages),
        "last": last if len(last) <= 300 else last[:297] + "...",
        "maxTokens": params.max_tokens,
    }
    if params.system_prompt:
        summary["system"] = params.system_prompt[:200]
    return summary
