"""The ``codemode`` kernelspec: one committed copy, installed by the installer and shipped in the wheel."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from codemode_kernel.cli import main as codemode_main
from codemode_kernel.kernel.app import DISPLAY_NAME, KERNEL_NAME, SPEC_FILES, kernel_json

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT / "kernelspec"
LOGOS = {"logo-32x32.png": 32, "logo-64x64.png": 64}


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def assert_is_the_codemode_kernelspec(directory: Path, python: str) -> None:
    """What Jupyter reads from a kernelspec directory: the command, the names, the logos."""
    spec = json.loads((directory / "kernel.json").read_text())
    assert spec["argv"] == [python, "-P", "-m", "codemode_kernel", "-f", "{connection_file}"]
    assert spec["display_name"] == DISPLAY_NAME == "Code Mode (Python 3)"
    assert spec["language"] == "python"
    for name, size in LOGOS.items():
        assert png_size((directory / name).read_bytes()) == (size, size)
    svg = ET.fromstring((directory / "logo-svg.svg").read_text())
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"


def test_the_committed_kernelspec_is_complete() -> None:
    assert sorted(p.name for p in SPEC_DIR.iterdir()) == sorted(SPEC_FILES)
    assert_is_the_codemode_kernelspec(SPEC_DIR, "python")  # jupyter_client puts its own Python there


def test_the_installer_writes_the_shipped_kernel_json_with_this_python() -> None:
    shipped = json.loads((SPEC_DIR / "kernel.json").read_text())
    installed = kernel_json(sys.executable)
    assert installed == {**shipped, "argv": [sys.executable, *shipped["argv"][1:]]}
    assert kernel_json() == shipped


def test_the_wheel_ships_the_committed_directory_as_the_kernelspec() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shared = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["kernelspec"] == f"share/jupyter/kernels/{KERNEL_NAME}"
    inside = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert inside == {"kernelspec": "codemode_kernel/kernel/kernelspec"}  # where the installer reads it


def test_python_m_codemode_kernel_install_prefix_writes_the_spec_and_logos(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codemode_kernel", "install", "--prefix", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    installed = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    assert f"installed the kernelspec 'codemode' (Code Mode (Python 3)) in {installed}" in done.stdout
    assert_is_the_codemode_kernelspec(installed, sys.executable)
    spec = KernelSpecManager(kernel_dirs=[str(installed.parent)]).get_all_specs()[KERNEL_NAME]
    assert spec["spec"]["display_name"] == DISPLAY_NAME
    assert spec["resource_dir"] == str(installed)


def test_codemode_install_prefix_writes_the_same_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert codemode_main(["install", "--prefix", str(tmp_path)]) == 0
    installed = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    assert str(installed) in capsys.readouterr().out
    assert_is_the_codemode_kernelspec(installed, sys.executable)
    assert sorted(p.name for p in installed.iterdir()) == sorted(SPEC_FILES)


def test_pip_install_of_the_wheel_alone_makes_the_kernel_visible_to_jupyter(tmp_path: Path) -> None:
    wheels, prefix = tmp_path / "wheels", tmp_path / "prefix"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(ROOT), "-w", str(wheels)]
    if importlib.util.find_spec("hatchling") is not None:
        build.append("--no-build-isolation")  # offline; else pip fetches hatchling from the registry
    # jlpm (the extension's build, when it is not built yet) is a script beside this Python.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(build, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = wheels.glob("codemode_kernel-*.whl")
    version = wheel.name.split("-")[1]
    data = f"codemode_kernel-{version}.data/data/share/jupyter/kernels/{KERNEL_NAME}"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {f"{data}/{name}" for name in SPEC_FILES} <= names
        for name in SPEC_FILES:  # the same bytes as the installer's copy inside the package
            assert archive.read(f"{data}/{name}") == archive.read(f"codemode_kernel/kernel/kernelspec/{name}")

    # --ignore-installed: without it pip "upgrades" by uninstalling this environment's own codemode-kernel.
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        "--ignore-installed",
    ]
    done = subprocess.run([*install, "--prefix", str(prefix), str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert importlib.metadata.distribution("codemode-kernel").files  # this environment's install is intact
    env = {**os.environ, "JUPYTER_PATH": str(prefix / "share" / "jupyter")}
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    spec = json.loads(listed.stdout)["kernelspecs"][KERNEL_NAME]
    assert spec["resource_dir"] == str(prefix / "share" / "jupyter" / "kernels" / KERNEL_NAME)
    assert spec["spec"]["display_name"] == DISPLAY_NAME
    assert_is_the_codemode_kernelspec(Path(spec["resource_dir"]), "python")
