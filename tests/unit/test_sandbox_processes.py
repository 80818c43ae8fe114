"""No process outlives its execution, the number of processes is bounded (also for root), signals work."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import pytest
from test_sandbox_harness import (
    Dirs,
    Reporter,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    in_force,
    processes_named,
    run,
    sandboxed,
    set_process_name,
    unused_uid,
    wait_until_gone,
)

from codemode_kernel.worker.sandbox import (
    Protections,
    enter_sandbox,
    fork_into_new_pid_namespace,
    kill_namespace,
    plan,
    probe,
    supervise,
)
from codemode_kernel.worker.sandbox._cgroup import PidsCgroup


def _tag() -> str:
    return "cm" + uuid.uuid4().hex[:12]


def _orphan_after_setsid_and_double_fork(reporter: Reporter, tag: str) -> None:
    """The classic escape from a process group: a grandchild in a session of its own, reparented."""
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            set_process_name(tag)
            time.sleep(60)
        os._exit(0)
    os.waitpid(child, 0)
    deadline = time.monotonic() + 2
    while not processes_named(tag) and time.monotonic() < deadline:
        time.sleep(0.005)
    reporter.ready()


@pytest.mark.parametrize("ending", ["pid1_exits", "warden_killed"])
def test_setsid_and_double_fork_leave_nothing_running(dirs: Dirs, identity: str, ending: str) -> None:
    tag = _tag()
    seen: list[int] = []

    def on_ready(pid: int, _details: dict[str, Any]) -> None:
        seen.extend(processes_named(tag))  # the orphan, by its pid out here
        if ending == "warden_killed":
            os.killpg(pid, signal.SIGKILL)  # what the runner does at the deadline

    def body(reporter: Reporter) -> str:
        _orphan_after_setsid_and_double_fork(reporter, tag)
        if ending == "warden_killed":
            time.sleep(30)
        return "pid 1 exits"

    outcome = run(body, identity=identity, setup=sandboxed(dirs.policy()), on_ready=on_ready)
    if not in_force(outcome.protections, "pid_namespace"):
        return
    assert len(seen) == 1, "the orphan was not running before the end: the test proves nothing"
    assert wait_until_gone(seen) == [], f"{tag} outlived its execution"
    assert processes_named(tag) == []
    assert outcome.elapsed < 5


def test_the_pid_namespace_layer_alone_kills_the_orphan(identity: str) -> None:
    """``fork_into_new_pid_namespace`` + ``supervise`` without any other layer: the runner's helper."""
    tag = _tag()
    seen: list[int] = []

    def setup(keep_fds: tuple[int, ...]) -> None:
        pid, lifeline = fork_into_new_pid_namespace(user_namespace=os.getuid() != 0)
        if pid:
            supervise(pid, keep_fd=lifeline)  # closes the harness's pipes in the warden

    def body(reporter: Reporter) -> dict[str, Any]:
        _orphan_after_setsid_and_double_fork(reporter, tag)
        return {"pid": os.getpid()}

    outcome = run(
        body, identity=identity, setup=setup, on_ready=lambda _p, _d: seen.extend(processes_named(tag))
    )
    assert outcome.result == {"pid": 1}
    assert outcome.exit_code == 0
    assert len(seen) == 1
    assert wait_until_gone(seen) == []


def test_the_warden_ends_as_pid_1_ended(dirs: Dirs, identity: str) -> None:
    def body(_reporter: Reporter) -> None:
        os._exit(7)

    outcome = run(body, identity=identity, setup=sandboxed(dirs.policy()))
    assert outcome.exit_code == 7


@contextlib.contextmanager
def sigint_left(inherited: str) -> Iterator[None]:
    """This process's SIGINT left ``inherited`` while the block runs, as a parent may leave it to a child:
    "default" (Python's handler), "ignored" (a script's ``&``) or "blocked" (in the signal mask)."""
    handler = signal.getsignal(signal.SIGINT)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    if inherited == "ignored":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    elif inherited == "blocked":
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@pytest.mark.parametrize("inherited", ["default", "ignored", "blocked"])
def test_sigint_to_the_process_group_reaches_pid_1_as_keyboard_interrupt(
    dirs: Dirs, identity: str, inherited: str
) -> None:
    def body(reporter: Reporter) -> str:
        try:
            reporter.ready()
            time.sleep(10)
        except KeyboardInterrupt:
            return "interrupted"
        return "slept"

    with sigint_left(inherited):
        outcome = run(
            body,
            identity=identity,
            setup=sandboxed(dirs.policy()),
            on_ready=lambda pid, _d: os.killpg(pid, signal.SIGINT),
        )
    assert outcome.result == "interrupted"
    assert outcome.elapsed < 5


def test_sigterm_to_the_warden_kills_the_execution(dirs: Dirs, identity: str) -> None:
    def body(reporter: Reporter) -> None:
        reporter.ready()
        time.sleep(10)

    outcome = run(
        body,
        identity=identity,
        setup=sandboxed(dirs.policy()),
        on_ready=lambda pid, _d: os.kill(pid, signal.SIGTERM),
    )
    assert outcome.signal == signal.SIGKILL
    assert outcome.elapsed < 5


def _bomb(tag: str, seconds: float) -> NoReturn:
    """In every bomb process: fork as fast as possible for ``seconds`` (children too), then linger."""
    set_process_name(tag)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if os.fork() == 0:
                _bomb(tag, seconds)
        except OSError:
            time.sleep(0.005)
    time.sleep(60)
    os._exit(0)


def _fork_bomb(reporter: Reporter, tag: str, seconds: float) -> dict[str, Any]:
    """PID 1 starts the bomb and keeps forking until a fork is refused (at most ``seconds``: a loaded
    machine may take a while to fill the bound), then counts the processes in its namespace."""
    refused = 0
    deadline = time.monotonic() + seconds
    while not refused and time.monotonic() < deadline:
        try:
            if os.fork() == 0:
                _bomb(tag, seconds)
        except OSError:
            refused += 1
            time.sleep(0.005)
    visible = [p for p in os.listdir("/proc") if p.isdigit()]
    reporter.ready()
    return {"refused": refused, "processes": len(visible), "pid": os.getpid()}


def test_a_fork_bomb_is_bounded_and_cleaned_up(dirs: Dirs, identity: str) -> None:
    tag = _tag()
    limit = 20
    seen: list[int] = []
    outcome = run(
        lambda reporter: _fork_bomb(reporter, tag, 20),
        identity=identity,
        setup=sandboxed(dirs.policy(max_processes=limit)),
        on_ready=lambda _p, _d: seen.extend(processes_named(tag)),
        timeout=30,
    )
    layers = outcome.protections
    bound = [layer for layer in layers.in_force if layer.startswith("max_processes:")]
    if not bound:
        assert layers.missing()["max_processes"], "no process bound, and no reason given"
        return
    result = outcome.result
    assert result["pid"] == 1
    assert result["refused"] > 0, "fork never failed: the bound did not bind"
    assert result["processes"] <= limit
    assert 1 <= len(seen) <= limit
    assert wait_until_gone(seen) == [], "bomb processes outlived the execution"
    if "max_processes:cgroup" in layers:
        caps = probe()
        assert caps.pids_cgroup is not None
        left = list(Path(caps.pids_cgroup).glob(f"codemode-{outcome.pid}-*"))
        assert not left, "the cgroup was left behind"


def test_an_execution_never_adopts_a_cgroup_a_dead_process_left_under_its_pid(dirs: Dirs) -> None:
    """pids are reused: a cgroup a killed warden left under this pid's name is another execution's to
    sweep, and joining it let that sweep remove it between our mkdir and our writes (ENODEV, seen with
    parallel tests). Each execution makes a directory of its own."""
    caps = probe()
    if caps.pids_cgroup is None:
        assert "max_processes" in plan(dirs.policy(), caps).missing()
        return
    base = Path(caps.pids_cgroup)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # join moves the calling process: do it in a child, never in the test runner
        try:
            os.close(read_end)
            stale = base / f"codemode-{os.getpid()}"
            stale.mkdir()
            cgroup = PidsCgroup(base, 5)
            cgroup.join()
            report = {
                "joined": str(cgroup.path),
                "stale_kept": stale.is_dir() and not (stale / "cgroup.procs").read_text().strip(),
                "pids_max": (cgroup.path / "pids.max").read_text().strip(),
            }
            cgroup.leave()
            stale.rmdir()
            report["left"] = not cgroup.path.exists()
            os.write(write_end, json.dumps(report).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as reader:
        report = json.loads(reader.read() or "{}")
    os.waitpid(pid, 0)
    assert report, "the child failed before it reported"
    assert report["joined"] != str(base / f"codemode-{pid}"), "joined the directory a dead process left"
    assert report["stale_kept"] and report["pids_max"] == "5" and report["left"], report


def test_root_gets_a_cgroup_bound_or_a_loud_reason(dirs: Dirs) -> None:
    caps = probe()
    protections = plan(dirs.policy(), caps)
    if caps.is_root:
        assert (
            "max_processes:cgroup" in protections
            or "root ignores RLIMIT_NPROC" in protections.missing().get("max_processes", "")
        )
    else:
        assert "max_processes:rlimit" in protections


def test_without_namespaces_the_fallbacks_bound_and_report(dirs: Dirs, identity: str) -> None:
    """A machine where namespaces are forbidden (a container): rlimit bound, loud reasons, no pretending."""

    def setup(keep_fds: tuple[int, ...]) -> Protections:
        caps = replace(
            probe(),
            namespace_mode="none",
            mount_namespace=False,
            network_namespace=False,
            pid_namespace=False,
            private_proc=False,
            pids_cgroup=None,
            reasons=(("user_namespace", "forbidden here"), ("pids_cgroup", "read-only")),
        )
        return enter_sandbox(dirs.policy(max_processes=10), caps, keep_fds=keep_fds)

    def body(_reporter: Reporter) -> dict[str, Any]:
        children: list[int] = []
        try:
            while len(children) < 50:
                child = os.fork()
                if child == 0:
                    time.sleep(60)
                    os._exit(0)
                children.append(child)
        except OSError:
            pass
        finally:
            for child in children:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
        return {"children": len(children), "pid": os.getpid()}

    # RLIMIT_NPROC counts every task of the uid, and other tests run programs as 65534 beside this one.
    outcome = run(body, identity=identity, setup=setup, unprivileged_uid=unused_uid())
    layers = outcome.protections
    missing = layers.missing()
    for layer in ("pid_namespace", "network_namespace", "mount_namespace:hidden_paths"):
        assert missing[layer], f"{layer} is missing without a reason"
    assert outcome.result["pid"] != 1
    if identity == "root":
        assert missing["max_processes"] == "root ignores RLIMIT_NPROC and read-only"
    else:
        assert "max_processes:rlimit" in layers
        assert outcome.result["children"] == 9, "ten tasks: this process and nine children"
        assert any("every process of this uid" in w for w in layers.warnings)


def test_kill_namespace_clears_a_session_between_executions(dirs: Dirs, identity: str) -> None:
    """A session keeps PID 1; what one execution started must not survive into the next."""

    def body(_reporter: Reporter) -> dict[str, Any]:
        for detach in (False, True, True):
            if os.fork() == 0:
                if detach:
                    os.setsid()
                    if os.fork():
                        os._exit(0)
                time.sleep(60)
                os._exit(0)
        time.sleep(0.05)
        before = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        reaped = kill_namespace()
        after = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        return {"before": len(before), "reaped": reaped, "after": after}

    result = run(body, identity=identity, setup=sandboxed(dirs.policy())).result
    assert result["before"] >= 4
    assert result["reaped"] >= 3
    assert result["after"] == [1]


def test_kill_namespace_refuses_outside_a_namespace_it_made() -> None:
    with pytest.raises(RuntimeError, match="only in PID 1"):
        kill_namespace()


def test_a_fresh_cgroup_of_another_pid_namespace_is_not_swept_an_old_empty_one_is(dirs: Dirs) -> None:
    """An execution's sweep must not remove another's directory between its mkdir and its writes (ENODEV,
    seen in CI). Its owner's pid says nothing when that execution runs in another PID namespace (pid 7
    there is not pid 7 here), so a fresh directory is left alone whatever its name; an empty one an hour
    old is stale whoever made it (a live execution's holds its processes, and rmdir refuses that)."""
    caps = probe()
    if caps.pids_cgroup is None:
        assert "max_processes" in plan(dirs.policy(), caps).missing()
        return
    base = Path(caps.pids_cgroup)
    unused = max(int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()) + 100_000
    fresh = base / f"codemode-{unused}-{uuid.uuid4().hex[:8]}"
    old = base / f"codemode-{unused + 1}-{uuid.uuid4().hex[:8]}"
    fresh.mkdir()
    old.mkdir()
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # join moves the calling process: do it in a child, never in the test runner
            try:
                os.close(read_end)
                cgroup = PidsCgroup(base, 5)
                cgroup.join()
                cgroup.leave()
                os.write(write_end, json.dumps({"fresh": fresh.is_dir(), "old": old.is_dir()}).encode())
            finally:
                os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as reader:
            report = json.loads(reader.read() or "{}")
        os.waitpid(pid, 0)
        assert report == {"fresh": True, "old": False}, report
    finally:
        for directory in (fresh, old):
            with contextlib.suppress(OSError):
                directory.rmdir()
