"""Read-only paths: what runs outside the sandbox stays as it is, even inside the workspace programs write."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from test_sandbox_harness import (
    Dirs,
    attempt,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    in_force,
    run,
    sandboxed,
)

from codemode_kernel.worker.sandbox import SandboxPolicy, plan, probe
from codemode_kernel.worker.sandbox._mounts import import_roots, plan_hiding

SCRIPT = "print('the server the config runs')\n"


def _write(path: Path, text: str = "EVIL", mode: str = "w") -> int:
    with open(path, mode) as out:
        return out.write(text)


def _repoint(link: Path, target: Path) -> None:
    os.unlink(link)
    os.symlink(target, link)


def _layout(d: Dirs) -> dict[str, Path]:
    ws = d.workspace
    paths = {
        "script": ws / "srv" / "server.py",
        "sibling": ws / "srv" / "notes.txt",
        "package": ws / "venv" / "site-packages" / "pkg" / "__init__.py",
        "linked": ws / "bin" / "run",
    }
    paths["script"].parent.mkdir()
    paths["script"].write_text(SCRIPT)
    paths["sibling"].write_text("notes")
    paths["package"].parent.mkdir(parents=True)
    paths["package"].write_text("VALUE = 1\n")
    paths["linked"].parent.mkdir()
    paths["linked"].symlink_to(paths["script"])
    for path in (
        ws / "srv",
        ws / "venv",
        ws / "venv" / "site-packages",
        ws / "venv" / "site-packages" / "pkg",
    ):
        os.chown(path, d.uid, d.uid)
    for path in (paths["script"], paths["sibling"], paths["package"], ws / "bin"):
        os.chown(path, d.uid, d.uid)
    return paths


def _attempts(d: Dirs, p: dict[str, Path]) -> dict[str, str]:
    ws, site = d.workspace, p["package"].parent.parent
    return {
        "overwrite script": attempt(lambda: _write(p["script"])),
        "append to script": attempt(lambda: _write(p["script"], mode="a")),
        "truncate script": attempt(lambda: os.truncate(p["script"], 0)),
        "unlink script": attempt(lambda: os.unlink(p["script"])),
        "replace script": attempt(lambda: os.replace(ws / "data.txt", p["script"])),
        "move script's directory": attempt(lambda: os.rename(ws / "srv", ws / "srv-old")),
        "drop a .pth": attempt(lambda: _write(site / "evil.pth", "import os")),
        "add a package": attempt(lambda: os.mkdir(site / "evil")),
        "change a package": attempt(lambda: _write(p["package"], mode="a")),
        "move site-packages": attempt(lambda: os.rename(site, ws / "elsewhere")),
        "hard link into site-packages": attempt(lambda: os.link(ws / "data.txt", site / "x.pth")),
        "re-point the link": attempt(lambda: _repoint(p["linked"], ws / "data.txt")),
        "read script": attempt(p["script"].read_text),
        "import from site-packages": attempt(lambda: (site / "pkg" / "__init__.py").read_text()),
        "write beside the script": attempt(lambda: _write(p["sibling"], "fine")),
        "write the workspace": attempt(lambda: _write(ws / "new.txt", "fine")),
    }


def test_read_only_paths_can_be_neither_changed_nor_moved(dirs: Dirs, identity: str) -> None:
    p = _layout(dirs)
    site = p["package"].parent.parent
    policy = dirs.policy(read_only=(p["script"], site, p["linked"]))
    outcome = run(lambda _r: _attempts(dirs, p), identity=identity, setup=sandboxed(policy))
    if not in_force(outcome.protections, "mount_namespace:read_only_paths"):
        return
    r = outcome.result
    read_only = [
        "overwrite script",
        "append to script",
        "truncate script",
        "unlink script",
        "replace script",
        "drop a .pth",
        "add a package",
        "change a package",
        "move site-packages",
        "hard link into site-packages",
        "re-point the link",
    ]
    for name in read_only:
        assert r[name].startswith("denied: PermissionError"), (name, r[name])
        assert "is read-only to programs" in r[name], (name, r[name])
    assert r["move script's directory"].startswith("denied: PermissionError"), r["move script's directory"]
    assert "cannot be moved or removed" in r["move script's directory"]
    assert r["read script"] == f"allowed: {SCRIPT!r}"
    assert r["import from site-packages"] == "allowed: 'VALUE = 1\\n'"
    assert r["write beside the script"] == "allowed: 4"
    assert r["write the workspace"] == "allowed: 4"

    # Out here nothing that runs changed.
    assert p["script"].read_text() == SCRIPT
    assert p["package"].read_text() == "VALUE = 1\n"
    assert sorted(os.listdir(site)) == ["pkg"]
    assert os.readlink(p["linked"]) == str(p["script"])
    assert (dirs.workspace / "srv").is_dir() and not (dirs.workspace / "srv-old").exists()


def test_without_the_sandbox_the_same_changes_succeed(dirs: Dirs, identity: str) -> None:
    """The control: the same attempts, unconfined, change what the host would run."""
    p = _layout(dirs)
    result = run(lambda _r: _attempts(dirs, p), identity=identity).result
    for name in ("overwrite script", "drop a .pth", "change a package", "re-point the link"):
        assert result[name].startswith("allowed"), (name, result[name])


def test_plan_read_only_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "server.py").write_text("")
    (ws / "c").mkdir()
    (ws / "hidden").mkdir()
    (ws / "venv" / "site").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("")
    read_only = [
        ws / "a" / "b" / "server.py",  # a file: bound read-only, a and a/b pinned
        ws / "c" / "missing.env",  # missing: the directory it would be made in becomes read-only
        ws / "later.py",  # missing in the root itself: a warning
        ws,  # the writable root itself: a warning
        tmp_path,  # contains the root: a warning, nothing bound
        tmp_path / "outside.py",  # outside every writable path: Landlock holds it, nothing to do
        ws / "hidden" / "x.py",  # inside a hidden directory: the cover holds it
        ws / "venv" / "site",  # inside the next one: nothing more to bind
        ws / "venv",
    ]
    plan = plan_hiding([ws / "hidden"], [ws], read_only)
    assert plan.cover == (ws / "hidden",)
    assert plan.read_only == (ws / "c", ws / "venv", ws / "a" / "b" / "server.py")
    assert plan.pin == (ws / "a", ws / "a" / "b")
    assert len(plan.warnings) == 3, plan.warnings
    assert (
        f"{ws} is read-only by the policy but is a writable path: programs may add files" in plan.warnings[0]
    )
    assert f"{tmp_path} is not read-only: it contains the writable path {ws}" == plan.warnings[1]
    assert plan.warnings[2] == (
        f"read-only names that do not exist yet could be created in {ws}, which programs may write: later.py"
    )


def test_a_hidden_path_holding_the_python_environment_stays_visible(tmp_path: Path) -> None:
    """Covering the directory programs import from would break every program: it is reported instead."""
    ws = tmp_path / "ws"
    ws.mkdir()
    prefix = Path(os.path.realpath(sys.prefix))
    plan = plan_hiding([prefix.parent, tmp_path / "other"], [ws], keep_visible=import_roots())
    assert prefix.parent not in plan.cover
    assert plan.warnings == (f"{prefix.parent} is not hidden: programs import from {prefix}, inside it",)


def test_protections_list_the_read_only_layer(tmp_path: Path) -> None:
    caps = probe()
    protections = plan(SandboxPolicy(workspace=tmp_path, read_only=(tmp_path,)), caps)
    if caps.mount_namespace:
        assert "mount_namespace:read_only_paths" in protections
        assert any("is read-only by the policy but is a writable path" in w for w in protections.warnings)
    else:
        assert "mount_namespace:read_only_paths" in protections.missing()


def test_the_policy_travels_with_its_read_only_paths(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    policy = SandboxPolicy(workspace=tmp_path, read_only=(tmp_path / "a.py", link))
    again = SandboxPolicy.from_dict(policy.to_dict())
    assert again.read_only == policy.read_only
    # The link's target, and the directory holding the link (whoever writes it can re-point the link).
    real = Path(os.path.realpath(tmp_path))
    assert again.read_only_paths() == (real / "a.py", real / "target", real)
    # A link programs cannot write (outside the workspace) adds nothing.
    (tmp_path / "ws").mkdir()
    (tmp_path / "to-ws").symlink_to(tmp_path / "ws")
    inside = SandboxPolicy(workspace=tmp_path / "ws", read_only=(tmp_path / "to-ws" / "server.py",))
    assert inside.read_only_paths() == (real / "ws" / "server.py",)
