"""The import rules of docs/architecture.md hold: ``lint-imports`` keeps the contracts in pyproject.toml.

grimp (import-linter's graph) sees every import, also one inside a function, so a lazy ``import
jsonschema`` in the worker's side fails here, where a snapshot of ``sys.modules``
(test_worker_imports.py) only sees what one path happened to load. The one exception is named in the
contract (``ignore_imports``): ``llm_json`` checks a program's schema in the sandbox, with jsonschema
imported at the call.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
WORKER_SIDE = ("codemode_kernel.core", "codemode_kernel.typegen", "codemode_kernel.worker")


def test_lint_imports_keeps_every_contract() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, f"lint-imports found a broken import contract:\n{run.stdout}{run.stderr}"
    assert "Contracts: 2 kept, 0 broken." in run.stdout


def external_imports(graph: grimp.ImportGraph, package: str) -> dict[str, set[str]]:
    """Each top-level package outside codemode_kernel that ``package`` imports, with who imports it."""
    found: dict[str, set[str]] = {}
    for module in graph.find_descendants(package) | {package}:
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith("codemode_kernel"):
                found.setdefault(imported.split(".")[0], set()).add(module)
    return found


LLM_JSON_SCHEMA_CHECK = ("codemode_kernel.worker.tools_module", "jsonschema")
"""The worker side's one import from outside the standard library: llm_json's check of a program's schema,
inside a function (docs/architecture.md, the process boundary)."""


def test_the_worker_side_imports_the_standard_library_only_and_the_contract_lists_every_dependency() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "forbidden"]
    excepted = {
        tuple(side.strip() for side in entry.split("->")) for entry in contract.get("ignore_imports", [])
    }
    assert excepted == {LLM_JSON_SCHEMA_CHECK}, (
        f"the worker-side contract excepts {sorted(excepted)}; only llm_json's jsonschema may be excepted"
    )
    graph = grimp.build_graph("codemode_kernel", include_external_packages=True, cache_dir=None)
    for package in WORKER_SIDE:
        outside = {
            name: sorted(unexcepted)
            for name, by in external_imports(graph, package).items()
            if name not in sys.stdlib_module_names
            and (unexcepted := {module for module in by if (module, name) not in excepted})
        }
        assert not outside, f"{package} imports from outside the standard library: {outside}"
    third_party = {
        name for name in external_imports(graph, "codemode_kernel") if name not in sys.stdlib_module_names
    }
    missing = sorted(third_party - set(contract["forbidden_modules"]))
    assert not missing, (
        f"codemode_kernel imports {missing}, which the worker-side contract in pyproject.toml does not "
        "forbid: add them to its forbidden_modules"
    )
