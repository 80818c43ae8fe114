"""The version is written once (codemode_kernel/_version.py); everything that states it agrees with it."""

from __future__ import annotations

import importlib.metadata
import json
import tomllib
from pathlib import Path

from hatchling.metadata.core import ProjectMetadata
from hatchling.plugin.manager import PluginManager

import codemode_kernel
from codemode_kernel._version import __version__
from codemode_kernel.kernel.kernel import CodeModeKernel

ROOT = Path(__file__).resolve().parents[2]


def test_pyproject_reads_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "codemode_kernel/_version.py"
    # What a build computes (the same hatchling call pip's build runs).
    assert ProjectMetadata(str(ROOT), PluginManager()).version == __version__


def test_the_package_and_the_kernel_report_it() -> None:
    assert codemode_kernel.__version__ == __version__
    assert CodeModeKernel.implementation_version == __version__


def test_the_installed_metadata_agrees() -> None:
    installed = importlib.metadata.version("codemode-kernel")
    assert installed == __version__, "the installed metadata is stale: run pip install -e . again"


def test_the_lab_extension_ships_with_the_same_version() -> None:
    # The extension is private to the wheel (never published to npm) and JupyterLab lists it by this version
    # next to the Python package's, so the two are the one release.
    package = json.loads((ROOT / "labextension" / "package.json").read_text(encoding="utf-8"))
    assert package["private"] is True
    assert package["version"] == __version__
