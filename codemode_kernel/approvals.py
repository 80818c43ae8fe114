"""Approvals: a person decides before a call of a destructive tool that a model or a program made is sent.

A tool needs approval when its server marks it destructive (MCP annotations ``destructiveHint: true`` and
not ``readOnlyHint``), or when the config lists it under ``codeMode.approve``; ``codeMode.autoApprove``
skips the question for tools a user trusts. Patterns are ``tool`` (on any server), ``server/tool`` and
``server/*``.

Every call carries who originated it (an ``ApprovalCheck`` and its ``origin``): a program, the model's own
tool call (classic mode, a tool offered beside ``execute_python``, ``codemode serve``'s passthrough), a
notebook tool working for a program, or the person's own call (a tool function called in a cell or a
script). The hub decides in one place (``ToolHub.acall``): everything but the person's own call is asked
about. A call that does not say who originated it is asked about too, so a new way of calling tools
cannot skip the question by forgetting to say whose call it is. Code that runs for someone else (a
notebook tool's function, run for a program) says so with ``acting_for``: the tool calls it makes in that
context are asked about as that caller's.

Who is asked depends on the front door (an ``Approver``): the kernel asks through an input request,
``codemode serve`` through an MCP elicitation, ``codemode run`` on its terminal (or ``--approve``). The hub
asks after the arguments are checked and before anything is sent; no decision within the call's timeout
is a denial, and a denial is a ``ToolError`` the program (or the model) gets. The decision, who made it and
for whom are in the call's record (``CallRecord.approval``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from .core.records import ApprovalRecord
from .core.toolspec import ToolSpec
from .elicitation import LineElicitor

__all__ = [
    "PERSONS_OWN_CALL",
    "ApprovalCheck",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "Origin",
    "PromptApprover",
    "acting_for",
    "approve_all",
    "current_check",
    "deny_all",
    "pattern_matches",
    "question",
]

Origin = Literal["program", "model", "notebook_tool", "person", "unstated"]
"""Who originated a call: ``program`` (code a worker runs), ``model`` (the model's own tool call),
``notebook_tool`` (a notebook tool's function, run for a program), ``person`` (a tool function the person
called: a cell, a script), ``unstated`` (a hub call that did not say; asked about like a model's)."""

_CALLERS: dict[str, str] = {
    "program": "a program",
    "model": "the model's own call (not a program)",
    "notebook_tool": "notebook tool {through}, for a program",
    "person": "the person's own call",
    "unstated": "a call that does not say whose it is",
}


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for a decision: what a person is shown."""

    server: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    """Why it is asked: ``its server marks it destructive (destructiveHint)``, or the config's pattern."""
    description: str = ""
    execution_id: str | None = None
    origin: Origin = "program"
    """Who originated the call (``Origin``)."""
    through: str = ""
    """For ``notebook_tool``: the notebook tool whose function made the call."""

    @property
    def qualified_name(self) -> str:
        """``server/tool``."""
        return f"{self.server}/{self.tool}"

    @property
    def caller(self) -> str:
        """Whose call it is, in words: ``a program``, ``the model's own call (not a program)``..."""
        return _CALLERS[self.origin].format(through=self.through or "?")

    def summary(self, width: int = 400) -> str:
        """``server/tool(arg=value, ...)`` on one line, long values cut."""
        parts = []
        for name, value in self.arguments.items():
            text = json.dumps(value, ensure_ascii=False)
            parts.append(f"{name}={text if len(text) <= 80 else text[:77] + '...'}")
        line = f"{self.qualified_name}({', '.join(parts)})"
        return line if len(line) <= width else line[: width - 3] + "..."


@dataclass(frozen=True)
class Decision:
    """Allowed or denied, by whom, and for how long."""

    allowed: bool
    by: str
    """Who decided: ``the user``, ``the client``, ``codemode run --approve all``, ``timeout``..."""
    scope: Literal["once", "kernel", "session"] = "once"
    """``kernel``: the user allowed this tool for the rest of this kernel (``a``); ``session``: the client
    of ``codemode serve`` allowed it for its session."""
    message: str = ""
    """For a denial: the ToolError message the program gets, when the default one would not say why."""

    def to_json(self, reason: str, origin: Origin = "program") -> ApprovalRecord:
        """The record's ``approval``: the decision, who made it, its scope, why it was asked, and for whom.

        ``origin`` is left out for a program's call (the record as it was before other callers were asked
        about, which saved notebooks and the sidebar hold), and said for every other.
        """
        decision: Literal["allowed", "denied"] = "allowed" if self.allowed else "denied"
        record = ApprovalRecord(decision=decision, by=self.by, scope=self.scope, reason=reason)
        if origin != "program":
            record["origin"] = origin
        return record

    def denial(self, request: ApprovalRequest, timeout: float) -> str:
        """The ToolError message a program gets for a denied call."""
        if self.message:
            return self.message
        name = request.qualified_name
        if self.by == "timeout":
            return f"{name} was denied: no decision came within {timeout:g} s (its timeout); nothing was sent"
        if self.by == "nobody" and request.origin == "unstated":
            return (
                f"{name} needs approval ({request.reason}) and the call does not say whose it is, so it "
                "was asked about like a model's, nobody could be asked, and it was denied; nothing was "
                "sent. Fix: say whose call it is: hub.call(..., approval=ApprovalCheck(policy, approver, "
                'origin="model")) (codemode_kernel.approvals), or call the Toolbox\'s tool functions for '
                "a person's own call"
            )
        if self.by == "nobody":
            return (
                f"{name} needs approval ({request.reason}) and nobody can be asked here, so it was denied; "
                "nothing was sent. Fix: list it in codeMode.autoApprove, or run where a person can answer "
                "(the kernel, codemode run on a terminal or with --approve all; in Python, "
                "Executor(..., approver=...))"
            )
        return f"{name} was denied by {self.by}; nothing was sent"


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]
"""``await approver(request)``: ask someone; it may take as long as the call's timeout allows."""


@dataclass(frozen=True)
class ApprovalCheck:
    """What a call carries to the hub's decision: who originated it, the policy, and whom to ask.

    ``approver`` None: nobody can be asked, and a call that needs approval is denied.
    """

    policy: ApprovalPolicy
    approver: Approver | None
    execution_id: str | None = None
    origin: Origin = "program"
    through: str = ""
    """For ``notebook_tool``: the notebook tool whose function makes the calls."""

    def reason(self, spec: ToolSpec) -> str | None:
        """Why this call of ``spec`` waits for a decision, or None: the one rule, applied by the hub.

        The person's own call is never asked about (the person is the one deciding); every other call
        (a program's, the model's, a notebook tool's for a program, one that does not say) is, when its
        tool needs approval.
        """
        if self.origin == "person":
            return None
        return self.policy.reason(spec)

    def request(self, spec: ToolSpec, arguments: dict[str, Any], reason: str) -> ApprovalRequest:
        """What the approver is shown for this call."""
        return ApprovalRequest(
            spec.server,
            spec.name,
            arguments,
            reason,
            spec.description,
            self.execution_id,
            origin=self.origin,
            through=self.through,
        )

    async def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        """Ask, within ``timeout``; nobody to ask, or no answer in time, is a denial."""
        if self.approver is None:
            return Decision(False, "nobody")
        try:
            return await asyncio.wait_for(self.approver(request), timeout)
        except TimeoutError:
            return Decision(False, "timeout")


_acting_for: ContextVar[ApprovalCheck | None] = ContextVar("codemode_acting_for", default=None)


@contextmanager
def acting_for(check: ApprovalCheck) -> Iterator[ApprovalCheck]:
    """Make the tool calls of this context ``check``'s, not the person's own.

    Code run for someone else (a notebook tool's function run for a program) is asked about as that
    caller's call. The context is this task's or thread's and what it hands on (``asyncio.to_thread``,
    new tasks); a thread the code starts itself with ``threading.Thread`` does not inherit it.
    """
    token = _acting_for.set(check)
    try:
        yield check
    finally:
        _acting_for.reset(token)


def current_check() -> ApprovalCheck | None:
    """The check ``acting_for`` set for this context, or None (nobody said whose calls these are)."""
    return _acting_for.get()


def pattern_matches(pattern: str, server: str, tool: str) -> bool:
    """Whether an ``approve``/``autoApprove`` pattern (``tool``, ``server/tool``, ``server/*``) names it."""
    if "/" not in pattern:
        return pattern == tool
    want_server, want_tool = pattern.split("/", 1)
    return want_server == server and want_tool in ("*", tool)


class ApprovalPolicy:
    """Which calls need a decision, from one model's code-mode settings (``approve``, ``autoApprove``)."""

    def __init__(self, approve: Sequence[str] = (), auto_approve: Sequence[str] = ()) -> None:
        self.approve = tuple(approve)
        self.auto_approve = tuple(auto_approve)

    def reason(self, spec: ToolSpec) -> str | None:
        """Why a call of ``spec`` needs approval, or None when it does not (auto-approved or harmless)."""
        if any(pattern_matches(p, spec.server, spec.name) for p in self.auto_approve):
            return None
        listed = next((p for p in self.approve if pattern_matches(p, spec.server, spec.name)), None)
        if listed is not None:
            return f'the config asks for it (codeMode.approve: "{listed}")'
        annotations = spec.annotations or {}
        if annotations.get("destructiveHint") is True and not annotations.get("readOnlyHint"):
            return "its server marks it destructive (destructiveHint)"
        return None


PERSONS_OWN_CALL = ApprovalCheck(ApprovalPolicy(), None, origin="person")
"""The check of a person's own call (a tool function called in a cell or a script): never asked about."""


class PromptApprover:
    """Asks a person with a one-line question and reads ``y``, ``a`` or ``n``: the kernel and the terminal.

    ``y`` allows this call, ``a`` this tool from now on (for as long as this approver lives: the kernel,
    or one ``codemode run``), and ``n``, an empty answer or anything else denies it.
    ``ask(question)`` shows the question and returns the answer (the kernel sends an input request, the
    terminal reads a line); it may raise ``EOFError`` when nobody can answer, which denies the call.
    """

    def __init__(self, ask: Callable[[str], Awaitable[str]], *, who: str = "the user") -> None:
        self.ask = ask
        self.who = who
        self.allowed: set[str] = set()
        """Tools allowed with ``a`` (``server/tool``), and patterns allowed ahead (``allow``)."""
        self._one_at_a_time: asyncio.Lock | None = None
        self.elicit = LineElicitor(ask, who=who, lock=self._lock)
        """Asks a server's question (``elicitation.py``) the same way, one line per field, never at the same
        time as an approval question (one prompt, one answer)."""

    async def __call__(self, request: ApprovalRequest) -> Decision:
        """Allow a tool allowed earlier with ``a``; else ask.

        One question at a time: a parallel batch of destructive calls is asked about in turn.
        """
        async with self._lock():
            if any(pattern_matches(p, request.server, request.tool) for p in self.allowed):
                return Decision(True, f"{self.who} (allowed earlier)", scope="kernel")
            try:
                answer = (await self.ask(question(request))).strip().lower()
            except EOFError:
                return Decision(False, "nobody", message=self.cannot_ask(request))
            if answer in ("a", "always"):
                self.allowed.add(request.qualified_name)
                return Decision(True, self.who, scope="kernel")
            return Decision(answer in ("y", "yes"), self.who)

    def _lock(self) -> asyncio.Lock:
        """One question at a time, approvals and servers' questions alike (made on the asking loop)."""
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()
        return self._one_at_a_time

    def cannot_ask(self, request: ApprovalRequest) -> str:
        """The denial's message when nobody could be asked (``ask`` raised EOFError); "" for the default."""
        return ""


def question(request: ApprovalRequest) -> str:
    """The prompt a person sees: the call, why it is asked, and the answers (short lines: an input box)."""
    return (
        f"codemode: {request.summary(width=100)} needs approval\n"
        f"  from: {request.caller}\n"
        f"  why: {request.reason}\n"
        "  y = allow this call, a = allow this tool from now on, n = deny (default): "
    )


async def approve_all(request: ApprovalRequest) -> Decision:
    """Allow every call (``codemode run --approve all``)."""
    return Decision(True, "--approve all")


async def deny_all(request: ApprovalRequest) -> Decision:
    """Deny every call that needs approval (``codemode run --approve none``)."""
    return Decision(False, "--approve none")
