"""Approvals: a person decides before a program's call of a destructive tool is sent.

A tool needs approval when its server marks it destructive (MCP annotations ``destructiveHint: true`` and
not ``readOnlyHint``), or when the config lists it under ``codeMode.approve``; ``codeMode.autoApprove``
skips the question for tools a user trusts. Patterns are ``tool`` (on any server), ``server/tool`` and
``server/*``.

Who is asked depends on where the program runs (an ``Approver``): the kernel asks through an input request,
``codemode serve`` through an MCP elicitation, ``codemode run`` on its terminal (or ``--approve``). The hub
asks after the arguments are checked and before anything is sent; no decision within the call's timeout
is a denial, and a denial is a ``ToolError`` the program can catch. The decision, and who made it, are in
the call's record (``CallRecord.approval``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .toolspec import ToolSpec

__all__ = [
    "ApprovalCheck",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "PromptApprover",
    "approve_all",
    "deny_all",
    "pattern_matches",
    "question",
]


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

    @property
    def qualified_name(self) -> str:
        """``server/tool``."""
        return f"{self.server}/{self.tool}"

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

    def to_json(self, reason: str) -> dict[str, Any]:
        """The record's ``approval``: the decision, who made it, its scope, and why it was asked."""
        decision = "allowed" if self.allowed else "denied"
        return {"decision": decision, "by": self.by, "scope": self.scope, "reason": reason}

    def denial(self, request: ApprovalRequest, timeout: float) -> str:
        """The ToolError message a program gets for a denied call."""
        if self.message:
            return self.message
        name = request.qualified_name
        if self.by == "timeout":
            return f"{name} was denied: no decision came within {timeout:g} s (its timeout); nothing was sent"
        if self.by == "nobody":
            return (
                f"{name} needs approval ({request.reason}) and nobody can be asked here, so it was denied; "
                "nothing was sent. Fix: list it in codeMode.autoApprove, or run where a person can answer "
                "(the kernel, codemode run on a terminal or with --approve all)"
            )
        return f"{name} was denied by {self.by}; nothing was sent"


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]
"""``await approver(request)``: ask someone; it may take as long as the call's timeout allows."""


@dataclass(frozen=True)
class ApprovalCheck:
    """What the hub needs to decide a program's call: the policy, and whom to ask (None: nobody)."""

    policy: ApprovalPolicy
    approver: Approver | None
    execution_id: str | None = None

    async def decide(self, request: ApprovalRequest, timeout: float) -> Decision:
        """Ask, within ``timeout``; nobody to ask, or no answer in time, is a denial."""
        if self.approver is None:
            return Decision(False, "nobody")
        try:
            return await asyncio.wait_for(self.approver(request), timeout)
        except TimeoutError:
            return Decision(False, "timeout")


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

    async def __call__(self, request: ApprovalRequest) -> Decision:
        """Allow a tool allowed earlier with ``a``; else ask.

        One question at a time: a parallel batch of destructive calls is asked about in turn.
        """
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()
        async with self._one_at_a_time:
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

    def cannot_ask(self, request: ApprovalRequest) -> str:
        """The denial's message when nobody could be asked (``ask`` raised EOFError); "" for the default."""
        return ""


def question(request: ApprovalRequest) -> str:
    """The prompt a person sees: the call, why it is asked, and the answers (short lines: an input box)."""
    return (
        f"codemode: {request.summary(width=100)} needs approval\n"
        f"  why: {request.reason}\n"
        "  y = allow this call, a = allow this tool from now on, n = deny (default): "
    )


async def approve_all(request: ApprovalRequest) -> Decision:
    """Allow every call (``codemode run --approve all``)."""
    return Decision(True, "--approve all")


async def deny_all(request: ApprovalRequest) -> Decision:
    """Deny every call that needs approval (``codemode run --approve none``)."""
    return Decision(False, "--approve none")
