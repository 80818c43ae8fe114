"""The pre-started worker process: imports once, builds the tools module once, forks a worker per run.

Started by the Executor (``python -c "...zygote import main; main()" --control-fd N``) with a scrubbed
environment; reads its setup (tool descriptors, modules to preload) as one JSON object on stdin. It stays
single-threaded so that forking it is safe (about 3 ms). Control messages travel over a SOCK_SEQPACKET
socket, one JSON object per packet: ``spawn`` (with the worker's channel socket attached) and ``exit`` from
the executor; ``ready``, ``spawned``, ``exited`` and ``failed`` from here (``protocol.ZygoteCommand`` and
``protocol.ZygoteEvent``, tabled in docs/protocol.md).

Each worker is confined by ``sandbox.enter_sandbox`` right after the fork, before it reads its program;
what the machine supports is probed once, here, at start.

The zygote reaps every process the executor started: it is a child subreaper, so the PID 1 of a worker
whose warden was killed (a deadline, an interrupt) is handed to it rather than to the machine's PID 1
(which, in a container without an init, never reaps). When told to exit, or when the executor goes away,
it kills the workers still running and reaps them before it exits; the executor then reaps the zygote.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..core.records import ErrorRecord

# Imported here, once, by the zygote: a forked worker finds them loaded instead of importing them again.
from .channel import Channel
from .interrupts import handle_interrupts
from .main import serve as serve_programs
from .protocol import (
    DoneFrame,
    ExitedMessage,
    FailedMessage,
    ProtectionsFrame,
    ReadyMessage,
    SpawnedMessage,
    ZygoteEvent,
    ZygoteSetup,
    encode_control,
)
from .sandbox import SandboxError, SandboxPolicy, become_child_subreaper, enter_sandbox, probe
from .tools_module import ToolRuntime, build_tools_module

__all__ = ["main"]

_CONTROL_PACKET = 65536
_EXIT_WAIT = 3.0  # seconds the exiting zygote waits for its killed workers to be gone


def _send(control: socket.socket, message: ZygoteEvent) -> None:
    control.send(encode_control(message))


def _exited(pid: int, status: int) -> ExitedMessage:
    if os.WIFSIGNALED(status):
        return ExitedMessage(type="exited", pid=pid, signal=os.WTERMSIG(status))
    return ExitedMessage(type="exited", pid=pid, code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)


def _reap(control: socket.socket, spawned: set[int]) -> None:
    """Collect every child that ended; report those the executor knows (orphans handed to us are not)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in spawned:
            spawned.discard(pid)
            with contextlib.suppress(OSError):  # the executor may be gone already
                _send(control, _exited(pid, status))


def _end_workers(spawned: set[int], wake: int) -> None:
    """Before exiting: SIGKILL every worker still running (with its process group) and reap all children.

    Each warden's PID 1 dies with it (parent-death signal) and, as an orphan, is ours to reap too.
    """
    for pid in spawned:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + _EXIT_WAIT
    while (left := deadline - time.monotonic()) > 0:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # nothing left
        if pid == 0:
            select.select([wake], [], [], left)  # SIGCHLD writes to the wake-up pipe
            with contextlib.suppress(BlockingIOError):
                os.read(wake, 4096)


def _child(
    control: socket.socket,
    channel_fd: int,
    policy: dict[str, Any],
    caps: Any,
    runtime: ToolRuntime,
) -> None:
    """In the forked worker: detach, confine, run the program, exit without running the parent's cleanups."""
    code = 0
    try:
        control.close()
        os.setsid()  # its own process group, out of reach of the kernel's interrupts
        handle_interrupts()  # the zygote ignores SIGINT; the program's interrupt is a KeyboardInterrupt
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        channel = Channel(socket.socket(fileno=channel_fd))
        try:
            # With a PID namespace this returns in PID 1 of it; this process stays behind as its warden.
            protections = enter_sandbox(SandboxPolicy.from_dict(policy), caps, keep_fds=(channel_fd,))
        except SandboxError as exc:  # fail closed: a program never runs with less isolation than planned
            failure = ErrorRecord(type="SandboxError", message=str(exc))
            channel.send(DoneFrame(type="done", status="internal", value=None, error=failure))
            raise
        # The zygote starts with -P (nothing from the workspace may run before the sandbox); inside it, the
        # program imports its own modules from the workspace, as `python prog.py` there would.
        sys.path.insert(0, "")
        report = protections.to_dict()
        channel.send(
            ProtectionsFrame(
                type="protections",
                in_force=report["in_force"],
                not_in_force=report["not_in_force"],
                warnings=report["warnings"],
                turned_off=report["turned_off"],
            )
        )
        runtime.channel = channel
        serve_programs(channel, runtime)
    except BaseException:
        import traceback  # loaded only when a worker fails

        traceback.print_exc(file=sys.__stderr__)
        code = 70
    finally:
        try:
            sys.__stdout__.flush() if sys.__stdout__ else None
        finally:
            os._exit(code)


def serve(control: socket.socket, setup: ZygoteSetup) -> None:
    """Preload, build the tools module, then fork a worker for every ``spawn`` until told to exit."""
    become_child_subreaper()
    for name in setup.get("preload") or ():
        try:
            importlib.import_module(name)
        except Exception as exc:  # a missing optional module must not stop code mode
            print(f"codemode zygote: could not preload {name!r}: {exc}", file=sys.stderr)
    runtime = ToolRuntime()
    build_tools_module(setup.get("tools") or [], runtime)
    caps = probe()
    # Everything built so far lives as long as the zygote: frozen, the garbage collector of a forked
    # worker never walks (and so never copies) those pages.
    gc.collect()
    gc.freeze()
    _send(control, ReadyMessage(type="ready", pid=os.getpid(), capabilities=caps.to_dict()))
    # SIGCHLD writes a byte to this pipe, so a worker's exit is reported at once (a crash is seen fast).
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    signal.set_wakeup_fd(wake_write)
    spawned: set[int] = set()
    try:
        while True:
            watched: list[Any] = [control, wake_read]
            readable, _, _ = select.select(watched, [], [], 1.0)
            if wake_read in readable:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_read, 4096)
            _reap(control, spawned)
            if control not in readable:
                continue
            data, fds, _flags, _addr = socket.recv_fds(control, _CONTROL_PACKET, 4)
            if not data:
                return  # the executor went away
            message = json.loads(data)
            if message.get("type") == "exit":
                return
            if message.get("type") != "spawn" or len(fds) != 1 or not isinstance(message.get("policy"), dict):
                for fd in fds:
                    os.close(fd)
                _send(control, FailedMessage(type="failed", id=message.get("id"), error="bad spawn request"))
                continue
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                os.close(wake_read)
                os.close(wake_write)
                _child(control, fds[0], message["policy"], caps, runtime)
            spawned.add(pid)
            os.close(fds[0])
            _send(control, SpawnedMessage(type="spawned", id=message.get("id"), pid=pid))
    finally:
        _end_workers(spawned, wake_read)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the zygote process: ``--control-fd N``, the SOCK_SEQPACKET control socket.

    Internal (only the executor starts it), so its one argument is read without argparse, which would load
    a dozen modules (shutil, locale, gettext, compression) into every worker forked from here.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "--control-fd" or not args[1].isdigit():
        sys.exit("usage: codemode_kernel.worker.zygote --control-fd N (started by the executor)")
    setup: ZygoteSetup = json.loads(sys.stdin.read() or "{}")
    control = socket.socket(fileno=int(args[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # interrupts are for workers; the executor stops us
    # Whatever the executor's process inherited: an ignored SIGCHLD reaps children by itself, and then
    # neither the probe nor the reaper can wait for one.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    serve(control, setup)


if __name__ == "__main__":
    main()
