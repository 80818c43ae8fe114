"""The environment: the kernel's secrets are not in os.environ, in a subprocess, nor in /proc/self/environ."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sandbox_harness import (
    ROOT,
    Dirs,
    Reporter,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    run,
    sandboxed,
)

SECRET = "FAKE_SECRET"


@pytest.fixture
def secret_in_environment() -> Iterator[str]:
    value = "sk-fake-" + os.urandom(6).hex()
    os.environ[SECRET] = value
    os.environ["LC_CODEMODE_TEST"] = "kept"
    try:
        yield value
    finally:
        del os.environ[SECRET]
        del os.environ["LC_CODEMODE_TEST"]


def test_the_environment_is_scrubbed(dirs: Dirs, identity: str, secret_in_environment: str) -> None:
    def body(_reporter: Reporter) -> dict[str, object]:
        shown = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout
        return {"environ": dict(os.environ), "subprocess": shown}

    outcome = run(body, identity=identity, setup=sandboxed(dirs.policy()))
    assert "env_scrubbed" in outcome.protections
    environ = outcome.result["environ"]
    assert SECRET not in environ
    assert secret_in_environment not in outcome.result["subprocess"]
    assert environ["LC_CODEMODE_TEST"] == "kept", "LC_* is on the allow-list"
    assert environ["HOME"] == environ["TMPDIR"] == str(dirs.tmp)
    assert environ["OPENBLAS_NUM_THREADS"] == "1"
    assert set(environ) <= {
        *(
            "PATH",
            "LANG",
            "LANGUAGE",
            "TZ",
            "TERM",
            "USER",
            "LOGNAME",
            "NO_COLOR",
            "HOME",
            "TMPDIR",
            "TEMP",
            "TMP",
        ),
        *("PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONDONTWRITEBYTECODE"),
        *("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"),
    } | {name for name in environ if name.startswith("LC_")}


_STARTUP_BLOCK = """
import importlib.util, json, os, sys
from pathlib import Path
# The module alone (it needs only the standard library): importing the package would cost a second.
spec = importlib.util.spec_from_file_location("environment", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
scrub_environment = module.scrub_environment
before = Path("/proc/self/environ").read_bytes()
scrub_environment(("PATH",), (), None)
after = Path("/proc/self/environ").read_bytes()
print(json.dumps({"before": before.decode(errors="replace"), "after": after.decode(errors="replace"),
                  "environ": dict(os.environ)}))
"""


def test_the_startup_block_in_proc_self_environ_is_wiped(tmp_path: Path) -> None:
    """A worker forked from a zygote shares the zygote's start-up environment block: it is zeroed."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), SECRET: "sk-startup-secret"}
    module = ROOT / "codemode_kernel" / "worker" / "sandbox" / "_environment.py"
    done = subprocess.run(
        [sys.executable, "-I", "-c", _STARTUP_BLOCK, str(module)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "sk-startup-secret" in seen["before"], "the control: the secret was in the start-up block"
    assert "sk-startup-secret" not in seen["after"]
    assert seen["environ"] == {"PATH": env["PATH"]}
