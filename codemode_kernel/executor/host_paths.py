"""Paths of the host that the sandbox protects, found the way the host finds them.

Two kinds, both built in the kernel, where the host's settings and interpreter are (the worker side knows
neither):

- secrets to hide: Jupyter's runtime directory (every kernel's connection file with its HMAC key, the
  server's token and cookie secret), its data directory (the notebook-signing secret) and config
  directory (a token or password), IPython's directory (every cell typed, in ``history.sqlite``) and the
  user's runtime directory (agents' sockets). Each is found as jupyter_core and IPython find it, so
  ``JUPYTER_RUNTIME_DIR``, ``JUPYTER_DATA_DIR``, ``JUPYTER_CONFIG_DIR``, ``JUPYTER_PLATFORM_DIRS``,
  ``IPYTHONDIR`` and ``XDG_RUNTIME_DIR`` count, and so does what the running kernel really uses (its
  connection file, its IPython profile and history file). Their usual places under the home are in the
  built-in list too (``HOME_SECRETS``), for hosts without jupyter_core;
- code to keep read-only: where host processes import from (``sys.path``, the site directories and the
  ``.pth`` files in them, the prefix of the environment, editable installs, codemode_kernel itself) and
  Jupyter's data and config paths (kernel specs name commands, server config runs), wherever they lie
  inside a directory programs may write, and a git repository's configuration and hooks there (git runs
  what they name: ``core.fsmonitor`` on every ``git status`` an editor makes, a hook on every commit). A
  program that changed one would have its code run outside the sandbox at the next start.
"""

from __future__ import annotations

import importlib.machinery
import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["GIT_CONTROLS", "host_code", "jupyter_secrets"]

GIT_CONTROLS = ("config", "hooks")
"""What in a repository's ``.git`` makes git run commands: its configuration and its hooks."""

_IMPORTABLE = (".pth", *importlib.machinery.all_suffixes())
"""Files in a directory on the import path that the host could import or that ``site`` runs at start."""


def jupyter_secrets() -> tuple[Path, ...]:
    """Jupyter's and IPython's directories and this kernel's connection file, absolute (see the module)."""
    found: list[str] = []
    try:
        from jupyter_core import paths
    except ImportError:  # no Jupyter here: the places under the home are in HOME_SECRETS
        pass
    else:
        found += [paths.jupyter_runtime_dir(), paths.jupyter_data_dir()]
        if not os.environ.get("JUPYTER_NO_CONFIG"):  # then the config dir is a fresh temp dir
            found.append(paths.jupyter_config_dir())
    found += [os.environ.get("IPYTHONDIR", ""), os.environ.get("XDG_RUNTIME_DIR", "")]
    found += _running_kernel_files()
    return tuple(dict.fromkeys(Path(os.path.abspath(os.path.expanduser(p))) for p in found if p))


def _running_kernel_files() -> list[str]:
    """What the IPython kernel running in this process uses: its profile, history and connection file.

    Only when IPython and ipykernel are loaded already (in a kernel): importing them costs time elsewhere.
    """
    found: list[str] = []
    if "IPython" in sys.modules:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            found.append(str(shell.profile_dir.location))
            history = getattr(shell, "history_manager", None)
            hist_file = str(getattr(history, "hist_file", "") or "")
            if hist_file and hist_file != ":memory:":
                found.append(hist_file)
    if "ipykernel.kernelapp" in sys.modules:
        from ipykernel.kernelapp import IPKernelApp

        if IPKernelApp.initialized():
            found.append(str(IPKernelApp.instance().abs_connection_file))
    return found


def host_code(roots: Iterable[Path]) -> tuple[Path, ...]:
    """What host processes import, Jupyter reads as code or git runs, inside the writable ``roots``.

    A directory of the import path inside a root is returned whole. One that IS a root (a project installed
    with ``pip install -e .``) is returned itself, so that the sandbox reports that new modules can be
    created there, with the packages, modules and ``.pth`` files it holds now.
    """
    resolved = tuple(dict.fromkeys(Path(os.path.realpath(root)) for root in roots))
    found: dict[Path, None] = {}
    for root in resolved:
        if (root / ".git").is_dir():  # a worktree's ``.git`` file points outside, where Landlock holds it
            found.update(dict.fromkeys(root / ".git" / name for name in GIT_CONTROLS))
    for place in _import_places():
        for root in resolved:
            if place == root:
                found[root] = None
                found.update(dict.fromkeys(_importable(root)))
            elif root in place.parents:
                found[place] = None
    return tuple(found)


def _import_places() -> list[Path]:
    """Where this interpreter and the Jupyter processes beside it look for code, resolved."""
    places = [sys.prefix, sys.exec_prefix, *site.getsitepackages(), site.getusersitepackages()]
    places += [entry for entry in sys.path if entry and os.path.isabs(entry)]  # "" is the cwd: -P drops it
    places.append(str(Path(__file__).resolve().parents[1]))  # codemode_kernel, wherever it is installed
    places += _editable_packages()
    try:
        from jupyter_core import paths
    except ImportError:
        pass
    else:
        places += [*paths.jupyter_path(), *paths.jupyter_config_path()]
    return [Path(os.path.realpath(place)) for place in dict.fromkeys(places) if os.path.lexists(place)]


def _editable_packages() -> list[str]:
    """Packages of setuptools' editable installs, found by the finders their ``.pth`` files load.

    Such a finder maps package names to source directories that need not be on ``sys.path``.
    """
    found: list[str] = []
    for name, module in list(sys.modules.items()):
        mapping = getattr(module, "MAPPING", None) if name.startswith("__editable__") else None
        if isinstance(mapping, dict):
            found += [str(path) for path in mapping.values() if isinstance(path, str)]
    return found


def _importable(directory: Path) -> list[Path]:
    """The regular packages, modules and ``.pth`` files directly in ``directory`` (on the import path)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.endswith(_IMPORTABLE) or os.path.exists(os.path.join(entry.path, "__init__.py")):
            found.append(Path(entry.path))
    return sorted(found)
