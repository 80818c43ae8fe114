"""An approver for tests: answers as told and remembers what it was asked."""

from __future__ import annotations

import asyncio

from codemode_kernel.approvals import ApprovalRequest, Decision


class Approver:
    """Answers ``answers`` in order (True allows, False denies, None never decides)."""

    def __init__(self, *answers: bool | None) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        answer = self.answers.pop(0)
        if answer is None:
            await asyncio.Event().wait()  # never decides: the call's timeout does
        return Decision(bool(answer), "the user")
