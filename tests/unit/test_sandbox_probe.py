"""probe() is fast and leaves its caller alone; plan() says what is in force and why the rest is not."""

from __future__ import annotations

import json
import os
import resource
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from test_sandbox_harness import (
    Dirs,
    Reporter,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    run,
    sandboxed,
)

import codemode_kernel.worker.sandbox as sandbox
from codemode_kernel.worker.sandbox import (
    Capabilities,
    Protections,
    SandboxError,
    SandboxPolicy,
    default_hidden_paths,
    enter_sandbox,
    plan,
    probe,
)


def _process_state() -> dict[str, Any]:
    status = Path("/proc/self/status").read_text().splitlines()
    keep = ("Uid", "Gid", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp")
    return {
        "namespaces": {
            name: os.readlink(f"/proc/self/ns/{name}") for name in sorted(os.listdir("/proc/self/ns"))
        },
        "status": [line for line in status if line.split(":")[0] in keep],
        "mounts": Path("/proc/self/mountinfo").read_text(),
        "cwd": os.getcwd(),
        "fds": sorted(os.listdir("/proc/self/fd")),
        "limits": [
            resource.getrlimit(r) for r in (resource.RLIMIT_AS, resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC)
        ],
        "environ": dict(os.environ),
    }


def test_probe_leaves_the_caller_as_it_was() -> None:
    before, children, threads = _process_state(), _children(), _threads()
    probe()
    after = _process_state()
    assert after == before
    assert _threads() <= threads  # none left running (a thread of an earlier test may have ended)
    # The probe's children are all reaped (a zombie would still be listed). Children of earlier tests
    # in this process may exist: only new ones count.
    assert _children() == children


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _children() -> set[int]:
    """The pids of this process's children, zombies included (from /proc)."""
    pids: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        pids.update(int(pid) for pid in (task / "children").read_text().split())
    return pids


def test_probe_does_not_stall() -> None:
    # About 20 ms on an idle machine; the bound only catches a probe that waits on something (a busy
    # CI machine must not fail it: timings are measured by the benchmarks, not asserted here).
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        probe()
        timings.append(time.perf_counter() - started)
    assert min(timings) < 0.5, timings


def test_capabilities_travel_as_json() -> None:
    caps = probe()
    assert Capabilities.from_dict(json.loads(json.dumps(caps.to_dict()))) == caps


def test_every_missing_feature_says_why(identity: str) -> None:
    caps = Capabilities.from_dict(run(lambda _r: probe().to_dict(), identity=identity).result)
    for feature, available in (
        ("mount_namespace", caps.mount_namespace),
        ("network_namespace", caps.network_namespace),
        ("pid_namespace", caps.pid_namespace),
        ("seccomp", caps.seccomp),
        ("landlock", caps.landlock_abi > 0),
        ("pids_cgroup", caps.pids_cgroup is not None),
    ):
        assert available or caps.reason(feature), f"{feature} is missing without a reason"
    if identity == "nobody":
        assert not caps.is_root
        assert caps.pids_cgroup is None


def test_enter_sandbox_applies_exactly_the_plan(dirs: Dirs, identity: str) -> None:
    caps = Capabilities.from_dict(run(lambda _r: probe().to_dict(), identity=identity).result)
    policy = dirs.policy()
    outcome = run(lambda _r: "ran", identity=identity, setup=sandboxed(policy))
    assert outcome.result == "ran"
    expected = plan(policy, caps)
    assert outcome.protections.in_force == expected.in_force
    assert outcome.protections.missing() == expected.missing()
    print(f"\nprotections as {identity}: {list(expected.in_force)}; missing: {expected.missing()}")


_NOTHING = Capabilities(
    linux=True,
    is_root=False,
    namespace_mode="none",
    mount_namespace=False,
    network_namespace=False,
    pid_namespace=False,
    private_proc=False,
    seccomp=False,
    landlock_abi=0,
    pids_cgroup=None,
    reasons=(("user_namespace", "EPERM"), ("landlock", "not enabled"), ("seccomp", "no filter")),
)


def test_a_machine_without_isolation_is_reported_loudly(tmp_path: Path) -> None:
    protections = plan(SandboxPolicy(workspace=tmp_path), _NOTHING)
    assert protections.in_force == (
        "env_scrubbed",
        "fds_closed",
        "rlimits",
        "max_processes:rlimit",
        "no_new_privs",
        "capabilities_dropped",
    )
    missing = protections.missing()
    for layer in (
        "pid_namespace",
        "network_namespace",
        "mount_namespace:hidden_paths",
        "landlock:fs_write",
        "seccomp",
    ):
        assert missing[layer], layer
    assert any("every process of this uid" in w for w in protections.warnings)


def test_root_without_a_pids_cgroup_has_no_process_bound(tmp_path: Path) -> None:
    caps = replace(_NOTHING, is_root=True, namespace_mode="direct", reasons=(("pids_cgroup", "read-only"),))
    missing = plan(SandboxPolicy(workspace=tmp_path), caps).missing()
    assert missing["max_processes"] == "root ignores RLIMIT_NPROC and read-only"


def test_policy_relaxations_are_named_as_such(tmp_path: Path) -> None:
    caps = replace(_NOTHING, namespace_mode="user", network_namespace=True, landlock_abi=3, seccomp=True)
    relaxed = plan(SandboxPolicy(workspace=tmp_path, network=True, no_new_privs=False), caps)
    missing = relaxed.missing()
    assert missing["network_namespace"] == "network allowed by the policy"
    assert missing["landlock:net"] == "network allowed by the policy"
    assert missing["no_new_privs"] == "turned off by the policy"
    assert "landlock:fs_write" in relaxed, "in a user namespace CAP_SYS_ADMIN stands in for no_new_privs"
    # Flagged as the user's choice (doctor's "off", no problem), apart from what the machine lacks.
    assert set(relaxed.turned_off) == {"network_namespace", "landlock:net", "no_new_privs"}
    assert "network_namespace" not in relaxed.unavailable() and "landlock:scoped" in relaxed.unavailable()
    strict = plan(SandboxPolicy(workspace=tmp_path), caps)
    assert strict.missing()["landlock:net"] == "Landlock ABI 3 has no network rules (needs 4)"
    assert strict.turned_off == () and strict.unavailable() == strict.missing()


def test_layers_that_need_no_new_privs_are_turned_off_with_it(tmp_path: Path) -> None:
    caps = replace(_NOTHING, namespace_mode="direct", landlock_abi=6, seccomp=True)
    protections = plan(SandboxPolicy(workspace=tmp_path, no_new_privs=False, max_processes=None), caps)
    off = {"no_new_privs", "landlock:fs_write", "landlock:net", "landlock:scoped", "seccomp", "max_processes"}
    assert set(protections.turned_off) == off
    assert protections.missing()["seccomp"] == "needs no_new_privs (turned off by the policy)"
    assert off.isdisjoint(protections.unavailable()) and "pid_namespace" in protections.unavailable()
    assert Protections.from_dict(protections.to_dict()) == protections


def test_a_layer_that_fails_raises_instead_of_pretending(identity: str, tmp_path: Path) -> None:
    def body(reporter: Reporter) -> dict[str, str]:
        policy = SandboxPolicy(workspace=Path("/nonexistent/codemode-workspace"), hidden=())
        try:
            enter_sandbox(policy, probe(), keep_fds=(reporter.fd, reporter.ack_fd))
        except SandboxError as exc:
            return {"layer": exc.layer, "message": str(exc)}
        return {"layer": "none"}

    result = run(body, identity=identity).result
    assert result["layer"] == "workspace"
    assert "No such file or directory" in result["message"]


def test_policy_paths(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    policy = SandboxPolicy(
        workspace=tmp_path / "ws", tmp_dir=tmp_path / "t", hidden=(tmp_path / "link", tmp_path / "real")
    )
    assert policy.writable_paths() == (tmp_path / "ws", tmp_path / "t")
    assert policy.hidden_paths() == (
        tmp_path / "real",
        tmp_path / "ws" / ".codemode",
        tmp_path / "ws" / ".env",
    )
    home = tmp_path / "home"
    defaults = default_hidden_paths(home)
    assert home / ".ssh" in defaults and home / ".config" / "codemode" in defaults
    assert all(p.is_relative_to(home) or p.parts[1] in ("run", "var", "tmp") for p in defaults)


def test_hidden_paths_expand_globs(tmp_path: Path) -> None:
    for name in ("ssh-a1", "ssh-b2", "other"):
        (tmp_path / name).mkdir()
    policy = SandboxPolicy(workspace=tmp_path / "ws", hidden=(tmp_path / "ssh-*", tmp_path / "none-*"))
    assert policy.hidden_paths()[:2] == (tmp_path / "ssh-a1", tmp_path / "ssh-b2")
    assert len(policy.hidden_paths()) == 4  # the two, then .codemode and .env of the workspace


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in vars(sandbox) if not name.startswith("_") and name != "annotations"}
    assert sorted(sandbox.__all__) == sorted(public)


def test_a_policy_travels_as_json(tmp_path: Path) -> None:
    policy = SandboxPolicy(
        workspace=tmp_path, tmp_dir=tmp_path / "t", writable=(tmp_path / "w",), network=True, memory_mb=None
    )
    assert SandboxPolicy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy
    assert SandboxPolicy.from_dict({"workspace": str(tmp_path)}) == SandboxPolicy(workspace=tmp_path)


def test_outside_linux_only_the_portable_layers_are_planned(tmp_path: Path) -> None:
    caps = replace(_NOTHING, linux=False, reasons=(("pid_namespace", "darwin has no namespaces"),))
    protections = plan(SandboxPolicy(workspace=tmp_path), caps)
    assert protections.in_force == ("env_scrubbed", "fds_closed", "rlimits")
    missing = protections.missing()
    assert missing["pid_namespace"] == "darwin has no namespaces"
    assert missing["no_new_privs"] == missing["capabilities_dropped"] == "not Linux"
    assert "max_processes" in missing
