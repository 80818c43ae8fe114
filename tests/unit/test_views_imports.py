"""The views never import the kernel package: the dependency goes kernel -> views, never back.

Checked in a fresh interpreter, so a module another test imported first cannot hide an import. A view
needs a kernel type only as a Protocol it states itself (``views.display.CellRun``).
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import codemode_kernel.views

VIEWS = sorted(
    f"codemode_kernel.views.{info.name}" for info in pkgutil.iter_modules(codemode_kernel.views.__path__)
)


def test_there_are_views_to_check() -> None:
    assert {"codemode_kernel.views.display", "codemode_kernel.views.render"} <= set(VIEWS)


def test_no_view_imports_the_kernel_package() -> None:
    probe = (
        f"import importlib, json, sys\nfor name in {VIEWS!r}:\n    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    loaded = [name for name in json.loads(out) if name.split(".")[:2] == ["codemode_kernel", "kernel"]]
    assert not loaded, f"importing the views loaded {loaded}"
