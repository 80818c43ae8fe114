"""`pip install codemode-kernel` alone, from wheel or sdist, gives the kernel and the enabled extension.

The wheel is built from this tree (which builds labextension/ unless it is built already); a fresh venv
gets only that wheel and its dependencies from the package registry, as a user's machine would, and
Jupyter's own commands must then list the kernel, the JupyterLab extension and the server extension. The
sdist must carry the built extension, so a wheel made from it needs no Node: that build runs with a PATH
that has no node.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = "codemode-kernel"


def _build(kind: str, source: Path, out: Path, env: dict[str, str] | None = None) -> Path:
    """Build a wheel (``pip wheel``) or an sdist (hatchling) of ``source`` into ``out``; its path."""
    if kind == "wheel":
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(source), "-w", str(out)]
        if importlib.util.find_spec("hatchling") is not None:
            command.append("--no-build-isolation")  # this environment has the build requirements
    else:
        command = [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(out)]
    # jlpm (the extension's build, when it is not built yet) is a script beside this Python.
    env = env or {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (built,) = out.glob("codemode_kernel-*.whl" if kind == "wheel" else "codemode_kernel-*.tar.gz")
    return built


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build("wheel", ROOT, tmp_path_factory.mktemp("wheel"))


def test_the_wheel_carries_the_built_extension_and_the_server_switch(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    data = next(n.split("/data/")[0] for n in names if ".data/data/" in n) + "/data"
    share = f"{data}/share/jupyter/labextensions/{EXTENSION}"
    assert {f"{share}/package.json", f"{share}/install.json", f"{share}/static/style.js"} <= names
    assert any(n.startswith(f"{share}/static/remoteEntry.") for n in names)
    assert f"{data}/etc/jupyter/jupyter_server_config.d/codemode_kernel.json" in names
    assert f"{data}/share/jupyter/kernels/codemode/kernel.json" in names
    assert "codemode_kernel/kernel/kernelspec/kernel.json" in names  # where the installer reads it


@pytest.mark.timeout(900)
def test_a_fresh_venv_with_only_the_wheel_lists_the_kernel_and_the_enabled_extension(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # The [lab] extra brings JupyterLab, whose commands are what a user runs to check.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"{wheel}[lab]"],
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "VIRTUAL_ENV"))}
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "config")  # nothing of this machine's user config
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "data")

    def jupyter(*args: str) -> str:
        done = subprocess.run(
            [str(venv / "bin" / "jupyter"), *args], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
        # These commands print their listings on stderr, coloured.
        return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)

    extensions = jupyter("labextension", "list")
    line = next((ln for ln in extensions.splitlines() if EXTENSION + " v" in ln), None)
    assert line is not None, extensions
    assert "enabled" in line and "OK" in line and "disabled" not in line, line
    assert "(python, codemode-kernel)" in line, line  # installed by pip, uninstalled by pip
    kernels = jupyter("kernelspec", "list")
    assert any(ln.split()[:1] == ["codemode"] for ln in kernels.splitlines()), kernels
    servers = jupyter("server", "extension", "list")
    assert "codemode_kernel.labserver enabled" in servers, servers
    assert "codemode_kernel.labserver  OK" in servers, servers  # it imports and loads


@pytest.mark.timeout(600)
def test_a_wheel_built_from_the_sdist_needs_no_node(wheel: Path, tmp_path: Path) -> None:
    sdist = _build("sdist", ROOT, tmp_path / "sdist")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        archive.extractall(tmp_path / "unpacked", filter="data")
    top = sdist.name.removesuffix(".tar.gz")
    assert f"{top}/codemode_kernel/labextension/static/style.js" in names
    assert f"{top}/labextension/yarn.lock" in names and f"{top}/kernelspec/kernel.json" in names
    assert not any("/node_modules/" in n for n in names)
    # Only this Python on the PATH: a build that tried to run jlpm (node) would fail.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(bin_dir)}
    rebuilt = _build("wheel", tmp_path / "unpacked" / top, tmp_path / "rebuilt", env=env)
    with zipfile.ZipFile(rebuilt) as archive, zipfile.ZipFile(wheel) as original:
        static = sorted(n for n in archive.namelist() if "/labextensions/" in n)
        assert static == sorted(n for n in original.namelist() if "/labextensions/" in n)
