"""Approvals in the kernel: the question goes to the frontend as an input request on the stdin channel.

An input request works while a cell is busy (it is how ``input()`` works) in JupyterLab, Notebook, VS Code
and the console, so a program's destructive call can wait for the person who ran the cell. The request is
sent from the hub's thread while the shell thread waits for the program; questions are asked one at a
time (``PromptApprover``), and a question whose call was cancelled (an interrupt, the call's timeout) stops
waiting for its reply.

A frontend that cannot answer input requests (nbval, papermill, a client that sent ``allow_stdin: false``)
gets a denial saying so, with the fix.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

from ..approvals import ApprovalRequest, PromptApprover

__all__ = ["KernelApprover", "NoStdin", "kernel_approver"]

_POLL = 0.05  # seconds between checks for the reply (and for the question being withdrawn)


class NoStdin(EOFError):
    """The frontend of the running cell does not answer input requests."""


class KernelApprover(PromptApprover):
    """Asks the frontend of the running cell, ``y``/``a``/``n``; ``a`` holds for the rest of the kernel."""

    def __init__(self, kernel: Any) -> None:
        super().__init__(self._ask, who="the user")
        self.kernel = kernel

    def cannot_ask(self, request: ApprovalRequest) -> str:
        """The denial in a frontend without input requests: how to allow the tool ahead."""
        return (
            f"{request.qualified_name} needs approval ({request.reason}), and this frontend does not answer "
            "input requests (nbval, papermill, a client without stdin), so it was denied; nothing was sent. "
            f"Fix: run `%codemode approve {request.qualified_name}` first (for this kernel), or list it in "
            "codeMode.autoApprove"
        )

    async def _ask(self, question: str) -> str:
        withdrawn = threading.Event()
        try:
            return await asyncio.to_thread(self._input_request, question, withdrawn)
        except asyncio.CancelledError:
            # The frontend keeps showing the box: say that an answer typed now goes nowhere.
            print(
                "codemode: the approval question above went unanswered in time and was withdrawn (the call "
                "is denied, or the program stopped); answering it now does nothing",
                file=sys.stderr,
                flush=True,
            )
            raise
        finally:
            withdrawn.set()  # cancelled or answered: the thread stops waiting

    def _input_request(self, question: str, withdrawn: threading.Event) -> str:
        """The kernel's input request, but one that can be withdrawn (ipykernel's waits for a reply)."""
        import zmq

        kernel = self.kernel
        if not getattr(kernel, "_allow_stdin", False):
            raise NoStdin("this frontend does not answer input requests")
        ident = kernel._get_shell_context_var(kernel._shell_parent_ident)
        parent = kernel.get_parent("shell")
        socket = kernel.stdin_socket
        while True:  # stale replies (a withdrawn question's) are dropped first, as ipykernel does
            try:
                socket.recv_multipart(zmq.NOBLOCK)
            except zmq.ZMQError as exc:
                if exc.errno == zmq.EAGAIN:
                    break
                raise
        kernel.session.send(
            socket, "input_request", {"prompt": question, "password": False}, parent, ident=ident
        )
        while not withdrawn.is_set():
            readable, _, _ = zmq.select([socket], [], [], _POLL)
            if readable:
                _, reply = kernel.session.recv(socket)
                if reply is not None:
                    value = reply.get("content", {}).get("value", "")
                    if value == "\x04":
                        raise EOFError
                    return str(value)
        return ""


def kernel_approver(shell: Any) -> PromptApprover:
    """The approver of a shell: input requests in a kernel, the terminal in plain IPython."""
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and hasattr(kernel, "stdin_socket"):
        return KernelApprover(kernel)

    async def ask(text: str) -> str:
        return await asyncio.to_thread(input, text)

    return PromptApprover(ask)
