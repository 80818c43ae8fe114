"""The harness of the sandbox tests: run a body in a real forked child, confined, and collect its report.

Every escape test forks (as the zygote would), optionally drops to uid 65534 (when the suite runs as
root), confines the child with one layer or with ``enter_sandbox``, runs the escape attempt and reports
over a pipe as JSON lines; the parent asserts. A child that does not finish in time is killed with its
process group. The fake home and workspace live in a 0o755 temp dir owned by the identity that runs
the child, so that without the sandbox every attempt would succeed; the real home is never touched.

The few tests at the bottom check the harness itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import encodings.idna  # noqa: F401  (see below)
import json
import os
import resource
import select
import shutil
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel.worker.sandbox import (
    Protections,
    SandboxPolicy,
    default_hidden_paths,
    enter_sandbox,
    probe,
)
from codemode_kernel.worker.sandbox._rlimits import processes_of_user

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
# A child switched to uid 65534 may not be able to read the interpreter's standard library (under /root
# on some machines): everything a body needs is imported before the fork, here and in the test modules.
IDENTITIES = ("root", "nobody") if os.geteuid() == 0 else ("user",)
"""As root, each escape runs as root and again as uid 65534; as any other user, as that user."""


@dataclass(frozen=True)
class Dirs:
    """A fake home with secrets, a workspace with a hidden config and artifact store, a temp dir."""

    base: Path
    uid: int
    home: Path
    workspace: Path
    tmp: Path
    outside: Path
    ssh_key: Path
    trust_store: Path
    config: Path
    artifacts: Path

    def policy(self, **overrides: Any) -> SandboxPolicy:
        """The policy the runner would build: defaults, with the fake home's secrets and the config hidden."""
        settings: dict[str, Any] = {
            "workspace": self.workspace,
            "tmp_dir": self.tmp,
            # The trust store lies inside a hidden directory too, as the kernel will pass both.
            "hidden": (*default_hidden_paths(self.home), self.config, self.trust_store),
            "memory_mb": address_space_mb() + 512,
        }
        settings.update(overrides)
        return SandboxPolicy(**settings)


def address_space_mb() -> int:
    """This process's address space now: a forked child starts with all of it, so limits sit above it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) // 1024
    return 0


def unused_uid() -> int:
    """A uid no account names and no process runs as: RLIMIT_NPROC then counts only one test's tasks."""
    accounts = [line.split(":") for line in Path("/etc/passwd").read_text().splitlines()]
    named = {int(fields[2]) for fields in accounts if len(fields) >= 7 and fields[2].isdigit()}
    for uid in range(61_000, 62_000):
        if uid not in named and processes_of_user(uid) == 0:
            return uid
    raise RuntimeError("no unused uid between 61000 and 62000")


def _uid_for(identity: str) -> int:
    return NOBODY if identity == "nobody" else os.geteuid()


@pytest.fixture(params=IDENTITIES, name="identity")
def identity_fixture(request: pytest.FixtureRequest) -> str:
    """Who the child runs as (test modules import the fixture by this function's name)."""
    return str(request.param)


@pytest.fixture(name="dirs")
def dirs_fixture(identity: str) -> Iterator[Dirs]:
    """The fake home, workspace and temp dir of one test, owned by ``identity``."""
    base = Path(tempfile.mkdtemp(prefix="codemode-sandbox-test-"))
    base.chmod(0o755)
    home = base / "home"
    workspace = home / "project"
    files = {
        home / ".ssh" / "id_ed25519": "SSH-PRIVATE-KEY",
        home / ".config" / "codemode" / "trusted.json": '{"trusted": "TRUST-STORE"}',
        workspace / ".vscode" / "mcp.json": '{"servers": "CONFIG-FILE"}',
        workspace / ".codemode" / "artifacts.db": "ARTIFACT-STORE",
        workspace / "data.txt": "DATA",
        base / "outside.txt": "ORIGINAL",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (base / "tmp").mkdir()
    uid = _uid_for(identity)
    if uid != os.geteuid():
        for root, names, filenames in os.walk(base):
            for name in (*names, *filenames):
                os.chown(os.path.join(root, name), uid, uid)
    try:
        yield Dirs(
            base=base,
            uid=uid,
            home=home,
            workspace=workspace,
            tmp=base / "tmp",
            outside=base / "outside.txt",
            ssh_key=home / ".ssh" / "id_ed25519",
            trust_store=home / ".config" / "codemode" / "trusted.json",
            config=workspace / ".vscode" / "mcp.json",
            artifacts=workspace / ".codemode" / "artifacts.db",
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


class Reporter:
    """The child's end of the pipes: one JSON object per line out, one byte back for each ``ready``."""

    def __init__(self, fd: int, ack_fd: int) -> None:
        self.fd = fd
        self.ack_fd = ack_fd

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=repr) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data) :]

    def ready(self, **details: Any) -> None:
        """Tell the parent the body reached the point where ``on_ready`` should act; wait until it did."""
        self.send({"ready": details})
        os.read(self.ack_fd, 1)


@dataclass
class Outcome:
    """What the parent saw: the wait status of the forked process, the messages, the time taken."""

    status: int | None
    pid: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    elapsed: float = 0.0
    cpu: float = 0.0
    """CPU seconds (user and system) of the child and of the descendants it waited for: what a CPU limit
    counts, and unlike ``elapsed`` the same on a loaded machine."""
    timed_out: bool = False

    @property
    def result(self) -> Any:
        for message in self.messages:
            if "error" in message:
                pytest.fail(f"the sandboxed child raised:\n{message['error']}")
        for message in self.messages:
            if "result" in message:
                return message["result"]
        pytest.fail(f"the sandboxed child reported no result (status {self.status}): {self.messages}")

    @property
    def protections(self) -> Protections:
        for message in self.messages:
            if "protections" in message:
                data = message["protections"]
                return Protections(
                    tuple(data["in_force"]), tuple(data["not_in_force"].items()), tuple(data["warnings"])
                )
        pytest.fail(f"the child reported no protections: {self.messages}")

    @property
    def signal(self) -> int | None:
        return os.WTERMSIG(self.status) if self.status is not None and os.WIFSIGNALED(self.status) else None

    @property
    def exit_code(self) -> int | None:
        return os.WEXITSTATUS(self.status) if self.status is not None and os.WIFEXITED(self.status) else None


Setup = Callable[[tuple[int, ...]], object]
"""Confines the child; gets the file descriptors of the harness, which must stay open."""
Body = Callable[[Reporter], Any]


def sandboxed(policy: SandboxPolicy) -> Setup:
    """The setup for the whole sandbox: probe as the identity the child runs as, then enter."""
    return lambda keep_fds: enter_sandbox(policy, probe(), keep_fds=keep_fds)


def _child(
    write_end: int, ack_read: int, identity: str, setup: Setup | None, body: Body, unprivileged_uid: int
) -> None:
    reporter = Reporter(write_end, ack_read)
    code = 0
    try:
        os.setsid()
        if identity == "nobody":
            os.setgroups([])
            os.setgid(unprivileged_uid)
            os.setuid(unprivileged_uid)
        if setup is not None:
            done = setup((write_end, ack_read))
            if isinstance(done, Protections):
                reporter.send({"protections": done.to_dict()})
        reporter.send({"result": body(reporter)})
    except BaseException:
        code = 70
        with contextlib.suppress(BaseException):
            reporter.send({"error": traceback.format_exc()})
    finally:
        os._exit(code)


def run(
    body: Body,
    *,
    identity: str,
    setup: Setup | None = None,
    timeout: float = 5.0,
    on_ready: Callable[[int, dict[str, Any]], None] | None = None,
    unprivileged_uid: int = NOBODY,
) -> Outcome:
    """Fork, switch identity, apply ``setup`` and run ``body`` in the child; collect what it reports.

    ``on_ready(pid, details)`` runs in the parent when the body calls ``reporter.ready(...)``. After
    ``timeout`` seconds the child's process group is killed and the outcome says ``timed_out``. The
    "nobody" identity runs as ``unprivileged_uid`` (65534 unless a test needs a uid of its own).
    """
    read_end, write_end = os.pipe()
    ack_read, ack_write = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        os.close(ack_write)
        _child(write_end, ack_read, identity, setup, body, unprivileged_uid)
    os.close(write_end)
    os.close(ack_read)
    outcome = Outcome(status=None, pid=pid)
    buffer = b""
    deadline = started + timeout
    try:
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([read_end], [], [], left)[0]:
                continue
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                outcome.messages.append(message)
                if "ready" in message:
                    if on_ready is not None:
                        on_ready(pid, message["ready"])
                    with contextlib.suppress(OSError):
                        os.write(ack_write, b"k")
        else:
            outcome.timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
    finally:
        os.close(read_end)
        os.close(ack_write)
    outcome.status, usage = _wait(pid, deadline + 2.0)
    outcome.cpu = usage.ru_utime + usage.ru_stime
    outcome.elapsed = time.monotonic() - started
    return outcome


def _wait(pid: int, deadline: float) -> tuple[int, resource.struct_rusage]:
    while time.monotonic() < deadline:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage
        time.sleep(0.002)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    return status, usage


def in_force(protections: Protections, *layers: str) -> bool:
    """Whether all ``layers`` are in force; each one that is not must be reported with its reason.

    A layer is in force exactly when ``probe()`` found it available (``enter_sandbox`` applies the plan
    or raises), so a test asserts its escapes fail whenever this is true, and on a machine that lacks
    the layer it asserts the loud report instead.
    """
    missing = protections.missing()
    absent = [layer for layer in layers if layer not in protections]
    for layer in absent:
        reason = missing.get(layer) or missing.get(layer.split(":")[0])
        assert reason, f"{layer} is neither in force nor reported missing with a reason: {protections}"
    return not absent


def attempt(action: Callable[[], Any]) -> str:
    """Try one escape in the child: ``"allowed: <value>"`` or ``"denied: <exception>"``."""
    try:
        return f"allowed: {action()!r}"
    except Exception as exc:
        return f"denied: {type(exc).__name__}: {exc}"


def set_process_name(name: str) -> None:
    """PR_SET_NAME: the parent finds the process by ``/proc/<pid>/comm`` from outside the namespace."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def processes_named(name: str) -> list[int]:
    """Pids (in this namespace) of the processes whose comm is ``name``; zombies do not count."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm == name[:15] and state != "Z":
            found.append(int(entry))
    return found


def wait_until_gone(pids: list[int], timeout: float = 2.0) -> list[int]:
    """Poll ``os.kill(pid, 0)`` until every pid is gone; returns the ones still alive at the deadline."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        if alive:
            time.sleep(0.01)
    return alive


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = ""
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X", "")


# The harness itself ---------------------------------------------------------------------------------


def test_a_child_reports_its_identity(identity: str) -> None:
    outcome = run(lambda _r: {"uid": os.getuid(), "pgid": os.getpgid(0)}, identity=identity)
    assert outcome.exit_code == 0
    assert outcome.result["uid"] == _uid_for(identity)


def test_an_exception_in_the_child_is_reported_not_swallowed() -> None:
    def body(_r: Reporter) -> None:
        raise RuntimeError("boom")

    outcome = run(body, identity=IDENTITIES[0])
    assert outcome.exit_code == 70
    assert any("RuntimeError: boom" in m.get("error", "") for m in outcome.messages)


def test_a_child_that_hangs_is_killed_at_the_timeout() -> None:
    outcome = run(lambda _r: time.sleep(30), identity=IDENTITIES[0], timeout=0.3)
    assert outcome.timed_out
    assert outcome.signal == signal.SIGKILL
    assert outcome.elapsed < 3


def test_the_fixture_files_belong_to_the_identity(dirs: Dirs) -> None:
    assert dirs.ssh_key.stat().st_uid == dirs.uid
    assert dirs.workspace.stat().st_uid == dirs.uid
    assert oct(dirs.base.stat().st_mode & 0o777) == oct(0o755)
