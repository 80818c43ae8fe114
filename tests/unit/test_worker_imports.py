"""The worker side loads only what it uses: no MCP SDK, pydantic, anyio or jsonschema in a worker process.

Checked in a fresh interpreter, as the zygote starts: importing ``codemode_kernel.worker.zygote`` imports
the root package too, so a root that imported everything would put the whole kernel stack in every worker.
What the worker's side may import at all, also inside functions, is a contract lint-imports checks
(test_import_contracts.py); this test sees what is loaded, which also keeps heavy standard modules
(asyncio, ssl, hashlib) out of a worker that does not use them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

KERNEL_ONLY = (
    "mcp",
    "pydantic",
    "pydantic_core",
    "anyio",
    "jsonschema",
    "httpx",
    "asyncio",
    "ssl",
    "hashlib",
)


def modules_after(statement: str) -> set[str]:
    """The top-level modules a fresh interpreter has loaded after ``statement``."""
    probe = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    return {name.split(".")[0] for name in json.loads(out)}


@pytest.mark.parametrize(
    "statement",
    [
        "import codemode_kernel",
        "import codemode_kernel.worker.zygote, codemode_kernel.worker.main",
        "from codemode_kernel import ToolError, CodeModeError",
    ],
)
def test_the_worker_side_loads_no_kernel_stack(statement: str) -> None:
    loaded = modules_after(statement)
    assert not loaded & set(KERNEL_ONLY), f"{statement!r} loaded {sorted(loaded & set(KERNEL_ONLY))}"


def test_the_public_api_still_reaches_everything_on_first_use() -> None:
    loaded = modules_after("from codemode_kernel import Toolbox, Executor")
    assert {"mcp", "pydantic"} <= loaded


ON_USE = ("concurrent", "logging", "queue", "traceback", "base64", "datetime", "asyncio")
"""Standard modules a program loads when it uses them (parallel, progress, bytes, dates, an error): a
prepared worker is forked with what the zygote imported, and each module here is one more in every worker."""


def test_the_worker_side_leaves_what_programs_use_rarely_for_them_to_load() -> None:
    loaded = modules_after("import codemode_kernel.worker.zygote, codemode_kernel.worker.main")
    assert not loaded & set(ON_USE), sorted(loaded & set(ON_USE))
