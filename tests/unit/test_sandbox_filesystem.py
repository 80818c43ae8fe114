"""Files: hidden paths can be neither read nor changed, writes go only to the workspace and the temp dir."""

from __future__ import annotations

import ctypes
import os
import tempfile
from pathlib import Path
from typing import Any

from test_sandbox_harness import (
    Dirs,
    attempt,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    in_force,
    run,
    sandboxed,
)

from codemode_kernel.worker.sandbox import probe
from codemode_kernel.worker.sandbox._landlock import restrict
from codemode_kernel.worker.sandbox._libc import CLONE_NEWNS
from codemode_kernel.worker.sandbox._mounts import hide_paths, plan_hiding
from codemode_kernel.worker.sandbox._namespaces import unshare_namespaces
from codemode_kernel.worker.sandbox._privileges import set_no_new_privs


def _write(path: Path, text: str = "EVIL") -> int:
    with open(path, "w") as out:
        return out.write(text)


def _read_through_symlink(target: Path, link: Path) -> str:
    link.symlink_to(target)
    return link.read_text()


def _umount(path: Path) -> int:
    return int(ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(path), 2))  # MNT_DETACH


def _escapes(d: Dirs, parent_pid: int) -> dict[str, str]:
    ws = d.workspace
    return {
        "read ssh key": attempt(d.ssh_key.read_text),
        "list ~/.ssh": attempt(lambda: os.listdir(d.ssh_key.parent)),
        "read trust store": attempt(d.trust_store.read_text),
        "write trust store": attempt(lambda: _write(d.trust_store, '{"trusted": "everything"}')),
        "read config": attempt(d.config.read_text),
        "write config": attempt(lambda: _write(d.config)),
        "unlink config": attempt(lambda: os.unlink(d.config)),
        "rename config dir": attempt(lambda: os.rename(d.config.parent, ws / "moved")),
        "link config": attempt(lambda: os.link(d.config, ws / "linked.json")),
        "read artifacts": attempt(d.artifacts.read_text),
        "add artifact": attempt(lambda: _write(d.artifacts.parent / "new.db")),
        "write outside": attempt(lambda: _write(d.outside)),
        "create outside": attempt(lambda: _write(d.base / "new.txt")),
        "create missing secret dir": attempt(lambda: os.mkdir(d.home / ".aws")),
        "symlink to key": attempt(lambda: _read_through_symlink(d.ssh_key, ws / "key")),
        "key via parent's root": attempt(lambda: Path(f"/proc/{parent_pid}/root{d.ssh_key}").read_text()),
        "unmount the cover": attempt(lambda: _umount(d.ssh_key.parent)),
        "write workspace": attempt(lambda: (_write(ws / "out.txt", "fine"), (ws / "out.txt").read_text())),
        "write temp": attempt(lambda: Path(tempfile.mkstemp(suffix=".tmp")[1]).parent == d.tmp),
        "write /dev/null": attempt(lambda: _write(Path(os.devnull))),
        "write /dev/shm": attempt(lambda: _write(Path("/dev/shm") / f"codemode-test-{parent_pid}")),
        "processes seen": attempt(lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit())),
    }


def test_the_full_sandbox_keeps_secrets_and_config(dirs: Dirs, identity: str) -> None:
    parent = os.getpid()
    outcome = run(lambda _r: _escapes(dirs, parent), identity=identity, setup=sandboxed(dirs.policy()))
    if not in_force(outcome.protections, "mount_namespace:hidden_paths", "landlock:fs_write"):
        return
    r = outcome.result
    denied = [
        "read ssh key",
        "read trust store",
        "write trust store",
        "write config",
        "unlink config",
        "rename config dir",
        "link config",
        "read artifacts",
        "add artifact",
        "write outside",
        "create outside",
        "create missing secret dir",
        "symlink to key",
        "key via parent's root",
    ]
    escaped = {name: r[name] for name in denied if not r[name].startswith("denied")}
    assert not escaped, escaped
    for name in ("read ssh key", "list ~/.ssh", "read trust store", "read config", "read artifacts"):
        assert r[name].startswith("denied: PermissionError") and "is hidden from programs" in r[name], r[name]
    assert r["unmount the cover"] == "allowed: -1"
    assert r["write workspace"] == "allowed: (4, 'fine')"
    assert r["write temp"] == "allowed: True"
    assert r["write /dev/null"].startswith("allowed")
    assert r["write /dev/shm"].startswith("allowed")
    assert r["processes seen"] == "allowed: [1]"

    # And out here nothing changed.
    assert dirs.config.read_text() == '{"servers": "CONFIG-FILE"}'
    assert dirs.trust_store.read_text() == '{"trusted": "TRUST-STORE"}'
    assert dirs.outside.read_text() == "ORIGINAL"
    assert not (dirs.home / ".aws").exists()
    assert not (dirs.base / "new.txt").exists()
    assert not (dirs.artifacts.parent / "new.db").exists()
    assert not Path(f"/dev/shm/codemode-test-{parent}").exists(), "the private /dev/shm leaked to the host"
    assert (dirs.workspace / "out.txt").read_text() == "fine"


def test_writable_paths_from_the_policy(dirs: Dirs, identity: str) -> None:
    extra = dirs.base / "extra"
    extra.mkdir()
    os.chown(extra, dirs.uid, dirs.uid)
    outcome = run(
        lambda _r: attempt(lambda: _write(extra / "f.txt")),
        identity=identity,
        setup=sandboxed(dirs.policy(writable=(extra,))),
    )
    assert outcome.result == "allowed: 4"


def _mount_layer_alone(d: Dirs) -> dict[str, Any]:
    caps = probe()
    if not caps.mount_namespace:
        return {"unavailable": caps.reason("mount_namespace")}
    unshare_namespaces(CLONE_NEWNS, user_namespace=caps.namespace_mode == "user")
    hide_paths(plan_hiding((d.ssh_key.parent, d.config), (d.workspace,)), fresh_proc=False, shm_mb=16)
    return {"key": attempt(d.ssh_key.read_text), "config": attempt(d.config.read_text)}


def test_the_mount_layer_alone_hides(dirs: Dirs, identity: str) -> None:
    result = run(lambda _r: _mount_layer_alone(dirs), identity=identity).result
    if "unavailable" in result:
        assert result["unavailable"]
        return
    assert result["key"].startswith("denied: FileNotFoundError")
    assert result["config"] == "allowed: ''"
    assert dirs.ssh_key.read_text() == "SSH-PRIVATE-KEY"


def _landlock_alone(d: Dirs) -> dict[str, Any]:
    caps = probe()
    if caps.landlock_abi == 0:
        return {"unavailable": caps.reason("landlock")}
    set_no_new_privs()
    restrict(caps.landlock_abi, [d.workspace, d.tmp], deny_tcp=False)
    return {
        "outside": attempt(lambda: _write(d.outside)),
        "truncate outside": attempt(lambda: os.truncate(d.outside, 0)),
        "workspace": attempt(lambda: _write(d.workspace / "ok.txt")),
        "move out": attempt(lambda: os.rename(d.workspace / "data.txt", d.base / "data.txt")),
        "read anything": attempt(d.ssh_key.read_text),
    }


def test_landlock_alone_limits_writes_not_reads(dirs: Dirs, identity: str) -> None:
    result = run(lambda _r: _landlock_alone(dirs), identity=identity).result
    if "unavailable" in result:
        assert result["unavailable"]
        return
    assert result["outside"].startswith("denied: PermissionError")
    assert result["truncate outside"].startswith("denied: PermissionError")
    assert result["move out"].startswith("denied: PermissionError")
    assert result["workspace"] == "allowed: 4"
    assert result["read anything"] == "allowed: 'SSH-PRIVATE-KEY'", "reads are the mount layer's job"
    assert dirs.outside.read_text() == "ORIGINAL"


def test_plan_hiding_pins_the_directories_between_a_writable_root_and_a_hidden_path(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "conf.json").write_text("{}")
    (ws / "c").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "inside.json").write_text("{}")
    hidden = [
        ws / "a" / "b" / "conf.json",  # exists, inside: cover and pin a, a/b
        ws / "c" / "missing.json",  # missing, parent inside: make c read-only
        ws / ".env",  # missing, parent is the root: a warning
        tmp_path / "secret",  # exists, outside: cover only
        tmp_path / "nothing",  # missing, outside: Landlock keeps it from being created
        tmp_path,  # contains the workspace: cannot be hidden, a warning
        tmp_path / "secret" / "inside.json",  # inside a covered directory: nothing more to do
    ]
    plan = plan_hiding(hidden, [ws])
    assert plan.cover == (tmp_path / "secret", ws / "a" / "b" / "conf.json")
    assert plan.pin == (ws / "a", ws / "a" / "b")
    assert plan.read_only == (ws / "c",)
    assert len(plan.warnings) == 2
    assert f"do not exist yet could be created in {ws}, which programs may write: .env" in plan.warnings[1]
    assert any("contains the writable path" in w for w in plan.warnings)


def test_without_the_sandbox_the_same_escapes_succeed(dirs: Dirs, identity: str) -> None:
    """The control: the fixture gives the child every right the sandbox takes away."""
    result = run(lambda _r: _escapes(dirs, os.getpid()), identity=identity).result
    for name in (
        "read ssh key",
        "read trust store",
        "write config",
        "write outside",
        "create missing secret dir",
    ):
        assert result[name].startswith("allowed"), (name, result[name])


def test_a_hidden_path_the_user_cannot_see_is_no_error(dirs: Dirs, identity: str) -> None:
    """A default like ``/root/.config/...`` for a user who cannot enter ``/root``: nothing to hide."""
    closed = dirs.base / "closed"
    (closed / "inner").mkdir(parents=True)
    closed.chmod(0o700)  # owned by the test's own uid; closed to 65534
    policy = dirs.policy(hidden=(closed / "inner" / "secret", closed / "missing" / "x"))
    outcome = run(lambda _r: "entered", identity=identity, setup=sandboxed(policy))
    assert outcome.result == "entered"
