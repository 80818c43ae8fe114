"""Capabilities, no_new_privs and seccomp: what the code may ask of the kernel, and what still works."""

from __future__ import annotations

import asyncio
import ctypes
import errno
import multiprocessing
import multiprocessing.connection
import multiprocessing.pool
import multiprocessing.popen_fork
import multiprocessing.queues
import multiprocessing.synchronize
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from test_sandbox_harness import (
    Dirs,
    Reporter,
    attempt,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    in_force,
    run,
    sandboxed,
)

from codemode_kernel.worker.sandbox._libc import ARCH
from codemode_kernel.worker.sandbox._privileges import drop_capabilities

_libc = ctypes.CDLL(None, use_errno=True)
# The multiprocessing submodules above are imported here because a pool imports them lazily, and a child
# running as uid 65534 may not be able to read the standard library.


def _raw(call: str, *args: int) -> str:
    """A raw system call by name; ``"ok"`` or the errno's name."""
    assert ARCH is not None
    result = _libc.syscall(ctypes.c_long(ARCH[call]), *(ctypes.c_long(a) for a in args))
    return "ok" if result != -1 else errno.errorcode[ctypes.get_errno()]


def _status() -> dict[str, str]:
    fields = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
    lines = Path("/proc/self/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines) if k in fields}


def _kernel_requests(_reporter: Reporter) -> dict[str, Any]:
    return {
        "status": _status(),
        "clear pdeathsig": _raw("prctl", 1, 0),
        "unshare user": _raw("unshare", 0x10000000),
        "clone newuser": _raw("clone", 0x10000000 | 17, 0),
        "clone3": _raw("clone3", 0, 0),
        "mount": _raw("mount", 0, 0, 0, 0, 0),
        "keyctl": _raw("keyctl", 0, 0),
        "io_uring": _raw("io_uring_setup", 1, 0),
        "bpf": _raw("bpf", 0, 0, 0),
        "setuid root": attempt(lambda: os.setuid(0)),
    }


def test_the_code_holds_no_capabilities_and_a_seccomp_filter(dirs: Dirs, identity: str) -> None:
    outcome = run(_kernel_requests, identity=identity, setup=sandboxed(dirs.policy()))
    if not in_force(outcome.protections, "capabilities_dropped", "no_new_privs", "seccomp"):
        return
    result = outcome.result
    status = result["status"]
    zero = "0000000000000000"
    assert (status["CapInh"], status["CapPrm"], status["CapEff"], status["CapBnd"], status["CapAmb"]) == (
        zero,
    ) * 5
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    for call in ("clear pdeathsig", "unshare user", "clone newuser", "mount", "keyctl", "io_uring", "bpf"):
        assert result[call] == "EPERM", (call, result[call])
    assert result["clone3"] == "ENOSYS", "clone3 answers ENOSYS so that the C library falls back to clone"
    if identity != "root":
        assert result["setuid root"].startswith("denied")


def _ordinary_program(dirs: Dirs) -> dict[str, Any]:
    """What real programs do: threads, a subprocess, asyncio, a process pool, files in the workspace."""
    box: list[int] = []
    thread = threading.Thread(target=lambda: box.append(21 * 2))
    thread.start()
    thread.join()
    echoed = subprocess.run(["echo", "hello"], capture_output=True, text=True, check=True).stdout.strip()

    async def main() -> int:
        await asyncio.sleep(0)
        return 7

    with multiprocessing.get_context("fork").Pool(2) as pool:
        squares = pool.map(abs, [-1, -2, -3])
    (dirs.workspace / "result.csv").write_text("a,b\n1,2\n")
    return {
        "thread": box,
        "subprocess": echoed,
        "asyncio": asyncio.run(main()),
        "pool": squares,
        "file": (dirs.workspace / "result.csv").read_text(),
        "pid": os.getpid(),
    }


def test_an_ordinary_program_still_works(dirs: Dirs, identity: str) -> None:
    outcome = run(lambda _r: _ordinary_program(dirs), identity=identity, setup=sandboxed(dirs.policy()))
    assert outcome.result == {
        "thread": [42],
        "subprocess": "hello",
        "asyncio": 7,
        "pool": [1, 2, 3],
        "file": "a,b\n1,2\n",
        "pid": 1,
    }


def test_dropping_capabilities_alone_leaves_root_powerless(identity: str) -> None:
    def body(_reporter: Reporter) -> dict[str, Any]:
        drop_capabilities()
        return {
            "status": _status(),
            "setuid": attempt(lambda: os.setuid(12345)),
            "chown": attempt(lambda: os.chown("/", 12345, 12345)),
        }

    result = run(body, identity=identity).result
    assert result["status"]["CapEff"] == "0000000000000000"
    assert result["setuid"].startswith("denied: PermissionError")
    assert result["chown"].startswith("denied: PermissionError")
