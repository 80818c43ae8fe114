"""The public surface changes only on purpose: __all__ lists exactly the public names."""

from __future__ import annotations

import importlib

import pytest

import codemode_kernel


def public_names(module: object) -> set[str]:
    """Names not starting with ``_`` that are not modules, including those a package imports lazily."""
    return {
        name
        for name in dir(module)
        if not name.startswith("_")
        and not isinstance(getattr(module, name), type(codemode_kernel))
        and name not in ("annotations", "TYPE_CHECKING")
    }


@pytest.mark.parametrize(
    "module_name",
    [
        "codemode_kernel",
        "codemode_kernel.artifacts",
        "codemode_kernel.config",
        "codemode_kernel.typegen",
        "codemode_kernel.hub",
        "codemode_kernel.executor",
    ],
)
def test_all_lists_exactly_the_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(public_names(module))


def test_the_readme_example_names_exist() -> None:
    from codemode_kernel import Toolbox

    assert callable(Toolbox.from_config)
    assert {"start", "close", "stubs", "status", "call"} <= set(dir(Toolbox))


def test_every_error_is_a_codemode_error() -> None:
    errors = [getattr(codemode_kernel, n) for n in codemode_kernel.__all__ if n.endswith("Error")]
    assert len(errors) >= 8
    assert all(issubclass(e, codemode_kernel.CodeModeError) for e in errors)
