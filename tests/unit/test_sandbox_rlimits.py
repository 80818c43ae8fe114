"""Resource limits: a memory bomb gets MemoryError, a busy loop SIGXCPU, big files EFBIG, fds EMFILE."""

from __future__ import annotations

import errno
import os
import resource
import signal
from typing import Any

from test_sandbox_harness import (
    IDENTITIES,
    Dirs,
    Reporter,
    Setup,
    address_space_mb,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    in_force,
    run,
    sandboxed,
)

from codemode_kernel.worker.sandbox._rlimits import apply_rlimits


def _limits(
    memory_mb: int | None = None, cpu: int | None = None, fsize: int | None = None, files: int | None = None
) -> Setup:
    def setup(_keep: tuple[int, ...]) -> None:
        apply_rlimits(memory_mb=memory_mb, cpu_seconds=cpu, file_size_mb=fsize, open_files=files)

    return setup


def _memory_bomb(_reporter: Reporter) -> str:
    hoard = []
    try:
        for _ in range(64):
            hoard.append(bytearray(64 << 20))  # touched: zero-filled pages
    except MemoryError:
        return f"MemoryError after {len(hoard) * 64} MiB"
    return f"allocated {len(hoard) * 64} MiB"


def test_a_memory_bomb_gets_memory_error(identity: str) -> None:
    outcome = run(_memory_bomb, identity=identity, setup=_limits(memory_mb=address_space_mb() + 256))
    assert outcome.result.startswith("MemoryError"), outcome.result


def test_a_memory_bomb_in_the_full_sandbox_gets_memory_error(dirs: Dirs, identity: str) -> None:
    policy = dirs.policy(memory_mb=address_space_mb() + 256)
    outcome = run(_memory_bomb, identity=identity, setup=sandboxed(policy))
    assert "rlimits" in outcome.protections
    assert outcome.result.startswith("MemoryError"), outcome.result


def _busy(_reporter: Reporter) -> None:
    while True:
        pass


def test_a_busy_loop_is_killed_with_sigxcpu(identity: str) -> None:
    outcome = run(_busy, identity=identity, setup=_limits(cpu=1), timeout=60)
    assert outcome.signal == signal.SIGXCPU
    assert 0.9 < outcome.cpu < 2, outcome  # CPU seconds: a loaded machine stretches only the wall clock


def test_a_busy_loop_in_pid_1_is_reported_as_sigxcpu(dirs: Dirs, identity: str) -> None:
    """PID 1 ignores its own SIGXCPU; the hard limit kills it a second later and the warden says why."""
    outcome = run(_busy, identity=identity, setup=sandboxed(dirs.policy(cpu_seconds=1)), timeout=60)
    in_force(outcome.protections, "pid_namespace")  # without one the program is not PID 1: SIGXCPU anyway
    assert outcome.signal == signal.SIGXCPU
    assert 1.5 < outcome.cpu < 3, outcome  # the hard limit, one CPU second after the soft one


def test_ignoring_sigxcpu_buys_one_second_at_most() -> None:
    """The kernel's hard limit, the same for every uid: run once (CPU-time tests cost real seconds)."""

    def body(_reporter: Reporter) -> None:
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        _busy(_reporter)

    outcome = run(body, identity=IDENTITIES[-1], setup=_limits(cpu=1), timeout=60)
    assert outcome.signal == signal.SIGKILL and not outcome.timed_out
    assert 1.5 < outcome.cpu < 3, outcome


def test_files_beyond_the_size_limit_fail_with_efbig(dirs: Dirs, identity: str) -> None:
    def body(_reporter: Reporter) -> dict[str, Any]:
        path = dirs.workspace / "big.bin"
        with open(path, "wb") as out:
            try:
                out.write(b"x" * (2 << 20))
                out.flush()
            except OSError as exc:
                return {"errno": exc.errno, "size": path.stat().st_size}
        return {"errno": None, "size": path.stat().st_size}

    outcome = run(body, identity=identity, setup=_limits(fsize=1))
    assert outcome.result == {"errno": errno.EFBIG, "size": 1 << 20}


def test_open_files_are_limited(identity: str) -> None:
    def body(_reporter: Reporter) -> str:
        opened = []
        try:
            for _ in range(100):
                opened.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as exc:
            return errno.errorcode[exc.errno or 0]
        return f"opened {len(opened)}"

    outcome = run(body, identity=identity, setup=_limits(files=32))
    assert outcome.result == "EMFILE"


def test_hard_limits_equal_soft_limits(dirs: Dirs, identity: str) -> None:
    def body(_reporter: Reporter) -> dict[str, Any]:
        names = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE")
        limits = {name: resource.getrlimit(getattr(resource, name)) for name in names}
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))
            raised = "raised"
        except (ValueError, OSError):
            raised = "refused"
        return {"limits": limits, "raise": raised}

    memory = address_space_mb() + 512
    policy = dirs.policy(memory_mb=memory, cpu_seconds=30, file_size_mb=8, open_files=64)
    outcome = run(body, identity=identity, setup=sandboxed(policy))
    limits = {name: tuple(value) for name, value in outcome.result["limits"].items()}
    assert limits["RLIMIT_AS"] == (memory << 20, memory << 20)
    assert limits["RLIMIT_CPU"] == (30, 31)  # the hard limit one second later: SIGXCPU first, then SIGKILL
    assert limits["RLIMIT_FSIZE"] == (8 << 20, 8 << 20)
    assert limits["RLIMIT_NOFILE"] == (64, 64)
    assert limits["RLIMIT_CORE"] == (0, 0)
    assert outcome.result["raise"] == "refused"


def test_rlimits_never_raise_a_lower_hard_limit(identity: str) -> None:
    def setup(_keep: tuple[int, ...]) -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))
        apply_rlimits(memory_mb=None, cpu_seconds=None, file_size_mb=None, open_files=256)

    outcome = run(lambda _r: resource.getrlimit(resource.RLIMIT_NOFILE), identity=identity, setup=setup)
    assert tuple(outcome.result) == (40, 40)
